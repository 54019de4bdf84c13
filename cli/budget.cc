// SPDX-License-Identifier: MIT
#include "budget.h"

#include <cctype>
#include <cstdio>
#include <cmath>
#include <iostream>
#include <optional>

#include "logrx/analyzer.h"
#include "logrx/budget.h"
#include "logrx/output.h"

namespace logrx::cli {
namespace {

// "96GiB", "80 GB", "96G", "98304MiB", "96" -> GiB. Servers print binary
// sizes (SGLang labels them "GB"), so GB and G are read as GiB too.
std::optional<double> parse_gpu_memory(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string unit;
  for (std::size_t i = used; i < text.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(text[i])))
      unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  if (unit == "mib" || unit == "mb" || unit == "m") value /= 1024;
  else if (unit == "tib" || unit == "tb" || unit == "t") value *= 1024;
  else if (!(unit.empty() || unit == "gib" || unit == "gb" || unit == "g")) return std::nullopt;
  // No GPU has less than 1 GiB or more than 64 TiB.
  if (!std::isfinite(value) || value < 1 || value > 65536) return std::nullopt;
  return value;
}

}  // namespace

void setup_budget(CLI::App& app, BudgetOptions& options, int& exit_code) {
  CLI::App* budget = app.add_subcommand(
      "budget", "Reconstruct the GPU memory budget of the latest launch in a log");
  budget->add_option("file", options.file, "Log file; '-' or none reads stdin");
  budget->add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  budget->add_option("--run", options.run, "Which launch in the file (1 = first; default: the latest)");
  budget->add_option("--gpu-memory", options.gpu_memory,
                     "Memory of one GPU (96GiB, 80GB, 98304MiB), when the log does not print "
                     "the card's size; it replaces an estimate")
      ->type_name("SIZE")
      ->check([](const std::string& value) {
        return parse_gpu_memory(value) ? std::string()
                                       : "not a GPU memory size (e.g. 96GiB): " + value;
      });
  budget->add_option("--color", options.color, "Colour the bar")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  budget->add_option("--rules", options.rules.extra_dirs, "Also load the rules in DIR")
      ->type_name("DIR")
      ->allow_extra_args(false);
  budget->add_flag("--no-builtin-rules", options.rules.no_builtin, "Do not load the built-in rulebook");
  budget->add_flag("--no-redact", options.no_redact, "Do not replace secrets with <redacted>");
  budget->callback([&options, &exit_code] { exit_code = run_budget(options); });
}

int run_budget(const BudgetOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  AnalyzerOptions analyzer_options;
  analyzer_options.stream_name = options.file == "-" ? "<stdin>" : options.file;
  analyzer_options.redact = !options.no_redact;
  Analyzer analyzer(*book, analyzer_options);
  std::string error =
      read_stream(options.file, [&analyzer](std::string_view bytes) { analyzer.feed(bytes); });
  if (!error.empty()) {
    std::cerr << "logrx: " << options.file << ": " << error << "\n";
    return kExitError;
  }
  Report report = analyzer.finish();
  if (!report.input_error.empty()) {
    std::cerr << "logrx: " << escape_for_terminal(options.file) << ": " << report.input_error << "\n";
    return kExitError;
  }
  if (report.runs.empty()) {
    std::cerr << "logrx: " << options.file << ": the log is empty\n";
    return kExitError;
  }
  const RunInfo* run = &report.runs.back();
  if (options.run > 0) {
    if (static_cast<std::size_t>(options.run) > report.runs.size()) {
      std::cerr << "logrx: the log holds " << report.runs.size()
                << (report.runs.size() == 1 ? " launch" : " launches") << ", not " << options.run
                << "\n";
      return kExitError;
    }
    run = &report.runs[static_cast<std::size_t>(options.run - 1)];
  }
  RunInfo sized = *run;
  if (auto size = parse_gpu_memory(options.gpu_memory)) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", *size);
    // No unit of its own: the budget keeps the one the log printed its sizes in.
    Fact total;
    total.text = text;
    total.number = *size;
    sized.facts["gpu_total_gb"] = std::move(total);
    run = &sized;
  }
  MemoryBudget budget = compute_budget(*run);
  // An empty log, or one without a single memory figure, has no budget: a
  // page of "not reported" would read as an answer.
  if (!budget_has_figures(budget)) {
    std::cerr << "logrx: " << options.file << ": nothing to budget: launch " << run->run
              << " reports no GPU memory figure (weights, KV cache, memory fraction, free memory)\n";
    return kExitError;
  }
  std::vector<Finding> of_run;
  for (const Finding& f : report.findings)
    if (f.run == run->run) of_run.push_back(f);
  for (Finding& f : of_run) f.stale = false;
  budget.remediation = merge_remediation(of_run);
  if (options.format == "json") {
    std::cout << budget_to_json(budget) << "\n";
  } else {
    bool color = options.color == "always" || (options.color == "auto" && stdout_wants_color());
    write_budget_text(std::cout, budget, color);
  }
  return kExitClean;
}

}  // namespace logrx::cli
