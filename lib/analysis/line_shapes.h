// SPDX-License-Identifier: MIT
// What the analyzer's stages share about the shape of a line: exception
// lines, traceback frames, error levels, and the phase indices.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

#include "logrx/finding.h"
#include "logrx/rulebook.h"
#include "parse/config_dump.h"
#include "rules/expression.h"
#include "util/text.h"
#include "util/text_marks.h"

namespace logrx::detail {
constexpr std::size_t kPhaseCount = sizeof(kPhases) / sizeof(kPhases[0]);
constexpr std::size_t kPhaseReady = 4;
constexpr std::size_t kPhaseExited = 6;
// Processes of one server flush independently, so slightly older timestamps
// are normal; only a jump back of more than this starts a new run.
constexpr std::int64_t kBackwardsJumpSeconds = 60;

inline std::size_t phase_index(const std::string& name) {
  for (std::size_t i = 0; i < kPhaseCount; ++i)
    if (name == kPhases[i]) return i;
  return 0;
}

inline Value to_value(const detail::ConfigValue& c) {
  switch (c.kind) {
    case detail::ConfigValue::Kind::None:
      return Value::null();
    case detail::ConfigValue::Kind::Bool:
      return Value::of(c.boolean);
    case detail::ConfigValue::Kind::Number:
      return Value::of(c.number);
    case detail::ConfigValue::Kind::String:
    case detail::ConfigValue::Kind::Raw:
      break;
  }
  return Value::of(c.text);
}

inline bool is_exception_line(std::string_view message) {
  // "RuntimeError: ...", "torch.OutOfMemoryError: ...", "KeyboardInterrupt"
  if (message.empty() || message[0] == ' ' || message[0] == '\t') return false;
  std::size_t end = 0;
  auto name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
  };
  while (end < message.size() && name_char(message[end]))
    ++end;
  if (end == 0 || (end < message.size() && message[end] != ':')) return false;
  std::string_view name = message.substr(0, end);
  for (std::string_view suffix : {"Error", "Exception", "Exit", "Interrupt", "Warning", "Failure"})
    if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
      return true;
  return false;
}

// The names vLLM gives its processes in the "(Name pid=N) " prefix. Any other
// name in that shape is Ray's prefix for one of its actors (WorkerDict,
// TaskRunner, LLMRayActor), whose raw output may come from any program.
inline bool is_vllm_process_name(std::string_view name) {
  for (std::string_view prefix : {"EngineCore", "APIServer", "ApiServer", "Vllm", "RayWorker", "DPCoordinator"})
    if (detail::starts_with(name, prefix)) return true;
  return name == "Worker" || detail::starts_with(name, "Worker_");
}

// The last line of a traceback names its exception whatever the class is
// called: "LocalEntryNotFound: ...", "huggingface_hub.errors.OfflineModeIsEnabled:
// ...", "StopIteration". Only read so after a traceback's frames, where a
// CamelCase name at the start of a line can be nothing else.
inline bool is_traceback_tail(std::string_view message) {
  if (is_exception_line(message)) return true;
  if (message.empty() || message[0] == ' ' || message[0] == '\t') return false;
  std::size_t end = 0;
  std::size_t component = 0;  // start of the last dotted component
  auto name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  while (end < message.size() && (name_char(message[end]) || message[end] == '.')) {
    if (message[end] == '.') component = end + 1;
    ++end;
  }
  if (end == 0 || component >= end) return false;
  if (end < message.size() && !(message[end] == ':' && (end + 1 == message.size() || message[end + 1] == ' ')))
    return false;
  std::string_view name = message.substr(component, end - component);
  if (!(name[0] >= 'A' && name[0] <= 'Z') || name.size() < 4) return false;
  bool lower = false;
  for (char c : name) lower = lower || (c >= 'a' && c <= 'z');
  return lower;
}

// A value computed from log text becomes a server argument if a supervisor
// applies it: it must be one plain word that cannot read as another flag or
// carry shell syntax. Literal values written in the rule are trusted.
inline bool safe_argument(std::string_view value) {
  if (value.empty() || value.size() > 256 || value[0] == '-') return false;
  for (char c : value) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '.' || c == ':' || c == ',' || c == '/' || c == '+' || c == '=' ||
                 c == '@' || c == '%' || c == '-';
    if (!plain) return false;
  }
  return true;
}

inline bool is_chain_marker(std::string_view message) {
  return detail::starts_with(message, "The above exception was the direct cause") ||
         detail::starts_with(message, "During handling of the above exception");
}

constexpr std::size_t kFramesKept = 3;
constexpr std::size_t kMaxFallbackCandidates = 32;

// The file of a traceback frame line ('  File "/x/vllm/config.py", line 3, in f').
inline std::string_view frame_file(std::string_view message) {
  std::size_t i = 0;
  while (i < message.size() && (message[i] == ' ' || message[i] == '\t')) ++i;
  if (message.compare(i, 6, "File \"") != 0) return {};
  std::size_t start = i + 6;
  std::size_t end = message.find('"', start);
  if (end == std::string_view::npos) return {};
  return message.substr(start, end - start);
}

// The exception a traceback's source line raises ("    raise ValueError(",
// "raise RuntimeError(msg)"): a paste cut after it still says what was
// raised, and where. "" for any other line.
inline std::string_view raised_exception(std::string_view message) {
  std::size_t i = 0;
  while (i < message.size() && (message[i] == ' ' || message[i] == '\t')) ++i;
  if (message.compare(i, 6, "raise ") != 0) return {};
  std::size_t start = i + 6;
  std::size_t end = start;
  while (end < message.size() &&
         (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_' ||
          message[end] == '.'))
    ++end;
  std::string_view name = message.substr(start, end - start);
  // A class ("ValueError", "torch.OutOfMemoryError"), not a variable
  // re-raised ("raise e", "raise self.error").
  std::size_t last = name.rfind('.');
  std::string_view own = last == std::string_view::npos ? name : name.substr(last + 1);
  if (own.empty() || !std::isupper(static_cast<unsigned char>(own[0]))) return {};
  if (end < message.size() && message[end] != '(' && message[end] != ' ') return {};
  return name;
}

// A line that reports an error by its level or its shape. Warnings and
// informational lines never feed the structure and lexical tiers: healthy
// logs are full of scary-sounding warnings.
inline bool is_error_level(std::string_view level) {
  return level == "ERROR" || level == "CRITICAL" || level == "FATAL" || level == "E" ||
         level == "F" || level == "error" || level == "fatal" || level == "ERR" ||
         level == "EROR" || level == "critical";
}

inline bool is_quiet_level(std::string_view level) {
  return !level.empty() && !is_error_level(level);
}

// `marks` are those of a block the message is in (find_marks).
inline bool opens_traceback(std::string_view message, const TextMarks& marks = kAnyMarks) {
  if (marks.traceback && message.find("Traceback (most recent call last):") != std::string_view::npos)
    return true;
  // An exception in a destructor or at interpreter exit: Python prints this
  // line, then the traceback, which belongs to it.
  if (detail::starts_with(message, "Exception ignored in")) return true;
  // multiprocessing's "Process EngineCore_DP0:" before a child's traceback
  if (detail::starts_with(message, "Process ") && !message.empty() && message.back() == ':' &&
      message.find(' ', 8) == std::string_view::npos)
    return true;
  return false;
}

inline RemediationItem::Kind to_item_kind(RemediationSpec::Kind kind) {
  switch (kind) {
    case RemediationSpec::Kind::Env:
      return RemediationItem::Kind::Env;
    case RemediationSpec::Kind::Param:
      return RemediationItem::Kind::Param;
    case RemediationSpec::Kind::Container:
      return RemediationItem::Kind::Container;
    case RemediationSpec::Kind::Flag:
      break;
  }
  return RemediationItem::Kind::Flag;
}

}  // namespace logrx::detail
