// SPDX-License-Identifier: MIT
#include "match/literal_scan.h"

#include <algorithm>
#include <array>
#include <limits>

namespace logrx::detail {
namespace {

constexpr unsigned char lower(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c + ('a' - 'A')) : c;
}

constexpr std::array<unsigned char, 256> make_lower_table() {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = lower(static_cast<unsigned char>(c));
  return t;
}
constexpr std::array<unsigned char, 256> kLower = make_lower_table();

// How common a byte is in server logs (higher is more common), so that each
// literal is anchored on its rarest byte pair: fewer false hits to verify.
// Rough ranks in the spirit of the memchr crate's byte frequency table,
// biased towards log text (digits, spaces and separators are everywhere).
constexpr std::array<unsigned char, 256> make_commonness() {
  std::array<unsigned char, 256> rank{};
  for (auto& r : rank) r = 20;  // other bytes: rare
  auto set = [&rank](const char* chars, unsigned char value) {
    for (const char* c = chars; *c != '\0'; ++c) {
      rank[static_cast<unsigned char>(*c)] = value;
      rank[static_cast<unsigned char>(lower(static_cast<unsigned char>(*c)))] = value;
    }
  };
  set("abcdefghijklmnopqrstuvwxyz", 120);
  set("etaoinsr", 200);
  set("hldcum", 170);
  set("pfgwybv", 140);
  set("kxjqz", 60);
  set(" ", 255);
  set("0123456789", 230);
  set(".:,=", 210);
  set("-_/[]()'\"", 150);
  set("#%<>{}`!?;*+@$&|~^\\", 70);
  return rank;
}
constexpr std::array<unsigned char, 256> kCommonness = make_commonness();

std::uint16_t pair_key(unsigned char a, unsigned char b) {
  return static_cast<std::uint16_t>(a | (b << 8));
}

bool equal_ignoring_case(const char* text, const std::string& literal) {
  for (std::size_t i = 0; i < literal.size(); ++i)
    if (kLower[static_cast<unsigned char>(text[i])] != static_cast<unsigned char>(literal[i]))
      return false;
  return true;
}

}  // namespace

void LiteralScanner::count_pairs(std::string_view text, std::vector<std::uint32_t>& counts) {
  counts.resize(65536, 0);
  for (std::size_t i = 0; i + 1 < text.size(); ++i)
    ++counts[pair_key(static_cast<unsigned char>(text[i]), static_cast<unsigned char>(text[i + 1]))];
}

LiteralScanner::LiteralScanner(std::vector<std::string> literals, std::size_t stride,
                               const std::vector<std::uint32_t>* pair_counts)
    : literals_(std::move(literals)), bitmap_(65536 / 64, 0), stride_(stride == 0 ? 1 : stride) {
  if (pair_counts != nullptr && pair_counts->size() != 65536) pair_counts = nullptr;
  // How often the pair a,b is expected in the text, in any letter case.
  auto cost_of = [pair_counts](unsigned char a, unsigned char b) -> std::uint64_t {
    std::uint64_t guess = kCommonness[a] + kCommonness[b];
    if (pair_counts == nullptr) return guess;
    std::uint64_t seen = 0;
    for (unsigned char x : {a, static_cast<unsigned char>(a >= 'a' && a <= 'z' ? a - 32 : a)})
      for (unsigned char y : {b, static_cast<unsigned char>(b >= 'a' && b <= 'z' ? b - 32 : b)})
        seen += (*pair_counts)[pair_key(x, y)];
    // Observed counts decide; the guess only breaks ties between unseen pairs.
    return seen * 1024 + guess;
  };
  std::vector<std::pair<std::uint16_t, Anchor>> entries;
  for (std::size_t id = 0; id < literals_.size(); ++id) {
    const std::string& lit = literals_[id];
    if (lit.size() < stride_ + 1) {
      ok_ = false;
      return;
    }
    // The window of stride_ consecutive pairs expected least often.
    std::size_t best = 0;
    std::uint64_t best_cost = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t k = 0; k + stride_ < lit.size(); ++k) {
      std::uint64_t cost = 0;
      for (std::size_t j = k; j < k + stride_; ++j)
        cost += cost_of(static_cast<unsigned char>(lit[j]), static_cast<unsigned char>(lit[j + 1]));
      if (cost < best_cost) {
        best_cost = cost;
        best = k;
      }
    }
    for (std::size_t j = best; j < best + stride_; ++j) {
      auto a = static_cast<unsigned char>(lit[j]);
      auto b = static_cast<unsigned char>(lit[j + 1]);
      entries.push_back({pair_key(a, b), Anchor{static_cast<int>(id), static_cast<int>(j)}});
      // The text may spell the pair in either case.
      for (unsigned char x : {a, static_cast<unsigned char>(a >= 'a' && a <= 'z' ? a - 32 : a)})
        for (unsigned char y : {b, static_cast<unsigned char>(b >= 'a' && b <= 'z' ? b - 32 : b)}) {
          std::uint16_t key = pair_key(x, y);
          bitmap_[key >> 6] |= std::uint64_t{1} << (key & 63);
        }
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  first_.assign(65537, 0);
  for (const auto& e : entries) ++first_[static_cast<std::size_t>(e.first) + 1];
  for (std::size_t k = 1; k < first_.size(); ++k) first_[k] += first_[k - 1];
  anchors_.reserve(entries.size());
  for (const auto& e : entries) anchors_.push_back(e.second);
}

void LiteralScanner::find_all(std::string_view text, std::vector<int>& found,
                              std::vector<std::uint8_t>& marks) const {
  found.clear();
  if (text.size() < 2 || !ok_) return;
  marks.assign(literals_.size(), 0);
  const char* data = text.data();
  const std::size_t n = text.size();
  const std::uint64_t* bits = bitmap_.data();
  // Hot loop: one 2-byte load and one bit test per stride_ bytes.
  for (std::size_t i = 0; i + 1 < n; i += stride_) {
    auto key = pair_key(static_cast<unsigned char>(data[i]), static_cast<unsigned char>(data[i + 1]));
    if (((bits[key >> 6] >> (key & 63)) & 1) == 0) continue;
    std::size_t lower_key = pair_key(kLower[static_cast<unsigned char>(data[i])],
                                     kLower[static_cast<unsigned char>(data[i + 1])]);
    for (std::uint32_t a = first_[lower_key]; a < first_[lower_key + 1]; ++a) {
      const Anchor& anchor = anchors_[a];
      if (marks[static_cast<std::size_t>(anchor.literal)] != 0) continue;
      auto offset = static_cast<std::size_t>(anchor.offset);
      if (i < offset) continue;
      std::size_t start = i - offset;
      const std::string& lit = literals_[static_cast<std::size_t>(anchor.literal)];
      if (start + lit.size() > n || !equal_ignoring_case(data + start, lit)) continue;
      marks[static_cast<std::size_t>(anchor.literal)] = 1;
      found.push_back(anchor.literal);
    }
  }
}

}  // namespace logrx::detail
