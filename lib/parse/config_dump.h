// SPDX-License-Identifier: MIT
// Reads the configuration servers print at start-up into key/value pairs:
//   SGLang  server_args=ServerArgs(model_path='x', mem_fraction_static=0.8, ...)   (Python repr)
//           server_args={'model_path': 'x', ...}                                  (newer: dict)
//   vLLM    non-default args: {'model': 'x', 'max_model_len': 8192}               (dict)
//           ... with config: model='x', dtype=torch.bfloat16, max_seq_len=32768   (key=value list)
// Parsed with Boost.Spirit X3; nested values (lists, dicts, calls) are kept as
// their text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace logrx::detail {

struct ConfigValue {
  enum class Kind { None, Bool, Number, String, Raw };
  Kind kind = Kind::Raw;
  bool boolean = false;
  double number = 0;
  std::string text;  // the string (unescaped) for String, the source text otherwise
};

struct ConfigEntry {
  std::string key;
  ConfigValue value;
};

// Parses a whole dump. Returns false with `error` (naming the offset) when
// the text is not a well-formed dump; `out` then holds nothing.
bool parse_config_dump(std::string_view text, std::vector<ConfigEntry>& out, std::string& error);

}  // namespace logrx::detail
