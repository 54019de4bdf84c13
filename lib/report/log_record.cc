// SPDX-License-Identifier: MIT
#include "logrx/log_record.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "logrx/analyzer.h"
#include "logrx/output.h"

namespace logrx {
namespace {

std::string json_string(const std::string& text) {
  // Host and stream names come from the system and the command line, not
  // from the log, and may not be valid UTF-8.
  return escape_json_controls(nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

std::string format_rfc3339(double unix_seconds) {
  if (!std::isfinite(unix_seconds) || unix_seconds < 0) unix_seconds = 0;
  double whole = std::floor(unix_seconds);
  auto millis = static_cast<int>(std::lround((unix_seconds - whole) * 1000));
  auto seconds = static_cast<std::time_t>(whole);
  if (millis >= 1000) {
    millis -= 1000;
    ++seconds;
  }
  std::tm tm{};
  if (::gmtime_r(&seconds, &tm) == nullptr) return "1970-01-01T00:00:00.000Z";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buffer;
}

std::string finding_to_log_record(const Finding& finding, const LogRecordContext& context) {
  // Extended by splicing, not by re-parsing: the finding's own JSON keeps
  // exactly the escaping the JSON printer gave it.
  std::string out = finding_to_json(finding, -1);
  if (out.empty() || out.back() != '}') return out;
  out.pop_back();
  out += ",\"time\":\"" + format_rfc3339(context.observed_seconds) + "\"";
  if (!finding.timestamp_iso.empty() || !finding.timestamp.empty()) {
    if (auto seconds = parse_iso8601(finding.timestamp_iso.empty() ? finding.timestamp : finding.timestamp_iso))
      out += ",\"log_time\":\"" + format_rfc3339(static_cast<double>(*seconds)) + "\"";
  }
  out += ",\"host\":" + json_string(context.host);
  out += ",\"stream\":" + json_string(context.stream);
  out += '}';
  return out;
}

}  // namespace logrx
