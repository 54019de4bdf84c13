// SPDX-License-Identifier: MIT
#include "parse/config_dump.h"

#include <boost/spirit/home/x3.hpp>
#include <cmath>
#include <cstdlib>
#include <functional>

namespace logrx::detail {
namespace {

namespace x3 = boost::spirit::x3;

// The grammar is recursive; a hostile dump must not exhaust the stack. The
// grammar itself counts its depth (a separate pre-scan would have to agree
// with it on every quote and bracket, and once did not: `<'>` hid the rest).
constexpr int kMaxNesting = 64;

// The depth counter the grammar carries in its context (x3::with).
struct depth_tag;
struct Depth {
  int current = 0;
  bool exceeded = false;
};

// Parses its subject one level deeper, and fails once kMaxNesting is reached.
template <typename Subject>
struct nested_parser : x3::unary_parser<Subject, nested_parser<Subject>> {
  using base_type = x3::unary_parser<Subject, nested_parser<Subject>>;
  static bool const is_pass_through_unary = true;
  constexpr explicit nested_parser(Subject const& inner) : base_type(inner) {}

  template <typename Iterator, typename Context, typename RContext, typename Attribute>
  bool parse(Iterator& first, Iterator const& last, Context const& context, RContext& rcontext,
             Attribute& attr) const {
    Depth& depth = x3::get<depth_tag>(context).get();
    if (depth.current >= kMaxNesting) {
      depth.exceeded = true;
      return false;
    }
    ++depth.current;
    bool ok = this->subject.parse(first, last, context, rcontext, attr);
    --depth.current;
    return ok;
  }
};

struct nested_gen {
  template <typename Subject>
  constexpr nested_parser<typename x3::extension::as_parser<Subject>::value_type> operator[](
      Subject const& subject) const {
    return nested_parser<typename x3::extension::as_parser<Subject>::value_type>(
        x3::as_parser(subject));
  }
};
constexpr nested_gen nested{};

x3::rule<class value_class> const value = "value";
x3::rule<class string_class> const py_string = "string";
x3::rule<class name_class> const dotted_name = "name";
x3::rule<class call_class> const call = "call";

auto const name_start = x3::alpha | x3::char_('_');
auto const name_char = x3::alnum | x3::char_('_');
auto const dotted_name_def = x3::lexeme[name_start >> *name_char >> *('.' >> name_start >> *name_char)];
// Python string literals, optionally prefixed (r'', b'', f''), either quote.
auto const py_string_def = x3::lexeme[-(x3::char_("rRbBuUfF")) >>
                                      (('\'' >> *(('\\' >> x3::char_) | ~x3::char_('\'')) >> '\'') |
                                       ('"' >> *(('\\' >> x3::char_) | ~x3::char_('"')) >> '"'))];
auto const keyword_arg = x3::lexeme[name_start >> *name_char] >> '=' >> value;
auto const sequence_items = -((value % ',') >> -x3::lit(','));
auto const call_def = dotted_name >> '(' >> -(((keyword_arg | value) % ',') >> -x3::lit(',')) >> ')';
auto const dict_def = x3::lit('{') >> -(((value >> ':' >> value) % ',') >> -x3::lit(',')) >> '}';
auto const list_def = x3::lit('[') >> sequence_items >> ']';
auto const tuple_def = x3::lit('(') >> sequence_items >> ')';
// Enum reprs such as <LoadFormat.AUTO: 'auto'>.
auto const angle_def = x3::lexeme['<' >> *(~x3::char_('>')) >> '>'];
auto const number_def = x3::lexeme[x3::double_ >> !name_char];
// Every recursion of the grammar passes through `value`: that is where depth is counted.
auto const value_def = nested[py_string | number_def | x3::lit('{') >> &x3::lit('}') >> '}' |
                              dict_def | list_def | tuple_def | angle_def | call | dotted_name];

BOOST_SPIRIT_DEFINE(value, py_string, dotted_name, call)

std::string unescape_python(std::string_view literal) {
  std::size_t start = 0;
  if (!literal.empty() && literal[0] != '\'' && literal[0] != '"') start = 1;  // prefix
  std::string_view body = literal.substr(start + 1, literal.size() - start - 2);
  std::string out;
  out.reserve(body.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case '\\':
      case '\'':
      case '"':
        out += e;
        break;
      default:
        out += '\\';
        out += e;
    }
  }
  return out;
}

ConfigValue classify(std::string_view raw) {
  ConfigValue v;
  v.text = std::string(raw);
  if (raw == "None") {
    v.kind = ConfigValue::Kind::None;
  } else if (raw == "True" || raw == "False") {
    v.kind = ConfigValue::Kind::Bool;
    v.boolean = raw == "True";
  } else if (!raw.empty() && (raw.back() == '\'' || raw.back() == '"') &&
             raw.find_first_of("'\"") <= 1) {
    v.kind = ConfigValue::Kind::String;
    v.text = unescape_python(raw);
  } else {
    std::string copy(raw);
    char* end = nullptr;
    double number = std::strtod(copy.c_str(), &end);
    if (!copy.empty() && end != nullptr && *end == '\0' && std::isfinite(number)) {
      v.kind = ConfigValue::Kind::Number;
      v.number = number;
    }
  }
  return v;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '.')) s.remove_suffix(1);
  return s;
}

template <typename Parser>
bool parse_all(std::string_view text, const Parser& parser, std::string& error) {
  auto first = text.begin();
  Depth depth;
  bool ok = x3::phrase_parse(first, text.end(), x3::with<depth_tag>(std::ref(depth))[parser],
                             x3::space);
  if (depth.exceeded) {
    error = "config dump is nested deeper than " + std::to_string(kMaxNesting) + " levels";
    return false;
  }
  if (!ok || first != text.end()) {
    error = "config dump does not parse at offset " + std::to_string(first - text.begin());
    return false;
  }
  return true;
}

}  // namespace

bool parse_config_dump(std::string_view text, std::vector<ConfigEntry>& out, std::string& error) {
  out.clear();
  text = trim(text);
  if (text.empty()) {
    error = "config dump is empty";
    return false;
  }
  std::vector<ConfigEntry> entries;
  auto keep = [&entries](std::string key, std::string_view raw) {
    entries.push_back(ConfigEntry{std::move(key), classify(trim(raw))});
  };
  std::string key;
  auto on_key = [&key](auto& ctx) {
    key.assign(x3::_attr(ctx).begin(), x3::_attr(ctx).end());
  };
  auto on_value = [&](auto& ctx) {
    auto range = x3::_attr(ctx);
    keep(key, std::string_view(&*range.begin(), static_cast<std::size_t>(range.end() - range.begin())));
  };
  auto on_string_key = [&key](auto& ctx) {
    auto range = x3::_attr(ctx);
    key = unescape_python(std::string_view(&*range.begin(), static_cast<std::size_t>(range.end() - range.begin())));
  };
  auto const raw_value = x3::raw[value][on_value];
  auto const identifier = x3::raw[x3::lexeme[name_start >> *name_char]][on_key];

  bool ok = false;
  if (text.front() == '{') {
    // {'key': value, ...}; non-string keys are kept as their text.
    auto const entry = (x3::raw[py_string][on_string_key] | x3::raw[value][on_key]) >> ':' >> raw_value;
    ok = parse_all(text, x3::lit('{') >> -((entry % ',') >> -x3::lit(',')) >> '}', error);
  } else if (std::size_t paren = text.find('('); paren != std::string_view::npos &&
                                                 text.back() == ')' &&
                                                 text.find('=') > paren) {
    // ServerArgs(key=value, ...)
    auto const entry = identifier >> '=' >> raw_value;
    ok = parse_all(text, dotted_name >> '(' >> -((entry % ',') >> -x3::lit(',')) >> ')', error);
  } else {
    // key=value, key=value: values may be bare text (served_model_name=Qwen/Qwen3-8B),
    // which runs to the next ", key=" at nesting depth 0.
    auto const structured = x3::raw[value >> &(x3::lit(',') | x3::eoi)][on_value];
    auto const bare_char = x3::char_ - (x3::lit(", ") >> x3::lexeme[name_start >> *name_char] >> '=');
    auto const bare = x3::raw[x3::lexeme[*bare_char]][on_value];
    auto const entry = identifier >> '=' >> (structured | bare);
    ok = parse_all(text, (entry % ','), error);
  }
  if (!ok) return false;
  out = std::move(entries);
  return true;
}

}  // namespace logrx::detail
