// SPDX-License-Identifier: MIT
// Reading log lines: turning raw bytes into LineEvents.
//
// A LineEvent is one physical line of a server log after sanitising (ANSI
// escape sequences and carriage returns removed, invalid UTF-8 replaced by
// U+FFFD, over-long lines cut to a bounded prefix) and splitting into the
// parts both supported servers print: timestamp, level, process/rank tag and
// the message itself.
//
//   logrx::LineSplitter splitter;
//   logrx::LineEvent event;
//   splitter.feed(buffer, [&](std::string_view line, bool truncated) {
//     logrx::parse_line(line, ++line_number, event);
//     event.truncated = truncated;
//   });
//   splitter.finish(...same callback...);
//
// Thread-safety: the free functions are pure. A LineSplitter belongs to one
// stream and must not be shared between threads without synchronisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "logrx/types.h"

namespace logrx {

// A wall-clock time as printed by the server. Fields the format does not carry
// are 0: vLLM prints no year, neither server prints milliseconds by default.
struct Timestamp {
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  int millisecond = 0;
};

// One parsed line. String members are reused across calls of parse_line, so
// a long-lived LineEvent does not allocate once its buffers have grown.
struct LineEvent {
  std::uint64_t line = 0;       // 1-based line number in the stream
  std::string text;             // the sanitised line, header included
  bool truncated = false;       // the original line was longer than the cap
  Dialect dialect = Dialect::Unknown;
  bool has_timestamp = false;
  Timestamp timestamp;
  std::string timestamp_text;   // as printed, "" when absent
  std::string level;            // "INFO", "WARNING", ... "" when absent
  std::string process;          // "TP0", "DP1 TP0", "EngineCore_DP0", "APIServer", ...
  std::int64_t pid = -1;        // vLLM process prefix pid, -1 when absent
  std::string source;           // vLLM "[file.py:123]" without brackets, "" when absent
  std::string message;          // the line without its header (the whole line when none)
  // From a log shipper's envelope (CRI, Docker json-file, kubectl, journald,
  // syslog) around the line, which the analyzer removes before parsing:
  std::string origin;           // its unit, "pod/NAME/CONTAINER" or "ns/pod/container"; "" when none
  bool timestamp_from_envelope = false;  // the line had no time of its own; it is the envelope's
};

// Cleans one raw line into `out` (cleared first): removes ANSI/OSC escape
// sequences and '\r', replaces invalid UTF-8 and NUL bytes with U+FFFD.
// Other control characters are kept; printers escape them.
void sanitize_line(std::string_view raw, std::string& out);

// True when `bytes` holds nothing sanitize_line would change (no ESC, CR,
// NUL or byte above 0x7F).
bool is_plain_text(std::string_view bytes) noexcept;

// Sanitises `raw` and parses it into `event` (all fields overwritten). With
// `redact`, secrets are replaced first (see redact_secrets).
void parse_line(std::string_view raw, std::uint64_t line_number, LineEvent& event,
                bool redact = false);

// Replaces secrets in `text` with "<redacted>", in one linear pass:
//  - the value of a key that names a secret (password, passwd, secret,
//    *_api_key, *_secret_key, *_token, authorization, cookie, ...), in every
//    form: key=value, key: value, 'key': 'value', {\"key\": \"value\"},
//    'key': ['v1', 'v2'], --key value, --key=value, KEY=value, ?key=value;
//    quoted values whole (spaces, commas), an auth scheme word kept
//    ("Bearer <redacted>", "Bearer%20<redacted>"), a Cookie header to the end;
//  - tokens of known formats anywhere: hf_, sk-/sk-proj-/sk-ant-, AKIA/ASIA,
//    ghp_/gho_/ghs_/ghu_/ghr_/github_pat_, glpat-, xox[abprs]-, JWTs;
//  - the password of scheme://user:password@host (which may hold '@').
// Unset values (None, null, "") are kept. Idempotent. Returns true when it
// changed `text`.
bool redact_secrets(std::string& text);

// A command line with its secrets hidden, for echoing it: the argument after
// a flag whose name says key, token, secret or password ("--api-key", "sk-..."
// -> "--api-key", "<redacted>"), "--api-key=..." and every argument's own
// secrets (as redact_secrets).
std::vector<std::string> redact_argv(std::vector<std::string> argv);

// `text` with every character a terminal, a CI log or a code-review page
// would act on instead of showing written visibly: C0 controls and DEL as
// \xNN (except the ASCII characters in `keep`), C1 controls (U+0080-U+009F,
// U+009B is CSI), bidi controls (U+202A-U+202E, U+2066-U+2069, U+200E,
// U+200F, U+061C), zero-width characters (U+200B-U+200D, U+2060-U+2064,
// U+FEFF) and U+2028/U+2029 as \uNNNN, bytes that are not UTF-8 as \xNN.
std::string escape_control_characters(std::string_view text, std::string_view keep = "\t");

// True for the code points escape_control_characters writes as \uNNNN.
bool is_invisible_control_character(std::uint32_t code_point) noexcept;

// Splits a byte stream into lines without ever holding more than one line
// (capped at max_line_bytes) in memory. Accepts '\n' and "\r\n" endings.
class LineSplitter {
 public:
  // The line has no terminator; `truncated` is true when bytes beyond the cap
  // were dropped. The view is valid only during the call.
  using LineCallback = std::function<void(std::string_view line, bool truncated)>;

  static constexpr std::size_t kDefaultMaxLineBytes = 64 * 1024;

  explicit LineSplitter(std::size_t max_line_bytes = kDefaultMaxLineBytes);

  // Feeds a chunk of bytes; calls on_line for every line completed by it.
  void feed(std::string_view bytes, const LineCallback& on_line);

  // Emits the last line if the stream did not end with a newline.
  void finish(const LineCallback& on_line);

  // True when a line has begun but not ended.
  bool has_pending() const noexcept { return has_pending_; }

 private:
  std::size_t max_line_bytes_;
  std::string pending_;
  bool pending_truncated_ = false;
  bool has_pending_ = false;
};

}  // namespace logrx
