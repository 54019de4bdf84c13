// SPDX-License-Identifier: MIT
// Examples go through the same path as log lines (line parser, selector set,
// dialect filter, capture extraction) so a passing example proves the rule
// fires in a real scan, not only that its regex matches.
#include <sstream>

#include "logrx/line.h"
#include "logrx/rulebook.h"
#include "match/rulebook_impl.h"

namespace logrx {
namespace {

std::string describe(const std::map<std::string, std::string>& captures) {
  if (captures.empty()) return "{}";
  std::ostringstream out;
  out << "{";
  const char* sep = "";
  for (const auto& [name, value] : captures) {
    out << sep << name << "=\"" << value << "\"";
    sep = ", ";
  }
  out << "}";
  return out.str();
}

bool fires(const Rulebook::Impl& impl, std::size_t index, const LineEvent& event,
           std::vector<int>& scratch) {
  if (!impl.candidates(event.message, scratch)) return false;
  for (int candidate : scratch)
    if (static_cast<std::size_t>(candidate) == index) return impl.applies_to(index, event.dialect);
  return false;
}

}  // namespace

ExampleReport test_examples(const Rulebook& book) {
  const Rulebook::Impl& impl = RulebookAccess::impl(book);
  ExampleReport report;
  report.rules = impl.rules.size();
  LineEvent event;
  std::vector<int> scratch;
  for (std::size_t index = 0; index < impl.rules.size(); ++index) {
    const RuleSpec& rule = impl.rules[index];
    auto fail = [&](const std::string& line, const std::string& reason) {
      report.failures.push_back(ExampleFailure{rule.id, rule.file, line, reason});
    };
    if (rule.must_match.empty()) fail("", "the rule has no example that must match");
    if (rule.must_not_match.empty()) fail("", "the rule has no example that must not match");

    for (const RuleExample& example : rule.must_match) {
      ++report.examples;
      parse_line(example.line, 1, event);
      if (!fires(impl, index, event, scratch)) {
        fail(example.line, "must match, but the rule did not fire (message seen: \"" +
                               event.message + "\", dialect " +
                               std::string(to_string(event.dialect)) + ")");
        continue;
      }
      std::map<std::string, std::string> captures;
      impl.extract(index, event.message, captures);
      if (captures != example.captures)
        fail(example.line, "captures differ: expected " + describe(example.captures) + ", got " +
                                describe(captures));
    }
    for (const std::string& line : rule.must_not_match) {
      ++report.examples;
      parse_line(line, 1, event);
      if (fires(impl, index, event, scratch)) fail(line, "must not match, but the rule fired");
    }
  }
  return report;
}

}  // namespace logrx
