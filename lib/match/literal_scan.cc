// SPDX-License-Identifier: MIT
#include "match/literal_scan.h"

#include <algorithm>
#include <array>
#include <cstring>
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

// How common a byte is in server logs (higher is more common), the guess
// used when no sample of the text is available; in the spirit of the memchr
// crate's byte frequency table, biased towards log text.
constexpr std::array<unsigned char, 256> make_commonness() {
  std::array<unsigned char, 256> rank{};
  for (auto& r : rank) r = 20;
  auto set = [&rank](const char* chars, unsigned char value) {
    for (const char* c = chars; *c != '\0'; ++c) rank[static_cast<unsigned char>(*c)] = value;
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

// Four bytes as a little-endian number, whatever the host's byte order.
std::uint32_t load_le32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

// Setting bit 5 of every byte folds ASCII letters to lower case (it also
// folds a few punctuation pairs such as '[' and '{' together: more bit hits
// to verify, never a missed one), so the scan needs no case table.
constexpr std::uint32_t kFold = 0x20202020u;

// A gram's fine hash (kFilterBits) sets the bit the scan tests; its top
// kHashBits bits are the bucket its anchors are listed under.
constexpr int kFilterBits = 20;
constexpr int kBucketShift = kFilterBits - 16;

std::uint32_t fine_hash_at(const char* p) {
  return ((load_le32(p) | kFold) * 0x9E3779B1u) >> (32 - kFilterBits);
}

std::uint32_t hash_at(const char* p) { return fine_hash_at(p) >> kBucketShift; }

bool equal_ignoring_case(const char* text, const std::string& literal) {
  for (std::size_t i = 0; i < literal.size(); ++i)
    if (kLower[static_cast<unsigned char>(text[i])] != static_cast<unsigned char>(literal[i]))
      return false;
  return true;
}

}  // namespace

void LiteralScanner::count_grams(std::string_view text, std::vector<std::uint32_t>& counts) {
  counts.resize(std::size_t{1} << kHashBits, 0);
  for (std::size_t i = 0; i + kGram <= text.size(); ++i) ++counts[hash_at(text.data() + i)];
}

LiteralScanner::LiteralScanner(std::vector<std::string> literals,
                               const std::vector<std::uint32_t>* gram_counts)
    : literals_(std::move(literals)), bitmap_((std::size_t{1} << kFilterBits) / 64, 0) {
  if (gram_counts != nullptr && gram_counts->size() != (std::size_t{1} << kHashBits))
    gram_counts = nullptr;
  std::size_t shortest = std::numeric_limits<std::size_t>::max();
  for (const std::string& lit : literals_) shortest = std::min(shortest, lit.size());
  if (literals_.empty() || shortest < kGram) {
    ok_ = literals_.empty();
    return;
  }
  stride_ = std::min<std::size_t>(shortest - kGram + 1, 8);

  auto cost_of = [gram_counts](const char* gram, std::uint32_t hash) -> std::uint64_t {
    std::uint64_t guess = 0;
    for (std::size_t k = 0; k < kGram; ++k) guess += kCommonness[static_cast<unsigned char>(gram[k])];
    if (gram_counts == nullptr) return guess;
    // Observed counts decide; the guess only breaks ties.
    return std::uint64_t{(*gram_counts)[hash]} * 4096 + guess;
  };
  std::vector<std::pair<std::uint32_t, Anchor>> entries;
  entries.reserve(literals_.size() * stride_);
  std::vector<std::uint32_t> hashes;
  std::vector<std::uint64_t> costs;
  for (std::size_t id = 0; id < literals_.size(); ++id) {
    const std::string& lit = literals_[id];
    hashes.clear();
    costs.clear();
    for (std::size_t k = 0; k + kGram <= lit.size(); ++k) {
      hashes.push_back(hash_at(lit.data() + k));
      costs.push_back(cost_of(lit.data() + k, hashes.back()));
    }
    // The window of stride_ consecutive grams expected least often (a
    // sliding sum: the first of the cheapest windows).
    std::uint64_t cost = 0;
    for (std::size_t j = 0; j < stride_; ++j) cost += costs[j];
    std::size_t best = 0;
    std::uint64_t best_cost = cost;
    for (std::size_t k = 1; k + stride_ <= hashes.size(); ++k) {
      cost += costs[k + stride_ - 1] - costs[k - 1];
      if (cost < best_cost) {
        best_cost = cost;
        best = k;
      }
    }
    for (std::size_t j = best; j < best + stride_; ++j) {
      entries.push_back({hashes[j], Anchor{static_cast<int>(id), static_cast<int>(j)}});
      std::uint32_t fine = fine_hash_at(lit.data() + j);
      bitmap_[fine >> 6] |= std::uint64_t{1} << (fine & 63);
    }
  }
  // Anchors grouped by bucket, in the order they were made (a counting sort).
  first_.assign((std::size_t{1} << kHashBits) + 1, 0);
  for (const auto& e : entries) ++first_[static_cast<std::size_t>(e.first) + 1];
  for (std::size_t k = 1; k < first_.size(); ++k) first_[k] += first_[k - 1];
  anchors_.resize(entries.size());
  // Filled from each bucket's end, last entry first: first_[h + 1] ends at
  // bucket h's start, and shifting first_ down one puts every start in place.
  for (auto e = entries.rbegin(); e != entries.rend(); ++e) anchors_[--first_[e->first + 1]] = e->second;
  std::move(first_.begin() + 1, first_.end(), first_.begin());
  first_.back() = static_cast<std::uint32_t>(entries.size());
}

bool LiteralScanner::accepts(const std::vector<std::string>& literals) {
  return std::all_of(literals.begin(), literals.end(),
                     [](const std::string& literal) { return literal.size() >= kGram; });
}

void LiteralScanner::verify_at(const char* data, std::size_t n, std::size_t i, std::uint32_t hash,
                               std::vector<int>& found, std::vector<std::uint8_t>& marks,
                               std::uint32_t* attempts) const {
  for (std::uint32_t a = first_[hash]; a < first_[hash + 1]; ++a) {
    const Anchor& anchor = anchors_[a];
    if (attempts != nullptr) ++attempts[static_cast<std::size_t>(anchor.literal)];
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

void LiteralScanner::find_all(std::string_view text, std::vector<int>& found,
                              std::vector<std::uint8_t>& marks) const {
  scan<false>(text, found, marks, nullptr);
}

void LiteralScanner::find_all(std::string_view text, std::vector<int>& found,
                              std::vector<std::uint8_t>& marks,
                              std::vector<std::uint32_t>& attempts) const {
  attempts.assign(literals_.size(), 0);
  scan<true>(text, found, marks, attempts.data());
}

template <bool kCount>
void LiteralScanner::scan(std::string_view text, std::vector<int>& found,
                          std::vector<std::uint8_t>& marks, std::uint32_t* attempts) const {
  found.clear();
  if (!ok_ || literals_.empty() || text.size() < kGram) return;
  marks.assign(literals_.size(), 0);
  const char* data = text.data();
  const std::size_t n = text.size();
  const std::uint64_t* bits = bitmap_.data();
  // A local copy: verify_at writes through references the compiler cannot
  // tell apart from the member, which it would otherwise load at each step.
  const std::size_t stride = stride_;
  auto test_at = [&](std::size_t i) {
    std::uint32_t h = fine_hash_at(data + i);
    if (__builtin_expect(((bits[h >> 6] >> (h & 63)) & 1) != 0, 0))
      verify_at(data, n, i, h >> kBucketShift, found, marks, kCount ? attempts : nullptr);
  };
  // Hot loop: a 4-byte load, a multiply and a bit test per stride bytes,
  // four positions per bounds check.
  std::size_t i = 0;
  for (; i + 3 * stride + kGram <= n; i += 4 * stride) {
    test_at(i);
    test_at(i + stride);
    test_at(i + 2 * stride);
    test_at(i + 3 * stride);
  }
  for (; i + kGram <= n; i += stride) test_at(i);
}

}  // namespace logrx::detail
