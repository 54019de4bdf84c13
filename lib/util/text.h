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

inline bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// True when `text` carries quotes escaped for JSON or a Python repr (\' \").
inline bool has_escaped_quotes(std::string_view text) {
  for (std::size_t at = text.find('\\'); at != std::string_view::npos; at = text.find('\\', at + 1))
    if (at + 1 < text.size() && (text[at + 1] == '\'' || text[at + 1] == '"')) return true;
  return false;
}

// A message as its author wrote it, from a JSON or repr rendering of it:
// \' and \" become quotes, \n and \t spaces.
inline std::string unescape_quotes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      char next = text[i + 1];
      if (next == '\'' || next == '"') {
        out += next;
        ++i;
        continue;
      }
      if (next == 'n' || next == 't') {
        out += ' ';
        ++i;
        continue;
      }
    }
    out += text[i];
  }
  return out;
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
