// SPDX-License-Identifier: MIT
// Maps JSON pointers to positions in the source text, so that a rule error
// can say "rules/x.json:14:20" even though nlohmann::json keeps no positions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace logrx::detail {

struct TextPosition {
  int line = 0;
  int column = 0;
};

class JsonPositions {
 public:
  // `text` must be JSON that nlohmann accepted with comments ignored; text
  // that is not is mapped as far as it goes.
  // Only values up to `max_depth` levels deep get their own position (deeper
  // ones share their parent's): a shallow map is much cheaper to build.
  explicit JsonPositions(std::string_view text, int max_depth = 64);

  // Position of the value at `pointer` ("/rules/3/pattern"); for a missing
  // member, the position of the closest existing parent.
  TextPosition find(const std::string& pointer) const;

 private:
  // A value's node: its position, found again by (parent node, pointer token).
  // Paths are never spelled out: a long key under many children would be
  // copied into each child's path (a 265 KB file once took 6.4 GB).
  void value(std::size_t node);
  std::size_t add_node(std::size_t parent, std::string_view token, TextPosition at);
  static std::string child_key(std::size_t parent, std::string_view token);
  void skip_space();
  void skip_string();
  void skip_nested();
  std::string read_key();
  TextPosition position_of(std::size_t offset);

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t counted_offset_ = 0;
  TextPosition counted_{1, 1};
  int depth_ = 0;
  int max_depth_ = 64;
  std::vector<TextPosition> nodes_;  // node 0 is the document
  std::unordered_map<std::string, std::size_t> children_;  // child_key -> node
};

// Escapes a key for use in a JSON pointer ("~" -> "~0", "/" -> "~1").
std::string escape_pointer_token(std::string_view key);

}  // namespace logrx::detail
