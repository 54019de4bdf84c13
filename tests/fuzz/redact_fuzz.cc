// SPDX-License-Identifier: MIT
// Fuzzes the redactor: any text. Beyond "no crash": redaction never grows a
// text beyond a placeholder per secret, and a redacted text has nothing left
// to redact (a second pass changes nothing), so no secret survives the first.
#include <cstddef>
#include <cstdint>
#include <string>

#include "logrx/line.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  bool changed = logrx::redact_secrets(text);
  if (!changed && text.size() != size) __builtin_trap();  // "unchanged" means unchanged
  // Each secret becomes "<redacted>" (10 bytes), and secrets do not overlap.
  if (text.size() > size * 11 + 16) __builtin_trap();
  std::string again = text;
  logrx::redact_secrets(again);
  if (again != text) __builtin_trap();
  return 0;
}
