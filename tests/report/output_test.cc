// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "logrx/output.h"
#include "support/test_support.h"

using logrx::test::load_builtin;
using logrx::test::scan_text;

TEST_CASE("JSON output follows the public contract", "[report][json]") {
  auto book = load_builtin();
  auto report = scan_text(
      book,
      "[2026-06-02 11:20:01] Attention backend not specified.\n"
      "ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration is not compatible "
      "with radix cache when using --mamba-scheduler-strategy no_buffer.To use radix cache\n");
  auto doc = nlohmann::json::parse(logrx::to_json(report));
  REQUIRE(doc.at("findings").size() == 1);
  const auto& f = doc.at("findings")[0];
  CHECK(f.at("rule") == "sglang.config.spec-radix-no-buffer");
  CHECK(f.at("category") == "config_conflict");
  CHECK(f.at("severity") == "fatal");
  CHECK(f.at("line") == 2);
  CHECK(f.at("run") == 1);
  CHECK(f.at("stale") == false);
  CHECK(f.at("server") == "sglang");
  CHECK(f.at("title").is_string());
  CHECK(f.at("message").get<std::string>().rfind("ValueError: Speculative decoding", 0) == 0);
  CHECK(f.at("captures").at("model_arch") == "Qwen3_5ForConditionalGeneration");
  const auto& fixes = f.at("remediation");
  CHECK(fixes[0].at("flag") == "--mamba-scheduler-strategy");
  CHECK(fixes[0].at("value") == "extra_buffer");
  CHECK(fixes[1].at("env") == "SGLANG_ENABLE_SPEC_V2");
  CHECK(fixes[1].at("value") == "1");
  CHECK(fixes[2].at("flag") == "--disable-radix-cache");
  CHECK_FALSE(fixes[2].contains("value"));
  CHECK(fixes[2].at("alternative") == true);

  const auto& merged = doc.at("remediation");
  REQUIRE(merged.size() == 2);  // alternatives are not merged
  CHECK(merged[0].at("flag") == "--mamba-scheduler-strategy");
  CHECK(merged[1].at("env") == "SGLANG_ENABLE_SPEC_V2");

  const auto& summary = doc.at("summary");
  CHECK(summary.at("lines") == 2);
  CHECK(summary.at("findings") == 1);
  CHECK(summary.at("worst_severity") == "fatal");
  CHECK(summary.at("by_category").at("config_conflict") == 1);
}

TEST_CASE("An empty report is still a complete document", "[report][json]") {
  auto doc = nlohmann::json::parse(logrx::to_json(logrx::Report{}));
  CHECK(doc.at("findings").empty());
  CHECK(doc.at("remediation").empty());
  CHECK(doc.at("summary").at("worst_severity") == "none");
}

TEST_CASE("Text output never lets control characters reach the terminal", "[report][text]") {
  CHECK(logrx::escape_for_terminal("a\x1b[2Jb") == "a\\x1b[2Jb");
  CHECK(logrx::escape_for_terminal("bell\x07 del\x7f") == "bell\\x07 del\\x7f");
  CHECK(logrx::escape_for_terminal("csi\xC2\x9B" "31m") == "csi\\u009b31m");
  CHECK(logrx::escape_for_terminal("tab\tok \xE2\x96\x88") == "tab\tok \xE2\x96\x88");

  logrx::Report report;
  logrx::Finding f;
  f.file = "x.log";
  f.line = 3;
  f.message = "evil \x1b]0;title\x07 text";
  f.title = "t";
  report.findings.push_back(f);
  std::ostringstream out;
  logrx::write_text(out, report, {});
  CHECK(out.str().find('\x1b') == std::string::npos);
  CHECK(out.str().find('\x07') == std::string::npos);
  CHECK(out.str().find("x.log:3") != std::string::npos);
}

TEST_CASE("Colour is only emitted when asked for", "[report][text]") {
  auto book = load_builtin();
  auto report = scan_text(book, "RuntimeError: CUDA error: out of memory\n");
  std::ostringstream plain;
  logrx::write_text(plain, report, {false, true});
  CHECK(plain.str().find('\x1b') == std::string::npos);
  std::ostringstream coloured;
  logrx::write_text(coloured, report, {true, true});
  CHECK(coloured.str().find("\x1b[") != std::string::npos);
}

TEST_CASE("Bidi, zero-width and C1 characters are written visibly", "[report][text]") {
  // U+202E RLO, U+2066 LRI, U+2069 PDI, U+200E LRM, U+200F RLM, U+200B ZWSP,
  // U+200D ZWJ, U+FEFF BOM, U+2028 LINE SEPARATOR, U+0085 NEL.
  CHECK(logrx::escape_for_terminal("a\xE2\x80\xAE" "b\xE2\x81\xA6" "c\xE2\x81\xA9" "d") ==
        "a\\u202eb\\u2066c\\u2069d");
  CHECK(logrx::escape_for_terminal("\xE2\x80\x8E\xE2\x80\x8F\xE2\x80\x8B\xE2\x80\x8D\xEF\xBB\xBF\xE2\x80\xA8\xC2\x85") ==
        "\\u200e\\u200f\\u200b\\u200d\\ufeff\\u2028\\u0085");
  // Bytes that are not UTF-8 (a raw 0x9B is CSI to an 8-bit terminal).
  CHECK(logrx::escape_for_terminal("raw\x9B" "31m \xFF") == "raw\\x9b31m \\xff");
  // Ordinary non-ASCII text is kept.
  CHECK(logrx::escape_for_terminal("Grüße, 日本語, \xE2\x80\x94 dash") == "Grüße, 日本語, \xE2\x80\x94 dash");
}

TEST_CASE("JSON writes C1, DEL, bidi and zero-width characters as \\u escapes", "[report][json]") {
  logrx::Report report;
  logrx::Finding f;
  f.rule_id = "x";
  f.file = "a\xE2\x80\xAE.log";
  f.title = "csi\xC2\x9B" "31m";
  f.message = "rlo\xE2\x80\xAE del\x7f zw\xE2\x80\x8B bom\xEF\xBB\xBF ok\xE2\x80\x94";
  report.findings.push_back(f);
  std::string json = logrx::to_json(report);
  for (const char* raw : {"\xC2\x9B", "\xE2\x80\xAE", "\x7f", "\xE2\x80\x8B", "\xEF\xBB\xBF"}) {
    INFO(raw);
    CHECK(json.find(raw) == std::string::npos);
  }
  CHECK(json.find("csi\\u009b31m") != std::string::npos);
  CHECK(json.find("rlo\\u202e del\\u007f zw\\u200b bom\\ufeff ok\xE2\x80\x94") != std::string::npos);
  // Still the same strings to a JSON reader.
  auto doc = nlohmann::json::parse(json);
  CHECK(doc.at("findings").at(0).at("message") == f.message);
  CHECK(doc.at("findings").at(0).at("file") == f.file);
  std::string line = logrx::finding_to_json(f);
  CHECK(line.find("\xC2\x9B") == std::string::npos);
  CHECK(nlohmann::json::parse(line).at("title") == f.title);
}

TEST_CASE("write_json writes to_json's bytes, one finding at a time", "[report][json]") {
  auto book = load_builtin();
  namespace fs = std::filesystem;
  int compared = 0;
  for (const auto& entry : fs::recursive_directory_iterator(LOGRX_SOURCE_DIR "/corpus")) {
    if (entry.path().extension() != ".log") continue;
    logrx::Report report = scan_text(book, logrx::test::read_file(entry.path()));
    for (int indent : {2, 4, 0, -1}) {
      std::ostringstream written;
      logrx::write_json(written, report, indent);
      INFO(entry.path().string() << ", indent " << indent);
      CHECK(written.str() == logrx::to_json(report, indent));
    }
    if (!report.findings.empty()) ++compared;
  }
  CHECK(compared > 400);
}
