// SPDX-License-Identifier: MIT
// Findings as records for log shippers (Loki via Promtail/Alloy, Vector,
// Fluent Bit): `logrx watch --format jsonl` prints one per line.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "logrx/finding.h"

namespace logrx {

struct LogRecordContext {
  std::string host;            // the machine logrx runs on
  std::string stream;          // what is watched: the log file, or the journal unit
  double observed_seconds = 0;  // Unix time at which logrx reported the finding
};

// One finding as a single-line JSON object: every field of finding_to_json
// (rule, category, severity, server, ... are never renamed), then
//   "time":     RFC 3339 UTC time at which logrx reported it (always present,
//               and never goes backwards within one watch: a shipper's timestamp),
//   "log_time": the log line's own time in RFC 3339 UTC, when the line printed
//               a full date (absent otherwise),
//   "host", "stream": stable label fields.
std::string finding_to_log_record(const Finding& finding, const LogRecordContext& context);

// Unix seconds as RFC 3339 UTC with milliseconds: "2026-05-23T07:40:41.123Z".
std::string format_rfc3339(double unix_seconds);

}  // namespace logrx
