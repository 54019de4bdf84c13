// SPDX-License-Identifier: MIT
// One attempt of `logrx run`: the child's output goes through unchanged (to
// the terminal and to the attempt log) while the analyzer reads it; the
// child's whole process group is stopped when it hangs, stalls, is not ready
// in time, or when logrx itself is told to stop.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>

#include "logrx/analyzer.h"
#include "logrx/line.h"
#include "logrx/output.h"
#include "run.h"
#include "run_events.h"
#include "supervise.h"

namespace logrx::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point then, Clock::time_point now) {
  return std::chrono::duration<double>(now - then).count();
}

// A finding logrx makes about the process itself (an engine rule).
void add_engine_finding(const Rulebook& book, Report& report, const std::string& rule_id,
                        const std::string& stream, const std::string& message) {
  const RuleSpec* rule = book.find(rule_id);
  if (rule == nullptr) return;
  Finding f;
  f.rule_id = rule->id;
  f.title = rule->title;
  f.explanation = rule->explanation;
  f.category = rule->category;
  f.severity = rule->severity;
  f.file = stream;
  f.message = message;
  report.findings.insert(report.findings.begin(), f);
  ++report.summary.findings;
  ++report.summary.by_severity[std::string(to_string(f.severity))];
  ++report.summary.by_category[std::string(to_string(f.category))];
  if (!report.summary.worst_severity || f.severity > *report.summary.worst_severity)
    report.summary.worst_severity = f.severity;
}

}  // namespace

std::vector<std::string> shown_argv(const std::vector<std::string>& argv, bool redact) {
  return redact ? redact_argv(argv) : argv;
}

std::map<std::string, std::string> shown_env(const std::map<std::string, std::string>& env,
                                             bool redact) {
  std::map<std::string, std::string> out = env;
  if (!redact) return out;
  for (auto& [name, value] : out) {
    std::string pair = name + "=" + value;
    if (redact_secrets(pair)) value = "<redacted>";
  }
  return out;
}

std::string shown_command(const LaunchCommand& command, bool redact) {
  std::string line = command_line({shown_argv(command.argv, redact), shown_env(command.env, redact)});
  if (redact) redact_secrets(line);
  return line;
}

Attempt run_attempt(const Rulebook& book, const RunOptions& options, int number, const LaunchCommand& command,
                    const std::string& log_path, EventSink& events, MetricsExporter& metrics) {
  Attempt attempt;
  attempt.number = number;
  attempt.command = command;
  attempt.log_path = log_path;
  attempt.started = utc_now();
  bool redact = !options.no_redact;
  std::string line = shown_command(command, redact);
  int log = -1;
  if (!log_path.empty()) {
    log = open_for_writing(log_path, false);
    if (log < 0) {
      std::cerr << "logrx: cannot write " << log_path << ": " << std::strerror(errno) << "\n";
    } else {
      std::string header = "# logrx run attempt " + std::to_string(number) + ": " + line + "\n";
      write_all(log, header.data(), header.size());
      std::cerr << "logrx: attempt " << number << " logs to " << log_path << "\n";
    }
  }
  std::cerr << "logrx: attempt " << number << ": " << escape_for_terminal(line) << "\n";
  nlohmann::ordered_json started;
  started["attempt"] = number;
  started["argv"] = shown_argv(command.argv, redact);
  started["env"] = nlohmann::ordered_json::object();
  for (const auto& [name, value] : shown_env(command.env, redact)) started["env"][name] = value;
  if (!log_path.empty()) started["log"] = log_path;

  AnalyzerOptions analyzer_options;
  analyzer_options.stream_name = "attempt-" + std::to_string(number);
  analyzer_options.launch_command = line;
  analyzer_options.redact = redact;
  analyzer_options.ready_pattern = options.ready_pattern;
  analyzer_options.server = options.server.empty() ? detect_server(command.argv) : options.server;
  Analyzer analyzer(book, analyzer_options);
  metrics.begin_stream();
  std::optional<Clock::time_point> fatal_at;
  analyzer.on_finding([&](const Finding& finding) {
    metrics.count_finding(finding);
    events.emit("finding", nlohmann::ordered_json::parse(finding_to_json(finding), nullptr, false));
    if (finding.severity != Severity::Fatal || fatal_at) return;
    fatal_at = Clock::now();
    std::cerr << "logrx: fatal: " << escape_for_terminal(finding.title) << " (" << finding.rule_id << ", line "
              << finding.line << ")\n";
    for (const RemediationItem& item : finding.remediation) {
      std::cerr << "logrx:   " << (item.alternative ? "or:  " : item.applicable ? "fix: " : "advice: ")
                << escape_for_terminal(item.name);
      if (item.value)
        std::cerr << (item.kind == RemediationItem::Kind::Env ? "=" : " ") << escape_for_terminal(*item.value);
      if (!item.applicable && !item.why.empty()) std::cerr << "  (" << escape_for_terminal(item.why) << ")";
      std::cerr << "\n";
    }
  });

  Child child = spawn_child(command.argv, command.env);
  if (!child.error.empty()) {
    std::cerr << "logrx: " << child.error << "\n";
    attempt.status = 127 << 8;
    attempt.ended = utc_now();
    analyzer.note_exit();
    attempt.report = analyzer.finish();
    if (log >= 0) ::close(log);
    return attempt;
  }
  attempt.started_ok = true;
  started["pid"] = child.pid;
  events.emit("attempt_started", started);

  // Each stream has its own splitter so lines from stdout and stderr never mix.
  LineSplitter out_lines(analyzer_options.max_line_bytes);
  LineSplitter err_lines(analyzer_options.max_line_bytes);
  auto to_analyzer = [&analyzer](std::string_view text, bool) { analyzer.feed_line(text); };
  // With --events -, stdout carries the events: the child's stdout goes to stderr.
  int out_target = events.to_stdout() ? STDERR_FILENO : STDOUT_FILENO;
  bool out_ok = true;
  bool err_ok = true;
  struct pollfd fds[3] = {{child.out, POLLIN, 0}, {child.err, POLLIN, 0}, {signal_pipe_fd(), POLLIN, 0}};
  int open_streams = 2;
  bool alive = true;
  bool any_output = false;
  bool timeout_reported = false;
  auto start = Clock::now();
  auto last_output = start;
  std::optional<Clock::time_point> ready_at, stop_at, killed_at, exited_at, url_ok_at, last_probe;
  std::optional<Clock::time_point> streams_closed_at;
  HttpUrl url;
  std::string url_error;
  bool probe = !options.ready_url.empty() && parse_http_url(options.ready_url, url, url_error);
  std::vector<char> buffer(1 << 16);

  auto stop = [&](const std::string& reason, int sig) {
    if (stop_at) return;
    stop_at = Clock::now();
    attempt.stop_reason = reason;
    signal_group(child.pid, sig);
    events.emit("stopped", {{"attempt", number}, {"reason", reason}, {"signal", sig}});
  };
  auto reap = [&] {
    if (!alive) return;
    int status = 0;
    pid_t r = ::waitpid(child.pid, &status, WNOHANG);
    if (r == child.pid) {
      alive = false;
      attempt.status = status;
      exited_at = Clock::now();
    }
  };

  for (;;) {
    int ready_fds = ::poll(fds, 3, 100);
    if (ready_fds < 0 && errno != EINTR) break;
    auto now = Clock::now();
    bool child_event = false;
    if (ready_fds > 0 && (fds[2].revents & POLLIN)) {
      for (int sig : drain_signal_pipe(&child_event)) {
        attempt.user_stop = true;
        if (!alive) continue;
        if (!stop_at) {
          // The same signal goes to the whole group: the server's own
          // handlers (graceful shutdown) run first.
          stop("signal", sig);
        } else if (!killed_at) {
          // Asked twice: no more grace.
          signal_group(child.pid, SIGKILL);
          killed_at = now;
          attempt.killed = true;
        }
      }
    }
    for (int i = 0; i < 2 && ready_fds > 0; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        if (--open_streams == 0) streams_closed_at = now;
        continue;
      }
      any_output = true;
      last_output = now;
      bool& ok = i == 0 ? out_ok : err_ok;
      // A closed terminal or pipe on logrx's side must not stop the supervision.
      if (ok) ok = write_all(i == 0 ? out_target : STDERR_FILENO, buffer.data(), static_cast<std::size_t>(n));
      if (log >= 0) write_all(log, buffer.data(), static_cast<std::size_t>(n));
      (i == 0 ? out_lines : err_lines).feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)), to_analyzer);
    }
    reap();
    (void)child_event;
    // A fatal error followed by silence: its traceback is closed and judged
    // now, not when (if ever) another line arrives.
    analyzer.poll(now);
    metrics.update(analyzer);
    if (!ready_at && analyzer.ready()) {
      ready_at = now;
      events.emit("ready", {{"attempt", number}, {"source", "log"}});
    }
    if (probe && alive && !stop_at && (!last_probe || seconds_since(*last_probe, now) >= 1.0)) {
      last_probe = now;
      if (http_get_ok(url, 500)) {
        url_ok_at = Clock::now();
        if (!ready_at) {
          ready_at = url_ok_at;
          events.emit("ready", {{"attempt", number}, {"source", "url"}});
        }
      }
    }
    if (alive && !stop_at) {
      if (fatal_at && seconds_since(*fatal_at, now) >= options.fatal_grace) {
        std::cerr << "logrx: the server is still running " << options.fatal_grace
                  << " s after a fatal error; stopping it\n";
        stop("fatal-grace", SIGTERM);
      } else if (options.ready_timeout > 0 && !ready_at && seconds_since(start, now) >= options.ready_timeout) {
        std::cerr << "logrx: not ready within " << options.ready_timeout << " s; stopping it\n";
        stop("ready-timeout", SIGTERM);
      } else if (options.stall_timeout > 0 && ready_at) {
        auto since = probe ? (url_ok_at ? *url_ok_at : *ready_at) : std::max(last_output, *ready_at);
        if (seconds_since(since, now) >= options.stall_timeout) {
          std::cerr << "logrx: " << (probe ? options.ready_url + " has not answered" : std::string("no output"))
                    << " for " << options.stall_timeout << " s after ready; stopping it\n";
          stop("stall", SIGTERM);
        }
      }
    }
    if (!any_output && !timeout_reported && options.startup_timeout > 0 &&
        seconds_since(start, now) > options.startup_timeout) {
      timeout_reported = true;
      std::cerr << "logrx: error: the server printed nothing within " << options.startup_timeout
                << " s (logrx.run.no-output): it may be stuck, or its output goes elsewhere "
                   "(a log file option, Python buffering: PYTHONUNBUFFERED=1)\n";
    }
    if (!alive && !stop_at && group_alive(child.pid)) {
      // The server is gone; what is left of its group (a scheduler, an
      // engine core) would hold the GPU and the pipes.
      std::cerr << "logrx: the server exited; stopping what is left of its process group\n";
      attempt.notes.push_back("processes of the server's group outlived it and were stopped");
      stop_at = now;
      signal_group(child.pid, SIGTERM);
    }
    if (stop_at && !killed_at && seconds_since(*stop_at, now) >= options.kill_grace && group_alive(child.pid)) {
      std::cerr << "logrx: still running " << options.kill_grace << " s after SIGTERM; sending SIGKILL\n";
      signal_group(child.pid, SIGKILL);
      killed_at = now;
      attempt.killed = true;
    }
    if (!alive) {
      bool group_gone = !group_alive(child.pid);
      if (open_streams == 0 && group_gone) break;
      // Output held open by a process outside the group (it made its own
      // session): drain what is there, then stop waiting for an EOF that
      // may never come.
      if (group_gone && seconds_since(*exited_at, now) >= 1.0) {
        attempt.notes.push_back("a process outside the server's group kept its output open; stopped reading it");
        std::cerr << "logrx: a process outside the server's group keeps its output open; not waiting for it\n";
        break;
      }
      if (killed_at && seconds_since(*killed_at, now) >= 2.0) break;
    }
  }
  for (int i = 0; i < 2; ++i)
    if (fds[i].fd >= 0) ::close(fds[i].fd);
  if (alive) {
    // Only a poll failure gets here: do not leave the group running.
    signal_group(child.pid, SIGKILL);
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    attempt.status = status;
  }
  out_lines.finish(to_analyzer);
  err_lines.finish(to_analyzer);
  analyzer.note_exit();
  attempt.reached_ready = ready_at.has_value() || analyzer.ready();
  attempt.report = analyzer.finish();
  metrics.update(analyzer, true);
  attempt.ended = utc_now();
  std::string stream = analyzer_options.stream_name;
  if (timeout_reported)
    add_engine_finding(book, attempt.report, "logrx.run.no-output", stream,
                       "no output within " + std::to_string(options.startup_timeout) + " s");
  if (attempt.stop_reason == "fatal-grace")
    add_engine_finding(book, attempt.report, "logrx.run.hung-after-fatal", stream,
                       "still running " + std::to_string(options.fatal_grace) + " s after a fatal error");
  if (attempt.stop_reason == "ready-timeout")
    add_engine_finding(book, attempt.report, "logrx.run.ready-timeout", stream,
                       "not ready within " + std::to_string(options.ready_timeout) + " s");
  if (attempt.stop_reason == "stall")
    add_engine_finding(book, attempt.report, "logrx.run.stalled", stream,
                       "no sign of life for " + std::to_string(options.stall_timeout) + " s after ready");
  if (log >= 0) ::close(log);
  nlohmann::ordered_json exited{{"attempt", number}};
  if (WIFEXITED(attempt.status)) exited["exit_code"] = WEXITSTATUS(attempt.status);
  if (WIFSIGNALED(attempt.status)) exited["signal"] = WTERMSIG(attempt.status);
  exited["reached_ready"] = attempt.reached_ready;
  if (!attempt.stop_reason.empty()) exited["stop_reason"] = attempt.stop_reason;
  events.emit("exited", exited);
  return attempt;
}

}  // namespace logrx::cli
