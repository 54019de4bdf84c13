// SPDX-License-Identifier: MIT
// Follows a file by polling (like tail -F): it may not exist yet, may be
// truncated in place (> server.log) or rotated (renamed and recreated).
#include "watch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "logrx/analyzer.h"
#include "logrx/output.h"

namespace logrx::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

struct OpenFile {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t offset = 0;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void setup_watch(CLI::App& app, WatchOptions& options, int& exit_code) {
  CLI::App* watch = app.add_subcommand(
      "watch", "Follow a growing log like tail -F and print findings as they happen");
  watch->add_option("file", options.file, "Log file (it may not exist yet)")->required();
  watch->add_option("--format", options.format, "text, or jsonl: one JSON finding per line")
      ->check(CLI::IsMember({"text", "jsonl"}))
      ->capture_default_str();
  watch->add_option("--poll-ms", options.poll_ms, "How often to look for new data")
      ->check(CLI::Range(10, 60000))
      ->capture_default_str();
  watch->add_option("--ready-pattern", options.ready_pattern,
                    "RE2 pattern of the line that means 'ready' for servers logrx does not know");
  watch->add_option("--rules", options.rules.extra_dirs, "Also load the rules in DIR")
      ->type_name("DIR")
      ->allow_extra_args(false);
  watch->add_flag("--no-builtin-rules", options.rules.no_builtin, "Do not load the built-in rulebook");
  watch->add_flag("--no-redact", options.no_redact, "Do not replace secrets with <redacted>");
  watch->footer("Runs until SIGINT or SIGTERM, then exits 0. Memory stays bounded.");
  watch->callback([&options, &exit_code] { exit_code = run_watch(options); });
}

int run_watch(const WatchOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);

  TextOptions text;
  text.color = stdout_wants_color();
  auto make_analyzer = [&]() {
    AnalyzerOptions analyzer_options;
    analyzer_options.stream_name = options.file;
    analyzer_options.redact = !options.no_redact;
    analyzer_options.ready_pattern = options.ready_pattern;
    auto analyzer = std::make_unique<Analyzer>(*book, analyzer_options);
    analyzer->on_finding([&](const Finding& finding) {
      if (options.format == "jsonl") {
        std::cout << finding_to_json(finding) << "\n";
      } else {
        write_finding_text(std::cout, finding, text);
      }
      std::cout.flush();
    });
    return analyzer;
  };
  auto analyzer = make_analyzer();
  std::string error;
  if (!analyzer->ok(&error)) {
    std::cerr << "logrx: " << error << "\n";
    return kExitError;
  }

  std::unique_ptr<OpenFile> file;
  std::vector<char> buffer(1 << 16);
  bool waiting_reported = false;
  auto note = [&](const std::string& message) {
    std::cerr << "logrx: " << options.file << ": " << message << "\n";
  };
  while (g_stop == 0 && !stdout_closed()) {
    if (!file) {
      int fd = ::open(options.file.c_str(), O_RDONLY | O_CLOEXEC);
      struct stat info {};
      if (fd >= 0 && ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
        file = std::make_unique<OpenFile>();
        file->fd = fd;
        file->dev = info.st_dev;
        file->ino = info.st_ino;
        waiting_reported = false;
      } else {
        if (fd >= 0) ::close(fd);
        if (!waiting_reported) note("waiting for the file to appear");
        waiting_reported = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(options.poll_ms));
        continue;
      }
    }
    ssize_t n = ::read(file->fd, buffer.data(), buffer.size());
    if (n > 0) {
      file->offset += n;
      analyzer->feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // At the end of the data: has the file been truncated or replaced?
    struct stat now {};
    bool exists = ::stat(options.file.c_str(), &now) == 0;
    if (exists && (now.st_dev != file->dev || now.st_ino != file->ino)) {
      note("rotated; following the new file");
      analyzer->finish();
      analyzer = make_analyzer();
      file.reset();
      continue;
    }
    if (exists && now.st_size < file->offset) {
      note("truncated; reading from the start");
      ::lseek(file->fd, 0, SEEK_SET);
      file->offset = 0;
      analyzer->finish();
      analyzer = make_analyzer();
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(options.poll_ms));
  }
  analyzer->finish();
  std::cout.flush();
  return kExitClean;
}

}  // namespace logrx::cli
