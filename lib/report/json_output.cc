// SPDX-License-Identifier: MIT
#include <nlohmann/json.hpp>

#include "logrx/output.h"

namespace logrx {
namespace {

// Ordered so the document reads in the order of the public contract.
using ojson = nlohmann::ordered_json;

ojson remediation_json(const RemediationItem& item) {
  ojson out;
  out[item.kind == RemediationItem::Kind::Flag ? "flag" : "env"] = item.name;
  if (item.value) out["value"] = *item.value;
  if (!item.why.empty()) out["why"] = item.why;
  if (item.alternative) out["alternative"] = true;
  if (!item.rule_id.empty()) out["rule"] = item.rule_id;
  return out;
}

ojson finding_json(const Finding& f) {
  ojson out;
  out["rule"] = f.rule_id;
  out["category"] = std::string(to_string(f.category));
  out["severity"] = std::string(to_string(f.severity));
  out["file"] = f.file;
  out["line"] = f.line;
  out["end_line"] = f.end_line;
  out["run"] = f.run;
  out["stale"] = f.stale;
  out["server"] = f.server;
  out["title"] = f.title;
  out["message"] = f.message;
  if (!f.level.empty()) out["level"] = f.level;
  if (!f.process.empty()) out["process"] = f.process;
  if (!f.timestamp.empty()) out["timestamp"] = f.timestamp;
  out["captures"] = ojson::object();
  for (const auto& [name, value] : f.captures) out["captures"][name] = value;
  out["remediation"] = ojson::array();
  for (const RemediationItem& item : f.remediation)
    out["remediation"].push_back(remediation_json(item));
  out["explanation"] = f.explanation;
  out["references"] = f.references;
  out["evidence"] = ojson::array();
  for (const EvidenceLine& e : f.evidence)
    out["evidence"].push_back(ojson{{"line", e.line}, {"text", e.text}});
  return out;
}

}  // namespace

std::string to_json(const Report& report, int indent) {
  ojson doc;
  doc["findings"] = ojson::array();
  for (const Finding& f : report.findings) doc["findings"].push_back(finding_json(f));
  doc["remediation"] = ojson::array();
  for (const RemediationItem& item : report.remediation)
    doc["remediation"].push_back(remediation_json(item));
  const Summary& s = report.summary;
  ojson summary;
  summary["lines"] = s.lines;
  summary["findings"] = s.findings;
  summary["worst_severity"] =
      s.worst_severity ? std::string(to_string(*s.worst_severity)) : std::string("none");
  summary["by_category"] = ojson::object();
  for (const auto& [name, count] : s.by_category) summary["by_category"][name] = count;
  summary["by_severity"] = ojson::object();
  for (const auto& [name, count] : s.by_severity) summary["by_severity"][name] = count;
  summary["findings_dropped"] = s.findings_dropped;
  summary["truncated_lines"] = s.truncated_lines;
  doc["summary"] = std::move(summary);
  // Log text was sanitised to valid UTF-8, but stream names come from the
  // command line and may not be.
  return doc.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace logrx
