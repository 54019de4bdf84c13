// SPDX-License-Identifier: MIT
// A supervisor loop in C++: read a server's output as it comes, react to a
// fatal finding at once, and print the merged remediation at the end.
//   supervisor LOG   (reads the file; a real supervisor reads the child's pipe)
#include <cstdio>
#include <iostream>

#include "logrx/analyzer.h"
#include "logrx/budget.h"
#include "logrx/output.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  logrx::Diagnostics errors;
  // The built-in rulebook: installed next to the library, or compiled into it.
  auto book = logrx::Rulebook::load({logrx::builtin_rule_source()}, errors);
  if (!book) {
    for (const auto& e : errors) std::cerr << logrx::format_diagnostic(e) << "\n";
    return 2;
  }
  logrx::AnalyzerOptions options;
  options.stream_name = argv[1];
  // What we started: logrx checks that the log really comes from it.
  options.launch_command =
      "python -m sglang.launch_server --model-path Qwen/Qwen3.6-27B --mem-fraction-static 0.8";
  logrx::Analyzer analyzer(*book, options);  // one per stream; the rulebook is shared
  analyzer.on_finding([](const logrx::Finding& f) {
    if (f.severity == logrx::Severity::Fatal)
      std::cout << "fatal: " << f.rule_id << " at line " << f.line << "\n";
  });

  std::FILE* in = std::fopen(argv[1], "rb");
  if (in == nullptr) return 2;
  char buffer[1 << 16];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, in)) > 0) analyzer.feed({buffer, n});
  std::fclose(in);

  logrx::Report report = analyzer.finish();
  for (const auto& item : report.remediation)
    std::cout << "apply: " << item.name << (item.value ? " " + *item.value : "") << "\n";
  if (!report.runs.empty()) {
    logrx::MemoryBudget budget = logrx::compute_budget(report.runs.back());
    std::cout << "budget parts: " << budget.parts.size() << "\n";
  }
  return 0;
}
