// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "logrx/log_record.h"
#include "logrx/output.h"
#include "support/test_support.h"

TEST_CASE("RFC 3339 times are UTC with milliseconds", "[report][log-record]") {
  CHECK(logrx::format_rfc3339(0) == "1970-01-01T00:00:00.000Z");
  CHECK(logrx::format_rfc3339(1779522041.123) == "2026-05-23T07:40:41.123Z");
  CHECK(logrx::format_rfc3339(1779522041.9996) == "2026-05-23T07:40:42.000Z");
  CHECK(logrx::format_rfc3339(-5) == "1970-01-01T00:00:00.000Z");
}

TEST_CASE("A log record is the finding's JSON plus time, host and stream", "[report][log-record]") {
  auto report = logrx::test::scan_text(
      logrx::test::load_builtin(),
      "[2026-05-23 07:40:41] Load weight begin. avail mem=10.00 GB\n"
      "2026-05-23T07:40:42Z RuntimeError: CUDA error: out of memory\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  REQUIRE(report.findings.size() >= 2);
  logrx::LogRecordContext context{"gpu-\"node\"-7", "/var/log/sglang/server.log", 1779522100.5};
  for (const logrx::Finding& f : report.findings) {
    std::string line = logrx::finding_to_log_record(f, context);
    INFO(line);
    CHECK(line.find('\n') == std::string::npos);
    auto record = nlohmann::json::parse(line);
    auto plain = nlohmann::json::parse(logrx::finding_to_json(f));
    // Every field of the finding, unchanged.
    for (auto it = plain.begin(); it != plain.end(); ++it) CHECK(record.at(it.key()) == it.value());
    for (const char* label : {"server", "rule", "category", "severity", "host", "stream", "time"})
      CHECK(record.at(label).is_string());
    CHECK(record["host"] == "gpu-\"node\"-7");
    CHECK(record["stream"] == "/var/log/sglang/server.log");
    CHECK(record["time"] == "2026-05-23T07:41:40.500Z");
    if (f.timestamp == "2026-05-23T07:40:42Z") {
      CHECK(record["log_time"] == "2026-05-23T07:40:42.000Z");
    } else if (f.timestamp.empty()) {
      CHECK_FALSE(record.contains("log_time"));
    }
  }
}
