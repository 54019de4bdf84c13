// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common.h"

namespace logrx::cli {

struct RulesOptions {
  std::string format = "text";
  std::string lint_dir;  // rules lint [DIR]
  std::string rule_id;   // explain RULE_ID
  RuleOptions rules;
};

// `logrx rules list|test|lint|patterns` and `logrx explain`.
void setup_rules(CLI::App& app, RulesOptions& options, int& exit_code);
void setup_explain(CLI::App& app, RulesOptions& options, int& exit_code);
int run_rules_list(const RulesOptions& options);
int run_rules_test(const RulesOptions& options);
int run_rules_lint(const RulesOptions& options);
int run_rules_patterns(const RulesOptions& options);
int run_explain(const RulesOptions& options);

}  // namespace logrx::cli
