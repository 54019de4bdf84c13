// SPDX-License-Identifier: MIT
#include "match/literal_scan.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

using logrx::detail::LiteralScanner;

namespace {

std::vector<int> sorted_found(const LiteralScanner& scanner, std::string_view text) {
  std::vector<int> found;
  std::vector<std::uint8_t> marks;
  scanner.find_all(text, found, marks);
  std::sort(found.begin(), found.end());
  return found;
}

std::string lowercase(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace

TEST_CASE("Literals are found case-insensitively at any offset, each once", "[match][literal]") {
  LiteralScanner scanner({"out of memory", "killed", "watchdog timeout ("});
  REQUIRE(scanner.ok());
  CHECK(sorted_found(scanner, "RuntimeError: CUDA error: out of memory") == std::vector<int>{0});
  CHECK(sorted_found(scanner, "Killed") == std::vector<int>{1});
  CHECK(sorted_found(scanner, "xKILLEDx OUT OF MEMORY out of memory") == std::vector<int>{0, 1});
  CHECK(sorted_found(scanner, "Scheduler watchdog timeout (self.watchdog_timeout=300)") ==
        std::vector<int>{2});
  for (std::size_t pad = 0; pad < 12; ++pad)
    CHECK(sorted_found(scanner, std::string(pad, ' ') + "killed") == std::vector<int>{1});
}

TEST_CASE("Text without the literals, or shorter than them, finds nothing", "[match][literal]") {
  LiteralScanner scanner({"out of memory"});
  CHECK(sorted_found(scanner, "Decode batch, #running-req: 12, token usage: 0.41").empty());
  CHECK(sorted_found(scanner, "out of memor").empty());
  CHECK(sorted_found(scanner, "").empty());
  CHECK(sorted_found(scanner, "ou").empty());
}

TEST_CASE("Literals shorter than a gram are refused, the stride follows the shortest",
          "[match][literal]") {
  CHECK_FALSE(LiteralScanner({"oom"}).ok());
  CHECK(LiteralScanner({"oomk"}).ok());
  CHECK(LiteralScanner({"oomk"}).stride() == 1);
  CHECK(LiteralScanner({"killed", "out of memory"}).stride() == 3);
  CHECK(LiteralScanner({"a much longer literal than that"}).stride() == 8);
}

TEST_CASE("The scanner agrees with a naive search on random text", "[match][literal]") {
  std::mt19937 rng(12345);
  const std::string alphabet = "abcdeABCDE :=-_()0123456789";
  auto random_text = [&](std::size_t n) {
    std::string s;
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    for (std::size_t i = 0; i < n; ++i) s.push_back(alphabet[pick(rng)]);
    return s;
  };
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> literals;
    // Lengths vary per round, so every stride from 1 to 6 is exercised.
    std::size_t shortest = 4 + static_cast<std::size_t>(round % 6);
    std::uniform_int_distribution<std::size_t> length(shortest, shortest + 5);
    for (int i = 0; i < 12; ++i) literals.push_back(lowercase(random_text(length(rng))));
    std::sort(literals.begin(), literals.end());
    literals.erase(std::unique(literals.begin(), literals.end()), literals.end());
    std::string text = random_text(400);
    // Every stride, with anchors from the static guess or from the text's
    // own byte-pair counts.
    std::vector<std::uint32_t> counts;
    LiteralScanner::count_grams(text, counts);
    LiteralScanner scanner(literals, round % 2 == 0 ? &counts : nullptr);
    REQUIRE(scanner.ok());
    // Plant some literals, in random case, so hits are not only chance.
    for (int i = 0; i < 3; ++i) {
      std::string lit = literals[rng() % literals.size()];
      for (char& c : lit)
        if (rng() % 2 == 0 && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      text.insert(rng() % text.size(), lit);
    }
    std::vector<int> expected;
    std::string lower = lowercase(text);
    for (std::size_t i = 0; i < literals.size(); ++i)
      if (lower.find(literals[i]) != std::string::npos) expected.push_back(static_cast<int>(i));
    CHECK(sorted_found(scanner, text) == expected);
  }
}
