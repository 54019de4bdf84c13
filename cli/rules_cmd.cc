// SPDX-License-Identifier: MIT
#include "rules_cmd.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "logrx/output.h"

namespace logrx::cli {
namespace {

void add_rule_options(CLI::App* command, RulesOptions& options) {
  command->add_option("--rules", options.rules.extra_dirs, "Also load the rules in DIR")
      ->type_name("DIR")
      ->allow_extra_args(false);
  command->add_flag("--no-builtin-rules", options.rules.no_builtin,
                    "Do not load the built-in rulebook");
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

}  // namespace

void setup_rules(CLI::App& app, RulesOptions& options, int& exit_code) {
  CLI::App* rules = app.add_subcommand("rules", "Inspect and test the rulebook");
  rules->require_subcommand(1);

  CLI::App* list = rules->add_subcommand("list", "List every rule: id, severity, category, title");
  add_rule_options(list, options);
  list->add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  list->callback([&options, &exit_code] { exit_code = run_rules_list(options); });

  CLI::App* test = rules->add_subcommand(
      "test", "Run every rule's examples; exit 1 when one fails, 2 when the rulebook is broken");
  add_rule_options(test, options);
  test->callback([&options, &exit_code] { exit_code = run_rules_test(options); });

  CLI::App* lint = rules->add_subcommand(
      "lint",
      "Check a rulebook and report every problem with file, rule and position: JSON, fields, "
      "ids, patterns, captures, expressions, examples, flags; exit 2 on any problem");
  lint->add_option("dir", options.lint_dir, "Rule directory or file (default: the rulebook in use)");
  add_rule_options(lint, options);
  lint->callback([&options, &exit_code] { exit_code = run_rules_lint(options); });

  CLI::App* patterns = rules->add_subcommand(
      "patterns", "Print every line rule's RE2 pattern, one per line (for rg -f / grep -P -f)");
  add_rule_options(patterns, options);
  patterns->callback([&options, &exit_code] { exit_code = run_rules_patterns(options); });
}

void setup_explain(CLI::App& app, RulesOptions& options, int& exit_code) {
  CLI::App* explain = app.add_subcommand(
      "explain", "Show a rule: what it means, how its fixes are computed, its examples");
  explain->add_option("rule", options.rule_id, "Rule id, e.g. sglang.memory.not-enough-memory")
      ->required();
  add_rule_options(explain, options);
  explain->callback([&options, &exit_code] { exit_code = run_explain(options); });
}

int run_rules_list(const RulesOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  if (options.format == "json") {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const RuleSpec& r : book->rules())
      list.push_back({{"id", r.id},
                      {"severity", std::string(to_string(r.severity))},
                      {"category", std::string(to_string(r.category))},
                      {"servers", r.servers},
                      {"title", r.title},
                      {"file", r.file}});
    std::cout << escape_json_controls(list.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)) << "\n";
    return kExitClean;
  }
  std::size_t id_width = 0;
  for (const RuleSpec& r : book->rules()) id_width = std::max(id_width, r.id.size());
  for (const RuleSpec& r : book->rules()) {
    std::string id = r.id;
    id.resize(id_width, ' ');
    std::string severity(to_string(r.severity));
    severity.resize(8, ' ');
    std::string category(to_string(r.category));
    category.resize(16, ' ');
    std::cout << id << "  " << severity << category << join(r.servers, ",") << "  "
              << escape_for_terminal(r.title) << "\n";
  }
  std::cout << book->size() << " rules\n";
  return kExitClean;
}

int run_rules_test(const RulesOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  ExampleReport report = test_examples(*book);
  for (const ExampleFailure& f : report.failures) {
    std::cout << "FAIL " << f.rule_id << " (" << f.file << ")\n";
    if (!f.line.empty()) std::cout << "  line:   " << escape_for_terminal(f.line) << "\n";
    std::cout << "  reason: " << escape_for_terminal(f.reason) << "\n";
  }
  std::cout << report.rules << " rules, " << report.examples << " examples: "
            << (report.examples - std::min(report.examples, report.failures.size()))
            << " passed, " << report.failures.size() << " failed\n";
  return report.failures.empty() ? kExitClean : kExitFindings;
}

int run_rules_lint(const RulesOptions& options) {
  std::vector<RuleSource> sources;
  if (!options.rules.no_builtin) {
    RuleSource builtin = builtin_rule_source();
    if (builtin.builtin || builtin.path != options.lint_dir) sources.push_back(builtin);
  }
  for (const std::string& dir : options.rules.extra_dirs) sources.push_back({dir});
  if (!options.lint_dir.empty()) sources.push_back({options.lint_dir});
  if (sources.empty()) {
    std::cerr << "logrx: no rules to lint\n";
    return kExitError;
  }
  Diagnostics problems = Rulebook::lint(sources);
  for (const Diagnostic& d : problems) std::cout << format_diagnostic(d) << "\n";
  if (!problems.empty()) {
    std::cout << problems.size() << (problems.size() == 1 ? " problem" : " problems") << "\n";
    return kExitError;
  }
  std::cout << "no problems\n";
  return kExitClean;
}

int run_rules_patterns(const RulesOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  for (const RuleSpec& rule : book->rules()) {
    if (rule.trigger != Trigger::Line) continue;
    std::string pattern = line_anywhere_pattern(rule.pattern);
    std::cout << pattern << "\n";
  }
  return kExitClean;
}

int run_explain(const RulesOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  const RuleSpec* rule = book->find(options.rule_id);
  if (rule == nullptr) {
    std::cerr << "logrx: no rule \"" << options.rule_id << "\" (see 'logrx rules list')\n";
    return kExitError;
  }
  auto e = [](const std::string& text) { return escape_for_terminal(text); };
  std::cout << e(rule->id) << ": " << e(rule->title) << "\n";
  std::cout << "  category: " << to_string(rule->category) << "\n";
  std::cout << "  severity: " << to_string(rule->severity) << "\n";
  std::cout << "  servers:  " << join(rule->servers, ", ") << "\n";
  static const char* kTriggers[] = {"line", "facts", "run_end", "engine"};
  std::cout << "  trigger:  " << kTriggers[static_cast<int>(rule->trigger)] << "\n";
  if (!rule->pattern.empty()) std::cout << "  pattern:  " << e(rule->pattern) << "\n";
  if (!rule->when.empty()) std::cout << "  when:     " << e(rule->when) << "\n";
  if (!rule->sets_phase.empty()) std::cout << "  phase:    " << rule->sets_phase << "\n";
  for (const auto& [name, expr] : rule->facts) std::cout << "  fact:     " << name << " = " << e(expr) << "\n";
  std::cout << "  defined in " << e(rule->file) << ":" << rule->line << "\n\n";
  std::cout << e(rule->explanation) << "\n";
  if (!rule->remediation.empty()) {
    std::cout << "\nRemediation:\n";
    for (const RemediationSpec& item : rule->remediation) {
      std::cout << (item.alternative ? "  or  " : "  fix ") << e(item.name);
      if (item.value) std::cout << (item.kind == RemediationSpec::Kind::Env ? "=" : " ") << e(*item.value);
      if (!item.expr.empty()) std::cout << " = " << e(item.expr);
      std::cout << "\n";
      if (!item.when.empty()) std::cout << "        when " << e(item.when) << "\n";
      if (!item.why.empty()) std::cout << "        why: " << e(item.why) << "\n";
    }
  }
  if (!rule->references.empty()) {
    std::cout << "\nReferences:\n";
    for (const std::string& ref : rule->references) std::cout << "  " << e(ref) << "\n";
  }
  auto show = [&](const RuleExample& example) {
    if (example.log.empty()) {
      std::cout << "  " << e(example.line) << "\n";
    } else {
      for (const std::string& line : example.log) std::cout << "  | " << e(line) << "\n";
    }
    for (const auto& [name, value] : example.captures)
      std::cout << "      " << name << " = " << e(value) << "\n";
  };
  if (!rule->must_match.empty()) {
    std::cout << "\nMatches:\n";
    for (const RuleExample& example : rule->must_match) show(example);
  }
  if (!rule->must_not_match.empty()) {
    std::cout << "\nDoes not match:\n";
    for (const RuleExample& example : rule->must_not_match) show(example);
  }
  return kExitClean;
}

}  // namespace logrx::cli
