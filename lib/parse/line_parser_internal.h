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

// Fills the header fields and message of event from event.text.
void parse_header(LineEvent& event);

}  // namespace logrx::detail
