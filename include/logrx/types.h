// SPDX-License-Identifier: MIT
// Small vocabulary types shared by every part of logrx: severities, categories
// and the server dialects a log line can be written in.
//
// All functions here are pure and safe to call from any thread.
#pragma once

#include <optional>
#include <string_view>

namespace logrx {

// How bad a finding is. Ordered: a larger value is worse.
enum class Severity { Info = 0, Warning = 1, Error = 2, Fatal = 3 };

// What kind of problem a finding describes.
enum class Category {
  MemoryPressure,  // the server ran out of, or is starved of, GPU/host memory
  ConfigConflict,  // flags or defaults that contradict each other
  StaleOutput,     // the log does not describe the process the operator thinks it does
  Other,           // a recognised problem outside the three above
  Info,            // a fact worth knowing, not a problem
};

// The log format a single line was written in.
enum class Dialect { Unknown, SGLang, VLLM, TGI, LlamaCpp, TRTLLM, LMDeploy, Ollama };

// How a rule knows its message. Specific rules name one message; when none
// does, structure rules classify an error event by its shape (the final
// exception's type and the module that raised it), and lexical rules by the
// words of the error message. A lower tier never fires where a higher one did.
enum class Tier { Rule, Structure, Lexical };

// Stable lower-case names used in rule files and JSON output
// ("warning", "memory_pressure", "sglang").
std::string_view to_string(Severity severity) noexcept;
std::string_view to_string(Category category) noexcept;
std::string_view to_string(Dialect dialect) noexcept;
std::string_view to_string(Tier tier) noexcept;

// Inverse of to_string; std::nullopt for an unknown name. Case-sensitive.
std::optional<Severity> parse_severity(std::string_view name) noexcept;
std::optional<Category> parse_category(std::string_view name) noexcept;
std::optional<Dialect> parse_dialect(std::string_view name) noexcept;

}  // namespace logrx
