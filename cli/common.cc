// SPDX-License-Identifier: MIT
#include "common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <spdlog/spdlog.h>

namespace logrx::cli {

std::optional<Rulebook> load_rulebook(const RuleOptions& options) {
  std::vector<RuleSource> sources;
  // The built-in rulebook is always there: compiled into the library when
  // no copy is installed next to it.
  if (!options.no_builtin) sources.push_back(builtin_rule_source());
  // $LOGRX_RULES_PATH (colon-separated) comes before --rules, so the command
  // line has the last word.
  if (const char* path = std::getenv("LOGRX_RULES_PATH"); path != nullptr) {
    std::string list = path;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) sources.push_back({list.substr(start, end - start)});
      start = end + 1;
    }
  }
  for (const std::string& dir : options.extra_dirs) sources.push_back({dir});
  if (sources.empty()) {
    std::cerr << "logrx: no rules to load (--no-builtin-rules without --rules)\n";
    return std::nullopt;
  }
  Diagnostics errors;
  auto book = Rulebook::load(sources, errors);
  for (const Diagnostic& d : errors) std::cerr << format_diagnostic(d) << "\n";
  if (!book) {
    std::cerr << "logrx: " << errors.size() << (errors.size() == 1 ? " error" : " errors")
              << " in the rulebook; nothing was scanned\n";
    return std::nullopt;
  }
  spdlog::debug("loaded {} rules from {} source(s)", book->size(), sources.size());
  return book;
}

std::string read_stream(const std::string& path,
                        const std::function<void(std::string_view)>& sink) {
  int fd = 0;
  bool is_stdin = path == "-";
  if (!is_stdin) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::strerror(errno);
    struct stat info {};
    if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
      ::close(fd);
      return "is a directory";
    }
  }
  // Large reads: the analyzer splits lines itself, so a chunk boundary may
  // fall anywhere.
  static constexpr std::size_t kChunk = 1 << 18;
  std::vector<char> buffer(kChunk);
  std::string error;
  while (true) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      error = std::strerror(errno);
      break;
    }
    if (n == 0) break;
    sink(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    if (stdout_closed()) break;
  }
  if (!is_stdin) ::close(fd);
  return error;
}

std::optional<std::int64_t> file_mtime(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return static_cast<std::int64_t>(info.st_mtime);
}

bool stdout_closed() {
  // SIGPIPE is ignored (main), so a closed pipe shows up as a failed stream.
  return !std::cout.good();
}

bool stdin_is_stream() {
  struct stat info {};
  if (::fstat(STDIN_FILENO, &info) != 0) return false;
  return !S_ISREG(info.st_mode);
}

bool stdout_wants_color() {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return ::isatty(STDOUT_FILENO) != 0;
}

}  // namespace logrx::cli
