// SPDX-License-Identifier: MIT
// Helpers shared by the unit tests: temporary rule directories and a
// one-call way to scan text with a rulebook.
#pragma once

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

#include "logrx/analyzer.h"
#include "logrx/rulebook.h"

namespace logrx::test {

// A directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("logrx-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A minimal valid rule as JSON, with the given id and pattern.
inline std::string rule_json(const std::string& id, const std::string& pattern,
                             const std::string& extra = "") {
  return "{\"id\": \"" + id +
         "\", \"title\": \"t\", \"category\": \"memory_pressure\", \"severity\": \"error\", "
         "\"servers\": [\"any\"], \"pattern\": \"" + pattern +
         "\", \"explanation\": \"e\", \"remediation\": [], \"examples\": {\"match\": [], "
         "\"no_match\": []}" + extra + "}";
}

inline std::string rule_file(const std::string& rules) {
  return "{\"version\": 1, \"rules\": [" + rules + "]}";
}

inline std::string builtin_rules_dir() { return LOGRX_SOURCE_DIR "/rules"; }

inline Rulebook load_builtin() {
  Diagnostics errors;
  auto book = Rulebook::load({{builtin_rules_dir()}}, errors);
  if (!book) throw std::runtime_error("built-in rulebook failed to load");
  return *book;
}

// The built-in rules with every pattern unknown to the build's prefilter
// table (an empty group appended changes no match): the paths a user's own
// rulebook takes, FilteredRE2 for the prefilter and the whole rulebook's
// selector for lines.
inline Rulebook load_builtin_untabled() {
  Rulebook builtin = load_builtin();
  std::vector<RuleSpec> rules = builtin.rules();
  for (RuleSpec& rule : rules)
    if (!rule.pattern.empty()) rule.pattern += "(?:)";
  Diagnostics errors;
  auto book = Rulebook::compile(std::move(rules), builtin.server_flags(), errors);
  if (!book) throw std::runtime_error("built-in rulebook failed to compile untabled");
  return *book;
}

inline Report scan_text(const Rulebook& book, const std::string& text) {
  AnalyzerOptions options;
  options.stream_name = "test.log";
  Analyzer analyzer(book, options);
  analyzer.feed(text);
  return analyzer.finish();
}

// Line by line (feed_line): no blocks, no prefilter, no light path; what
// the block paths must report.
inline Report scan_line_by_line(const Rulebook& book, const std::string& text,
                                const AnalyzerOptions& options) {
  Analyzer analyzer(book, options);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    analyzer.feed_line(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
  return analyzer.finish();
}

// A whole file's bytes.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace logrx::test
