// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"
#include "metrics.h"

namespace logrx::cli {

struct WatchOptions {
  std::string file;
  std::string format = "text";
  int poll_ms = 250;
  bool no_redact = false;
  std::string ready_pattern;
  RuleOptions rules;
  MetricsOptions metrics;
  std::string journal;                     // --journal UNIT instead of FILE
  std::vector<std::string> journal_files;  // --journal-file: these files, not the system journal
  std::string since;                       // --since: journal entries from then on
  bool include_rotated = false;            // --include-rotated: FILE.1, FILE.2.gz, ... first
};

// `logrx watch FILE`: follow a growing log like tail -F and print findings
// as they happen.
void setup_watch(CLI::App& app, WatchOptions& options, int& exit_code);
int run_watch(const WatchOptions& options);

}  // namespace logrx::cli
