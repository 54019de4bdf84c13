// SPDX-License-Identifier: MIT
// The GPU memory budget of a run, reconstructed from what the server printed
// at start-up (weights, KV pool, state caches, CUDA graphs, headroom).
//
//   logrx::Report report = analyzer.finish();
//   logrx::MemoryBudget budget = logrx::compute_budget(report.runs.back());
//
// Pure functions over plain values; safe from any thread.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "logrx/finding.h"

namespace logrx {

struct BudgetPart {
  std::string name;            // "weights", "draft weights", "KV cache", ...
  std::optional<double> gb;    // per GPU; std::nullopt when the log did not say
  std::string detail;          // "77056 tokens", "24 slots", ...
  std::string unit = "GB";     // as the log printed it: vLLM "GiB", SGLang "GB"
};

struct MemoryBudget {
  int run = 0;
  std::string server;
  // Sizes are the log's numbers in the unit it printed them in (`unit`, also
  // per part): SGLang's "GB" and vLLM's "GiB" are both 2^30 bytes, so they
  // add up without conversion; the names ending in _gb say "a size", not "10^9".
  std::string unit = "GB";
  std::optional<double> total_gb;      // GPU memory per rank
  bool total_estimated = false;        // derived from free memory before the weights
  std::string fraction_name;           // "mem_fraction_static" / "gpu_memory_utilization"
  std::optional<double> fraction;
  std::vector<BudgetPart> parts;       // weights, draft, KV cache, state cache, CUDA graphs
  std::optional<double> free_gb;       // headroom left when the server was ready
  std::vector<std::string> arithmetic; // the sums behind the numbers, one per line
  std::vector<std::string> missing;    // what the log did not report
  // Facts left out because no GPU could have printed them (a negative, huge or
  // non-finite size, a fraction outside 0..1): "weights_gb=1e+300".
  std::vector<std::string> rejected;
  std::vector<RemediationItem> remediation;  // the run's suggested flags, with their arithmetic
};

// Builds the budget from a run's facts. Every fact is checked before any
// arithmetic: an implausible one counts as not reported (and is listed in
// `rejected`).
MemoryBudget compute_budget(const RunInfo& run);

// True when the budget holds at least one figure from the log (a part, the
// GPU size, the fraction or the free memory); false means nothing to budget.
bool budget_has_figures(const MemoryBudget& budget);

// A bar of the GPU with one segment per part (ANSI colours when `color`),
// the numbers, the arithmetic and what is missing.
void write_budget_text(std::ostream& out, const MemoryBudget& budget, bool color);

// {"run": 1, "server": ..., "total_gb": ..., "parts": [...], ...}
std::string budget_to_json(const MemoryBudget& budget, int indent = 2);

}  // namespace logrx
