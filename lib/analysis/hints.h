// SPDX-License-Identifier: MIT
// What an error message says about its own fix, read without a rule that
// knows it: the flags, config keys and environment variables it names, and
// the comparisons it states ("max_model_len (8192) is greater than the
// derived max_model_len (4096)", "`max_input_tokens`(4096) must be <
// `max_total_tokens`(2048)"). Structure and lexical findings prescribe from
// these.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace logrx::detail {

// A name the message mentions, spelled as found ("max_model_len",
// "--max-model-len", "`max_total_tokens`", "VLLM_USE_V1").
struct Mention {
  std::string name;                  // without backticks or quotes
  std::optional<std::string> value;  // "NAME=value" / "--flag value" when written so
  bool env = false;                  // upper-case NAME_WITH_UNDERSCORES
  // Named as what the program refused ("unrecognized arguments: --x"): the
  // cause, never the fix.
  bool rejected = false;
};

// A relation the message states between two terms. `op` is what must hold
// for the configuration to be valid: "<=", "<", ">=", ">", "divisible".
struct Comparison {
  std::string subject;  // name before the relation ("" when none)
  std::optional<double> subject_value;
  std::string op;
  std::string bound;    // name after the relation ("" when a bare number)
  std::optional<double> bound_value;
  bool stated_violation = false;  // "X (a) is greater than Y (b)": the message claims a violates it
  // The words of each term as written ("model's context length"), for
  // settings a message names in prose: "context_length" then "length".
  std::vector<std::string> subject_words;
  std::vector<std::string> bound_words;
};

// Names a term may stand for: its key ("max_model_len"), then its last three
// and two words joined ("model_context_length", "context_length").
std::vector<std::string> term_keys(const std::string& name, const std::vector<std::string>& words);

std::vector<Mention> find_mentions(std::string_view message);
std::vector<Comparison> find_comparisons(std::string_view message);

// "--max-model-len", "max_model_len", "max-model-len" -> "--max-model-len".
std::string flag_spelling(std::string_view name);

}  // namespace logrx::detail
