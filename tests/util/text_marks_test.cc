// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "util/text_marks.h"

using logrx::detail::find_marks;
using logrx::detail::TextMarks;

namespace {

TextMarks naive(const std::string& text) {
  TextMarks marks;
  marks.backslash = text.find('\\') != std::string::npos;
  std::string folded = text;
  for (char& c : folded) c = static_cast<char>(c | 0x20);
  marks.rror = folded.find("rror") != std::string::npos;
  marks.traceback = text.find("Trac") != std::string::npos;
  // The look-alikes find_marks accepts: any second letter.
  for (std::size_t i = 0; i + 4 <= folded.size(); ++i)
    marks.fail = marks.fail || (folded[i] == 'f' && folded[i + 2] == 'i' && folded[i + 3] == 'l') ||
                 (folded[i] == 'b' && folded[i + 2] == 'r' && folded[i + 3] == 't') ||
                 (folded[i] == 'k' && folded[i + 2] == 'l' && folded[i + 3] == 'l');
  for (const char* notation : {"[0m", "[0;", "^[", "^M", "#033", "#015"})
    marks.notation = marks.notation || text.find(notation) != std::string::npos;
  for (unsigned char c : text)
    marks.unclean = marks.unclean || c >= 0x80 || c == 0x1b || c == '\r' || c == 0;
  return marks;
}

}  // namespace

TEST_CASE("find_marks finds each mark at every offset and length", "[util]") {
  for (const std::string mark : {"\\", "error", "ERROR", "eRrOr", "Traceback", "[0m", "[0;0m", "^[[", "^M",
                                 "#033[", "#015", "failed",
                                 "FAILURE", "Aborted", "abort", "OOMKilled",
                                 "oom-kill"}) {
    for (std::size_t length = 0; length < 70; ++length) {
      for (std::size_t at = 0; at + mark.size() <= length; ++at) {
        std::string text(length, 'x');
        text.replace(at, mark.size(), mark);
        INFO(text);
        TextMarks got = find_marks(text);
        TextMarks want = naive(text);
        CHECK(got.backslash == want.backslash);
        CHECK(got.rror == want.rror);
        CHECK(got.traceback == want.traceback);
        CHECK(got.notation == want.notation);
        CHECK(got.unclean == want.unclean);
        CHECK(got.fail == want.fail);
      }
    }
  }
}

TEST_CASE("find_marks agrees with plain searches on random text", "[util]") {
  std::mt19937 rng(11);
  // Letters of the marks and their near misses, so that partial marks are common.
  const std::string alphabet = "rRoOTtacC\\e x[0m;^M#35fFiIlLbBkK";
  // Each vector width's loop and the tails after it (up to 66 bytes past
  // the last 64-byte step), with the unclean bytes now and then.
  const std::string unclean("\x1b\r\x80\xff", 4);
  for (int round = 0; round < 3000; ++round) {
    std::string text(rng() % 300, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    if (round % 4 == 0 && !text.empty()) text[rng() % text.size()] = unclean[rng() % unclean.size()];
    if (round % 9 == 0 && !text.empty()) text[rng() % text.size()] = '\0';
    TextMarks got = find_marks(text);
    TextMarks want = naive(text);
    INFO(text);
    CHECK(got.backslash == want.backslash);
    CHECK(got.rror == want.rror);
    CHECK(got.traceback == want.traceback);
    CHECK(got.notation == want.notation);
    CHECK(got.unclean == want.unclean);
    CHECK(got.fail == want.fail);
  }
  // "Trac" is case-sensitive, as the traceback header is.
  CHECK_FALSE(find_marks("traceback (most recent call last):").traceback);
  CHECK(find_marks("no marks here at all, only words").rror == false);
}
