// SPDX-License-Identifier: MIT
// Printers: a Report as JSON (the machine contract) or as readable text.
//
// Thread-safety: pure functions.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "logrx/finding.h"
#include "logrx/rulebook.h"

namespace logrx {

// The `scan --format json` document: {"findings": [...], "remediation": [...],
// "summary": {...}}. Field names are a public contract: never renamed.
std::string to_json(const Report& report, int indent = 2);

// to_json written to `out`, one finding at a time: the same bytes, without
// the whole document in memory at once (a report can hold 10,000 findings).
void write_json(std::ostream& out, const Report& report, int indent = 2);

struct TextOptions {
  bool color = false;        // ANSI colours (only for a terminal)
  bool explanations = true;  // print each finding's explanation
};

// A readable report: every finding, then the summary. Log text is escaped so
// control characters never reach the terminal raw.
void write_text(std::ostream& out, const Report& report, const TextOptions& options = {});

// The two halves of write_text, for printing findings as they happen.
void write_finding_text(std::ostream& out, const Finding& finding, const TextOptions& options = {});
void write_summary_text(std::ostream& out, const Report& report, const TextOptions& options = {});

// One finding as the JSON object used in the "findings" array.
std::string finding_to_json(const Finding& finding, int indent = -1);

// SARIF 2.1.0 for code-scanning tools: one run, tool.driver.rules for the
// rules that fired (help text from `book`), one result per finding with the
// log file as its artifact. Stale findings are notes.
std::string to_sarif(const Report& report, const Rulebook& book, int indent = 2);

// GitHub Actions workflow commands, one per finding:
// ::error file=server.log,line=27,endLine=30,title=...::message
std::string to_github_annotations(const Report& report);

// Escaping of workflow commands: data (the message) encodes % CR LF; a
// property value also encodes ':' and ','.
std::string escape_github_data(std::string_view text);
std::string escape_github_property(std::string_view text);

// Escapes control characters so text is safe for a terminal: C0 (except tab),
// ESC and DEL as \xNN, C1 (U+009B is CSI), bidi and zero-width characters as
// \uNNNN, bytes that are not UTF-8 as \xNN (see escape_control_characters).
// Other UTF-8 passes through.
std::string escape_for_terminal(std::string_view text);

// A dumped JSON text with DEL and the invisible control characters (C1, bidi,
// zero-width, U+2028/U+2029) inside its strings written as \uNNNN: every
// JSON this library writes goes through it, so a consumer that prints a
// string field raw cannot be steered by one.
std::string escape_json_controls(std::string json);

}  // namespace logrx
