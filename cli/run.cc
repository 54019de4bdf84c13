// SPDX-License-Identifier: MIT
// The supervisor: the child's output goes through unchanged (to the terminal
// and to a per-attempt log) while logrx reads it; the diagnosis goes to
// stderr, prefixed with "logrx:".
#include "run.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "logrx/analyzer.h"
#include "logrx/line.h"
#include "logrx/output.h"
#include "logrx/relaunch.h"

extern char** environ;

namespace logrx::cli {
namespace {

volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_forward_signal(int sig) { g_signal = sig; }

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string command_line(const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env) {
  return logrx::command_line(LaunchCommand{args, env});
}

struct Attempt {
  int status = 0;       // raw waitpid status
  bool signalled_by_us = false;
  Report report;
};

void diagnose(const Report& report, const std::string& header) {
  std::ostringstream text;
  TextOptions options;
  options.color = false;
  write_text(text, report, options);
  std::cerr << "logrx: " << header << "\n";
  std::istringstream lines(text.str());
  std::string line;
  while (std::getline(lines, line)) std::cerr << "logrx: " << line << "\n";
}

Attempt run_attempt(const Rulebook& book, const RunOptions& options, int number,
                    const std::vector<std::string>& args,
                    const std::map<std::string, std::string>& env, MetricsExporter& metrics) {
  Attempt attempt;
  std::string line = command_line(args, env);
  std::ofstream log;
  if (!options.log_dir.empty()) {
    ::mkdir(options.log_dir.c_str(), 0755);
    std::string path = options.log_dir + "/attempt-" + std::to_string(number) + ".log";
    log.open(path, std::ios::binary | std::ios::trunc);
    log << "# logrx run attempt " << number << ": " << line << "\n";
    std::cerr << "logrx: attempt " << number << " logs to " << path << "\n";
  }
  std::cerr << "logrx: attempt " << number << ": " << line << "\n";

  AnalyzerOptions analyzer_options;
  analyzer_options.stream_name = "attempt-" + std::to_string(number);
  analyzer_options.launch_command = line;
  analyzer_options.redact = !options.no_redact;
  analyzer_options.ready_pattern = options.ready_pattern;
  analyzer_options.server = options.server.empty() ? detect_server(args) : options.server;
  Analyzer analyzer(book, analyzer_options);
  metrics.begin_stream();
  bool fatal_reported = false;
  analyzer.on_finding([&](const Finding& finding) {
    metrics.count_finding(finding);
    if (finding.severity != Severity::Fatal || fatal_reported) return;
    fatal_reported = true;
    std::cerr << "logrx: fatal: " << escape_for_terminal(finding.title) << " ("
              << finding.rule_id << ", line " << finding.line << ")\n";
    for (const RemediationItem& item : finding.remediation) {
      std::cerr << "logrx:   " << (item.alternative ? "or:  " : item.applicable ? "fix: " : "advice: ")
                << escape_for_terminal(item.name);
      if (item.value)
        std::cerr << (item.kind == RemediationItem::Kind::Env ? "=" : " ")
                  << escape_for_terminal(*item.value);
      if (!item.applicable && !item.why.empty()) std::cerr << "  (" << escape_for_terminal(item.why) << ")";
      std::cerr << "\n";
    }
  });

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    std::cerr << "logrx: cannot create pipes: " << std::strerror(errno) << "\n";
    attempt.status = 127 << 8;
    return attempt;
  }
  pid_t child = ::fork();
  if (child == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvp(argv[0], argv.data());
    std::string message = "logrx: cannot run " + args[0] + ": " + std::strerror(errno) + "\n";
    write_all(STDERR_FILENO, message.data(), message.size());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (child < 0) {
    std::cerr << "logrx: cannot fork: " << std::strerror(errno) << "\n";
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    attempt.status = 127 << 8;
    return attempt;
  }

  // Each stream has its own splitter so lines from stdout and stderr never mix.
  LineSplitter out_lines(analyzer_options.max_line_bytes);
  LineSplitter err_lines(analyzer_options.max_line_bytes);
  auto to_analyzer = [&analyzer](std::string_view text, bool) { analyzer.feed_line(text); };
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_streams = 2;
  bool any_output = false;
  bool timeout_reported = false;
  auto started = std::chrono::steady_clock::now();
  std::vector<char> buffer(1 << 16);
  while (open_streams > 0) {
    if (g_signal != 0) {
      ::kill(child, g_signal);
      attempt.signalled_by_us = true;
      g_signal = 0;
    }
    int ready = ::poll(fds, 2, 200);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_streams;
        continue;
      }
      any_output = true;
      write_all(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buffer.data(), static_cast<std::size_t>(n));
      if (log) log.write(buffer.data(), n);
      (i == 0 ? out_lines : err_lines)
          .feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)), to_analyzer);
    }
    metrics.update(analyzer);
    if (!any_output && !timeout_reported && options.startup_timeout > 0 &&
        std::chrono::steady_clock::now() - started >
            std::chrono::duration<double>(options.startup_timeout)) {
      timeout_reported = true;
      std::cerr << "logrx: error: the server printed nothing within " << options.startup_timeout
                << " s (logrx.run.no-output): it may be stuck, or its output goes elsewhere "
                   "(a log file option, Python buffering: PYTHONUNBUFFERED=1)\n";
    }
  }
  out_lines.finish(to_analyzer);
  err_lines.finish(to_analyzer);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    if (g_signal != 0) {
      ::kill(child, g_signal);
      g_signal = 0;
    }
  }
  attempt.status = status;
  analyzer.note_exit();
  attempt.report = analyzer.finish();
  metrics.update(analyzer, true);
  if (timeout_reported) {
    if (const RuleSpec* rule = book.find("logrx.run.no-output")) {
      Finding f;
      f.rule_id = rule->id;
      f.title = rule->title;
      f.explanation = rule->explanation;
      f.category = rule->category;
      f.severity = rule->severity;
      f.file = analyzer_options.stream_name;
      f.message = "no output within " + std::to_string(options.startup_timeout) + " s";
      attempt.report.findings.insert(attempt.report.findings.begin(), f);
      ++attempt.report.summary.findings;
    }
  }
  return attempt;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitError;
}

}  // namespace

void setup_run(CLI::App& app, RunOptions& options, int& exit_code) {
  CLI::App* run = app.add_subcommand(
      "run",
      "Supervise a server: pass its output through, diagnose it live, and relaunch it with the "
      "prescribed flags (logrx run [options] -- CMD ARGS...)");
  run->add_option("command", options.command, "The server command, after --")->required();
  run->add_option("--restart", options.restart,
                  "Relaunch at most N times after a failure (with --apply-remediation)")
      ->check(CLI::Range(0, 100));
  run->add_flag("--apply-remediation", options.apply_remediation,
                "Merge the prescribed flags and variables into the next launch");
  run->add_option("--log-dir", options.log_dir,
                  "Write each attempt's output to DIR/attempt-N.log, command line first");
  run->add_option("--startup-timeout", options.startup_timeout,
                  "Report a server that prints nothing within SECONDS");
  run->add_option("--ready-pattern", options.ready_pattern,
                  "RE2 pattern of the line that means 'ready' for servers logrx does not know");
  run->add_option("--server", options.server, "The server kind, when it cannot be told from CMD")
      ->check(CLI::IsMember({"sglang", "vllm", "tgi", "llamacpp", "trtllm", "lmdeploy", "ollama"}));
  run->add_option("--rules", options.rules.extra_dirs, "Also load the rules in DIR")
      ->type_name("DIR")
      ->allow_extra_args(false);
  run->add_flag("--no-builtin-rules", options.rules.no_builtin, "Do not load the built-in rulebook");
  run->add_flag("--no-redact", options.no_redact, "Do not replace secrets with <redacted>");
  add_metrics_options(*run, options.metrics);
  run->footer(
      "Exits with the server's status (128+N when it was killed by signal N); SIGINT and SIGTERM "
      "are forwarded to it. 2 for logrx's own errors.");
  run->callback([&options, &exit_code] { exit_code = run_run(options); });
}

int run_run(const RunOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  if (options.command.empty()) {
    std::cerr << "logrx: run needs a command after --\n";
    return kExitError;
  }
  MetricsExporter metrics(options.metrics);
  if (!metrics.start()) return kExitError;
  std::signal(SIGINT, on_forward_signal);
  std::signal(SIGTERM, on_forward_signal);

  std::vector<std::string> args = options.command;
  std::map<std::string, std::string> env;
  std::string server = options.server.empty() ? detect_server(args) : options.server;
  int last_status = 0;
  for (int number = 1;; ++number) {
    Attempt attempt = run_attempt(*book, options, number, args, env, metrics);
    last_status = attempt.status;
    diagnose(attempt.report, "attempt " + std::to_string(number) + " " + describe_status(attempt.status) +
                                 " (phase " + (attempt.report.runs.empty() ? std::string("launching")
                                                                           : attempt.report.runs.back().phase) +
                                 ")");
    bool failed = !(WIFEXITED(attempt.status) && WEXITSTATUS(attempt.status) == 0);
    if (!failed || attempt.signalled_by_us || !options.apply_remediation || number > options.restart)
      break;
    if (server.empty() && !attempt.report.runs.empty() && attempt.report.runs.back().server != "unknown")
      server = attempt.report.runs.back().server;
    LaunchCommand next{args, env};
    ApplyOutcome outcome = apply_remediation(*book, server, attempt.report.remediation, next);
    if (!outcome.error.empty()) {
      std::cerr << "logrx: cannot apply the remediation: " << outcome.error << "\n";
      break;
    }
    for (const std::string& s : outcome.skipped) std::cerr << "logrx: not applied: " << s << "\n";
    const std::vector<std::string>& applied = outcome.applied;
    args = next.argv;
    env = next.env;
    if (!outcome.changed) {
      std::cerr << "logrx: nothing new to apply; not relaunching\n";
      break;
    }
    std::cerr << "logrx: relaunching (attempt " << number + 1 << " of " << options.restart + 1
              << ") with:";
    for (const std::string& a : applied) std::cerr << " " << a << ";";
    std::cerr << "\n";
  }
  return exit_code_of(last_status);
}

}  // namespace logrx::cli
