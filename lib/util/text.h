// SPDX-License-Identifier: MIT
// Small string helpers shared by the library layers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace logrx::detail {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// Parses exactly `count` decimal digits at text[pos...]; -1 when they are not there.
inline int parse_fixed_digits(std::string_view text, std::size_t pos, std::size_t count) {
  if (pos + count > text.size()) return -1;
  int value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    char c = text[pos + i];
    if (!is_digit(c)) return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

// Converts a byte offset into a 1-based line and column.
inline void offset_to_line_column(std::string_view text, std::size_t offset, int& line,
                                  int& column) {
  line = 1;
  column = 1;
  if (offset > text.size()) offset = text.size();
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
}

}  // namespace logrx::detail
