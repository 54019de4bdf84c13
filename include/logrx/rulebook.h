// SPDX-License-Identifier: MIT
// The rulebook: rules loaded from JSON files and compiled once.
//
//   logrx::Diagnostics errors;
//   auto book = logrx::Rulebook::load({{"/usr/share/logrx/rules"}, {"./my-rules"}}, errors);
//   if (!book) { for (auto& e : errors) std::cerr << logrx::format_diagnostic(e) << "\n"; }
//
// A Rulebook is immutable after load and safe for concurrent use by multiple
// threads. Copies are cheap and share the compiled state.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "logrx/diagnostic.h"
#include "logrx/types.h"

namespace logrx {

// One remediation item as written in a rule. `value` may refer to captures as
// {name}; it is expanded when the rule fires.
struct RemediationSpec {
  enum class Kind { Flag, Env };
  Kind kind = Kind::Flag;
  std::string name;          // "--mem-fraction-static" or "SGLANG_ENABLE_SPEC_V2"
  std::optional<std::string> value;
  std::string why;           // may refer to captures as {name}
  bool alternative = false;  // part of an alternative fix, not the primary one
};

struct RuleExample {
  std::string line;                           // a full log line, header included or not
  std::map<std::string, std::string> captures;  // expected captures (match examples only)
};

// A rule as read from rules/, validated.
struct RuleSpec {
  std::string id;
  std::string title;
  Category category = Category::Other;
  Severity severity = Severity::Warning;
  std::vector<std::string> servers;  // "sglang", "vllm", ..., or "any"
  std::string pattern;               // RE2 syntax, named captures (?P<name>...)
  std::string explanation;
  std::vector<RemediationSpec> remediation;
  std::vector<std::string> references;
  std::vector<RuleExample> must_match;
  std::vector<std::string> must_not_match;
  std::string file;          // where the rule was loaded from, "" when built in code
  std::string json_pointer;  // "/rules/3"
  int line = 0;              // position of the rule's object in that file
  int column = 0;
  // Positions of the rule's fields, keyed by pointer relative to the rule
  // ("/pattern", "/remediation/0/value"); used to place compile errors.
  std::map<std::string, std::pair<int, int>> field_positions;
};

// A directory (searched recursively for *.json) or a single .json file.
struct RuleSource {
  std::string path;
};

class Rulebook {
 public:
  // Loads every source in order. Inside one source rule ids must be unique; a
  // rule from a later source replaces the rule with the same id from an
  // earlier one (user rulebooks override the built-in one). Returns
  // std::nullopt and fills `errors` with every problem found when anything is
  // wrong: no rule is ever dropped silently.
  static std::optional<Rulebook> load(const std::vector<RuleSource>& sources, Diagnostics& errors);

  // Compiles already-parsed rules (used by tests and embedders).
  static std::optional<Rulebook> compile(std::vector<RuleSpec> rules, Diagnostics& errors);

  // Rules ordered by id.
  const std::vector<RuleSpec>& rules() const noexcept;
  std::size_t size() const noexcept;
  const RuleSpec* find(std::string_view id) const noexcept;

  // Runs the rule's own pattern on a message. Returns false when it does not
  // match; on a match fills `captures` with the named groups that took part.
  bool match_rule(std::size_t index, std::string_view message,
                  std::map<std::string, std::string>& captures) const;

  struct Impl;

 private:
  explicit Rulebook(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
  friend class Analyzer;
  friend struct RulebookAccess;
};

// The outcome of running every rule's examples.
struct ExampleFailure {
  std::string rule_id;
  std::string file;
  std::string line;    // the example line
  std::string reason;  // what differed
};

struct ExampleReport {
  std::size_t rules = 0;
  std::size_t examples = 0;
  std::vector<ExampleFailure> failures;
};

// Checks every must-match example (it matches through the full pipeline, the
// rule is selected, the captures are exactly the expected ones) and every
// must-not-match example, and that each rule has at least one of each.
ExampleReport test_examples(const Rulebook& book);

}  // namespace logrx
