// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "logrx/line.h"

namespace {

struct Collected {
  std::vector<std::string> lines;
  std::vector<bool> truncated;
};

Collected split(const std::vector<std::string>& chunks, std::size_t cap = 64) {
  Collected out;
  logrx::LineSplitter splitter(cap);
  auto sink = [&](std::string_view line, bool truncated) {
    out.lines.emplace_back(line);
    out.truncated.push_back(truncated);
  };
  for (const auto& chunk : chunks) splitter.feed(chunk, sink);
  splitter.finish(sink);
  return out;
}

}  // namespace

TEST_CASE("Lines split across chunks are joined", "[parse][splitter]") {
  auto out = split({"one\ntw", "o\nthr", "ee\n"});
  CHECK(out.lines == std::vector<std::string>{"one", "two", "three"});
}

TEST_CASE("A last line without newline is delivered by finish", "[parse][splitter]") {
  auto out = split({"a\nb"});
  CHECK(out.lines == std::vector<std::string>{"a", "b"});
}

TEST_CASE("Empty lines are lines", "[parse][splitter]") {
  auto out = split({"a\n\n\nb\n"});
  CHECK(out.lines == std::vector<std::string>{"a", "", "", "b"});
}

TEST_CASE("Over-long lines keep a bounded prefix and the stream goes on", "[parse][splitter]") {
  std::string huge(1000, 'x');
  auto out = split({"ok\n" + huge.substr(0, 300), huge.substr(300) + "\nafter\n"}, 16);
  REQUIRE(out.lines.size() == 3);
  CHECK(out.lines[0] == "ok");
  CHECK(out.lines[1] == std::string(16, 'x'));
  CHECK(out.truncated[1]);
  CHECK(out.lines[2] == "after");
  CHECK_FALSE(out.truncated[2]);
}

TEST_CASE("Truncation does not cut a UTF-8 character in half", "[parse][splitter]") {
  // 5 ASCII bytes then a 3-byte character straddling the 6-byte cap.
  auto out = split({"abcde\xE2\x96\x88xyz\n"}, 6);
  REQUIRE(out.lines.size() == 1);
  CHECK(out.lines[0] == "abcde");
  CHECK(out.truncated[0]);
}
