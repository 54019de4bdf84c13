// SPDX-License-Identifier: MIT
// Fuzzes the expression language: parse anything, evaluate what parses with
// variables bound to awkward values.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rules/expression.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string error;
  auto expression = logrx::detail::Expression::parse(input, &error);
  if (!expression) {
    if (error.empty()) __builtin_trap();
    return 0;
  }
  auto lookup = [](const std::string& name) -> std::optional<logrx::detail::Value> {
    if (name.empty()) return std::nullopt;
    switch (name[0] % 5) {
      case 0:
        return logrx::detail::Value::of(std::string("99999999999999999999 GB"));
      case 1:
        return logrx::detail::Value::of(1e308);
      case 2:
        return logrx::detail::Value::of(std::string("211,936"));
      case 3:
        return logrx::detail::Value::null();
      default:
        return std::nullopt;
    }
  };
  if (auto value = expression->evaluate(lookup)) (void)value->to_string();
  (void)expression->variables();
  return 0;
}
