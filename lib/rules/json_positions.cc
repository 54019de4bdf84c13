// SPDX-License-Identifier: MIT
#include "rules/json_positions.h"

#include <algorithm>
#include <array>

namespace logrx::detail {
namespace {
constexpr int kMaxDepth = 64;  // deeper values share their parent's position
}

std::string escape_pointer_token(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

JsonPositions::JsonPositions(std::string_view text, int max_depth)
    : text_(text), max_depth_(std::min(max_depth, kMaxDepth)) {
  skip_space();
  nodes_.push_back(TextPosition{1, 1});
  if (pos_ < text_.size()) nodes_[0] = position_of(pos_);
  value(0);
}

std::string JsonPositions::child_key(std::size_t parent, std::string_view token) {
  std::string key = std::to_string(parent);
  key += '/';
  key += token;
  return key;
}

std::size_t JsonPositions::add_node(std::size_t parent, std::string_view token, TextPosition at) {
  auto [it, added] = children_.emplace(child_key(parent, token), nodes_.size());
  if (added) nodes_.push_back(at);
  return it->second;
}

TextPosition JsonPositions::find(const std::string& pointer) const {
  // Down from the document, token by token, to the closest existing parent.
  std::size_t node = 0;
  std::string_view rest = pointer;
  while (!rest.empty() && rest.front() == '/') {
    rest.remove_prefix(1);
    std::string_view token = rest.substr(0, rest.find('/'));
    rest.remove_prefix(token.size());
    auto it = children_.find(child_key(node, token));
    if (it == children_.end()) break;
    node = it->second;
  }
  return nodes_[node];
}

TextPosition JsonPositions::position_of(std::size_t offset) {
  // Offsets only grow during the walk, so counting is incremental; whole
  // lines at a time (this walk runs on every rule file at every start).
  offset = std::min(offset, text_.size());
  if (offset <= counted_offset_) return counted_;
  std::string_view span = text_.substr(counted_offset_, offset - counted_offset_);
  std::size_t last_newline = span.rfind('\n');
  if (last_newline == std::string_view::npos) {
    counted_.column += static_cast<int>(span.size());
  } else {
    counted_.line += static_cast<int>(std::count(span.begin(), span.end(), '\n'));
    counted_.column = static_cast<int>(span.size() - last_newline);
  }
  counted_offset_ = offset;
  return counted_;
}

void JsonPositions::skip_space() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      std::size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == std::string_view::npos ? text_.size() : end + 2;
    } else {
      break;
    }
  }
}

void JsonPositions::skip_nested() {
  // Only strings, comments and brackets matter inside a skipped value.
  static constexpr auto kStops = [] {
    std::array<bool, 256> stops{};
    for (unsigned char c : std::string_view("\"/{}[]")) stops[c] = true;
    return stops;
  }();
  int open = 0;
  while (pos_ < text_.size()) {
    while (pos_ < text_.size() && !kStops[static_cast<unsigned char>(text_[pos_])]) ++pos_;
    if (pos_ >= text_.size()) return;
    char c = text_[pos_];
    if (c == '"') {
      skip_string();
      continue;
    }
    if (c == '/') {
      std::size_t before = pos_;
      skip_space();
      if (pos_ != before) continue;
    }
    ++pos_;
    if (c == '{' || c == '[') ++open;
    if ((c == '}' || c == ']') && --open == 0) return;
  }
}

void JsonPositions::skip_string() {
  ++pos_;  // opening quote
  while (pos_ < text_.size()) {
    std::size_t quote = text_.find('"', pos_);
    if (quote == std::string_view::npos) {
      pos_ = text_.size();
      break;
    }
    // A quote after an odd run of backslashes is escaped.
    std::size_t backslashes = 0;
    while (quote - backslashes > pos_ && text_[quote - backslashes - 1] == '\\') ++backslashes;
    pos_ = quote + 1;
    if (backslashes % 2 == 0) return;
  }
  ++pos_;
}

std::string JsonPositions::read_key() {
  std::string key;
  ++pos_;
  while (pos_ < text_.size() && text_[pos_] != '"') {
    if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
      char e = text_[pos_ + 1];
      // Rule files use plain keys; escaped keys only need to stay distinct.
      key += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      pos_ += 2;
    } else {
      key += text_[pos_++];
    }
  }
  ++pos_;
  return key;
}

void JsonPositions::value(std::size_t node) {
  if (pos_ >= text_.size()) return;
  char c = text_[pos_];
  if ((c == '{' || c == '[') && depth_ >= max_depth_) {
    skip_nested();
    return;
  }
  if (c == '{' || c == '[') {
    bool object = c == '{';
    char close = object ? '}' : ']';
    ++pos_;
    ++depth_;
    std::size_t index = 0;
    while (true) {
      skip_space();
      if (pos_ >= text_.size()) break;
      if (text_[pos_] == close) {
        ++pos_;
        break;
      }
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      std::string token;
      if (object) {
        if (text_[pos_] != '"') break;  // not JSON: stop mapping
        std::string key = read_key();
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == ':') ++pos_;
        skip_space();
        token = escape_pointer_token(key);
      } else {
        token = std::to_string(index++);
      }
      std::size_t before = pos_;
      std::size_t child = add_node(node, token, position_of(pos_));
      value(child);
      if (pos_ == before) break;  // no progress: malformed text
    }
    --depth_;
    return;
  }
  if (c == '"') {
    skip_string();
    return;
  }
  while (pos_ < text_.size()) {  // number, true, false, null
    char d = text_[pos_];
    if (d == ',' || d == '}' || d == ']' || d == ' ' || d == '\n' || d == '\t' || d == '\r' ||
        d == '/')
      break;
    ++pos_;
  }
}

}  // namespace logrx::detail
