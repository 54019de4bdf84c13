// SPDX-License-Identifier: MIT
// The built-in rules' block prefilter, precomputed at build time by
// tools/prefilter_table.cc: for each pattern, its atoms and the minimal sets
// of them that make it a potential match (FilteredRE2's formula, unfolded).
#pragma once

#include <cstddef>
#include <cstdint>

namespace logrx::detail {

struct PrecomputedPrefilter {
  const char* pattern;
  std::size_t pattern_size;
  bool unfiltered;  // a potential of every text
  std::size_t first_atom;  // into kPrecomputedAtoms
  std::size_t atom_count;
  std::size_t first_term_byte;  // into kPrecomputedTerms
  std::size_t term_count;  // each: its size, then atom indices within the pattern's atoms
};

struct PrecomputedAtom {
  const char* text;
  std::size_t size;
};

extern const PrecomputedPrefilter kPrecomputedPrefilters[];
extern const std::size_t kPrecomputedPrefilterCount;
extern const PrecomputedAtom kPrecomputedAtoms[];
extern const std::uint8_t kPrecomputedTerms[];

}  // namespace logrx::detail
