// SPDX-License-Identifier: MIT
#include "parse/config_dump.h"

#include <boost/spirit/home/x3.hpp>
#include <cmath>
#include <cstdlib>

namespace logrx::detail {
namespace {

namespace x3 = boost::spirit::x3;

// Deeper nesting than this is refused before parsing: the grammar is
// recursive and a hostile dump must not exhaust the stack.
constexpr int kMaxNesting = 64;

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
auto const value_def = py_string | number_def | x3::lit('{') >> &x3::lit('}') >> '}' | dict_def |
                       list_def | tuple_def | angle_def | call | dotted_name;

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

int nesting_depth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '.')) s.remove_suffix(1);
  return s;
}

template <typename Parser>
bool parse_all(std::string_view text, const Parser& parser, std::string& error) {
  auto first = text.begin();
  bool ok = x3::phrase_parse(first, text.end(), parser, x3::space);
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
  if (nesting_depth(text) > kMaxNesting) {
    error = "config dump is nested deeper than " + std::to_string(kMaxNesting) + " levels";
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
