// SPDX-License-Identifier: MIT
#include "logrx/types.h"

#include <array>
#include <utility>

namespace logrx {
namespace {

constexpr std::array<std::pair<Severity, std::string_view>, 4> kSeverityNames{{
    {Severity::Info, "info"},
    {Severity::Warning, "warning"},
    {Severity::Error, "error"},
    {Severity::Fatal, "fatal"},
}};

constexpr std::array<std::pair<Category, std::string_view>, 5> kCategoryNames{{
    {Category::MemoryPressure, "memory_pressure"},
    {Category::ConfigConflict, "config_conflict"},
    {Category::StaleOutput, "stale_output"},
    {Category::Other, "other"},
    {Category::Info, "info"},
}};

}  // namespace

std::string_view to_string(Severity severity) noexcept {
  for (const auto& [value, name] : kSeverityNames)
    if (value == severity) return name;
  return "unknown";
}

std::string_view to_string(Category category) noexcept {
  for (const auto& [value, name] : kCategoryNames)
    if (value == category) return name;
  return "unknown";
}

std::string_view to_string(Dialect dialect) noexcept {
  switch (dialect) {
    case Dialect::SGLang:
      return "sglang";
    case Dialect::VLLM:
      return "vllm";
    case Dialect::TGI:
      return "tgi";
    case Dialect::LlamaCpp:
      return "llamacpp";
    case Dialect::TRTLLM:
      return "trtllm";
    case Dialect::LMDeploy:
      return "lmdeploy";
    case Dialect::Ollama:
      return "ollama";
    case Dialect::Unknown:
      break;
  }
  return "unknown";
}

std::string_view to_string(Tier tier) noexcept {
  switch (tier) {
    case Tier::Structure:
      return "structure";
    case Tier::Lexical:
      return "lexical";
    case Tier::Rule:
      break;
  }
  return "rule";
}

std::optional<Dialect> parse_dialect(std::string_view name) noexcept {
  for (Dialect d : {Dialect::SGLang, Dialect::VLLM, Dialect::TGI, Dialect::LlamaCpp,
                    Dialect::TRTLLM, Dialect::LMDeploy, Dialect::Ollama})
    if (to_string(d) == name) return d;
  return std::nullopt;
}

std::optional<Severity> parse_severity(std::string_view name) noexcept {
  for (const auto& [value, text] : kSeverityNames)
    if (text == name) return value;
  return std::nullopt;
}

std::optional<Category> parse_category(std::string_view name) noexcept {
  for (const auto& [value, text] : kCategoryNames)
    if (text == name) return value;
  return std::nullopt;
}

}  // namespace logrx
