// SPDX-License-Identifier: MIT
// Secrets in logs: SGLang prints api_key in its config dump, request logs can
// carry Authorization headers, and tokens (hf_..., sk-...) or URLs with
// credentials end up in tracebacks. They are replaced before any rule, fact
// or printer sees the line.
#include <array>
#include <re2/re2.h>
#include <string>
#include <string_view>

#include "logrx/line.h"

namespace logrx {
namespace {

// Group 1 keeps what precedes the secret; group 2 is the secret itself.
const re2::RE2& secret_pattern() {
  static const re2::RE2 kPattern(
      // key = value / key: value / 'key': 'value' / --key value
      "((?i:\\b(?:admin[_-]?)?api[_-]?key|\\bhf[_-]?token|\\baccess[_-]?token|\\bauth[_-]?token|"
      "\\bapi[_-]?token|\\bclient[_-]?secret|\\bsecret[_-]?key|\\bpassword|\\bpasswd)['\"]?"
      "\\s*[:=]\\s*['\"]?)([^\\s'\",)}\\]]+)"
      // --api-key value on a command line
      "|(--(?i:api-key|admin-api-key|hf-token|access-token|auth-token|api-token|password)[= ]['\"]?)"
      "([^\\s'\"]+)"
      // Authorization: Bearer xyz
      "|((?i:authorization)['\"]?\\s*[:=]\\s*['\"]?(?i:(?:bearer|basic|token)\\s+)?)"
      "([A-Za-z0-9._~+/=-]{8,})"
      // bare tokens with a known prefix
      "|()(\\b(?:hf_[A-Za-z0-9]{16,}|sk-[A-Za-z0-9_-]{16,}|ghp_[A-Za-z0-9]{20,}|"
      "github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}))"
      // scheme://user:password@host
      "|(\\b[A-Za-z][A-Za-z0-9+.-]*://[^/\\s:@]+:)([^/\\s@]+)@",
      re2::RE2::Quiet);
  return kPattern;
}

// Values that only look like secrets: a key that is unset.
bool is_placeholder(std::string_view value) {
  return value == "None" || value == "null" || value == "none" || value.empty() ||
         value == "<redacted>";
}

// A cheap test run on every line, in one pass: the full pattern runs only on
// lines that contain the start of a secret's key or prefix. Words common in
// healthy logs ("#token:", "tokens/s", "api_server.py") are not hints.
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool has_ci(std::string_view text, std::size_t at, std::string_view word) {
  if (at + word.size() > text.size()) return false;
  for (std::size_t k = 0; k < word.size(); ++k)
    if (lower(text[at + k]) != word[k]) return false;
  return true;
}

bool may_hold_secret(std::string_view t) {
  for (std::size_t i = 0; i + 2 < t.size(); ++i) {
    switch (lower(t[i])) {
      case 'a':  // api_key, api-key, apikey, api_token, authorization
        if (has_ci(t, i, "api") && i + 3 < t.size()) {
          char next = lower(t[i + 3]);
          char after = i + 4 < t.size() ? lower(t[i + 4]) : '\0';
          if (next == 'k' || ((next == '_' || next == '-') && (after == 'k' || after == 't'))) return true;
        }
        if (has_ci(t, i, "authorization")) return true;
        break;
      case 'h':  // hf_token, hf-token, hf_... tokens
        if (lower(t[i + 1]) == 'f' && (t[i + 2] == '_' || t[i + 2] == '-')) return true;
        break;
      case 's':  // sk-..., secret, client_secret
        if (t[i + 1] == 'k' && t[i + 2] == '-') return true;
        if (has_ci(t, i, "secret")) return true;
        break;
      case 'p':  // password, passwd
        if (has_ci(t, i, "passw")) return true;
        break;
      case 'g':  // ghp_..., github_pat_...
        if (has_ci(t, i, "ghp_") || has_ci(t, i, "github_pat_")) return true;
        break;
      case 'x':  // xoxb-... and friends
        if (t[i + 1] == 'o' && t[i + 2] == 'x') return true;
        break;
      case '_':
      case '-':  // access_token, auth_token, api_token, --token; not "#new-token:"
        if (has_ci(t, i + 1, "token") &&
            ((i >= 4 && (has_ci(t, i - 4, "auth") || has_ci(t, i - 4, "cess"))) ||
             (i >= 3 && has_ci(t, i - 3, "api")) || (i >= 1 && t[i - 1] == '-')))
          return true;
        break;
      case ':':  // scheme://user:password@host
        if (t[i + 1] == '/' && t[i + 2] == '/' && t.find('@', i) != std::string_view::npos) return true;
        break;
      default:
        break;
    }
  }
  return false;
}

}  // namespace

bool redact_secrets(std::string& text) {
  if (!may_hold_secret(text)) return false;
  const re2::RE2& pattern = secret_pattern();
  re2::StringPiece input(text);
  std::array<re2::StringPiece, 11> groups;
  std::string out;
  std::size_t copied = 0;
  std::size_t pos = 0;
  bool changed = false;
  while (pos <= text.size() &&
         pattern.Match(input, pos, text.size(), re2::RE2::UNANCHORED, groups.data(), 11)) {
    // Exactly one alternative matched: its secret is the second group of its pair.
    const re2::StringPiece* secret = nullptr;
    for (int pair = 0; pair < 5; ++pair) {
      if (groups[static_cast<std::size_t>(2 * pair + 2)].data() != nullptr) {
        secret = &groups[static_cast<std::size_t>(2 * pair + 2)];
        break;
      }
    }
    std::size_t match_end = static_cast<std::size_t>(groups[0].data() - text.data()) + groups[0].size();
    if (secret != nullptr && !is_placeholder(std::string_view(secret->data(), secret->size()))) {
      auto start = static_cast<std::size_t>(secret->data() - text.data());
      out.append(text, copied, start - copied);
      out.append("<redacted>");
      copied = start + secret->size();
      changed = true;
    }
    pos = match_end > pos ? match_end : pos + 1;
  }
  if (!changed) return false;
  out.append(text, copied, std::string::npos);
  text = std::move(out);
  return true;
}

}  // namespace logrx
