// SPDX-License-Identifier: MIT
#include "logrx/diagnostic.h"

#include "logrx/line.h"

namespace logrx {

std::string format_diagnostic(const Diagnostic& d) {
  std::string out;
  if (!d.file.empty()) {
    out += d.file;
    if (d.line > 0) {
      out += ":" + std::to_string(d.line);
      if (d.column > 0) out += ":" + std::to_string(d.column);
    }
    out += ": ";
  }
  out += "error[" + d.code + "]: ";
  if (!d.rule_id.empty()) out += "rule \"" + d.rule_id + "\": ";
  out += d.message;
  if (!d.json_pointer.empty()) out += " (at " + d.json_pointer + ")";
  // A rule file is input too: its ids, paths and quoted text may carry
  // escape sequences meant for the terminal that shows this.
  return escape_control_characters(out);
}

}  // namespace logrx
