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

// One remediation item as written in a rule. `value` may refer to captures
// and facts as {name} and embed expressions as {= expr}; `expr` computes the
// value instead (see docs/rules.md for the expression language).
struct RemediationSpec {
  // Container: an option of the container the server runs in (docker run
  // --shm-size, --ipc); like Param, never applied to the server's command line.
  enum class Kind { Flag, Env, Param, Container };
  Kind kind = Kind::Flag;
  std::string name;          // "--mem-fraction-static" or "SGLANG_ENABLE_SPEC_V2"
  std::optional<std::string> value;
  std::string expr;          // computed value; "" when none
  std::string when;          // condition; "" means always
  std::string why;           // template; {value} is the item's value
  bool alternative = false;  // part of an alternative fix, not the primary one
  // Advice for a person, never an argument: a value-taking flag whose value
  // the log cannot give ("set --max-running-requests explicitly"). `why` says
  // what to choose. `rules lint` rejects a value-taking flag with neither a
  // value nor this mark.
  bool advice = false;
};

struct RuleExample {
  std::string line;                             // a log line (for "line" rules)
  std::vector<std::string> log;                 // a short log (any rule kind)
  std::map<std::string, std::string> captures;  // expected captures (line match examples)
  bool check_captures = false;                  // "captures" was given: compare exactly
  // Expected remediation values by flag or env name ("" for an item without a
  // value); match examples only. Every computed item must be pinned by one.
  std::map<std::string, std::string> remediation;
};

// When a rule is evaluated.
enum class Trigger {
  Line,    // on every line its pattern matches
  Facts,   // when the run's facts make its condition true (once per run)
  RunEnd,  // once at the end of every run
  Engine,  // emitted by the analyzer itself (stale output); no pattern
};

// A rule as read from rules/, validated.
struct RuleSpec {
  std::string id;
  std::string title;
  Category category = Category::Other;
  Severity severity = Severity::Warning;
  std::vector<std::string> servers;  // "sglang", "vllm", ..., or "any"
  Trigger trigger = Trigger::Line;
  std::string pattern;               // RE2 syntax, named captures (?P<name>...)
  std::string when;                  // condition over captures, facts and run state
  std::vector<std::pair<std::string, std::string>> facts;  // fact name -> expression
  std::string config_dump;           // capture holding a config dump to read into facts
  std::vector<std::string> config_keys;  // dump keys other rules may rely on
  std::string sets_phase;            // phase the run enters on this line
  bool starts_run = false;           // a launch banner
  bool silent = false;               // records facts/phase only, never a finding
  bool wrapper = false;              // a consequence; the cause is logged elsewhere
  Tier tier = Tier::Rule;
  std::string raised_in;             // structure rules: RE2 over the innermost traceback frames' files
  int priority = 0;                  // among structure or lexical rules of one event, the higher wins
  // Also prescribe what the message itself names: known flags and variables
  // (with values where it states a comparison), the nearest known flag for
  // one the server does not have. Structure and lexical findings always do.
  bool hints = false;
  // Rules this one makes redundant: when both fire on one line, only this
  // one reports (a server's own reading of a generic PyTorch message).
  std::vector<std::string> supersedes;
  // A facts rule after which this one has nothing left to say in the launch
  // (a statistic that fed it): once that rule fired, this one is skipped,
  // which keeps busy serving traffic off the full matching path.
  std::string retire_after;
  // A condition on the run's facts, checked when the run ends: where it
  // holds, this rule's findings of the run are demoted to info (evidence
  // found later in the log explains them away: "no usable GPU found" before
  // the CUDA device is listed). A finding callback has already reported them.
  std::string demote_when;
  std::string explanation;
  std::vector<RemediationSpec> remediation;
  std::vector<std::string> references;
  std::vector<RuleExample> must_match;
  std::vector<RuleExample> must_not_match;
  std::string file;          // where the rule was loaded from, "" when built in code
  std::string json_pointer;  // "/rules/3"
  int line = 0;              // position of the rule's object in that file
  int column = 0;
  // Positions of the rule's fields, keyed by pointer relative to the rule
  // ("/pattern", "/remediation/0/value"), to place compile errors. Optional:
  // when a field is missing here, compile errors read its position from
  // `file` (the loader leaves this empty to keep loading fast).
  std::map<std::string, std::pair<int, int>> field_positions;
};

// Phases of a run, in order.
inline constexpr const char* kPhases[] = {"launching", "loading_weights",
                                          "allocating_memory_pool", "capturing_cuda_graphs",
                                          "ready", "serving", "exited"};

// What a flag takes on the command line, from a flag file's "arguments"
// object (`"--mem-fraction-static": {"type": "float", "gt": 0, "lt": 1}`).
// A flag the file does not describe is the conservative default: it takes
// one value of any form.
struct FlagSpec {
  enum class Arity { Switch, Value, Repeatable };
  enum class Type { Any, Int, Float, String, Enum, List, Bool };
  Arity arity = Arity::Value;
  Type type = Type::Any;
  std::optional<double> min, max;  // inclusive bounds
  std::optional<double> gt, lt;    // exclusive bounds
  std::optional<double> multiple_of;
  std::vector<std::string> choices;  // Enum (and Bool: "true", "false")
  bool nargs = false;                // List: one argv word per element ("--cuda-graph-bs 1 2 4")
  bool described = false;            // false: the conservative default
};

std::string_view to_string(FlagSpec::Arity arity) noexcept;
std::string_view to_string(FlagSpec::Type type) noexcept;

// The flags and environment variables a server accepts, read from a flag
// file (`{"server": "sglang", "flags": [...], "env": [...], "arguments": {...}}`).
// Remediation may only name these.
struct ServerFlags {
  std::string server;  // "sglang", "vllm", ... or "any" for server-independent variables
  std::vector<std::string> flags;
  std::vector<std::string> env;
  std::vector<std::string> params;  // model/request parameters (Ollama's num_ctx, num_gpu)
  std::map<std::string, FlagSpec> arguments;  // arity, type and range by flag
  std::string file;
};

// A prescribed value checked against a flag's spec.
struct ArgumentCheck {
  bool applicable = false;          // can go on a command line as it is (or as `value` says)
  std::optional<std::string> value; // the value to apply: clamped or rounded when `note` says so
  std::string note;                 // why it was changed or refused; "" when taken as it is
};

// Checks a flag's value (nullopt: the flag alone) against its spec: a switch
// takes no value; a value flag needs one of its type, inside its range (an
// inclusive bound clamps, an exclusive bound or a wrong type refuses), a
// multiple it requires (rounded down).
ArgumentCheck check_argument(const FlagSpec& spec, std::string_view flag,
                             const std::optional<std::string>& value);

// A directory (searched recursively for *.json) or a single .json file; or
// the rulebook compiled into the library (`builtin`), whose files are named
// "builtin:rules/<path in the source tree>".
struct RuleSource {
  std::string path;
  bool builtin = false;
};

// A rule pattern rewritten to find the same message inside a whole line, for
// `logrx rules patterns` (rg -f, grep -P -f): the start anchor is dropped (rules
// match the message after the line's header), named captures become plain
// groups (tools such as rg -f join all patterns into one, where names would
// repeat) and a leading (?i) is scoped to the pattern.
std::string line_anywhere_pattern(std::string_view pattern);

// The built-in rulebook as files: $LOGRX_BUILTIN_RULES when set, else the
// installed copy found relative to the code itself: <libdir>/../share/logrx/rules
// next to liblogrx.so, or <bindir>/../share/logrx/rules next to a program
// linking the static library (install and build trees share that layout).
// std::nullopt when there is none: the compiled-in copy is then the built-in
// rulebook.
std::optional<std::string> builtin_rules_directory();

// The source to load the built-in rulebook from: builtin_rules_directory()
// when it exists (an installed copy can be updated without rebuilding), else
// the copy compiled into the library, which is always there.
RuleSource builtin_rule_source();

class Rulebook {
 public:
  // Loads every source in order. Inside one source rule ids must be unique; a
  // rule from a later source replaces the rule with the same id from an
  // earlier one (user rulebooks override the built-in one). Returns
  // std::nullopt and fills `errors` with every problem found when anything is
  // wrong: no rule is ever dropped silently.
  static std::optional<Rulebook> load(const std::vector<RuleSource>& sources, Diagnostics& errors);

  // Compiles already-parsed rules (used by tests and embedders). With flag
  // lists, every remediation item must name a flag or variable its servers know.
  static std::optional<Rulebook> compile(std::vector<RuleSpec> rules, Diagnostics& errors);
  static std::optional<Rulebook> compile(std::vector<RuleSpec> rules,
                                         std::vector<ServerFlags> flags, Diagnostics& errors);

  // Checks a rulebook like load(), plus what only rule authors need: every
  // rule has at least one example that must match and one that must not.
  // Returns every problem found; empty means the rulebook is clean.
  static Diagnostics lint(const std::vector<RuleSource>& sources);

  // The flag lists loaded with the rules.
  const std::vector<ServerFlags>& server_flags() const noexcept;

  // True when `server`'s flag list (or the server-independent list, for
  // variables) names `name`. Flags start with "-", variables do not.
  bool knows(std::string_view server, std::string_view name) const noexcept;

  // What `flag` takes for `server` (for "" or "unknown": the first server
  // that describes it); the conservative default when no flag file says.
  FlagSpec flag_spec(std::string_view server, std::string_view flag) const;

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
