// SPDX-License-Identifier: MIT
// Log-shipper envelopes (see envelope.h). Hand-written scanners, no regular
// expressions: with an envelope this runs on every line. JSON lines are read
// by a tolerant scanner rather than a full parser so that a value with
// invalid UTF-8 or a line cut at the length cap still yields its text.
#include "parse/envelope.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>

#include "util/text.h"

namespace logrx::detail {
namespace {

constexpr std::array<std::string_view, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

bool valid_time(int month, int day, int hour, int minute, int second) {
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour >= 0 && hour <= 23 &&
         minute >= 0 && minute <= 59 && second >= 0 && second <= 60;
}

// Digits after a '.': the fraction of a second, as milliseconds. Returns the
// index after them.
std::size_t take_fraction(std::string_view text, std::size_t pos, int& ms) {
  ms = 0;
  if (pos >= text.size() || text[pos] != '.') return pos;
  std::size_t end = pos + 1;
  int count = 0;
  while (end < text.size() && is_digit(text[end])) {
    if (count < 3) ms = ms * 10 + (text[end] - '0');
    ++count;
    ++end;
  }
  if (count == 0) return pos;
  for (int k = count; k < 3; ++k) ms *= 10;
  return end;
}

// RFC 3339 at text[0]: "2026-05-23T07:40:41[.frac](Z|+00:00|+0000)". The
// zone is required (shippers always print one). Returns the length, 0 when absent.
std::size_t parse_rfc3339_zoned(std::string_view text, Timestamp& ts) {
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' ||
      text[13] != ':' || text[16] != ':')
    return 0;
  int year = parse_fixed_digits(text, 0, 4);
  int month = parse_fixed_digits(text, 5, 2);
  int day = parse_fixed_digits(text, 8, 2);
  int hour = parse_fixed_digits(text, 11, 2);
  int minute = parse_fixed_digits(text, 14, 2);
  int second = parse_fixed_digits(text, 17, 2);
  if (year < 0 || !valid_time(month, day, hour, minute, second)) return 0;
  int ms = 0;
  std::size_t end = take_fraction(text, 19, ms);
  if (end < text.size() && text[end] == 'Z') {
    ++end;
  } else if (end + 5 <= text.size() && (text[end] == '+' || text[end] == '-') &&
             parse_fixed_digits(text, end + 1, 2) >= 0) {
    if (end + 6 <= text.size() && text[end + 3] == ':' && parse_fixed_digits(text, end + 4, 2) >= 0)
      end += 6;
    else if (parse_fixed_digits(text, end + 3, 2) >= 0)
      end += 5;
    else
      return 0;
  } else {
    return 0;
  }
  ts = Timestamp{year, month, day, hour, minute, second, ms};
  return end;
}

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
         c == '-' || c == '.' || c == '@' || c == '/' || c == '+';
}

// "ollama[8017]: " at the start of a line: a journal entry without the time
// and host columns (a paste that kept only the program). Only with the pid:
// "name: message" is what many programs' own lines look like. Sets ident;
// returns the index of the message, 0 when absent.
std::size_t parse_bare_ident(std::string_view text, std::string_view& ident) {
  if (text.empty() || !((text[0] >= 'a' && text[0] <= 'z') || (text[0] >= 'A' && text[0] <= 'Z'))) return 0;
  std::size_t i = 0;
  while (i < text.size() && i < 64 && is_ident_char(text[i]) && text[i] != '/') ++i;
  if (i >= text.size() || text[i] != '[') return 0;
  std::size_t close = i + 1;
  while (close < text.size() && close - i <= 10 && is_digit(text[close])) ++close;
  if (close == i + 1 || close + 1 >= text.size() || text[close] != ']' || text[close + 1] != ':') return 0;
  ident = text.substr(0, i);
  std::size_t body = close + 2;
  if (body == text.size()) return body;
  return text[body] == ' ' ? body + 1 : 0;
}

// "stdout F " / "stderr P " after a CRI timestamp. Returns the index of the
// message, 0 when absent.
std::size_t parse_cri_tags(std::string_view text, std::size_t pos, bool& partial) {
  if (pos >= text.size() || text[pos] != ' ') return 0;
  std::string_view rest = text.substr(pos + 1);
  if (!starts_with(rest, "stdout ") && !starts_with(rest, "stderr ")) return 0;
  if (rest.size() < 8 || (rest[7] != 'F' && rest[7] != 'P')) return 0;
  partial = rest[7] == 'P';
  if (rest.size() == 8) return text.size();
  if (rest[8] != ' ') return 0;
  return pos + 1 + 9;
}

// kubectl --prefix: "[pod/NAME/CONTAINER] ". Returns the index after it and
// the name inside the brackets, 0 when absent.
std::size_t parse_kubectl_prefix(std::string_view text, std::string_view& name) {
  if (!starts_with(text, "[pod/")) return 0;
  std::size_t close = text.find("] ");
  std::size_t bracket_end = close;
  if (close == std::string_view::npos) {
    if (text.back() != ']') return 0;
    bracket_end = text.size() - 1;
  }
  if (bracket_end > 300) return 0;
  std::string_view inside = text.substr(1, bracket_end - 1);
  std::size_t slashes = 0;
  for (char c : inside) {
    if (c == '/') ++slashes;
    else if (!is_ident_char(c)) return 0;
  }
  if (slashes != 2) return 0;
  name = inside;
  return close == std::string_view::npos ? text.size() : close + 2;
}

// A line that starts like a server's own RFC 3339 header (TGI's tracing
// output: "2024-05-10T12:00:00.123Z  INFO text_generation_launcher: ..."),
// not like a timestamp a shipper put in front.
// vLLM's "INFO 05-23 ..." behind a shipper's timestamp is not one: a date
// follows its level.
bool looks_like_own_header(std::string_view rest) {
  while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  for (std::string_view level : {"TRACE ", "DEBUG ", "INFO ", "WARN ", "ERROR "}) {
    if (!starts_with(rest, level)) continue;
    std::size_t pos = level.size();
    while (pos < rest.size() && rest[pos] == ' ') ++pos;
    return pos < rest.size() && !is_digit(rest[pos]);
  }
  return false;
}

// Go's RFC3339Nano (kubectl, Docker, containerd) prints up to nine digits of
// a second; servers' own headers at most six.
bool nanosecond_time(std::string_view stamp) {
  std::size_t dot = stamp.find('.');
  if (dot == std::string_view::npos) return false;
  std::size_t digits = 0;
  while (dot + 1 + digits < stamp.size() && is_digit(stamp[dot + 1 + digits])) ++digits;
  return digits > 6;
}

// ---- A small, tolerant JSON object scanner ---------------------------------

void skip_space(std::string_view text, std::size_t& pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r')) ++pos;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex4(std::string_view text, std::size_t pos) {
  if (pos + 4 > text.size()) return -1;
  int value = 0;
  for (std::size_t i = pos; i < pos + 4; ++i) {
    char c = text[i];
    int digit = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                      : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// The string starting after its opening quote at text[pos]; appends its
// unescaped value (at most `cap` bytes) to out when out is given. Returns the
// index after the closing quote, text.size() when the string is unterminated
// (a line cut at the length cap).
std::size_t scan_string(std::string_view text, std::size_t pos, std::string* out, std::size_t cap) {
  while (pos < text.size()) {
    char c = text[pos];
    if (c == '"') return pos + 1;
    if (c != '\\') {
      std::size_t run = pos;
      while (run < text.size() && text[run] != '"' && text[run] != '\\') ++run;
      if (out != nullptr && out->size() < cap)
        out->append(text.substr(pos, std::min(run - pos, cap - out->size())));
      pos = run;
      continue;
    }
    if (pos + 1 >= text.size()) return text.size();
    char e = text[pos + 1];
    pos += 2;
    if (out == nullptr || out->size() >= cap) {
      if (e == 'u') pos = std::min(text.size(), pos + 4);
      continue;
    }
    switch (e) {
      case 'n': *out += '\n'; break;
      case 't': *out += '\t'; break;
      case 'r': *out += '\r'; break;
      case 'b': *out += '\b'; break;
      case 'f': *out += '\f'; break;
      case 'u': {
        int cp = hex4(text, pos);
        if (cp < 0) {
          *out += "\xEF\xBF\xBD";
          break;
        }
        pos += 4;
        auto code = static_cast<std::uint32_t>(cp);
        if (code >= 0xD800 && code <= 0xDBFF && pos + 6 <= text.size() && text[pos] == '\\' &&
            text[pos + 1] == 'u') {
          int low = hex4(text, pos + 2);
          if (low >= 0xDC00 && low <= 0xDFFF) {
            code = 0x10000 + ((code - 0xD800) << 10) + (static_cast<std::uint32_t>(low) - 0xDC00);
            pos += 6;
          }
        }
        if (code >= 0xD800 && code <= 0xDFFF) code = 0xFFFD;
        append_utf8(*out, code);
        break;
      }
      default: *out += e; break;  // \" \\ \/
    }
  }
  return text.size();
}

// Skips one JSON value of any kind at text[pos]. Returns the index after it.
std::size_t skip_value(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return pos;
  if (text[pos] == '"') return scan_string(text, pos + 1, nullptr, 0);
  if (text[pos] == '{' || text[pos] == '[') {
    int depth = 0;
    while (pos < text.size()) {
      char c = text[pos];
      if (c == '"') {
        pos = scan_string(text, pos + 1, nullptr, 0);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return pos + 1;
      }
      ++pos;
    }
    return pos;
  }
  while (pos < text.size() && text[pos] != ',' && text[pos] != '}') ++pos;
  return pos;
}

// Calls visit(key, value_pos) for every member of the object in `text`
// (value_pos is the index of the value's first character). The visitor
// returns the index after the value, or 0 to have it skipped. Returns false
// when the text is not an object.
template <typename Visit>
bool scan_object(std::string_view text, Visit&& visit) {
  std::size_t pos = 0;
  skip_space(text, pos);
  if (pos >= text.size() || text[pos] != '{') return false;
  ++pos;
  std::string key;
  while (true) {
    skip_space(text, pos);
    if (pos >= text.size() || text[pos] == '}') return true;
    if (text[pos] != '"') return false;
    key.clear();
    pos = scan_string(text, pos + 1, &key, 256);
    skip_space(text, pos);
    if (pos >= text.size() || text[pos] != ':') return pos >= text.size();
    ++pos;
    skip_space(text, pos);
    std::size_t after = visit(std::string_view(key), pos);
    pos = after > 0 ? after : skip_value(text, pos);
    skip_space(text, pos);
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
}

// A JSON value that is a string (unescaped), a number, or an array of byte
// values (journald's form for a field that is not UTF-8). Returns the index
// after it, 0 when it is none of those.
std::size_t read_text_value(std::string_view text, std::size_t pos, std::string& out,
                            std::size_t cap) {
  out.clear();
  if (pos >= text.size()) return 0;
  if (text[pos] == '"') return scan_string(text, pos + 1, &out, cap);
  if (text[pos] == '[') {
    std::size_t i = pos + 1;
    while (i < text.size() && text[i] != ']') {
      skip_space(text, i);
      int value = 0;
      std::size_t digits = 0;
      while (i < text.size() && is_digit(text[i])) {
        if (value < 256) value = value * 10 + (text[i] - '0');
        ++i;
        ++digits;
      }
      if (digits == 0) return 0;
      if (out.size() < cap) out += static_cast<char>(value & 0xFF);
      skip_space(text, i);
      if (i < text.size() && text[i] == ',') ++i;
    }
    return i < text.size() ? i + 1 : i;
  }
  if (is_digit(text[pos])) {
    std::size_t i = pos;
    while (i < text.size() && is_digit(text[i])) ++i;
    out.assign(text.substr(pos, i - pos));
    return i;
  }
  return 0;
}

// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
void civil_from_days(std::int64_t z, int& y, int& m, int& d) {
  z += 719468;
  std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  auto doe = static_cast<unsigned>(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t year = static_cast<std::int64_t>(yoe) + era * 400;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = static_cast<int>(year + (m <= 2 ? 1 : 0));
}

bool is_journal_header(std::string_view line) {
  // journalctl -x explains some entries in lines of its own ("-- Subject: ...").
  return starts_with(line, "-- ") &&
         (ends_with(line, " --") || starts_with(line, "-- Boot ") || starts_with(line, "-- Reboot --") ||
          starts_with(line, "-- Subject: ") || starts_with(line, "-- Defined-By: ") ||
          starts_with(line, "-- Support: ") || starts_with(line, "-- Documentation: "));
}

// What a paste puts around a log before its first line (a Markdown code
// fence, GitHub's collapsible section): no line of the log, so the envelope
// is decided from the line after it.
bool is_paste_decoration(std::string_view line) {
  return starts_with(line, "```") || starts_with(line, "~~~") || starts_with(line, "<details") ||
         starts_with(line, "</details") || starts_with(line, "<summary");
}

// A line quoted in Markdown, without its "> " (or the ">" of an empty one).
std::string_view unquoted(std::string_view line) {
  if (line == ">") return {};
  return starts_with(line, "> ") ? line.substr(2) : line;
}

bool is_export_field(std::string_view line) {
  std::size_t eq = line.find('=');
  std::string_view name = line.substr(0, eq);
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || is_digit(c) || c == '_')) return false;
  return true;
}

}  // namespace

// "May 23 07:40:41" or "May  3 07:40:41.123456" (RFC 3164, journalctl short
// and short-precise). Returns the length, 0 when absent.
namespace {

// The month that starts a BSD time and the index after it and its space:
// English in any case ("Oct", "oct" where the locale lowers it) or a CJK
// locale's number and 月 ("2月 25 17:49:00" from journalctl under zh_CN).
std::size_t bsd_month(std::string_view text, int& month) {
  month = 0;
  if (text.size() > 3 && text[3] == ' ') {
    char name[3];
    for (std::size_t i = 0; i < 3; ++i)
      name[i] = static_cast<char>(i == 0 ? std::toupper(static_cast<unsigned char>(text[i]))
                                         : std::tolower(static_cast<unsigned char>(text[i])));
    for (std::size_t m = 0; m < kMonths.size(); ++m)
      if (std::string_view(name, 3) == kMonths[m]) month = static_cast<int>(m) + 1;
    return month == 0 ? 0 : 4;
  }
  constexpr std::string_view kMonthSign = "\xE6\x9C\x88";  // 月
  std::size_t digits = 0;
  while (digits < text.size() && digits < 2 && is_digit(text[digits])) month = month * 10 + (text[digits++] - '0');
  if (digits == 0 || month < 1 || month > 12 || text.compare(digits, kMonthSign.size(), kMonthSign) != 0 ||
      digits + kMonthSign.size() >= text.size() || text[digits + kMonthSign.size()] != ' ') {
    month = 0;
    return 0;
  }
  return digits + kMonthSign.size() + 1;
}

}  // namespace

std::size_t parse_bsd_time(std::string_view text, Timestamp& ts) {
  int month = 0;
  std::size_t pos = bsd_month(text, month);
  if (pos == 0 || text.size() < pos + 11) return 0;
  if (text[pos] == ' ') ++pos;
  int day = 0;
  std::size_t digits = 0;
  while (pos < text.size() && is_digit(text[pos]) && digits < 2) {
    day = day * 10 + (text[pos++] - '0');
    ++digits;
  }
  if (digits == 0 || pos + 9 > text.size() || text[pos] != ' ' || text[pos + 3] != ':' ||
      text[pos + 6] != ':')
    return 0;
  int hour = parse_fixed_digits(text, pos + 1, 2);
  int minute = parse_fixed_digits(text, pos + 4, 2);
  int second = parse_fixed_digits(text, pos + 7, 2);
  if (!valid_time(month, day, hour, minute, second)) return 0;
  int ms = 0;
  std::size_t end = take_fraction(text, pos + 9, ms);
  ts = Timestamp{0, month, day, hour, minute, second, ms};
  return end;
}

// After the time: " host ident[pid]: message" or " host ident: message"
// (journald and RFC 3164). Sets ident and returns the index of the message
// (text.size() when the line ends after the colon), 0 when absent.
std::size_t parse_host_ident(std::string_view text, std::size_t pos, std::string_view& ident) {
  if (pos >= text.size() || text[pos] != ' ') return 0;
  std::size_t host = pos + 1;
  std::size_t host_end = text.find(' ', host);
  if (host_end == std::string_view::npos || host_end == host || host_end - host > 255) return 0;
  std::size_t start = host_end + 1;
  std::size_t i = start;
  while (i < text.size() && i - start < 128 && is_ident_char(text[i])) ++i;
  if (i == start) return 0;
  ident = text.substr(start, i - start);
  if (i < text.size() && text[i] == '[') {
    std::size_t close = i + 1;
    while (close < text.size() && is_digit(text[close])) ++close;
    if (close == i + 1 || close >= text.size() || text[close] != ']') return 0;
    i = close + 1;
  }
  if (i >= text.size() || text[i] != ':') return 0;
  ++i;
  if (i == text.size()) return i;
  if (text[i] != ' ') return 0;
  return i + 1;
}


std::string_view to_string(EnvelopeKind kind) {
  switch (kind) {
    case EnvelopeKind::Undecided: return "undecided";
    case EnvelopeKind::None: return "none";
    case EnvelopeKind::CRI: return "cri";
    case EnvelopeKind::DockerJson: return "docker-json";
    case EnvelopeKind::KubectlTimestamps: return "kubectl-timestamps";
    case EnvelopeKind::KubectlPrefix: return "kubectl-prefix";
    case EnvelopeKind::Journal: return "journal";
    case EnvelopeKind::JournalJson: return "journal-json";
    case EnvelopeKind::JournalExport: return "journal-export";
    case EnvelopeKind::Syslog: return "syslog";
    case EnvelopeKind::JsonRecord: return "json-record";
    case EnvelopeKind::JournalIdent: return "journal-ident";
  }
  return "none";
}

std::string source_from_path(std::string_view path) {
  std::size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::string_view dir = slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
  if (ends_with(dir, "/var/log/containers") || dir == "/var/log/containers") {
    // <pod>_<namespace>_<container>-<64 hex id>.log
    if (!ends_with(base, ".log")) return {};
    std::string_view stem = base.substr(0, base.size() - 4);
    std::size_t first = stem.find('_');
    std::size_t second = first == std::string_view::npos ? first : stem.find('_', first + 1);
    std::size_t dash = stem.rfind('-');
    if (second == std::string_view::npos || dash == std::string_view::npos || dash < second) return {};
    return std::string(stem.substr(first + 1, second - first - 1)) + "/" +
           std::string(stem.substr(0, first)) + "/" +
           std::string(stem.substr(second + 1, dash - second - 1));
  }
  std::size_t pods = path.find("/var/log/pods/");
  if (pods != std::string_view::npos) {
    // <namespace>_<pod>_<uid>/<container>/N.log
    std::string_view rest = path.substr(pods + 14);
    std::size_t s1 = rest.find('/');
    if (s1 == std::string_view::npos) return {};
    std::string_view pod_dir = rest.substr(0, s1);
    std::size_t s2 = rest.find('/', s1 + 1);
    if (s2 == std::string_view::npos) return {};
    std::string_view container = rest.substr(s1 + 1, s2 - s1 - 1);
    std::size_t first = pod_dir.find('_');
    std::size_t second = first == std::string_view::npos ? first : pod_dir.find('_', first + 1);
    if (second == std::string_view::npos) return {};
    return std::string(pod_dir.substr(0, first)) + "/" +
           std::string(pod_dir.substr(first + 1, second - first - 1)) + "/" + std::string(container);
  }
  if (path.find("/containers/") != std::string_view::npos && ends_with(base, "-json.log") &&
      base.size() > 9 + 12)
    return std::string(base.substr(0, 12));
  return {};
}

namespace {

// The members a log store's JSON export keeps a line in: Loki's (logcli
// --output=jsonl, Grafana's "download logs"), Google Cloud Logging's and
// CloudWatch Logs Insights'. Not "message" or "msg": servers' own
// structured lines use those.
bool is_record_text_key(std::string_view key) {
  return key == "line" || key == "textPayload" || key == "@message";
}

bool is_record_time_key(std::string_view key) {
  return key == "timestamp" || key == "ts" || key == "@timestamp" || key == "time" || key == "receiveTimestamp";
}

}  // namespace

EnvelopeKind EnvelopeDecoder::detect(std::string_view line) {
  if (line.empty()) return EnvelopeKind::None;
  char first = line[0];
  if (first == '{') {
    bool docker = false;
    bool journal = false;
    bool record = false;
    scan_object(line, [&](std::string_view key, std::size_t pos) -> std::size_t {
      if (key == "log") docker = true;
      if (key == "MESSAGE" || key == "__CURSOR" || key == "__REALTIME_TIMESTAMP") journal = true;
      // A string, not the number llama.cpp's own JSON lines give "line".
      if (is_record_text_key(key) && pos < line.size() && line[pos] == '"') record = true;
      return 0;
    });
    if (journal) return EnvelopeKind::JournalJson;
    if (docker) return EnvelopeKind::DockerJson;
    if (record) return EnvelopeKind::JsonRecord;
    return EnvelopeKind::None;
  }
  if (first == '_' && (starts_with(line, "__CURSOR=") || starts_with(line, "__REALTIME_TIMESTAMP=")))
    return EnvelopeKind::JournalExport;
  std::string_view name;
  if (parse_kubectl_prefix(line, name) > 0) return EnvelopeKind::KubectlPrefix;
  if (first == '<') {
    std::size_t close = line.find('>');
    if (close == std::string_view::npos || close < 2 || close > 4) return EnvelopeKind::None;
    for (std::size_t i = 1; i < close; ++i)
      if (!is_digit(line[i])) return EnvelopeKind::None;
    std::string_view rest = line.substr(close + 1);
    Timestamp ts;
    std::string_view ident;
    if (starts_with(rest, "1 ")) return EnvelopeKind::Syslog;
    std::size_t end = parse_bsd_time(rest, ts);
    if (end > 0 && parse_host_ident(rest, end, ident) > 0) return EnvelopeKind::Syslog;
    return EnvelopeKind::None;
  }
  Timestamp ts;
  std::string_view ident;
  if (is_digit(first)) {
    std::size_t end = parse_rfc3339_zoned(line, ts);
    if (end == 0) {
      // A CJK locale's month ("2月 25 17:49:00 host ident[pid]: ").
      end = parse_bsd_time(line, ts);
      return end > 0 && parse_host_ident(line, end, ident) > 0 ? EnvelopeKind::Journal : EnvelopeKind::None;
    }
    if (end >= line.size() || line[end] != ' ') return EnvelopeKind::None;
    bool partial = false;
    if (parse_cri_tags(line, end, partial) > 0) return EnvelopeKind::CRI;
    if (!nanosecond_time(line.substr(0, end)) && looks_like_own_header(line.substr(end)))
      return EnvelopeKind::None;
    // journalctl's short-iso prints a numeric zone, kubectl and Docker a "Z".
    if (line[end - 1] != 'Z' && parse_host_ident(line, end, ident) > 0) return EnvelopeKind::Journal;
    return EnvelopeKind::KubectlTimestamps;
  }
  std::size_t end = parse_bsd_time(line, ts);
  if (end > 0 && parse_host_ident(line, end, ident) > 0) return EnvelopeKind::Journal;
  if (parse_bare_ident(line, ident) > 0) return EnvelopeKind::JournalIdent;
  return EnvelopeKind::None;
}

EnvelopeDecoder::EnvelopeDecoder(std::size_t max_line_bytes, std::string_view stream_name)
    : max_line_bytes_(max_line_bytes == 0 ? 1 : max_line_bytes),
      path_source_(source_from_path(stream_name)) {}

void EnvelopeDecoder::emit(std::string_view text, bool truncated, const Sink& sink) {
  if (meta_.source.empty() && !path_source_.empty()) meta_.source = path_source_;
  sink(text, truncated, &meta_);
}

// A message may hold several lines when a shipper joined them; each is a
// server line, and only the last can have been cut.
void EnvelopeDecoder::emit_lines(std::string_view text, bool truncated, const Sink& sink) {
  while (true) {
    std::size_t newline = text.find('\n');
    emit(text.substr(0, newline), truncated && newline == std::string_view::npos, sink);
    if (newline == std::string_view::npos) return;
    text.remove_prefix(newline + 1);
  }
}

// A JSON record's message (in text_), cut to the line cap, its own final
// newline dropped, each of its lines emitted.
void EnvelopeDecoder::emit_message(bool truncated, const Sink& sink) {
  bool cut = truncated || text_.size() > max_line_bytes_;
  if (text_.size() > max_line_bytes_) text_.resize(max_line_bytes_);
  std::string_view text = text_;
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  emit_lines(text, cut, sink);
}

void EnvelopeDecoder::set_timestamp(const Timestamp& ts, std::string_view text) {
  meta_.has_timestamp = true;
  meta_.timestamp = ts;
  ts_text_.assign(text);
  meta_.timestamp_text = ts_text_;
}

void EnvelopeDecoder::set_epoch_micros(std::string_view digits) {
  if (digits.empty() || digits.size() > 18) return;
  std::int64_t micros = 0;
  for (char c : digits) {
    if (!is_digit(c)) return;
    micros = micros * 10 + (c - '0');
  }
  std::int64_t seconds = micros / 1000000;
  int y = 0;
  int m = 0;
  int d = 0;
  civil_from_days(seconds / 86400, y, m, d);
  std::int64_t rest = seconds % 86400;
  Timestamp ts{y, m, d, static_cast<int>(rest / 3600), static_cast<int>(rest / 60 % 60),
               static_cast<int>(rest % 60), static_cast<int>(micros / 1000 % 1000)};
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", y, m, d, ts.hour,
                ts.minute, ts.second, static_cast<int>(micros % 1000000));
  set_timestamp(ts, buffer);
}

void EnvelopeDecoder::flush_partial(const Sink& sink) {
  if (!partial_open_) return;
  partial_open_ = false;
  meta_ = partial_meta_;
  ts_text_ = partial_ts_text_;
  source_ = partial_source_;
  meta_.timestamp_text = ts_text_;
  meta_.source = source_;
  text_.swap(partial_);
  partial_.clear();
  emit(text_, partial_truncated_, sink);
  partial_truncated_ = false;
}

void EnvelopeDecoder::flush_export(const Sink& sink) {
  if (export_has_message_) {
    source_ = !export_unit_.empty() ? export_unit_ : export_ident_;
    meta_.source = source_;
    // A multi-line MESSAGE is several server lines.
    std::string_view message = export_message_;
    bool cut = export_truncated_;
    while (true) {
      std::size_t newline = message.find('\n');
      emit(message.substr(0, newline), cut && newline == std::string_view::npos, sink);
      if (newline == std::string_view::npos) break;
      message.remove_prefix(newline + 1);
      if (message.empty()) break;
    }
  }
  export_message_.clear();
  export_has_message_ = false;
  export_truncated_ = false;
  export_unit_.clear();
  export_ident_.clear();
  meta_ = EnvelopeMeta{};
  ts_text_.clear();
}

void EnvelopeDecoder::line(std::string_view raw, bool truncated, const Sink& sink) {
  if (kind_ == EnvelopeKind::None) {
    sink(raw, truncated, nullptr);
    return;
  }
  if (quoted_ && (raw == ">" || starts_with(raw, "> "))) raw = unquoted(raw);
  if (kind_ == EnvelopeKind::Undecided) {
    if (is_paste_decoration(unquoted(raw)) && decorations_ < 8) {
      ++decorations_;
      sink(raw, truncated, nullptr);
      return;
    }
    // A log quoted in Markdown: its envelope is the quoted text's.
    if (!quoted_ && starts_with(raw, "> ")) {
      std::string_view inner = unquoted(raw);
      if (is_journal_header(inner) || detect(inner) != EnvelopeKind::None) {
        quoted_ = true;
        raw = inner;
      }
    }
    if (is_journal_header(raw) && held_count_ < 8) {
      // "-- Logs begin at ... --": journalctl's own line, before its entries.
      held_.append(raw).push_back('\n');
      ++held_count_;
      return;
    }
    if (raw.empty() && held_count_ == 0) {
      sink(raw, truncated, nullptr);
      return;
    }
    kind_ = detect(raw);
    if (kind_ == EnvelopeKind::KubectlPrefix) {
      // --prefix with --timestamps: the first line tells whether the time
      // after the prefix is kubectl's or the server's own.
      std::string_view name;
      std::string_view rest = raw.substr(parse_kubectl_prefix(raw, name));
      Timestamp ts;
      std::size_t end = parse_rfc3339_zoned(rest, ts);
      prefix_timestamps_ = end > 0 && end < rest.size() && rest[end] == ' ' &&
                           (nanosecond_time(rest.substr(0, end)) || !looks_like_own_header(rest.substr(end)));
    }
    if (kind_ != EnvelopeKind::Journal && held_count_ > 0) {
      std::string_view held = held_;
      while (!held.empty()) {
        std::size_t newline = held.find('\n');
        sink(held.substr(0, newline), false, nullptr);
        held.remove_prefix(newline + 1);
      }
    }
    held_.clear();
    held_.shrink_to_fit();
    held_count_ = 0;
    if (kind_ == EnvelopeKind::None) {
      sink(raw, truncated, nullptr);
      return;
    }
  }
  if (!unwrap(raw, truncated, sink)) {
    // A line without the stream's envelope (a concatenated plain log, an
    // operator's note) is passed on as it is.
    flush_partial(sink);
    sink(raw, truncated, nullptr);
  }
}

void EnvelopeDecoder::finish(const Sink& sink) {
  if (kind_ == EnvelopeKind::JournalExport) flush_export(sink);
  flush_partial(sink);
  if (held_count_ > 0) {
    std::string_view held = held_;
    while (!held.empty()) {
      std::size_t newline = held.find('\n');
      if (kind_ != EnvelopeKind::Journal) sink(held.substr(0, newline), false, nullptr);
      held.remove_prefix(newline + 1);
    }
    held_.clear();
    held_count_ = 0;
  }
}

bool EnvelopeDecoder::unwrap(std::string_view raw, bool truncated, const Sink& sink) {
  // An export entry's fields arrive on several lines; every other envelope
  // says everything about a line on that line.
  if (kind_ != EnvelopeKind::JournalExport) {
    meta_ = EnvelopeMeta{};
    source_.clear();
  }
  Timestamp ts;
  switch (kind_) {
    case EnvelopeKind::CRI: {
      std::size_t end = parse_rfc3339_zoned(raw, ts);
      if (end == 0) return false;
      bool partial = false;
      std::size_t body = parse_cri_tags(raw, end, partial);
      if (body == 0) return false;
      std::string_view text = raw.substr(body);
      if (!partial_open_) {
        // The line's time is when its first piece was written.
        set_timestamp(ts, raw.substr(0, end));
        source_.clear();
      }
      if (!partial && !partial_open_) {
        emit(text, truncated, sink);
        return true;
      }
      if (!partial_open_) {
        partial_open_ = true;
        partial_meta_ = meta_;
        partial_ts_text_ = ts_text_;
        partial_source_.clear();
      }
      std::size_t room = max_line_bytes_ - std::min(max_line_bytes_, partial_.size());
      if (text.size() > room) partial_truncated_ = true;
      partial_.append(text.substr(0, room));
      if (truncated) partial_truncated_ = true;
      if (!partial) flush_partial(sink);
      return true;
    }
    case EnvelopeKind::DockerJson: {
      bool has_log = false;
      std::size_t cap = max_line_bytes_ + 1;
      bool is_object = scan_object(raw, [&](std::string_view key, std::size_t pos) -> std::size_t {
        if (key == "log") {
          has_log = true;
          return read_text_value(raw, pos, text_, cap);
        }
        if (key == "time") {
          std::size_t after = read_text_value(raw, pos, ts_text_, 64);
          if (std::size_t end = parse_rfc3339_zoned(ts_text_, ts); end > 0) {
            meta_.has_timestamp = true;
            meta_.timestamp = ts;
            ts_text_.resize(end);
            meta_.timestamp_text = ts_text_;
          }
          return after;
        }
        if (key == "attrs") {
          // "attrs":{"tag":"..."} from --log-opt tag=... names the container.
          std::size_t after = skip_value(raw, pos);
          std::string_view attrs = raw.substr(pos, after - pos);
          scan_object(attrs, [&](std::string_view name, std::size_t at) -> std::size_t {
            return name == "tag" ? read_text_value(attrs, at, source_, 256) : 0;
          });
          meta_.source = source_;
          return after;
        }
        return 0;
      });
      if (!is_object || !has_log) return false;
      // A piece without a final newline continues in the next entry (Docker
      // splits lines longer than 16 KiB).
      bool complete = !text_.empty() && text_.back() == '\n';
      if (complete) text_.pop_back();
      if (!complete && !truncated && text_.size() <= max_line_bytes_) {
        if (!partial_open_) {
          partial_open_ = true;
          partial_meta_ = meta_;
          partial_ts_text_ = ts_text_;
          partial_source_ = source_;
        }
        std::size_t room = max_line_bytes_ - std::min(max_line_bytes_, partial_.size());
        if (text_.size() > room) partial_truncated_ = true;
        partial_.append(std::string_view(text_).substr(0, std::min(room, text_.size())));
        return true;
      }
      bool cut = truncated || text_.size() > max_line_bytes_;
      if (partial_open_) {
        std::size_t room = max_line_bytes_ - std::min(max_line_bytes_, partial_.size());
        if (text_.size() > room) partial_truncated_ = true;
        partial_.append(std::string_view(text_).substr(0, std::min(room, text_.size())));
        if (cut) partial_truncated_ = true;
        flush_partial(sink);
        return true;
      }
      if (text_.size() > max_line_bytes_) text_.resize(max_line_bytes_);
      emit_lines(text_, cut, sink);
      return true;
    }
    case EnvelopeKind::KubectlTimestamps:
    case EnvelopeKind::KubectlPrefix: {
      std::string_view rest = raw;
      std::string_view name;
      if (std::size_t skip = parse_kubectl_prefix(rest, name); skip > 0) {
        source_.assign(name);
        meta_.source = source_;
        rest = rest.substr(skip);
      } else if (kind_ == EnvelopeKind::KubectlPrefix) {
        return false;
      }
      if (kind_ == EnvelopeKind::KubectlTimestamps || prefix_timestamps_) {
        std::size_t end = parse_rfc3339_zoned(rest, ts);
        if (end > 0 && end < rest.size() && rest[end] == ' ') {
          set_timestamp(ts, rest.substr(0, end));
          rest = rest.substr(end + 1);
        } else if (kind_ == EnvelopeKind::KubectlTimestamps) {
          return false;
        }
      }
      emit(rest, truncated, sink);
      return true;
    }
    case EnvelopeKind::Journal:
    case EnvelopeKind::Syslog: {
      if (kind_ == EnvelopeKind::Journal && is_journal_header(raw)) return true;
      std::string_view rest = raw;
      if (kind_ == EnvelopeKind::Syslog) {
        std::size_t close = rest.find('>');
        if (rest.empty() || rest[0] != '<' || close == std::string_view::npos || close > 4)
          return false;
        rest.remove_prefix(close + 1);
        if (starts_with(rest, "1 ")) {
          // RFC 5424: VERSION TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG
          rest.remove_prefix(2);
          std::string_view fields[5];
          for (std::string_view& field : fields) {
            std::size_t space = rest.find(' ');
            field = rest.substr(0, space);
            rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
          }
          if (std::size_t end = parse_rfc3339_zoned(fields[0], ts); end > 0 && end == fields[0].size())
            set_timestamp(ts, fields[0]);
          if (fields[2] != "-") {
            source_.assign(fields[2]);
            meta_.source = source_;
          }
          // Structured data: "-" or one or more "[id key="value" ...]".
          if (starts_with(rest, "-")) {
            rest.remove_prefix(rest.size() > 1 && rest[1] == ' ' ? 2 : 1);
          } else {
            while (!rest.empty() && rest[0] == '[') {
              std::size_t i = 1;
              bool quoted = false;
              while (i < rest.size() && (quoted || rest[i] != ']')) {
                if (rest[i] == '\\') ++i;
                else if (rest[i] == '"') quoted = !quoted;
                ++i;
              }
              rest.remove_prefix(std::min(rest.size(), i + 1));
            }
            if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
          }
          if (starts_with(rest, "\xEF\xBB\xBF")) rest.remove_prefix(3);
          emit(rest, truncated, sink);
          return true;
        }
      }
      std::size_t end = 0;
      if (!rest.empty() && is_digit(rest[0]))
        end = parse_rfc3339_zoned(rest, ts);
      if (end == 0) end = parse_bsd_time(rest, ts);
      if (end == 0) return false;
      std::string_view ident;
      std::size_t body = parse_host_ident(rest, end, ident);
      if (body == 0) return false;
      set_timestamp(ts, rest.substr(0, end));
      source_.assign(ident);
      meta_.source = source_;
      emit(rest.substr(body), truncated, sink);
      return true;
    }
    case EnvelopeKind::JournalIdent: {
      std::string_view ident;
      std::size_t body = parse_bare_ident(raw, ident);
      if (body == 0) return false;
      source_.assign(ident);
      meta_.source = source_;
      emit(raw.substr(body), truncated, sink);
      return true;
    }
    case EnvelopeKind::JsonRecord: {
      bool has_text = false;
      bool has_time = false;
      std::string scratch;
      bool is_object = scan_object(raw, [&](std::string_view key, std::size_t pos) -> std::size_t {
        if (!has_text && is_record_text_key(key) && pos < raw.size() && raw[pos] == '"') {
          std::size_t after = read_text_value(raw, pos, text_, max_line_bytes_ + 1);
          has_text = after > 0;
          return after;
        }
        if (!has_time && is_record_time_key(key) && pos < raw.size() && raw[pos] == '"') {
          std::size_t after = read_text_value(raw, pos, scratch, 64);
          if (std::size_t end = parse_rfc3339_zoned(scratch, ts); end > 0) {
            has_time = true;
            set_timestamp(ts, std::string_view(scratch).substr(0, end));
          }
          return after;
        }
        return 0;
      });
      if (!is_object || !has_text) return false;
      emit_message(truncated, sink);
      return true;
    }
    case EnvelopeKind::JournalJson: {
      bool has_message = false;
      std::string unit;
      std::string ident;
      std::string scratch;
      bool is_object = scan_object(raw, [&](std::string_view key, std::size_t pos) -> std::size_t {
        if (key == "MESSAGE") {
          std::size_t after = read_text_value(raw, pos, text_, max_line_bytes_ + 1);
          has_message = after > 0;
          return after;
        }
        if (key == "__REALTIME_TIMESTAMP") {
          std::size_t after = read_text_value(raw, pos, scratch, 32);
          set_epoch_micros(scratch);
          return after;
        }
        if (key == "_SYSTEMD_UNIT") return read_text_value(raw, pos, unit, 256);
        if (key == "SYSLOG_IDENTIFIER") return read_text_value(raw, pos, ident, 256);
        return 0;
      });
      if (!is_object) return false;
      // An entry without a message (a null or absent MESSAGE) has no line.
      if (!has_message) return true;
      source_ = !unit.empty() ? unit : ident;
      meta_.source = source_;
      emit_message(truncated, sink);
      return true;
    }
    case EnvelopeKind::JournalExport: {
      if (export_binary_left_ > 0 || export_binary_header_) {
        // A binary field: "NAME\n", a 64-bit little-endian length, the
        // bytes, "\n". The length and the bytes may hold newlines, so the
        // lines are put back together here.
        std::string piece(raw);
        piece.push_back('\n');
        std::string_view bytes = piece;
        if (export_binary_header_) {
          // A length byte of 0x0a ends a physical line inside the length:
          // its bytes are gathered over as many lines as it takes.
          std::size_t want = 8 - export_length_bytes_.size();
          std::size_t have = std::min(want, bytes.size());
          export_length_bytes_.append(bytes.substr(0, have));
          bytes.remove_prefix(have);
          if (export_length_bytes_.size() < 8) return true;
          std::uint64_t length = 0;
          for (int i = 7; i >= 0; --i)
            length = (length << 8) | static_cast<unsigned char>(export_length_bytes_[static_cast<std::size_t>(i)]);
          export_length_bytes_.clear();
          export_binary_header_ = false;
          export_binary_left_ = length + 1;  // the bytes and their newline
        }
        std::size_t take = static_cast<std::size_t>(
            std::min<std::uint64_t>(export_binary_left_, bytes.size()));
        if (export_binary_is_message_) {
          std::size_t room = max_line_bytes_ - std::min(max_line_bytes_, export_message_.size());
          if (take > room) export_truncated_ = true;
          export_message_.append(bytes.substr(0, std::min(take, room)));
        }
        export_binary_left_ -= take;
        if (export_binary_left_ == 0 && export_binary_is_message_ && !export_message_.empty() &&
            export_message_.back() == '\n')
          export_message_.pop_back();
        return true;
      }
      if (raw.empty()) {
        flush_export(sink);
        return true;
      }
      if (!is_export_field(raw)) return false;
      std::size_t eq = raw.find('=');
      if (eq == std::string_view::npos) {
        export_binary_header_ = true;
        export_length_bytes_.clear();
        export_binary_is_message_ = raw == "MESSAGE";
        if (export_binary_is_message_) {
          export_has_message_ = true;
          export_message_.clear();
        }
        return true;
      }
      std::string_view name = raw.substr(0, eq);
      std::string_view value = raw.substr(eq + 1);
      if (name == "MESSAGE") {
        export_has_message_ = true;
        export_truncated_ = truncated;
        export_message_.assign(value);
      } else if (name == "__REALTIME_TIMESTAMP") {
        set_epoch_micros(value);
      } else if (name == "_SYSTEMD_UNIT") {
        export_unit_.assign(value.substr(0, 256));
      } else if (name == "SYSLOG_IDENTIFIER") {
        export_ident_.assign(value.substr(0, 256));
      }
      return true;
    }
    case EnvelopeKind::Undecided:
    case EnvelopeKind::None:
      break;
  }
  return false;
}

}  // namespace logrx::detail
