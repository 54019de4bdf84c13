// SPDX-License-Identifier: MIT
// The built-in rulebook compiled into the library (a source generated from
// rules/ by tools/embed_rules.cc at build time).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace logrx::detail {

struct EmbeddedRuleFile {
  const char* name;  // path relative to rules/: "sglang/memory.json"
  const unsigned char* bytes;
  std::size_t size;
  // Line and column of each rule of the file, computed at build time: pairs,
  // rule_count of them (0 for a file the build could not parse).
  const int* rule_positions;
  std::size_t rule_count;
  // The file parsed at build time (rules/json_binary.h); empty when the
  // build could not parse it.
  const unsigned char* document;
  std::size_t document_size;
};

extern const EmbeddedRuleFile kEmbeddedRuleFiles[];
extern const std::size_t kEmbeddedRuleFileCount;

// Rules and diagnostics from the embedded copy name their file with this
// prefix and the path in the source tree ("builtin:rules/sglang/memory.json"):
// a position stays meaningful, and cannot be mistaken for a file on disk.
inline constexpr std::string_view kEmbeddedPrefix = "builtin:rules/";

// The text of an embedded file by its prefixed name; std::nullopt for
// any other name.
std::optional<std::string_view> embedded_rule_text(std::string_view prefixed_name);

}  // namespace logrx::detail
