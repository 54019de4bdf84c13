// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"

namespace logrx::cli {

struct EvalOptions {
  std::vector<std::string> manifests;  // directories of cases or single case manifests
  std::string format = "text";
  double min_category = 0;   // --min-category: exit 1 below it
  double min_fix = 0;        // --min-fix
  long max_healthy_alarms = -1;  // --max-healthy-alarms; -1 = no limit
  bool list_all = false;     // --all: every case, not only the misses
  RuleOptions rules;
};

// `logrx eval`: how well logrx diagnoses a labelled corpus of real logs.
void setup_eval(CLI::App& app, EvalOptions& options, int& exit_code);
int run_eval(const EvalOptions& options);

}  // namespace logrx::cli
