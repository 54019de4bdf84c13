// SPDX-License-Identifier: MIT
#include "rules/json_binary.h"

#include <cstring>
#include <string>
#include <utility>

namespace logrx::detail {
namespace {

using nlohmann::json;

enum Tag : std::uint8_t {
  kNull = 'n',
  kTrue = 't',
  kFalse = 'f',
  kInteger = 'i',
  kUnsigned = 'u',
  kFloat = 'd',
  kString = 's',
  kArray = 'a',
  kObject = 'o',
};

template <typename T>
void put(std::vector<std::uint8_t>& out, T value) {
  std::uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

void put_text(std::vector<std::uint8_t>& out, const std::string& text) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
}

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool value(json& out, int depth) {
    // Rule files nest a few levels; a deep document is not one this wrote.
    constexpr int kMaxDepth = 256;
    std::uint8_t tag = 0;
    if (depth > kMaxDepth || !get(tag)) return false;
    switch (tag) {
      case kNull:
        out = nullptr;
        return true;
      case kTrue:
      case kFalse:
        out = tag == kTrue;
        return true;
      case kInteger:
        return number<std::int64_t>(out);
      case kUnsigned:
        return number<std::uint64_t>(out);
      case kFloat:
        return number<double>(out);
      case kString: {
        std::string text;
        if (!get_text(text)) return false;
        out = std::move(text);
        return true;
      }
      case kArray: {
        std::uint32_t count = 0;
        if (!get(count) || count > size_ - at_) return false;
        out = json::array();
        auto& items = out.get_ref<json::array_t&>();
        items.reserve(count);
        for (std::uint32_t i = 0; i < count; ++i) {
          items.emplace_back();
          if (!value(items.back(), depth + 1)) return false;
        }
        return true;
      }
      case kObject: {
        std::uint32_t count = 0;
        if (!get(count) || count > size_ - at_) return false;
        out = json::object();
        auto& members = out.get_ref<json::object_t&>();
        for (std::uint32_t i = 0; i < count; ++i) {
          std::string key;
          if (!get_text(key)) return false;
          // Written in the map's order: each key goes at the end.
          auto it = members.emplace_hint(members.end(), std::move(key), json());
          if (!value(it->second, depth + 1)) return false;
        }
        return members.size() == count;
      }
      default:
        return false;
    }
  }

  bool done() const { return at_ == size_; }

 private:
  template <typename T>
  bool number(json& out) {
    T v{};
    if (!get(v)) return false;
    out = v;
    return true;
  }

  template <typename T>
  bool get(T& value) {
    if (size_ - at_ < sizeof(T)) return false;
    std::memcpy(&value, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }

  bool get_text(std::string& text) {
    std::uint32_t length = 0;
    if (!get(length) || length > size_ - at_) return false;
    text.assign(reinterpret_cast<const char*>(data_ + at_), length);
    at_ += length;
    return true;
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

}  // namespace

void write_json_binary(const json& value, std::vector<std::uint8_t>& out) {
  switch (value.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
    case json::value_t::binary:
      out.push_back(kNull);
      return;
    case json::value_t::boolean:
      out.push_back(value.get<bool>() ? kTrue : kFalse);
      return;
    case json::value_t::number_integer:
      out.push_back(kInteger);
      put<std::int64_t>(out, value.get<std::int64_t>());
      return;
    case json::value_t::number_unsigned:
      out.push_back(kUnsigned);
      put<std::uint64_t>(out, value.get<std::uint64_t>());
      return;
    case json::value_t::number_float:
      out.push_back(kFloat);
      put<double>(out, value.get<double>());
      return;
    case json::value_t::string:
      out.push_back(kString);
      put_text(out, value.get_ref<const std::string&>());
      return;
    case json::value_t::array:
      out.push_back(kArray);
      put<std::uint32_t>(out, static_cast<std::uint32_t>(value.size()));
      for (const json& item : value) write_json_binary(item, out);
      return;
    case json::value_t::object:
      out.push_back(kObject);
      put<std::uint32_t>(out, static_cast<std::uint32_t>(value.size()));
      for (const auto& [key, item] : value.items()) {
        put_text(out, key);
        write_json_binary(item, out);
      }
      return;
  }
}

bool read_json_binary(const std::uint8_t* data, std::size_t size, json& value) {
  Reader reader(data, size);
  return reader.value(value, 0) && reader.done();
}

}  // namespace logrx::detail
