// SPDX-License-Identifier: MIT
// Gaps: log lines that look like problems but that no rule recognises,
// grouped by template. The rule author's to-do list.
//
//   logrx::GapCollector gaps;
//   analyzer.on_unmatched_line([&](const logrx::LineEvent& e) { gaps.add("server.log", e); });
//   for (const auto& group : gaps.groups()) ...
//
// A GapCollector belongs to one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "logrx/line.h"

namespace logrx {

struct GapGroup {
  std::string pattern;      // the message with numbers, hex, paths and quoted values masked
  std::size_t count = 0;
  std::string example;      // the first line seen
  std::string file;
  std::uint64_t line = 0;
};

class GapCollector {
 public:
  static constexpr std::size_t kDefaultMaxGroups = 10000;
  explicit GapCollector(std::size_t max_groups = kDefaultMaxGroups);
  ~GapCollector();
  GapCollector(GapCollector&&) noexcept;
  GapCollector& operator=(GapCollector&&) noexcept;

  // Considers one unmatched line; keeps it only if it looks like a problem
  // (an error, warning, exception, failure, "not supported", out of memory, ...).
  void add(const std::string& file, const LineEvent& event);

  // Groups, most frequent first (then by pattern).
  std::vector<GapGroup> groups() const;

  // Lines that looked like problems but fell beyond max_groups.
  std::size_t overflow() const noexcept;

  // The masking used for grouping, exposed for tests.
  static std::string mask(std::string_view message);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace logrx
