// SPDX-License-Identifier: MIT
// One pass over a block of lines that tells which of a few rare marks it
// holds, so that the per-line checks looking for them (an escaped quote, an
// error word, a traceback header) can be skipped on every line of a block
// without one. A mark absent from the block is absent from each of its lines.
#pragma once

#include <string_view>

namespace logrx::detail {

struct TextMarks {
  bool backslash = false;  // '\\' (escaped quotes)
  bool rror = false;       // "rror" in any case ("error", "ERROR", "Error")
  bool traceback = false;  // "Trac" as written ("Traceback (most recent call last):")
  // A terminal control written out as text, which sanitize_line removes: a
  // colour code whose ESC a paste dropped ("[0m", "[0;"), caret notation
  // ("^[", "^M" from cat -v or less) and rsyslog's octal escapes ("#033",
  // "#015").
  bool notation = false;
  // A byte sanitize_line changes: ESC, CR, NUL or one of 0x80 and above
  // (the text is not plain ASCII; is_plain_text is false).
  bool unclean = false;
  // "fail", "bort" or "kill" in any case ("failed", "FAILURE", "Aborted",
  // "OOMKilled"): the words of an error line that does not say "error". Set
  // for look-alikes too ("f?il", "b?rt", "k?ll": the second letter is not
  // compared); never missing for the words themselves.
  bool fail = false;
};

TextMarks find_marks(std::string_view text);

// For a text not scanned for marks: it may hold any of them.
inline constexpr TextMarks kAnyMarks{true, true, true, true, true, true};

}  // namespace logrx::detail
