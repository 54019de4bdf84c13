// SPDX-License-Identifier: MIT
// Finds which of a fixed set of literals occur in a text, case-insensitively,
// fast enough to run over every byte of a log: the prefilter that lets whole
// blocks of lines skip regex matching.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace logrx::detail {

class LiteralScanner {
 public:
  // `literals` are lowercase and at least stride + 1 bytes long; shorter
  // ones are refused (ok() is then false), since the scan relies on that
  // length. The scan looks at one position in `stride`.
  // `pair_counts`, when given (65536 entries, indexed by byte pair as in
  // text), says how often each byte pair occurs in the text to be scanned:
  // anchors then avoid the pairs that are common there. Without it a static
  // byte-frequency guess is used.
  explicit LiteralScanner(std::vector<std::string> literals, std::size_t stride = 1,
                          const std::vector<std::uint32_t>* pair_counts = nullptr);

  // Counts byte pairs of text into counts (resized to 65536 on first use).
  static void count_pairs(std::string_view text, std::vector<std::uint32_t>& counts);

  // The length FilteredRE2 atoms are asked to have.
  static constexpr std::size_t kMinLength = 4;

  bool ok() const noexcept { return ok_; }
  std::size_t size() const noexcept { return literals_.size(); }

  // Sets found to the indices of the literals that occur in text, each once,
  // in no particular order. `marks` is caller-owned scratch (one per thread).
  void find_all(std::string_view text, std::vector<int>& found, std::vector<std::uint8_t>& marks) const;

 private:
  struct Anchor {
    int literal;
    int offset;  // of the anchor bigram inside the literal
  };

  std::vector<std::string> literals_;
  std::vector<std::uint64_t> bitmap_;  // 65536 bits, one per byte pair as it appears in text
  // Anchors by lowercase byte pair: anchors_[first_[key] .. first_[key + 1]).
  std::vector<std::uint32_t> first_;
  std::vector<Anchor> anchors_;
  // Every literal registers `stride_` consecutive byte pairs, so scanning one
  // position in stride_ still meets one of them wherever the literal starts.
  std::size_t stride_;
  bool ok_ = true;
};

}  // namespace logrx::detail
