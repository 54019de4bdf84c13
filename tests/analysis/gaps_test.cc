// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "logrx/analyzer.h"
#include "logrx/gaps.h"
#include "support/test_support.h"

using logrx::GapCollector;

TEST_CASE("Templates mask numbers, hex, paths and quoted values", "[analysis][gaps]") {
  CHECK(GapCollector::mask("Worker proc VllmWorker-3 died at 0x7f3a after 12.5 s") ==
        "Worker proc VllmWorker-<num> died at <hex> after <num> s");
  CHECK(GapCollector::mask("cannot open /models/qwen/config.json: 'abc' failed") ==
        "cannot open <path>: '<str>' failed");
  CHECK(GapCollector::mask("request 3f2a9c81d0e4 failed, 1,024 tokens") ==
        "request <hex> failed, <num> tokens");
  CHECK(GapCollector::mask("cafe error") == "cafe error");
}

TEST_CASE("Unrecognised problem lines are grouped, most frequent first", "[analysis][gaps]") {
  auto book = logrx::test::load_builtin();
  logrx::Analyzer analyzer(book);
  GapCollector gaps;
  analyzer.on_unmatched_line([&](const logrx::LineEvent& e) { gaps.add("x.log", e); });
  analyzer.feed(
      "(Worker_TP0 pid=1) ERROR 01-14 08:31:26 [m.py:1] Sampler state went out of sync.\n"
      "(Worker_TP1 pid=2) ERROR 01-14 08:31:26 [m.py:1] Sampler state went out of sync.\n"
      "[2026-01-01 00:00:00] Detokenizer failed to decode chunk 3 of request 17\n"
      "[2026-01-01 00:00:00] all good, 12 requests\n"
      "Traceback (most recent call last):\n"
      "  File \"x.py\", line 3, in f\n"
      "RuntimeError: CUDA error: out of memory\n");  // a rule knows this one
  analyzer.finish();
  auto groups = gaps.groups();
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].pattern == "Sampler state went out of sync.");
  CHECK(groups[0].count == 2);
  CHECK(groups[0].line == 1);
  CHECK(groups[0].file == "x.log");
  CHECK(groups[1].pattern == "Detokenizer failed to decode chunk <num> of request <num>");
  CHECK(groups[1].count == 1);
}

TEST_CASE("The number of groups is bounded", "[analysis][gaps]") {
  GapCollector gaps(2);
  logrx::LineEvent e;
  for (const char* m : {"alpha failed", "beta failed", "gamma failed", "alpha failed"}) {
    logrx::parse_line(m, 1, e);
    gaps.add("x", e);
  }
  CHECK(gaps.groups().size() == 2);
  CHECK(gaps.overflow() == 1);
}
