// SPDX-License-Identifier: MIT
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "logrx/finding.h"

namespace logrx {

std::vector<RemediationItem> merge_remediation(const std::vector<Finding>& findings) {
  struct Chosen {
    RemediationItem item;
    Severity severity;
    std::size_t order;  // first time this flag was prescribed, for a stable output order
    std::vector<std::pair<std::string, std::string>> losers;  // value, rule
  };
  std::map<std::pair<int, std::string>, Chosen> chosen;
  std::size_t order = 0;
  for (const Finding& finding : findings) {
    if (finding.stale) continue;
    for (const RemediationItem& item : finding.remediation) {
      if (item.alternative) continue;
      auto key = std::make_pair(static_cast<int>(item.kind), item.name);
      auto it = chosen.find(key);
      if (it == chosen.end()) {
        chosen.emplace(key, Chosen{item, finding.severity, order++, {}});
        continue;
      }
      Chosen& current = it->second;
      bool differs = current.item.value != item.value;
      // Findings come in line order: on a tie the later line wins, because it
      // describes the state the server was last in.
      // Advice never displaces a value that can be applied, whatever the
      // severity: the merged list is what a supervisor puts on the command line.
      if (current.item.applicable != item.applicable) {
        if (item.applicable) {
          current.item = item;
          current.severity = finding.severity;
        }
        continue;
      }
      // Likewise a computed value is never displaced by the same item
      // without one (a stronger finding that could not compute it).
      bool has_value = item.value.has_value() && !item.value->empty();
      bool current_has_value = current.item.value.has_value() && !current.item.value->empty();
      if (has_value != current_has_value) {
        if (has_value) {
          current.item = item;
          current.severity = finding.severity;
        }
        continue;
      }
      if (finding.severity >= current.severity) {
        if (differs)
          current.losers.emplace_back(current.item.value.value_or("(no value)"), current.item.rule_id);
        current.item = item;
        current.severity = finding.severity;
      } else if (differs) {
        current.losers.emplace_back(item.value.value_or("(no value)"), item.rule_id);
      }
    }
  }
  std::vector<std::pair<std::size_t, RemediationItem>> ordered;
  for (auto& [key, value] : chosen) {
    for (const auto& [loser_value, rule] : value.losers) {
      // One value per flag is emitted; the others are named, never applied.
      std::string entry = loser_value + " (" + rule + ")";
      if (loser_value != value.item.value.value_or("(no value)") &&
          std::find(value.item.conflicts.begin(), value.item.conflicts.end(), entry) ==
              value.item.conflicts.end())
        value.item.conflicts.push_back(entry);
    }
    ordered.emplace_back(value.order, std::move(value.item));
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<RemediationItem> merged;
  merged.reserve(ordered.size());
  for (auto& entry : ordered) merged.push_back(std::move(entry.second));
  return merged;
}

Report merge_reports(std::vector<Report> reports) {
  Report merged;
  for (Report& report : reports) {
    for (Finding& finding : report.findings) merged.findings.push_back(std::move(finding));
    Summary& s = merged.summary;
    const Summary& r = report.summary;
    s.lines += r.lines;
    s.runs += r.runs;
    s.findings += r.findings;
    s.findings_dropped += r.findings_dropped;
    s.truncated_lines += r.truncated_lines;
    s.capped.held_findings += r.capped.held_findings;
    s.capped.facts += r.capped.facts;
    s.capped.diagnostics += r.capped.diagnostics;
    s.capped.runs += r.capped.runs;
    s.capped.ranks += r.capped.ranks;
    s.capped.finding_bytes += r.capped.finding_bytes;
    if (r.worst_severity && (!s.worst_severity || *r.worst_severity > *s.worst_severity))
      s.worst_severity = r.worst_severity;
    for (const auto& [name, count] : r.by_category) s.by_category[name] += count;
    for (const auto& [name, count] : r.by_severity) s.by_severity[name] += count;
    if (s.compression.empty()) s.compression = r.compression;
    for (RunInfo& run : report.runs) merged.runs.push_back(std::move(run));
    for (ScanDiagnostic& d : report.diagnostics) merged.diagnostics.push_back(std::move(d));
    for (auto& entry : report.remediation_by_file) merged.remediation_by_file.push_back(std::move(entry));
    for (FileSummary& file : report.files) merged.files.push_back(std::move(file));
    if (merged.input_error.empty()) merged.input_error = report.input_error;
  }
  merged.remediation = merge_remediation(merged.findings);
  return merged;
}

}  // namespace logrx

namespace logrx {

const Finding* strongest_finding(const Report& report) {
  auto tier_rank = [](Tier t) { return t == Tier::Rule ? 2 : t == Tier::Structure ? 1 : 0; };
  const Finding* best = nullptr;
  auto key = [&](const Finding& f) {
    return std::make_tuple(!f.stale, static_cast<int>(f.severity), !f.wrapper, tier_rank(f.tier));
  };
  for (const Finding& f : report.findings) {
    if (best == nullptr || key(f) > key(*best)) best = &f;
  }
  return best;
}

}  // namespace logrx
