// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rules/embedded_rules.h"
#include "rules/json_binary.h"

using logrx::detail::read_json_binary;
using logrx::detail::write_json_binary;
using nlohmann::json;

namespace {

json round_trip(const json& value, bool& ok) {
  std::vector<std::uint8_t> bytes;
  write_json_binary(value, bytes);
  json back;
  ok = read_json_binary(bytes.data(), bytes.size(), back);
  return back;
}

}  // namespace

TEST_CASE("A document written as bytes reads back equal, type for type", "[rules][loader]") {
  const json value = json::parse(R"({
    "version": 1, "big": 18446744073709551615, "negative": -9007199254740993, "float": 0.85,
    "tiny": 5e-324, "text": "unicode \u00e9\u4e2d \"quoted\" \\ back", "empty": "", "none": null,
    "yes": true, "no": false, "list": [1, [2, [3, {}]], [], {"a": {"b": []}}],
    "rules": [{"id": "x.y", "examples": {"match": ["a"], "no_match": []}}]
  })");
  bool ok = false;
  json back = round_trip(value, ok);
  REQUIRE(ok);
  CHECK(back == value);
  CHECK(back["big"].is_number_unsigned());
  CHECK(back["negative"].is_number_integer());
  CHECK(back["float"].is_number_float());
  CHECK(back.dump() == value.dump());
}

TEST_CASE("Bytes that are not exactly one written document are refused", "[rules][loader]") {
  std::vector<std::uint8_t> bytes;
  write_json_binary(json::parse(R"({"rules": [{"id": "a.b", "pattern": "x"}], "n": 1.5})"), bytes);
  json out;
  REQUIRE(read_json_binary(bytes.data(), bytes.size(), out));
  // Every truncation, a byte more, a wrong tag.
  for (std::size_t n = 0; n < bytes.size(); ++n) CHECK_FALSE(read_json_binary(bytes.data(), n, out));
  std::vector<std::uint8_t> longer = bytes;
  longer.push_back('n');
  CHECK_FALSE(read_json_binary(longer.data(), longer.size(), out));
  std::vector<std::uint8_t> wrong = bytes;
  wrong[0] = 'x';
  CHECK_FALSE(read_json_binary(wrong.data(), wrong.size(), out));
  // A count larger than the bytes left.
  const std::uint8_t huge[] = {'a', 0xff, 0xff, 0xff, 0x7f};
  CHECK_FALSE(read_json_binary(huge, sizeof huge, out));
}

// The build parsed each built-in file ahead: what it wrote is what parsing
// the embedded text gives.
TEST_CASE("Each built-in file's parsed document is its text's", "[rules][embedded]") {
  REQUIRE(logrx::detail::kEmbeddedRuleFileCount > 0);
  for (std::size_t i = 0; i < logrx::detail::kEmbeddedRuleFileCount; ++i) {
    const auto& file = logrx::detail::kEmbeddedRuleFiles[i];
    INFO(file.name);
    std::string_view text(reinterpret_cast<const char*>(file.bytes), file.size);
    json parsed = json::parse(text, nullptr, true, true);
    REQUIRE(file.document_size > 0);
    json read;
    REQUIRE(read_json_binary(file.document, file.document_size, read));
    CHECK(read == parsed);
  }
}
