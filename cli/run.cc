// SPDX-License-Identifier: MIT
// The supervisor: attempts, what is learned between them, and the record
// (run.json, --events, --save-cmd). One attempt's process handling is in
// run_attempt.cc, the process layer in supervise.cc.
//
// The search across attempts is monotone: a knob (a numeric flag) that an
// attempt moved up because it failed too low is never set back to that
// value or below by a later prescription that wants it down, and the other
// way round; when the two pull against each other, the findings' other
// knobs (concurrency, context, chunked prefill, CUDA graph sizes) are tried
// instead of oscillating.
#include "run.h"

#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "logrx/analyzer.h"
#include "logrx/line.h"
#include "logrx/output.h"
#include "run_events.h"
#include "supervise.h"

namespace logrx::cli {
namespace {

using ojson = nlohmann::ordered_json;

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

std::optional<double> number_of(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The value a flag has on the command line (--flag v or --flag=v), if any.
std::optional<std::string> current_value(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size()) return argv[i + 1];
    if (argv[i].rfind(flag + "=", 0) == 0) return argv[i].substr(flag.size() + 1);
  }
  return std::nullopt;
}

// What the attempts so far showed about each numeric knob.
struct Knob {
  std::optional<double> too_low;   // failed at this value wanting more
  std::optional<double> too_high;  // failed at this value wanting less
  int low_attempt = 0;
  int high_attempt = 0;
};

struct Search {
  std::map<std::string, Knob> knobs;
  std::map<std::string, int> tried;  // command line -> attempt

  // The items to apply after `attempt`: prescriptions that would go back to
  // a value shown to fail the other way are dropped, and the alternatives of
  // their findings take their place.
  std::vector<RemediationItem> plan(const Attempt& attempt, std::vector<std::string>& notes) {
    const std::vector<std::string>& argv = attempt.command.argv;
    std::vector<RemediationItem> items;
    for (const RemediationItem& item : attempt.report.remediation) {
      if (item.kind != RemediationItem::Kind::Flag || !item.applicable || !item.value) continue;
      auto now = current_value(argv, item.name);
      auto from = now ? number_of(*now) : std::nullopt;
      auto to = number_of(*item.value);
      if (!from || !to || *from == *to) continue;
      Knob& knob = knobs[item.name];
      if (*to > *from && (!knob.too_low || *from > *knob.too_low)) {
        knob.too_low = *from;
        knob.low_attempt = attempt.number;
      }
      if (*to < *from && (!knob.too_high || *from < *knob.too_high)) {
        knob.too_high = *from;
        knob.high_attempt = attempt.number;
      }
    }
    std::set<std::string> blocked_rules;
    std::set<std::string> names;
    auto allowed = [&](const RemediationItem& item) {
      if (item.kind != RemediationItem::Kind::Flag || !item.value) return true;
      auto it = knobs.find(item.name);
      auto to = number_of(*item.value);
      if (it == knobs.end() || !to) return true;
      const Knob& knob = it->second;
      auto now = current_value(argv, item.name);
      auto from = now ? number_of(*now) : std::nullopt;
      bool down = from && *to < *from;
      bool up = from && *to > *from;
      if (down && knob.too_low && *to <= *knob.too_low) {
        notes.push_back("not lowering " + item.name + " to " + *item.value + ": attempt " +
                        std::to_string(knob.low_attempt) + " failed at " + fixed(*knob.too_low) +
                        " because it was too low");
        return false;
      }
      if (up && knob.too_high && *to >= *knob.too_high) {
        notes.push_back("not raising " + item.name + " to " + *item.value + ": attempt " +
                        std::to_string(knob.high_attempt) + " failed at " + fixed(*knob.too_high) +
                        " because it was too high");
        return false;
      }
      return true;
    };
    for (const RemediationItem& item : attempt.report.remediation) {
      if (!allowed(item)) {
        blocked_rules.insert(item.rule_id);
        continue;
      }
      items.push_back(item);
      names.insert(item.name);
    }
    // Switch knobs instead of oscillating on one.
    for (const Finding& finding : attempt.report.findings) {
      if (blocked_rules.count(finding.rule_id) == 0) continue;
      for (RemediationItem alternative : finding.remediation) {
        if (!alternative.alternative || !alternative.applicable || names.count(alternative.name) > 0) continue;
        if (alternative.kind == RemediationItem::Kind::Flag && !alternative.value &&
            current_value(argv, alternative.name))
          continue;
        alternative.alternative = false;
        if (!allowed(alternative)) continue;
        notes.push_back("trying " + alternative.name + (alternative.value ? " " + *alternative.value : "") +
                        " instead (" + finding.rule_id + ")");
        names.insert(alternative.name);
        items.push_back(std::move(alternative));
      }
    }
    return items;
  }

  static std::string fixed(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }
};

ojson attempt_json(const Attempt& a, bool redact) {
  ojson out;
  out["attempt"] = a.number;
  out["argv"] = shown_argv(a.command.argv, redact);
  out["env"] = ojson::object();
  for (const auto& [name, value] : shown_env(a.command.env, redact)) out["env"][name] = value;
  out["command_line"] = shown_command(a.command, redact);
  if (!a.log_path.empty()) out["log"] = a.log_path;
  out["started"] = a.started;
  out["ended"] = a.ended;
  ojson exit;
  if (WIFEXITED(a.status)) exit["code"] = WEXITSTATUS(a.status);
  if (WIFSIGNALED(a.status)) exit["signal"] = WTERMSIG(a.status);
  out["exit"] = exit;
  out["reached_ready"] = a.reached_ready;
  if (!a.stop_reason.empty()) out["stop_reason"] = a.stop_reason;
  if (a.killed) out["killed"] = true;
  out["findings"] = ojson::array();
  for (const Finding& f : a.report.findings)
    out["findings"].push_back(ojson::parse(finding_to_json(f), nullptr, false));
  Report remediation_only;
  remediation_only.remediation = a.report.remediation;
  out["remediation"] = ojson::parse(to_json(remediation_only, -1), nullptr, false)["remediation"];
  out["applied_next"] = a.applied;
  out["skipped_next"] = a.skipped;
  if (!a.notes.empty()) out["notes"] = a.notes;
  return out;
}

// Written after every attempt (to a temporary file, then renamed), so a
// killed supervisor still leaves a readable record.
bool write_run_json(const std::string& dir, const ojson& doc) {
  if (dir.empty()) return true;
  std::string path = dir + "/run.json";
  std::string temporary = path + ".tmp";
  int fd = open_for_writing(temporary, false);
  if (fd < 0) return false;
  std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  bool ok = write_all(fd, text.data(), text.size());
  ok = ::close(fd) == 0 && ok;
  return ok && ::rename(temporary.c_str(), path.c_str()) == 0;
}

bool make_dirs(const std::string& path) {
  std::string partial;
  std::size_t at = 0;
  while (at != std::string::npos) {
    at = path.find('/', at + 1);
    partial = path.substr(0, at);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// DIR/run-N: a new folder per run, so attempts of different runs never mix.
std::string new_run_dir(const std::string& base, std::string& error) {
  if (!make_dirs(base)) {
    error = "cannot create --log-dir " + base + ": " + std::strerror(errno);
    return "";
  }
  for (int n = 1; n < 100000; ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "/run-%03d", n);
    std::string dir = base + name;
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST) {
      error = "cannot write in --log-dir " + base + ": " + std::strerror(errno);
      return "";
    }
  }
  error = "too many runs in --log-dir " + base;
  return "";
}

bool save_command(const std::string& path, const LaunchCommand& command, int attempt, std::string& error) {
  std::string text = "#!/bin/sh\n# Written by logrx run: the command of attempt " + std::to_string(attempt) +
                     ", which reached ready (" + utc_now() + ").\n";
  for (const auto& [name, value] : command.env) text += "export " + name + "=" + shell_quote(value) + "\n";
  text += "exec";
  for (const std::string& word : command.argv) text += " " + shell_quote(word);
  text += "\n";
  // It may hold secrets the command line carries: readable by its owner only.
  int fd = open_for_writing(path, false, 0700);
  if (fd < 0 || !write_all(fd, text.data(), text.size()) || ::close(fd) != 0) {
    error = "cannot write --save-cmd " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

// Waits, and returns false when a signal asked logrx to stop meanwhile.
bool backoff_wait(double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) return true;
    pollfd p{signal_pipe_fd(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) > 0) {
      bool child = false;
      if (!drain_signal_pipe(&child).empty()) return false;
    }
  }
}

}  // namespace

void setup_run(CLI::App& app, RunOptions& options, int& exit_code) {
  CLI::App* run = app.add_subcommand(
      "run",
      "Supervise a server: pass its output through, diagnose it live, stop it when it hangs, and "
      "relaunch it (logrx run [options] -- CMD ARGS...)");
  run->add_option("command", options.command, "The server command, after --")->required();
  run->add_option("--restart", options.restart,
                  "Relaunch at most N times after a failure (the same command, or the prescribed one "
                  "with --apply-remediation)")
      ->check(CLI::Range(0, 100));
  run->add_flag("--apply-remediation", options.apply_remediation,
                "Relaunch with the applicable prescribed flags and variables (needs --restart)");
  run->add_option("--log-dir", options.log_dir,
                  "Write each run to a new DIR/run-N/: attempt-N.log (command line first) and run.json");
  run->add_option("--startup-timeout", options.startup_timeout,
                  "Report a server that prints nothing within SECONDS")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--ready-timeout", options.ready_timeout,
                  "Stop (and relaunch, with --restart) a server not ready within SECONDS")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--stall-timeout", options.stall_timeout,
                  "Stop (and relaunch) a ready server silent for SECONDS (or whose --ready-url stops answering)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--ready-url", options.ready_url,
                  "http://127.0.0.1:PORT/PATH: a 2xx answer means ready; checked every second");
  run->add_option("--kill-grace", options.kill_grace,
                  "SECONDS between SIGTERM and SIGKILL for the server's process group (default 15)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--fatal-grace", options.fatal_grace,
                  "SECONDS a server may keep running after a fatal error before it is stopped (default 10)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--backoff", options.backoff,
                  "SECONDS before the first relaunch, doubled for each further one (default 1, at most 60)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--events", options.events,
                  "Write JSON lines (attempt_started, finding, ready, stopped, exited, relaunching, "
                  "verdict) to FILE, or - for stdout (the server's stdout then goes to stderr)");
  run->add_option("--save-cmd", options.save_cmd,
                  "Write the command that reached ready, with its environment, as a shell script");
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
      "The server runs in its own session and process group; SIGINT, SIGTERM, SIGHUP and SIGQUIT "
      "are passed to the whole group, SIGKILL follows after --kill-grace (at once on a second "
      "signal), and what is left of the group when the server exits is stopped too. Exits with the "
      "server's status (128+N when it was killed by signal N); 2 for logrx's own errors.");
  run->callback([&options, &exit_code] { exit_code = run_run(options); });
}

int run_run(const RunOptions& options) {
  if (options.command.empty()) {
    std::cerr << "logrx: run needs a command after --\n";
    return kExitError;
  }
  if (options.apply_remediation && options.restart == 0) {
    std::cerr << "logrx: --apply-remediation needs --restart N (how many relaunches it may make)\n";
    return kExitError;
  }
  HttpUrl url;
  std::string error;
  if (!options.ready_url.empty() && !parse_http_url(options.ready_url, url, error)) {
    std::cerr << "logrx: --ready-url: " << error << "\n";
    return kExitError;
  }
  if (options.apply_remediation) {
    std::string problem = rewrite_problem(options.command);
    if (!problem.empty()) {
      std::cerr << "logrx: --apply-remediation: " << problem << "\n";
      return kExitError;
    }
  }
  ensure_standard_descriptors();
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  std::string run_dir;
  if (!options.log_dir.empty()) {
    run_dir = new_run_dir(options.log_dir, error);
    if (run_dir.empty()) {
      std::cerr << "logrx: " << error << "\n";
      return kExitError;
    }
  }
  EventSink events;
  if (!events.open(options.events, error)) {
    std::cerr << "logrx: " << error << "\n";
    return kExitError;
  }
  MetricsExporter metrics(options.metrics);
  if (!metrics.start()) return kExitError;
  if (!install_signal_pipe()) {
    std::cerr << "logrx: cannot set up signal handling: " << std::strerror(errno) << "\n";
    return kExitError;
  }
  bool redact = !options.no_redact;
  ojson record;
  record["version"] = 1;
  record["started"] = utc_now();
  record["command"] = shown_argv(options.command, redact);
  record["restart"] = options.restart;
  record["apply_remediation"] = options.apply_remediation;
  record["attempts"] = ojson::array();
  record["verdict"] = "running";
  if (!write_run_json(run_dir, record)) {
    std::cerr << "logrx: cannot write " << run_dir << "/run.json: " << std::strerror(errno) << "\n";
    return kExitError;
  }
  if (!run_dir.empty()) std::cerr << "logrx: this run's logs go to " << run_dir << "\n";

  LaunchCommand command{options.command, {}};
  std::string server = options.server.empty() ? detect_server(command.argv) : options.server;
  Search search;
  std::optional<Attempt> worked;
  int last_status = 0;
  std::string verdict;
  std::string reason;
  for (int number = 1;; ++number) {
    std::string log_path = run_dir.empty() ? "" : run_dir + "/attempt-" + std::to_string(number) + ".log";
    search.tried[command_line(command)] = number;
    Attempt attempt = run_attempt(*book, options, number, command, log_path, events, metrics);
    last_status = attempt.status;
    diagnose(attempt.report, "attempt " + std::to_string(number) + " " + describe_status(attempt.status) +
                                 (attempt.stop_reason.empty() ? "" : " (stopped: " + attempt.stop_reason + ")") +
                                 " (phase " +
                                 (attempt.report.runs.empty() ? std::string("launching")
                                                              : attempt.report.runs.back().phase) +
                                 ")");
    bool clean_exit = WIFEXITED(attempt.status) && WEXITSTATUS(attempt.status) == 0 && attempt.stop_reason.empty();
    bool failed = attempt.stop_reason == "fatal-grace" || attempt.stop_reason == "ready-timeout" ||
                  attempt.stop_reason == "stall" || (!clean_exit && !attempt.user_stop);
    if (attempt.reached_ready && !failed) worked = attempt;

    auto finish_attempt = [&](Attempt& a) {
      record["attempts"].push_back(attempt_json(a, redact));
      write_run_json(run_dir, record);
    };
    if (attempt.user_stop) {
      verdict = attempt.reached_ready ? "ready" : "stopped";
      reason = "stopped by a signal to logrx";
      finish_attempt(attempt);
      break;
    }
    if (!failed) {
      verdict = attempt.reached_ready ? "ready" : "exited";
      reason = describe_status(attempt.status);
      finish_attempt(attempt);
      break;
    }
    if (number > options.restart) {
      verdict = "failed";
      reason = options.restart == 0 ? "the server failed (no --restart)"
                                    : "no relaunches left (--restart " + std::to_string(options.restart) + ")";
      finish_attempt(attempt);
      break;
    }
    if (server.empty() && !attempt.report.runs.empty() && attempt.report.runs.back().server != "unknown")
      server = attempt.report.runs.back().server;
    LaunchCommand next = command;
    if (options.apply_remediation) {
      std::vector<std::string> notes;
      std::vector<RemediationItem> items = search.plan(attempt, notes);
      for (const std::string& note : notes) std::cerr << "logrx: " << note << "\n";
      attempt.notes.insert(attempt.notes.end(), notes.begin(), notes.end());
      ApplyOutcome outcome = apply_remediation(*book, server, items, next);
      if (!outcome.error.empty()) {
        std::cerr << "logrx: cannot apply the remediation: " << outcome.error << "\n";
        verdict = "failed";
        reason = outcome.error;
        finish_attempt(attempt);
        break;
      }
      for (const std::string& s : outcome.skipped) std::cerr << "logrx: not applied: " << s << "\n";
      attempt.applied = outcome.applied;
      attempt.skipped = outcome.skipped;
      if (!outcome.changed) {
        std::cerr << "logrx: nothing new to apply; not relaunching\n";
        verdict = "failed";
        reason = "nothing left to try: no applicable remediation changes the command";
        finish_attempt(attempt);
        break;
      }
      auto seen = search.tried.find(command_line(next));
      if (seen != search.tried.end()) {
        std::cerr << "logrx: the prescribed command is the one attempt " << seen->second
                  << " already ran; not relaunching\n";
        verdict = "failed";
        reason = "the remediation leads back to attempt " + std::to_string(seen->second) + "'s command";
        finish_attempt(attempt);
        break;
      }
    }
    finish_attempt(attempt);
    double delay = std::min(options.backoff * std::pow(2.0, number - 1), std::max(options.backoff_max, options.backoff));
    std::cerr << "logrx: relaunching (attempt " << number + 1 << " of " << options.restart + 1 << ")";
    if (options.apply_remediation) {
      std::cerr << " with:";
      for (const std::string& a : attempt.applied) std::cerr << " " << escape_for_terminal(a) << ";";
    } else {
      std::cerr << " with the same command";
    }
    if (delay > 0) std::cerr << " in " << delay << " s";
    std::cerr << "\n";
    events.emit("relaunching", {{"attempt", number + 1}, {"applied", attempt.applied}, {"delay", delay},
                                {"argv", shown_argv(next.argv, redact)}});
    if (delay > 0 && !backoff_wait(delay)) {
      verdict = "stopped";
      reason = "stopped by a signal to logrx before the relaunch";
      break;
    }
    command = next;
  }

  record["verdict"] = verdict;
  record["reason"] = reason;
  record["ended"] = utc_now();
  if (worked) {
    record["worked"] = {{"attempt", worked->number}, {"command_line", shown_command(worked->command, redact)}};
    std::cerr << "logrx: verdict: ready with attempt " << worked->number << ": "
              << escape_for_terminal(shown_command(worked->command, redact)) << "\n";
  } else {
    std::cerr << "logrx: verdict: " << verdict << ": " << reason << "\n";
  }
  write_run_json(run_dir, record);
  ojson verdict_event{{"result", verdict}, {"reason", reason}};
  if (worked) {
    verdict_event["attempt"] = worked->number;
    verdict_event["argv"] = shown_argv(worked->command.argv, redact);
  }
  events.emit("verdict", verdict_event);
  if (!options.save_cmd.empty()) {
    if (worked) {
      if (!save_command(options.save_cmd, worked->command, worked->number, error)) {
        std::cerr << "logrx: " << error << "\n";
        return kExitError;
      }
      std::cerr << "logrx: saved the command that worked to " << options.save_cmd << "\n";
    } else {
      std::cerr << "logrx: no attempt reached ready; " << options.save_cmd << " not written\n";
    }
  }
  return exit_code_of(last_status);
}

}  // namespace logrx::cli
