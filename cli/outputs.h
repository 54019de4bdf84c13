// SPDX-License-Identifier: MIT
// What scan and lint share around the report: where each format goes
// (`--format sarif -o a.sarif --format github`), findings left out by
// --exclude-rule and --baseline, and --since in the forms people type.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "logrx/finding.h"

namespace logrx::cli {

struct OutputSpec {
  std::string format;
  std::string path;  // "" is standard output
};

// Pairs each -o FILE with the --format given before it (an -o before any
// --format belongs to the first one, or to text). Throws CLI::ValidationError
// when two outputs would share standard output or one format gets two files.
std::vector<OutputSpec> resolve_outputs(const CLI::App& command,
                                        const std::vector<std::string>& formats,
                                        const std::vector<std::string>& paths,
                                        const std::string& default_format);

// Findings a previous `scan --format json` report already holds, by rule and
// message (line numbers move when a log grows). An error message when the
// file is not such a report.
struct Baseline {
  std::set<std::pair<std::string, std::string>> known;
  bool contains(const Finding& finding) const;
};
std::optional<Baseline> load_baseline(const std::string& path, std::string& error);

// Removes the findings `drop` selects, keeping the summary's counts true.
// (Remediation is merged again by merge_reports.)
template <typename Predicate>
void drop_findings(Report& report, Predicate drop);

// --since: ISO 8601, a date (2026-05-23, midnight local time) or an age
// (30m, 1h, 2d: that long before now). Returns the ISO 8601 form the
// analyzer takes, std::nullopt when it is none of these.
std::optional<std::string> normalize_since(const std::string& value);

void forget_finding(Summary& summary, const Finding& finding);

template <typename Predicate>
void drop_findings(Report& report, Predicate drop) {
  std::vector<Finding> kept;
  kept.reserve(report.findings.size());
  for (Finding& finding : report.findings) {
    if (drop(finding)) {
      forget_finding(report.summary, finding);
    } else {
      kept.push_back(std::move(finding));
    }
  }
  report.findings = std::move(kept);
  // A report of one input: its own remediation and counts follow the findings kept.
  report.remediation = merge_remediation(report.findings);
  if (report.remediation_by_file.size() == 1) report.remediation_by_file[0].second = report.remediation;
  if (report.files.size() == 1) report.files[0].summary = report.summary;
}

}  // namespace logrx::cli
