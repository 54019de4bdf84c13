// SPDX-License-Identifier: MIT
// Line parsing entry points for the analyzer's hot path.
#pragma once

#include <cstdint>
#include <string_view>

#include "logrx/line.h"

namespace logrx::detail {

// parse_line for a line already known to be plain text (no escapes, control
// bytes or invalid UTF-8, so sanitising would not change it): the analyzer
// checks whole blocks of the stream at once instead of every line.
void parse_plain_line(std::string_view raw, std::uint64_t line_number, LineEvent& event);

// The header fields of a line, as views into it: what LineEvent holds,
// without copying. See parse_line.
struct HeaderView {
  Dialect dialect = Dialect::Unknown;
  bool has_timestamp = false;
  Timestamp timestamp;
  std::string_view timestamp_text;
  std::string_view level;
  std::string_view process;
  std::int64_t pid = -1;
  std::string_view source;
  std::string_view message;
};

// Writes the header of text into view, a default-constructed HeaderView.
void parse_header_into(std::string_view text, HeaderView& view);
inline HeaderView parse_header(std::string_view text) {
  HeaderView view;
  parse_header_into(text, view);
  return view;
}

// uvicorn's own record ("INFO:     10.0.0.1:5000 - \"POST ...\" 200 OK"), as
// vLLM's API server prints it behind its process prefix. No server's header
// starts so: parse_header of such a text is always Dialect::Unknown (a test
// keeps it so), which spares parsing it again to find out.
bool is_uvicorn_record(std::string_view text);

// Fills the header fields and message of event from event.text.
void parse_header(LineEvent& event);

}  // namespace logrx::detail
