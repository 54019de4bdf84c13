// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common.h"

namespace logrx::cli {

struct BudgetOptions {
  std::string file = "-";
  std::string format = "text";
  std::string color = "auto";
  int run = 0;  // 0: the latest
  std::string gpu_memory;  // --gpu-memory: the card's size when the log does not print it
  bool no_redact = false;
  RuleOptions rules;
};

// `logrx budget`: the GPU memory budget of a run, from its log.
void setup_budget(CLI::App& app, BudgetOptions& options, int& exit_code);
int run_budget(const BudgetOptions& options);

}  // namespace logrx::cli
