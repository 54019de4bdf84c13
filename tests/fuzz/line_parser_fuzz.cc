// SPDX-License-Identifier: MIT
// Fuzzes the line splitter and parser: any bytes, any chunking.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "logrx/line.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // The first byte picks the line cap and chunk size, so both stay explored.
  std::size_t cap = size > 0 ? 1 + data[0] % 200 : 64;
  std::size_t chunk = size > 1 ? 1 + data[1] % 17 : 7;
  logrx::LineSplitter splitter(cap);
  logrx::LineEvent event;
  std::uint64_t line = 0;
  auto on_line = [&](std::string_view text, bool truncated) {
    logrx::parse_line(text, ++line, event);
    if (truncated && text.size() > cap) __builtin_trap();
    if (event.text.find('\x1b') != std::string::npos && event.text.size() > 0) {
      // Escape sequences are removed; a lone ESC byte may remain only when it
      // cannot start a sequence, which sanitize_line never leaves behind.
      __builtin_trap();
    }
  };
  for (std::size_t i = 0; i < input.size(); i += chunk)
    splitter.feed(input.substr(i, chunk), on_line);
  splitter.finish(on_line);
  return 0;
}
