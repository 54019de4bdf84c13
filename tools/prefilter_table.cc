// SPDX-License-Identifier: MIT
// Build tool: precomputes the block prefilter of the built-in rules, so that a
// scan does not compile every pattern again (RE2's FilteredRE2 builds a whole
// RE2 per pattern to find its literals: about 30 ms of each start-up).
//
//   prefilter_table OUTPUT.cc FILE...
//
// For every pattern of the rule files it asks FilteredRE2, with the options
// the library uses (match/prefilter_table.h), for the pattern's atoms and then
// probes which sets of atoms make the pattern a potential match: the minimal
// such sets are the pattern's formula as a disjunction of conjunctions, which
// the library evaluates without RE2. FilteredRE2's answer for a pattern alone
// is sound (its combined tree only prunes further), so the table never rules
// out a line a pattern matches. Patterns with too many atoms to probe, or
// whose formula has too many terms, are left out: the library gives those to
// FilteredRE2 at run time, as it does any pattern a user's rule brings.
#include <re2/filtered_re2.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "match/prefilter_options.h"
#include "rules/capture_names.h"

namespace {

using nlohmann::json;

struct Formula {
  bool unfiltered = false;
  std::vector<std::string> atoms;
  std::vector<std::vector<int>> terms;  // each a set of indices into atoms
};

bool potential(re2::FilteredRE2& filter, const std::vector<int>& present) {
  std::vector<int> out;
  filter.AllPotentials(present, &out);
  return !out.empty();
}

// The pattern's formula; false when it cannot be tabled (the library then
// asks FilteredRE2 at run time).
bool probe(const std::string& pattern, Formula& formula) {
  re2::FilteredRE2 filter(static_cast<int>(logrx::detail::kPrefilterMinAtomLength));
  int id = 0;
  if (filter.Add(pattern, logrx::detail::prefilter_regex_options(), &id) != re2::RE2::NoError)
    return false;
  std::vector<std::string> atoms;
  filter.Compile(&atoms);
  if (potential(filter, {})) {
    formula.unfiltered = true;
    return true;
  }
  const std::size_t n = atoms.size();
  // Atom indices are written as bytes.
  if (n == 0 || n > 255) return false;
  formula.atoms = atoms;
  // Atoms that make the pattern a potential alone (an alternation's) are
  // terms of their own, and no other term needs them: a set holding one is
  // true. The other terms are sets of the remaining atoms, probed subset by
  // subset, by growing size (a set holding a smaller true set is not minimal
  // and is not asked about). Exact, for any pattern whose remaining atoms
  // are few enough to probe.
  std::vector<int> rest;
  for (std::size_t i = 0; i < n; ++i) {
    if (potential(filter, {static_cast<int>(i)})) {
      formula.terms.push_back({static_cast<int>(i)});
    } else {
      rest.push_back(static_cast<int>(i));
    }
  }
  if (rest.size() > logrx::detail::kPrefilterMaxProbedAtoms) return false;
  std::vector<std::uint32_t> masks;
  for (std::uint32_t mask = 1; mask < (std::uint32_t{1} << rest.size()); ++mask) masks.push_back(mask);
  std::stable_sort(masks.begin(), masks.end(), [](std::uint32_t a, std::uint32_t b) {
    return __builtin_popcount(a) < __builtin_popcount(b);
  });
  std::vector<std::uint32_t> minimal;
  for (std::uint32_t mask : masks) {
    if (__builtin_popcount(mask) < 2) continue;  // single atoms: asked above
    if (std::any_of(minimal.begin(), minimal.end(), [mask](std::uint32_t m) { return (mask & m) == m; }))
      continue;
    std::vector<int> present;
    for (std::size_t i = 0; i < rest.size(); ++i)
      if ((mask >> i) & 1u) present.push_back(rest[i]);
    if (!potential(filter, present)) continue;
    minimal.push_back(mask);
    formula.terms.push_back(std::move(present));
    if (formula.terms.size() > logrx::detail::kPrefilterMaxTerms) return false;
  }
  // FilteredRE2's formulas are monotone: all atoms present make a potential.
  if (formula.terms.empty()) return false;
  return true;
}

// Every pattern of a rule file: line rules' patterns (a file's other
// patterns are harmless extras in the table, looked up by their text).
void collect_patterns(const json& document, std::set<std::string>& patterns) {
  auto rules = document.find("rules");
  if (rules == document.end() || !rules->is_array()) return;
  for (const json& rule : *rules) {
    if (!rule.is_object()) continue;
    auto pattern = rule.find("pattern");
    // As the library loads it (rules/capture_names.h): the table is keyed by that text.
    if (pattern != rule.end() && pattern->is_string())
      patterns.insert(logrx::detail::rename_duplicate_captures(pattern->get<std::string>()));
  }
}

// Octal escapes for everything but letters and digits: no escape can run
// into the character after it, whatever the bytes are.
void write_literal(std::ostream& out, const std::string& text) {
  out << '"';
  std::size_t column = 0;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ') {
      out << static_cast<char>(c);
      ++column;
    } else {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\%03o", c);
      out << buffer;
      column += 4;
    }
    if (column >= 96) {
      out << "\"\n    \"";
      column = 0;
    }
  }
  out << '"';
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: prefilter_table OUTPUT.cc FILE...\n";
    return 2;
  }
  std::set<std::string> patterns;
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::cerr << "prefilter_table: cannot read " << argv[i] << "\n";
      return 1;
    }
    // A file that does not parse is the rulebook's loader's to report.
    json document = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
    if (document.is_discarded()) continue;
    collect_patterns(document, patterns);
  }

  std::ostringstream out;
  out << "// Generated by tools/prefilter_table.cc from the rule files; do not edit.\n"
         "#include \"match/prefilter_table.h\"\n\n"
         "namespace logrx::detail {\n\n";
  std::vector<std::pair<std::string, Formula>> tabled;
  std::size_t left_out = 0;
  for (const std::string& pattern : patterns) {
    Formula formula;
    if (probe(pattern, formula)) {
      tabled.emplace_back(pattern, std::move(formula));
    } else {
      ++left_out;
      if (std::getenv("LOGRX_PREFILTER_TABLE_VERBOSE") != nullptr)
        std::cerr << "prefilter_table: left to FilteredRE2: " << pattern << "\n";
    }
  }
  out << "const PrecomputedPrefilter kPrecomputedPrefilters[] = {\n";
  std::size_t terms_words = 0;
  std::size_t atoms_total = 0;
  for (const auto& [pattern, formula] : tabled) {
    std::size_t words = 0;
    for (const auto& term : formula.terms) words += 1 + term.size();
    out << "  {";
    write_literal(out, pattern);
    out << ", " << pattern.size() << ", " << (formula.unfiltered ? "true" : "false") << ", "
        << atoms_total << ", " << formula.atoms.size() << ", " << terms_words << ", "
        << formula.terms.size() << "},\n";
    atoms_total += formula.atoms.size();
    terms_words += words;
  }
  if (tabled.empty()) out << "  {\"\", 0, true, 0, 0, 0, 0},\n";
  out << "};\nconst std::size_t kPrecomputedPrefilterCount = " << tabled.size() << ";\n\n";
  out << "const PrecomputedAtom kPrecomputedAtoms[] = {\n";
  for (const auto& [pattern, formula] : tabled) {
    (void)pattern;
    for (const std::string& atom : formula.atoms) {
      out << "  {";
      write_literal(out, atom);
      out << ", " << atom.size() << "},\n";
    }
  }
  if (atoms_total == 0) out << "  {\"\", 0},\n";
  out << "};\n\n";
  // Each term: its size, then its atoms' indices among the pattern's atoms.
  out << "const std::uint8_t kPrecomputedTerms[] = {\n";
  std::size_t column = 0;
  for (const auto& [pattern, formula] : tabled) {
    (void)pattern;
    for (const auto& term : formula.terms) {
      out << term.size() << ",";
      for (int atom : term) out << atom << ",";
      column += 1 + term.size();
      if (column > 24) {
        out << "\n";
        column = 0;
      }
    }
  }
  if (terms_words == 0) out << "0";
  out << "\n};\n\n}  // namespace logrx::detail\n";

  // Rewritten only when different: an unchanged table does not rebuild the library.
  std::string generated = out.str();
  {
    std::ifstream existing(argv[1], std::ios::binary);
    std::string old((std::istreambuf_iterator<char>(existing)), std::istreambuf_iterator<char>());
    if (old == generated) return 0;
  }
  std::ofstream file(argv[1], std::ios::binary | std::ios::trunc);
  file << generated;
  if (!file.good()) {
    std::cerr << "prefilter_table: cannot write " << argv[1] << "\n";
    return 1;
  }
  std::cerr << "prefilter_table: " << tabled.size() << " patterns tabled, " << left_out
            << " left to FilteredRE2\n";
  return 0;
}
