// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common.h"

namespace logrx::cli {

struct RulesOptions {
  std::string format = "text";
  RuleOptions rules;
};

// `logrx rules list` and `logrx rules test`.
void setup_rules(CLI::App& app, RulesOptions& options, int& exit_code);
int run_rules_list(const RulesOptions& options);
int run_rules_test(const RulesOptions& options);

}  // namespace logrx::cli
