// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <re2/re2.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "logrx/analyzer.h"
#include "logrx/rulebook.h"
#include "match/rulebook_impl.h"
#include "rules/capture_names.h"
#include "support/test_support.h"

using logrx::Diagnostics;
using logrx::Rulebook;
using logrx::test::rule_file;
using logrx::test::rule_json;
using logrx::test::TempDir;

TEST_CASE("A bad pattern is reported with RE2's message, the rule and its position",
          "[match][rulebook]") {
  TempDir dir;
  std::string file =
      dir.write("bad.json", "{\"rules\": [\n" + rule_json("x.bad", "Not enough (memory") + "\n]}");
  Diagnostics errors;
  REQUIRE_FALSE(Rulebook::load({{dir.path()}}, errors).has_value());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == "rule.bad-pattern");
  CHECK(errors[0].rule_id == "x.bad");
  CHECK(errors[0].file == file);
  CHECK(errors[0].line == 2);
  CHECK(errors[0].json_pointer == "/rules/0/pattern");
  CHECK(errors[0].message.find("missing )") != std::string::npos);
}

TEST_CASE("Lint rejects patterns that match every line", "[match][rulebook]") {
  // Loading compiles no rule's own regex (that waits for its first candidate
  // line), so this check, which needs it, is lint's.
  TempDir dir;
  dir.write("a.json", rule_file(rule_json("x.all", "(?:abc)?")));
  Diagnostics errors = Rulebook::lint({{dir.path()}});
  bool found = std::any_of(errors.begin(), errors.end(), [](const logrx::Diagnostic& d) {
    return d.code == "rule.matches-everything" && d.rule_id == "x.all" &&
           d.json_pointer == "/rules/0/pattern";
  });
  CHECK(found);
}

TEST_CASE("Capture groups read from a pattern's text are the ones RE2 compiles, for every built-in rule",
          "[match][rulebook]") {
  Rulebook book = logrx::test::load_builtin();
  int checked = 0;
  for (const logrx::RuleSpec& rule : book.rules()) {
    if (rule.trigger != logrx::Trigger::Line) continue;
    re2::RE2 regex(rule.pattern);
    REQUIRE(regex.ok());
    std::vector<std::string> expected(static_cast<std::size_t>(regex.NumberOfCapturingGroups()) + 1);
    for (const auto& [name, index] : regex.NamedCapturingGroups())
      expected[static_cast<std::size_t>(index)] = name;
    INFO(rule.id << ": " << rule.pattern);
    CHECK(logrx::capture_groups(rule.pattern) == expected);
    ++checked;
  }
  CHECK(checked > 500);
  // The corners of the syntax: an escaped parenthesis, classes holding
  // parentheses and a leading ']', quoted text, a named class.
  const std::string corners = R"re(a\(b(c)[(](?:d)(?P<x>e)[^]()]\Q(f)\E(?i:g)([[:alpha:]](h)))re";
  re2::RE2 regex(corners);
  REQUIRE(regex.ok());
  CHECK(regex.NumberOfCapturingGroups() == 4);
  CHECK(logrx::capture_groups(corners) == std::vector<std::string>{"", "", "x", "", ""});
}

TEST_CASE("A pattern's top-level alternatives match exactly the lines it matches, for every built-in rule",
          "[match][rulebook]") {
  using logrx::split_alternatives;
  CHECK(split_alternatives("abc").empty());
  CHECK(split_alternatives("(?:a|b)c").empty());
  CHECK(split_alternatives("(a|b)").empty());
  CHECK(split_alternatives("[|]x").empty());
  CHECK(split_alternatives(R"(a\|b)").empty());
  CHECK(split_alternatives(R"(\Qa|b\E)").empty());
  CHECK(split_alternatives("a|b") == std::vector<std::string>{"a", "b"});
  CHECK(split_alternatives("(?:a|(b|c))") == std::vector<std::string>{"a", "(b|c)"});
  CHECK(split_alternatives("(?i)(?:a|b)") == std::vector<std::string>{"(?i)a", "(?i)b"});
  CHECK(split_alternatives("(?:a)|(?:b)") == std::vector<std::string>{"(?:a)", "(?:b)"});
  CHECK(split_alternatives("[]|]x|y") == std::vector<std::string>{"[]|]x", "y"});
  Rulebook book = logrx::test::load_builtin();
  int split = 0;
  for (const logrx::RuleSpec& rule : book.rules()) {
    if (rule.trigger != logrx::Trigger::Line) continue;
    std::vector<std::string> parts = split_alternatives(rule.pattern);
    if (parts.empty()) continue;
    ++split;
    re2::RE2 whole(rule.pattern);
    std::vector<std::unique_ptr<re2::RE2>> alternatives;
    for (const std::string& part : parts) {
      alternatives.push_back(std::make_unique<re2::RE2>(part));
      INFO(rule.id << ": " << part);
      REQUIRE(alternatives.back()->ok());
    }
    for (const auto* examples : {&rule.must_match, &rule.must_not_match}) {
      for (const logrx::RuleExample& example : *examples) {
        std::vector<std::string> lines = example.log;
        if (!example.line.empty()) lines.push_back(example.line);
        for (const std::string& line : lines) {
          bool any = std::any_of(alternatives.begin(), alternatives.end(), [&](const auto& regex) {
            return re2::RE2::PartialMatch(line, *regex);
          });
          INFO(rule.id << ": " << line);
          CHECK(any == re2::RE2::PartialMatch(line, whole));
        }
      }
    }
  }
  CHECK(split > 50);
}

// clear_potentials searches a whole block once for such a pattern: a
// message it matches must leave the pattern matching inside any block.
TEST_CASE("A block-searchable pattern matches wherever its line sits in a block", "[match][rulebook]") {
  using logrx::block_searchable;
  CHECK(block_searchable("KV cache pool is full"));
  CHECK(block_searchable("[^a]b\\$c"));
  CHECK_FALSE(block_searchable("^Killed$"));
  CHECK_FALSE(block_searchable("\\bOOM\\b"));
  CHECK_FALSE(block_searchable("(?:x|y$)"));
  Rulebook book = logrx::test::load_builtin();
  int searchable = 0;
  for (const logrx::RuleSpec& rule : book.rules()) {
    if (rule.trigger != logrx::Trigger::Line || !block_searchable(rule.pattern)) continue;
    ++searchable;
    re2::RE2 regex(rule.pattern);
    for (const logrx::RuleExample& example : rule.must_match) {
      if (example.line.empty() || !re2::RE2::PartialMatch(example.line, regex)) continue;
      INFO(rule.id << ": " << example.line);
      CHECK(re2::RE2::PartialMatch("[2026-07-01 16:00:00 TP0] x\n] " + example.line + " \nnext line\n", regex));
    }
  }
  CHECK(searchable > 300);
}

// A rule the prefilter cannot rule out is checked line by line in every block.
TEST_CASE("The built-in rulebook's block prefilter covers every rule it should", "[match][rulebook]") {
  Rulebook book = logrx::test::load_builtin();
  const logrx::Rulebook::Impl& impl = logrx::RulebookAccess::impl(book);
  REQUIRE(impl.has_prefilter());
  for (std::size_t index : impl.unfiltered_rules) FAIL_CHECK(impl.rules[index].id << " is not prefilterable");
  for (std::size_t index : impl.split_rules) FAIL_CHECK(impl.rules[index].id << " is filtered by its alternatives");
}

// The build precomputes the built-in patterns' prefilter (tools/prefilter_table.cc):
// a table that fell behind the rules would silently bring back FilteredRE2's
// start-up cost.
TEST_CASE("The built-in rules' block prefilter comes from the build's table", "[match][rulebook]") {
  Rulebook book = logrx::test::load_builtin();
  const logrx::Rulebook::Impl& impl = logrx::RulebookAccess::impl(book);
  REQUIRE(impl.prefilter_cheap());
  REQUIRE(impl.has_prefilter());
  CHECK(impl.tabled_patterns + 8 >= impl.prefilter_rules.size());
  CHECK(impl.fallback_ids.size() == impl.prefilter_rules.size() - impl.tabled_patterns);
  Rulebook untabled = logrx::test::load_builtin_untabled();
  const logrx::Rulebook::Impl& other = logrx::RulebookAccess::impl(untabled);
  CHECK_FALSE(other.prefilter_cheap());
  REQUIRE(other.has_prefilter());
  CHECK(other.tabled_patterns == 0);
  CHECK(other.prefilter_rules.size() == impl.prefilter_rules.size());
}

namespace {

// Every line of every log under corpus/ and every line of every rule example.
std::vector<std::string> corpus_and_example_lines(const Rulebook& book) {
  std::vector<std::string> lines;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(LOGRX_SOURCE_DIR "/corpus")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".log") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  for (const logrx::RuleSpec& rule : book.rules()) {
    for (const auto* examples : {&rule.must_match, &rule.must_not_match}) {
      for (const logrx::RuleExample& example : *examples) {
        lines.insert(lines.end(), example.log.begin(), example.log.end());
        if (!example.line.empty()) lines.push_back(example.line);
      }
    }
  }
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  return lines;
}

void check_line_paths_agree(const Rulebook& book, const std::vector<std::string>& lines) {
  const logrx::Rulebook::Impl& impl = logrx::RulebookAccess::impl(book);
  std::vector<int> through_prefilter;
  std::vector<int> through_selector;
  std::size_t matched = 0;
  for (const std::string& line : lines) {
    REQUIRE(impl.prefiltered_candidates(line, through_prefilter));
    REQUIRE(impl.selector_candidates(line, through_selector));
    INFO(line);
    CHECK(through_prefilter == through_selector);
    if (!through_selector.empty()) ++matched;
  }
  CHECK(matched > lines.size() / 10);
}

}  // namespace

// candidates() asks the line's atoms which rules to try, and a selector of
// the rest; it must find exactly what the selector of all rules finds.
TEST_CASE("A line matched through the prefilter finds exactly what the whole rulebook's selector finds",
          "[match][rulebook]") {
  Rulebook book = logrx::test::load_builtin();
  std::vector<std::string> lines = corpus_and_example_lines(book);
  REQUIRE(lines.size() > 10000);
  check_line_paths_agree(book, lines);
  // A user's rule the table does not know goes to FilteredRE2 beside it.
  std::vector<logrx::RuleSpec> rules = book.rules();
  logrx::RuleSpec extra;
  extra.id = "zz.user.custom-rule";
  extra.title = "custom";
  extra.category = logrx::Category::Other;
  extra.severity = logrx::Severity::Error;
  extra.servers = {"any"};
  extra.pattern = "(?:custom failure (?P<code>\\d+)|another custom wording)";
  extra.explanation = "a user's rule";
  rules.push_back(extra);
  Diagnostics errors;
  auto mixed = Rulebook::compile(std::move(rules), book.server_flags(), errors);
  REQUIRE(mixed.has_value());
  const logrx::Rulebook::Impl& impl = logrx::RulebookAccess::impl(*mixed);
  REQUIRE(impl.prefilter_cheap());
  REQUIRE(impl.has_prefilter());
  CHECK(impl.fallback_ids.size() >= 1);
  lines.push_back("[2026-07-01 16:00:00 TP0] worker: custom failure 42 while serving");
  lines.push_back("ANOTHER CUSTOM WORDING of it");
  check_line_paths_agree(*mixed, lines);
  std::vector<int> found;
  REQUIRE(impl.candidates("custom failure 42", found));
  CHECK(std::any_of(found.begin(), found.end(), [&impl](int rule) {
    return impl.rules[static_cast<std::size_t>(rule)].id == "zz.user.custom-rule";
  }));
}

TEST_CASE("Lint warns of a rule the block prefilter cannot rule out, which still matches",
          "[match][rulebook]") {
  TempDir dir;
  // RE2 factors "--x-layers" and "-ngl" apart; "-ngl=" alone is shorter than an atom.
  dir.write("a.json", rule_file(rule_json("x.short", "(?:^|\\\\s)(?:--x-layers|-ngl)[= ]\\\\d+") + "," +
                                rule_json("x.long", "model runner has stopped")));
  Diagnostics errors = Rulebook::lint({{dir.path()}});
  auto has = [&](const std::string& id) {
    return std::any_of(errors.begin(), errors.end(), [&](const logrx::Diagnostic& d) {
      return d.code == "rule.not-prefilterable" && d.rule_id == id && d.json_pointer == "/rules/0/pattern";
    });
  };
  CHECK(has("x.short"));
  CHECK_FALSE(has("x.long"));
  // With the built-in rules, the prefilter still works for the others (the
  // serving traffic takes the light path), and the rule still matches.
  Diagnostics load_errors;
  auto book = Rulebook::load({{logrx::test::builtin_rules_dir()}, {dir.path()}}, load_errors);
  REQUIRE(book);
  REQUIRE(logrx::RulebookAccess::impl(*book).has_prefilter());
  std::string log = "[2026-07-01 15:19:59] The server is fired up and ready to roll!\n";
  for (int i = 0; i < 20000; ++i)
    log += "[2026-07-01 16:00:00 TP0] Decode batch, #running-req: 1, #token: 5, token usage: 0.01, "
           "cuda graph: True, gen throughput (token/s): 1.5, #queue-req: 0, \n";
  log += "./llama-server -m m.gguf -ngl 99\n";
  log += "[2026-07-01 16:00:00 TP0] Decode batch, #running-req: 1, #token: 5, token usage: 0.01, "
         "cuda graph: True, gen throughput (token/s): 1.5, #queue-req: 0, \n";
  logrx::Analyzer analyzer(*book, logrx::AnalyzerOptions{});
  analyzer.feed(log);
  logrx::Report report = analyzer.finish();
  CHECK(analyzer.prefiltered_lines() > 10000);
  bool matched = std::any_of(report.findings.begin(), report.findings.end(),
                             [](const logrx::Finding& f) { return f.rule_id == "x.short"; });
  CHECK(matched);
}

TEST_CASE("A capture named like a run variable is rejected, since it could never be read",
          "[match][rulebook]") {
  TempDir dir;
  dir.write("a.json", rule_file(rule_json("x.shadow", "cut(?P<truncated>!)?")));
  Diagnostics errors;
  REQUIRE_FALSE(Rulebook::load({{dir.path()}}, errors).has_value());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == "rule.capture-shadows-variable");
  CHECK(errors[0].rule_id == "x.shadow");
}

TEST_CASE("Remediation may only refer to captures the pattern has", "[match][rulebook]") {
  TempDir dir;
  dir.write("a.json",
            rule_file("{\"id\": \"x.ref\", \"title\": \"t\", \"category\": \"other\", "
                      "\"severity\": \"error\", \"servers\": [\"any\"], \"pattern\": "
                      "\"value=(?P<v>\\\\d+)\", \"explanation\": \"e\", \"remediation\": ["
                      "{\"flag\": \"--a\", \"value\": \"{v}\"}, {\"flag\": \"--b\", \"value\": "
                      "\"{w}\"}, {\"flag\": \"--c\", \"why\": \"unclosed {v\"}], \"examples\": "
                      "{\"match\": [], \"no_match\": []}}"));
  Diagnostics errors;
  REQUIRE_FALSE(Rulebook::load({{dir.path()}}, errors).has_value());
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].code == "rule.unknown-capture");
  CHECK(errors[0].json_pointer == "/rules/0/remediation/1/value");
  CHECK(errors[1].code == "rule.bad-template");
}

// One capture name in two alternatives (two wordings of one message): RE2
// refuses that, so the loader renames the later uses and reads them back.
TEST_CASE("A capture name may be used in several alternatives", "[match][rulebook]") {
  TempDir dir;
  dir.write("a.json", R"json({"version": 1, "rules": [
    {"id": "x.two-wordings", "title": "{resource} is short", "category": "other", "severity": "error",
     "servers": ["any"], "explanation": "e", "remediation": [],
     "pattern": "(?:Insufficient (?P<resource>[a-z]+) \\((?P<count>\\d+)\\)|(?P<count>\\d+) Insufficient (?P<resource>[a-z.]+))",
     "examples": {"match": [{"line": "0/3 nodes are available: 3 Insufficient memory.", "captures": {"count": "3", "resource": "memory."}},
                            {"line": "predicates:: Insufficient cpu (9)", "captures": {"resource": "cpu", "count": "9"}}],
                  "no_match": ["all nodes are available"]}}]})json");
  Diagnostics errors;
  auto book = Rulebook::load({{dir.path()}}, errors);
  for (const auto& e : errors) UNSCOPED_INFO(e.code << ": " << e.message);
  REQUIRE(book.has_value());
  CHECK(Rulebook::lint({{dir.path()}}).empty());
  auto report = logrx::test_examples(*book);
  for (const auto& f : report.failures) UNSCOPED_INFO(f.reason);
  CHECK(report.failures.empty());
  std::map<std::string, std::string> captures;
  REQUIRE(book->match_rule(0, "predicates:: Insufficient cpu (9)", captures));
  CHECK(captures == std::map<std::string, std::string>{{"count", "9"}, {"resource", "cpu"}});
  // The renaming leaves classes, escapes and lookalikes alone.
  CHECK(logrx::detail::rename_duplicate_captures(R"r((?P<a>x)[(?P<a>]\((?P<a>y)(?P<b>z)(?P<a>w))r") ==
        R"r((?P<a>x)[(?P<a>]\((?P<a__dup2>y)(?P<b>z)(?P<a__dup3>w))r");
  CHECK(logrx::detail::canonical_capture_name("a__dup12") == "a");
  CHECK(logrx::detail::canonical_capture_name("a__dupx") == "a__dupx");
  CHECK(logrx::detail::canonical_capture_name("__dup2") == "__dup2");
}

TEST_CASE("match_rule extracts the named captures that took part", "[match][rulebook]") {
  TempDir dir;
  dir.write("a.json", rule_file(rule_json(
                          "x.cap", "reset to (?P<n>\\\\d+)(?: for (?P<why>[^.]+))?")));
  Diagnostics errors;
  auto book = Rulebook::load({{dir.path()}}, errors);
  REQUIRE(book.has_value());
  std::map<std::string, std::string> captures;
  REQUIRE(book->match_rule(0, "is reset to 48 for speculat", captures));
  CHECK(captures == std::map<std::string, std::string>{{"n", "48"}, {"why", "speculat"}});
  REQUIRE(book->match_rule(0, "is reset to 7", captures));
  CHECK(captures == std::map<std::string, std::string>{{"n", "7"}});
  CHECK_FALSE(book->match_rule(0, "nothing here", captures));
  CHECK_FALSE(book->match_rule(5, "reset to 1", captures));
}

TEST_CASE("Rule examples are checked through the whole pipeline", "[match][examples]") {
  TempDir dir;
  dir.write("a.json",
            rule_file("{\"id\": \"sg.only\", \"title\": \"t\", \"category\": \"other\", "
                      "\"severity\": \"error\", \"servers\": [\"sglang\"], \"pattern\": "
                      "\"boom (?P<n>\\\\d+)\", \"explanation\": \"e\", \"remediation\": [], "
                      "\"examples\": {\"match\": [{\"line\": \"[2026-01-01 00:00:00] boom 1\", "
                      "\"captures\": {\"n\": \"2\"}}, \"(APIServer pid=1) INFO 01-01 00:00:00 "
                      "[a.py:1] boom 3\"], \"no_match\": [\"[2026-01-01 00:00:00] boom 4\", "
                      "\"(APIServer pid=1) INFO 01-01 00:00:00 [a.py:1] boom 5\"]}}," +
                      rule_json("x.empty", "never")));
  Diagnostics errors;
  auto book = Rulebook::load({{dir.path()}}, errors);
  REQUIRE(book.has_value());
  auto report = logrx::test_examples(*book);
  CHECK(report.rules == 2);
  CHECK(report.examples == 4);
  std::vector<std::string> reasons;
  for (const auto& f : report.failures) reasons.push_back(f.rule_id + ": " + f.reason);
  REQUIRE(reasons.size() == 5);
  // captures differ; a vLLM line must not fire an SGLang rule; the SGLang no_match fires.
  CHECK(reasons[0].find("sg.only: captures differ") == 0);
  CHECK(reasons[1].find("sg.only: must match, but the rule did not fire") == 0);
  CHECK(reasons[2].find("sg.only: must not match") == 0);
  CHECK(reasons[3] == "x.empty: the rule has no example that must match");
  CHECK(reasons[4] == "x.empty: the rule has no example that must not match");
}

// A no_match log may show the finding explained away: demoted, it reports
// nothing wrong; a no_match log where it stays an error still fails.
TEST_CASE("A no_match example may be a log that demotes the finding", "[match][examples]") {
  TempDir dir;
  dir.write("a.json", R"json({"version": 1, "rules": [
    {"id": "x.no-gpu", "title": "t", "category": "config_conflict", "severity": "error",
     "servers": ["any"], "pattern": "no usable GPU found", "explanation": "e", "remediation": [],
     "demote_when": "defined(gpu_seen)",
     "examples": {"match": ["no usable GPU found"],
                  "no_match": [{"log": ["no usable GPU found", "found 1 CUDA devices"]},
                               {"log": ["no usable GPU found", "still nothing"]}]}},
    {"id": "x.gpu-seen", "title": "t", "category": "info", "severity": "info", "servers": ["any"],
     "pattern": "found (?P<n>\\d+) CUDA devices", "explanation": "e", "remediation": [],
     "silent": true, "facts": {"gpu_seen": "n"},
     "examples": {"match": ["found 2 CUDA devices"], "no_match": ["found no CUDA devices"]}}]})json");
  Diagnostics errors;
  auto book = Rulebook::load({{dir.path()}}, errors);
  REQUIRE(book.has_value());
  auto report = logrx::test_examples(*book);
  std::vector<std::string> reasons;
  for (const auto& f : report.failures) reasons.push_back(f.rule_id + ": " + f.reason + " [" + f.line + "]");
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0] == "x.no-gpu: must not match, but the rule fired [no usable GPU found / still nothing]");
}

TEST_CASE("The built-in rulebook loads and all its examples pass", "[match][builtin]") {
  Rulebook book = logrx::test::load_builtin();
  CHECK(book.size() >= 5);
  for (const char* id :
       {"sglang.memory.max-running-requests-reset", "sglang.config.spec-radix-no-buffer",
        "sglang.memory.not-enough-memory", "pytorch.cuda.out-of-memory",
        "vllm.memory.no-cache-blocks"})
    CHECK(book.find(id) != nullptr);
  auto report = logrx::test_examples(book);
  for (const auto& f : report.failures) FAIL_CHECK(f.rule_id << ": " << f.line << ": " << f.reason);
}
