// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "common.h"
#include "metrics.h"
#include "logrx/finding.h"
#include "logrx/rulebook.h"

namespace logrx::cli {

struct RunOptions {
  std::vector<std::string> command;
  int restart = 0;
  bool apply_remediation = false;
  std::string log_dir;
  double startup_timeout = 0;  // seconds; 0 = off
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

}  // namespace logrx::cli
