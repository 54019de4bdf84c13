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

// A concrete fix: a server flag (with or without a value), an environment
// variable with a value, or a model/request parameter (Ollama's Modelfile and
// API options such as num_ctx), which no launch command carries.
struct RemediationItem {
  // Container: an option of the container the server runs in (docker run
  // --shm-size, --ipc); like Param, never applied to the server's command line.
  enum class Kind { Flag, Env, Param, Container };
  Kind kind = Kind::Flag;
  std::string name;
  std::optional<std::string> value;
  std::string why;
  bool alternative = false;
  std::string rule_id;  // the rule that prescribed it
  // Other values prescribed for the same flag in the same run, which lost to
  // this one (merged remediation only): "value (rule)".
  std::vector<std::string> conflicts;
  // True when a supervisor may put it on the command line as it is: a switch,
  // a value flag with a value of its type and range, a variable with a value.
  // False for advice (`why` says what to choose) and model parameters.
  // Supervisors (logrx run, apply_remediation) apply only applicable items.
  bool applicable = true;
  std::string note;  // a value clamped, rounded or refused by the flag's range
};

struct EvidenceLine {
  std::uint64_t line = 0;
  std::string text;
};

// The root cause a wrapper finding points to.
struct RootCause {
  std::string rule_id;
  std::uint64_t line = 0;
};

struct Finding {
  std::string rule_id;
  std::string title;
  std::string explanation;
  Category category = Category::Other;
  Severity severity = Severity::Info;
  std::string file;          // the stream name given to the analyzer
  // Where a log shipper says the line came from: a systemd unit or syslog
  // identifier, "pod/NAME/CONTAINER" (kubectl --prefix) or "ns/pod/container"
  // (a kubelet log path); "" when the log has no such envelope.
  std::string source;
  std::uint64_t line = 0;    // 1-based line that matched
  std::uint64_t end_line = 0;
  int run = 1;
  bool stale = false;
  std::string server;        // "sglang", "vllm", "unknown", ...
  std::string message;       // the log message that matched
  std::string level;         // log level printed on the line, "" when none
  std::string process;       // rank/process tag of the line, "" when none
  std::string timestamp;     // as printed, "" when none
  // The same time in ISO 8601 ("2026-12-25T04:49:58", ".123" when printed),
  // with the year inferred when the line prints none (see AnalyzerOptions::year).
  std::string timestamp_iso;
  std::map<std::string, std::string> captures;
  std::vector<RemediationItem> remediation;
  std::vector<std::string> references;
  std::vector<EvidenceLine> evidence;
  std::string phase;            // phase of the run when the line was written
  std::uint64_t event_start = 0;  // first line of the multi-line event (traceback)
  std::string exception;        // final exception line of the event, "" when none
  std::string root_exception;   // first exception of a chain (the root cause)
  std::vector<std::string> ranks;  // ranks/processes that logged the same error
  std::size_t count = 1;        // occurrences merged into this finding
  std::uint64_t last_line = 0;  // line of the last merged occurrence
  bool truncated = false;       // the matched line was cut (over-long or unterminated)
  bool wrapper = false;         // a consequence of another finding
  std::optional<RootCause> root_cause;  // for wrappers, when the cause is in the log
  Tier tier = Tier::Rule;       // how the message was recognised
  // Statements in the message that contradict each other (its own numbers do
  // not support its claim): the log is likely not what it seems.
  std::vector<std::string> inconsistencies;
};

// A fact recorded for a run: from a rule's capture or the server's config dump.
struct Fact {
  std::string text;               // as printed ("0.8", "EAGLE", "True", "None")
  std::optional<double> number;   // when it is a number
  std::uint64_t line = 0;         // where it was last set
  std::string unit;               // of a size as the log printed it ("GiB", "GB"), "" when none
};

// One launch of the server inside the stream.
struct RunInfo {
  int run = 1;
  std::string file;           // the stream (input) the launch was read from
  std::uint64_t first_line = 0;
  std::uint64_t last_line = 0;
  std::string server;         // dialect seen in the run
  std::string phase;          // the last phase reached
  bool reached_ready = false;
  std::string first_timestamp;
  std::string last_timestamp;
  std::string first_timestamp_iso;  // ISO 8601, year inferred when printed without one
  std::string last_timestamp_iso;
  std::map<std::string, Fact> facts;
};

// A problem with the input that is not a finding (a config dump that does not parse).
struct ScanDiagnostic {
  std::string file;
  std::uint64_t line = 0;
  std::string message;
};

// What the caps of AnalyzerOptions left out, by collection.
struct CapCounts {
  std::size_t held_findings = 0;  // stored before their event closed (max_held_findings/bytes)
  std::size_t facts = 0;          // fact values not recorded (max_facts_per_run/_bytes_per_run)
  std::size_t diagnostics = 0;    // diagnostics not kept (max_diagnostics)
  std::size_t runs = 0;           // launches dropped from Report::runs (max_runs)
  std::size_t ranks = 0;          // ranks not listed on a merged finding (max_ranks_per_finding)
  std::size_t finding_bytes = 0;  // findings not stored for max_finding_bytes (also in findings_dropped)
};

struct Summary {
  std::uint64_t lines = 0;
  int runs = 0;
  std::size_t findings = 0;            // every finding, including ones not stored
  std::size_t findings_dropped = 0;    // not stored because of AnalyzerOptions::max_findings
  std::optional<Severity> worst_severity;
  std::map<std::string, std::size_t> by_category;
  std::map<std::string, std::size_t> by_severity;
  std::size_t truncated_lines = 0;
  CapCounts capped;
  std::string compression;  // the stream was decoded from "gzip", "zstd", "xz" or "bzip2"; "" when plain
};

// The counts of one input stream, kept apart when several are merged.
struct FileSummary {
  std::string file;  // the stream name
  Summary summary;   // that stream's own
  std::string input_error;
};

struct Report {
  std::vector<Finding> findings;             // in line order (then rule id)
  // Merged, de-duplicated, latest run (of every stream, after merge_reports).
  std::vector<RemediationItem> remediation;
  Summary summary;
  std::vector<RunInfo> runs;                 // every launch found in the stream
  std::vector<ScanDiagnostic> diagnostics;
  // Per stream, in input order: its own merged remediation (two files from two
  // servers need different flags) and its counts.
  std::vector<std::pair<std::string, std::vector<RemediationItem>>> remediation_by_file;
  std::vector<FileSummary> files;
  // The input could not be read to its end (corrupt or truncated compressed
  // data): the report covers what came before. "" when all was read.
  std::string input_error;
};

// Combines the reports of several streams (several files) into one: findings
// concatenated in the given order, summaries added, remediation re-merged,
// each stream's own remediation and counts kept in remediation_by_file/files.
Report merge_reports(std::vector<Report> reports);

// Hide secrets (see redact_secrets in logrx/line.h) in every string of a
// finding or a report: message, title, explanation, evidence, exception and
// root_exception, captures and facts (the whole value when its name says it
// is a secret: api_key, *_token, password, ...), remediation values and
// reasons, diagnostics. The Analyzer applies them to everything it emits
// unless AnalyzerOptions::redact is false; they are idempotent.
void redact_finding(Finding& finding);
void redact_report(Report& report);

// The finding that best explains the report: of the latest launch over
// earlier ones, the most severe, then a cause over a wrapper (a wrapper's
// rule never outranks its cause, however that was recognised), then the one a
// specific rule recognised (over structure, over lexical), then the earliest.
// nullptr when there are no findings.
const Finding* strongest_finding(const Report& report);

// The merged remediation of a set of findings: primary items of non-stale
// findings, one per flag or variable. When two findings prescribe different
// values for the same flag, the more severe finding wins, then the later line.
std::vector<RemediationItem> merge_remediation(const std::vector<Finding>& findings);

}  // namespace logrx
