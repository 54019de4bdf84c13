// SPDX-License-Identifier: MIT
#include "match/template.h"

namespace logrx::detail {
namespace {

// Walks a template, calling on_text for literal text and on_ref for each
// reference (the text between braces). Returns an error message, "" when
// well-formed; stops early when on_ref returns false.
template <typename OnText, typename OnRef>
std::string walk(std::string_view text, OnText on_text, OnRef on_ref) {
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
      std::string_view ref = text.substr(i + 1, close - i - 1);
      if (ref.empty()) return "empty '{}' at offset " + std::to_string(i);
      if (!on_ref(ref)) return "";
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

bool is_expression(std::string_view ref) { return !ref.empty() && ref[0] == '='; }

}  // namespace

TemplateRefs template_references(std::string_view text) {
  TemplateRefs refs;
  refs.error = walk(
      text, [](std::string_view) {},
      [&](std::string_view ref) {
        if (is_expression(ref)) {
          refs.expressions.emplace_back(ref.substr(1));
        } else {
          refs.names.emplace_back(ref);
        }
        return true;
      });
  return refs;
}

// The value of one reference: a name or "= expression".
static std::optional<Value> resolve(std::string_view ref, const Lookup& lookup) {
  if (!is_expression(ref)) return lookup(std::string(ref));
  // Templates are checked when the rulebook loads, so this parse cannot
  // fail; it runs only for lines that fired a rule.
  if (auto e = Expression::parse(ref.substr(1), nullptr)) return e->evaluate(lookup);
  return std::nullopt;
}

std::optional<std::string> expand_template(std::string_view text, const Lookup& lookup) {
  std::string out;
  bool missing = false;
  std::string error = walk(
      text, [&](std::string_view piece) { out.append(piece); },
      [&](std::string_view ref) {
        std::optional<Value> value = resolve(ref, lookup);
        if (!value) {
          missing = true;
          return false;
        }
        out.append(value->to_string());
        return true;
      });
  if (missing || !error.empty()) return std::nullopt;
  return out;
}

std::string expand_display(std::string_view text, const Lookup& lookup) {
  std::string out;
  std::string error = walk(
      text, [&](std::string_view piece) { out.append(piece); },
      [&](std::string_view ref) {
        if (std::optional<Value> value = resolve(ref, lookup)) out.append(value->to_string());
        return true;
      });
  if (!error.empty()) return std::string(text);
  // A reference left empty may leave "( )", doubled or trailing spaces.
  std::string tidy;
  for (char c : out) {
    if (c == ' ' && (tidy.empty() || tidy.back() == ' ' || tidy.back() == '(')) continue;
    if ((c == ')' || c == ',' || c == '.' || c == ':') && !tidy.empty() && tidy.back() == ' ')
      tidy.pop_back();
    tidy += c;
  }
  while (!tidy.empty() && tidy.back() == ' ') tidy.pop_back();
  for (std::size_t p; (p = tidy.find("()")) != std::string::npos;) {
    tidy.erase(p, 2);
    if (p > 0 && p <= tidy.size() && tidy[p - 1] == ' ' && (p == tidy.size() || tidy[p] == ' '))
      tidy.erase(p - 1, 1);
  }
  return tidy;
}

}  // namespace logrx::detail
