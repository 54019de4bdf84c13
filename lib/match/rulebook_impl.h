// SPDX-License-Identifier: MIT
// The compiled state behind logrx::Rulebook, shared by the analyzer.
#pragma once

#include <memory>
#include <optional>
#include <re2/re2.h>
#include <re2/set.h>
#include <string>
#include <vector>

#include "logrx/rulebook.h"
#include "rules/expression.h"

namespace logrx {

struct CompiledRemediation {
  std::optional<detail::Expression> value;
  std::optional<detail::Expression> when;
};

struct CompiledRule {
  std::unique_ptr<re2::RE2> regex;       // line rules only
  std::vector<std::string> group_names;  // by group index (1-based); "" for unnamed groups
  bool any_server = false;
  std::vector<Dialect> dialects;         // for servers that have a line dialect
  std::optional<detail::Expression> when;
  std::vector<std::pair<std::string, detail::Expression>> facts;
  std::vector<CompiledRemediation> remediation;  // parallel to RuleSpec::remediation
  // Silent rules whose only effect is to move the run to a phase: once the
  // run is there, matching them again changes nothing.
  bool phase_only = false;
  std::size_t phase_index = 0;
};

struct Rulebook::Impl {
  std::vector<RuleSpec> rules;  // sorted by id
  std::vector<CompiledRule> compiled;
  std::unique_ptr<re2::RE2::Set> selector;
  // Every line rule that can have an effect once a run is serving (all but
  // the phase markers), with ^ and $ anchors dropped so that it can be run
  // over a whole chunk of the stream: no match there means no match on any
  // line inside it.
  std::unique_ptr<re2::RE2::Set> chunk_selector;
  bool chunk_selector_ok = false;
  std::vector<int> selector_rules;  // selector index -> rule index
  std::vector<int> fact_rules;      // trigger "facts"
  std::vector<int> run_end_rules;   // trigger "run_end"
  std::vector<ServerFlags> flags;   // one list per server

  // Indices of line rules whose pattern matches `message`, sorted (= by rule
  // id). Returns false when RE2 could not decide (out of memory): never "no match".
  bool candidates(std::string_view message, std::vector<int>& out) const;

  bool applies_to(std::size_t index, Dialect dialect) const;

  bool extract(std::size_t index, std::string_view message,
               std::map<std::string, std::string>& captures) const;

  const RuleSpec* engine_rule(std::string_view id) const;
};

struct RulebookAccess {
  static const Rulebook::Impl& impl(const Rulebook& book) { return *book.impl_; }
};

// Run variables every expression may read, besides captures and facts.
inline constexpr const char* kBuiltinVariables[] = {
    "phase", "run", "server", "value", "reached_ready", "errors", "lines", "truncated"};

}  // namespace logrx
