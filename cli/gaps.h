// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.h"

namespace logrx::cli {

struct GapsOptions {
  std::vector<std::string> files;
  std::string format = "text";
  bool no_redact = false;
  RuleOptions rules;
};

// `logrx gaps`: problem-looking lines no rule matches, grouped by template.
void setup_gaps(CLI::App& app, GapsOptions& options, int& exit_code);
int run_gaps(const GapsOptions& options);

}  // namespace logrx::cli
