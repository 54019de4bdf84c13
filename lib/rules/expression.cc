// SPDX-License-Identifier: MIT
#include "rules/expression.h"

#include <boost/spirit/home/x3.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace logrx::detail {
namespace {

namespace x3 = boost::spirit::x3;
using Node = Expression::Node;

// Semantic actions build nodes on a stack; the grammar is ordered so that no
// alternative runs an action and then backtracks.
struct Builder {
  std::vector<Node> nodes;
  std::vector<int> stack;
  std::vector<int> arity;  // argument counts of the calls being parsed

  int add(Node node) {
    nodes.push_back(std::move(node));
    return static_cast<int>(nodes.size()) - 1;
  }
  int pop() {
    int top = stack.back();
    stack.pop_back();
    return top;
  }
};
struct builder_tag;

template <typename Context>
Builder& builder(const Context& ctx) {
  return x3::get<builder_tag>(ctx).get();
}

struct UnitFactor {
  const char* name;
  double factor;
};
constexpr UnitFactor kUnits[] = {
    {"TiB", 1099511627776.0}, {"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"KiB", 1024.0},
    {"TB", 1e12},             {"GB", 1e9},           {"MB", 1e6},        {"KB", 1e3},
    {"kB", 1e3},              {"bytes", 1.0},        {"B", 1.0},
};

auto push_number = [](auto& ctx) {
  Node n;
  n.kind = Node::Kind::Number;
  n.number = x3::_attr(ctx);
  auto& b = builder(ctx);
  b.stack.push_back(b.add(std::move(n)));
};
auto apply_unit = [](auto& ctx) {
  std::string unit = x3::_attr(ctx);
  auto& b = builder(ctx);
  for (const auto& u : kUnits)
    if (unit == u.name) b.nodes[static_cast<std::size_t>(b.stack.back())].number *= u.factor;
};
auto push_string = [](auto& ctx) {
  Node n;
  n.kind = Node::Kind::String;
  n.text = x3::_attr(ctx);
  auto& b = builder(ctx);
  b.stack.push_back(b.add(std::move(n)));
};
auto push_variable = [](auto& ctx) {
  Node n;
  n.kind = Node::Kind::Variable;
  n.text = x3::_attr(ctx);
  auto& b = builder(ctx);
  b.stack.push_back(b.add(std::move(n)));
};
auto open_call = [](auto& ctx) { builder(ctx).arity.push_back(0); };
auto count_argument = [](auto& ctx) { ++builder(ctx).arity.back(); };
auto close_call = [](auto& ctx) {
  auto& b = builder(ctx);
  int count = b.arity.back();
  b.arity.pop_back();
  std::vector<int> args(static_cast<std::size_t>(count));
  for (int i = count - 1; i >= 0; --i) args[static_cast<std::size_t>(i)] = b.pop();
  int name = b.pop();
  // The name was pushed as a variable before the '(' was seen; it is not one.
  b.nodes[static_cast<std::size_t>(name)].kind = Node::Kind::String;
  Node call;
  call.kind = Node::Kind::Call;
  call.text = b.nodes[static_cast<std::size_t>(name)].text;
  call.children = std::move(args);
  b.stack.push_back(b.add(std::move(call)));
};
auto unary = [](const char* op) {
  return [op](auto& ctx) {
    auto& b = builder(ctx);
    Node n;
    n.kind = Node::Kind::Unary;
    n.text = op;
    n.children = {b.pop()};
    b.stack.push_back(b.add(std::move(n)));
  };
};
auto binary = [](const char* op) {
  return [op](auto& ctx) {
    auto& b = builder(ctx);
    int rhs = b.pop();
    int lhs = b.pop();
    Node n;
    n.kind = Node::Kind::Binary;
    n.text = op;
    n.children = {lhs, rhs};
    b.stack.push_back(b.add(std::move(n)));
  };
};

x3::rule<class expr_class> const expr = "expression";
x3::rule<class or_class> const or_expr = "or";
x3::rule<class and_class> const and_expr = "and";
x3::rule<class cmp_class> const cmp_expr = "comparison";
x3::rule<class add_class> const add_expr = "sum";
x3::rule<class mul_class> const mul_expr = "product";
x3::rule<class unary_class> const unary_expr = "unary";
x3::rule<class primary_class> const primary = "value";
x3::rule<class ident_class, std::string> const identifier = "name";
x3::rule<class string_class, std::string> const quoted = "string";
x3::rule<class unit_class, std::string> const unit = "unit";

// Numbers as rules write them: no "inf" or "nan", so a variable may be
// called n_inf or nan_count... or inf_count.
struct plain_number_policies : x3::real_policies<double> {
  template <typename Iterator, typename Attribute>
  static bool parse_nan(Iterator&, Iterator const&, Attribute&) { return false; }
  template <typename Iterator, typename Attribute>
  static bool parse_inf(Iterator&, Iterator const&, Attribute&) { return false; }
};
x3::real_parser<double, plain_number_policies> const number{};

auto const identifier_def =
    x3::lexeme[(x3::alpha | x3::char_('_')) >> *(x3::alnum | x3::char_('_') | x3::char_('.'))];
auto const quoted_def =
    x3::lexeme['"' >> *((x3::lit('\\') >> x3::char_) | ~x3::char_('"')) >> '"'];
auto const unit_def = x3::lexeme[(x3::string("TiB") | x3::string("GiB") | x3::string("MiB") |
                                  x3::string("KiB") | x3::string("TB") | x3::string("GB") |
                                  x3::string("MB") | x3::string("KB") | x3::string("kB") |
                                  x3::string("bytes") | x3::string("B")) >>
                                 !(x3::alnum | x3::char_('_'))];
auto const call_arguments = x3::lit('(')[open_call] >>
                            -((expr[count_argument]) % ',') > x3::lit(')')[close_call];
auto const primary_def = (number[push_number] >> -unit[apply_unit]) |
                         quoted[push_string] |
                         (identifier[push_variable] >> -call_arguments) |
                         ('(' > expr > ')');
auto const unary_expr_def = (x3::lit('-') > unary_expr)[unary("-")] |
                            (x3::lit('!') > unary_expr)[unary("!")] | primary;
auto const mul_expr_def = unary_expr >> *((x3::lit('*') > unary_expr)[binary("*")] |
                                          (x3::lit('/') > unary_expr)[binary("/")]);
auto const add_expr_def = mul_expr >> *((x3::lit('+') > mul_expr)[binary("+")] |
                                        (x3::lit('-') > mul_expr)[binary("-")]);
auto const cmp_expr_def = add_expr >> -((x3::lit("<=") > add_expr)[binary("<=")] |
                                        (x3::lit(">=") > add_expr)[binary(">=")] |
                                        (x3::lit("==") > add_expr)[binary("==")] |
                                        (x3::lit("!=") > add_expr)[binary("!=")] |
                                        (x3::lit('<') > add_expr)[binary("<")] |
                                        (x3::lit('>') > add_expr)[binary(">")]);
auto const and_expr_def = cmp_expr >> *((x3::lit("&&") > cmp_expr)[binary("&&")]);
auto const or_expr_def = and_expr >> *((x3::lit("||") > and_expr)[binary("||")]);
auto const expr_def = or_expr;

BOOST_SPIRIT_DEFINE(expr, or_expr, and_expr, cmp_expr, add_expr, mul_expr, unary_expr, primary,
                    identifier, quoted, unit)

struct FunctionSpec {
  std::size_t min_args;
  std::size_t max_args;
};
const std::map<std::string, FunctionSpec>& functions() {
  static const std::map<std::string, FunctionSpec> kFunctions{
      {"min", {1, 16}},      {"max", {1, 16}},   {"clamp", {3, 3}},    {"floor", {1, 2}},
      {"ceil", {1, 2}},      {"round", {1, 2}},  {"abs", {1, 1}},      {"num", {1, 1}},
      {"bytes", {1, 1}},     {"gib", {1, 1}},    {"gb", {1, 1}},       {"mib", {1, 1}},
      {"mb", {1, 1}},        {"if", {3, 3}},     {"defined", {1, 1}},  {"contains", {2, 2}},
      {"icontains", {2, 2}}, {"fixed", {2, 2}},  {"lower", {1, 1}},    {"version", {1, 1}},
  };
  return kFunctions;
}

std::string check_calls(const std::vector<Node>& nodes) {
  for (const Node& n : nodes) {
    if (n.kind != Node::Kind::Call) continue;
    auto it = functions().find(n.text);
    if (it == functions().end()) return "unknown function '" + n.text + "'";
    if (n.children.size() < it->second.min_args || n.children.size() > it->second.max_args)
      return "wrong number of arguments to " + n.text + "()";
    if (n.text == "defined" && nodes[static_cast<std::size_t>(n.children[0])].kind !=
                                   Node::Kind::Variable)
      return "defined() takes a name";
  }
  for (const Node& n : nodes)
    if (n.kind == Node::Kind::Number && !std::isfinite(n.number))
      return "number out of range";
  return "";
}

std::string lowercase(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

enum class Rounding { Down, Nearest, Up };

// Rounds to a multiple of `step` (to an integer when step <= 0). Quotients
// within float noise of an integer are snapped first, so 0.85 / 0.01 is 85,
// not 84.99999999999999.
double round_to_step(double x, double step, Rounding mode) {
  double scale = step > 0 ? step : 1.0;
  double q = x / scale;
  double nearest = std::round(q);
  if (std::fabs(q - nearest) < 1e-9) q = nearest;
  switch (mode) {
    case Rounding::Down:
      q = std::floor(q);
      break;
    case Rounding::Up:
      q = std::ceil(q);
      break;
    case Rounding::Nearest:
      q = std::round(q);
      break;
  }
  return q * scale;
}

class Evaluator {
 public:
  Evaluator(const std::vector<Node>& nodes, const Lookup& lookup) : nodes_(nodes), lookup_(lookup) {}

  std::optional<Value> eval(int index) {
    if (++depth_ > 200) return std::nullopt;
    auto result = eval_node(nodes_[static_cast<std::size_t>(index)]);
    --depth_;
    if (result && result->kind == Value::Kind::Number && !std::isfinite(result->number))
      return std::nullopt;
    return result;
  }

 private:
  std::optional<double> number(int index) {
    auto v = eval(index);
    if (!v) return std::nullopt;
    return v->as_number();
  }

  std::optional<Value> eval_node(const Node& n) {
    switch (n.kind) {
      case Node::Kind::Number:
        return Value::of(n.number);
      case Node::Kind::String:
        return Value::of(n.text);
      case Node::Kind::Variable:
        return lookup_(n.text);
      case Node::Kind::Unary: {
        auto v = eval(n.children[0]);
        if (!v) return std::nullopt;
        if (n.text == "!") return Value::of(!v->truthy());
        auto x = v->as_number();
        if (!x) return std::nullopt;
        return Value::of(-*x);
      }
      case Node::Kind::Binary:
        return binary(n);
      case Node::Kind::Call:
        return call(n);
    }
    return std::nullopt;
  }

  std::optional<Value> binary(const Node& n) {
    const std::string& op = n.text;
    if (op == "&&" || op == "||") {
      auto lhs = eval(n.children[0]);
      bool left = lhs && lhs->truthy();
      if (op == "&&" && !left) return Value::of(false);
      if (op == "||" && left) return Value::of(true);
      auto rhs = eval(n.children[1]);
      return Value::of(rhs.has_value() && rhs->truthy());
    }
    auto lhs = eval(n.children[0]);
    auto rhs = eval(n.children[1]);
    if (!lhs || !rhs) return std::nullopt;
    if (op == "==" || op == "!=") {
      bool equal = equals(*lhs, *rhs);
      return Value::of(op == "==" ? equal : !equal);
    }
    auto a = lhs->as_number();
    auto b = rhs->as_number();
    // '+' joins text when either side is text that is not a number, so
    // titles can be built from pieces (" (rank " + rank + ")"); captured
    // numbers ("0.8") still add.
    if (op == "+" && (!a || !b) && lhs->kind != Value::Kind::Null &&
        rhs->kind != Value::Kind::Null &&
        (lhs->kind == Value::Kind::String || rhs->kind == Value::Kind::String))
      return Value::of(lhs->to_string() + rhs->to_string());
    if (!a || !b) return std::nullopt;
    if (op == "+") return Value::of(*a + *b);
    if (op == "-") return Value::of(*a - *b);
    if (op == "*") return Value::of(*a * *b);
    if (op == "/") return *b == 0 ? std::nullopt : std::optional<Value>(Value::of(*a / *b));
    if (op == "<") return Value::of(*a < *b);
    if (op == "<=") return Value::of(*a <= *b);
    if (op == ">") return Value::of(*a > *b);
    if (op == ">=") return Value::of(*a >= *b);
    return std::nullopt;
  }

  static bool equals(const Value& a, const Value& b) {
    if (a.kind == Value::Kind::Null || b.kind == Value::Kind::Null) return a.kind == b.kind;
    if (a.kind == Value::Kind::String && b.kind == Value::Kind::String) return a.text == b.text;
    if (a.kind == Value::Kind::Bool || b.kind == Value::Kind::Bool) return a.truthy() == b.truthy();
    auto x = a.as_number();
    auto y = b.as_number();
    if (x && y) return *x == *y;
    return a.to_string() == b.to_string();
  }

  std::optional<Value> call(const Node& n) {
    const std::string& f = n.text;
    const auto& args = n.children;
    if (f == "defined") return Value::of(lookup_(nodes_[static_cast<std::size_t>(args[0])].text).has_value());
    if (f == "if") {
      auto c = eval(args[0]);
      if (!c) return std::nullopt;
      return eval(c->truthy() ? args[1] : args[2]);
    }
    if (f == "contains" || f == "icontains") {
      auto hay = eval(args[0]);
      auto needle = eval(args[1]);
      if (!hay || !needle) return std::nullopt;
      std::string h = hay->to_string();
      std::string s = needle->to_string();
      if (f == "icontains") {
        h = lowercase(h);
        s = lowercase(s);
      }
      return Value::of(h.find(s) != std::string::npos);
    }
    if (f == "lower") {
      auto v = eval(args[0]);
      if (!v) return std::nullopt;
      return Value::of(lowercase(v->to_string()));
    }
    if (f == "version") {
      // "v0.10.1rc2+cu124" -> 10001 (major * 1e6 + minor * 1e3 + patch), so that
      // versions compare as numbers: num("0.9.2") would read 0.9 > 0.10.
      auto v = eval(args[0]);
      if (!v) return std::nullopt;
      std::string text = v->to_string();
      std::size_t i = 0;
      if (i < text.size() && (text[i] == 'v' || text[i] == 'V')) ++i;
      double parts[3] = {0, 0, 0};
      int count = 0;
      while (count < 3 && i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        double part = 0;
        int digits = 0;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && digits < 6) {
          part = part * 10 + (text[i] - '0');
          ++i;
          ++digits;
        }
        parts[count++] = std::min(part, 999.0);
        if (i < text.size() && text[i] == '.') ++i; else break;
      }
      if (count == 0) return std::nullopt;
      return Value::of(parts[0] * 1e6 + parts[1] * 1e3 + parts[2]);
    }
    if (f == "fixed") {
      auto x = number(args[0]);
      auto digits = number(args[1]);
      if (!x || !digits || *digits < 0 || *digits > 12) return std::nullopt;
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.*f", static_cast<int>(*digits), *x);
      return Value::of(std::string(buffer));
    }
    std::vector<double> xs;
    for (int arg : args) {
      auto x = number(arg);
      if (!x) return std::nullopt;
      xs.push_back(*x);
    }
    if (f == "min") return Value::of(*std::min_element(xs.begin(), xs.end()));
    if (f == "max") return Value::of(*std::max_element(xs.begin(), xs.end()));
    if (f == "clamp") return Value::of(std::min(std::max(xs[0], xs[1]), xs[2]));
    if (f == "abs") return Value::of(std::fabs(xs[0]));
    if (f == "num" || f == "bytes") return Value::of(xs[0]);
    if (f == "gib") return Value::of(xs[0] / 1073741824.0);
    if (f == "gb") return Value::of(xs[0] / 1e9);
    if (f == "mib") return Value::of(xs[0] / 1048576.0);
    if (f == "mb") return Value::of(xs[0] / 1e6);
    double step = xs.size() > 1 ? xs[1] : 0;
    if (f == "floor") return Value::of(round_to_step(xs[0], step, Rounding::Down));
    if (f == "ceil") return Value::of(round_to_step(xs[0], step, Rounding::Up));
    if (f == "round") return Value::of(round_to_step(xs[0], step, Rounding::Nearest));
    return std::nullopt;
  }

  const std::vector<Node>& nodes_;
  const Lookup& lookup_;
  int depth_ = 0;
};

}  // namespace

bool Value::truthy() const {
  switch (kind) {
    case Kind::Null:
      return false;
    case Kind::Bool:
      return boolean;
    case Kind::Number:
      return number != 0;
    case Kind::String:
      return !text.empty();
  }
  return false;
}

std::string Value::to_string() const {
  switch (kind) {
    case Kind::Null:
      return "None";
    case Kind::Bool:
      return boolean ? "True" : "False";
    case Kind::String:
      return text;
    case Kind::Number:
      break;
  }
  if (std::fabs(number) < 1e15 && number == std::floor(number)) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.0f", number);
    return buffer;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6f", number);
  std::string out = buffer;
  while (!out.empty() && out.back() == '0') out.pop_back();
  if (!out.empty() && out.back() == '.') out.pop_back();
  if (out == "-0") out = "0";
  return out;
}

std::optional<double> Value::as_number() const {
  switch (kind) {
    case Kind::Number:
      return number;
    case Kind::Bool:
      return boolean ? 1.0 : 0.0;
    case Kind::String:
      return parse_quantity(text);
    case Kind::Null:
      break;
  }
  return std::nullopt;
}

std::optional<double> parse_quantity(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty() || text.size() > 64) return std::nullopt;
  // Thousands separators: "211,936" (only between digit groups of three).
  std::string digits;
  std::size_t i = 0;
  if (text[i] == '-' || text[i] == '+') digits += text[i++];
  std::size_t group = 0;
  bool seen_comma = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      digits += c;
      ++group;
    } else if (c == ',' && group > 0 && i + 3 < text.size() + 1) {
      if (seen_comma && group != 3) return std::nullopt;
      seen_comma = true;
      group = 0;
    } else {
      break;
    }
  }
  if (seen_comma && group != 3) return std::nullopt;
  for (; i < text.size(); ++i) {
    char c = text[i];
    bool exponent_sign = (c == '-' || c == '+') && !digits.empty() &&
                         (digits.back() == 'e' || digits.back() == 'E');
    if ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || exponent_sign) {
      if ((c == 'e' || c == 'E') && i + 1 < text.size() && !(text[i + 1] >= '0' && text[i + 1] <= '9') &&
          text[i + 1] != '-' && text[i + 1] != '+')
        break;  // "5 eggs" is not an exponent
      digits += c;
    } else {
      break;
    }
  }
  if (digits.empty() || digits == "-" || digits == "+") return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(digits.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(value)) return std::nullopt;
  std::string_view rest = text.substr(i);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty()) return value;
  for (const auto& u : kUnits)
    if (rest == u.name) {
      double bytes = value * u.factor;
      return std::isfinite(bytes) ? std::optional<double>(bytes) : std::nullopt;
    }
  if (rest == "tokens" || rest == "x" || rest == "s" || rest == "%") return value;
  return std::nullopt;
}

namespace {

// The grammar is recursive: nesting (parentheses, calls, unary operators) is
// bounded before parsing so no input can exhaust the stack.
constexpr int kMaxExpressionNesting = 64;

int expression_nesting(std::string_view source) {
  int depth = 0;
  int deepest = 0;
  int unary_run = 0;
  bool operand_seen = false;  // the previous token ends an operand
  for (std::size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '"') {
      for (++i; i < source.size() && source[i] != '"'; ++i)
        if (source[i] == '\\') ++i;
      operand_seen = true;
      unary_run = 0;
      continue;
    }
    if (c == ' ' || c == '\t') continue;
    if (c == '(') {
      ++depth;
      operand_seen = false;
    } else if (c == ')') {
      --depth;
      operand_seen = true;
      unary_run = 0;
    } else if ((c == '-' || c == '!') && !operand_seen) {
      ++unary_run;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
      operand_seen = true;
      unary_run = 0;
    } else {
      operand_seen = false;
    }
    deepest = std::max(deepest, depth + unary_run);
  }
  return deepest;
}

}  // namespace

std::optional<Expression> Expression::parse(std::string_view source, std::string* error) {
  if (expression_nesting(source) > kMaxExpressionNesting) {
    if (error != nullptr)
      *error = "expression is nested deeper than " + std::to_string(kMaxExpressionNesting) + " levels";
    return std::nullopt;
  }
  Builder builder;
  auto first = source.begin();
  auto last = source.end();
  bool ok = false;
  try {
    ok = x3::phrase_parse(first, last, x3::with<builder_tag>(std::ref(builder))[expr],
                          x3::space);
  } catch (const x3::expectation_failure<std::string_view::const_iterator>& e) {
    if (error != nullptr) {
      // Named rules say what was expected; anonymous parsers only have a
      // compiler-generated name, which helps nobody.
      std::string what = e.which();
      auto offset = static_cast<std::size_t>(e.where() - source.begin());
      std::string near = offset < source.size() ? "'" + std::string(source.substr(offset, 10)) + "'"
                                                : std::string("the end");
      *error = (what.find("boost") == std::string::npos ? "expected " + what + " at offset "
                                                          : "syntax error at offset ") +
               std::to_string(offset) + ", near " + near;
    }
    return std::nullopt;
  }
  if (!ok || first != last || builder.stack.size() != 1) {
    if (error != nullptr)
      *error = "cannot parse expression at offset " + std::to_string(first - source.begin());
    return std::nullopt;
  }
  if (std::string bad = check_calls(builder.nodes); !bad.empty()) {
    if (error != nullptr) *error = bad;
    return std::nullopt;
  }
  Expression expression;
  expression.source_ = std::string(source);
  expression.root_ = builder.stack.back();
  expression.nodes_ = std::make_shared<const std::vector<Node>>(std::move(builder.nodes));
  return expression;
}

std::optional<Value> Expression::evaluate(const Lookup& lookup) const {
  if (!nodes_ || root_ < 0) return std::nullopt;
  Evaluator evaluator(*nodes_, lookup);
  return evaluator.eval(root_);
}

std::vector<std::string> Expression::variables() const {
  std::set<std::string> names;
  if (nodes_) {
    for (const Node& n : *nodes_)
      if (n.kind == Node::Kind::Variable) names.insert(n.text);
  }
  return {names.begin(), names.end()};
}

}  // namespace logrx::detail
