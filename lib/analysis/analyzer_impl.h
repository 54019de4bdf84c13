// SPDX-License-Identifier: MIT
// Internal pieces of the analyzer shared with the stale-output checks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "logrx/analyzer.h"
#include "logrx/line.h"
#include "rules/expression.h"

namespace logrx::detail {

// The fields every finding of `rule` shares (no message, captures or remediation).
Finding finding_base(const RuleSpec& rule, const std::string& stream, std::uint64_t line,
                     int run);

// Builds a finding from an engine rule (one the analyzer emits itself).
Finding engine_finding(const RuleSpec& rule, const std::string& stream, std::uint64_t line,
                       int run, std::string message);

// Looks for contradictions between the latest run and what the operator says
// launched it. Appends stale_output findings and marks contradicted findings
// stale. `book` supplies the engine rules' titles and explanations.
void check_stale_output(const Rulebook& book, const AnalyzerOptions& options, Report& report);

// Bytes of text a finding holds (what its caps count), roughly.
std::size_t text_bytes(const Finding& f);

// Seconds since an arbitrary epoch for a log timestamp, comparable within
// one stream (vLLM timestamps carry no year: `year` supplies it).
std::int64_t timestamp_seconds(const Timestamp& ts, int year);

// timestamp_seconds for the lines of a stream in order: consecutive lines
// share their day, so the calendar arithmetic is done once per day.
class DayClock {
 public:
  // Seconds of ts, in `year` when ts has none.
  std::int64_t seconds_in(const Timestamp& ts, int year);
  // Seconds of ts, in 2000 when it has none: what a run keeps of its last time.
  std::int64_t seconds_of(const Timestamp& ts) { return seconds_in(ts, 2000); }
  // Whether a line at `now` goes back more than kBackwardsJumpSeconds from
  // the line before it at `last` (last_seconds: seconds_of(last)).
  bool jumped_back(const Timestamp& now, const Timestamp& last, std::int64_t last_seconds);

 private:
  int year_ = -1;
  int month_ = 0;
  int day_ = 0;
  std::int64_t midnight_ = 0;
};

// The server a stream's lines name, after a line of `dialect` whose message
// is `message`, when `server` was named before it: the first dialect seen,
// except that Ollama passes llama.cpp's runner output through (Ollama wins),
// and a log without headers names its server in its tracebacks' paths.
Dialect next_server(Dialect server, Dialect dialect, std::string_view message);
// The server a journald/syslog program name or systemd unit names where its
// lines cannot ("ollama", "ollama.service": its runner's lines are llama.cpp's);
// Unknown for any other.
Dialect server_of_program(std::string_view program);

}  // namespace logrx::detail
