// SPDX-License-Identifier: MIT
// Reading rule files: JSON (comments allowed) into validated RuleSpecs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "logrx/diagnostic.h"
#include "logrx/rulebook.h"

namespace logrx::detail {

// Servers a rule may name in "servers".
bool is_known_server(std::string_view name);

struct RuleFiles {
  std::vector<RuleSpec> rules;
  std::vector<ServerFlags> flags;
};

// What the build already knows of a file (the built-in files': see
// embedded_rules.h): the line and column of each rule (`count` pairs) and
// the parsed document (rules/json_binary.h).
struct ParsedAhead {
  const int* pairs = nullptr;
  std::size_t count = 0;
  const unsigned char* document = nullptr;
  std::size_t document_size = 0;
};

// Parses one rule or flag file's text into `out`. Every problem goes to
// `errors`; rules with problems are not returned, the others are. What
// `known` lacks is read from the text.
void parse_rule_file(std::string_view text, const std::string& file_name, RuleFiles& out,
                     Diagnostics& errors, ParsedAhead known = {});

// Reads a file or every *.json under a directory (sorted by path).
RuleFiles load_rule_source(const std::string& path, Diagnostics& errors);

// Parses the rulebook compiled into the library; files are named
// "builtin:rules/<path>" (see embedded_rules.h).
RuleFiles load_embedded_rules(Diagnostics& errors);

// Line and column of the JSON value at pointer in a rule file (on disk or
// embedded), read again:
// field positions are only needed for an error, so they are not kept.
std::optional<std::pair<int, int>> position_in_file(const std::string& file,
                                                    const std::string& pointer);

}  // namespace logrx::detail
