// SPDX-License-Identifier: MIT
// A rule that covers two wordings of one message often wants the same
// capture in both alternatives ("(?P<n>\d+) GiB|(?P<n>\d+)GB"), which RE2
// refuses ("duplicate capture group name"). The loader renames the second
// and later uses of a name to "<name>__dup<k>", and captures are read back
// under the name the rule gave (the first group that took part wins).
// Header-only: the build tool that precomputes the prefilter renames the
// same way, so the table is keyed by the pattern the library compiles.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <string_view>

namespace logrx::detail {

inline constexpr std::string_view kDuplicateCaptureMark = "__dup";

// The index after the escape ("\\x", "\\Q...\\E") or class ("[...]") that
// starts at pattern[i], or i + 1 for any other character.
inline std::size_t skip_pattern_unit(std::string_view pattern, std::size_t i) {
  char c = pattern[i];
  if (c == '\\') {
    if (i + 1 < pattern.size() && pattern[i + 1] == 'Q') {
      std::size_t end = pattern.find("\\E", i + 2);
      return end == std::string_view::npos ? pattern.size() : end + 2;
    }
    return std::min(pattern.size(), i + 2);
  }
  if (c != '[') return i + 1;
  std::size_t j = i + 1;
  if (j < pattern.size() && pattern[j] == '^') ++j;
  if (j < pattern.size() && pattern[j] == ']') ++j;
  while (j < pattern.size() && pattern[j] != ']') {
    if (pattern[j] == '\\') {
      j += 2;
    } else if (pattern[j] == '[' && j + 1 < pattern.size() && pattern[j + 1] == ':') {
      std::size_t end = pattern.find(":]", j + 2);
      j = end == std::string_view::npos ? j + 1 : end + 2;
    } else {
      ++j;
    }
  }
  return std::min(pattern.size(), j + 1);
}

inline std::string rename_duplicate_captures(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size());
  std::map<std::string, int, std::less<>> uses;
  std::size_t i = 0;
  while (i < pattern.size()) {
    char c = pattern[i];
    if (c == '\\' || c == '[') {  // an escape or a class: no group starts inside it
      std::size_t stop = skip_pattern_unit(pattern, i);
      out.append(pattern.substr(i, stop - i));
      i = stop;
      continue;
    }
    std::size_t name_at = std::string_view::npos;
    if (c == '(' && pattern.compare(i, 4, "(?P<") == 0) name_at = i + 4;
    else if (c == '(' && pattern.compare(i, 3, "(?<") == 0 && pattern.compare(i, 4, "(?<=") != 0 &&
             pattern.compare(i, 4, "(?<!") != 0)
      name_at = i + 3;
    std::size_t close = name_at == std::string_view::npos ? std::string_view::npos : pattern.find('>', name_at);
    if (close == std::string_view::npos) {
      out.push_back(c);
      ++i;
      continue;
    }
    std::string_view name = pattern.substr(name_at, close - name_at);
    int use = ++uses[std::string(name)];
    out.append(pattern.substr(i, name_at - i));
    out.append(name);
    if (use > 1) out.append(std::string(kDuplicateCaptureMark) + std::to_string(use));
    out.push_back('>');
    i = close + 1;
  }
  return out;
}

// The name a rule gave a capture that the loader may have renamed.
inline std::string_view canonical_capture_name(std::string_view name) {
  std::size_t at = name.rfind(kDuplicateCaptureMark);
  if (at == std::string_view::npos || at == 0 || at + kDuplicateCaptureMark.size() == name.size())
    return name;
  for (std::size_t k = at + kDuplicateCaptureMark.size(); k < name.size(); ++k)
    if (name[k] < '0' || name[k] > '9') return name;
  return name.substr(0, at);
}

}  // namespace logrx::detail
