// SPDX-License-Identifier: MIT
// Fuzzes the X3 config-dump grammar (Python repr, dicts, key=value lists).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parse/config_dump.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<logrx::detail::ConfigEntry> entries;
  std::string error;
  bool ok = logrx::detail::parse_config_dump(input, entries, error);
  if (!ok && !entries.empty()) __builtin_trap();  // a failed parse keeps nothing
  if (!ok && error.empty()) __builtin_trap();     // and always says why
  return 0;
}
