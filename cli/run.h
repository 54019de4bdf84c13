// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "common.h"
#include "metrics.h"
#include "logrx/finding.h"
#include "logrx/relaunch.h"
#include "logrx/rulebook.h"

namespace logrx::cli {

struct RunOptions {
  std::vector<std::string> command;
  int restart = 0;                // relaunches after a failure
  bool apply_remediation = false; // relaunch with the prescribed flags (needs --restart)
  std::string log_dir;
  double startup_timeout = 0;  // seconds without any output: reported; 0 = off
  double ready_timeout = 0;    // seconds to ready, else stopped; 0 = off
  double stall_timeout = 0;    // seconds without output (or --ready-url) after ready; 0 = off
  std::string ready_url;       // http://127.0.0.1:PORT/health
  double kill_grace = 15;      // SIGTERM, then SIGKILL after this long
  double fatal_grace = 10;     // a fatal finding, then stopped after this long
  double backoff = 1;          // seconds before the first relaunch, doubled each time
  double backoff_max = 60;
  std::string events;          // JSON lines: FILE or "-"
  std::string save_cmd;        // shell script of the command that worked
  std::string ready_pattern;
  std::string server;          // override detection
  bool no_redact = false;
  RuleOptions rules;
  MetricsOptions metrics;
};

// `logrx run -- CMD ARGS...`: supervise a server, diagnose it live, and
// relaunch it with the prescribed flags.
void setup_run(CLI::App& app, RunOptions& options, int& exit_code);
int run_run(const RunOptions& options);

// What one attempt did, for the search, run.json and the event stream.
struct Attempt {
  int number = 0;
  LaunchCommand command;
  std::string log_path;
  std::string started, ended;  // UTC, ISO 8601
  int status = 0;              // raw waitpid status
  bool started_ok = false;     // the process ran (exec succeeded or at least forked)
  bool user_stop = false;      // logrx got SIGINT/SIGTERM/... and passed it on
  std::string stop_reason;     // "", "signal", "fatal-grace", "ready-timeout", "stall"
  bool killed = false;         // escalated to SIGKILL
  bool reached_ready = false;
  Report report;
  std::vector<std::string> applied;  // what the next attempt changed
  std::vector<std::string> skipped;
  std::vector<std::string> notes;
};

class EventSink;

// Runs one attempt (run_attempt.cc).
Attempt run_attempt(const Rulebook& book, const RunOptions& options, int number, const LaunchCommand& command,
                    const std::string& log_path, EventSink& events, MetricsExporter& metrics);

// The command line as shown to people and logs: secrets redacted unless --no-redact.
std::string shown_command(const LaunchCommand& command, bool redact);
std::vector<std::string> shown_argv(const std::vector<std::string>& argv, bool redact);
std::map<std::string, std::string> shown_env(const std::map<std::string, std::string>& env,
                                             bool redact);

}  // namespace logrx::cli
