// SPDX-License-Identifier: MIT
// The compiled state behind logrx::Rulebook, shared by the analyzer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <re2/filtered_re2.h>
#include <re2/re2.h>
#include <re2/set.h>
#include <string>
#include <string_view>
#include <vector>

#include "logrx/rulebook.h"
#include "match/literal_scan.h"
#include "rules/expression.h"

namespace logrx {

// The phase of a run that serves requests: the only one the light path runs in.
inline constexpr std::size_t kServingPhase = 5;
static_assert(std::string_view(kPhases[kServingPhase]) == "serving");

struct CompiledRemediation {
  std::optional<detail::Expression> value;
  std::optional<detail::Expression> when;
};

// A rule's own regex (for its captures), compiled on its first candidate
// line: most rules never match in a given stream, and compiling them all
// would double the rulebook's load time. Thread-safe.
class LazyRegex {
 public:
  explicit LazyRegex(std::string pattern) : pattern_(std::move(pattern)) {}
  const re2::RE2& get() const;

 private:
  std::string pattern_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<re2::RE2> regex_;
};

// The capture groups of an RE2 pattern by index (0, the whole match, first):
// the name of each, "" for unnamed ones, read from the pattern's text so the
// rulebook can be checked without compiling every regex. Rulebook::lint
// compares it with RE2's own answer for every rule.
std::vector<std::string> capture_groups(std::string_view pattern);

// The alternatives of a pattern's top level ("a|b", or "(?:a|b)" when that
// group is the whole pattern), each with the flags the pattern starts with;
// empty when it has a single one. A text matches the pattern if and only if
// it matches one of them.
std::vector<std::string> split_alternatives(std::string_view pattern);

// Whether a pattern that matches no part of a block of lines matches none
// of their messages either: true unless it has anchors or word boundaries
// (whose meaning depends on the text around the message). A match in the
// block says nothing of which line, if any, it was on.
bool block_searchable(std::string_view pattern);

struct CompiledRule {
  std::unique_ptr<LazyRegex> regex;      // line rules only
  std::unique_ptr<re2::RE2> raised_in;   // structure rules that name the raising module
  std::vector<std::string> group_names;  // by group index (1-based); "" for unnamed groups
  bool any_server = false;
  std::vector<Dialect> dialects;         // for servers that have a line dialect
  std::optional<detail::Expression> when;
  std::optional<detail::Expression> demote_when;  // RuleSpec::demote_when
  std::vector<std::pair<std::string, detail::Expression>> facts;
  std::vector<CompiledRemediation> remediation;  // parallel to RuleSpec::remediation
  // Silent rules whose only effect is to move the run to a phase: once the
  // run is there, matching them again changes nothing.
  bool phase_only = false;
  bool block_searchable = false;  // see block_searchable()
  int retire_after = -1;  // index of the facts rule that retires this one in a launch
  std::size_t phase_index = 0;
};

struct Rulebook::Impl {
  std::vector<RuleSpec> rules;  // sorted by id
  std::vector<CompiledRule> compiled;
  // Every line rule's pattern in one automaton; compiled on first use (a
  // rulebook that is only listed or linted never needs it), once, thread-safely.
  // A rulebook too large for one automaton's memory budget is split into
  // shards, each holding a range of selector_rules.
  mutable std::unique_ptr<re2::RE2::Set> selector;  // built by compile_selector: then shards[0], or split
  struct Shard {
    std::unique_ptr<re2::RE2::Set> set;
    std::size_t first = 0;  // into selector_rules
  };
  mutable std::vector<Shard> shards;
  mutable std::once_flag selector_once;
  mutable bool selector_ok = false;
  bool compile_selector() const;
  // The prefilter of every line rule that can have an effect once a run is
  // serving (all but the markers of serving and earlier phases): RE2's
  // FilteredRE2 turns each pattern into a formula over required literals
  // ("atoms"), and the scanner finds the
  // atoms of a whole block of lines in one pass. When no rule's formula holds
  // for the block, no line inside it can match any of those rules.
  // Built on first use (a short log never needs it), once, thread-safely.
  // Each prefilter id's formula comes from the table the build precomputed
  // for the built-in patterns (match/prefilter_table.h), as conjunctions of
  // atoms; a pattern the table does not know (a user's rule) goes to a
  // FilteredRE2 of its own kind, built only for those.
  mutable std::once_flag prefilter_once;
  mutable std::vector<std::string> atoms;  // lowercase, LiteralScanner::kMinLength bytes or more
  mutable std::vector<int> always_potential;      // prefilter ids with no formula
  mutable std::vector<std::uint32_t> term_sizes;  // per term: atoms it needs
  mutable std::vector<int> term_ids;              // per term: its prefilter id
  mutable std::vector<std::uint32_t> atom_terms_first;  // atom -> atom_terms[first[a], first[a + 1])
  mutable std::vector<std::uint32_t> atom_terms;
  mutable std::unique_ptr<re2::FilteredRE2> fallback_prefilter;
  mutable std::vector<int> fallback_ids;    // FilteredRE2 regexp id -> prefilter id
  mutable std::vector<int> fallback_atoms;  // atom -> FilteredRE2 atom id, or -1
  mutable std::size_t tabled_patterns = 0;  // prefilter ids the table gave
  // Sets out to the prefilter ids whose formula holds when `present` (atom
  // indices, each once) are the atoms found, sorted.
  void potentials_of(const std::vector<int>& present, std::vector<int>& out) const;
  mutable bool prefilter_ok = false;
  // Rules the prefilter cannot rule out (potentials of every block), by index.
  mutable std::vector<std::size_t> unfiltered_rules;
  // Rules filtered only alternative by alternative (a second build), by index.
  mutable std::vector<std::size_t> split_rules;
  bool has_prefilter() const;
  // has_prefilter() has returned (true or false) on some thread: asking it
  // again costs nothing. Lets a stream use a prefilter built for it ahead
  // of time (Analyzer::feed_all) without waiting for one that is not.
  mutable std::atomic<bool> prefilter_built{false};
  std::vector<int> selector_rules;  // selector index -> rule index
  std::vector<int> fact_rules;      // trigger "facts"
  std::vector<int> run_end_rules;   // trigger "run_end"
  bool any_demote_when = false;     // some rule has demote_when
  std::vector<ServerFlags> flags;   // one list per server

  // Indices of line rules whose pattern matches `message`, sorted (= by rule
  // id). Returns false when RE2 could not decide (out of memory): never "no match".
  bool candidates(std::string_view message, std::vector<int>& out) const;
  // candidates() through the prefilter, when the build's table gave it (and
  // so costs next to nothing to set up): the line's atoms leave a few rules,
  // whose own regexes decide, and a selector of the rules the prefilter
  // leaves out decides for those. The selector of the whole rulebook (tens
  // of milliseconds to compile, more to warm up) is then never built.
  // False when this path is not available or could not decide.
  bool prefiltered_candidates(std::string_view message, std::vector<int>& out) const;
  // candidates() through the selector of the whole rulebook.
  bool selector_candidates(std::string_view message, std::vector<int>& out) const;
  // The build's table knows (nearly) every pattern: has_prefilter() costs a
  // millisecond or two, not the tens a FilteredRE2 of the whole rulebook does.
  bool prefilter_cheap() const;
  mutable std::once_flag cheap_once;
  mutable bool cheap = false;
  mutable std::once_flag line_prefilter_once;
  mutable bool line_prefilter_ok = false;
  mutable std::unique_ptr<const detail::LiteralScanner> line_scanner;
  mutable std::unique_ptr<re2::RE2::Set> unfiltered_selector;
  mutable std::vector<int> unfiltered_selector_rules;  // its index -> rule index

  bool applies_to(std::size_t index, Dialect dialect) const;

  // The atom scanner and scratch for block_may_match, one per analyzer: the
  // scanner anchors each atom on the grams rarest in that stream's own text
  // (sampled from the first block it filters), which keeps false hits to a
  // fraction of a percent of the positions it tests.
  struct PrefilterScratch {
    // Shared and never changed once built: a tuned scratch can be copied to
    // other threads (tuning builds a new scanner).
    std::shared_ptr<const detail::LiteralScanner> scanner;
    std::vector<int> scanned;  // scanner index -> atom index
    std::vector<int> assumed;  // atoms taken as present without scanning, sorted
    std::vector<std::uint32_t> attempts;  // per scanned atom, while tuning
    int rebuilds = 0;
    std::vector<int> atoms;
    std::vector<std::uint8_t> marks;
    std::vector<int> potentials;
  };
  // False only when no serving-time line rule can match any line of block.
  // `retired` (by rule index, may be empty) lists rules the stream no longer
  // matches in its current launch.
  bool block_may_match(std::string_view block, PrefilterScratch& scratch,
                       const std::vector<char>& retired) const;
  // The prefilter ids (see prefilter_rules) of the rules whose formula holds
  // for block, in scratch.potentials; requires has_prefilter(). Stateless but
  // for the scratch, so blocks can be filtered on several threads, one
  // scratch each.
  const std::vector<int>& block_potentials(std::string_view block, PrefilterScratch& scratch) const;
  // Whether any of `potentials` is a rule not `retired` (by rule index, may be empty).
  bool any_live(const std::vector<int>& potentials, const std::vector<char>& retired) const;
  mutable std::vector<int> prefilter_rules;  // prefilter id -> rule index
  static constexpr int kMaxScannerRebuilds = 32;
  void build_stream_scanner(std::string_view sample, PrefilterScratch& scratch) const;
  void tune_stream_scanner(std::string_view block, PrefilterScratch& scratch) const;

  // What candidates() returns for a line of a block the prefilter cleared,
  // while the run is serving (the light path's only phase) and silent rules
  // are not reported: only the rules the prefilter leaves out (structure and
  // lexical rules, phase markers of later phases) can match such a line, and
  // the selector of those few is far cheaper than the whole rulebook's on
  // the lines the light path still takes the full way. Falls back to
  // candidates() when that selector cannot be built.
  bool cleared_candidates(std::string_view message, std::vector<int>& out) const;
  mutable std::once_flag cleared_once;
  mutable std::unique_ptr<re2::RE2::Set> cleared_selector;
  mutable std::vector<int> cleared_rules;  // cleared_selector index -> rule index
  mutable bool cleared_ok = false;

  bool extract(std::size_t index, std::string_view message,
               std::map<std::string, std::string>& captures) const;

  const RuleSpec* engine_rule(std::string_view id) const;
};

struct RulebookAccess {
  static const Rulebook::Impl& impl(const Rulebook& book) { return *book.impl_; }
};

// Run variables every expression may read, besides captures and facts.
inline constexpr const char* kBuiltinVariables[] = {
    "phase", "run", "server", "value", "reached_ready", "errors", "lines", "truncated", "exited",
    "launched", "ended_in_traceback"};

}  // namespace logrx
