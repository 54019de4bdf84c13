// SPDX-License-Identifier: MIT
// Prometheus metrics of a watched stream, in the text exposition format
// (version 0.0.4), for `logrx watch/run --metrics-listen/--metrics-file`.
//
//   logrx::MetricsRegistry metrics;
//   analyzer.on_finding([&](const logrx::Finding& f) { metrics.count_finding(f, now); });
//   metrics.set_state(analyzer.server(), analyzer.phase(), analyzer.ready());
//   std::string page = metrics.render();   // from any thread
//
// Thread-safety: every member may be called from any thread at any time (an
// HTTP thread renders while the analyzer's thread records).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "logrx/budget.h"
#include "logrx/finding.h"

namespace logrx {

class MetricsRegistry {
 public:
  // At most this many logrx_findings_total series; findings of further
  // label sets are counted in logrx_findings_unlabelled_total instead.
  static constexpr std::size_t kMaxFindingSeries = 2000;

  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // One finding reported at `unix_seconds` (wall-clock time logrx saw it).
  void count_finding(const Finding& finding, double unix_seconds);

  // Lines read: the counter only grows, across rotated and restarted streams.
  void add_lines(std::uint64_t lines, double unix_seconds);

  // The current launch: the server seen in it, its phase (one of kPhases)
  // and whether it reached ready.
  void set_state(const std::string& server, const std::string& phase, bool ready);

  // The GPU memory budget of the current launch (parts the log did not
  // report are left out); replaces the previous one.
  void set_budget(const MemoryBudget& budget);

  // Labels added to every sample ({pod="...", container="..."}), so the
  // metrics of several watchers merged by one collector stay apart. Names are
  // the caller's to validate (see valid_prometheus_label_name).
  void set_constant_labels(std::vector<std::pair<std::string, std::string>> labels);

  // Bumped on every change; lets a writer skip rewriting an unchanged file.
  std::uint64_t version() const;

  // The whole exposition: # HELP and # TYPE for every metric, then samples.
  std::string render() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A label value escaped for the exposition format: backslash, double quote
// and line feed become \\, \" and \n.
std::string escape_prometheus_label(std::string_view value);

// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved by Prometheus).
bool valid_prometheus_label_name(std::string_view name);

}  // namespace logrx
