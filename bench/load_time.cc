// SPDX-License-Identifier: MIT
// The rulebook's load time inside a process, best of N:
//   load_time [RULES_DIR] [N]
// With no directory, the built-in rulebook.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "logrx/rulebook.h"

int main(int argc, char** argv) {
  std::vector<logrx::RuleSource> sources;
  if (argc > 1 && std::string(argv[1]) != "-") {
    logrx::RuleSource source;
    source.path = argv[1];
    sources.push_back(source);
  } else {
    sources.push_back(logrx::builtin_rule_source());
  }
  int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  double best = 1e18;
  std::size_t rules = 0;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    logrx::Diagnostics errors;
    auto book = logrx::Rulebook::load(sources, errors);
    auto end = std::chrono::steady_clock::now();
    if (!book) {
      std::fprintf(stderr, "load_time: the rulebook does not load (%zu errors)\n", errors.size());
      return 2;
    }
    rules = book->size();
    best = std::min(best, std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::printf("%.1f ms (%zu rules, best of %d)\n", best, rules, runs);
  return 0;
}
