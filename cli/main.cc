// SPDX-License-Identifier: MIT
// logrx: diagnose LLM inference server logs.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <boost/version.hpp>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <string>
#include <vector>

#include "budget.h"
#include "eval.h"
#include "gaps.h"
#include "run.h"
#include "watch.h"
#include "common.h"
#include "logrx/output.h"
#include "logrx/version.h"
#include "coverage.h"
#include "rules_cmd.h"
#include "scan.h"

#ifndef LOGRX_RE2_VERSION
#define LOGRX_RE2_VERSION "unknown"
#endif
#ifndef LOGRX_BUILD_TYPE
#define LOGRX_BUILD_TYPE ""
#endif

namespace {

using namespace logrx::cli;

// Edit distance with transpositions, so `scna` is one step from `scan`.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The build's details for -V: versions of what logrx is made of and the
// size of the rulebook it would use.
std::string version_text() {
  std::string text = "logrx " LOGRX_VERSION " (RE2 " LOGRX_RE2_VERSION ", Boost ";
  text += std::to_string(BOOST_VERSION / 100000) + "." + std::to_string(BOOST_VERSION / 100 % 1000);
  text += ", nlohmann_json " + std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
          std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
          std::to_string(NLOHMANN_JSON_VERSION_PATCH);
#if defined(__clang__)
  text += ", clang " __clang_version__;
#elif defined(__GNUC__)
  text += ", GCC " __VERSION__;
#endif
  if (*LOGRX_BUILD_TYPE != '\0') text += ", " LOGRX_BUILD_TYPE;
  logrx::Diagnostics errors;
  logrx::RuleSource builtin = logrx::builtin_rule_source();
  auto book = logrx::Rulebook::load({builtin}, errors);
  text += book ? "; rules: " + std::to_string(book->size()) +
                     (builtin.builtin ? " built in" : " from " + builtin.path)
               : std::string("; rules: the built-in rulebook does not load");
  text += ")";
  return text;
}

// A null output for -q: results are only the exit code.
class NullBuf : public std::streambuf {
 protected:
  int_type overflow(int_type ch) override { return traits_type::not_eof(ch); }
};

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout (`logrx scan big.log | head -1`) is a failed write that
  // ends the command quietly, not a signal that kills it mid-way.
  std::signal(SIGPIPE, SIG_IGN);
  install_stdout();
  CLI::App app{"logrx " LOGRX_VERSION
               ": reads the logs of LLM inference servers (SGLang, vLLM, TGI, llama.cpp, "
               "TensorRT-LLM, LMDeploy, Ollama), recognises what went wrong and prescribes the "
               "fix as concrete server flags."};
  app.require_subcommand(1);
  // Global options anywhere: `logrx scan -v` as well as `logrx -v scan`.
  app.fallthrough();
  bool verbose = false;
  bool quiet = false;
  bool show_version = false;
  app.add_flag("-v,--verbose", verbose, "Log what logrx does to stderr");
  app.add_flag("-q,--quiet", quiet,
               "Print nothing on stdout: the exit code is the result (errors still go to stderr)");
  app.add_flag("-V,--version", show_version, "Print the version and build details, then exit");

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

  // Set after the subcommands exist, which would otherwise inherit it: each
  // footer names only options its command has.
  app.footer(
      "Exit codes: 0 clean, 1 findings or failed checks, 2 usage, input, rule or output "
      "errors.\nRun 'logrx COMMAND --help' for a command's options.");
  app.get_subcommand("budget")->footer(
      "Exit codes: 0 budget printed, 2 usage, input or output errors, or a launch with no GPU "
      "memory figure to budget.");
  app.get_subcommand("gaps")->footer("Exit codes: 0 listed, 2 usage, input, rule or output errors.");
  app.get_subcommand("explain")->footer(
      "Exit codes: 0 shown, 2 no such rule, or usage, rule or output errors.");
  app.get_subcommand("eval")->footer(
      "Exit codes: 0 targets met, 1 below --min-category, --min-fix or --max-healthy-alarms, "
      "2 usage, manifest, rule or output errors.");
  CLI::App* rules = app.get_subcommand("rules");
  rules->footer("Run 'logrx rules COMMAND --help' for a command's options.");
  rules->get_subcommand("list")->footer("Exit codes: 0 listed, 2 rule or output errors.");
  rules->get_subcommand("patterns")->footer("Exit codes: 0 printed, 2 rule or output errors.");
  rules->get_subcommand("test")->footer(
      "Exit codes: 0 every example passes, 1 an example fails, 2 rule or output errors.");
  rules->get_subcommand("lint")->footer("Exit codes: 0 no problems, 2 any problem or output error.");
  rules->get_subcommand("coverage")->footer(
      "Exit codes: 0 every block passes (and the README table is current with --check-readme), "
      "1 a block fails or the table is out of date, 2 usage, rule or output errors.");

  // Diagnostics of the tool itself go to stderr; stdout carries results only.
  auto logger = spdlog::stderr_color_mt("logrx");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
  // Never freed, like the stdout buffer: the runtime flushes std::cout after
  // main's statics are destroyed (a static here was flushed after its destructor).
  static NullBuf* const null_output = new NullBuf;
  app.parse_complete_callback([&] {
    if (verbose) spdlog::set_level(spdlog::level::debug);
    if (quiet) {
      spdlog::set_level(spdlog::level::err);
      std::cout.rdbuf(null_output);
    }
  });

  // Before CLI11, which would only say the word was not expected: the
  // command word (the first that is not a global flag), and for `run` the
  // `--` that keeps the server's options from being read as logrx's.
  std::vector<std::string> args(argv + 1, argv + argc);
  bool asks_help = false;
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg == "-h" || arg == "--help") asks_help = true;
    if (arg == "-V" || arg == "--version") {
      std::cout << version_text() << "\n";
      return finish_stdout(kExitClean);
    }
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;
    if (!word.empty() && word[0] == '-') continue;
    const auto commands = app.get_subcommands({});
    bool known = std::any_of(commands.begin(), commands.end(),
                             [&](const CLI::App* c) { return c->check_name(word); });
    if (!known) {
      std::string nearest;
      std::size_t best = 3;  // at most two edits away
      for (const CLI::App* command : commands) {
        std::size_t distance = edit_distance(word, command->get_name());
        if (distance < best) {
          best = distance;
          nearest = command->get_name();
        }
      }
      std::cerr << "logrx: '" << logrx::escape_for_terminal(word) << "' is not a logrx command";
      if (!nearest.empty()) std::cerr << "; did you mean '" << nearest << "'?";
      std::cerr << " (see 'logrx --help')\n";
      return finish_stdout(kExitError);
    }
    if (word == "run" && !asks_help &&
        std::find(args.begin() + static_cast<std::ptrdiff_t>(i), args.end(), "--") == args.end()) {
      std::cerr << "logrx: run: put the server command after '--', e.g.\n"
                   "  logrx run --restart 2 --apply-remediation -- python3 -m sglang.launch_server "
                   "--model-path ...\n"
                   "so that the command's own options are not read as logrx's\n";
      return finish_stdout(kExitError);
    }
    break;
  }

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
