// SPDX-License-Identifier: MIT
// What a name says about its value, shared by the text redactor and the
// redaction of named values (facts, captures, argv).
#pragma once

#include <string>
#include <string_view>

namespace logrx::detail {

enum class SecretName {
  None,     // an ordinary name
  Strong,   // password, secret, api_key, authorization, cookie, ...: any value is secret
  Token,    // token, hf_token, access_token: secret unless a count or a word
  BareKey,  // "key" alone: secret only as a URL query parameter (?key=...)
};

// Classifies a name by its last components: "OPENAI_API_KEY", "--hf-token",
// "x-api-key", "aws_secret_access_key", "password".
SecretName classify_secret_name(std::string_view name);

// Redacts a value known by its name (a fact, a capture, a flag's value): the
// whole value when the name says it is a secret, else its own secrets (as
// redact_secrets). Returns true when it changed `value`.
bool redact_named_value(std::string_view name, std::string& value);

}  // namespace logrx::detail
