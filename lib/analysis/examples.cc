// SPDX-License-Identifier: MIT
// Examples run through a real Analyzer with the whole rulebook, so a passing
// example proves the rule fires in a scan (line parser, selector, dialect
// filter, conditions, facts of the run), not only that its regex matches.
#include <algorithm>
#include <set>
#include <sstream>

#include "logrx/analyzer.h"
#include "logrx/rulebook.h"

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

const Finding* scan_for(const Rulebook& book, const RuleExample& example, const std::string& id,
                        Report& report) {
  AnalyzerOptions options;
  options.stream_name = "example";
  options.include_silent = true;
  options.check_templates = true;
  Analyzer analyzer(book, options);
  if (example.log.empty()) {
    analyzer.feed_line(example.line);
  } else {
    for (const std::string& line : example.log) analyzer.feed_line(line);
  }
  report = analyzer.finish();
  for (const Finding& f : report.findings)
    if (f.rule_id == id) return &f;
  return nullptr;
}

// A computed item (an expression, or a value with {= ...} or {capture}) can
// be wrong in ways the pattern tests never see, so its value must be pinned by
// an example.
bool is_computed(const RemediationSpec& item) {
  if (!item.expr.empty()) return true;
  return item.value && item.value->find('{') != std::string::npos;
}

std::string values_of(const Finding& finding, const std::string& name) {
  std::string out;
  for (const RemediationItem& item : finding.remediation) {
    if (item.name != name) continue;
    out += (out.empty() ? "\"" : ", \"") + item.value.value_or("") + "\"";
  }
  return out.empty() ? "nothing" : out;
}

bool prescribes(const Finding& finding, const std::string& name, const std::string& value) {
  for (const RemediationItem& item : finding.remediation)
    if (item.name == name && item.value.value_or("") == value) return true;
  return false;
}

std::string shown(const RuleExample& example) {
  if (example.log.empty()) return example.line;
  std::string out;
  for (const std::string& line : example.log) out += (out.empty() ? "" : " / ") + line;
  return out;
}

}  // namespace

ExampleReport test_examples(const Rulebook& book) {
  ExampleReport report;
  report.rules = book.size();
  Report scan;
  for (const RuleSpec& rule : book.rules()) {
    auto fail = [&](const std::string& line, const std::string& reason) {
      report.failures.push_back(ExampleFailure{rule.id, rule.file, line, reason});
    };
    // Engine rules are emitted by the analyzer itself (stale output); their
    // behaviour is covered by the corpus.
    if (rule.trigger != Trigger::Engine) {
      if (rule.must_match.empty()) fail("", "the rule has no example that must match");
      if (rule.must_not_match.empty()) fail("", "the rule has no example that must not match");
    }
    for (const RuleExample& example : rule.must_match) {
      ++report.examples;
      const Finding* f = scan_for(book, example, rule.id, scan);
      if (f == nullptr) {
        fail(shown(example), "must match, but the rule did not fire");
        continue;
      }
      for (const ScanDiagnostic& d : scan.diagnostics)
        if (d.message.find("rule " + rule.id + ":") == 0) fail(shown(example), d.message);
      if (example.check_captures && f->captures != example.captures)
        fail(shown(example), "captures differ: expected " + describe(example.captures) +
                                 ", got " + describe(f->captures));
      for (const auto& [name, value] : example.remediation)
        if (!prescribes(*f, name, value))
          fail(shown(example), "remediation " + name + ": expected \"" + value + "\", got " +
                                   values_of(*f, name));
    }
    std::set<std::string> checked;
    for (const RemediationSpec& item : rule.remediation) {
      if (!is_computed(item) || !checked.insert(item.name).second) continue;
      bool pinned = std::any_of(rule.must_match.begin(), rule.must_match.end(),
                                [&](const RuleExample& e) { return e.remediation.count(item.name) > 0; });
      if (!pinned)
        fail("", "computed remediation " + item.name +
                     " has no match example that pins its value (\"remediation\": {\"" +
                     item.name + "\": \"...\"})");
    }
    for (const RuleExample& example : rule.must_not_match) {
      ++report.examples;
      const Finding* f = scan_for(book, example, rule.id, scan);
      // A log whose later lines explain the finding away (demote_when) is
      // one the rule reports nothing wrong in.
      bool demoted = f != nullptr && !rule.demote_when.empty() && rule.severity != Severity::Info &&
                     f->severity == Severity::Info;
      if (f != nullptr && !demoted) fail(shown(example), "must not match, but the rule fired");
    }
  }
  return report;
}

}  // namespace logrx
