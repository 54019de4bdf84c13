// SPDX-License-Identifier: MIT
// Findings and reports: what the analyzer concluded about a log.
//
// Plain value types; safe to copy and to move between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "logrx/types.h"

namespace logrx {

// A concrete fix: a server flag (with or without a value) or an environment
// variable with a value.
struct RemediationItem {
  enum class Kind { Flag, Env };
  Kind kind = Kind::Flag;
  std::string name;
  std::optional<std::string> value;
  std::string why;
  bool alternative = false;
  std::string rule_id;  // the rule that prescribed it
};

struct EvidenceLine {
  std::uint64_t line = 0;
  std::string text;
};

struct Finding {
  std::string rule_id;
  std::string title;
  std::string explanation;
  Category category = Category::Other;
  Severity severity = Severity::Info;
  std::string file;          // the stream name given to the analyzer
  std::uint64_t line = 0;    // 1-based line that matched
  std::uint64_t end_line = 0;
  int run = 1;
  bool stale = false;
  std::string server;        // "sglang", "vllm", "unknown", ...
  std::string message;       // the log message that matched
  std::string level;         // log level printed on the line, "" when none
  std::string process;       // rank/process tag of the line, "" when none
  std::string timestamp;     // as printed, "" when none
  std::map<std::string, std::string> captures;
  std::vector<RemediationItem> remediation;
  std::vector<std::string> references;
  std::vector<EvidenceLine> evidence;
};

struct Summary {
  std::uint64_t lines = 0;
  std::size_t findings = 0;            // every finding, including ones not stored
  std::size_t findings_dropped = 0;    // not stored because of AnalyzerOptions::max_findings
  std::optional<Severity> worst_severity;
  std::map<std::string, std::size_t> by_category;
  std::map<std::string, std::size_t> by_severity;
  std::size_t truncated_lines = 0;
};

struct Report {
  std::vector<Finding> findings;             // in line order (then rule id)
  std::vector<RemediationItem> remediation;  // merged, de-duplicated, latest run
  Summary summary;
};

// Combines the reports of several streams (several files) into one: findings
// concatenated in the given order, summaries added, remediation re-merged.
Report merge_reports(std::vector<Report> reports);

// The merged remediation of a set of findings: primary items of non-stale
// findings, one per flag or variable. When two findings prescribe different
// values for the same flag, the more severe finding wins, then the later line.
std::vector<RemediationItem> merge_remediation(const std::vector<Finding>& findings);

}  // namespace logrx
