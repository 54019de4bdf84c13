// SPDX-License-Identifier: MIT
// Hand-written validation (not from_json) because every field must be checked
// and every problem reported with its position, not only the first.
#include "rules/rule_loader.h"
#include "rules/capture_names.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <array>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include "rules/embedded_rules.h"
#include "rules/json_binary.h"
#include "rules/json_positions.h"
#include "util/text.h"

namespace logrx::detail {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 8> kServers{"any",      "sglang", "vllm",     "tgi",
                                                   "llamacpp", "trtllm", "lmdeploy", "ollama"};
constexpr std::uintmax_t kMaxRuleFileBytes = 16u << 20;

constexpr std::array<std::string_view, 28> kRuleFields{
    "id",          "title",       "category",    "severity",   "servers",     "pattern",
    "explanation", "remediation", "references",  "examples",   "$comment",    "description",
    "trigger",     "when",        "facts",       "config_dump", "config_keys", "phase",
    "starts_run",  "silent",      "wrapper",     "tier",       "raised_in",   "priority",
    "hints",       "supersedes",  "retire_after", "demote_when"};

bool valid_param_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool valid_rule_id(std::string_view id) {
  // lower-case dotted: at least two segments of [a-z0-9_-], starting alphanumeric
  if (id.empty() || id.size() > 128) return false;
  std::size_t dots = 0;
  bool segment_start = true;
  for (char c : id) {
    if (c == '.') {
      if (segment_start) return false;
      ++dots;
      segment_start = true;
      continue;
    }
    bool alnum = (c >= 'a' && c <= 'z') || is_digit(c);
    if (segment_start && !alnum) return false;
    if (!alnum && c != '-' && c != '_') return false;
    segment_start = false;
  }
  return dots >= 1 && !segment_start;
}

bool valid_env_name(std::string_view name) {
  if (name.empty() || is_digit(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '_';
  });
}

bool valid_flag_name(std::string_view name) {
  if (name.size() < 2 || name[0] != '-') return false;
  return std::all_of(name.begin() + 1, name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' ||
           c == '_' || c == '.';
  });
}

std::string type_name(const json& value) {
  return std::string(value.type_name());
}

// Collects the problems of one file, placing each at its JSON pointer.
class FileChecker {
 public:
  // Positions of the rules themselves are always needed (the built-in files
  // bring theirs, computed at build time); positions of their fields only for
  // an error, so that map is built on the first one.
  FileChecker(std::string_view text, const std::string& file, Diagnostics& errors,
              const ParsedAhead& known)
      : text_(text), known_(known), file_(file), errors_(errors) {}

  void error(const std::string& code, const std::string& pointer, const std::string& rule_id,
             const std::string& message) {
    if (!full_) full_.emplace(text_);
    TextPosition at = full_->find(pointer);
    errors_.push_back(Diagnostic{code, message, file_, rule_id, at.line, at.column, pointer});
    ++count_;
  }

  std::size_t count() const { return count_; }

  // Where the rule at `index` of the "rules" array starts.
  TextPosition rule_position(std::size_t index, const std::string& pointer) {
    if (index < known_.count)
      return TextPosition{known_.pairs[2 * index], known_.pairs[2 * index + 1]};
    if (!shallow_) shallow_.emplace(text_, 2);
    return shallow_->find(pointer);
  }

 private:
  std::string_view text_;
  ParsedAhead known_;
  std::optional<JsonPositions> shallow_;
  std::optional<JsonPositions> full_;
  const std::string& file_;
  Diagnostics& errors_;
  std::size_t count_ = 0;
};

class RuleReader {
 public:
  RuleReader(FileChecker& checker, const json& rule, std::string pointer)
      : checker_(checker), rule_(rule), pointer_(std::move(pointer)) {}

  bool read(RuleSpec& spec) {
    std::size_t before = checker_.count();
    if (!rule_.is_object()) {
      fail("rule.wrong-type", "", "a rule must be an object, not " + type_name(rule_));
      return false;
    }
    if (auto id = string_field("id", true)) {
      spec.id = *id;
      id_ = *id;
      if (!valid_rule_id(spec.id))
        fail("rule.bad-id", "/id",
             "rule id \"" + spec.id +
                 "\" must be lower-case dotted words such as \"sglang.memory.not-enough-memory\"");
    }
    for (const auto& [key, value] : rule_.items()) {
      (void)value;
      if (std::find(kRuleFields.begin(), kRuleFields.end(), key) == kRuleFields.end())
        fail("rule.unknown-field", "/" + escape_pointer_token(key),
             "unknown field \"" + key + "\" (a typo?)");
    }
    if (auto title = string_field("title", true)) spec.title = *title;
    if (auto explanation = string_field("explanation", true)) spec.explanation = *explanation;
    if (auto category = string_field("category", true)) {
      if (auto parsed = parse_category(*category)) {
        spec.category = *parsed;
      } else {
        fail("rule.bad-category", "/category",
             "category \"" + *category +
                 "\" is not one of memory_pressure, config_conflict, stale_output, other, info");
      }
    }
    if (auto severity = string_field("severity", true)) {
      if (auto parsed = parse_severity(*severity)) {
        spec.severity = *parsed;
      } else {
        fail("rule.bad-severity", "/severity",
             "severity \"" + *severity + "\" is not one of info, warning, error, fatal");
      }
    }
    if (auto trigger = string_field("trigger", false)) {
      if (*trigger == "line") {
        spec.trigger = Trigger::Line;
      } else if (*trigger == "facts") {
        spec.trigger = Trigger::Facts;
      } else if (*trigger == "run_end") {
        spec.trigger = Trigger::RunEnd;
      } else if (*trigger == "engine") {
        spec.trigger = Trigger::Engine;
      } else {
        fail("rule.bad-trigger", "/trigger",
             "trigger \"" + *trigger + "\" is not one of line, facts, run_end, engine");
      }
    }
    bool line_rule = spec.trigger == Trigger::Line;
    if (auto pattern = string_field("pattern", line_rule)) {
      spec.pattern = rename_duplicate_captures(*pattern);
      if (!line_rule) {
        fail("rule.unexpected-field", "/pattern",
             "only rules with trigger \"line\" have a pattern");
      } else if (spec.pattern.empty()) {
        fail("rule.bad-pattern", "/pattern", "pattern is empty");
      }
    }
    if (auto when = string_field("when", false)) spec.when = *when;
    if ((spec.trigger == Trigger::Facts) && spec.when.empty())
      fail("rule.missing-field", "", "a rule with trigger \"facts\" needs a \"when\" condition");
    if (auto dump = string_field("config_dump", false)) spec.config_dump = *dump;
    if (auto phase = string_field("phase", false)) {
      spec.sets_phase = *phase;
      bool known = false;
      for (const char* name : kPhases) known |= spec.sets_phase == name;
      if (!known)
        fail("rule.bad-phase", "/phase",
             "phase \"" + spec.sets_phase +
                 "\" is not one of launching, loading_weights, allocating_memory_pool, "
                 "capturing_cuda_graphs, ready, serving, exited");
    }
    if (auto tier = string_field("tier", false)) {
      if (*tier == "rule") {
        spec.tier = Tier::Rule;
      } else if (*tier == "structure") {
        spec.tier = Tier::Structure;
      } else if (*tier == "lexical") {
        spec.tier = Tier::Lexical;
      } else {
        fail("rule.bad-tier", "/tier", "tier \"" + *tier + "\" is not one of rule, structure, lexical");
      }
      if (spec.tier != Tier::Rule && !line_rule)
        fail("rule.bad-tier", "/tier", "only rules with trigger \"line\" can be structure or lexical rules");
    }
    if (auto raised_in = string_field("raised_in", false)) {
      spec.raised_in = *raised_in;
      if (spec.tier != Tier::Structure)
        fail("rule.unexpected-field", "/raised_in", "only structure rules have \"raised_in\"");
    }
    if (auto it = rule_.find("priority"); it != rule_.end()) {
      if (!it->is_number_integer()) {
        fail("rule.wrong-type", "/priority", "field \"priority\" must be an integer");
      } else {
        spec.priority = it->get<int>();
      }
    }
    spec.hints = bool_field("hints");
    if (auto after = string_field("retire_after", false)) spec.retire_after = *after;
    if (auto demote = string_field("demote_when", false)) spec.demote_when = *demote;
    spec.starts_run = bool_field("starts_run");
    spec.silent = bool_field("silent");
    spec.wrapper = bool_field("wrapper");
    read_facts(spec);
    read_config_keys(spec);
    read_servers(spec);
    read_remediation(spec);
    read_references(spec);
    read_supersedes(spec);
    read_examples(spec);
    return checker_.count() == before;
  }

 private:
  void fail(const std::string& code, const std::string& relative, const std::string& message) {
    checker_.error(code, pointer_ + relative, id_, message);
  }

  std::optional<std::string> string_field(const char* key, bool required) {
    auto it = rule_.find(key);
    if (it == rule_.end()) {
      if (required) fail("rule.missing-field", "", std::string("missing required field \"") + key + "\"");
      return std::nullopt;
    }
    if (!it->is_string()) {
      fail("rule.wrong-type", std::string("/") + key,
           std::string("field \"") + key + "\" must be a string, not " + type_name(*it));
      return std::nullopt;
    }
    return it->get<std::string>();
  }

  bool bool_field(const char* key) {
    auto it = rule_.find(key);
    if (it == rule_.end()) return false;
    if (!it->is_boolean()) {
      fail("rule.wrong-type", std::string("/") + key,
           std::string("field \"") + key + "\" must be true or false");
      return false;
    }
    return it->get<bool>();
  }

  void read_facts(RuleSpec& spec) {
    auto it = rule_.find("facts");
    if (it == rule_.end()) return;
    if (!it->is_object()) {
      fail("rule.wrong-type", "/facts", "field \"facts\" maps fact names to expressions");
      return;
    }
    for (const auto& [name, value] : it->items()) {
      std::string where = "/facts/" + escape_pointer_token(name);
      if (!valid_env_name(name) || name.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos) {
        fail("rule.bad-fact", where, "fact names are lower_case_words, not \"" + name + "\"");
        continue;
      }
      if (!value.is_string()) {
        fail("rule.wrong-type", where, "a fact is an expression string");
        continue;
      }
      spec.facts.emplace_back(name, value.get<std::string>());
    }
  }

  void read_config_keys(RuleSpec& spec) {
    auto it = rule_.find("config_keys");
    if (it == rule_.end()) return;
    if (!it->is_array()) {
      fail("rule.wrong-type", "/config_keys", "field \"config_keys\" is an array of names");
      return;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) {
        fail("rule.wrong-type", "/config_keys/" + std::to_string(i), "a config key is a string");
        continue;
      }
      spec.config_keys.push_back((*it)[i].get<std::string>());
    }
    if (spec.config_dump.empty())
      fail("rule.unexpected-field", "/config_keys", "config_keys needs config_dump");
  }

  void read_servers(RuleSpec& spec) {
    auto it = rule_.find("servers");
    if (it == rule_.end()) {
      fail("rule.missing-field", "", "missing required field \"servers\"");
      return;
    }
    if (!it->is_array() || it->empty()) {
      fail("rule.wrong-type", "/servers",
           "field \"servers\" must be a non-empty array of server names");
      return;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& server = (*it)[i];
      std::string where = "/servers/" + std::to_string(i);
      if (!server.is_string()) {
        fail("rule.wrong-type", where, "server names are strings, not " + type_name(server));
        continue;
      }
      std::string name = server.get<std::string>();
      if (!is_known_server(name)) {
        fail("rule.unknown-server", where,
             "unknown server \"" + name +
                 "\" (known: any, sglang, vllm, tgi, llamacpp, trtllm, lmdeploy, ollama)");
        continue;
      }
      spec.servers.push_back(name);
    }
  }

  void read_remediation(RuleSpec& spec) {
    auto it = rule_.find("remediation");
    if (it == rule_.end()) {
      fail("rule.missing-field", "", "missing required field \"remediation\" (use [] for none)");
      return;
    }
    if (!it->is_array()) {
      fail("rule.wrong-type", "/remediation", "field \"remediation\" must be an array");
      return;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& item = (*it)[i];
      std::string where = "/remediation/" + std::to_string(i);
      if (!item.is_object()) {
        fail("rule.wrong-type", where, "a remediation item must be an object");
        continue;
      }
      RemediationSpec out;
      bool ok = true;
      bool has_flag = item.contains("flag");
      bool has_env = item.contains("env");
      bool has_param = item.contains("param");
      bool has_container = item.contains("container");
      if (int(has_flag) + int(has_env) + int(has_param) + int(has_container) != 1) {
        fail("rule.bad-remediation", where,
             "a remediation item has exactly one of \"flag\", \"env\", \"param\" or \"container\"");
        continue;
      }
      const char* name_key = has_flag ? "flag" : has_env ? "env" : has_param ? "param" : "container";
      const json& name = item.at(name_key);
      out.kind = has_flag    ? RemediationSpec::Kind::Flag
                 : has_env   ? RemediationSpec::Kind::Env
                 : has_param ? RemediationSpec::Kind::Param
                             : RemediationSpec::Kind::Container;
      if (!name.is_string()) {
        fail("rule.wrong-type", where + "/" + name_key,
             std::string("\"") + name_key + "\" must be a string");
        ok = false;
      } else {
        out.name = name.get<std::string>();
        if (has_flag && !valid_flag_name(out.name)) {
          fail("rule.bad-remediation", where + "/flag",
               "flag \"" + out.name + "\" must look like --some-flag");
          ok = false;
        }
        if (has_param && !valid_param_name(out.name)) {
          fail("rule.bad-remediation", where + "/param",
               "parameter \"" + out.name + "\" must be a lower-case name such as num_ctx");
          ok = false;
        }
        if (has_env && !valid_env_name(out.name)) {
          fail("rule.bad-remediation", where + "/env",
               "\"" + out.name + "\" is not a valid environment variable name");
          ok = false;
        }
      }
      for (const auto& [key, value] : item.items()) {
        if (key == "flag" || key == "env" || key == "param" || key == "container") continue;
        if (key == "value") {
          if (value.is_string()) {
            out.value = value.get<std::string>();
          } else if (value.is_number()) {
            out.value = value.dump();
          } else {
            fail("rule.wrong-type", where + "/value", "\"value\" must be a string or a number");
            ok = false;
          }
        } else if (key == "expr" || key == "when") {
          if (value.is_string()) {
            (key == "expr" ? out.expr : out.when) = value.get<std::string>();
          } else {
            fail("rule.wrong-type", where + "/" + key, "\"" + key + "\" must be an expression string");
            ok = false;
          }
        } else if (key == "why") {
          if (value.is_string()) {
            out.why = value.get<std::string>();
          } else {
            fail("rule.wrong-type", where + "/why", "\"why\" must be a string");
            ok = false;
          }
        } else if (key == "alternative") {
          if (value.is_boolean()) {
            out.alternative = value.get<bool>();
          } else {
            fail("rule.wrong-type", where + "/alternative", "\"alternative\" must be true or false");
            ok = false;
          }
        } else if (key == "advice") {
          if (value.is_boolean()) {
            out.advice = value.get<bool>();
          } else {
            fail("rule.wrong-type", where + "/advice", "\"advice\" must be true or false");
            ok = false;
          }
        } else {
          fail("rule.unknown-field", where + "/" + escape_pointer_token(key),
               "unknown remediation field \"" + key + "\"");
          ok = false;
        }
      }
      if (out.value && !out.expr.empty()) {
        fail("rule.bad-remediation", where, "an item has \"value\" or \"expr\", not both");
        ok = false;
      }
      if (has_env && !out.value && out.expr.empty()) {
        fail("rule.bad-remediation", where, "an environment item needs a \"value\"");
        ok = false;
      }
      if (ok) spec.remediation.push_back(std::move(out));
    }
  }

  void read_references(RuleSpec& spec) {
    auto it = rule_.find("references");
    if (it == rule_.end()) return;
    if (!it->is_array()) {
      fail("rule.wrong-type", "/references", "field \"references\" must be an array of strings");
      return;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) {
        fail("rule.wrong-type", "/references/" + std::to_string(i), "a reference is a string");
        continue;
      }
      spec.references.push_back((*it)[i].get<std::string>());
    }
  }

  void read_supersedes(RuleSpec& spec) {
    auto it = rule_.find("supersedes");
    if (it == rule_.end()) return;
    if (!it->is_array()) {
      fail("rule.wrong-type", "/supersedes", "field \"supersedes\" must be an array of rule ids");
      return;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& id = (*it)[i];
      if (!id.is_string() || !valid_rule_id(id.get<std::string>())) {
        fail("rule.wrong-type", "/supersedes/" + std::to_string(i), "a rule id such as \"pytorch.cuda.out-of-memory\"");
        continue;
      }
      spec.supersedes.push_back(id.get<std::string>());
    }
  }

  void read_examples(RuleSpec& spec) {
    auto it = rule_.find("examples");
    if (it == rule_.end()) {
      fail("rule.missing-field", "", "missing required field \"examples\"");
      return;
    }
    if (!it->is_object()) {
      fail("rule.wrong-type", "/examples",
           "field \"examples\" must be an object with \"match\" and \"no_match\" arrays");
      return;
    }
    for (const auto& [key, value] : it->items()) {
      (void)value;
      if (key != "match" && key != "no_match")
        fail("rule.unknown-field", "/examples/" + escape_pointer_token(key),
             "unknown examples field \"" + key + "\" (expected \"match\" or \"no_match\")");
    }
    if (auto m = it->find("match"); m != it->end()) {
      if (!m->is_array()) {
        fail("rule.wrong-type", "/examples/match", "\"match\" must be an array");
      } else {
        for (std::size_t i = 0; i < m->size(); ++i)
          read_example((*m)[i], "/examples/match/" + std::to_string(i), true, spec);
      }
    }
    if (auto n = it->find("no_match"); n != it->end()) {
      if (!n->is_array()) {
        fail("rule.wrong-type", "/examples/no_match", "\"no_match\" must be an array of strings");
      } else {
        for (std::size_t i = 0; i < n->size(); ++i) read_example((*n)[i], "/examples/no_match/" + std::to_string(i), false, spec);
      }
    }
  }

  // A string is one log line; an object has "line" (and, for match
  // examples, "captures") or "log", an array of lines scanned as a whole.
  void read_example(const json& example, const std::string& where, bool match, RuleSpec& spec) {
    RuleExample out;
    auto& target = match ? spec.must_match : spec.must_not_match;
    if (example.is_string()) {
      out.line = example.get<std::string>();
      target.push_back(std::move(out));
      return;
    }
    const char* shape = match ? "a match example is a string, {\"line\": ..., \"captures\": {...}, \"remediation\": {...}} or {\"log\": [lines], \"remediation\": {...}}"
                              : "a no_match example is a string or {\"log\": [lines]}";
    if (!example.is_object()) {
      fail("rule.wrong-type", where, shape);
      return;
    }
    for (const auto& [key, value] : example.items()) {
      if (key == "line" && value.is_string()) {
        out.line = value.get<std::string>();
      } else if (key == "log" && value.is_array() &&
                 std::all_of(value.begin(), value.end(), [](const json& l) { return l.is_string(); })) {
        for (const json& l : value) out.log.push_back(l.get<std::string>());
      } else if (key == "captures" && match && value.is_object()) {
        out.check_captures = true;
        for (const auto& [name, captured] : value.items()) {
          if (!captured.is_string()) {
            fail("rule.wrong-type", where + "/captures/" + escape_pointer_token(name),
                 "expected capture values are strings");
            return;
          }
          out.captures[name] = captured.get<std::string>();
        }
      } else if (key == "remediation" && match && value.is_object()) {
        for (const auto& [name, expected] : value.items()) {
          if (!expected.is_string()) {
            fail("rule.wrong-type", where + "/remediation/" + escape_pointer_token(name),
                 "expected remediation values are strings (\"\" for an item without a value)");
            return;
          }
          out.remediation[name] = expected.get<std::string>();
        }
      } else {
        fail("rule.wrong-type", where + "/" + escape_pointer_token(key), shape);
        return;
      }
    }
    if (out.line.empty() == out.log.empty()) {
      fail("rule.wrong-type", where, shape);
      return;
    }
    target.push_back(std::move(out));
  }

  FileChecker& checker_;
  const json& rule_;
  std::string pointer_;
  std::string id_;
};


// "arguments": {"--flag": {"arity": "switch" | "value" | "repeatable",
//   "type": "int" | "float" | "string" | "enum" | "list" | "bool",
//   "min", "max" (inclusive), "gt", "lt" (exclusive), "multiple_of", "choices",
//   "nargs": true (a list given as several words)}}
void read_arguments(FileChecker& checker, const json& document, ServerFlags& flags) {
  auto it = document.find("arguments");
  if (it == document.end()) return;
  if (!it->is_object()) {
    checker.error("rule.wrong-type", "/arguments", "", "\"arguments\" maps flags to what they take");
    return;
  }
  for (const auto& [name, spec_json] : it->items()) {
    std::string where = "/arguments/" + escape_pointer_token(name);
    if (!valid_flag_name(name)) {
      checker.error("rule.bad-remediation", where, "", "a flag looks like --some-flag");
      continue;
    }
    if (std::find(flags.flags.begin(), flags.flags.end(), name) == flags.flags.end()) {
      checker.error("rule.unknown-flag", where, "",
                    "flag " + name + " is described but not in \"flags\"");
      continue;
    }
    if (!spec_json.is_object()) {
      checker.error("rule.wrong-type", where, "", "a flag's description is an object");
      continue;
    }
    FlagSpec spec;
    spec.described = true;
    bool ok = true;
    auto bad = [&](const std::string& key, const std::string& message) {
      checker.error("rule.bad-argument", where + "/" + escape_pointer_token(key), "", message);
      ok = false;
    };
    bool typed = false;
    for (const auto& [key, value] : spec_json.items()) {
      if (key == "arity") {
        std::string v = value.is_string() ? value.get<std::string>() : "";
        if (v == "switch") spec.arity = FlagSpec::Arity::Switch;
        else if (v == "value") spec.arity = FlagSpec::Arity::Value;
        else if (v == "repeatable") spec.arity = FlagSpec::Arity::Repeatable;
        else bad(key, "\"arity\" is \"switch\", \"value\" or \"repeatable\"");
      } else if (key == "type") {
        typed = true;
        std::string v = value.is_string() ? value.get<std::string>() : "";
        if (v == "int") spec.type = FlagSpec::Type::Int;
        else if (v == "float") spec.type = FlagSpec::Type::Float;
        else if (v == "string") spec.type = FlagSpec::Type::String;
        else if (v == "enum") spec.type = FlagSpec::Type::Enum;
        else if (v == "list") spec.type = FlagSpec::Type::List;
        else if (v == "bool") spec.type = FlagSpec::Type::Bool;
        else bad(key, "\"type\" is int, float, string, enum, list or bool");
      } else if (key == "min" || key == "max" || key == "gt" || key == "lt" || key == "multiple_of") {
        if (!value.is_number()) {
          bad(key, "\"" + key + "\" is a number");
          continue;
        }
        double v = value.get<double>();
        (key == "min" ? spec.min : key == "max" ? spec.max : key == "gt" ? spec.gt
         : key == "lt" ? spec.lt : spec.multiple_of) = v;
        if (key == "multiple_of" && !(v > 0)) bad(key, "\"multiple_of\" is positive");
      } else if (key == "choices") {
        if (!value.is_array() || value.empty()) {
          bad(key, "\"choices\" is a non-empty array of strings");
          continue;
        }
        for (const json& choice : value) {
          if (choice.is_string()) spec.choices.push_back(choice.get<std::string>());
          else bad(key, "\"choices\" is a non-empty array of strings");
        }
      } else if (key == "nargs") {
        if (value.is_boolean()) spec.nargs = value.get<bool>();
        else bad(key, "\"nargs\" is true or false");
      } else if (!key.empty() && key[0] == '$') {
        continue;
      } else {
        bad(key, "unknown field \"" + key + "\" in a flag's description");
      }
    }
    if (spec.arity == FlagSpec::Arity::Switch && typed)
      bad("type", "a switch takes no value, so it has no type");
    if (spec.type == FlagSpec::Type::Enum && spec.choices.empty())
      bad("choices", "an enum lists its \"choices\"");
    if (spec.type == FlagSpec::Type::Bool && spec.choices.empty()) spec.choices = {"true", "false"};
    bool numeric = spec.type == FlagSpec::Type::Int || spec.type == FlagSpec::Type::Float;
    if (!numeric && (spec.min || spec.max || spec.gt || spec.lt || spec.multiple_of))
      bad("type", "a range needs \"type\": \"int\" or \"float\"");
    if (ok) flags.arguments[name] = std::move(spec);
  }
}

// {"version": 1, "server": "sglang", "flags": ["--x", ...], "env": ["X", ...]}
void read_flag_file(FileChecker& checker, const json& document, const std::string& file_name,
                    RuleFiles& out) {
  ServerFlags flags;
  flags.file = file_name;
  for (const auto& [key, value] : document.items()) {
    (void)value;
    if (key != "version" && key != "server" && key != "flags" && key != "env" && key != "params" &&
        key != "arguments" &&
        (key.empty() || key[0] != '$'))
      checker.error("rule.unknown-field", "/" + escape_pointer_token(key), "",
                    "unknown field \"" + key + "\" in a flag file");
  }
  const json& server = document.at("server");
  if (!server.is_string() || !is_known_server(server.get<std::string>())) {
    checker.error("rule.unknown-server", "/server", "", "a flag file names one known server");
    return;
  }
  flags.server = server.get<std::string>();
  enum class NameKind { Flag, Env, Param };
  auto read_list = [&](const char* key, NameKind kind, std::vector<std::string>& target) {
    auto it = document.find(key);
    if (it == document.end()) return;
    if (!it->is_array()) {
      checker.error("rule.wrong-type", std::string("/") + key, "",
                    std::string("\"") + key + "\" is an array of names");
      return;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& name = (*it)[i];
      std::string where = std::string("/") + key + "/" + std::to_string(i);
      bool valid = name.is_string() &&
                   (kind == NameKind::Flag  ? valid_flag_name(name.get<std::string>())
                    : kind == NameKind::Env ? valid_env_name(name.get<std::string>())
                                            : valid_param_name(name.get<std::string>()));
      if (!valid) {
        checker.error("rule.bad-remediation", where, "",
                      kind == NameKind::Flag  ? "a flag looks like --some-flag"
                      : kind == NameKind::Env ? "not a variable name"
                                              : "a parameter is a lower-case name such as num_ctx");
        continue;
      }
      target.push_back(name.get<std::string>());
    }
  };
  read_list("flags", NameKind::Flag, flags.flags);
  read_list("env", NameKind::Env, flags.env);
  read_list("params", NameKind::Param, flags.params);
  read_arguments(checker, document, flags);
  out.flags.push_back(std::move(flags));
}

}  // namespace

bool is_known_server(std::string_view name) {
  return std::find(kServers.begin(), kServers.end(), name) != kServers.end();
}

void parse_rule_file(std::string_view text, const std::string& file_name, RuleFiles& out,
                     Diagnostics& errors, ParsedAhead known) {
  std::vector<RuleSpec>& rules = out.rules;
  json document;
  // A built-in file comes parsed; its bytes are read back only if they hold
  // exactly one document (else the text is read, as for any file).
  const bool parsed_ahead =
      known.document_size > 0 && read_json_binary(known.document, known.document_size, document);
  try {
    if (!parsed_ahead)
      document = json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    int line = 0;
    int column = 0;
    offset_to_line_column(text, e.byte == 0 ? 0 : e.byte - 1, line, column);
    std::string what = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 3, column 5: "
    if (auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    errors.push_back(Diagnostic{"rule.json-syntax", "invalid JSON: " + what, file_name, "", line,
                                column, ""});
    return;
  } catch (const json::exception& e) {
    // Not a syntax error but a value nlohmann cannot hold (a number such as
    // 8e8788 overflows a double); it gives no position.
    std::string what = e.what();
    if (auto close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
    errors.push_back(Diagnostic{"rule.json-syntax", "invalid JSON: " + what, file_name, "", 0, 0, ""});
    return;
  }

  FileChecker checker(text, file_name, errors, known);
  if (!document.is_object()) {
    checker.error("rule.wrong-type", "", "",
                  "a rule file is an object {\"version\": 1, \"rules\": [...]}, not " +
                      type_name(document));
    return;
  }
  if (document.contains("server")) {
    read_flag_file(checker, document, file_name, out);
    return;
  }
  for (const auto& [key, value] : document.items()) {
    if (key == "rules" || key == "version" || (!key.empty() && key[0] == '$')) continue;
    (void)value;
    checker.error("rule.unknown-field", "/" + escape_pointer_token(key), "",
                  "unknown top-level field \"" + key + "\"");
  }
  if (auto version = document.find("version"); version != document.end()) {
    if (!version->is_number_integer() || version->get<long long>() != 1)
      checker.error("rule.bad-version", "/version", "",
                    "unsupported rule file version (this logrx reads version 1)");
  }
  auto list = document.find("rules");
  if (list == document.end() || !list->is_array()) {
    checker.error("rule.missing-field", list == document.end() ? "" : "/rules", "",
                  "a rule file needs a \"rules\" array");
    return;
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list->size(); ++i) {
    std::string pointer = "/rules/" + std::to_string(i);
    RuleSpec spec;
    RuleReader reader(checker, (*list)[i], pointer);
    if (!reader.read(spec)) continue;
    if (!seen.insert(spec.id).second) {
      checker.error("rule.duplicate-id", pointer + "/id", spec.id,
                    "rule id \"" + spec.id + "\" is defined twice in this file");
      continue;
    }
    TextPosition at = checker.rule_position(i, pointer);
    spec.file = file_name;
    spec.json_pointer = pointer;
    spec.line = at.line;
    spec.column = at.column;
    rules.push_back(std::move(spec));
  }
}

namespace {

enum class ReadResult { Ok, Empty, TooLarge, NotRegular, Unreadable };

// Reads a rule file of at most kMaxRuleFileBytes. Opened without blocking and
// refused unless it is a regular file: a FIFO would hang the loader, and a
// device such as /dev/zero reports size 0 and never ends.
ReadResult read_rule_text(const std::string& file, std::string& text) {
  int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return ReadResult::Unreadable;
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ReadResult::Unreadable;
  if (!S_ISREG(st.st_mode)) return ReadResult::NotRegular;
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxRuleFileBytes) return ReadResult::TooLarge;
  text.clear();
  char buffer[64 * 1024];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ReadResult::Unreadable;
    if (n == 0) break;
    // The file may grow while it is read: the cap holds for what is read.
    if (text.size() + static_cast<std::size_t>(n) > kMaxRuleFileBytes) return ReadResult::TooLarge;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text.empty() ? ReadResult::Empty : ReadResult::Ok;
}

// The embedded file by its path under rules/, nullptr for none.
const EmbeddedRuleFile* embedded_file(std::string_view name) {
  for (std::size_t i = 0; i < kEmbeddedRuleFileCount; ++i)
    if (name == kEmbeddedRuleFiles[i].name) return &kEmbeddedRuleFiles[i];
  return nullptr;
}

ParsedAhead parsed_ahead(const EmbeddedRuleFile& file) {
  return ParsedAhead{file.rule_positions, file.rule_count, file.document, file.document_size};
}

// What the build knows of a file on disk that is a byte-for-byte copy of a
// built-in one (the installed rulebook, or the build tree's): its document
// and rule positions.
ParsedAhead parsed_ahead(std::string_view relative_name, std::string_view text) {
  const EmbeddedRuleFile* file = embedded_file(relative_name);
  if (file == nullptr || file->size != text.size() || std::memcmp(file->bytes, text.data(), text.size()) != 0)
    return {};
  return parsed_ahead(*file);
}

// `relative_name` is the file's path under the rule directory given
// ("sglang/memory.json"), empty for a file given by itself.
void load_rule_file(const std::string& file, std::string_view relative_name, RuleFiles& rules,
                    Diagnostics& errors) {
  std::string text;
  switch (read_rule_text(file, text)) {
    case ReadResult::Ok:
      parse_rule_file(text, file, rules, errors,
                      relative_name.empty() ? ParsedAhead{} : parsed_ahead(relative_name, text));
      return;
    case ReadResult::Empty:
      errors.push_back(Diagnostic{"rule.json-syntax", "rule file is empty", file, "", 1, 1, ""});
      return;
    case ReadResult::TooLarge:
      errors.push_back(Diagnostic{"rule.file-too-large",
                                  "rule file is larger than 16 MiB; split it by family", file, "",
                                  0, 0, ""});
      return;
    case ReadResult::NotRegular:
      errors.push_back(Diagnostic{"rule.source-unreadable",
                                  "not a regular file (a FIFO, device or socket); rule files must be "
                                  "regular files",
                                  file, "", 0, 0, ""});
      return;
    case ReadResult::Unreadable:
      errors.push_back(
          Diagnostic{"rule.source-unreadable", "cannot read rule file", file, "", 0, 0, ""});
      return;
  }
}

}  // namespace

std::optional<std::string_view> embedded_rule_text(std::string_view prefixed_name) {
  if (prefixed_name.substr(0, kEmbeddedPrefix.size()) != kEmbeddedPrefix) return std::nullopt;
  const EmbeddedRuleFile* file = embedded_file(prefixed_name.substr(kEmbeddedPrefix.size()));
  if (file == nullptr) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(file->bytes), file->size);
}

std::optional<std::pair<int, int>> position_in_file(const std::string& file,
                                                    const std::string& pointer) {
  if (auto embedded = embedded_rule_text(file)) {
    TextPosition at = JsonPositions(*embedded).find(pointer);
    return std::make_pair(at.line, at.column);
  }
  std::string content;
  if (read_rule_text(file, content) != ReadResult::Ok) return std::nullopt;
  TextPosition at = JsonPositions(content).find(pointer);
  return std::make_pair(at.line, at.column);
}

namespace {

// Files are independent: two halves are read and parsed side by side (the
// rulebook loads at every CLI call), then joined in file order so the result
// and the diagnostics do not depend on the threads.
template <typename LoadOne>
RuleFiles load_in_halves(std::size_t count, LoadOne load_one, Diagnostics& errors) {
  RuleFiles rules;
  auto load_range = [&load_one](std::size_t begin, std::size_t end, RuleFiles& out,
                                Diagnostics& problems) {
    for (std::size_t i = begin; i < end; ++i) load_one(i, out, problems);
  };
  std::size_t half = count / 2;
  RuleFiles second;
  Diagnostics second_errors;
  std::exception_ptr failure;
  std::thread worker;
  try {
    if (half > 0)
      worker = std::thread([&] {
        try {
          load_range(half, count, second, second_errors);
        } catch (...) {
          failure = std::current_exception();
        }
      });
  } catch (const std::system_error&) {
    // No thread to be had: the worker's half is loaded below.
  }
  load_range(0, half, rules, errors);
  if (worker.joinable()) {
    worker.join();
  } else {
    load_range(half, count, second, second_errors);
  }
  if (failure) std::rethrow_exception(failure);
  for (RuleSpec& rule : second.rules) rules.rules.push_back(std::move(rule));
  for (ServerFlags& list : second.flags) rules.flags.push_back(std::move(list));
  for (Diagnostic& d : second_errors) errors.push_back(std::move(d));
  return rules;
}

}  // namespace

RuleFiles load_embedded_rules(Diagnostics& errors) {
  return load_in_halves(
      kEmbeddedRuleFileCount,
      [](std::size_t i, RuleFiles& out, Diagnostics& problems) {
        const EmbeddedRuleFile& file = kEmbeddedRuleFiles[i];
        std::string_view text(reinterpret_cast<const char*>(file.bytes), file.size);
        parse_rule_file(text, std::string(kEmbeddedPrefix) + file.name, out, problems,
                        parsed_ahead(file));
      },
      errors);
}

RuleFiles load_rule_source(const std::string& path, Diagnostics& errors) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    errors.push_back(Diagnostic{"rule.source-missing", "rule source does not exist", path, "", 0,
                                0, ""});
    return {};
  }
  std::vector<std::string> files;
  if (fs::is_directory(status)) {
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().extension() == ".json" && it->is_regular_file(ec))
        files.push_back(it->path().string());
    }
    if (ec)
      errors.push_back(Diagnostic{"rule.source-unreadable",
                                  "cannot list rule directory: " + ec.message(), path, "", 0, 0,
                                  ""});
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  // Paths under the directory, as the embedded files are named.
  std::vector<std::string> relative(files.size());
  if (fs::is_directory(status)) {
    for (std::size_t i = 0; i < files.size(); ++i) {
      // The iterator spells each file as the directory given, then its path.
      if (files[i].compare(0, path.size(), path) != 0) continue;
      std::size_t start = path.size();
      while (start < files[i].size() && files[i][start] == '/') ++start;
      relative[i] = files[i].substr(start);
    }
  }
  RuleFiles rules = load_in_halves(
      files.size(),
      [&files, &relative](std::size_t i, RuleFiles& out, Diagnostics& problems) {
        load_rule_file(files[i], relative[i], out, problems);
      },
      errors);
  return rules;
}

}  // namespace logrx::detail
