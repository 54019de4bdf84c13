// SPDX-License-Identifier: MIT
// Text templates in titles, values and "why": "{name}" is a capture, fact or
// run variable; "{= expr}" an expression; "{{" and "}}" literal braces.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/expression.h"

namespace logrx::detail {

// What a template refers to: plain names and embedded expressions, or an
// error message when the template is malformed.
struct TemplateRefs {
  std::vector<std::string> names;
  std::vector<std::string> expressions;
  std::string error;
};
TemplateRefs template_references(std::string_view text);

// Expands `text`; std::nullopt when something it refers to has no value.
std::optional<std::string> expand_template(std::string_view text, const Lookup& lookup);

// For text a person reads (titles, explanations of a fix): like
// expand_template, but a reference that cannot be filled is left out instead
// of failing the whole text, so raw rule source never reaches the output.
std::string expand_display(std::string_view text, const Lookup& lookup);

}  // namespace logrx::detail
