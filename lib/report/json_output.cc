// SPDX-License-Identifier: MIT
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "logrx/budget.h"
#include "logrx/line.h"
#include "logrx/output.h"

namespace logrx {
namespace {

// Ordered so the document reads in the order of the public contract.
using ojson = nlohmann::ordered_json;

// A computed number without binary noise: 5.98 + 5.43 prints 11.41, not
// 11.409999999999998. Twelve significant digits keep every figure a log
// prints.
double clean(double value) {
  if (!std::isfinite(value)) return value;
  char text[32];
  std::snprintf(text, sizeof text, "%.12g", value);
  return std::strtod(text, nullptr);
}
ojson number_or_null(const std::optional<double>& value) {
  return value ? ojson(clean(*value)) : ojson(nullptr);
}

ojson remediation_json(const RemediationItem& item) {
  ojson out;
  out[item.kind == RemediationItem::Kind::Flag    ? "flag"
      : item.kind == RemediationItem::Kind::Env   ? "env"
      : item.kind == RemediationItem::Kind::Param ? "param"
                                                  : "container"] = item.name;
  if (item.value) out["value"] = *item.value;
  if (!item.why.empty()) out["why"] = item.why;
  if (item.alternative) out["alternative"] = true;
  out["applicable"] = item.applicable;
  if (!item.note.empty()) out["note"] = item.note;
  if (!item.rule_id.empty()) out["rule"] = item.rule_id;
  if (!item.conflicts.empty()) out["conflicts"] = item.conflicts;
  return out;
}

ojson finding_json(const Finding& f) {
  ojson out;
  out["rule"] = f.rule_id;
  out["category"] = std::string(to_string(f.category));
  out["severity"] = std::string(to_string(f.severity));
  out["file"] = f.file;
  if (!f.source.empty()) out["source"] = f.source;
  out["line"] = f.line;
  out["end_line"] = f.end_line;
  out["run"] = f.run;
  out["stale"] = f.stale;
  out["server"] = f.server;
  out["tier"] = std::string(to_string(f.tier));
  out["title"] = f.title;
  out["message"] = f.message;
  if (!f.level.empty()) out["level"] = f.level;
  if (!f.process.empty()) out["process"] = f.process;
  if (!f.timestamp.empty()) out["timestamp"] = f.timestamp;
  if (!f.timestamp_iso.empty()) out["timestamp_iso"] = f.timestamp_iso;
  out["captures"] = ojson::object();
  for (const auto& [name, value] : f.captures) out["captures"][name] = value;
  out["remediation"] = ojson::array();
  for (const RemediationItem& item : f.remediation)
    out["remediation"].push_back(remediation_json(item));
  if (!f.phase.empty()) out["phase"] = f.phase;
  if (f.event_start != 0) out["event_start"] = f.event_start;
  if (!f.exception.empty()) out["exception"] = f.exception;
  if (!f.root_exception.empty()) out["root_exception"] = f.root_exception;
  if (!f.ranks.empty()) out["ranks"] = f.ranks;
  out["count"] = f.count;
  if (f.last_line != f.line && f.last_line != 0) out["last_line"] = f.last_line;
  if (f.truncated) out["truncated"] = true;
  if (f.wrapper) {
    out["wrapper"] = true;
    if (f.root_cause) {
      out["root_cause"] = ojson{{"rule", f.root_cause->rule_id}, {"line", f.root_cause->line}};
    } else {
      out["root_cause"] = nullptr;
    }
  }
  if (!f.inconsistencies.empty()) out["inconsistencies"] = f.inconsistencies;
  out["explanation"] = f.explanation;
  out["references"] = f.references;
  out["evidence"] = ojson::array();
  for (const EvidenceLine& e : f.evidence)
    out["evidence"].push_back(ojson{{"line", e.line}, {"text", e.text}});
  return out;
}

}  // namespace

std::string escape_json_controls(std::string json) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(json[k]); };
  std::size_t first = 0;
  for (; first < json.size(); ++first) {
    unsigned char u = byte(first);
    if (u == 0x7f || u == 0xC2 || u == 0xD8 || u == 0xE2 || u == 0xEF) break;
  }
  if (first == json.size()) return json;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(json, 0, first);
  out.reserve(json.size() + 16);
  for (std::size_t i = first; i < json.size();) {
    unsigned char u = byte(i);
    std::size_t len = u < 0x80 ? 1 : u < 0xE0 ? 2 : u < 0xF0 ? 3 : 4;
    if (i + len > json.size()) len = 1;
    std::uint32_t cp = u;
    if (len == 2) cp = ((u & 0x1Fu) << 6) | (byte(i + 1) & 0x3Fu);
    if (len == 3) cp = ((u & 0x0Fu) << 12) | ((byte(i + 1) & 0x3Fu) << 6) | (byte(i + 2) & 0x3Fu);
    // Outside strings a JSON text is ASCII without DEL, so every such
    // character is inside a string, where \uNNNN means the same character.
    if (cp == 0x7f || (len <= 3 && is_invisible_control_character(cp))) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
    } else {
      out.append(json, i, len);
    }
    i += len;
  }
  return out;
}

std::string finding_to_json(const Finding& finding, int indent) {
  return escape_json_controls(finding_json(finding).dump(indent, ' ', false, ojson::error_handler_t::replace));
}

namespace {

// The counts a report and each of its inputs give.
void put_counts(ojson& out, const Summary& s) {
  out["lines"] = s.lines;
  out["findings"] = s.findings;
  out["worst_severity"] =
      s.worst_severity ? std::string(to_string(*s.worst_severity)) : std::string("none");
  out["by_category"] = ojson::object();
  for (const auto& [name, count] : s.by_category) out["by_category"][name] = count;
  out["by_severity"] = ojson::object();
  for (const auto& [name, count] : s.by_severity) out["by_severity"][name] = count;
}

}  // namespace

namespace {

ojson report_document(const Report& report, bool with_findings) {
  ojson doc;
  doc["findings"] = ojson::array();
  if (with_findings)
    for (const Finding& f : report.findings) doc["findings"].push_back(finding_json(f));
  doc["remediation"] = ojson::array();
  for (const RemediationItem& item : report.remediation)
    doc["remediation"].push_back(remediation_json(item));
  const Summary& s = report.summary;
  ojson summary;
  put_counts(summary, s);
  summary["findings_dropped"] = s.findings_dropped;
  summary["truncated_lines"] = s.truncated_lines;
  summary["runs"] = s.runs;
  // What the analyzer's caps left out; present only when a cap was reached.
  const CapCounts& c = s.capped;
  if (c.held_findings + c.facts + c.diagnostics + c.runs + c.ranks + c.finding_bytes > 0)
    summary["capped"] = ojson{{"held_findings", c.held_findings}, {"facts", c.facts},
                              {"diagnostics", c.diagnostics},     {"runs", c.runs},
                              {"ranks", c.ranks},                 {"finding_bytes", c.finding_bytes}};
  if (!s.compression.empty()) summary["compression"] = s.compression;
  // Each input's own counts, in input order.
  summary["files"] = ojson::array();
  for (const FileSummary& file : report.files) {
    ojson entry;
    entry["file"] = file.file;
    put_counts(entry, file.summary);
    entry["runs"] = file.summary.runs;
    if (!file.summary.compression.empty()) entry["compression"] = file.summary.compression;
    if (!file.input_error.empty()) entry["input_error"] = file.input_error;
    summary["files"].push_back(std::move(entry));
  }
  doc["summary"] = std::move(summary);
  // Each input's own merged remediation: two servers need two lists.
  doc["remediation_by_file"] = ojson::object();
  for (const auto& [file, items] : report.remediation_by_file) {
    ojson list = ojson::array();
    for (const RemediationItem& item : items) list.push_back(remediation_json(item));
    doc["remediation_by_file"][file] = std::move(list);
  }
  if (!report.input_error.empty()) doc["input_error"] = report.input_error;
  doc["runs"] = ojson::array();
  for (const RunInfo& r : report.runs) {
    ojson run;
    run["run"] = r.run;
    if (!r.file.empty()) run["file"] = r.file;
    run["first_line"] = r.first_line;
    run["last_line"] = r.last_line;
    run["server"] = r.server;
    run["phase"] = r.phase;
    run["reached_ready"] = r.reached_ready;
    if (!r.first_timestamp.empty()) run["first_timestamp"] = r.first_timestamp;
    if (!r.last_timestamp.empty()) run["last_timestamp"] = r.last_timestamp;
    if (!r.first_timestamp_iso.empty()) run["first_timestamp_iso"] = r.first_timestamp_iso;
    if (!r.last_timestamp_iso.empty()) run["last_timestamp_iso"] = r.last_timestamp_iso;
    // The facts come from a std::map (unique, sorted): appended to the
    // ordered object directly, because its operator[] searches linearly
    // (100,000 facts took 25 s).
    ojson facts = ojson::object();
    auto& members = facts.get_ref<ojson::object_t&>();
    members.reserve(r.facts.size());
    for (const auto& [name, fact] : r.facts) {
      if (fact.number) {
        members.emplace_back(name, clean(*fact.number));
      } else if (fact.text == "True" || fact.text == "False") {
        members.emplace_back(name, fact.text == "True");
      } else if (fact.text == "None") {
        members.emplace_back(name, nullptr);
      } else {
        members.emplace_back(name, fact.text);
      }
    }
    run["facts"] = std::move(facts);
    ojson units = ojson::object();
    for (const auto& [name, fact] : r.facts)
      if (!fact.unit.empty()) units.get_ref<ojson::object_t&>().emplace_back(name, fact.unit);
    if (!units.empty()) run["fact_units"] = std::move(units);
    doc["runs"].push_back(std::move(run));
  }
  doc["diagnostics"] = ojson::array();
  for (const ScanDiagnostic& d : report.diagnostics)
    doc["diagnostics"].push_back(ojson{{"file", d.file}, {"line", d.line}, {"message", d.message}});
  return doc;
}

// Log text was sanitised to valid UTF-8, but stream names come from the
// command line and may not be.
std::string dump(const ojson& value, int indent) {
  return escape_json_controls(value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace

std::string to_json(const Report& report, int indent) {
  return dump(report_document(report, true), indent);
}

void write_json(std::ostream& out, const Report& report, int indent) {
  if (indent < 0 || report.findings.empty()) {
    out << to_json(report, indent);
    return;
  }
  // The document without its findings, which are then written one at a
  // time where its empty array stands, indented as dump() would.
  std::string rest = dump(report_document(report, false), indent);
  std::string pad(static_cast<std::size_t>(indent), ' ');
  std::string head = "{\n" + pad + "\"findings\": [";
  if (rest.compare(0, head.size(), head) != 0 || rest.compare(head.size(), 1, "]") != 0) {
    out << to_json(report, indent);
    return;
  }
  out << head << '\n';
  std::string inner = pad + pad;
  for (std::size_t i = 0; i < report.findings.size(); ++i) {
    std::string text = dump(finding_json(report.findings[i]), indent);
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      out << inner;
      out.write(text.data() + start, static_cast<std::streamsize>(end - start));
      if (end < text.size()) out << '\n';
      start = end + 1;
    }
    out << (i + 1 < report.findings.size() ? ",\n" : "\n");
  }
  out << pad << ']';
  out.write(rest.data() + head.size() + 1, static_cast<std::streamsize>(rest.size() - head.size() - 1));
}

}  // namespace logrx

namespace logrx {

std::string budget_to_json(const MemoryBudget& b, int indent) {
  ojson doc;
  doc["run"] = b.run;
  doc["server"] = b.server;
  doc["total_gb"] = number_or_null(b.total_gb);
  doc["unit"] = b.unit;
  doc["total_estimated"] = b.total_estimated;
  doc["fraction_name"] = b.fraction_name;
  doc["fraction"] = number_or_null(b.fraction);
  doc["parts"] = ojson::array();
  for (const BudgetPart& part : b.parts) {
    ojson p;
    p["name"] = part.name;
    p["gb"] = number_or_null(part.gb);
    p["unit"] = part.unit;
    if (!part.detail.empty()) p["detail"] = part.detail;
    doc["parts"].push_back(std::move(p));
  }
  doc["free_gb"] = number_or_null(b.free_gb);
  doc["arithmetic"] = b.arithmetic;
  doc["missing"] = b.missing;
  doc["rejected"] = b.rejected;
  doc["remediation"] = ojson::array();
  for (const RemediationItem& item : b.remediation) doc["remediation"].push_back(remediation_json(item));
  return escape_json_controls(doc.dump(indent, ' ', false, ojson::error_handler_t::replace));
}

}  // namespace logrx
