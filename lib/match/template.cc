// SPDX-License-Identifier: MIT
#include "match/template.h"

namespace logrx::detail {
namespace {

// Walks a template, calling on_text for literal text and on_name for each
// reference. Returns an error message, "" when well-formed.
template <typename OnText, typename OnName>
std::string walk(std::string_view text, OnText on_text, OnName on_name) {
  std::size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '{' && i + 1 < text.size() && text[i + 1] == '{') {
      on_text(std::string_view("{"));
      i += 2;
    } else if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
      on_text(std::string_view("}"));
      i += 2;
    } else if (c == '{') {
      std::size_t close = text.find('}', i + 1);
      if (close == std::string_view::npos) return "unclosed '{' at offset " + std::to_string(i);
      std::string_view name = text.substr(i + 1, close - i - 1);
      if (name.empty()) return "empty '{}' at offset " + std::to_string(i);
      if (!on_name(name)) return "";
      i = close + 1;
    } else if (c == '}') {
      return "unmatched '}' at offset " + std::to_string(i) + " (write '}}' for a brace)";
    } else {
      std::size_t next = text.find_first_of("{}", i);
      if (next == std::string_view::npos) next = text.size();
      on_text(text.substr(i, next - i));
      i = next;
    }
  }
  return "";
}

}  // namespace

TemplateRefs template_references(std::string_view text) {
  TemplateRefs refs;
  refs.error = walk(
      text, [](std::string_view) {},
      [&](std::string_view name) {
        refs.names.emplace_back(name);
        return true;
      });
  return refs;
}

std::optional<std::string> expand_template(std::string_view text,
                                           const std::map<std::string, std::string>& captures) {
  std::string out;
  bool missing = false;
  std::string error = walk(
      text, [&](std::string_view piece) { out.append(piece); },
      [&](std::string_view name) {
        auto it = captures.find(std::string(name));
        if (it == captures.end()) {
          missing = true;
          return false;
        }
        out.append(it->second);
        return true;
      });
  if (missing || !error.empty()) return std::nullopt;
  return out;
}

}  // namespace logrx::detail
