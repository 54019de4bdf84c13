// SPDX-License-Identifier: MIT
// What the block prefilter asks of RE2, shared by the library and the build
// tool that precomputes the built-in rules' prefilter (tools/prefilter_table.cc):
// a table built with other options would describe other formulas.
#pragma once

#include <re2/re2.h>

#include <cstddef>
#include <cstdint>

namespace logrx::detail {

// The length FilteredRE2 atoms are asked to have (LiteralScanner::kMinLength).
inline constexpr std::size_t kPrefilterMinAtomLength = 6;
// A pattern is tabled when its formula can be probed subset by subset.
inline constexpr std::size_t kPrefilterMaxProbedAtoms = 14;
inline constexpr std::size_t kPrefilterMaxTerms = 255;

// Per-pattern budget; the default (8 MiB) also bounds the DFA cache. A
// pattern that needs more is rejected at load time, not at match time.
inline constexpr std::int64_t kRuleMaxMem = 8 << 20;

inline re2::RE2::Options rule_regex_options(std::int64_t max_mem) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(max_mem);
  options.set_encoding(re2::RE2::Options::EncodingUTF8);
  return options;
}

inline re2::RE2::Options prefilter_regex_options() { return rule_regex_options(kRuleMaxMem); }

}  // namespace logrx::detail
