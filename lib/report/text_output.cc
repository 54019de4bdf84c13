// SPDX-License-Identifier: MIT
#include <array>
#include <sstream>

#include "logrx/line.h"
#include "logrx/output.h"

namespace logrx {
namespace {

struct Palette {
  bool on;
  const char* wrap(const char* code) const { return on ? code : ""; }
  const char* reset() const { return on ? "\x1b[0m" : ""; }
  const char* bold() const { return wrap("\x1b[1m"); }
  const char* dim() const { return wrap("\x1b[2m"); }
  const char* green() const { return wrap("\x1b[32m"); }
  const char* red() const { return wrap("\x1b[31m"); }
  const char* severity(Severity s) const {
    switch (s) {
      case Severity::Fatal:
        return wrap("\x1b[1;35m");
      case Severity::Error:
        return wrap("\x1b[1;31m");
      case Severity::Warning:
        return wrap("\x1b[1;33m");
      case Severity::Info:
        break;
    }
    return wrap("\x1b[1;36m");
  }
};

std::string item_text(const RemediationItem& item) {
  std::string out;
  if (item.kind == RemediationItem::Kind::Env) {
    out = item.name + "=" + item.value.value_or("");
  } else {
    out = item.name;
    if (item.value) out += (item.kind == RemediationItem::Kind::Container ? "=" : " ") + *item.value;
    if (item.kind == RemediationItem::Kind::Container) out = "docker run " + out;
  }
  return escape_for_terminal(out);
}

}  // namespace

std::string escape_for_terminal(std::string_view text) { return escape_control_characters(text); }

void write_finding_text(std::ostream& out, const Finding& f, const TextOptions& options) {
  Palette p{options.color};
  {
    out << p.bold() << escape_for_terminal(f.file) << ":" << f.line << p.reset() << ": "
        << p.severity(f.severity) << to_string(f.severity) << p.reset() << " ["
        << to_string(f.category) << "] " << escape_for_terminal(f.title) << " " << p.dim() << "("
        << f.rule_id << (f.tier != Tier::Rule ? ", " + std::string(to_string(f.tier)) : std::string())
        << (f.stale ? ", stale" : "") << ")" << p.reset() << "\n";
    out << "  " << p.dim() << "| " << p.reset() << escape_for_terminal(f.message)
        << (f.truncated ? p.dim() : "") << (f.truncated ? "  [line cut]" : "") << p.reset() << "\n";
    std::string context;
    if (f.run > 1 || f.stale) context += "run " + std::to_string(f.run);
    if (!f.phase.empty()) context += (context.empty() ? "" : ", ") + std::string("phase ") + f.phase;
    if (f.event_start != 0 && f.end_line > f.event_start)
      context += ", lines " + std::to_string(f.event_start) + "-" + std::to_string(f.end_line);
    if (f.ranks.size() > 1) {
      context += ", ranks";
      for (const std::string& rank : f.ranks) context += " " + rank;
    }
    if (f.count > 1) context += ", " + std::to_string(f.count) + " times";
    if (f.root_cause)
      context += ", caused by " + f.root_cause->rule_id + " at line " + std::to_string(f.root_cause->line);
    if (!context.empty()) out << "  " << p.dim() << escape_for_terminal(context) << p.reset() << "\n";
    // A wrapper's cause as JSON gives it (root_exception, root_cause: null).
    if (f.wrapper && !f.root_exception.empty() && f.root_exception != f.exception)
      out << "  " << p.bold() << "caused by: " << p.reset() << escape_for_terminal(f.root_exception) << "\n";
    else if (f.wrapper && !f.root_cause)
      out << "  " << p.dim() << "caused by: an earlier error the log does not show" << p.reset() << "\n";
    for (const std::string& note : f.inconsistencies)
      out << "  " << p.bold() << "inconsistent: " << p.reset() << escape_for_terminal(note) << "\n";
    if (options.explanations && !f.explanation.empty())
      out << "  " << escape_for_terminal(f.explanation) << "\n";
    bool first_alternative = true;
    for (const RemediationItem& item : f.remediation) {
      const char* label = "  fix: ";
      if (item.alternative) {
        label = first_alternative ? "   or: " : "       ";
        first_alternative = false;
      }
      out << label << p.green() << item_text(item) << p.reset();
      if (!item.why.empty()) out << p.dim() << "  (" << escape_for_terminal(item.why) << ")" << p.reset();
      out << "\n";
    }
    out << "\n";
  }
}

void write_text(std::ostream& out, const Report& report, const TextOptions& options) {
  for (const Finding& f : report.findings) write_finding_text(out, f, options);
  write_summary_text(out, report, options);
}

void write_summary_text(std::ostream& out, const Report& report, const TextOptions& options) {
  Palette p{options.color};
  for (const ScanDiagnostic& d : report.diagnostics)
    out << p.dim() << escape_for_terminal(d.file) << ":" << d.line << ": note: "
        << escape_for_terminal(d.message) << p.reset() << "\n";
  auto write_items = [&](const std::vector<RemediationItem>& items) {
    for (const RemediationItem& item : items) {
      out << "  " << p.green() << item_text(item) << p.reset();
      if (!item.why.empty())
        out << p.dim() << "  (" << escape_for_terminal(item.why) << ")" << p.reset();
      out << "\n";
      for (const std::string& other : item.conflicts)
        out << "    " << p.dim() << "instead of " << escape_for_terminal(other) << p.reset() << "\n";
    }
    out << "\n";
  };
  if (report.remediation_by_file.size() > 1) {
    // Several inputs (several servers, perhaps): each gets its own fixes.
    for (const auto& [file, items] : report.remediation_by_file) {
      if (items.empty()) continue;
      out << p.bold() << "Suggested remediation for " << escape_for_terminal(file) << ":" << p.reset()
          << "\n";
      write_items(items);
    }
  } else if (!report.remediation.empty()) {
    out << p.bold() << "Suggested remediation:" << p.reset() << "\n";
    write_items(report.remediation);
  }
  if (!report.input_error.empty())
    out << p.red() << "input error: " << escape_for_terminal(report.input_error) << p.reset() << "\n";
  const Summary& s = report.summary;
  out << s.findings << (s.findings == 1 ? " finding" : " findings");
  if (!s.by_severity.empty()) {
    out << " (";
    const char* sep = "";
    static constexpr std::array<Severity, 4> kOrder{Severity::Fatal, Severity::Error,
                                                    Severity::Warning, Severity::Info};
    for (Severity severity : kOrder) {
      auto it = s.by_severity.find(std::string(to_string(severity)));
      if (it == s.by_severity.end()) continue;
      out << sep << it->second << " " << to_string(severity);
      sep = ", ";
    }
    out << ")";
  }
  out << " in " << s.lines << (s.lines == 1 ? " line" : " lines");
  if (s.runs > 1) out << ", " << s.runs << " launches";
  if (s.truncated_lines > 0) out << ", " << s.truncated_lines << " over-long lines truncated";
  if (s.findings_dropped > 0) out << ", " << s.findings_dropped << " findings not listed";
  if (report.files.size() > 1) out << ", " << report.files.size() << " files";
  out << "\n";
}

}  // namespace logrx
