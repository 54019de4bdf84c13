// SPDX-License-Identifier: MIT
#include "gaps.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "logrx/analyzer.h"
#include "logrx/gaps.h"
#include "logrx/output.h"

namespace logrx::cli {

void setup_gaps(CLI::App& app, GapsOptions& options, int& exit_code) {
  CLI::App* gaps = app.add_subcommand(
      "gaps",
      "List lines that look like problems but match no rule, grouped by template (numbers, hex, "
      "paths and quoted values masked), most frequent first");
  gaps->add_option("files", options.files, "Log files; '-' or none reads stdin");
  gaps->add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  gaps->add_option("--rules", options.rules.extra_dirs, "Also load the rules in DIR")
      ->type_name("DIR")
      ->allow_extra_args(false);
  gaps->add_flag("--no-builtin-rules", options.rules.no_builtin, "Do not load the built-in rulebook");
  gaps->add_flag("--no-redact", options.no_redact, "Do not replace secrets with <redacted>");
  gaps->callback([&options, &exit_code] { exit_code = run_gaps(options); });
}

int run_gaps(const GapsOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  std::vector<std::string> files = options.files;
  if (files.empty()) files.push_back("-");
  GapCollector collector;
  std::uint64_t lines = 0;
  bool input_error = false;
  for (const std::string& file : files) {
    std::string name = file == "-" ? "<stdin>" : file;
    AnalyzerOptions analyzer_options;
    analyzer_options.stream_name = name;
    analyzer_options.redact = !options.no_redact;
    Analyzer analyzer(*book, analyzer_options);
    analyzer.on_unmatched_line([&](const LineEvent& event) { collector.add(name, event); });
    std::string error = read_stream(file, [&](std::string_view bytes) { analyzer.feed(bytes); });
    if (!error.empty()) {
      std::cerr << "logrx: " << file << ": " << error << "\n";
      input_error = true;
    }
    Report report = analyzer.finish();
    if (!report.input_error.empty()) {
      std::cerr << "logrx: " << escape_for_terminal(file) << ": " << report.input_error << "\n";
      input_error = true;
    }
    lines += report.summary.lines;
  }
  auto groups = collector.groups();
  if (options.format == "json") {
    nlohmann::ordered_json doc;
    doc["lines"] = lines;
    doc["gaps"] = nlohmann::ordered_json::array();
    for (const GapGroup& g : groups)
      doc["gaps"].push_back({{"pattern", g.pattern},
                             {"count", g.count},
                             {"example", {{"file", g.file}, {"line", g.line}, {"text", g.example}}}});
    doc["overflow"] = collector.overflow();
    std::cout << escape_json_controls(doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)) << "\n";
  } else {
    for (const GapGroup& g : groups) {
      std::cout << g.count << "  " << escape_for_terminal(g.pattern) << "\n";
      std::cout << "    e.g. " << escape_for_terminal(g.file) << ":" << g.line << ": "
                << escape_for_terminal(g.example) << "\n";
    }
    std::cout << groups.size() << (groups.size() == 1 ? " template" : " templates")
              << " of unrecognised problem lines in " << lines << " lines\n";
  }
  return input_error ? kExitError : kExitClean;
}

}  // namespace logrx::cli
