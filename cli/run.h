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

// The server a command line starts ("sglang", "vllm", "tgi", "llamacpp",
// "ollama", "lmdeploy", "trtllm"), or "" when it cannot tell.
std::string detect_server(const std::vector<std::string>& command);

// Merges remediation into a command line and environment: an existing flag's
// value is replaced (--flag value or --flag=value), a missing flag is added,
// variables are set. Only names the rulebook knows for `server` are applied;
// the others are listed in `skipped`. Returns true when anything changed.
bool apply_remediation(const Rulebook& book, const std::string& server,
                       const std::vector<RemediationItem>& items, std::vector<std::string>& args,
                       std::map<std::string, std::string>& env, std::vector<std::string>& applied,
                       std::vector<std::string>& skipped);

}  // namespace logrx::cli
