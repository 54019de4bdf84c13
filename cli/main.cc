// SPDX-License-Identifier: MIT
// logrx: diagnose LLM inference server logs.
#include <CLI/CLI.hpp>
#include <csignal>
#include <exception>
#include <iostream>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "budget.h"
#include "eval.h"
#include "gaps.h"
#include "run.h"
#include "watch.h"
#include "common.h"
#include "logrx/version.h"
#include "coverage.h"
#include "rules_cmd.h"
#include "scan.h"

int main(int argc, char** argv) {
  using namespace logrx::cli;
  // A closed stdout (`logrx scan big.log | head -1`) is a failed write that
  // ends the command quietly, not a signal that kills it mid-way.
  std::signal(SIGPIPE, SIG_IGN);
  install_stdout();
  CLI::App app{"logrx " LOGRX_VERSION
               ": reads the logs of LLM inference servers (SGLang, vLLM, ...), recognises "
               "what went wrong and prescribes the fix as concrete server flags."};
  app.set_version_flag("--version", LOGRX_VERSION);
  app.require_subcommand(1);
  // Global options anywhere: `logrx scan -v` as well as `logrx -v scan`.
  app.fallthrough();
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Log what logrx does to stderr");
  app.footer(
      "Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, input or rule errors.\n"
      "Run 'logrx COMMAND --help' for a command's options.");

  int exit_code = kExitClean;
  ScanOptions scan_options;
  RulesOptions rules_options;
  BudgetOptions budget_options;
  ScanOptions lint_options;
  RulesOptions explain_options;
  GapsOptions gaps_options;
  WatchOptions watch_options;
  RunOptions run_options;
  setup_scan(app, scan_options, exit_code);
  setup_lint(app, lint_options, exit_code);
  setup_explain(app, explain_options, exit_code);
  setup_gaps(app, gaps_options, exit_code);
  setup_watch(app, watch_options, exit_code);
  setup_run(app, run_options, exit_code);
  setup_budget(app, budget_options, exit_code);
  setup_rules(app, rules_options, exit_code);
  EvalOptions eval_options;
  setup_eval(app, eval_options, exit_code);
  CoverageOptions coverage_options;
  setup_coverage(*app.get_subcommand("rules"), coverage_options, exit_code);

  // Diagnostics of the tool itself go to stderr; stdout carries results only.
  auto logger = spdlog::stderr_color_mt("logrx");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
  app.parse_complete_callback([&verbose] {
    if (verbose) spdlog::set_level(spdlog::level::debug);
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return finish_stdout(code == 0 ? kExitClean : kExitError);
  } catch (const std::exception& e) {
    std::cerr << "logrx: " << e.what() << "\n";
    return finish_stdout(kExitError);
  }
  return finish_stdout(exit_code);
}
