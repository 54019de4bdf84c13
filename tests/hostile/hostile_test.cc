// SPDX-License-Identifier: MIT
// Hostile input at the library level: each case ends with a clear result or a
// clear error, in bounded time.
#include <catch2/catch.hpp>
#include <limits>
#include <sstream>
#include <set>

#include "logrx/analyzer.h"
#include "logrx/budget.h"
#include "logrx/line.h"
#include "logrx/output.h"
#include <nlohmann/json.hpp>
#include "support/test_support.h"

using logrx::test::load_builtin;
using logrx::test::rule_file;
using logrx::test::scan_text;
using logrx::test::TempDir;

TEST_CASE("A line that matches every rule is handled", "[hostile]") {
  auto book = load_builtin();
  // Concatenate the message of each line rule's first example into one line.
  std::string line;
  logrx::LineEvent event;
  for (const auto& rule : book.rules()) {
    if (rule.trigger != logrx::Trigger::Line || rule.must_match.empty()) continue;
    const auto& example = rule.must_match.front();
    if (!example.log.empty()) continue;
    logrx::parse_line(example.line, 1, event);
    line += event.message + " ";
  }
  // A hang is caught by ctest's timeout; a wall-clock assertion here failed
  // on a loaded machine (time is not what this test is about).
  auto report = scan_text(book, line + "\n" + line + "\n");
  std::set<std::string> fired;
  for (const auto& f : report.findings) fired.insert(f.rule_id);
  CHECK(fired.size() >= 20);
  CHECK_NOTHROW(logrx::to_json(report));
}

TEST_CASE("A config dump nested 10,000 levels deep is refused, not recursed into", "[hostile]") {
  std::string deep = std::string(10000, '[') + std::string(10000, ']');
  auto report = scan_text(load_builtin(),
                          "[2026-05-23 07:40:41] server_args=ServerArgs(model_path='m', x=" + deep + ")\n" +
                              "[2026-05-23 07:40:42] server_args={'a': " + std::string(10000, '{') + "}\n");
  REQUIRE(report.diagnostics.size() == 2);
  CHECK(report.diagnostics[0].message.find("nested") != std::string::npos);
}

TEST_CASE("Regression: a quote or bracket inside <...> does not hide a deep dump (SIGSEGV)",
          "[hostile]") {
  const std::string deep(65000, '[');
  auto report = scan_text(
      load_builtin(),
      "[2026-05-23 07:40:41] server_args=ServerArgs(a=<'>, b=" + deep + ")\n" +
          "[2026-05-23 07:40:42] server_args=ServerArgs(a=<]]]]>, b=" + deep + ")\n" +
          "INFO 05-23 07:40:43 [utils.py:1] non-default args: {'a': <'>, 'b': " + deep + "}\n" +
          "INFO 05-23 07:40:44 [core.py:58] Initializing a V1 LLM engine (v0.9.0) with config: "
          "model='m', a=<'>, b=" + deep + "\n");
  REQUIRE(report.diagnostics.size() == 4);
  for (const auto& d : report.diagnostics) CHECK(d.message.find("nested") != std::string::npos);
}

TEST_CASE("Numbers that overflow in remediation arithmetic drop the item", "[hostile]") {
  auto report = scan_text(
      load_builtin(),
      "ValueError: Free memory on device cuda:0 (99999999999999999999999999999999999999999999999999"
      "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
      "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
      "99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"
      "9999999999.0/0.000000000000000000000000000001 GiB) on startup is less than desired GPU memory "
      "utilization (0.9, 1 GiB)\n"
      "To serve at least one request with the model's max seq len (99999999999999999999), (1e400 GiB "
      "KV cache is needed, which is larger than the available KV cache memory (0.5 GiB). Based on the "
      "available memory, the estimated maximum model length is 99999999999999999999999999.\n");
  for (const auto& f : report.findings)
    for (const auto& item : f.remediation)
      if (item.value) CHECK(item.value->find("inf") == std::string::npos);
  CHECK_NOTHROW(logrx::to_json(report));
}

TEST_CASE("Millions of identical errors stay one finding", "[hostile]") {
  logrx::Analyzer analyzer(load_builtin());
  std::string chunk;
  for (int i = 0; i < 1000; ++i) chunk += "RuntimeError: CUDA error: out of memory\n";
  for (int i = 0; i < 1000; ++i) analyzer.feed(chunk);  // one million lines
  auto report = analyzer.finish();
  REQUIRE(report.findings.size() == 1);
  CHECK(report.findings[0].count == 1000000);
  CHECK(report.summary.lines == 1000000);
}

TEST_CASE("Rule files with every field of the wrong type are reported, not crashed on",
          "[hostile]") {
  TempDir dir;
  dir.write("wrong.json",
            "{\"version\": \"one\", \"rules\": [{\"id\": 1, \"title\": [], \"category\": {}, "
            "\"severity\": true, \"servers\": \"sglang\", \"pattern\": 3.5, \"explanation\": null, "
            "\"remediation\": {}, \"references\": \"x\", \"examples\": [], \"when\": 1, "
            "\"facts\": [], \"phase\": 2, \"starts_run\": \"yes\", \"silent\": 0, "
            "\"wrapper\": [], \"trigger\": false, \"config_dump\": 1, \"config_keys\": {}}, 7, "
            "\"rule\", null]}");
  logrx::Diagnostics errors;
  CHECK_FALSE(logrx::Rulebook::load({{dir.path()}}, errors).has_value());
  CHECK(errors.size() >= 15);
  for (const auto& e : errors) CHECK_FALSE(e.file.empty());
}

TEST_CASE("A huge rule file is refused with a clear error", "[hostile]") {
  TempDir dir;
  dir.write("huge.json", "{\"rules\": [], \"$pad\": \"" + std::string(17u << 20, 'x') + "\"}");
  logrx::Diagnostics errors;
  CHECK_FALSE(logrx::Rulebook::load({{dir.path()}}, errors).has_value());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == "rule.file-too-large");
}

TEST_CASE("A pattern beyond RE2's memory budget is a rule error", "[hostile]") {
  TempDir dir;
  dir.write("big.json", rule_file(logrx::test::rule_json(
                            "x.huge", "((((a{100}){100}){100}){100})|(\\\\w{1000}){1000}")));
  logrx::Diagnostics errors;
  CHECK_FALSE(logrx::Rulebook::load({{dir.path()}}, errors).has_value());
  REQUIRE_FALSE(errors.empty());
  CHECK(errors[0].code == "rule.bad-pattern");
  CHECK(errors[0].rule_id == "x.huge");
}

TEST_CASE("Log text cannot smuggle arguments into remediation values", "[hostile][security]") {
  TempDir dir;
  dir.write("r.json",
            rule_file("{\"id\": \"x.echo\", \"title\": \"t\", \"category\": \"other\", \"severity\": "
                      "\"error\", \"servers\": [\"any\"], \"pattern\": \"strategy=(?P<s>.*)$\", "
                      "\"explanation\": \"e\", \"remediation\": [{\"flag\": \"--x\", \"value\": \"{s}\"}, "
                      "{\"flag\": \"--y\", \"value\": \"a literal, with spaces\"}], \"examples\": "
                      "{\"match\": [], \"no_match\": []}}"));
  logrx::Diagnostics errors;
  auto book = logrx::Rulebook::load({{dir.path()}}, errors);
  REQUIRE(book.has_value());
  auto values = [&](const std::string& line) {
    std::vector<std::string> out;
    for (const auto& f : scan_text(*book, line).findings)
      for (const auto& item : f.remediation) out.push_back(item.name + "=" + item.value.value_or(""));
    return out;
  };
  CHECK(values("strategy=extra_buffer\n") ==
        std::vector<std::string>{"--x=extra_buffer", "--y=a literal, with spaces"});
  for (const char* hostile : {"strategy=x --trust-remote-code\n", "strategy=--enable-evil\n",
                              "strategy=$(rm -rf /)\n", "strategy=a;b\n", "strategy=`id`\n"}) {
    INFO(hostile);
    CHECK(values(hostile) == std::vector<std::string>{"--y=a literal, with spaces"});
  }
}

TEST_CASE("Budget: facts no GPU could print are refused before any arithmetic", "[hostile][budget]") {
  // weights_gb=1e300 once overflowed a double -> int conversion (undefined)
  // and ended in basic_string::_M_create while drawing the bar.
  auto fact = [](double v) {
    logrx::Fact f;
    f.text = std::to_string(v);
    f.number = v;
    return f;
  };
  logrx::RunInfo run;
  run.server = "sglang";
  run.facts["weights_gb"] = fact(1e300);
  run.facts["kv_gb"] = fact(-5);
  run.facts["cuda_graph_gb"] = fact(std::numeric_limits<double>::quiet_NaN());
  run.facts["gpu_total_gb"] = fact(1e-300);
  run.facts["mem_fraction_static"] = fact(7);
  run.facts["available_gpu_mem_gb"] = fact(80);
  run.facts["kv_tokens"] = fact(1e300);
  auto budget = logrx::compute_budget(run);
  CHECK_FALSE(budget.parts[0].gb.has_value());  // weights
  CHECK_FALSE(budget.parts[1].gb.has_value());  // KV cache
  CHECK_FALSE(budget.fraction.has_value());
  CHECK(budget.free_gb == 80);
  std::set<std::string> rejected(budget.rejected.begin(), budget.rejected.end());
  CHECK(rejected.count("weights_gb=1e+300") == 1);
  CHECK(rejected.count("kv_gb=-5") == 1);
  CHECK(rejected.count("mem_fraction_static=7") == 1);
  CHECK(rejected.count("kv_tokens=1e+300") == 1);
  // The bar divides by a 1e-300 GB GPU: every cell count stays in the bar.
  std::ostringstream text;
  REQUIRE_NOTHROW(logrx::write_budget_text(text, budget, false));
  CHECK(text.str().find("Ignored (not a plausible figure): ") != std::string::npos);
  auto bar_start = text.str().find('[');
  auto bar_end = text.str().find(']', bar_start);
  CHECK(bar_end - bar_start - 1 == 60);
  CHECK(logrx::budget_to_json(budget).find("\"rejected\"") != std::string::npos);
  CHECK(logrx::budget_has_figures(budget));
  CHECK_FALSE(logrx::budget_has_figures(logrx::compute_budget(logrx::RunInfo{})));
}

TEST_CASE("Caps: held findings, facts, diagnostics, runs and ranks are bounded and counted",
          "[hostile][caps]") {
  auto book = load_builtin();
  logrx::AnalyzerOptions options;
  options.max_held_findings = 3;
  options.max_facts_per_run = 5;
  options.max_diagnostics = 2;
  options.max_runs = 2;
  options.max_ranks_per_finding = 4;
  logrx::Analyzer analyzer(book, options);
  // Findings of a traceback wait for it to close; a chain of exceptions keeps
  // it open, so past the cap they are stored at once.
  std::string log;
  for (int i = 0; i < 10; ++i) {
    if (i > 0) log += "\nDuring handling of the above exception, another exception occurred:\n\n";
    log += "Traceback (most recent call last):\n  File \"/x/sglang/srt/a.py\", line 1, in f\n"
           "RuntimeError: CUDA error: out of memory " +
           std::to_string(i) + std::string(1000, 'x') + "\n";
  }
  // A config dump of many keys: facts are capped per run.
  log += "INFO 05-23 07:40:44 [core.py:58] Initializing a V1 LLM engine (v0.9.0) with config: ";
  for (int i = 0; i < 50; ++i) log += "key" + std::to_string(i) + "=" + std::to_string(i) + ", ";
  log += "model='m'\n";
  for (int i = 0; i < 5; ++i) log += "[2026-05-23 07:40:41] server_args=ServerArgs(a=[\n";
  for (int i = 0; i < 20; ++i)
    log += "[2026-05-23 07:40:41 TP" + std::to_string(i) + "] Scheduler hit an exception: x\n";
  analyzer.feed(log);
  auto report = analyzer.finish();
  const auto& c = report.summary.capped;
  CHECK(c.held_findings > 0);
  CHECK(c.facts >= 40);
  CHECK(report.diagnostics.size() == 2);
  CHECK(c.diagnostics >= 3);
  CHECK(report.runs.size() == 2);
  CHECK(c.runs >= 3);  // six launches (each ServerArgs dump starts one), two kept
  for (const auto& run : report.runs) CHECK(run.facts.size() <= 5);
  std::size_t most_ranks = 0;
  for (const auto& f : report.findings) most_ranks = std::max(most_ranks, f.ranks.size());
  CHECK(most_ranks == 4);
  CHECK(c.ranks > 0);
  // Every out-of-memory line is still counted, held or not.
  std::size_t ooms = 0;
  for (const auto& f : report.findings)
    if (f.message.find("CUDA error: out of memory") != std::string::npos) ooms += f.count;
  CHECK(ooms == 10);
  auto json = logrx::to_json(report);
  CHECK(json.find("\"capped\"") != std::string::npos);
}

TEST_CASE("Facts in JSON keep their order and values at any count", "[hostile][output]") {
  // The JSON object is appended to, not searched per key (100,000 facts took 25 s).
  logrx::Report report;
  logrx::RunInfo run;
  for (int i = 0; i < 100000; ++i) {
    logrx::Fact f;
    f.text = std::to_string(i);
    f.number = i;
    run.facts.emplace("fact" + std::to_string(i), f);
  }
  run.facts["flag"].text = "True";
  run.facts["nothing"].text = "None";
  report.runs.push_back(run);
  auto doc = nlohmann::ordered_json::parse(logrx::to_json(report, -1));
  const auto& facts = doc["runs"][0]["facts"];
  REQUIRE(facts.size() == 100002);
  CHECK(facts.begin().key() == "fact0");  // std::map order: sorted by name
  CHECK(facts["fact99999"] == 99999);
  CHECK(facts["flag"] == true);
  CHECK(facts["nothing"].is_null());
}
