// SPDX-License-Identifier: MIT
#include "logrx/rulebook.h"

#include <algorithm>
#include <exception>
#include <map>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "match/prefilter_options.h"
#include "match/prefilter_table.h"
#include "match/rulebook_impl.h"
#include "match/template.h"
#include "rules/capture_names.h"
#include "rules/rule_loader.h"

namespace logrx {
namespace {

using detail::kRuleMaxMem;
constexpr int64_t kSetMaxMem = 64 << 20;

re2::RE2::Options regex_options(int64_t max_mem) { return detail::rule_regex_options(max_mem); }

// The precomputed formulas by pattern text.
const detail::PrecomputedPrefilter* precomputed_prefilter(std::string_view pattern) {
  static const auto* const table = [] {
    auto* map = new std::unordered_map<std::string_view, const detail::PrecomputedPrefilter*>();
    map->reserve(detail::kPrecomputedPrefilterCount);
    for (std::size_t i = 0; i < detail::kPrecomputedPrefilterCount; ++i) {
      const detail::PrecomputedPrefilter& entry = detail::kPrecomputedPrefilters[i];
      map->emplace(std::string_view(entry.pattern, entry.pattern_size), &entry);
    }
    return map;
  }();
  auto it = table->find(pattern);
  return it == table->end() ? nullptr : it->second;
}

// One attempt at the prefilter, with the rules in `split` added one
// alternative at a time. Returns the rules RE2 could not filter (none: built).
std::vector<std::size_t> try_prefilter(const Rulebook::Impl& impl, const std::vector<RuleSpec>& rules,
                                       const std::vector<char>& split, bool& failed) {
  impl.prefilter_rules.clear();
  impl.atoms.clear();
  impl.always_potential.clear();
  impl.term_sizes.clear();
  impl.term_ids.clear();
  impl.fallback_prefilter.reset();
  impl.fallback_ids.clear();
  impl.fallback_atoms.clear();
  impl.tabled_patterns = 0;
  failed = false;
  std::unordered_map<std::string, int> atom_index;
  auto atom_id = [&impl, &atom_index](std::string text) {
    auto [it, added] = atom_index.emplace(text, static_cast<int>(impl.atoms.size()));
    if (added) impl.atoms.push_back(std::move(text));
    return it->second;
  };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> atom_term_pairs;  // (atom, term)
  std::vector<std::pair<int, std::string>> untabled;  // (prefilter id, pattern)
  for (std::size_t i = 0; i < rules.size(); ++i) {
    // Structure and lexical rules speak only on error lines, which the
    // analyzer sends down the full path itself (see process_unmatched_block).
    // Phase markers match most lines of a busy log, and the light path runs
    // only once a run is serving: then the markers of serving and earlier
    // phases have nothing left to do, but those of later ones (a shutdown)
    // must still be found.
    if (rules[i].trigger != Trigger::Line || rules[i].tier != Tier::Rule ||
        (impl.compiled[i].phase_only && impl.compiled[i].phase_index <= kServingPhase))
      continue;
    std::vector<std::string> parts;
    if (split[i]) parts = split_alternatives(rules[i].pattern);
    if (parts.empty()) parts.push_back(rules[i].pattern);
    for (std::string& part : parts) {
      int id = static_cast<int>(impl.prefilter_rules.size());
      impl.prefilter_rules.push_back(static_cast<int>(i));
      const detail::PrecomputedPrefilter* table = precomputed_prefilter(part);
      if (table == nullptr) {
        untabled.emplace_back(id, std::move(part));
        continue;
      }
      ++impl.tabled_patterns;
      if (table->unfiltered) {
        impl.always_potential.push_back(id);
        continue;
      }
      std::vector<int> local;
      for (std::size_t a = 0; a < table->atom_count; ++a) {
        const detail::PrecomputedAtom& atom = detail::kPrecomputedAtoms[table->first_atom + a];
        local.push_back(atom_id(std::string(atom.text, atom.size)));
      }
      const std::uint8_t* term = detail::kPrecomputedTerms + table->first_term_byte;
      for (std::size_t t = 0; t < table->term_count; ++t) {
        auto term_id = static_cast<std::uint32_t>(impl.term_sizes.size());
        std::uint8_t size = *term++;
        impl.term_sizes.push_back(size);
        impl.term_ids.push_back(id);
        for (std::uint8_t k = 0; k < size; ++k)
          atom_term_pairs.emplace_back(static_cast<std::uint32_t>(local[*term++]), term_id);
      }
    }
  }
  std::vector<std::size_t> out;
  for (int id : impl.always_potential)
    out.push_back(static_cast<std::size_t>(impl.prefilter_rules[static_cast<std::size_t>(id)]));
  if (!untabled.empty()) {
    impl.fallback_prefilter = std::make_unique<re2::FilteredRE2>(
        static_cast<int>(detail::LiteralScanner::kMinLength));
    for (const auto& [id, pattern] : untabled) {
      int regexp = 0;
      if (impl.fallback_prefilter->Add(pattern, detail::prefilter_regex_options(), &regexp) !=
          re2::RE2::NoError) {
        failed = true;
        return {};
      }
      impl.fallback_ids.push_back(id);
    }
    std::vector<std::string> atoms;
    impl.fallback_prefilter->Compile(&atoms);
    std::vector<int> own(atoms.size());
    for (std::size_t a = 0; a < atoms.size(); ++a) own[a] = atom_id(atoms[a]);
    impl.fallback_atoms.assign(impl.atoms.size(), -1);
    for (std::size_t a = 0; a < atoms.size(); ++a)
      impl.fallback_atoms[static_cast<std::size_t>(own[a])] = static_cast<int>(a);
    std::vector<int> none;
    std::vector<int> unfiltered;
    impl.fallback_prefilter->AllPotentials(none, &unfiltered);
    for (int regexp : unfiltered) {
      int id = impl.fallback_ids[static_cast<std::size_t>(regexp)];
      out.push_back(static_cast<std::size_t>(impl.prefilter_rules[static_cast<std::size_t>(id)]));
    }
  }
  // Terms by atom, for counting each term's atoms as they are found.
  std::sort(atom_term_pairs.begin(), atom_term_pairs.end());
  impl.atom_terms_first.assign(impl.atoms.size() + 1, 0);
  impl.atom_terms.clear();
  impl.atom_terms.reserve(atom_term_pairs.size());
  for (const auto& [atom, term] : atom_term_pairs) {
    ++impl.atom_terms_first[atom + 1];
    impl.atom_terms.push_back(term);
  }
  for (std::size_t a = 1; a < impl.atom_terms_first.size(); ++a)
    impl.atom_terms_first[a] += impl.atom_terms_first[a - 1];
  return out;
}

// The block prefilter covers every line rule but the phase markers. It is an
// optimisation only: when it cannot be built, blocks are simply always
// matched line by line. RE2 factors the common prefixes of a pattern's
// alternatives ("exit code", "exit status" into "exit" and the rest), which
// can leave no literal long enough where each alternative alone has one:
// such rules are filtered one alternative at a time. A rule with no literal
// of LiteralScanner::kMinLength bytes even so is a potential of every block
// (FilteredRE2 returns it always): its lines are checked one by one, at a
// cost lint warns of (rule.not-prefilterable).
void build_prefilter(const Rulebook::Impl& impl, const std::vector<RuleSpec>& rules) {
  std::vector<char> split(rules.size(), 0);
  bool failed = false;
  std::vector<std::size_t> unfiltered = try_prefilter(impl, rules, split, failed);
  if (failed) return;
  if (!unfiltered.empty()) {
    // A second build, as long as the first: lint reports these rules.
    for (std::size_t rule : unfiltered) split[rule] = 1;
    impl.split_rules = unfiltered;
    unfiltered = try_prefilter(impl, rules, split, failed);
    if (failed) return;
  }
  std::sort(unfiltered.begin(), unfiltered.end());
  unfiltered.erase(std::unique(unfiltered.begin(), unfiltered.end()), unfiltered.end());
  impl.unfiltered_rules = std::move(unfiltered);
  impl.prefilter_ok = detail::LiteralScanner::accepts(impl.atoms);
}

void add_error(Diagnostics& errors, const RuleSpec& rule, const std::string& code,
               const std::string& relative, const std::string& message) {
  int line = rule.line;
  int column = rule.column;
  if (auto it = rule.field_positions.find(relative); it != rule.field_positions.end()) {
    line = it->second.first;
    column = it->second.second;
  } else if (!rule.file.empty() && !rule.json_pointer.empty()) {
    if (auto at = detail::position_in_file(rule.file, rule.json_pointer + relative)) {
      line = at->first;
      column = at->second;
    }
  }
  errors.push_back(Diagnostic{code, message, rule.file, rule.id, line, column,
                              rule.json_pointer.empty() ? "" : rule.json_pointer + relative});
}

// The names a rule's expressions and templates may read: its own captures
// and every fact of the rulebook (shared, not copied per rule).
struct Known {
  const std::set<std::string>& facts;
  std::set<std::string> captures;
  std::size_t count(const std::string& name) const { return captures.count(name) + facts.count(name); }
};

bool known_variable(const std::string& name, const Known& known) {
  if (known.count(name) > 0) return true;
  for (const char* builtin : kBuiltinVariables)
    if (name == builtin) return true;
  return false;
}

std::optional<detail::Expression> check_expression(Diagnostics& errors, const RuleSpec& rule,
                                                   const std::string& source,
                                                   const std::string& relative,
                                                   const Known& known) {
  std::string error;
  auto expression = detail::Expression::parse(source, &error);
  if (!expression) {
    add_error(errors, rule, "rule.bad-expression", relative,
              "expression \"" + source + "\" does not parse: " + error);
    return std::nullopt;
  }
  for (const std::string& name : expression->variables()) {
    if (!known_variable(name, known))
      add_error(errors, rule, "rule.unknown-variable", relative,
                "expression refers to \"" + name +
                    "\", which is neither a capture of the pattern nor a fact any rule records");
  }
  return expression;
}

void check_template(Diagnostics& errors, const RuleSpec& rule, const std::string& text,
                    const std::string& relative, const Known& known) {
  auto refs = detail::template_references(text);
  if (!refs.error.empty()) {
    add_error(errors, rule, "rule.bad-template", relative, "bad template: " + refs.error);
    return;
  }
  for (const std::string& name : refs.names) {
    if (!known_variable(name, known))
      add_error(errors, rule, "rule.unknown-capture", relative,
                "refers to {" + name + "}, but the pattern has no capture (?P<" + name +
                    ">...) and no rule records a fact of that name");
  }
  for (const std::string& source : refs.expressions)
    check_expression(errors, rule, source, relative, known);
}

bool lists(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A rule may only prescribe what its servers accept: nothing in a rule can
// become an arbitrary argument of a relaunched server.
void check_known(Diagnostics& errors, const RuleSpec& rule, const RemediationSpec& item,
                 const std::string& where, const std::vector<ServerFlags>& flags) {
  if (item.kind == RemediationSpec::Kind::Container) {
    // The options of docker run / podman run (and their Kubernetes
    // equivalents) that a GPU server's container needs.
    static const std::vector<std::string> kContainerOptions{
        "--shm-size", "--ipc", "--gpus", "--runtime", "--ulimit", "--device", "--privileged",
        "--cap-add", "--security-opt", "--network", "--memory", "--pids-limit", "--cpus",
        "--add-host"};
    if (!lists(kContainerOptions, item.name))
      add_error(errors, rule, "rule.unknown-flag", where + "/container",
                "container option " + item.name + " is not one logrx knows (docker run)");
    return;
  }
  bool flag = item.kind == RemediationSpec::Kind::Flag;
  bool param = item.kind == RemediationSpec::Kind::Param;
  bool any_server = lists(rule.servers, "any");
  for (const ServerFlags& list : flags) {
    bool relevant = any_server || lists(rule.servers, list.server) || (!flag && list.server == "any");
    if (relevant && lists(flag ? list.flags : param ? list.params : list.env, item.name)) return;
  }
  std::string servers;
  for (const std::string& s : rule.servers) servers += (servers.empty() ? "" : ", ") + s;
  add_error(errors, rule, "rule.unknown-flag", where + (flag ? "/flag" : param ? "/param" : "/env"),
            std::string(flag ? "flag " : param ? "parameter " : "variable ") + item.name +
                " is not in the flag list of " + servers + " (rules/<server>/flags.json)");
}

}  // namespace

const std::vector<ServerFlags>& Rulebook::server_flags() const noexcept { return impl_->flags; }

bool Rulebook::knows(std::string_view server, std::string_view name) const noexcept {
  bool flag = !name.empty() && name[0] == '-';
  for (const ServerFlags& list : impl_->flags) {
    if (list.server != server && !(list.server == "any" && !flag)) continue;
    const auto& names = flag ? list.flags : list.env;
    if (std::find(names.begin(), names.end(), name) != names.end()) return true;
    if (!flag && std::find(list.params.begin(), list.params.end(), name) != list.params.end())
      return true;
  }
  return false;
}

FlagSpec Rulebook::flag_spec(std::string_view server, std::string_view flag) const {
  bool any = server.empty() || server == "unknown" || server == "any";
  for (const ServerFlags& list : impl_->flags) {
    if (!any && list.server != server) continue;
    auto it = list.arguments.find(std::string(flag));
    if (it != list.arguments.end()) return it->second;
  }
  return FlagSpec{};
}

namespace {

// A value-taking flag a rule prescribes must be given a value (or be marked
// advice): a supervisor would otherwise append it bare and the server's
// argument parser would refuse the relaunch.
void lint_remediation(Diagnostics& problems, const Rulebook& book, const RuleSpec& rule) {
  for (std::size_t i = 0; i < rule.remediation.size(); ++i) {
    const RemediationSpec& item = rule.remediation[i];
    std::string where = "/remediation/" + std::to_string(i);
    if (item.kind != RemediationSpec::Kind::Flag) continue;
    if (item.advice) {
      if (item.why.empty())
        add_error(problems, rule, "rule.advice-without-why", where,
                  "advice for " + item.name + " says what to choose in \"why\"");
      continue;
    }
    std::vector<std::string> servers;
    for (const std::string& server : rule.servers) {
      if (server != "any") {
        // A rule of two servers may prescribe a flag only one of them has
        // (findings of the other never show it): checked where it is known.
        if (book.knows(server, item.name)) servers.push_back(server);
        continue;
      }
      for (const ServerFlags& list : book.server_flags())
        if (book.knows(list.server, item.name)) servers.push_back(list.server);
    }
    for (const std::string& server : servers) {
      FlagSpec spec = book.flag_spec(server, item.name);
      bool has_value = (item.value && !item.value->empty()) || !item.expr.empty();
      if (!has_value && spec.arity != FlagSpec::Arity::Switch) {
        add_error(problems, rule, "rule.value-missing", where,
                  item.name + " takes a value (" + server +
                      " flags.json) but the item gives no \"value\" or \"expr\": give one, or "
                      "mark it \"advice\": true with a \"why\" that says what to choose");
        break;
      }
      // A fixed value (no references) can be checked now.
      if (item.value && item.expr.empty() && item.value->find('{') == std::string::npos) {
        std::optional<std::string> value;
        if (!item.value->empty()) value = *item.value;
        ArgumentCheck check = check_argument(spec, item.name, value);
        if (!check.applicable || (check.value != value)) {
          add_error(problems, rule, "rule.bad-value", where + "/value",
                    item.name + " " + *item.value + " is not a valid argument for " + server +
                        (check.note.empty() ? std::string() : ": " + check.note) +
                        "; fix the value or mark the item \"advice\": true");
          break;
        }
      }
    }
  }
}

}  // namespace

Diagnostics Rulebook::lint(const std::vector<RuleSource>& sources) {
  Diagnostics problems;
  auto book = load(sources, problems);
  // Rules that failed to load cannot be checked further; the ones that did
  // are checked for examples even when others are broken.
  std::vector<RuleSpec> loaded;
  if (book) {
    loaded = book->rules();
  } else {
    Diagnostics ignored;
    for (const RuleSource& source : sources) {
      auto files = source.builtin ? detail::load_embedded_rules(ignored)
                                  : detail::load_rule_source(source.path, ignored);
      for (RuleSpec& rule : files.rules) loaded.push_back(std::move(rule));
    }
  }
  // What loading leaves to first use: compiling each rule's regex and the
  // selector, and what only a compiled regex tells.
  for (const RuleSpec& rule : loaded) {
    if (rule.trigger != Trigger::Line) continue;
    re2::RE2 regex(rule.pattern, regex_options(kRuleMaxMem));
    if (!regex.ok()) {
      bool reported = std::any_of(problems.begin(), problems.end(), [&](const Diagnostic& d) {
        return d.rule_id == rule.id && d.code == "rule.bad-pattern";
      });
      if (!reported)
        add_error(problems, rule, "rule.bad-pattern", "/pattern",
                  "pattern does not compile: " + regex.error());
      continue;
    }
    if (re2::RE2::PartialMatch("", regex))
      add_error(problems, rule, "rule.matches-everything", "/pattern",
                "pattern matches the empty string, so it would fire on every line");
    std::vector<std::string> groups(static_cast<std::size_t>(regex.NumberOfCapturingGroups()) + 1);
    for (const auto& [name, index] : regex.NamedCapturingGroups()) groups[static_cast<std::size_t>(index)] = name;
    if (groups != capture_groups(rule.pattern))
      add_error(problems, rule, "engine.capture-groups", "/pattern",
                "logrx reads this pattern's capture groups differently from RE2 (a logrx bug; "
                "please report it): its captures would not be filled");
  }
  if (book && !RulebookAccess::impl(*book).compile_selector())
    problems.push_back(Diagnostic{"engine.out-of-memory",
                                  "the rulebook's combined patterns exceed RE2's memory budget", "",
                                  "", 0, 0, ""});
  if (book && RulebookAccess::impl(*book).has_prefilter()) {
    const Rulebook::Impl& impl = RulebookAccess::impl(*book);
    for (std::size_t index : impl.split_rules) {
      if (std::find(impl.unfiltered_rules.begin(), impl.unfiltered_rules.end(), index) !=
          impl.unfiltered_rules.end())
        continue;
      add_error(problems, impl.rules[index], "rule.not-prefilterable", "/pattern",
                "RE2 factors the common start of neighbouring alternatives out of this pattern "
                "(\"exit code|exit status\" becomes \"exit\" and the rest), leaving no literal of " +
                    std::to_string(detail::LiteralScanner::kMinLength) +
                    " bytes or more: the block prefilter is built twice to filter it alternative by "
                    "alternative (order the alternatives so that no two neighbours start alike)");
    }
    for (std::size_t index : impl.unfiltered_rules)
      add_error(problems, impl.rules[index], "rule.not-prefilterable", "/pattern",
                "some match of this pattern contains no literal of " +
                    std::to_string(detail::LiteralScanner::kMinLength) +
                    " bytes or more, so the block prefilter cannot rule it out: every block of a "
                    "serving log would be checked against it line by line (give each alternative "
                    "a longer fixed text, e.g. with the byte before a short option)");
  }
  for (const RuleSpec& rule : loaded) {
    if (book) lint_remediation(problems, *book, rule);
    if (rule.trigger == Trigger::Engine) continue;
    if (rule.must_match.empty())
      add_error(problems, rule, "rule.no-examples", "/examples",
                "the rule has no example that must match");
    if (rule.must_not_match.empty())
      add_error(problems, rule, "rule.no-examples", "/examples",
                "the rule has no example that must not match");
  }
  std::stable_sort(problems.begin(), problems.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
  });
  return problems;
}

std::string line_anywhere_pattern(std::string_view source) {
  std::string pattern(source);
  bool insensitive = pattern.rfind("(?i)", 0) == 0;
  if (insensitive) pattern.erase(0, 4);
  if (!pattern.empty() && pattern[0] == '^') pattern.erase(0, 1);
  for (std::size_t at = pattern.find("(?P<"); at != std::string::npos; at = pattern.find("(?P<", at)) {
    std::size_t close = pattern.find('>', at);
    if (close == std::string::npos) break;
    pattern.replace(at, close - at + 1, "(?:");
  }
  return insensitive ? "(?i:" + pattern + ")" : pattern;
}

bool Rulebook::Impl::prefilter_cheap() const {
  std::call_once(cheap_once, [this] {
    // A rulebook of many patterns the table does not know (a user's own)
    // would build a large FilteredRE2.
    constexpr std::size_t kMostUntabled = 64;
    std::size_t untabled = 0;
    for (int rule : selector_rules)
      if (precomputed_prefilter(rules[static_cast<std::size_t>(rule)].pattern) == nullptr) ++untabled;
    cheap = untabled <= kMostUntabled;
  });
  return cheap;
}

bool Rulebook::Impl::prefiltered_candidates(std::string_view message, std::vector<int>& out) const {
  std::call_once(line_prefilter_once, [this] {
    // Otherwise the whole rulebook's selector is cheaper to build.
    if (!prefilter_cheap() || !has_prefilter()) return;
    std::vector<char> filtered(rules.size(), 0);
    for (int rule : prefilter_rules) filtered[static_cast<std::size_t>(rule)] = 1;
    auto set = std::make_unique<re2::RE2::Set>(regex_options(kSetMaxMem), re2::RE2::UNANCHORED);
    for (int rule : selector_rules) {
      if (filtered[static_cast<std::size_t>(rule)]) continue;
      if (set->Add(rules[static_cast<std::size_t>(rule)].pattern, nullptr) < 0) return;
      unfiltered_selector_rules.push_back(rule);
    }
    if (!unfiltered_selector_rules.empty() && !set->Compile()) return;
    unfiltered_selector = std::move(set);
    // Anchored on the static guess of which grams are rare: lines taking
    // this path are too few to sample.
    line_scanner = std::make_unique<const detail::LiteralScanner>(atoms);
    line_prefilter_ok = line_scanner->ok();
  });
  if (!line_prefilter_ok) return false;
  out.clear();
  thread_local std::vector<int> found;
  thread_local std::vector<std::uint8_t> marks;
  thread_local std::vector<int> potentials;
  line_scanner->find_all(message, found, marks);
  potentials_of(found, potentials);
  re2::StringPiece text(message.data(), message.size());
  for (int id : potentials) {
    int rule = prefilter_rules[static_cast<std::size_t>(id)];
    const CompiledRule& compiled_rule = compiled[static_cast<std::size_t>(rule)];
    if (!compiled_rule.regex || !compiled_rule.regex->get().ok()) return false;
    if (compiled_rule.regex->get().Match(text, 0, text.size(), re2::RE2::UNANCHORED, nullptr, 0))
      out.push_back(rule);
  }
  if (!unfiltered_selector_rules.empty()) {
    re2::RE2::Set::ErrorInfo info{};
    thread_local std::vector<int> matched;
    if (unfiltered_selector->Match(text, nullptr, &info)) {
      if (!unfiltered_selector->Match(text, &matched, &info)) return false;
      for (int index : matched) out.push_back(unfiltered_selector_rules[static_cast<std::size_t>(index)]);
    } else if (info.kind != re2::RE2::Set::kNoError) {
      return false;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return true;
}

bool Rulebook::Impl::candidates(std::string_view message, std::vector<int>& out) const {
  out.clear();
  if (selector_rules.empty()) return true;
  if (prefiltered_candidates(message, out)) return true;
  return selector_candidates(message, out);
}

bool Rulebook::Impl::selector_candidates(std::string_view message, std::vector<int>& out) const {
  out.clear();
  if (selector_rules.empty()) return true;
  if (!compile_selector()) return false;
  re2::RE2::Set::ErrorInfo info{};
  re2::StringPiece text(message.data(), message.size());
  thread_local std::vector<int> found;
  for (const Shard& shard : shards) {
    // Most lines match nothing: asking only whether anything matches stops
    // at the first match and allocates nothing; the list is built for the rest.
    if (!shard.set->Match(text, nullptr, &info)) {
      if (info.kind != re2::RE2::Set::kNoError) return false;
      continue;
    }
    if (!shard.set->Match(text, &found, &info)) {
      if (info.kind != re2::RE2::Set::kNoError) return false;
      continue;
    }
    for (int index : found) out.push_back(selector_rules[shard.first + static_cast<std::size_t>(index)]);
  }
  std::sort(out.begin(), out.end());
  return true;
}

bool Rulebook::Impl::cleared_candidates(std::string_view message, std::vector<int>& out) const {
  std::call_once(cleared_once, [this] {
    if (!has_prefilter()) return;
    std::vector<char> filtered(rules.size(), 0);
    for (int rule : prefilter_rules) filtered[static_cast<std::size_t>(rule)] = 1;
    auto set = std::make_unique<re2::RE2::Set>(regex_options(kSetMaxMem), re2::RE2::UNANCHORED);
    for (int rule : selector_rules) {
      auto index = static_cast<std::size_t>(rule);
      const CompiledRule& rule_compiled = compiled[index];
      // A phase marker of serving or earlier is skipped once serving.
      if (filtered[index] || (rule_compiled.phase_only && rule_compiled.phase_index <= kServingPhase))
        continue;
      if (set->Add(rules[index].pattern, nullptr) < 0) return;
      cleared_rules.push_back(rule);
    }
    if (!set->Compile()) return;
    cleared_selector = std::move(set);
    cleared_ok = true;
  });
  if (!cleared_ok) return candidates(message, out);
  out.clear();
  if (cleared_rules.empty()) return true;
  re2::RE2::Set::ErrorInfo info{};
  re2::StringPiece text(message.data(), message.size());
  thread_local std::vector<int> found;
  if (!cleared_selector->Match(text, nullptr, &info)) return info.kind == re2::RE2::Set::kNoError;
  if (!cleared_selector->Match(text, &found, &info)) return info.kind == re2::RE2::Set::kNoError;
  for (int index : found) out.push_back(cleared_rules[static_cast<std::size_t>(index)]);
  std::sort(out.begin(), out.end());
  return true;
}

const RuleSpec* Rulebook::Impl::engine_rule(std::string_view id) const {
  for (const RuleSpec& rule : rules)
    if (rule.trigger == Trigger::Engine && rule.id == id) return &rule;
  return nullptr;
}

bool Rulebook::Impl::compile_selector() const {
  std::call_once(selector_once, [this] {
    // A rulebook several times the built-in one's size would not fit one
    // automaton's budget: it goes straight to shards of a size that does,
    // rather than first failing to compile whole (most of the time it takes).
    constexpr std::size_t kShardRules = 1536;
    if (selector_rules.size() <= kShardRules) {
      selector = std::make_unique<re2::RE2::Set>(regex_options(kSetMaxMem), re2::RE2::UNANCHORED);
      for (int rule : selector_rules) selector->Add(rules[static_cast<std::size_t>(rule)].pattern, nullptr);
      if (selector->Compile()) {
        shards.push_back(Shard{std::move(selector), 0});
        selector_ok = true;
        return;
      }
    }
    // Over the memory budget: halves, until each part fits (a single
    // pattern that does not fit leaves the rulebook unusable; lint says so).
    selector.reset();
    selector_ok = true;
    std::vector<std::pair<std::size_t, std::size_t>> pending;
    for (std::size_t first = 0; first < selector_rules.size(); first += kShardRules)
      pending.emplace_back(first, std::min(selector_rules.size(), first + kShardRules));
    std::reverse(pending.begin(), pending.end());  // taken from the back: in order
    while (!pending.empty() && selector_ok) {
      auto [first, last] = pending.back();
      pending.pop_back();
      auto set = std::make_unique<re2::RE2::Set>(regex_options(kSetMaxMem), re2::RE2::UNANCHORED);
      for (std::size_t i = first; i < last; ++i)
        set->Add(rules[static_cast<std::size_t>(selector_rules[i])].pattern, nullptr);
      if (set->Compile()) {
        shards.push_back(Shard{std::move(set), first});
      } else if (last - first > 1) {
        std::size_t middle = first + (last - first) / 2;
        pending.emplace_back(middle, last);
        pending.emplace_back(first, middle);
      } else {
        selector_ok = false;
      }
    }
  });
  return selector_ok;
}

const re2::RE2& LazyRegex::get() const {
  std::call_once(once_, [this] { regex_ = std::make_unique<re2::RE2>(pattern_, regex_options(kRuleMaxMem)); });
  return *regex_;
}


std::vector<std::string> capture_groups(std::string_view pattern) {
  std::vector<std::string> groups{""};
  for (std::size_t i = 0; i < pattern.size();) {
    char c = pattern[i];
    if (c == '\\' || c == '[') {
      i = detail::skip_pattern_unit(pattern, i);
      continue;
    }
    std::size_t at = i++;
    if (c != '(') continue;
    if (at + 1 >= pattern.size() || pattern[at + 1] != '?') {
      groups.emplace_back();
      continue;
    }
    // (?P<name>...) and (?<name>...) capture; other (?...) forms do not.
    std::size_t name_at = std::string_view::npos;
    if (pattern.compare(at + 2, 2, "P<") == 0) name_at = at + 4;
    else if (at + 2 < pattern.size() && pattern[at + 2] == '<') name_at = at + 3;
    if (name_at == std::string_view::npos) continue;
    std::size_t close = pattern.find('>', name_at);
    if (close == std::string_view::npos) break;
    groups.emplace_back(pattern.substr(name_at, close - name_at));
    i = close + 1;
  }
  return groups;
}


bool block_searchable(std::string_view pattern) {
  for (std::size_t i = 0; i < pattern.size();) {
    char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      char next = pattern[i + 1];
      // Word boundaries and text anchors depend on what surrounds the message.
      if (next == 'b' || next == 'B' || next == 'A' || next == 'z') return false;
      i = detail::skip_pattern_unit(pattern, i);
      continue;
    }
    if (c == '[') {
      i = detail::skip_pattern_unit(pattern, i);
      continue;
    }
    if (c == '^' || c == '$') return false;
    ++i;
  }
  return true;
}

std::vector<std::string> split_alternatives(std::string_view pattern) {
  // Flags set for the whole pattern ("(?i)") go in front of each alternative.
  std::string_view flags;
  if (pattern.size() > 3 && pattern.compare(0, 2, "(?") == 0) {
    std::size_t close = pattern.find(')');
    std::string_view letters = close == std::string_view::npos ? std::string_view{} : pattern.substr(2, close - 2);
    if (!letters.empty() && letters.find_first_not_of("imsU-") == std::string_view::npos) {
      flags = pattern.substr(0, close + 1);
      pattern.remove_prefix(close + 1);
    }
  }
  // The alternatives at depth 0, and whether one non-capturing group spans it all.
  auto top_level = [](std::string_view text, std::vector<std::string_view>& parts) {
    parts.clear();
    int depth = 0;
    std::size_t from = 0;
    std::size_t first_close = std::string_view::npos;  // where depth first returns to 0
    for (std::size_t i = 0; i < text.size();) {
      char c = text[i];
      if (c == '\\' || c == '[') {
        i = detail::skip_pattern_unit(text, i);
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')' && --depth == 0 && first_close == std::string_view::npos) first_close = i;
      if (c == '|' && depth == 0) {
        parts.push_back(text.substr(from, i - from));
        from = i + 1;
      }
      ++i;
    }
    parts.push_back(text.substr(from));
    return first_close;
  };
  std::vector<std::string_view> parts;
  std::size_t close = top_level(pattern, parts);
  if (parts.size() == 1 && pattern.size() > 4 && pattern.compare(0, 3, "(?:") == 0 &&
      close == pattern.size() - 1) {
    top_level(pattern.substr(3, pattern.size() - 4), parts);
  }
  std::vector<std::string> out;
  if (parts.size() < 2) return out;
  for (std::string_view part : parts) out.push_back(std::string(flags) + std::string(part));
  return out;
}

bool Rulebook::Impl::has_prefilter() const {
  std::call_once(prefilter_once, [this] {
    build_prefilter(*this, rules);
    prefilter_built.store(true, std::memory_order_release);
  });
  return prefilter_ok;
}

bool Rulebook::Impl::block_may_match(std::string_view block, PrefilterScratch& scratch,
                                     const std::vector<char>& retired) const {
  if (!has_prefilter()) return true;
  return any_live(block_potentials(block, scratch), retired);
}

const std::vector<int>& Rulebook::Impl::block_potentials(std::string_view block,
                                                         PrefilterScratch& scratch) const {
  if (!scratch.scanner) build_stream_scanner(block, scratch);
  bool tune = scratch.rebuilds < kMaxScannerRebuilds;
  if (tune) {
    scratch.scanner->find_all(block, scratch.atoms, scratch.marks, scratch.attempts);
  } else {
    scratch.scanner->find_all(block, scratch.atoms, scratch.marks);
  }
  for (int& found : scratch.atoms) found = scratch.scanned[static_cast<std::size_t>(found)];
  scratch.atoms.insert(scratch.atoms.end(), scratch.assumed.begin(), scratch.assumed.end());
  potentials_of(scratch.atoms, scratch.potentials);
  if (tune) tune_stream_scanner(block, scratch);
  return scratch.potentials;
}

void Rulebook::Impl::potentials_of(const std::vector<int>& present, std::vector<int>& out) const {
  out.assign(always_potential.begin(), always_potential.end());
  // Hits per term, cleared after each call (one set per thread: the
  // rulebook is shared, the counts are not).
  thread_local std::vector<std::uint32_t> hits;
  thread_local std::vector<std::uint32_t> touched;
  if (hits.size() < term_sizes.size()) hits.resize(term_sizes.size(), 0);
  for (int atom : present) {
    auto a = static_cast<std::size_t>(atom);
    if (a + 1 >= atom_terms_first.size()) continue;
    for (std::uint32_t k = atom_terms_first[a]; k < atom_terms_first[a + 1]; ++k) {
      std::uint32_t term = atom_terms[k];
      if (hits[term]++ == 0) touched.push_back(term);
      if (hits[term] == term_sizes[term]) out.push_back(term_ids[term]);
    }
  }
  for (std::uint32_t term : touched) hits[term] = 0;
  touched.clear();
  if (fallback_prefilter) {
    thread_local std::vector<int> own;
    thread_local std::vector<int> found;
    own.clear();
    for (int atom : present) {
      auto a = static_cast<std::size_t>(atom);
      if (a < fallback_atoms.size() && fallback_atoms[a] >= 0) own.push_back(fallback_atoms[a]);
    }
    fallback_prefilter->AllPotentials(own, &found);
    for (int regexp : found) out.push_back(fallback_ids[static_cast<std::size_t>(regexp)]);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

bool Rulebook::Impl::any_live(const std::vector<int>& potentials,
                              const std::vector<char>& retired) const {
  if (retired.empty()) return !potentials.empty();
  return std::any_of(potentials.begin(), potentials.end(), [&](int id) {
    return !retired[static_cast<std::size_t>(prefilter_rules[static_cast<std::size_t>(id)])];
  });
}

// Atoms whose anchors keep passing the scanner's bit test (because they
// occur in the stream, or share grams with what does: " tokens" and every
// "token usage") cost verification work on every block. As long as no rule
// can pass on them, they are taken as present instead of searched for.
// Taking an atom as present can only add candidate rules (the prefilter
// formulas are monotone), never drop one: this changes speed, not results.
void Rulebook::Impl::tune_stream_scanner(std::string_view block, PrefilterScratch& scratch) const {
  constexpr std::uint32_t kCostly = 4;  // bit-test passes per block
  std::vector<std::pair<std::uint32_t, int>> costly;
  for (std::size_t i = 0; i < scratch.attempts.size(); ++i)
    if (scratch.attempts[i] >= kCostly)
      costly.emplace_back(scratch.attempts[i], scratch.scanned[i]);
  if (costly.empty()) return;
  std::sort(costly.rbegin(), costly.rend());
  bool changed = false;
  std::vector<int> trial;
  std::vector<int> potentials;
  for (const auto& [attempts, atom] : costly) {
    (void)attempts;
    trial = scratch.assumed;
    trial.push_back(atom);
    potentials_of(trial, potentials);
    if (!potentials.empty()) continue;
    scratch.assumed.insert(std::upper_bound(scratch.assumed.begin(), scratch.assumed.end(), atom),
                           atom);
    changed = true;
  }
  ++scratch.rebuilds;  // counted even when nothing could be assumed: tuning stops in time
  if (changed) build_stream_scanner(block, scratch);
}

// Anchors each atom still searched for on the grams rarest in the sample of
// the stream, so that healthy lines almost never pass the scanner's bit test.
void Rulebook::Impl::build_stream_scanner(std::string_view sample, PrefilterScratch& scratch) const {
  std::vector<std::string> scanned_atoms;
  scratch.scanned.clear();
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    if (std::binary_search(scratch.assumed.begin(), scratch.assumed.end(), static_cast<int>(i)))
      continue;
    scratch.scanned.push_back(static_cast<int>(i));
    scanned_atoms.push_back(atoms[i]);
  }
  std::vector<std::uint32_t> counts;
  detail::LiteralScanner::count_grams(sample, counts);
  scratch.scanner = std::make_shared<const detail::LiteralScanner>(std::move(scanned_atoms), &counts);
}

bool Rulebook::Impl::applies_to(std::size_t index, Dialect dialect) const {
  const CompiledRule& rule = compiled[index];
  if (rule.any_server || dialect == Dialect::Unknown) return true;
  return std::find(rule.dialects.begin(), rule.dialects.end(), dialect) != rule.dialects.end();
}

bool Rulebook::Impl::extract(std::size_t index, std::string_view message,
                             std::map<std::string, std::string>& captures) const {
  const CompiledRule& rule = compiled[index];
  if (!rule.regex) return false;
  const re2::RE2& regex = rule.regex->get();
  if (!regex.ok()) return false;
  // From RE2 itself (the text's reading agrees for every rule lint accepts).
  auto groups = static_cast<std::size_t>(regex.NumberOfCapturingGroups()) + 1;
  if (groups != rule.group_names.size()) return false;
  // Few rules have more than a handful of groups; the vector is only built
  // for lines that already passed the selector.
  std::vector<re2::StringPiece> pieces(groups);
  if (!regex.Match(re2::StringPiece(message.data(), message.size()), 0, message.size(),
                         re2::RE2::UNANCHORED, pieces.data(), static_cast<int>(groups)))
    return false;
  captures.clear();
  for (std::size_t i = 1; i < groups; ++i) {
    if (rule.group_names[i].empty() || pieces[i].data() == nullptr) continue;
    // One name used in several alternatives: the first group that took part.
    captures.emplace(std::string(detail::canonical_capture_name(rule.group_names[i])),
                     std::string(pieces[i].data(), pieces[i].size()));
  }
  return true;
}

Rulebook::Rulebook(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

const std::vector<RuleSpec>& Rulebook::rules() const noexcept { return impl_->rules; }

std::size_t Rulebook::size() const noexcept { return impl_->rules.size(); }

const RuleSpec* Rulebook::find(std::string_view id) const noexcept {
  const auto& rules = impl_->rules;
  auto it = std::lower_bound(rules.begin(), rules.end(), id,
                             [](const RuleSpec& rule, std::string_view key) { return rule.id < key; });
  return it != rules.end() && it->id == id ? &*it : nullptr;
}

bool Rulebook::match_rule(std::size_t index, std::string_view message,
                          std::map<std::string, std::string>& captures) const {
  if (index >= impl_->rules.size()) return false;
  return impl_->extract(index, message, captures);
}

std::optional<Rulebook> Rulebook::compile(std::vector<RuleSpec> rules, Diagnostics& errors) {
  return compile(std::move(rules), {}, errors);
}

std::optional<Rulebook> Rulebook::compile(std::vector<RuleSpec> rules,
                                          std::vector<ServerFlags> flags, Diagnostics& errors) {
  std::size_t errors_before = errors.size();
  std::stable_sort(rules.begin(), rules.end(),
                   [](const RuleSpec& a, const RuleSpec& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < rules.size(); ++i) {
    if (rules[i].id == rules[i - 1].id)
      add_error(errors, rules[i], "rule.duplicate-id", "/id",
                "rule id \"" + rules[i].id + "\" is also defined in " +
                    (rules[i - 1].file.empty() ? std::string("another rule") : rules[i - 1].file));
  }

  // Facts any rule records (and config keys dumps provide) may be read by
  // every rule's expressions.
  std::set<std::string> global_facts;
  for (const RuleSpec& rule : rules) {
    for (const auto& fact : rule.facts) global_facts.insert(fact.first);
    for (const std::string& key : rule.config_keys) global_facts.insert(key);
  }

  auto impl = std::make_shared<Impl>();
  // Several sources may list flags for one server: their union counts.
  for (ServerFlags& list : flags) {
    auto same = std::find_if(impl->flags.begin(), impl->flags.end(),
                             [&](const ServerFlags& f) { return f.server == list.server; });
    if (same == impl->flags.end()) {
      impl->flags.push_back(std::move(list));
    } else {
      same->flags.insert(same->flags.end(), list.flags.begin(), list.flags.end());
      same->env.insert(same->env.end(), list.env.begin(), list.env.end());
      same->params.insert(same->params.end(), list.params.begin(), list.params.end());
      // A later source's description of a flag replaces an earlier one.
      for (auto& [name, spec] : list.arguments) same->arguments[name] = std::move(spec);
    }
  }
  impl->compiled.reserve(rules.size());

  // Parsing a pattern is what tells a bad one. A pattern the build-time
  // prefilter table holds was parsed, with these options, when logrx was
  // built: a built-in rulebook parses none of its ~800 patterns at start-up.
  // The selector's automaton and each rule's own regex are built when first
  // used (Rulebook::lint compiles them all and checks them).
  std::vector<int> set_indices(rules.size(), -1);
  std::vector<std::string> set_errors(rules.size());
  re2::RE2::Set parse_check(regex_options(kSetMaxMem), re2::RE2::UNANCHORED);
  for (std::size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].trigger != Trigger::Line) continue;
    set_indices[i] = precomputed_prefilter(rules[i].pattern) != nullptr
                         ? 0
                         : parse_check.Add(rules[i].pattern, &set_errors[i]);
    if (set_indices[i] >= 0) impl->selector_rules.push_back(static_cast<int>(i));
  }

  for (std::size_t rule_index = 0; rule_index < rules.size(); ++rule_index) {
    const RuleSpec& rule = rules[rule_index];
    CompiledRule compiled;
    Known known{global_facts, {}};
    if (rule.trigger == Trigger::Line) {
      if (set_indices[rule_index] < 0) {
        add_error(errors, rule, "rule.bad-pattern", "/pattern",
                  "pattern does not compile: " + set_errors[rule_index]);
        impl->compiled.push_back(std::move(compiled));
        continue;
      }
      compiled.regex = std::make_unique<LazyRegex>(rule.pattern);
      compiled.group_names = capture_groups(rule.pattern);
      for (const std::string& group : compiled.group_names) {
        if (group.empty()) continue;
        std::string name(detail::canonical_capture_name(group));
        known.captures.insert(name);
        // The run variable wins a lookup, so such a capture could never be read.
        for (const char* builtin : kBuiltinVariables)
          if (name == builtin)
            add_error(errors, rule, "rule.capture-shadows-variable", "/pattern",
                      "capture (?P<" + name + ">...) has the name of a run variable; rename it");
      }
    } else if (rule.trigger == Trigger::Facts) {
      impl->fact_rules.push_back(static_cast<int>(rule_index));
    } else if (rule.trigger == Trigger::RunEnd) {
      impl->run_end_rules.push_back(static_cast<int>(rule_index));
    }
    if (!rule.raised_in.empty()) {
      compiled.raised_in = std::make_unique<re2::RE2>(rule.raised_in, regex_options(kRuleMaxMem));
      if (!compiled.raised_in->ok())
        add_error(errors, rule, "rule.bad-pattern", "/raised_in",
                  "raised_in does not compile: " + compiled.raised_in->error());
    }
    if (!rule.config_dump.empty() && known.count(rule.config_dump) == 0)
      add_error(errors, rule, "rule.unknown-capture", "/config_dump",
                "config_dump names \"" + rule.config_dump + "\", which the pattern does not capture");
    for (const std::string& server : rule.servers) {
      if (server == "any") compiled.any_server = true;
      if (auto dialect = parse_dialect(server)) compiled.dialects.push_back(*dialect);
      // Ollama runs llama.cpp's runner, whose lines it passes through.
      if (server == "llamacpp") compiled.dialects.push_back(Dialect::Ollama);
    }
    if (!rule.when.empty()) compiled.when = check_expression(errors, rule, rule.when, "/when", known);
    if (!rule.demote_when.empty()) {
      compiled.demote_when = check_expression(errors, rule, rule.demote_when, "/demote_when", known);
      impl->any_demote_when = true;
    }
    for (const auto& [name, source] : rule.facts) {
      if (auto e = check_expression(errors, rule, source,
                                    "/facts/" + name, known))
        compiled.facts.emplace_back(name, std::move(*e));
    }
    for (std::size_t i = 0; i < rule.remediation.size(); ++i) {
      const RemediationSpec& item = rule.remediation[i];
      std::string where = "/remediation/" + std::to_string(i);
      if (!impl->flags.empty()) check_known(errors, rule, item, where, impl->flags);
      CompiledRemediation out;
      if (item.value) check_template(errors, rule, *item.value, where + "/value", known);
      if (!item.expr.empty()) out.value = check_expression(errors, rule, item.expr, where + "/expr", known);
      if (!item.when.empty()) out.when = check_expression(errors, rule, item.when, where + "/when", known);
      check_template(errors, rule, item.why, where + "/why", known);
      compiled.remediation.push_back(std::move(out));
    }
    check_template(errors, rule, rule.title, "/title", known);
    if (!rule.retire_after.empty()) {
      auto it = std::find_if(rules.begin(), rules.end(),
                             [&](const RuleSpec& other) { return other.id == rule.retire_after; });
      if (it == rules.end() || it->trigger != Trigger::Facts) {
        add_error(errors, rule, "rule.unknown-rule", "/retire_after",
                  "retire_after names \"" + rule.retire_after + "\", which is not a facts rule of this rulebook");
      } else {
        compiled.retire_after = static_cast<int>(it - rules.begin());
      }
    }
    for (std::size_t i = 0; i < rule.supersedes.size(); ++i) {
      bool exists = std::any_of(rules.begin(), rules.end(),
                                [&](const RuleSpec& other) { return other.id == rule.supersedes[i]; });
      if (!exists)
        add_error(errors, rule, "rule.unknown-rule", "/supersedes/" + std::to_string(i),
                  "supersedes \"" + rule.supersedes[i] + "\", which is not a rule of this rulebook");
    }
    for (std::size_t i = 0; i < rule.must_match.size(); ++i) {
      for (const auto& expected : rule.must_match[i].captures) {
        const std::string& name = expected.first;
        if (std::none_of(compiled.group_names.begin(), compiled.group_names.end(),
                         [&name](const std::string& group) { return detail::canonical_capture_name(group) == name; }))
          add_error(errors, rule, "rule.unknown-capture",
                    "/examples/match/" + std::to_string(i) + "/captures",
                    "example expects capture \"" + name + "\", which the pattern does not have");
      }
    }
    compiled.block_searchable = rule.trigger == Trigger::Line && block_searchable(rule.pattern);
    compiled.phase_only = rule.silent && !rule.sets_phase.empty() && rule.facts.empty() &&
                          rule.config_dump.empty() && !rule.starts_run;
    for (std::size_t p = 0; p < sizeof(kPhases) / sizeof(kPhases[0]); ++p)
      if (rule.sets_phase == kPhases[p]) compiled.phase_index = p;
    impl->compiled.push_back(std::move(compiled));
  }
  if (errors.size() != errors_before) return std::nullopt;
  impl->rules = std::move(rules);
  return Rulebook(std::move(impl));
}

std::optional<Rulebook> Rulebook::load(const std::vector<RuleSource>& sources,
                                       Diagnostics& errors) {
  std::size_t errors_before = errors.size();
  std::map<std::string, RuleSpec> by_id;
  std::vector<ServerFlags> flags;
  for (const RuleSource& source : sources) {
    // Inside one source a repeated id is an error (reported by compile);
    // across sources the later one replaces the earlier.
    detail::RuleFiles files = source.builtin ? detail::load_embedded_rules(errors)
                                             : detail::load_rule_source(source.path, errors);
    std::vector<RuleSpec>& loaded = files.rules;
    for (ServerFlags& list : files.flags) flags.push_back(std::move(list));
    std::map<std::string, const RuleSpec*> in_this_source;
    for (RuleSpec& rule : loaded) {
      auto [it, fresh] = in_this_source.emplace(rule.id, &rule);
      if (!fresh) {
        add_error(errors, rule, "rule.duplicate-id", "/id",
                  "rule id \"" + rule.id + "\" is also defined in " + it->second->file);
        continue;
      }
    }
    for (RuleSpec& rule : loaded) by_id[rule.id] = std::move(rule);
  }
  // Compile what did load even after errors, so pattern and template
  // problems are reported in the same run as JSON and field problems.
  bool load_failed = errors.size() != errors_before;
  std::vector<RuleSpec> rules;
  rules.reserve(by_id.size());
  for (auto& [id, rule] : by_id) rules.push_back(std::move(rule));
  auto book = compile(std::move(rules), std::move(flags), errors);
  std::stable_sort(errors.begin() + static_cast<std::ptrdiff_t>(errors_before), errors.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
                   });
  if (load_failed) return std::nullopt;
  return book;
}

}  // namespace logrx
