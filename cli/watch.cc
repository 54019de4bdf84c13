// SPDX-License-Identifier: MIT
// Follows a file by polling (like tail -F): it may not exist yet, may be
// truncated in place (> server.log), truncated and rewritten larger between
// two polls, or rotated (renamed and recreated).
#include "watch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "journal.h"
#include "logrx/analyzer.h"
#include "logrx/log_record.h"
#include "logrx/output.h"

namespace logrx::cli {
namespace {

// The first bytes of the file as read; a file rewritten since (truncated and
// refilled past the old offset within one poll) no longer starts with them.
constexpr std::size_t kIdentityPrefix = 4096;

struct OpenFile {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t offset = 0;
  std::string prefix;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

// What a path is when it is not a regular file, for the refusal.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

std::string refusal(mode_t mode) {
  std::string text = std::string("is ") + kind_of(mode) +
                     "; watch follows a regular file that grows, is truncated or rotated";
  if (!S_ISDIR(mode)) text += " (pipe a stream into 'logrx scan' instead: ... | logrx scan)";
  return text;
}

// True when the open file no longer starts with the bytes read from it.
bool rewritten(const OpenFile& file) {
  if (file.prefix.empty()) return false;
  std::string now(file.prefix.size(), '\0');
  ssize_t n = ::pread(file.fd, now.data(), now.size(), 0);
  if (n < 0) return false;
  now.resize(static_cast<std::size_t>(n));
  return now != file.prefix;
}

}  // namespace

void setup_watch(CLI::App& app, WatchOptions& options, int& exit_code) {
  CLI::App* watch = app.add_subcommand(
      "watch", "Follow a growing log like tail -F and print findings as they happen");
  watch->add_option("file", options.file, "Log file (it may not exist yet)");
  watch->add_option("--journal", options.journal,
                    "Follow a systemd unit's journal instead of a file (like journalctl -u UNIT -f)")
      ->type_name("UNIT");
  watch->add_option("--journal-file", options.journal_files,
                    "With --journal: read these journal files instead of the system journal")
      ->type_name("PATH")
      ->allow_extra_args(false);
  watch->add_option("--since", options.since,
                    "With --journal: start at entries from TIME (ISO 8601) instead of new ones");
  watch->add_option("--format", options.format,
                    "text, or jsonl: one JSON finding per line, and a last line with the summary "
                    "and remediation when stopped")
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
  watch->add_flag("--include-rotated", options.include_rotated,
                  "First read the rotated copies of FILE beside it (FILE.1, FILE.2.gz, "
                  "FILE-20260523.zst; compressed ones decoded), oldest first, then follow FILE");
  watch->add_flag("--no-redact", options.no_redact, "Do not replace secrets with <redacted>");
  watch->add_flag("--no-builtin-rules", options.rules.no_builtin, "Do not load the built-in rulebook");
  add_metrics_options(*watch, options.metrics);
  watch->footer(
      "Runs until SIGINT or SIGTERM, then prints findings still held, the summary and the "
      "remediation and exits 0 (2 when the output cannot be written or FILE is not a regular "
      "file). Memory stays bounded.");
  watch->callback([&options, &exit_code] { exit_code = run_watch(options); });
}

int run_watch(const WatchOptions& options) {
  if (options.file.empty() == options.journal.empty()) {
    std::cerr << "logrx: watch needs a FILE or --journal UNIT (one of them)\n";
    return kExitError;
  }
  std::string stream = options.file.empty() ? "journal:" + options.journal : options.file;
  // First, so Ctrl-C during the rulebook load still ends with a report.
  install_stop_handlers();
  auto note = [&](const std::string& message) {
    std::cerr << "logrx: " << escape_for_terminal(options.file) << ": " << message << "\n";
  };
  struct stat first {};
  if (::stat(options.file.c_str(), &first) == 0 && !S_ISREG(first.st_mode)) {
    note(refusal(first.st_mode));
    return kExitError;
  }
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;

  TextOptions text;
  text.color = stdout_wants_color();
  bool jsonl = options.format == "jsonl";
  MetricsExporter metrics(options.metrics);
  if (!metrics.start()) return kExitError;
  LogRecordContext record{host_name(), stream, 0};
  auto make_analyzer = [&]() {
    metrics.begin_stream();
    AnalyzerOptions analyzer_options;
    analyzer_options.stream_name = stream;
    analyzer_options.redact = !options.no_redact;
    analyzer_options.ready_pattern = options.ready_pattern;
    auto analyzer = std::make_unique<Analyzer>(*book, analyzer_options);
    analyzer->on_finding([&](const Finding& finding) {
      metrics.count_finding(finding);
      if (stdout_closed()) return;
      if (jsonl) {
        record.observed_seconds = unix_now();
        std::cout << finding_to_log_record(finding, record) << "\n";
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

  if (!options.journal.empty()) {
    JournalQuery query{options.journal, options.journal_files, std::nullopt, true};
    if (!options.since.empty()) query.since = parse_iso8601(options.since);
    if (!options.since.empty() && !query.since) {
      std::cerr << "logrx: --since " << options.since << ": expected an ISO 8601 time\n";
      return kExitError;
    }
    // An offline copy is read whole; the live journal from now on.
    if (!query.since && !options.journal_files.empty()) query.since = 0;
    std::string failed = read_journal(
        query, options.poll_ms, [] { return stop_requested() || stdout_closed(); },
        [&](std::string_view message) {
          analyzer->feed(message);
          analyzer->feed("\n");
        },
        [&] { metrics.update(*analyzer); });
    if (!failed.empty()) {
      std::cerr << "logrx: " << failed << "\n";
      return kExitError;
    }
  }
  if (options.include_rotated && options.journal.empty()) {
    // The earlier parts of the same log, so that a launch that began before
    // the last rotation is seen whole.
    for (const std::string& sibling : rotated_siblings(options.file)) {
      if (stop_requested() || stdout_closed()) break;
      char last = '\n';
      std::string failed = read_decoded(sibling, [&](std::string_view bytes) {
        analyzer->feed(bytes);
        if (!bytes.empty()) last = bytes.back();
      });
      // A copy cut mid-line must not run into the next one's first line.
      if (last != '\n') analyzer->feed("\n");
      if (!failed.empty()) note("rotated copy " + escape_for_terminal(sibling) + ": " + failed);
    }
    metrics.update(*analyzer);
  }
  std::unique_ptr<OpenFile> file;
  std::vector<char> buffer(1 << 16);
  bool waiting_reported = false;
  auto restart = [&](const char* why) {
    note(why);
    analyzer->finish();
    analyzer = make_analyzer();
  };
  while (options.journal.empty() && !stop_requested() && !stdout_closed()) {
    if (!file) {
      struct stat info {};
      if (::stat(options.file.c_str(), &info) != 0) {
        if (!waiting_reported) note("waiting for the file to appear");
        waiting_reported = true;
        wait_unless_stopped(options.poll_ms);
        continue;
      }
      if (!S_ISREG(info.st_mode)) {
        note(refusal(info.st_mode));
        analyzer->finish();
        return kExitError;
      }
      // O_NONBLOCK: should the path turn into a FIFO between stat and open,
      // open must not wait for a writer (the fstat below then refuses it).
      int fd = ::open(options.file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
      if (fd < 0) {
        if (errno != ENOENT) {
          note(std::strerror(errno));
          analyzer->finish();
          return kExitError;
        }
        wait_unless_stopped(options.poll_ms);
        continue;
      }
      if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        note(refusal(info.st_mode));
        ::close(fd);
        analyzer->finish();
        return kExitError;
      }
      file = std::make_unique<OpenFile>();
      file->fd = fd;
      file->dev = info.st_dev;
      file->ino = info.st_ino;
      waiting_reported = false;
    }

    // Before reading on: is the path still this file, and is this file still
    // what was read? Checked before the read, so a file truncated and
    // rewritten larger since the last poll is read from 0, not mid-line.
    struct stat now {};
    if (::stat(options.file.c_str(), &now) == 0 &&
        (now.st_dev != file->dev || now.st_ino != file->ino)) {
      restart("rotated; following the new file");
      file.reset();
      continue;
    }
    struct stat own {};
    bool shrunk = ::fstat(file->fd, &own) == 0 && own.st_size < file->offset;
    if (shrunk || rewritten(*file)) {
      restart(shrunk ? "truncated; reading from the start"
                     : "truncated and rewritten; reading from the start");
      ::lseek(file->fd, 0, SEEK_SET);
      file->offset = 0;
      file->prefix.clear();
      continue;
    }

    bool at_end = false;
    while (!at_end && !stop_requested() && !stdout_closed()) {
      ssize_t n = ::read(file->fd, buffer.data(), buffer.size());
      if (n > 0) {
        std::string_view bytes(buffer.data(), static_cast<std::size_t>(n));
        if (file->offset < static_cast<off_t>(kIdentityPrefix)) {
          std::size_t keep = kIdentityPrefix - static_cast<std::size_t>(file->offset);
          file->prefix.append(bytes.substr(0, keep));
        }
        file->offset += n;
        analyzer->feed(bytes);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        at_end = true;
      }
    }
    if (at_end) {
      metrics.update(*analyzer);
      wait_unless_stopped(options.poll_ms);
    }
  }

  // Stopped: what is still held, then the summary and the remediation.
  Report report = analyzer->finish();
  metrics.update(*analyzer, true);
  if (!stdout_closed()) {
    if (jsonl) {
      nlohmann::ordered_json doc = nlohmann::ordered_json::parse(to_json(report, -1));
      nlohmann::ordered_json last;
      last["summary"] = doc["summary"];
      last["remediation"] = doc["remediation"];
      std::cout << escape_json_controls(last.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace))
                << "\n";
    } else {
      write_summary_text(std::cout, report, text);
    }
  }
  std::cout.flush();
  return kExitClean;
}

}  // namespace logrx::cli
