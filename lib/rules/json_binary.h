// SPDX-License-Identifier: MIT
// A parsed JSON document written as bytes, so that the built-in rule files,
// parsed once at build time, are read back without lexing their text again:
// nlohmann's lexer, a character at a time, was most of every start-up. The
// bytes are private to a build (written and read by the same code), never a
// file format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace logrx::detail {

// Appends `value` to `out`.
void write_json_binary(const nlohmann::json& value, std::vector<std::uint8_t>& out);

// Reads what write_json_binary wrote; false (and `value` unspecified) when
// the bytes are not exactly one such document.
bool read_json_binary(const std::uint8_t* data, std::size_t size, nlohmann::json& value);

}  // namespace logrx::detail
