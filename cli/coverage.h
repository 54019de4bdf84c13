// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common.h"

namespace logrx::cli {

struct CoverageOptions {
  std::string templates_dir;
  std::string check_readme;
  std::string write_readme;
  RuleOptions rules;
};

// `logrx rules coverage`, a subcommand of `rules`.
void setup_coverage(CLI::App& rules, CoverageOptions& options, int& exit_code);
int run_coverage(const CoverageOptions& options);

}  // namespace logrx::cli
