// SPDX-License-Identifier: MIT
// Scans a log with the installed C++ API and prints what a supervisor needs.
#include <iostream>

#include "logrx/analyzer.h"
#include "logrx/budget.h"
#include "logrx/output.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  logrx::Diagnostics errors;
  auto book = logrx::Rulebook::load({logrx::builtin_rule_source()}, errors);
  if (!book) {
    for (const auto& e : errors) std::cerr << logrx::format_diagnostic(e) << "\n";
    return 2;
  }
  // Which copy of the built-in rulebook was used (the check expects one).
  std::cout << "rules from " << book->rules().front().file << "\n";
  logrx::Analyzer analyzer(*book);
  int seen = 0;
  analyzer.on_finding([&](const logrx::Finding&) { ++seen; });
  analyzer.feed(argv[1]);
  logrx::Report report = analyzer.finish();
  for (const auto& item : report.remediation)
    std::cout << item.name << " " << item.value.value_or("") << "\n";
  logrx::MemoryBudget budget = logrx::compute_budget(report.runs.back());
  std::cout << "findings " << seen << " budget " << budget.parts.size() << "\n";
  return 0;
}
