// SPDX-License-Identifier: MIT
// Secrets in logs: SGLang and vLLM print api_key in their config dumps,
// request logs carry Authorization and Cookie headers, launch commands carry
// --api-key, and tokens (hf_..., sk-..., AKIA..., JWTs) or URLs with
// credentials end up in tracebacks. They are replaced before any rule, fact
// or printer sees them.
//
// One forward pass over the text: every run of name characters is looked at
// once (as a secret's key followed by its value, or as a token of a known
// format), every "://" once; a value is consumed when it is redacted, and no
// position is scanned twice, so the time is linear in the text whatever it
// holds.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "logrx/line.h"
#include "parse/redact_internal.h"

namespace logrx {
namespace {

constexpr std::string_view kRedacted = "<redacted>";

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
bool is_upper_alnum(char c) { return (c >= 'A' && c <= 'Z') || is_digit(c); }
bool is_name_char(char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.'; }
bool is_base64url(char c) { return is_alnum(c) || c == '_' || c == '-'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_ci(std::string_view text, std::string_view word) {
  if (text.size() != word.size()) return false;
  for (std::size_t k = 0; k < word.size(); ++k)
    if (lower(text[k]) != word[k]) return false;
  return true;
}

bool starts_with_ci(std::string_view text, std::string_view word) {
  return text.size() >= word.size() && equals_ci(text.substr(0, word.size()), word);
}

bool starts_with(std::string_view text, std::string_view word) {
  return text.size() >= word.size() && text.compare(0, word.size(), word) == 0;
}

// Values that only look like secrets: a key that is unset or already hidden,
// a placeholder ("<token>", "<your-key>") or a reference to a variable
// ("$HF_TOKEN", "${HF_TOKEN}").
bool is_placeholder(std::string_view value) {
  if (value.empty() || value == "None" || value == "null" || value == "none" || value == "NULL" ||
      value == "nil" || value == "undefined" || value == "***" || value == "\"\"" || value == "''")
    return true;
  auto is_name = [](std::string_view word) {
    if (word.empty()) return false;
    for (char c : word)
      if (!is_alnum(c) && c != '_' && c != '-' && c != ' ') return false;
    return true;
  };
  if (value.size() > 2 && value.front() == '<' && value.back() == '>')
    return is_name(value.substr(1, value.size() - 2));
  if (value.size() > 3 && value.substr(0, 2) == "${" && value.back() == '}')
    return is_name(value.substr(2, value.size() - 3));
  if (value.size() > 1 && value.front() == '$') return is_name(value.substr(1));
  return false;
}

bool is_separator(char c) { return c == '_' || c == '-' || c == '.'; }

// The components of a name ("OPENAI_API_KEY", "--hf-token", "x-api-key"):
// the last one and the one before it, lower-cased.
void last_components(std::string_view name, std::string_view& last, std::string_view& before) {
  while (!name.empty() && is_separator(name.back())) name.remove_suffix(1);
  std::size_t cut = name.size();
  while (cut > 0 && !is_separator(name[cut - 1])) --cut;
  last = name.substr(cut);
  before = {};
  if (cut == 0) return;
  std::size_t end = cut;
  while (end > 0 && is_separator(name[end - 1])) --end;
  std::size_t start = end;
  while (start > 0 && !is_separator(name[start - 1])) --start;
  before = name.substr(start, end - start);
}

}  // namespace

namespace detail {

SecretName classify_secret_name(std::string_view name) {
  std::string_view last;
  std::string_view before;
  last_components(name, last, before);
  if (last.empty() || last.size() > 16) return SecretName::None;
  for (std::string_view word : {"password", "passwd", "pwd", "passphrase", "secret", "apikey",
                                "credential", "credentials", "cookie", "authorization"})
    if (equals_ci(last, word)) return SecretName::Strong;
  if (equals_ci(last, "key") || equals_ci(last, "keys")) {
    for (std::string_view word : {"api", "secret", "access", "private", "session", "master",
                                  "client", "auth", "encryption", "signing", "account", "service"})
      if (equals_ci(before, word)) return SecretName::Strong;
    return before.empty() ? SecretName::BareKey : SecretName::None;
  }
  // AWS_ACCESS_KEY_ID: not a secret alone, but it names the key pair.
  if (equals_ci(last, "id") && equals_ci(before, "key")) return SecretName::Strong;
  if (equals_ci(last, "token") || (equals_ci(last, "tokens") && equals_ci(before, "api")))
    return SecretName::Token;
  return SecretName::None;
}

}  // namespace detail

namespace {

using detail::SecretName;

class Redactor {
 public:
  explicit Redactor(std::string_view text) : t_(text) {}

  std::vector<std::pair<std::size_t, std::size_t>> run() {
    // 1: a name character, 2: ':'. Matched lines are redacted before the
    // rules see them, so this loop runs on every line a rule matches.
    static const auto kClass = [] {
      std::array<unsigned char, 256> table{};
      for (int c = 0; c < 256; ++c) table[static_cast<std::size_t>(c)] = is_name_char(static_cast<char>(c)) ? 1 : 0;
      table[':'] = 2;
      return table;
    }();
    auto cls = [](char c) { return kClass[static_cast<unsigned char>(c)]; };
    std::size_t i = 0;
    const std::size_t n = t_.size();
    while (i < n) {
      unsigned char k = cls(t_[i]);
      if (k == 0) {
        ++i;
      } else if (k == 2) {
        i = i + 2 < n && t_[i + 1] == '/' && t_[i + 2] == '/' ? url_credentials(i + 3) : i + 1;
      } else if (i > 0 && cls(t_[i - 1]) == 1) {
        ++i;  // inside a run that was passed over (after a token)
      } else {
        std::size_t end = i + 1;
        while (end < n && cls(t_[end]) == 1) ++end;
        i = name_run(i, end);
      }
    }
    return std::move(spans_);
  }

 private:
  // Hides t_[from, to) unless it is a placeholder or too short to be anything.
  void hide(std::size_t from, std::size_t to) {
    if (to <= from || is_placeholder(t_.substr(from, to - from))) return;
    spans_.emplace_back(from, to);
  }

  // A run of name characters t_[from, to): a token of a known format, or the
  // key of a secret value. Returns where scanning goes on.
  std::size_t name_run(std::size_t from, std::size_t to) {
    if (std::size_t end = known_token(from, to); end != 0) {
      spans_.emplace_back(from, end);
      return end;
    }
    std::string_view name = t_.substr(from, to - from);
    std::size_t p = to;
    // The key's closing quote: 'key', "key", \"key\".
    if (p < t_.size() && (t_[p] == '\'' || t_[p] == '"')) {
      ++p;
    } else if (p + 1 < t_.size() && t_[p] == '\\' && (t_[p + 1] == '"' || t_[p + 1] == '\'')) {
      p += 2;
    }
    std::size_t after_key = p;
    while (p < t_.size() && is_space(t_[p])) ++p;
    bool flag = name.size() > 1 && name[0] == '-';
    bool separated = false;
    char separator = '\0';
    if (p < t_.size() && (t_[p] == '=' || t_[p] == ':')) {
      separator = t_[p];
      // "a::b" is a scope, ":=" an assignment: neither introduces a value here.
      if (separator == ':' && p + 1 < t_.size() && t_[p + 1] == ':') return to;
      separated = true;
      ++p;
      while (p < t_.size() && is_space(t_[p])) ++p;
    } else if (flag && p > after_key && after_key == to) {
      separated = true;  // --api-key VALUE
      separator = ' ';
    }
    if (!separated || p >= t_.size()) return to;
    SecretName kind = detail::classify_secret_name(name);
    if (kind == SecretName::None) return to;
    if (kind == SecretName::BareKey) {
      // Only a URL query's key= (?key=..., &key=...).
      if (from == 0 || (t_[from - 1] != '?' && t_[from - 1] != '&') || separator != '=') return to;
    }
    if (flag && separator == ' ' && t_[p] == '-') return to;  // the next flag, not a value
    std::string_view last;
    std::string_view before;
    last_components(name, last, before);
    bool to_line_end = equals_ci(last, "cookie");
    return value(p, kind, separator, to_line_end);
  }

  // A value at t_[p]: a list, a quoted string (' " \" \'), or a bare word.
  std::size_t value(std::size_t p, SecretName kind, char separator, bool to_line_end) {
    const std::size_t n = t_.size();
    if (t_[p] == '[') {
      std::size_t q = p + 1;
      while (q < n) {
        while (q < n && is_space(t_[q])) ++q;
        if (q >= n || t_[q] == ']') return q < n ? q + 1 : n;
        std::size_t next = quoted_or_bare(q, kind, separator, false);
        if (next <= q) return q + 1;
        q = next;
        while (q < n && is_space(t_[q])) ++q;
        if (q < n && t_[q] == ',') {
          ++q;
          continue;
        }
        return q < n && t_[q] == ']' ? q + 1 : q;
      }
      return n;
    }
    return quoted_or_bare(p, kind, separator, to_line_end);
  }

  // Length of an authentication scheme word ("Bearer ", "Basic%20") at p, kept visible.
  std::size_t scheme_prefix(std::size_t p, std::size_t end) const {
    std::string_view rest = t_.substr(p, end - p);
    for (std::string_view scheme : {"bearer", "basic", "token", "digest"}) {
      if (!starts_with_ci(rest, scheme)) continue;
      std::string_view after = rest.substr(scheme.size());
      if (!after.empty() && is_space(after[0])) {
        std::size_t k = scheme.size();
        while (k < rest.size() && is_space(rest[k])) ++k;
        return k;
      }
      if (starts_with(after, "%20")) return scheme.size() + 3;
      if (starts_with(after, "+")) return scheme.size() + 1;
    }
    return 0;
  }

  std::size_t quoted_or_bare(std::size_t p, SecretName kind, char separator, bool to_line_end) {
    const std::size_t n = t_.size();
    std::string_view quote;
    if (t_[p] == '\'' || t_[p] == '"') {
      quote = t_.substr(p, 1);
    } else if (p + 1 < n && t_[p] == '\\' && (t_[p + 1] == '"' || t_[p + 1] == '\'')) {
      quote = t_.substr(p, 2);
    }
    if (!quote.empty()) {
      std::size_t start = p + quote.size();
      // An unterminated quote hides everything after it: the value's end is unknown.
      std::size_t close = std::string_view::npos;
      if (quote.size() == 1) {
        for (std::size_t k = start; k < n; ++k) {
          if (t_[k] == '\\') {
            ++k;  // 'it\'s': an escaped quote is part of the value
          } else if (t_[k] == quote[0]) {
            close = k;
            break;
          }
        }
      } else {
        close = t_.find(quote, start);
      }
      std::size_t end = close == std::string_view::npos ? n : close;
      start += scheme_prefix(start, end);
      hide(start, end);
      return close == std::string_view::npos ? n : close + quote.size();
    }
    std::size_t end = p;
    if (to_line_end) {
      while (end < n && t_[end] != '\'' && t_[end] != '"' && t_[end] != '\n') ++end;
    } else {
      p += scheme_prefix(p, n);
      end = p;
      while (end < n) {
        char c = t_[end];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\'' || c == '"' || c == ',' || c == ';' ||
            c == ')' || c == '}' || c == ']' || c == '&')
          break;
        if (c == '\\' && end + 1 < n && (t_[end + 1] == '"' || t_[end + 1] == '\'')) break;
        ++end;
      }
    }
    std::string_view word = t_.substr(p, end - p);
    if (kind == SecretName::Token || kind == SecretName::BareKey) {
      // "#token: 3428", "token usage: 0.04", "Invalid token: expected ...",
      // "failed to sample token: sample: logits ...": counts and prose, not
      // secrets (a lowercase word may end a clause with ':' or '.').
      bool numeric = !word.empty();
      std::string_view prose = word;
      while (!prose.empty() && (prose.back() == ':' || prose.back() == '.')) prose.remove_suffix(1);
      bool lower_word = !prose.empty();
      for (char c : prose)
        if (!(c >= 'a' && c <= 'z')) lower_word = false;
      for (char c : word) {
        if (!is_digit(c) && c != '.' && c != ',' && c != '%') numeric = false;
      }
      if (numeric || (separator == ':' && lower_word)) return end > p ? end : p + 1;
    }
    hide(p, end);
    return end > p ? end : p + 1;
  }

  // End of a token of a known format starting at t_[from] (within the name
  // run ending at `to`), 0 when there is none.
  std::size_t known_token(std::size_t from, std::size_t to) const {
    std::string_view run = t_.substr(from, to - from);
    auto body = [&](std::size_t prefix, std::size_t min, bool (*allowed)(char)) -> std::size_t {
      std::size_t k = prefix;
      while (k < run.size() && allowed(run[k])) ++k;
      return k - prefix >= min ? from + k : 0;
    };
    auto alnum_or_underscore = [](char c) { return is_alnum(c) || c == '_'; };
    auto alnum_or_dash = [](char c) { return is_alnum(c) || c == '-'; };
    if (run.size() < 12) return 0;
    switch (run[0]) {
      case 'h':
        if (starts_with(run, "hf_")) return body(3, 16, is_alnum);
        break;
      case 's':
        // sk-..., sk-proj-..., sk-ant-api03-...
        if (starts_with(run, "sk-")) return body(3, 16, is_base64url);
        break;
      case 'A':
        if (starts_with(run, "AKIA") || starts_with(run, "ASIA") || starts_with(run, "AIDA") ||
            starts_with(run, "AROA") || starts_with(run, "AGPA") || starts_with(run, "ANPA"))
          return body(4, 16, is_upper_alnum);
        break;
      case 'g':
        if (run.size() > 4 && run[1] == 'h' && run[3] == '_' &&
            (run[2] == 'p' || run[2] == 'o' || run[2] == 'u' || run[2] == 's' || run[2] == 'r'))
          return body(4, 20, is_alnum);
        if (starts_with(run, "github_pat_")) return body(11, 20, alnum_or_underscore);
        if (starts_with(run, "glpat-")) return body(6, 16, is_base64url);
        break;
      case 'x':
        if (run.size() > 5 && starts_with(run, "xox") && run[4] == '-' &&
            (run[3] == 'a' || run[3] == 'b' || run[3] == 'p' || run[3] == 'r' || run[3] == 's'))
          return body(5, 10, alnum_or_dash);
        break;
      case 'e': {
        // A JWT: header.payload.signature, both JSON parts base64url of "{".
        if (!starts_with(run, "eyJ")) break;
        std::size_t k = 3;
        while (k < run.size() && is_base64url(run[k])) ++k;
        if (k < 10 || k >= run.size() || run[k] != '.') break;
        std::size_t payload = k + 1;
        if (run.substr(payload, 3) != "eyJ") break;
        k = payload;
        while (k < run.size() && is_base64url(run[k])) ++k;
        if (k < run.size() && run[k] == '.') {
          ++k;
          while (k < run.size() && is_base64url(run[k])) ++k;
        }
        return from + k;
      }
      default:
        break;
    }
    return 0;
  }

  // scheme://user:password@host: the password, which may hold '@' (the last
  // '@' of the authority ends it). The authority ends at the first '/', so the
  // scans of several "://" never overlap.
  std::size_t url_credentials(std::size_t start) {
    const std::size_t n = t_.size();
    std::size_t end = start;
    std::size_t at = std::string_view::npos;
    while (end < n) {
      char c = t_[end];
      if (c == '/' || c == ' ' || c == '\t' || c == '\n' || c == '?' || c == '#' || c == '"' ||
          c == '\'' || c == '\\' || c == '<' || c == '>')
        break;
      if (c == '@') at = end;
      ++end;
    }
    if (at == std::string_view::npos) return start;
    std::size_t colon = t_.substr(start, at - start).find(':');
    if (colon != std::string_view::npos) hide(start + colon + 1, at);
    return at + 1;
  }

  std::string_view t_;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;
};

}  // namespace

namespace detail {

bool redact_named_value(std::string_view name, std::string& value) {
  SecretName kind = classify_secret_name(name);
  bool whole = kind == SecretName::Strong;
  if (kind == SecretName::Token) {
    // A count named like a token ("#token: 3428") is not a secret.
    whole = value.find_first_not_of("0123456789., %") != std::string::npos;
  }
  if (whole && !is_placeholder(value)) {
    value = std::string(kRedacted);
    return true;
  }
  return redact_secrets(value);
}

}  // namespace detail

bool redact_secrets(std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> spans = Redactor(text).run();
  if (spans.empty()) return false;
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (const auto& [from, to] : spans) {
    if (from < copied) continue;
    out.append(text, copied, from - copied);
    out.append(kRedacted);
    copied = to;
  }
  out.append(text, copied, std::string::npos);
  text = std::move(out);
  return true;
}

std::vector<std::string> redact_argv(std::vector<std::string> argv) {
  bool hide_next = false;
  for (std::string& arg : argv) {
    if (hide_next) {
      hide_next = false;
      // A flag that takes no value ("--api-key" last, or followed by a flag).
      if (!(arg.size() > 1 && arg[0] == '-' && arg[1] == '-') && !is_placeholder(arg)) {
        arg = std::string(kRedacted);
        continue;
      }
    }
    if (arg.size() > 1 && arg[0] == '-' && arg.find('=') == std::string::npos) {
      SecretName kind = detail::classify_secret_name(arg);
      if (kind != SecretName::None && kind != SecretName::BareKey) {
        hide_next = true;
        continue;
      }
    }
    redact_secrets(arg);
  }
  return argv;
}

}  // namespace logrx
