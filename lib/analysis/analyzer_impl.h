// SPDX-License-Identifier: MIT
// Internal pieces of the analyzer shared with the stale-output checks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
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

}  // namespace logrx::detail
