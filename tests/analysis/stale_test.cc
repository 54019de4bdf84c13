// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "logrx/analyzer.h"
#include "support/test_support.h"

using logrx::Analyzer;
using logrx::AnalyzerOptions;
using logrx::Finding;
using logrx::Report;
using logrx::test::load_builtin;

namespace {

Report scan_with(const std::string& text, const std::string& command, const std::string& since = "",
                 std::optional<std::int64_t> mtime = std::nullopt) {
  AnalyzerOptions options;
  options.stream_name = "server.log";
  options.launch_command = command;
  options.since = since;
  options.file_mtime = mtime;
  Analyzer analyzer(load_builtin(), options);
  analyzer.feed(text);
  return analyzer.finish();
}

const Finding* find(const Report& report, const std::string& rule) {
  for (const Finding& f : report.findings)
    if (f.rule_id == rule) return &f;
  return nullptr;
}

const std::string kConflict =
    "[2026-06-02 11:20:01] Attention backend not specified. Use flashinfer backend by default.\n"
    "ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible with "
    "radix cache when using --mamba-scheduler-strategy no_buffer.To use radix cache\n";

}  // namespace

TEST_CASE("Error text that contradicts the launch command makes the log stale", "[analysis][stale]") {
  auto report = scan_with(kConflict, "python -m sglang.launch_server --model-path m "
                                     "--mamba-scheduler-strategy extra_buffer");
  const Finding* mismatch = find(report, "logrx.stale.command-mismatch");
  REQUIRE(mismatch != nullptr);
  CHECK(mismatch->category == logrx::Category::StaleOutput);
  CHECK(mismatch->message.find("mamba_scheduler_strategy=no_buffer") != std::string::npos);
  CHECK(mismatch->message.find("--mamba-scheduler-strategy extra_buffer") != std::string::npos);
  CHECK_FALSE(mismatch->stale);
  CHECK(find(report, "sglang.config.spec-radix-no-buffer")->stale);
  CHECK(report.remediation.empty());
}

TEST_CASE("A command that agrees with the log is not stale", "[analysis][stale]") {
  auto report = scan_with(kConflict, "python -m sglang.launch_server --speculative-algorithm EAGLE");
  CHECK(find(report, "logrx.stale.command-mismatch") == nullptr);
  CHECK_FALSE(find(report, "sglang.config.spec-radix-no-buffer")->stale);
}

TEST_CASE("Config dump values are compared with the command's, numbers numerically",
          "[analysis][stale]") {
  std::string log =
      "[2026-06-02 11:20:01] server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', "
      "mem_fraction_static=0.8, tp_size=1, disable_radix_cache=False)\n";
  auto differs = scan_with(log, "sglang serve --model-path Qwen/Qwen3.6-27B --mem-fraction-static=0.90");
  const Finding* f = find(differs, "logrx.stale.command-mismatch");
  REQUIRE(f != nullptr);
  CHECK(f->message.find("mem_fraction_static=0.8") != std::string::npos);
  CHECK(f->message.find("--mem-fraction-static 0.90") != std::string::npos);
  CHECK(find(scan_with(log, "x --mem-fraction-static 0.80 --tp 1 --model-path Qwen/Qwen3.6-27B"),
             "logrx.stale.command-mismatch") == nullptr);
  CHECK(find(scan_with(log, "x --disable-radix-cache"), "logrx.stale.command-mismatch") != nullptr);
}

TEST_CASE("A log older than the launch time is stale", "[analysis][stale]") {
  auto old = scan_with(kConflict, "", "2026-06-02T13:00:00");
  REQUIRE(find(old, "logrx.stale.predates-launch") != nullptr);
  CHECK(find(old, "sglang.config.spec-radix-no-buffer")->stale);
  auto fresh = scan_with(kConflict, "", "2026-06-02T11:00:00");
  CHECK(find(fresh, "logrx.stale.predates-launch") == nullptr);
  auto since = logrx::parse_iso8601("2026-06-02T11:00:00Z");
  REQUIRE(since.has_value());
  auto old_file = scan_with(kConflict, "", "2026-06-02T11:00:00Z", *since - 3600);
  const Finding* f = find(old_file, "logrx.stale.predates-launch");
  REQUIRE(f != nullptr);
  CHECK(f->message.find("the file was last modified") != std::string::npos);
}

TEST_CASE("ISO 8601 times parse with and without zones", "[analysis][stale]") {
  CHECK(logrx::parse_iso8601("2026-11-29T09:30:00Z") == 1795944600);
  CHECK(logrx::parse_iso8601("2026-11-29T10:30:00+01:00") == 1795944600);
  CHECK(logrx::parse_iso8601("2026-11-29T09:30Z") == 1795944600);
  CHECK(logrx::parse_iso8601("2026-11-29 09:30:00.123Z") == 1795944600);
  CHECK(logrx::parse_iso8601("2026-11-29T09:30:00").has_value());
  CHECK_FALSE(logrx::parse_iso8601("yesterday").has_value());
  CHECK_FALSE(logrx::parse_iso8601("2026-13-29T09:30:00").has_value());
  CHECK_FALSE(logrx::parse_iso8601("2026-11-29T09:30:00+1").has_value());
}
