// SPDX-License-Identifier: MIT
// A prescribed flag value checked against what the flag takes, so nothing a
// supervisor applies can make the server's argument parser refuse the launch.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "logrx/rulebook.h"

namespace logrx {
namespace {

std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::string format_number(double value, bool integer) {
  char buffer[64];
  if (integer) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    // Shortest text that reads back the same at the precision a flag needs.
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
  }
  return buffer;
}

std::string range_text(const FlagSpec& spec) {
  std::string lower = spec.gt ? "(" + format_number(*spec.gt, false)
                      : spec.min ? "[" + format_number(*spec.min, false)
                                 : std::string("(-inf");
  std::string upper = spec.lt ? format_number(*spec.lt, false) + ")"
                      : spec.max ? format_number(*spec.max, false) + "]"
                                 : std::string("inf)");
  return lower + ", " + upper;
}

}  // namespace

std::string_view to_string(FlagSpec::Arity arity) noexcept {
  switch (arity) {
    case FlagSpec::Arity::Switch: return "switch";
    case FlagSpec::Arity::Value: return "value";
    case FlagSpec::Arity::Repeatable: return "repeatable";
  }
  return "value";
}

std::string_view to_string(FlagSpec::Type type) noexcept {
  switch (type) {
    case FlagSpec::Type::Any: return "any";
    case FlagSpec::Type::Int: return "int";
    case FlagSpec::Type::Float: return "float";
    case FlagSpec::Type::String: return "string";
    case FlagSpec::Type::Enum: return "enum";
    case FlagSpec::Type::List: return "list";
    case FlagSpec::Type::Bool: return "bool";
  }
  return "any";
}

ArgumentCheck check_argument(const FlagSpec& spec, std::string_view flag,
                             const std::optional<std::string>& value) {
  ArgumentCheck out;
  std::string name(flag);
  bool has_value = value && !value->empty();
  if (spec.arity == FlagSpec::Arity::Switch) {
    out.applicable = !has_value;
    if (has_value) out.note = name + " is a switch and takes no value (" + *value + ")";
    return out;
  }
  if (!has_value) {
    out.note = name + " takes a value";
    return out;
  }
  const std::string& text = *value;
  // "<fewer layers>" and the like are instructions for a person.
  if (text.front() == '<' && text.back() == '>') {
    out.note = text + " is not a value for " + name;
    return out;
  }
  switch (spec.type) {
    case FlagSpec::Type::Any:
    case FlagSpec::Type::String:
      out.applicable = true;
      out.value = text;
      return out;
    case FlagSpec::Type::List:
      out.applicable = text.find_first_not_of(" ,") != std::string::npos;
      if (out.applicable) out.value = text;
      else out.note = name + " takes a non-empty list";
      return out;
    case FlagSpec::Type::Enum:
    case FlagSpec::Type::Bool:
      for (const std::string& choice : spec.choices) {
        if (choice == text) {
          out.applicable = true;
          out.value = text;
          return out;
        }
      }
      out.note = text + " is not one of the choices of " + name;
      return out;
    case FlagSpec::Type::Int:
    case FlagSpec::Type::Float:
      break;
  }
  bool integer = spec.type == FlagSpec::Type::Int;
  auto number = parse_number(text);
  if (!number || (integer && *number != std::floor(*number))) {
    out.note = text + " is not " + (integer ? "an integer" : "a number") + " (" + name + ")";
    return out;
  }
  double v = *number;
  bool below = (spec.gt && !(v > *spec.gt)) || (spec.min && v < *spec.min);
  if (below || (spec.lt && !(v < *spec.lt))) {
    // A computed value outside the server's range says the computation does
    // not fit this case: refusing is honest, clamping would be a guess.
    out.note = text + " is outside " + name + "'s range " + range_text(spec) + ": not applied";
    return out;
  }
  std::string note;
  if (spec.max && v > *spec.max) {
    note = "clamped from " + text + " to " + format_number(*spec.max, integer) + " (" + name +
           "'s maximum)";
    v = *spec.max;
  }
  if (spec.multiple_of) {
    double m = *spec.multiple_of;
    double down = std::floor(v / m + 1e-9) * m;
    double rounded = down;
    bool low = (spec.gt && !(down > *spec.gt)) || (spec.min && down < *spec.min);
    if (low) rounded = down + m;
    if ((spec.lt && !(rounded < *spec.lt)) || (spec.max && rounded > *spec.max)) {
      out.note = "no multiple of " + format_number(m, integer) + " near " + text + " is inside " +
                 name + "'s range " + range_text(spec) + ": not applied";
      return out;
    }
    if (std::fabs(rounded - v) > 1e-9) {
      note += std::string(note.empty() ? "" : "; ") + "rounded " + (low ? "up" : "down") + " from " +
              format_number(v, integer) + " to " + format_number(rounded, integer) + " (" + name +
              " must be a multiple of " + format_number(m, integer) + ")";
      v = rounded;
    }
  }
  out.applicable = true;
  out.value = note.empty() ? text : format_number(v, integer);
  out.note = note;
  return out;
}

}  // namespace logrx
