// SPDX-License-Identifier: MIT
#include "rules_cmd.h"

#include <algorithm>
#include <iostream>

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

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    } else {
      out += c;
    }
  }
  return out + "\"";
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
}

int run_rules_list(const RulesOptions& options) {
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  if (options.format == "json") {
    std::cout << "[\n";
    const auto& rules = book->rules();
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const RuleSpec& r = rules[i];
      std::vector<std::string> servers;
      for (const std::string& s : r.servers) servers.push_back(json_string(s));
      std::cout << "  {\"id\": " << json_string(r.id) << ", \"severity\": \""
                << to_string(r.severity) << "\", \"category\": \"" << to_string(r.category)
                << "\", \"servers\": [" << join(servers, ", ") << "], \"title\": "
                << json_string(r.title) << ", \"file\": " << json_string(r.file) << "}"
                << (i + 1 < rules.size() ? "," : "") << "\n";
    }
    std::cout << "]\n";
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

}  // namespace logrx::cli
