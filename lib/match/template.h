// SPDX-License-Identifier: MIT
// Remediation text templates: "{name}" is replaced by the capture `name`;
// "{{" and "}}" are literal braces.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace logrx::detail {

// Capture names referred to by `text`, or an error message when the template
// is malformed (an unclosed or empty brace).
struct TemplateRefs {
  std::vector<std::string> names;
  std::string error;
};
TemplateRefs template_references(std::string_view text);

// Expands `text`; std::nullopt when it refers to a capture that is absent.
std::optional<std::string> expand_template(std::string_view text,
                                           const std::map<std::string, std::string>& captures);

}  // namespace logrx::detail
