// SPDX-License-Identifier: MIT
#include <cstring>
#include <string_view>

#include "logrx/line.h"

namespace logrx {
namespace {

// Cuts `keep` back so the prefix does not end inside a UTF-8 sequence.
std::size_t utf8_safe_cut(std::string_view text, std::size_t keep) {
  if (keep >= text.size()) return text.size();
  std::size_t cut = keep;
  for (int back = 0; back < 3 && cut > 0; ++back) {
    if ((static_cast<unsigned char>(text[cut]) & 0xC0) != 0x80) break;
    --cut;
  }
  return (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80 ? keep : cut;
}

}  // namespace

LineSplitter::LineSplitter(std::size_t max_line_bytes)
    : max_line_bytes_(max_line_bytes == 0 ? 1 : max_line_bytes) {}

void LineSplitter::feed(std::string_view bytes, const LineCallback& on_line) {
  while (!bytes.empty()) {
    const void* found = std::memchr(bytes.data(), '\n', bytes.size());
    std::size_t length = found == nullptr
                             ? bytes.size()
                             : static_cast<std::size_t>(static_cast<const char*>(found) -
                                                        bytes.data());
    std::string_view piece = bytes.substr(0, length);

    if (!has_pending_ && found != nullptr && piece.size() <= max_line_bytes_) {
      // The common case: a whole line inside the chunk, handed over without a copy.
      on_line(piece, false);
    } else {
      has_pending_ = true;
      std::size_t room = max_line_bytes_ - pending_.size();
      if (pending_truncated_) {
        // Already cut: the rest of this line is dropped.
      } else if (piece.size() > room) {
        std::size_t keep = utf8_safe_cut(piece, room);
        pending_.append(piece.substr(0, keep));
        pending_truncated_ = true;
      } else {
        pending_.append(piece);
      }
      if (found != nullptr) {
        on_line(pending_, pending_truncated_);
        pending_.clear();
        pending_truncated_ = false;
        has_pending_ = false;
      }
    }
    if (found == nullptr) break;
    bytes.remove_prefix(length + 1);
  }
}

void LineSplitter::finish(const LineCallback& on_line) {
  if (has_pending_) {
    on_line(pending_, pending_truncated_);
    pending_.clear();
    pending_truncated_ = false;
    has_pending_ = false;
  }
}

}  // namespace logrx
