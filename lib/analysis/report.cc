// SPDX-License-Identifier: MIT
#include <algorithm>
#include <map>
#include <utility>

#include "logrx/finding.h"

namespace logrx {

std::vector<RemediationItem> merge_remediation(const std::vector<Finding>& findings) {
  struct Chosen {
    RemediationItem item;
    Severity severity;
    std::size_t order;  // first time this flag was prescribed, for a stable output order
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
        chosen.emplace(key, Chosen{item, finding.severity, order++});
      } else if (finding.severity >= it->second.severity) {
        // Findings come in line order: on a tie the later line wins, because
        // it describes the state the server was last in.
        it->second.item = item;
        it->second.severity = finding.severity;
      }
    }
  }
  std::vector<std::pair<std::size_t, RemediationItem>> ordered;
  for (auto& [key, value] : chosen) ordered.emplace_back(value.order, std::move(value.item));
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
    s.findings += r.findings;
    s.findings_dropped += r.findings_dropped;
    s.truncated_lines += r.truncated_lines;
    if (r.worst_severity && (!s.worst_severity || *r.worst_severity > *s.worst_severity))
      s.worst_severity = r.worst_severity;
    for (const auto& [name, count] : r.by_category) s.by_category[name] += count;
    for (const auto& [name, count] : r.by_severity) s.by_severity[name] += count;
  }
  merged.remediation = merge_remediation(merged.findings);
  return merged;
}

}  // namespace logrx
