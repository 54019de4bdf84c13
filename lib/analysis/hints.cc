// SPDX-License-Identifier: MIT
// Comparisons are read with a small Spirit X3 grammar: a relation phrase
// from a symbol table (the longest match wins), the term after it (words,
// then a value written "(N)", "=N", ": N" or "N"), and the term before it
// read as tokens whose last value and last name form the subject.
#include "analysis/hints.h"

#include <boost/spirit/home/x3.hpp>

#include <algorithm>
#include <cctype>
#include <utility>

namespace logrx::detail {
namespace {

namespace x3 = boost::spirit::x3;

struct Relation {
  const char* op;
  bool violation;  // the phrase states that the values break the rule
};

struct RelationTable : x3::symbols<Relation> {
  RelationTable() {
    for (const char* p : {"is greater than", "is larger than", "is bigger than", "is higher than",
                          "is more than", "is above", "exceeds", "exceeded", "is longer than",
                          "greater than", "larger than", "exceeds the limit of"})
      add(p, Relation{"<=", true});
    for (const char* p : {"is smaller than", "is less than", "is lower than", "is below",
                          "is shorter than", "smaller than", "less than"})
      add(p, Relation{">=", true});
    for (const char* p : {"must be <", "must be less than", "should be less than", "has to be less than",
                          "needs to be less than", "must be smaller than", "should be smaller than"})
      add(p, Relation{"<", false});
    for (const char* p :
         {"must be <=", "must be less than or equal to", "should be less than or equal to",
          "must be smaller than or equal to", "must not exceed", "must not be greater than",
          "must not be larger than", "cannot exceed", "can not exceed", "can't exceed",
          "cannot be greater than", "cannot be larger than", "should not exceed",
          "should be <=", "must be at most", "should be at most", "must be no greater than",
          "must be no larger than", "must not be more than", "should not be greater than",
          "should not be larger than", "is not allowed to exceed", "<="})
      add(p, Relation{"<=", false});
    for (const char* p : {"must be >", "must be greater than", "should be greater than",
                          "must be larger than", "should be larger than", "must be bigger than"})
      add(p, Relation{">", false});
    for (const char* p :
         {"must be >=", "must be greater than or equal to", "should be greater than or equal to",
          "must be at least", "should be at least", "must be larger than or equal to",
          "cannot be less than", "cannot be smaller than", "must not be less than",
          "must not be smaller than", "should not be less than", "should be >=", ">="})
      add(p, Relation{">=", false});
    for (const char* p : {"must be divisible by", "should be divisible by", "has to be divisible by",
                          "must be a multiple of", "should be a multiple of"})
      add(p, Relation{"divisible", false});
    for (const char* p : {"is not divisible by", "not divisible by", "is not a multiple of"})
      add(p, Relation{"divisible", true});
  }
};

const RelationTable& relations() {
  static const RelationTable table;
  return table;
}

// A number as messages print it: "8192", "0.9", "1,024", "-3.5".
const auto number = x3::rule<struct number_tag, double>{"number"} =
    x3::lexeme[x3::double_ >> !x3::char_("0-9A-Za-z_")];

const auto ident_char = x3::char_("A-Za-z0-9_.-");
const auto identifier = x3::rule<struct ident_tag, std::string>{"identifier"} =
    x3::lexeme[x3::char_("A-Za-z_") >> *ident_char];
const auto quoted_identifier = x3::rule<struct quoted_tag, std::string>{"quoted"} =
    x3::lexeme[x3::omit[x3::char_("`'\"")] >> -x3::lit("--") >> identifier >>
               x3::omit[x3::char_("`'\"")]];
const auto flag_identifier = x3::rule<struct flag_tag, std::string>{"flag"} =
    x3::lexeme[x3::lit("--") >> identifier];
const auto name = x3::rule<struct name_tag, std::string>{"name"} =
    quoted_identifier | flag_identifier | identifier;
const auto value = x3::rule<struct value_tag, double>{"value"} =
    (x3::lit('(') >> number >> x3::lit(')')) | (x3::lit('=') >> number) | (x3::lit(':') >> number) |
    number;

struct Token {
  bool is_value = false;
  std::string text;
  double number = 0;
};

// Tokens of free text: names, values, and anything else skipped.
std::vector<Token> tokens_of(std::string_view text) {
  std::vector<Token> out;
  auto it = text.begin();
  auto end = text.end();
  auto on_name = [&out](auto& ctx) { out.push_back(Token{false, x3::_attr(ctx), 0}); };
  auto on_value = [&out](auto& ctx) { out.push_back(Token{true, {}, x3::_attr(ctx)}); };
  const auto token = value[on_value] | name[on_name] | x3::omit[x3::char_];
  x3::phrase_parse(it, end, *token, x3::space);
  return out;
}

bool looks_like_key(const std::string& word) {
  return word.find('_') != std::string::npos || word.find('-') != std::string::npos;
}

// The name of a term: its last key-like word ("max_model_len"), else its
// last word.
std::string term_name(const std::vector<Token>& tokens, std::size_t from, std::size_t to) {
  std::string last;
  for (std::size_t i = to; i-- > from;) {
    if (tokens[i].is_value) continue;
    if (looks_like_key(tokens[i].text)) return tokens[i].text;
    if (last.empty()) last = tokens[i].text;
  }
  return last;
}

// The last few words of tokens[from, to), lower-case, without "'s".
std::vector<std::string> last_words(const std::vector<Token>& tokens, std::size_t from, std::size_t to) {
  std::vector<std::string> words;
  for (std::size_t i = to; i-- > from && words.size() < 3;) {
    if (tokens[i].is_value) break;
    std::string w = tokens[i].text;
    if (w.size() > 2 && w.compare(w.size() - 2, 2, "'s") == 0) w.resize(w.size() - 2);
    for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    words.insert(words.begin(), w);
  }
  return words;
}

}  // namespace

std::vector<std::string> term_keys(const std::string& name, const std::vector<std::string>& words) {
  std::vector<std::string> keys;
  if (!name.empty()) keys.push_back(name);
  for (std::size_t n = std::min<std::size_t>(3, words.size()); n >= 2; --n) {
    std::string key;
    for (std::size_t i = words.size() - n; i < words.size(); ++i) key += (key.empty() ? "" : "_") + words[i];
    keys.push_back(key);
  }
  return keys;
}

std::string flag_spelling(std::string_view name) {
  std::string out = "--";
  std::size_t start = name.rfind('.');  // "self.server_args.max_model_len", "args.foo"
  name.remove_prefix(start == std::string_view::npos ? 0 : start + 1);
  while (!name.empty() && name[0] == '-') name.remove_prefix(1);
  for (char c : name) out += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

namespace {

std::size_t find_folded(std::string_view text, std::string_view phrase, std::size_t from) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  for (std::size_t at = from; at + phrase.size() <= text.size(); ++at) {
    std::size_t k = 0;
    while (k < phrase.size() && lower(text[at + k]) == phrase[k]) ++k;
    if (k == phrase.size()) return at;
  }
  return std::string_view::npos;
}

// Where the names an argument parser refused start and end in a message:
// argparse's "unrecognized arguments: --a --b", click's "No such option:
// --x", clap's "unexpected argument '--x' found", Python's "got an
// unexpected keyword argument 'x'"; until a suggestion ("did you mean").
std::pair<std::size_t, std::size_t> rejected_span(std::string_view message) {
  constexpr std::string_view kRefusals[] = {
      "unrecognized arguments", "unrecognized argument", "unrecognized option", "unrecognised argument",
      "unrecognised option", "no such option", "unknown argument", "unknown option", "unknown flag",
      "unexpected argument", "unexpected keyword argument", "invalid option", "found argument"};
  constexpr std::string_view kSuggestions[] = {"did you mean", "maybe you meant", "perhaps you meant",
                                               "similar argument", "could match", "tip:"};
  std::size_t start = std::string_view::npos;
  for (std::string_view refusal : kRefusals) {
    std::size_t at = find_folded(message, refusal, 0);
    if (at != std::string_view::npos && (start == std::string_view::npos || at < start)) start = at;
  }
  if (start == std::string_view::npos) return {start, start};
  std::size_t end = message.size();
  for (std::string_view suggestion : kSuggestions) {
    std::size_t at = find_folded(message, suggestion, start);
    if (at != std::string_view::npos) end = std::min(end, at);
  }
  return {start, end};
}

}  // namespace

std::vector<Mention> find_mentions(std::string_view message) {
  std::vector<Mention> out;
  const auto [refused_from, refused_to] = rejected_span(message);
  std::size_t word_at = 0;
  auto add = [&](std::string name, std::optional<std::string> value, bool env) {
    bool rejected = refused_from != std::string_view::npos && word_at >= refused_from && word_at < refused_to;
    for (Mention& m : out) {
      if (m.name != name) continue;
      // Refused anywhere in the message is refused.
      m.rejected = m.rejected || rejected;
      return;
    }
    if (out.size() < 16) out.push_back(Mention{std::move(name), std::move(value), env, rejected});
  };
  std::size_t i = 0;
  auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  };
  while (i < message.size()) {
    char c = message[i];
    bool boundary = i == 0 || !word_char(message[i - 1]);
    if (!boundary || !(std::isalpha(static_cast<unsigned char>(c)) || c == '-' || c == '_')) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < message.size() && word_char(message[j])) ++j;
    std::string_view word = message.substr(i, j - i);
    word_at = i;
    while (!word.empty() && (word.back() == '.' || word.back() == '-')) word.remove_suffix(1);
    std::size_t after = i + word.size();
    i = j;
    // Names are short; a long run of word characters is data, and comparing
    // it with every known flag would cost time for nothing.
    if (word.size() < 4 || word.size() > 64) continue;
    // A dotted word is a module path, an attribute or a file name
    // (outlines.fsm.json_schema, model.safetensors), never a flag.
    if (word.find('.') != std::string_view::npos && !(word.size() > 2 && word[0] == '-' && word[1] == '-'))
      continue;
    std::optional<std::string> value;
    if (after < message.size() && message[after] == '=') {
      std::size_t k = after + 1;
      while (k < message.size() && !std::isspace(static_cast<unsigned char>(message[k])) &&
             message[k] != ',' && message[k] != ')' && message[k] != '`' && message[k] != '\'')
        ++k;
      if (k > after + 1) value = std::string(message.substr(after + 1, k - after - 1));
    }
    bool flag = word.size() > 2 && word[0] == '-' && word[1] == '-';
    bool upper = std::all_of(word.begin(), word.end(), [](char ch) {
      return std::isupper(static_cast<unsigned char>(ch)) || std::isdigit(static_cast<unsigned char>(ch)) || ch == '_';
    });
    bool snake = word.find('_') != std::string_view::npos && word[0] != '_';
    bool kebab = word.find('-') != std::string_view::npos && word[0] != '-' &&
                 std::all_of(word.begin(), word.end(), [](char ch) {
                   return std::islower(static_cast<unsigned char>(ch)) || std::isdigit(static_cast<unsigned char>(ch)) || ch == '-';
                 });
    if (upper && snake) {
      add(std::string(word), value, true);
    } else if (flag || snake || kebab) {
      add(std::string(word), value, false);
    }
  }
  return out;
}

std::vector<Comparison> find_comparisons(std::string_view message) {
  std::vector<Comparison> out;
  const RelationTable& table = relations();
  for (std::size_t pos = 0; pos < message.size() && out.size() < 4; ++pos) {
    // Relations start at a word (or at '<' and '>').
    char c = message[pos];
    if (!(c == 'i' || c == 'm' || c == 's' || c == 'h' || c == 'n' || c == 'c' || c == 'e' ||
          c == 'g' || c == 'l' || c == '<' || c == '>'))
      continue;
    if (pos > 0 && std::isalnum(static_cast<unsigned char>(message[pos - 1]))) continue;
    auto it = message.begin() + static_cast<std::ptrdiff_t>(pos);
    Relation relation{};
    if (!x3::parse(it, message.end(), table, relation)) continue;
    if (it != message.end() && std::isalpha(static_cast<unsigned char>(*it))) continue;
    std::size_t rel_end = static_cast<std::size_t>(it - message.begin());

    // The bound: up to a few words and a value, stopping at the sentence's end.
    std::size_t stop = message.find_first_of(".;!?", rel_end);
    while (stop != std::string_view::npos && stop + 1 < message.size() &&
           std::isdigit(static_cast<unsigned char>(message[stop + 1])))
      stop = message.find_first_of(".;!?", stop + 1);
    std::string_view right = message.substr(rel_end, stop == std::string_view::npos ? std::string_view::npos : stop - rel_end);
    if (right.size() > 160) right = right.substr(0, 160);
    std::vector<Token> rtokens = tokens_of(right);
    Comparison cmp;
    cmp.op = relation.op;
    cmp.stated_violation = relation.violation;
    std::size_t first_value = rtokens.size();
    for (std::size_t k = 0; k < rtokens.size(); ++k)
      if (rtokens[k].is_value) {
        first_value = k;
        break;
      }
    if (first_value < rtokens.size() && first_value <= 8) {
      cmp.bound_value = rtokens[first_value].number;
      cmp.bound = term_name(rtokens, 0, first_value);
      cmp.bound_words = last_words(rtokens, 0, first_value);
    } else {
      cmp.bound = term_name(rtokens, 0, std::min<std::size_t>(rtokens.size(), 4));
    }

    // The subject: the text of this clause before the relation.
    std::size_t begin = pos > 160 ? pos - 160 : 0;
    std::string_view left = message.substr(begin, pos - begin);
    std::size_t clause = left.find_last_of(";!?");
    if (clause == std::string_view::npos) clause = left.rfind(". ");
    if (clause != std::string_view::npos) left.remove_prefix(clause + 1);
    std::vector<Token> ltokens = tokens_of(left);
    std::size_t last_value = ltokens.size();
    for (std::size_t k = ltokens.size(); k-- > 0;) {
      if (ltokens[k].is_value) {
        last_value = k;
        break;
      }
      if (ltokens.size() - k > 3) break;  // the value sits right before the relation
    }
    if (last_value < ltokens.size()) {
      cmp.subject_value = ltokens[last_value].number;
      std::size_t from = last_value > 3 ? last_value - 3 : 0;
      cmp.subject = term_name(ltokens, from, last_value);
      cmp.subject_words = last_words(ltokens, from, last_value);
      if (cmp.subject.empty()) cmp.subject = term_name(ltokens, from, ltokens.size());
    } else {
      std::size_t from = ltokens.size() > 3 ? ltokens.size() - 3 : 0;
      cmp.subject = term_name(ltokens, from, ltokens.size());
      cmp.subject_words = last_words(ltokens, from, ltokens.size());
    }
    if (cmp.subject.empty() && !cmp.subject_value) continue;
    out.push_back(std::move(cmp));
    pos = rel_end;
  }
  return out;
}

}  // namespace logrx::detail
