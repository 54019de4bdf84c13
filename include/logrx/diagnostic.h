// SPDX-License-Identifier: MIT
// Diagnostics: problems found while loading or compiling a rulebook.
//
// A Diagnostic names the file, the rule and the position of the problem, so a
// rule author can jump to it. Loaders report every problem they find, not only
// the first.
//
// Thread-safety: plain values; format_diagnostic is pure.
#pragma once

#include <string>
#include <vector>

namespace logrx {

struct Diagnostic {
  std::string code;          // stable: "rule.json-syntax", "rule.bad-pattern", ...
  std::string message;       // one sentence, operator terms
  std::string file;          // the file as named by the caller, "" when none
  std::string rule_id;       // "" when the problem is not inside one rule
  int line = 0;              // 1-based, 0 when unknown
  int column = 0;            // 1-based, 0 when unknown
  std::string json_pointer;  // "/rules/3/pattern", "" when unknown
};

using Diagnostics = std::vector<Diagnostic>;

// Renders "file:line:col: error[code]: rule "id": message (at /pointer)".
std::string format_diagnostic(const Diagnostic& diagnostic);

}  // namespace logrx
