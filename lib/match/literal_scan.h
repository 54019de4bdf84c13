// SPDX-License-Identifier: MIT
// Finds which of a fixed set of literals occur in a text, case-insensitively,
// fast enough to run over every byte of a log: the prefilter that lets whole
// blocks of lines skip regex matching.
//
// Every 4-byte window of a literal is a "gram". The scan hashes the gram at
// one position in `stride` and tests one bit; each literal registers `stride`
// consecutive grams, so whichever position it starts at, one of them is
// tested. Grams are chosen where they are rarest in the text being scanned,
// so the bit test almost never passes on healthy lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace logrx::detail {

class LiteralScanner {
 public:
  // The length FilteredRE2 atoms are asked to have; it allows a stride of 3.
  static constexpr std::size_t kMinLength = 6;
  static constexpr std::size_t kGram = 4;

  // `literals` are lowercase and at least kGram bytes long (ok() is false
  // otherwise). The stride is the shortest literal's length - kGram + 1,
  // at most 8. `gram_counts`, when given (see count_grams), says how often
  // each gram hash occurs in typical text; without it a static guess ranks
  // grams by how common their bytes are.
  explicit LiteralScanner(std::vector<std::string> literals,
                          const std::vector<std::uint32_t>* gram_counts = nullptr);

  // Counts the gram hashes of text into counts (sized on first use).
  static void count_grams(std::string_view text, std::vector<std::uint32_t>& counts);

  bool ok() const noexcept { return ok_; }
  // Whether a scanner of these literals would be ok(), without building one.
  static bool accepts(const std::vector<std::string>& literals);
  std::size_t stride() const noexcept { return stride_; }

  // Sets found to the indices of the literals that occur in text, each once,
  // in no particular order. `marks` is caller-owned scratch (one per thread).
  void find_all(std::string_view text, std::vector<int>& found, std::vector<std::uint8_t>& marks) const;

  // Like find_all, and also counts per literal how many times its anchors
  // passed the bit test (found or not): which literals cost verification work.
  void find_all(std::string_view text, std::vector<int>& found, std::vector<std::uint8_t>& marks,
                std::vector<std::uint32_t>& attempts) const;

 private:
  static constexpr int kHashBits = 16;  // buckets of anchors and of gram counts

  void verify_at(const char* data, std::size_t n, std::size_t i, std::uint32_t hash,
                 std::vector<int>& found, std::vector<std::uint8_t>& marks,
                 std::uint32_t* attempts) const;
  template <bool kCount>
  void scan(std::string_view text, std::vector<int>& found, std::vector<std::uint8_t>& marks,
            std::uint32_t* attempts) const;

  struct Anchor {
    int literal;
    int offset;  // of the gram inside the literal
  };

  std::vector<std::string> literals_;
  std::vector<std::uint64_t> bitmap_;  // one bit per fine gram hash (2^20: few false hits)
  // Anchors by gram hash: anchors_[first_[h] .. first_[h + 1]).
  std::vector<std::uint32_t> first_;
  std::vector<Anchor> anchors_;
  std::size_t stride_ = 1;
  bool ok_ = true;
};

}  // namespace logrx::detail
