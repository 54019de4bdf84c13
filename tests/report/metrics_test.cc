// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "logrx/metrics.h"
#include "support/test_support.h"

namespace {

logrx::Finding finding(const std::string& rule, logrx::Severity severity,
                       const std::string& server = "sglang") {
  logrx::Finding f;
  f.rule_id = rule;
  f.category = logrx::Category::MemoryPressure;
  f.severity = severity;
  f.server = server;
  return f;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& l : lines_of(text))
    if (l == line) return true;
  return false;
}

}  // namespace

TEST_CASE("Metrics: every metric has HELP and TYPE, and every sample is well formed",
          "[report][metrics]") {
  logrx::MetricsRegistry metrics;
  metrics.count_finding(finding("pytorch.cuda.out-of-memory", logrx::Severity::Fatal), 1700000000.5);
  metrics.add_lines(42, 1700000001.25);
  metrics.set_state("sglang", "loading_weights", false);
  std::string page = metrics.render();

  // One TYPE per metric name, before its samples, and a HELP beside it.
  std::set<std::string> typed;
  const std::regex type_line(R"(# TYPE (logrx_[a-z_]+) (counter|gauge))");
  const std::regex sample_line(
      R"((logrx_[a-z_]+)(\{[a-z_]+="(?:[^"\\\n]|\\.)*"(?:,[a-z_]+="(?:[^"\\\n]|\\.)*")*\})? [-+0-9.eE]+|NaN)");
  for (const std::string& line : lines_of(page)) {
    std::smatch m;
    if (std::regex_match(line, m, type_line)) {
      CHECK(typed.insert(m[1]).second);
      CHECK(page.find("# HELP " + m[1].str() + " ") != std::string::npos);
    } else if (line.rfind("# HELP ", 0) == 0) {
      continue;
    } else {
      INFO(line);
      REQUIRE(std::regex_match(line, m, sample_line));
      std::string name = m[1];
      CHECK(typed.count(name) == 1);
    }
  }
  for (const char* name : {"logrx_findings_total", "logrx_lines_total", "logrx_server_ready",
                           "logrx_server_phase", "logrx_last_finding_timestamp_seconds",
                           "logrx_gpu_memory_bytes"})
    CHECK(typed.count(name) == 1);
  CHECK(page.find("# TYPE logrx_findings_total counter\n") != std::string::npos);
  CHECK(page.find("# TYPE logrx_lines_total counter\n") != std::string::npos);
  CHECK(has_line(page,
                 "logrx_findings_total{rule=\"pytorch.cuda.out-of-memory\",category=\"memory_"
                 "pressure\",severity=\"fatal\",server=\"sglang\"} 1"));
  CHECK(has_line(page, "logrx_lines_total 42"));
  CHECK(has_line(page, "logrx_last_finding_timestamp_seconds 1700000000.5"));
  CHECK(has_line(page, "logrx_last_line_timestamp_seconds 1700000001.25"));
  CHECK(has_line(page, "logrx_server_ready{server=\"sglang\"} 0"));
  CHECK(page.back() == '\n');
}

TEST_CASE("Metrics: counters add up per label set and never go back", "[report][metrics]") {
  logrx::MetricsRegistry metrics;
  metrics.count_finding(finding("a", logrx::Severity::Error), 10);
  metrics.count_finding(finding("a", logrx::Severity::Error), 20);
  metrics.count_finding(finding("a", logrx::Severity::Error, "vllm"), 30);
  metrics.count_finding(finding("a", logrx::Severity::Error, ""), 25);
  metrics.add_lines(5, 1);
  metrics.add_lines(7, 2);
  std::string page = metrics.render();
  CHECK(has_line(page, "logrx_findings_total{rule=\"a\",category=\"memory_pressure\",severity=\"error\",server=\"sglang\"} 2"));
  CHECK(has_line(page, "logrx_findings_total{rule=\"a\",category=\"memory_pressure\",severity=\"error\",server=\"vllm\"} 1"));
  CHECK(has_line(page, "logrx_findings_total{rule=\"a\",category=\"memory_pressure\",severity=\"error\",server=\"unknown\"} 1"));
  CHECK(has_line(page, "logrx_lines_total 12"));
  // The last finding's time is the latest reported, as it was reported.
  CHECK(has_line(page, "logrx_last_finding_timestamp_seconds 25"));
}

TEST_CASE("Metrics: timestamps are absent until known, not 1970", "[report][metrics]") {
  logrx::MetricsRegistry metrics;
  std::string page = metrics.render();
  CHECK(page.find("\nlogrx_last_finding_timestamp_seconds ") == std::string::npos);
  CHECK(page.find("\nlogrx_last_line_timestamp_seconds ") == std::string::npos);
  CHECK(page.find("\nlogrx_server_ready") == std::string::npos);
  CHECK(has_line(page, "logrx_lines_total 0"));
}

TEST_CASE("Metrics: label values escape backslash, quote and line feed", "[report][metrics]") {
  CHECK(logrx::escape_prometheus_label("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
  CHECK(logrx::escape_prometheus_label("plain.rule-id_1") == "plain.rule-id_1");
  logrx::MetricsRegistry metrics;
  metrics.count_finding(finding("user.\"odd\"\\rule\nid", logrx::Severity::Warning), 1);
  std::string page = metrics.render();
  CHECK(page.find("rule=\"user.\\\"odd\\\"\\\\rule\\nid\"") != std::string::npos);
  // The raw line feed never splits a sample.
  for (const std::string& line : lines_of(page)) CHECK(line.find("id\",") != 0);
}

TEST_CASE("Metrics: exactly one phase is 1, and it follows the launch", "[report][metrics]") {
  logrx::MetricsRegistry metrics;
  metrics.set_state("vllm", "capturing_cuda_graphs", false);
  auto ones = [&] {
    std::vector<std::string> out;
    for (const std::string& line : lines_of(metrics.render()))
      if (line.rfind("logrx_server_phase{", 0) == 0 && line.back() == '1') out.push_back(line);
    return out;
  };
  CHECK(ones() == std::vector<std::string>{"logrx_server_phase{phase=\"capturing_cuda_graphs\"} 1"});
  auto before = metrics.version();
  metrics.set_state("vllm", "capturing_cuda_graphs", false);
  CHECK(metrics.version() == before);  // nothing changed
  metrics.set_state("vllm", "serving", true);
  CHECK(metrics.version() > before);
  CHECK(ones() == std::vector<std::string>{"logrx_server_phase{phase=\"serving\"} 1"});
  CHECK(has_line(metrics.render(), "logrx_server_ready{server=\"vllm\"} 1"));
  std::size_t phases = 0;
  for (const std::string& line : lines_of(metrics.render()))
    phases += line.rfind("logrx_server_phase{", 0) == 0;
  CHECK(phases == std::size(logrx::kPhases));
}

TEST_CASE("Metrics: the budget becomes byte gauges per part", "[report][metrics]") {
  auto report = logrx::test::scan_text(
      logrx::test::load_builtin(),
      "[2026-06-02 14:05:12] server_args=ServerArgs(mem_fraction_static=0.9)\n"
      "[2026-06-02 14:05:19] Init torch distributed ends. elapsed=0.71 s, mem usage=0.61 GB\n"
      "[2026-06-02 14:05:20] Load weight begin. avail mem=177.32 GB\n"
      "[2026-06-02 14:05:58] Load weight end. elapsed=38.02 s, type=Qwen3_5ForConditionalGeneration, avail mem=126.16 GB, mem usage=51.16 GB.\n"
      "[2026-06-02 14:06:03] KV Cache is allocated. #tokens: 77056, K size: 5.88 GB, V size: 5.88 GB\n");
  logrx::MetricsRegistry metrics;
  metrics.set_budget(logrx::compute_budget(report.runs.back()));
  std::string page = metrics.render();
  // 51.16 GiB of weights, in bytes.
  CHECK(has_line(page, "logrx_gpu_memory_bytes{part=\"weights\"} 54932631716"));
  CHECK(page.find("logrx_gpu_memory_bytes{part=\"kv_cache\"} ") != std::string::npos);
  CHECK(page.find("logrx_gpu_memory_bytes{part=\"total\"} ") != std::string::npos);
  CHECK(page.find("part=\"KV cache\"") == std::string::npos);

  // Parts whose names fold to one label give one series, not a duplicate.
  logrx::MemoryBudget odd;
  odd.parts.push_back({"KV cache", 1.0, ""});
  odd.parts.push_back({"kv-cache", 2.0, ""});
  odd.parts.push_back({"weights", std::nullopt, ""});
  metrics.set_budget(odd);
  page = metrics.render();
  CHECK(has_line(page, "logrx_gpu_memory_bytes{part=\"kv_cache\"} 1073741824"));
  CHECK(page.find("2147483648") == std::string::npos);
  CHECK(page.find("part=\"weights\"") == std::string::npos);  // not reported, not 0
}

TEST_CASE("Metrics: the number of finding series is capped", "[report][metrics]") {
  logrx::MetricsRegistry metrics;
  std::size_t total = logrx::MetricsRegistry::kMaxFindingSeries + 5;
  for (std::size_t i = 0; i < total; ++i)
    metrics.count_finding(finding("rule." + std::to_string(i), logrx::Severity::Error), 1);
  std::string page = metrics.render();
  std::size_t series = 0;
  for (const std::string& line : lines_of(page)) series += line.rfind("logrx_findings_total{", 0) == 0;
  CHECK(series == logrx::MetricsRegistry::kMaxFindingSeries);
  CHECK(has_line(page, "logrx_findings_unlabelled_total 5"));
}

TEST_CASE("Metrics: rendering while another thread records", "[report][metrics]") {
  logrx::MetricsRegistry metrics;
  constexpr int kFindings = 2000;
  std::thread writer([&] {
    for (int i = 0; i < kFindings; ++i) {
      metrics.count_finding(finding("rule." + std::to_string(i % 7), logrx::Severity::Error), i + 1);
      metrics.add_lines(1, i + 1);
      metrics.set_state("sglang", i % 2 ? "serving" : "ready", i % 2 == 1);
    }
  });
  std::size_t renders = 0;
  for (int i = 0; i < 200; ++i) renders += !metrics.render().empty();
  writer.join();
  CHECK(renders == 200);
  std::string page = metrics.render();
  CHECK(has_line(page, "logrx_lines_total " + std::to_string(kFindings)));
  std::uint64_t sum = 0;
  for (const std::string& line : lines_of(page))
    if (line.rfind("logrx_findings_total{", 0) == 0) sum += std::stoull(line.substr(line.rfind(' ') + 1));
  CHECK(sum == kFindings);
}

TEST_CASE("Metrics: constant labels are on every sample", "[report][metrics]") {
  logrx::MetricsRegistry metrics;
  metrics.set_constant_labels({{"pod", "sglang-0"}, {"container", "a\"b"}});
  metrics.count_finding(finding("r", logrx::Severity::Error), 1);
  metrics.set_state("sglang", "ready", true);
  std::string page = metrics.render();
  CHECK(has_line(page, "logrx_lines_total{pod=\"sglang-0\",container=\"a\\\"b\"} 0"));
  CHECK(has_line(page, "logrx_findings_total{rule=\"r\",category=\"memory_pressure\",severity=\"error\","
                       "server=\"sglang\",pod=\"sglang-0\",container=\"a\\\"b\"} 1"));
  for (const std::string& line : lines_of(page))
    if (line.rfind("logrx_", 0) == 0) CHECK(line.find("pod=\"sglang-0\"") != std::string::npos);
  CHECK(logrx::valid_prometheus_label_name("pod"));
  CHECK(logrx::valid_prometheus_label_name("_x9"));
  CHECK_FALSE(logrx::valid_prometheus_label_name("9x"));
  CHECK_FALSE(logrx::valid_prometheus_label_name("__name__"));
  CHECK_FALSE(logrx::valid_prometheus_label_name("a-b"));
  CHECK_FALSE(logrx::valid_prometheus_label_name(""));
}
