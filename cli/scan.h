// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"

namespace logrx::cli {

struct ScanOptions {
  std::vector<std::string> files;
  std::vector<std::string> globs;    // --glob: files of directories to read
  std::vector<std::string> formats;  // --format, repeatable; none: text
  std::vector<std::string> outputs;  // -o FILE, each for the --format before it
  std::vector<std::string> exclude_rules;
  std::string baseline;
  std::string fail_on = "error";
  std::string color = "auto";
  bool brief = false;
  bool all_runs = false;
  std::string launch_command;
  std::string since;
  int year = 0;  // --year: of timestamps that print none; 0 infers it
  unsigned threads = 0;  // --threads: for regular files; 0 = the cores available
  std::string server;
  bool no_redact = false;
  RuleOptions rules;
  std::string journal;                     // --journal UNIT instead of files
  std::vector<std::string> journal_files;  // --journal-file: not the system journal
};

void setup_scan(CLI::App& app, ScanOptions& options, int& exit_code);
// `logrx lint`: scan for CI, failing on warnings by default, with SARIF and
// GitHub annotation output.
void setup_lint(CLI::App& app, ScanOptions& options, int& exit_code);
// `command` is the parsed subcommand: it pairs each -o with its --format.
int run_scan(const CLI::App& command, const ScanOptions& options);

}  // namespace logrx::cli
