// SPDX-License-Identifier: MIT
// The rule expression language: conditions ("when"), facts and computed
// remediation values. Parsed with Boost.Spirit X3 when the rulebook loads, so
// a bad expression is a rule error, never a surprise while scanning.
//
//   round(clamp(mem_fraction_static + 0.05, 0.5, 0.95), 0.01)
//   exit_code == -9 && phase != "serving"
//   floor(estimated_max_model_len, 1024)
//   gib(weights_bytes) > 0.5 * gib(total)        // quantities: 2 GiB, 512 MB, 3,072 tokens
//
// Values are null, booleans, numbers or strings. Captures arrive as strings
// and are read as numbers where arithmetic needs one ("0.8", "211,936",
// "2.00 GiB" = bytes).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace logrx::detail {

struct Value {
  enum class Kind { Null, Bool, Number, String };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string text;

  static Value null() { return {}; }
  static Value of(bool b) {
    Value v;
    v.kind = Kind::Bool;
    v.boolean = b;
    return v;
  }
  static Value of(double n) {
    Value v;
    v.kind = Kind::Number;
    v.number = n;
    return v;
  }
  static Value of(std::string s) {
    Value v;
    v.kind = Kind::String;
    v.text = std::move(s);
    return v;
  }

  bool truthy() const;
  // Numbers print without trailing zeros ("0.85", "77056"); null prints "None".
  std::string to_string() const;
  // The number this value stands for, if any (strings are parsed as quantities).
  std::optional<double> as_number() const;
};

// Parses "0.8", "211,936", "-9", "2.00 GiB", "512MB", "1.5e3" into a number;
// units give bytes (GiB/MiB/KiB binary, GB/MB/KB decimal).
std::optional<double> parse_quantity(std::string_view text);

// Looks a variable up; std::nullopt when it is not defined.
using Lookup = std::function<std::optional<Value>(const std::string& name)>;

class Expression {
 public:
  // Parses `source`. On failure returns std::nullopt and sets *error to a
  // message naming the offset.
  static std::optional<Expression> parse(std::string_view source, std::string* error);

  // Evaluates. std::nullopt when a variable is undefined, a type does not fit,
  // or arithmetic overflows: the caller then leaves the item or rule out.
  std::optional<Value> evaluate(const Lookup& lookup) const;

  // Variables the expression reads (for load-time checks).
  std::vector<std::string> variables() const;

  const std::string& source() const { return source_; }

  struct Node;

 private:
  std::string source_;
  std::shared_ptr<const std::vector<Node>> nodes_;
  int root_ = -1;
};

struct Expression::Node {
  enum class Kind { Number, String, Variable, Unary, Binary, Call };
  Kind kind = Kind::Number;
  double number = 0;
  std::string text;  // string literal, variable or function name, operator
  std::vector<int> children;
};

}  // namespace logrx::detail
