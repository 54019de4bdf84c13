// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "logrx/output.h"
#include "support/test_support.h"

using logrx::test::load_builtin;
using nlohmann::json;

namespace {

logrx::Report two_files() {
  auto book = load_builtin();
  logrx::AnalyzerOptions a;
  a.stream_name = "logs/sglang server.log";
  logrx::Analyzer first(book, a);
  first.feed(
      "[2026-05-23 08:03:04] Scheduler hit an exception: Traceback (most recent call last):\n"
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current "
      "value: mem_fraction_static=0.8\n");
  logrx::AnalyzerOptions b;
  b.stream_name = "vllm.log";
  logrx::Analyzer second(book, b);
  second.feed(
      "(APIServer pid=1) INFO 12-25 04:48:38 [api_server.py:1351] vLLM API server version 0.13.0\n"
      "(APIServer pid=1) INFO:     Application startup complete.\n"
      "(APIServer pid=1) WARNING 12-25 04:49:58 [a.py:1] TypeError: 'NoneType' object is not "
      "subscriptable\n");
  return logrx::merge_reports({first.finish(), second.finish()});
}

}  // namespace

TEST_CASE("SARIF output has the essentials of the 2.1.0 schema", "[report][sarif]") {
  auto book = load_builtin();
  auto report = two_files();
  json doc = json::parse(logrx::to_sarif(report, book));
  CHECK(doc.at("version") == "2.1.0");
  CHECK(doc.at("$schema").get<std::string>().find("sarif-2.1.0") != std::string::npos);
  REQUIRE(doc.at("runs").is_array());
  REQUIRE(doc.at("runs").size() == 1);  // one run per invocation, several files in it
  const json& run = doc.at("runs")[0];
  const json& driver = run.at("tool").at("driver");
  CHECK(driver.at("name") == "logrx");
  CHECK(driver.at("version").is_string());
  const json& rules = driver.at("rules");
  REQUIRE(rules.is_array());
  std::set<std::string> ids;
  for (const json& rule : rules) {
    CHECK(rule.at("id").is_string());
    CHECK(ids.insert(rule.at("id").get<std::string>()).second);  // each rule once
    CHECK(rule.at("shortDescription").at("text").is_string());
    CHECK(rule.at("fullDescription").at("text").is_string());
    CHECK(rule.at("help").at("text").is_string());
    CHECK(std::set<std::string>{"error", "warning", "note", "none"}.count(
              rule.at("defaultConfiguration").at("level").get<std::string>()) == 1);
    if (rule.contains("helpUri")) CHECK(rule.at("helpUri").get<std::string>().rfind("http", 0) == 0);
  }
  const json& oom_rule = rules[std::distance(
      rules.begin(), std::find_if(rules.begin(), rules.end(), [](const json& r) {
        return r.at("id") == "sglang.memory.not-enough-memory";
      }))];
  CHECK(oom_rule.at("help").at("text").get<std::string>().find("--mem-fraction-static") !=
        std::string::npos);

  const json& results = run.at("results");
  REQUIRE(results.size() == report.findings.size());
  std::set<std::string> uris;
  for (const json& result : results) {
    std::string id = result.at("ruleId");
    auto index = result.at("ruleIndex").get<std::size_t>();
    REQUIRE(index < rules.size());
    CHECK(rules[index].at("id") == id);
    CHECK(std::set<std::string>{"error", "warning", "note", "none"}.count(
              result.at("level").get<std::string>()) == 1);
    CHECK_FALSE(result.at("message").at("text").get<std::string>().empty());
    const json& location = result.at("locations").at(0).at("physicalLocation");
    uris.insert(location.at("artifactLocation").at("uri").get<std::string>());
    CHECK(location.at("region").at("startLine").get<int>() >= 1);
  }
  CHECK(uris == std::set<std::string>{"logs/sglang%20server.log", "vllm.log"});
  for (const json& result : results) {
    if (result.at("ruleId") == "sglang.memory.not-enough-memory") CHECK(result.at("level") == "error");
    if (result.at("ruleId") == "client.openai.none-content") CHECK(result.at("level") == "warning");
  }
}

TEST_CASE("GitHub workflow commands escape data and properties", "[report][github]") {
  CHECK(logrx::escape_github_data("50% done\r\nnext") == "50%25 done%0D%0Anext");
  CHECK(logrx::escape_github_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A");
  CHECK(logrx::escape_github_data("a:b,c") == "a:b,c");

  auto text = logrx::to_github_annotations(two_files());
  CHECK(text.find("::error file=logs/sglang server.log,line=2,") != std::string::npos);
  CHECK(text.find("title=sglang.memory.not-enough-memory%3A Not enough GPU memory") != std::string::npos);
  CHECK(text.find("::warning file=vllm.log,line=3,") != std::string::npos);
  // One command per line: no raw newline inside a message.
  std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  CHECK(lines == two_files().findings.size());
}

TEST_CASE("GitHub annotation properties and data carry no control characters", "[report][github]") {
  // The reproducer: BS, BEL, C1 CSI and RLO in captured text reach title=.
  logrx::Report report;
  logrx::Finding f;
  f.rule_id = "r";
  f.file = "srv\xE2\x80\xAE\x07.log";
  f.line = 1;
  f.title = "t \x08\x07\xC2\x9B" "31m\xE2\x80\xAE\xE2\x80\x8B";
  f.message = "m \x1b[2J\xE2\x81\xA6";
  f.severity = logrx::Severity::Error;
  report.findings.push_back(f);
  std::string out = logrx::to_github_annotations(report);
  for (const char* raw : {"\x08", "\x07", "\x1b", "\xC2\x9B", "\xE2\x80\xAE", "\xE2\x80\x8B", "\xE2\x81\xA6"}) {
    INFO(raw);
    CHECK(out.find(raw) == std::string::npos);
  }
  CHECK(out == "::error file=srv\\u202e\\x07.log,line=1,title=r%3A t \\x08\\x07\\u009b31m\\u202e\\u200b::"
               "t \\x08\\x07\\u009b31m\\u202e\\u200b: m \\x1b[2J\\u2066\n");
  CHECK(logrx::escape_github_property("a\xC2\x85" "b") == "a\\u0085b");
}
