// SPDX-License-Identifier: MIT
// Recognises the line headers of SGLang and vLLM (see the catalogs in
// docs/formats.md) without regular expressions: this runs on every line.
#include <array>
#include <cctype>
#include <string>
#include <string_view>

#include "logrx/line.h"
#include "util/text_marks.h"
#include "parse/envelope.h"
#include "parse/line_parser_internal.h"
#include "util/text.h"

namespace logrx {
namespace {

using detail::is_digit;
using detail::parse_fixed_digits;
using detail::starts_with;

// "YYYY-MM-DD HH:MM:SS" at text[pos]; optional ".mmm" or ",mmm". Returns the
// index after it, or 0 when absent.
std::size_t parse_full_timestamp(std::string_view text, std::size_t pos, Timestamp& ts) {
  int year = parse_fixed_digits(text, pos, 4);
  if (year < 0 || pos + 19 > text.size() || text[pos + 4] != '-' || text[pos + 7] != '-' ||
      text[pos + 10] != ' ' || text[pos + 13] != ':' || text[pos + 16] != ':')
    return 0;
  int month = parse_fixed_digits(text, pos + 5, 2);
  int day = parse_fixed_digits(text, pos + 8, 2);
  int hour = parse_fixed_digits(text, pos + 11, 2);
  int minute = parse_fixed_digits(text, pos + 14, 2);
  int second = parse_fixed_digits(text, pos + 17, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60)
    return 0;
  ts = Timestamp{year, month, day, hour, minute, second, 0};
  std::size_t end = pos + 19;
  if (end < text.size() && (text[end] == '.' || text[end] == ',')) {
    std::size_t digits = end + 1;
    int ms = 0;
    int count = 0;
    while (digits < text.size() && is_digit(text[digits])) {
      if (count < 3) ms = ms * 10 + (text[digits] - '0');
      ++count;
      ++digits;
    }
    if (count > 0) {
      for (int k = count; k < 3; ++k) ms *= 10;
      ts.millisecond = ms;
      end = digits;
    }
  }
  return end;
}

// "MM-DD HH:MM:SS" (vLLM: no year). Returns the index after it, or 0.
std::size_t parse_short_timestamp(std::string_view text, std::size_t pos, Timestamp& ts) {
  if (pos + 14 > text.size() || text[pos + 2] != '-' || text[pos + 5] != ' ' ||
      text[pos + 8] != ':' || text[pos + 11] != ':')
    return 0;
  int month = parse_fixed_digits(text, pos, 2);
  int day = parse_fixed_digits(text, pos + 3, 2);
  int hour = parse_fixed_digits(text, pos + 6, 2);
  int minute = parse_fixed_digits(text, pos + 9, 2);
  int second = parse_fixed_digits(text, pos + 12, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60)
    return 0;
  ts = Timestamp{0, month, day, hour, minute, second, 0};
  return pos + 14;
}

// One SGLang rank tag such as "TP0", "DP12", "ATTN_CP1", "MOE_DP3".
bool is_rank_tag(std::string_view token) {
  // The kinds: DP, PP, TP, EP, ATTN_CP, MOE_DP (this runs on every SGLang line).
  std::size_t kind = 0;
  if (token.size() > 2 && token[1] == 'P' &&
      (token[0] == 'D' || token[0] == 'P' || token[0] == 'T' || token[0] == 'E')) {
    kind = 2;
  } else if (token.size() > 7 && starts_with(token, "ATTN_CP")) {
    kind = 7;
  } else if (token.size() > 6 && starts_with(token, "MOE_DP")) {
    kind = 6;
  }
  if (kind == 0) return false;
  for (std::size_t i = kind; i < token.size(); ++i)
    if (!is_digit(token[i])) return false;
  return true;
}

// Space-separated rank tags; true when `tags` is empty or all tokens are tags.
bool all_rank_tags(std::string_view tags) {
  while (!tags.empty()) {
    std::size_t space = tags.find(' ');
    std::string_view token = tags.substr(0, space);
    if (!is_rank_tag(token)) return false;
    if (space == std::string_view::npos) break;
    tags.remove_prefix(space + 1);
  }
  return true;
}

constexpr std::array<std::string_view, 5> kLevels{"DEBUG", "INFO", "WARNING", "ERROR",
                                                  "CRITICAL"};

// The level of kLevels text starts with, if any (its first letter tells
// which it can be: this runs on every line).
constexpr std::string_view kLevelInitials = "DIWEC";
static_assert(
    [] {
      for (std::size_t i = 0; i < kLevels.size(); ++i)
        if (kLevelInitials.find(kLevels[i][0]) != i) return false;
      return kLevelInitials.size() == kLevels.size();
    }(),
    "kLevelInitials holds each level's first letter, in order, once");

std::string_view level_at_start(std::string_view text) {
  if (text.empty()) return {};
  std::size_t which = kLevelInitials.find(text[0]);
  if (which == std::string_view::npos || !starts_with(text, kLevels[which])) return {};
  return kLevels[which];
}

// Uvicorn's "INFO:     " level prefix inside an SGLang line.
bool take_uvicorn_level(std::string_view& message, std::string_view& level) {
  std::string_view name = level_at_start(message);
  if (name.empty() || message.size() <= name.size() || message[name.size()] != ':') return false;
  std::size_t pos = name.size() + 1;
  if (pos < message.size() && message[pos] != ' ') return false;
  while (pos < message.size() && message[pos] == ' ') ++pos;
  level = name;
  message.remove_prefix(pos);
  return true;
}

// "[2026-05-23 07:40:53 DP1 TP0] message", "[TP0 EP0] message" or
// "[2026-05-23 07:40:53] INFO:     uvicorn message".
bool parse_sglang(std::string_view text, detail::HeaderView& event) {
  if (text.empty() || text[0] != '[') return false;
  std::size_t close = text.find("] ");
  bool ends_at_bracket = false;
  if (close == std::string_view::npos) {
    if (text.back() != ']') return false;
    close = text.size() - 1;
    ends_at_bracket = true;
  }
  std::string_view inside = text.substr(1, close - 1);
  Timestamp ts;
  std::size_t after_ts = parse_full_timestamp(inside, 0, ts);
  std::string_view tags;
  if (after_ts > 0) {
    tags = inside.substr(after_ts);
    if (!tags.empty()) {
      if (tags[0] != ' ') return false;
      tags.remove_prefix(1);
    }
  } else {
    tags = inside;
    if (tags.empty()) return false;
  }
  if (!all_rank_tags(tags)) return false;

  event.dialect = Dialect::SGLang;
  if (after_ts > 0) {
    event.has_timestamp = true;
    event.timestamp = ts;
    event.timestamp_text = inside.substr(0, after_ts);
  }
  event.process = tags;
  std::string_view message =
      ends_at_bracket ? std::string_view{} : text.substr(close + 2);
  take_uvicorn_level(message, event.level);
  event.message = message;
  return true;
}

// vLLM's "(EngineCore_DP0 pid=123) " / "(RayWorkerWrapper pid=1, ip=10.0.0.1) "
// process prefix. Returns the index after it, or 0.
std::size_t parse_vllm_prefix(std::string_view text, detail::HeaderView& event) {
  if (text.empty() || text[0] != '(') return 0;
  std::size_t close = text.find(')');
  if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ' ')
    return 0;
  std::string_view inside = text.substr(1, close - 1);
  std::size_t pid_at = inside.find(" pid=");
  if (pid_at == std::string_view::npos || pid_at == 0) return 0;
  std::string_view name = inside.substr(0, pid_at);
  if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z'))) return 0;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '_' ||
              c == ' ' || c == '=' || c == '-';
    if (!ok) return 0;
  }
  std::size_t pos = pid_at + 5;
  std::int64_t pid = 0;
  std::size_t digits = 0;
  while (pos < inside.size() && is_digit(inside[pos])) {
    if (digits < 18) pid = pid * 10 + (inside[pos] - '0');
    ++digits;
    ++pos;
  }
  if (digits == 0) return 0;
  if (pos != inside.size() && !starts_with(inside.substr(pos), ", ")) return 0;
  event.process = name;
  event.pid = pid;
  return close + 2;
}

// "INFO 12-25 04:53:54 [gpu_worker.py:375] message" (>= 0.8) or
// "INFO 03-01 10:30:57 worker.py:267] message" (<= 0.7).
bool parse_vllm_record(std::string_view text, detail::HeaderView& event) {
  std::string_view level = level_at_start(text);
  if (level.empty() || text.size() <= level.size() || text[level.size()] != ' ') return false;
  Timestamp ts;
  std::size_t after_ts = parse_short_timestamp(text, level.size() + 1, ts);
  if (after_ts == 0 || after_ts >= text.size() || text[after_ts] != ' ') return false;
  std::string_view rest = text.substr(after_ts + 1);
  std::string_view source;
  std::string_view message;
  if (!rest.empty() && rest[0] == '[') {
    std::size_t close = rest.find(']');
    if (close == std::string_view::npos) return false;
    source = rest.substr(1, close - 1);
    message = rest.substr(close + 1);
  } else {
    std::size_t close = rest.find("] ");
    std::size_t space = rest.find(' ');
    if (close == std::string_view::npos || space < close) return false;
    source = rest.substr(0, close);
    message = rest.substr(close + 1);
  }
  if (source.find(':') == std::string_view::npos) return false;
  if (!message.empty() && message[0] == ' ') message.remove_prefix(1);
  event.dialect = Dialect::VLLM;
  event.level = level;
  event.has_timestamp = true;
  event.timestamp = ts;
  event.timestamp_text = text.substr(level.size() + 1, 14);
  event.source = source;
  event.message = message;
  return true;
}

// "2024-05-10T12:00:00.123456Z" (RFC 3339, TGI and Ollama). Returns the
// index after it, or 0.
std::size_t parse_rfc3339(std::string_view text, std::size_t pos, Timestamp& ts) {
  if (pos + 19 > text.size() || text[pos + 10] != 'T') return 0;
  std::string copy(text.substr(pos, 19));
  copy[10] = ' ';
  if (parse_full_timestamp(copy, 0, ts) != 19) return 0;
  std::size_t end = pos + 19;
  if (end < text.size() && text[end] == '.') {
    int ms = 0;
    int count = 0;
    ++end;
    while (end < text.size() && is_digit(text[end])) {
      if (count < 3) ms = ms * 10 + (text[end] - '0');
      ++count;
      ++end;
    }
    for (int k = count; k < 3; ++k) ms *= 10;
    ts.millisecond = ms;
  }
  if (end < text.size() && text[end] == 'Z') {
    ++end;
  } else if (end + 6 <= text.size() && (text[end] == '+' || text[end] == '-') &&
             text[end + 3] == ':') {
    end += 6;
  }
  return end;
}

// TGI's Rust tracing lines: "2024-05-10T12:00:00.123456Z  INFO text_generation_launcher: msg",
// and those of its sibling text-embeddings-inference (TEI: "... ERROR
// text_embeddings_backend: ..."), which the TGI rules cover.
bool parse_tgi(std::string_view text, detail::HeaderView& event) {
  Timestamp ts;
  std::size_t end = parse_rfc3339(text, 0, ts);
  if (end == 0) return false;
  std::size_t pos = end;
  while (pos < text.size() && text[pos] == ' ') ++pos;
  if (pos == end) return false;
  std::string_view level;
  for (std::string_view name : {"TRACE", "DEBUG", "INFO", "WARN", "ERROR"}) {
    if (starts_with(text.substr(pos), name) && pos + name.size() < text.size() &&
        text[pos + name.size()] == ' ') {
      level = name;
      break;
    }
  }
  if (level.empty()) return false;
  std::string_view message = text.substr(pos + level.size() + 1);
  if (message.find("text_generation") == std::string_view::npos &&
      message.find("text_embeddings") == std::string_view::npos)
    return false;
  event.dialect = Dialect::TGI;
  event.has_timestamp = true;
  event.timestamp = ts;
  event.timestamp_text = text.substr(0, end);
  event.level = level == "WARN" ? std::string_view("WARNING") : level;
  event.message = message;
  return true;
}

// Ollama's slog lines: "time=2024-05-10T12:00:00.000Z level=INFO source=server.go:1 msg=..."
// and its Gin access lines "[GIN] 2024/05/10 - 12:00:00 | 200 | ...".
bool parse_ollama(std::string_view text, detail::HeaderView& event) {
  if (starts_with(text, "[GIN] ")) {
    event.dialect = Dialect::Ollama;
    event.message = text;
    return true;
  }
  if (!starts_with(text, "time=")) return false;
  Timestamp ts;
  std::size_t end = parse_rfc3339(text, 5, ts);
  if (end == 0 || !starts_with(text.substr(end), " level=")) return false;
  std::size_t level_at = end + 7;
  std::size_t space = text.find(' ', level_at);
  std::string_view level = text.substr(level_at, space == std::string_view::npos ? std::string_view::npos : space - level_at);
  event.dialect = Dialect::Ollama;
  event.has_timestamp = true;
  event.timestamp = ts;
  event.timestamp_text = text.substr(5, end - 5);
  event.level = level == "WARN" ? std::string_view("WARNING") : level;
  event.message = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
  if (starts_with(event.message, "source=")) {
    std::size_t next = event.message.find(' ');
    event.source = event.message.substr(7, next == std::string_view::npos ? std::string_view::npos : next - 7);
    event.message = next == std::string_view::npos ? std::string_view{} : event.message.substr(next + 1);
  }
  return true;
}

// LMDeploy's Python logging: "2024-05-10 12:00:00,123 - lmdeploy - INFO - msg"
// and TurboMind's "[TM][INFO] msg".
bool parse_lmdeploy(std::string_view text, detail::HeaderView& event) {
  if (starts_with(text, "[TM][")) {
    std::size_t close = text.find(']', 5);
    if (close == std::string_view::npos) return false;
    event.dialect = Dialect::LMDeploy;
    event.level = text.substr(4 + 1, close - 5);
    event.message = close + 1 < text.size() ? text.substr(close + 1 + (text[close + 1] == ' ')) : std::string_view{};
    return true;
  }
  Timestamp ts;
  std::size_t end = parse_full_timestamp(text, 0, ts);
  if (end == 0 || !starts_with(text.substr(end), " - lmdeploy - ")) return false;
  std::string_view rest = text.substr(end + 14);
  std::size_t dash = rest.find(" - ");
  event.dialect = Dialect::LMDeploy;
  event.has_timestamp = true;
  event.timestamp = ts;
  event.timestamp_text = text.substr(0, end);
  if (dash != std::string_view::npos && dash <= 8) {
    event.level = rest.substr(0, dash);
    event.message = rest.substr(dash + 3);
  } else {
    event.message = rest;
  }
  return true;
}

// TensorRT-LLM: "[TensorRT-LLM][ERROR] msg", "[05/10/2024-12:00:00] [TRT-LLM] [W] msg".
bool parse_trtllm(std::string_view text, detail::HeaderView& event) {
  std::string_view rest = text;
  if (rest.size() > 21 && rest[0] == '[' && rest[3] == '/' && rest[6] == '/' && rest[11] == '-' &&
      rest[20] == ']') {
    int month = detail::parse_fixed_digits(rest, 1, 2);
    int day = detail::parse_fixed_digits(rest, 4, 2);
    int year = detail::parse_fixed_digits(rest, 7, 4);
    int hour = detail::parse_fixed_digits(rest, 12, 2);
    int minute = detail::parse_fixed_digits(rest, 15, 2);
    int second = detail::parse_fixed_digits(rest, 18, 2);
    if (month >= 1 && month <= 12 && day >= 1 && day <= 31 && year > 0 && hour >= 0 &&
        hour < 24 && minute >= 0 && minute < 60 && second >= 0 && second <= 60) {
      event.has_timestamp = true;
      event.timestamp = Timestamp{year, month, day, hour, minute, second, 0};
      event.timestamp_text = rest.substr(1, 19);
    }
    rest.remove_prefix(rest[21] == ' ' ? 22 : 21);
  }
  std::string_view level;
  if (starts_with(rest, "[TensorRT-LLM][")) {
    std::size_t close = rest.find(']', 15);
    if (close == std::string_view::npos) return false;
    level = rest.substr(15, close - 15);
    rest.remove_prefix(close + 1);
  } else if (starts_with(rest, "[TRT-LLM] [") || starts_with(rest, "[TRT] [")) {
    std::size_t open = rest.find('[', 2);
    std::size_t close = rest.find(']', open);
    if (close == std::string_view::npos) return false;
    std::string_view code = rest.substr(open + 1, close - open - 1);
    level = code == "E" ? "ERROR" : code == "W" ? "WARNING" : code == "I" ? "INFO" : code == "V" ? "DEBUG" : code;
    rest.remove_prefix(close + 1);
  } else if (event.has_timestamp && rest.size() > 4 && rest[0] == '[' && rest[2] == ']' && rest[3] == ' ' &&
             std::string_view("EWIV").find(rest[1]) != std::string_view::npos) {
    // TensorRT's own tools (trtexec): "[09/11/2024-21:49:27] [E] Engine set up
    // failed". TensorRT, not TensorRT-LLM: the level and time, no server.
    event.level = rest[1] == 'E' ? "ERROR" : rest[1] == 'W' ? "WARNING" : rest[1] == 'I' ? "INFO" : "DEBUG";
    event.message = rest.substr(4);
    return true;
  } else {
    event.has_timestamp = false;
    event.timestamp_text = {};
    return false;
  }
  if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  event.dialect = Dialect::TRTLLM;
  event.level = level == "WARN" ? std::string_view("WARNING") : level;
  event.message = rest;
  return true;
}

// llama.cpp prints "function: message" with no timestamp; its servers' own
// prefixes ("srv  load_model:", "slot launch_slot_:", "main:") and the
// library's ("llama_", "ggml_", "gguf_", "llm_load_", "load_tensors:")
// identify it.
bool parse_llamacpp(std::string_view text, detail::HeaderView& event) {
  static constexpr std::array<std::string_view, 16> kPrefixes{
      "llama_", "ggml_", "gguf_", "llm_load_", "load_tensors:", "print_info:", "common_init",
      "srv ", "slot ", "main: ", "que ", "clip_", "load_backend:", "build: ", "system_info:", "init: "};
  // The prefixes' first letters: most lines start with none of them, and
  // this runs on every line no other server's header took.
  static constexpr std::string_view kInitials = "lgpcsmqbi";
  static_assert(
      [] {
        for (std::string_view prefix : kPrefixes)
          if (kInitials.find(prefix[0]) == std::string_view::npos) return false;
        return true;
      }(),
      "every prefix's first letter is in kInitials");
  // common/log.cpp's prefix, where the server turns it on (--log-prefix,
  // --log-timestamps; llama-box and other forks by default): minutes since
  // start "M.ss.mmm.uuu", then "I ", "W ", "E " or "D ". The time is no
  // clock time: only the level is taken.
  std::string_view level;
  std::string_view rest = text;
  bool timed = false;
  if (!rest.empty() && is_digit(rest[0])) {
    std::size_t pos = 0;
    while (pos < rest.size() && pos < 9 && is_digit(rest[pos])) ++pos;
    auto digits = [&rest](std::size_t at, std::size_t count) {
      if (at + count > rest.size()) return false;
      for (std::size_t k = at; k < at + count; ++k)
        if (!is_digit(rest[k])) return false;
      return true;
    };
    if (pos == 0 || pos + 12 > rest.size() || rest[pos] != '.' || !digits(pos + 1, 2) ||
        rest[pos + 3] != '.' || !digits(pos + 4, 3) || rest[pos + 7] != '.' || !digits(pos + 8, 3) ||
        rest[pos + 11] != ' ')
      return false;
    rest.remove_prefix(pos + 12);
    timed = true;
  }
  if (rest.size() > 2 && rest[1] == ' ' && std::string_view("IWED").find(rest[0]) != std::string_view::npos) {
    static constexpr std::string_view kLetterLevels[] = {"INFO", "WARNING", "ERROR", "DEBUG"};
    level = kLetterLevels[std::string_view("IWED").find(rest[0])];
    rest.remove_prefix(2);
  } else if (timed) {
    return false;
  }
  auto known_prefix = [](std::string_view line) {
    if (line.empty() || kInitials.find(line[0]) == std::string_view::npos) return false;
    for (std::string_view prefix : kPrefixes)
      if (starts_with(line, prefix)) return true;
    return false;
  };
  // The function name llama.cpp's LOG_* macros put first ("get_hf_plan: ").
  auto function_prefix = [](std::string_view line) {
    std::size_t k = 0;
    while (k < line.size() && ((line[k] >= 'a' && line[k] <= 'z') || line[k] == '_' || is_digit(line[k]))) ++k;
    return k >= 3 && k + 1 < line.size() && line[k] == ':' && line[k + 1] == ' ' && !is_digit(line[0]);
  };
  // A time and a level together are the prefix; a level alone ("E srv ...")
  // only in front of one of llama.cpp's own prefixes or a function name.
  if (!(timed || known_prefix(rest) || (!level.empty() && function_prefix(rest)))) return false;
  event.dialect = Dialect::LlamaCpp;
  event.level = level;
  event.message = rest;
  return true;
}

// The level of glog's first letter (and of PyTorch's C++ logging, which
// copies it): "I", "W", "E", "F"; empty for any other.
std::string_view glog_level(char letter) {
  switch (letter) {
    case 'I': return "INFO";
    case 'W': return "WARNING";
    case 'E': return "ERROR";
    case 'F': return "FATAL";
    default: return {};
  }
}

// glog, as Triton and other C++ servers write it: "E1103 02:59:01.152656
// 81041 backend_model.cc:553] message". The server is not known from it, so
// only the level and the message are taken.
bool parse_glog(std::string_view text, detail::HeaderView& event) {
  if (text.size() < 24 || glog_level(text[0]).empty()) return false;
  if (!is_digit(text[1]) || !is_digit(text[4]) || text[5] != ' ' || text[8] != ':' || text[11] != ':')
    return false;
  std::size_t close = text.find("] ", 12);
  if (close == std::string_view::npos || close > 80) return false;
  std::string_view where = text.substr(12, close - 12);
  if (where.find(':') == std::string_view::npos) return false;
  event.level = glog_level(text[0]);
  event.message = text.substr(close + 2);
  return true;
}

// PyTorch's C++ logging (c10), as torch.distributed and NCCL's watchdog
// write it: "[W909 08:45:30.126335825 ProcessGroupNCCL.cpp:2252] message"
// (2.3 and later: level, MMDD, time, file:line) and "[W socket.cpp:663]
// message" (before). The server is not known from it: only the level and
// the message are taken.
bool parse_c10(std::string_view text, detail::HeaderView& event) {
  if (text.size() < 8 || text[0] != '[' || glog_level(text[1]).empty()) return false;
  std::size_t pos = 2;
  if (is_digit(text[pos])) {
    // MDD or MMDD (the month unpadded: "E909" is September 9), HH:MM:SS
    // with a fraction, and a thread id where glog prints one.
    std::size_t date = pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    if (pos - date < 3 || pos - date > 4 || text.size() < pos + 10 || text[pos] != ' ' ||
        text[pos + 3] != ':' || text[pos + 6] != ':')
      return false;
    pos += 9;
    while (pos < text.size() && (is_digit(text[pos]) || text[pos] == '.')) ++pos;
    if (pos >= text.size() || text[pos] != ' ') return false;
    ++pos;
    std::size_t thread = pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    if (pos > thread) {
      if (pos >= text.size() || text[pos] != ' ') return false;
      ++pos;
    }
  } else if (text[pos] == ' ') {
    ++pos;
  } else {
    return false;
  }
  std::size_t close = text.find("] ", pos);
  if (close == std::string_view::npos || close - pos > 120) return false;
  std::string_view where = text.substr(pos, close - pos);
  std::size_t colon = where.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= where.size() || !is_digit(where[colon + 1]) ||
      where.find(' ') != std::string_view::npos)
    return false;
  event.level = glog_level(text[1]);
  event.source = where;
  event.message = text.substr(close + 2);
  return true;
}

// The kernel's ring buffer as dmesg prints it: "[ 1843.439662] message"
// (seconds since boot) or, with -T, "[Sun Mar 30 08:24:00 2025] message".
// The message is taken, under the program name "kernel" (the boot-relative
// time is no clock time; -T's is left out as for Ray's lines).
bool parse_kernel(std::string_view text, detail::HeaderView& event) {
  if (text.size() < 12 || text[0] != '[') return false;
  std::size_t close = text.find("] ");
  if (close == std::string_view::npos || close > 32) return false;
  std::string_view stamp = text.substr(1, close - 1);
  bool uptime = false;
  {
    std::size_t k = 0;
    while (k < stamp.size() && stamp[k] == ' ') ++k;
    std::size_t digits = k;
    while (k < stamp.size() && is_digit(stamp[k])) ++k;
    // At most eight digits of seconds (three years up): ten are an epoch,
    // as UCX prints one ("[1721216845.639899] [host:849:f] ...").
    if (k > digits && k - digits <= 8 && k + 7 == stamp.size() && stamp[k] == '.') {
      uptime = true;
      for (std::size_t m = k + 1; m < stamp.size(); ++m) uptime = uptime && is_digit(stamp[m]);
    }
  }
  bool wall = stamp.size() == 24 && stamp[3] == ' ' && stamp[7] == ' ' && stamp[13] == ':' &&
              stamp[16] == ':' && stamp[19] == ' ' && is_digit(stamp[20]) && is_digit(stamp[23]);
  if (!uptime && !wall) return false;
  event.process = "kernel";
  event.message = text.substr(close + 2);
  return true;
}

// Ray's C++ logging (raylet, GCS server, core workers): "[2023-07-23
// 15:21:29,851 E 9751 9751] (raylet) node_manager.cc:3084: message" (time,
// level letter, pid, thread; the component in parentheses since Ray 2.x,
// then file:line). The server is not known from it: the level, component,
// file and message are taken (not the time: a Ray line's full date beside a
// server's year-less one would read as the clock jumping).
bool parse_ray_cpp(std::string_view text, detail::HeaderView& event) {
  if (text.size() < 30 || text[0] != '[' || !is_digit(text[1])) return false;
  Timestamp ts;
  std::size_t pos = parse_full_timestamp(text, 1, ts);
  if (pos == 0 || pos + 3 >= text.size() || text[pos] != ' ' || text[pos + 2] != ' ') return false;
  std::string_view level;
  switch (text[pos + 1]) {
    case 'I': level = "INFO"; break;
    case 'W': level = "WARNING"; break;
    case 'E': level = "ERROR"; break;
    case 'C': level = "CRITICAL"; break;
    case 'F': level = "FATAL"; break;
    case 'D': level = "DEBUG"; break;
    case 'T': level = "TRACE"; break;
    default: return false;
  }
  pos += 3;
  for (int field = 0; field < 2; ++field) {  // pid, then thread id
    std::size_t start = pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    if (pos == start || pos >= text.size()) return false;
    if (field == 0) {
      if (text[pos] != ' ') return false;
      ++pos;
    }
  }
  if (pos + 1 >= text.size() || text[pos] != ']' || text[pos + 1] != ' ') return false;
  std::string_view rest = text.substr(pos + 2);
  if (!rest.empty() && rest[0] == '(') {
    std::size_t close = rest.find(") ");
    if (close != std::string_view::npos && close < 40) {
      event.process = rest.substr(1, close - 1);
      rest.remove_prefix(close + 2);
    }
  }
  std::size_t colon_space = rest.find(": ");
  if (colon_space != std::string_view::npos && colon_space < 80) {
    std::string_view where = rest.substr(0, colon_space);
    std::size_t colon = where.rfind(':');
    bool line_number = colon != std::string_view::npos && colon + 1 < where.size() &&
                       where.find(' ') == std::string_view::npos;
    for (std::size_t k = colon + 1; line_number && k < where.size(); ++k) line_number = is_digit(where[k]);
    if (line_number) {
      event.source = where;
      rest.remove_prefix(colon_space + 2);
    }
  }
  event.level = level;
  event.message = rest;
  return true;
}

// Ray's Python logging (the driver, ray.init, Serve, the autoscaler):
// "2025-02-22 21:02:44,020\tINFO worker.py:1654 -- message". Level, file and
// message are taken (not the time, as for its C++ lines).
bool parse_ray_python(std::string_view text, detail::HeaderView& event) {
  if (text.size() < 30 || !is_digit(text[0])) return false;
  Timestamp ts;
  std::size_t pos = parse_full_timestamp(text, 0, ts);
  if (pos == 0 || pos >= text.size() || text[pos] != '\t') return false;
  std::string_view level = level_at_start(text.substr(pos + 1));
  if (level.empty()) return false;
  pos += 1 + level.size();
  if (pos >= text.size() || text[pos] != ' ') return false;
  std::size_t dashes = text.find(" -- ", pos + 1);
  if (dashes == std::string_view::npos || dashes > pos + 100) return false;
  std::string_view where = text.substr(pos + 1, dashes - pos - 1);
  if (where.find(':') == std::string_view::npos || where.find(' ') != std::string_view::npos) return false;
  event.level = level;
  event.source = where;
  event.message = text.substr(dashes + 4);
  return true;
}

// Python's logging as KServe's model server (and others) formats it:
// "2024-07-01 07:28:04.488 1 kserve ERROR [__main__.py:<module>():254] message"
// (time, pid, logger, level, [file:function():line]). The server is not known
// from it: the level, time and message are taken.
bool parse_python_logging(std::string_view text, detail::HeaderView& event) {
  if (text.size() < 30 || !is_digit(text[0])) return false;
  Timestamp ts;
  std::size_t pos = parse_full_timestamp(text, 0, ts);
  if (pos == 0 || pos >= text.size() || text[pos] != ' ') return false;
  std::size_t time_end = pos++;
  std::size_t pid_start = pos;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  if (pos == pid_start || pos >= text.size() || text[pos] != ' ') return false;
  std::size_t logger_start = ++pos;
  while (pos < text.size() && (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_' ||
                               text[pos] == '.' || text[pos] == '-'))
    ++pos;
  if (pos == logger_start || pos >= text.size() || text[pos] != ' ') return false;
  std::string_view logger = text.substr(logger_start, pos - logger_start);
  std::string_view level = level_at_start(text.substr(++pos));
  if (level.empty()) return false;
  pos += level.size();
  if (pos + 1 >= text.size() || text[pos] != ' ' || text[pos + 1] != '[') return false;
  std::size_t close = text.find("] ", pos + 2);
  if (close == std::string_view::npos || close > pos + 160) return false;
  std::string_view where = text.substr(pos + 2, close - pos - 2);
  if (where.find(':') == std::string_view::npos) return false;
  event.has_timestamp = true;
  event.timestamp = ts;
  event.timestamp_text = text.substr(0, time_end);
  event.level = level;
  event.process = logger;
  event.source = where;
  event.message = text.substr(close + 2);
  return true;
}

// Whether the compose prefix at the start of text names a replica
// ("vllm-1", compose v1's "app_vllm_1"): only compose names its services so,
// where another program's "NAME | " (a level column) would not.
bool is_compose_replica(std::string_view text) {
  std::size_t end = text.find_first_of(" |");
  if (end == std::string_view::npos || end < 3) return false;
  std::size_t digits = end;
  while (digits > 0 && is_digit(text[digits - 1])) --digits;
  return digits < end && digits > 1 && (text[digits - 1] == '-' || text[digits - 1] == '_');
}

// "vllm-1  | " (docker compose) in front of a server's own line. Returns the
// index after it, or 0.
std::size_t compose_prefix(std::string_view text) {
  std::size_t bar = text.substr(0, 68).find(" | ");
  if (bar == std::string_view::npos || bar == 0 || bar > 64) return 0;
  std::size_t name_end = bar;
  while (name_end > 0 && text[name_end - 1] == ' ') --name_end;
  if (name_end == 0) return 0;
  for (std::size_t i = 0; i < name_end; ++i) {
    char c = text[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
              c == '-' || c == '.';
    if (!ok) return 0;
  }
  return bar + 3;
}

// After a wrapper's own time: its level and logger columns, when it prints
// them before the line it wraps ("- INFO - [container] " from Python's
// logging, "[Info] (Process) " from a launcher). Returns the index after
// them (pos itself when there are none).
std::size_t wrapper_columns(std::string_view text, std::size_t pos) {
  auto word_at = [&text](std::size_t at) {
    std::size_t end = at;
    while (end < text.size() && end - at < 16 &&
           ((text[end] >= 'A' && text[end] <= 'Z') || (text[end] >= 'a' && text[end] <= 'z')))
      ++end;
    return end;
  };
  // "%(asctime)s - %(levelname)s - %(message)s"
  if (text.compare(pos, 3, " - ") == 0) {
    std::size_t end = word_at(pos + 3);
    if (end > pos + 3 && text.compare(end, 3, " - ") == 0) pos = end + 3;
  } else if (text.compare(pos, 2, " [") == 0) {
    std::size_t end = word_at(pos + 2);
    if (end > pos + 2 && text.compare(end, 2, "] ") == 0) pos = end + 1;
  }
  // One bracketed name after the level: "[container] ", "(Process) ".
  if (pos < text.size() && text[pos] == ' ') ++pos;
  if (pos < text.size() && (text[pos] == '[' || text[pos] == '(')) {
    char close = text[pos] == '[' ? ']' : ')';
    std::size_t end = text.find(close, pos + 1);
    if (end != std::string_view::npos && end - pos <= 48 && end + 1 < text.size() && text[end + 1] == ' ') {
      // Not vLLM's own "(Name pid=N) " prefix, which belongs to the wrapped line.
      std::string_view inside = text.substr(pos + 1, end - pos - 1);
      if (inside.find('=') == std::string_view::npos) return end + 2;
    }
  }
  return pos;
}

// A log shipper's or wrapper's prefix in front of a server's own line:
// `docker logs --timestamps` ("2025-01-17T10:00:00.123456789Z "), Docker
// Desktop's or a wrapper's time and columns, an export's epoch, line
// numbers, a stream tag, journald or syslog ("Jan 17 10:00:00 host
// ollama[123]: "). Returns the index after it, or 0; `shorter`, when not 0,
// is a shorter reading to try when the longer one leaves no server line (a
// server's own "[GIN] " after Docker Desktop's time).
std::size_t shipper_prefix(std::string_view text, Timestamp& ts, std::size_t& shorter) {
  shorter = 0;
  if (!text.empty() && is_digit(text[0])) {
    std::size_t end = parse_rfc3339(text, 0, ts);
    if (end > 0 && end < text.size() && text[end] == ' ') return end + 1;
    // Docker Desktop's log view copies each line after "2025-03-05 12:00:00 ",
    // a wrapper's own logger after its time and level.
    end = parse_full_timestamp(text, 0, ts);
    if (end > 0 && end < text.size() && text[end] == ' ') {
      std::size_t columns = wrapper_columns(text, end);
      if (columns <= end + 1) return end + 1;
      shorter = end + 1;
      return columns;
    }
    ts = Timestamp{};
    std::size_t digits = 0;
    while (digits < text.size() && is_digit(text[digits])) ++digits;
    // A CloudWatch CSV export: the epoch in milliseconds, a comma, the line.
    if (digits == 13 && digits < text.size() && text[digits] == ',')
      return digits + 1 + (digits + 1 < text.size() && text[digits + 1] == '"' ? 1 : 0);
    // An editor's or viewer's line numbers: "41  ", "41\t", "41 | ", "41: ".
    if (digits <= 6 && digits < text.size()) {
      std::size_t at = digits;
      if (text[at] == '\t') return at + 1;
      if (text[at] == ':' || text[at] == '|') ++at;
      else if (text.compare(at, 2, " |") == 0) at += 2;
      std::size_t spaces = at;
      while (spaces < text.size() && spaces - at < 4 && text[spaces] == ' ') ++spaces;
      if (spaces > at) return spaces;
    }
    return 0;
  }
  // A process manager's or IDE's stream tag ("[stdout] ", "[stderr] ").
  for (std::string_view tag : {"[stdout] ", "[stderr] "})
    if (starts_with(text, tag)) return tag.size();
  // The envelope stage reads these for a whole stream; here the prefix is
  // taken line by line (an excerpt whose first line has none).
  Timestamp bsd;
  std::size_t end = detail::parse_bsd_time(text, bsd);
  if (end == 0) return 0;
  std::string_view ident;
  std::size_t message = detail::parse_host_ident(text, end, ident);
  if (message == 0) return 0;
  ts = bsd;
  return message;
}

void reset(LineEvent& event, std::uint64_t line_number) {
  event.line = line_number;
  event.truncated = false;
  event.dialect = Dialect::Unknown;
  event.has_timestamp = false;
  event.timestamp = Timestamp{};
  event.timestamp_text.clear();
  event.level.clear();
  event.process.clear();
  event.pid = -1;
  event.source.clear();
  event.message.clear();
  event.origin.clear();
  event.timestamp_from_envelope = false;
}

}  // namespace

void parse_line(std::string_view raw, std::uint64_t line_number, LineEvent& event,
                bool redact) {
  reset(event, line_number);
  sanitize_line(raw, event.text);
  if (redact) redact_secrets(event.text);
  detail::parse_header(event);
}

namespace detail {

void parse_plain_line(std::string_view raw, std::uint64_t line_number, LineEvent& event) {
  reset(event, line_number);
  // Plain bytes may still hold terminal controls written out as text.
  if (find_marks(raw).notation) {
    sanitize_line(raw, event.text);
  } else {
    event.text.assign(raw);
  }
  parse_header(event);
}

namespace {

// Launchers that tag every line of the processes they start, in front of
// whatever those print: torch.distributed's "[rank0]: " (one space, then the
// line), mpirun's
// --tag-output "[1,0]<stderr>: " (after --timestamp-output's "Thu Jan 23
// 11:55:50 2025"), Ray's "(pid=123) " and "(pid=123, ip=10.0.0.1) "; and the
// "> " of a log quoted in Markdown (or the "▎ " bar a renderer draws for
// one), which pastes in issue threads carry. Returns the index after the tag
// (0: none) and the rank or pid it names.
std::size_t launcher_prefix(std::string_view text, std::string_view& tag) {
  // A log quoted in Markdown ("> " before every line of a pasted excerpt).
  if (text == ">") return 1;
  if (starts_with(text, "> ")) return 2;
  // The bar some chat and terminal renderers draw for a quote ("▎ ").
  if (text == "\xE2\x96\x8E") return 3;
  if (starts_with(text, "\xE2\x96\x8E ")) return 4;
  std::size_t at = 0;
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z' && text.size() > 25 && text[3] == ' ' &&
      text[7] == ' ' && text[13] == ':' && text[16] == ':' && text[19] == ' ' && text[24] == '[')
    at = 24;  // ctime(3): "Thu Jan 23 11:55:50 2025"
  if (at < text.size() && text[at] == '[') {
    std::string_view rest = text.substr(at + 1);
    if (starts_with(rest, "rank")) {
      std::size_t digits = 4;
      while (digits < rest.size() && is_digit(rest[digits])) ++digits;
      if (digits > 4 && digits + 1 < rest.size() && rest[digits] == ']' && rest[digits + 1] == ':') {
        tag = rest.substr(0, digits);
        std::size_t end = at + 1 + digits + 2;
        if (end < text.size() && text[end] == ' ') ++end;
        return end;
      }
      return 0;
    }
    // "[1,0]<stderr>:"
    std::size_t i = 0;
    while (i < rest.size() && is_digit(rest[i])) ++i;
    if (i == 0 || i >= rest.size() || rest[i] != ',') return 0;
    std::size_t j = i + 1;
    while (j < rest.size() && is_digit(rest[j])) ++j;
    if (j == i + 1 || j >= rest.size() || rest[j] != ']') return 0;
    std::string_view stream = rest.substr(j + 1);
    for (std::string_view name : {"<stderr>:", "<stdout>:", "<stddiag>:"}) {
      if (starts_with(stream, name)) {
        // mpirun puts the child's line right after the tag, indentation and all.
        tag = rest.substr(0, j);
        return at + 1 + j + 1 + name.size();
      }
    }
    return 0;
  }
  // Ray's driver echoes its daemons' lines as "(raylet) ", "(raylet,
  // ip=10.0.0.2) " or "(gcs_server) ".
  if (at == 0 && (starts_with(text, "(raylet") || starts_with(text, "(gcs_server"))) {
    std::size_t name_end = text.find_first_of(",)");
    std::size_t close = text.find(") ");
    if (name_end == std::string_view::npos || close == std::string_view::npos || close > 48) return 0;
    std::string_view name = text.substr(1, name_end - 1);
    if (name != "raylet" && name != "gcs_server") return 0;
    if (name_end != close && !starts_with(text.substr(name_end), ", ip=")) return 0;
    tag = name;
    return close + 2;
  }
  if (at == 0 && starts_with(text, "(pid=")) {
    std::size_t close = text.find(')');
    if (close == std::string_view::npos || close < 6 || close > 64 || close + 1 >= text.size() ||
        text[close + 1] != ' ')
      return 0;
    std::size_t i = 5;
    while (i < close && is_digit(text[i])) ++i;
    if (i == 5 || !(i == close || starts_with(text.substr(i), ", ip="))) return 0;
    tag = text.substr(1, i - 1);
    return close + 2;
  }
  return 0;
}

}  // namespace

void parse_header_body(std::string_view text, HeaderView& view);

// The header is written into `view` (a default-constructed one) rather than
// returned: a function returning one of several HeaderViews cannot build it
// in place, and copying its 128 bytes out through the stack cost a third of
// the time of an SGLang line's parse.
void parse_header_into(std::string_view text, HeaderView& view) {
  // At most two tags (a timestamped mpirun tag before torch's rank tag):
  // a line of nothing but tags must not cost more.
  std::string_view tag;
  std::size_t skipped = 0;
  for (int i = 0; i < 2; ++i) {
    std::string_view this_tag;
    std::size_t skip = launcher_prefix(text.substr(skipped), this_tag);
    if (skip == 0) break;
    if (tag.empty()) tag = this_tag;
    skipped += skip;
  }
  if (skipped == 0) {
    parse_header_body(text, view);
    return;
  }
  parse_header_body(text.substr(skipped), view);
  if (view.process.empty()) view.process = tag;
}

void parse_header_body(std::string_view text, HeaderView& view) {
  if (parse_sglang(text, view)) return;
  if (!text.empty()) {
    char first = text[0];
    view = HeaderView{};
    if (first >= '0' && first <= '9') {
      if (parse_tgi(text, view)) return;
      view = HeaderView{};
      if (parse_lmdeploy(text, view)) return;
      view = HeaderView{};
      if (parse_llamacpp(text, view)) return;
    } else if (first == 't' || first == '[') {
      if (parse_ollama(text, view)) return;
      view = HeaderView{};
      if (first == '[' && parse_lmdeploy(text, view)) return;
      view = HeaderView{};
      if (first == '[' && parse_trtllm(text, view)) return;
      view = HeaderView{};
      if (first == '[' && parse_c10(text, view)) return;
      view = HeaderView{};
      if (first == '[' && parse_ray_cpp(text, view)) return;
    } else if (parse_llamacpp(text, view)) {
      return;
    }
    view = HeaderView{};
  }
  std::size_t body = parse_vllm_prefix(text, view);
  if (parse_vllm_record(text.substr(body), view)) return;
  if (body > 0) {
    // A prefixed line without a record header is raw output of a vLLM
    // process: a traceback line, a print, a progress bar.
    view.dialect = Dialect::VLLM;
    view.message = text.substr(body);
    return;
  }
  // A shipper's or docker compose's prefix in front of a server's own line
  // (checked last: most lines are a server's own).
  std::size_t compose = compose_prefix(text);
  if (compose > 0) {
    HeaderView inner = parse_header(text.substr(compose));
    if (inner.dialect != Dialect::Unknown) {
      view = inner;
      return;
    }
  }
  {
    Timestamp shipped;
    std::size_t shorter = 0;
    std::size_t skip = shipper_prefix(text, shipped, shorter);
    // The wrapper's time ends where its shortest reading does.
    std::size_t time_end = (shorter > 0 ? shorter : skip) - 1;
    for (int reading = 0; reading < 2 && skip > 0; ++reading, skip = shorter) {
      std::string_view rest = text.substr(skip);
      // TGI's own lines start with the same kind of timestamp: only a known
      // server line behind the prefix makes it a prefix.
      HeaderView inner = parse_header(rest);
      if (inner.dialect != Dialect::Unknown) {
        // A stream tag carries no time (shipped stays unset: month 0).
        if (!inner.has_timestamp && shipped.month != 0) {
          inner.has_timestamp = true;
          inner.timestamp = shipped;
          inner.timestamp_text = text.substr(0, time_end);
        }
        view = inner;
        return;
      }
    }
  }
  // A failed SGLang or vLLM attempt may have set fields; a plain line has none.
  // Behind a replica's compose prefix ("pull-model-1  | panic: ..."), the
  // message is what the container wrote, whatever program wrote it.
  std::string_view plain = compose > 0 && is_compose_replica(text) ? text.substr(compose) : text;
  view = HeaderView{Dialect::Unknown, false, {}, {}, {}, {}, -1, {}, plain};
  detail::HeaderView kernel;
  if (parse_kernel(text, kernel)) {
    view = kernel;
    return;
  }
  detail::HeaderView glog;
  if (parse_glog(text, glog)) {
    view = glog;
    return;
  }
  detail::HeaderView python;
  if (parse_python_logging(text, python)) {
    view = python;
    return;
  }
  detail::HeaderView ray;
  if (parse_ray_python(text, ray)) view = ray;
}

bool is_uvicorn_record(std::string_view text) {
  std::string_view name = level_at_start(text);
  return !name.empty() && text.size() > name.size() + 1 && text[name.size()] == ':' &&
         text[name.size() + 1] == ' ';
}

void parse_header(LineEvent& event) {
  HeaderView view = parse_header(std::string_view(event.text));
  event.dialect = view.dialect;
  event.has_timestamp = view.has_timestamp;
  event.timestamp = view.timestamp;
  event.timestamp_text.assign(view.timestamp_text);
  event.level.assign(view.level);
  event.process.assign(view.process);
  event.pid = view.pid;
  event.source.assign(view.source);
  event.message.assign(view.message);
}

}  // namespace detail
}  // namespace logrx
