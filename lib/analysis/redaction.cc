// SPDX-License-Identifier: MIT
// The redaction choke point: every string of a finding or a report that
// leaves the analyzer (the finding callback, finish(), and through them the
// printers, watch's JSONL and the C API) passes through here. Lines are
// already redacted before rules match them, so captures and facts do not
// hold secrets in the common case; this pass also covers what is taken from
// lines no rule matched (the exception lines of a traceback, joined lines,
// run facts, diagnostics) and values whose name alone says they are secret.
#include "logrx/finding.h"
#include "logrx/line.h"
#include "analysis/redaction.h"
#include "parse/redact_internal.h"

namespace logrx {
namespace {

void redact_item(RemediationItem& item) {
  if (item.value) detail::redact_named_value(item.name, *item.value);
  redact_secrets(item.why);
  for (std::string& other : item.conflicts) redact_secrets(other);
}

}  // namespace

void redact_finding(Finding& f) {
  redact_secrets(f.title);
  redact_secrets(f.explanation);
  redact_secrets(f.file);
  redact_secrets(f.message);
  redact_secrets(f.process);
  for (auto& [name, value] : f.captures) detail::redact_named_value(name, value);
  for (RemediationItem& item : f.remediation) redact_item(item);
  for (std::string& reference : f.references) redact_secrets(reference);
  for (EvidenceLine& e : f.evidence) redact_secrets(e.text);
  redact_secrets(f.exception);
  redact_secrets(f.root_exception);
  for (std::string& rank : f.ranks) redact_secrets(rank);
  for (std::string& note : f.inconsistencies) redact_secrets(note);
}

void redact_report(Report& report) {
  for (Finding& f : report.findings) redact_finding(f);
  detail::redact_report_except_findings(report);
}

namespace detail {

void redact_report_except_findings(Report& report) {
  // Ranks merged into a finding after it was emitted.
  for (Finding& f : report.findings)
    for (std::string& rank : f.ranks) redact_secrets(rank);
  for (RemediationItem& item : report.remediation) redact_item(item);
  for (RunInfo& run : report.runs) {
    for (auto& [name, fact] : run.facts) {
      if (detail::redact_named_value(name, fact.text)) fact.number.reset();
    }
  }
  for (ScanDiagnostic& d : report.diagnostics) {
    redact_secrets(d.file);
    redact_secrets(d.message);
  }
}

}  // namespace detail
}  // namespace logrx
