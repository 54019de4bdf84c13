// SPDX-License-Identifier: MIT
// The compiled state behind logrx::Rulebook, shared by the analyzer.
#pragma once

#include <memory>
#include <re2/re2.h>
#include <re2/set.h>
#include <string>
#include <vector>

#include "logrx/rulebook.h"

namespace logrx {

struct CompiledRule {
  std::unique_ptr<re2::RE2> regex;
  std::vector<std::string> group_names;  // by group index (1-based); "" for unnamed groups
  bool any_server = false;
  std::vector<Dialect> dialects;         // for servers that have a line dialect
};

struct Rulebook::Impl {
  std::vector<RuleSpec> rules;  // sorted by id
  std::vector<CompiledRule> compiled;
  std::unique_ptr<re2::RE2::Set> selector;  // index i of the set is rules[i]

  // Indices of rules whose pattern matches `message`, sorted (= by rule id).
  // Returns false when RE2 could not decide (out of memory): never "no match".
  bool candidates(std::string_view message, std::vector<int>& out) const;

  bool applies_to(std::size_t index, Dialect dialect) const;

  bool extract(std::size_t index, std::string_view message,
               std::map<std::string, std::string>& captures) const;
};

struct RulebookAccess {
  static const Rulebook::Impl& impl(const Rulebook& book) { return *book.impl_; }
};

}  // namespace logrx
