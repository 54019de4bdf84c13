// SPDX-License-Identifier: MIT
#include "scan.h"

#include "journal.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "logrx/analyzer.h"
#include "logrx/output.h"
#include "outputs.h"

namespace logrx::cli {

namespace {

void add_scan_options(CLI::App* command, ScanOptions& options) {
  command->add_option("files", options.files,
                      "Log files (plain or gzip/zstd/xz/bzip2-compressed) or directories to read "
                      "(each file its own stream); '-' or none reads stdin");
  command->add_option("--glob", options.globs,
                      "With a directory: read only the files matching GLOB (repeatable; "
                      "'*.log', 'node-*/server.log.*')")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  command->add_option("--format", options.formats,
                      "Output format: text (default), json, sarif or github; repeat it with -o "
                      "to write several in one pass")
      ->check(CLI::IsMember({"text", "json", "sarif", "github"}))
      ->allow_extra_args(false);
  command->add_option("-o,--output", options.outputs,
                      "Write the --format given before it to FILE instead of stdout "
                      "(--format sarif -o a.sarif --format github)")
      ->type_name("FILE")
      ->allow_extra_args(false);
  command->add_option("--exclude-rule", options.exclude_rules,
                      "Leave out the findings of this rule (repeatable)")
      ->type_name("ID")
      ->allow_extra_args(false);
  command->add_option("--baseline", options.baseline,
                      "A previous 'scan --format json' report: list only findings it does not "
                      "hold (same rule and message)")
      ->type_name("FILE");
  command->add_option("--fail-on", options.fail_on,
                      "Exit 1 when a finding of this severity or worse is present")
      ->check(CLI::IsMember({"info", "warning", "error", "fatal", "never"}))
      ->capture_default_str();
  command->add_option("--rules", options.rules.extra_dirs,
                      "Also load the rules in DIR (repeatable; also $LOGRX_RULES_PATH, "
                      "colon-separated); a rule with a built-in id replaces it")
      ->type_name("DIR")
      ->allow_extra_args(false);
  command->add_flag("--no-builtin-rules", options.rules.no_builtin,
                    "Do not load the built-in rulebook");
  command->add_option("--color", options.color, "Colour text output")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  command->add_flag("--brief", options.brief, "Text output without explanations");
  command->add_flag("--no-redact", options.no_redact,
                    "Show secrets (api keys, tokens, passwords, credentials in URLs) as they are "
                    "in the log instead of <redacted>");
  command->add_flag("--all-runs", options.all_runs,
                    "Count findings of earlier launches in the file for --fail-on too");
  command->add_option("--launch-cmd", options.launch_command,
                      "The command you believe produced the log; contradictions are reported as "
                      "stale_output")
      ->type_name("CMD");
  command->add_option("--server", options.server,
                      "The server that wrote the log, when its lines do not say (a bare traceback)")
      ->check(CLI::IsMember({"sglang", "vllm", "tgi", "llamacpp", "trtllm", "lmdeploy", "ollama"}));
  command->add_option("--journal", options.journal,
                      "Read a systemd unit's journal (from --since on) instead of files")
      ->type_name("UNIT");
  command->add_option("--journal-file", options.journal_files,
                      "With --journal: read these journal files instead of the system journal")
      ->type_name("PATH")
      ->allow_extra_args(false);
  command->add_option("--since", options.since,
                      "When the server was launched: ISO 8601 (local time unless a zone is "
                      "given), a date (2026-05-23) or an age (90s, 30m, 1h, 2d); a log that "
                      "predates it is stale")
      ->type_name("TIME")
      ->transform(CLI::Validator(
          [](std::string& value) {
            auto normal = normalize_since(value);
            if (!normal)
              return "not an ISO 8601 time, a date (2026-05-23) or an age (1h): " + value;
            value = *normal;
            return std::string();
          },
          "TIME"));
  command->add_option("--threads", options.threads,
                      "Threads that scan a regular file (pipes are read in one pass); "
                      "default: the cores available. The report is the same for any number")
      ->type_name("N")
      ->check(CLI::Range(0u, 256u));
  command->add_option("--year", options.year,
                      "The year of timestamps that print none (vLLM's 12-25 04:49:58) in "
                      "timestamp_iso; default: the log's dated lines, else the file's "
                      "modification time, else today (a later date is the year before)")
      ->type_name("YYYY")
      ->check(CLI::Range(1970, 9999));
  command->footer(
      "Exit codes: 0 no finding at or above --fail-on, 1 findings at or above it, "
      "2 usage, input, rule or output errors.");
}

// SARIF says whether the run read everything: an input that could not be read
// is executionSuccessful: false with a notification naming it, so a viewer
// does not show an unread log as a clean one.
std::string sarif_with_invocation(const std::string& sarif,
                                  const std::vector<std::pair<std::string, std::string>>& failed) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(sarif, nullptr, false);
  if (doc.is_discarded() || !doc.contains("runs") || doc["runs"].empty()) return sarif;
  nlohmann::ordered_json invocation;
  invocation["executionSuccessful"] = failed.empty();
  if (!failed.empty()) {
    invocation["toolExecutionNotifications"] = nlohmann::ordered_json::array();
    for (const auto& [file, why] : failed) {
      std::string uri = file == "-" ? "stdin" : file;
      invocation["toolExecutionNotifications"].push_back(
          {{"level", "error"},
           {"message", {{"text", (file == "-" ? std::string("<stdin>") : file) + ": " + why}}},
           {"locations",
            nlohmann::ordered_json::array(
                {{{"physicalLocation", {{"artifactLocation", {{"uri", uri}}}}}}})}});
    }
  }
  doc["runs"][0]["invocations"] = nlohmann::ordered_json::array({invocation});
  return escape_json_controls(doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace

void setup_scan(CLI::App& app, ScanOptions& options, int& exit_code) {
  CLI::App* scan = app.add_subcommand(
      "scan", "Diagnose server logs: findings, explanations and the flags that fix them");
  add_scan_options(scan, options);
  scan->callback([scan, &options, &exit_code] { exit_code = run_scan(*scan, options); });
}

void setup_lint(CLI::App& app, ScanOptions& options, int& exit_code) {
  CLI::App* lint = app.add_subcommand(
      "lint", "CI mode of scan: fail on warnings by default; SARIF and GitHub annotations");
  // Parsing happens after this runs, so the CI default is set before the
  // options are registered and shown in --help.
  options.fail_on = "warning";
  add_scan_options(lint, options);
  lint->callback([lint, &options, &exit_code] { exit_code = run_scan(*lint, options); });
}

int run_scan(const CLI::App& command, const ScanOptions& options) {
  std::vector<OutputSpec> outputs = resolve_outputs(command, options.formats, options.outputs, "text");
  std::optional<Baseline> baseline;
  if (!options.baseline.empty()) {
    std::string error;
    baseline = load_baseline(options.baseline, error);
    if (!baseline) {
      std::cerr << "logrx: --baseline " << escape_for_terminal(options.baseline) << ": " << error
                << "\n";
      return kExitError;
    }
  }
  auto left_out = [&](const Finding& finding) {
    return std::find(options.exclude_rules.begin(), options.exclude_rules.end(),
                     finding.rule_id) != options.exclude_rules.end() ||
           (baseline && baseline->contains(finding));
  };
  // Ctrl-C or SIGTERM (`tail -F log | logrx scan`) ends the input; the
  // findings still held, the summary and the remediation are still printed.
  install_stop_handlers();
  auto book = load_rulebook(options.rules);
  if (!book) return kExitError;
  // Output files are created before reading, so a path that cannot be
  // written fails at once rather than after a long scan.
  std::vector<std::unique_ptr<OutputFile>> files_out;
  for (const OutputSpec& output : outputs) {
    if (output.path.empty()) {
      files_out.push_back(nullptr);
      continue;
    }
    std::string error;
    files_out.push_back(OutputFile::create(output.path, error));
    if (!files_out.back()) {
      std::cerr << "logrx: cannot write " << escape_for_terminal(output.path) << ": " << error
                << "\n";
      return kExitError;
    }
  }

  std::vector<std::string> files = options.files;
  if (!options.journal.empty()) {
    if (!files.empty()) {
      std::cerr << "logrx: --journal reads the journal instead of files; give one or the other\n";
      return kExitError;
    }
    files.push_back("journal:" + options.journal);
  }
  if (files.empty()) files.push_back("-");

  TextOptions text;
  text.color = options.color == "always" || (options.color == "auto" && stdout_wants_color());
  text.explanations = !options.brief;
  // Text on stdout from a pipe is printed as it is found.
  bool text_on_stdout = std::any_of(outputs.begin(), outputs.end(), [](const OutputSpec& o) {
    return o.format == "text" && o.path.empty();
  });

  bool input_error = false;
  std::vector<std::pair<std::string, std::string>> failed_inputs;  // file, why
  bool streamed = false;
  std::vector<Report> reports;
  for (const Input& input : expand_inputs(files, options.globs)) {
    const std::string& file = input.path;
    if (!input.error.empty()) {
      std::cerr << "logrx: " << escape_for_terminal(file) << ": " << input.error << "\n";
      input_error = true;
      failed_inputs.emplace_back(file, input.error);
      continue;
    }
    AnalyzerOptions analyzer_options;
    analyzer_options.stream_name = file == "-" ? "<stdin>" : file;
    analyzer_options.launch_command = options.launch_command;
    analyzer_options.since = options.since;
    analyzer_options.server = options.server;
    analyzer_options.redact = !options.no_redact;
    if (file != "-") {
      analyzer_options.file_mtime = file_mtime(file);
      analyzer_options.input_bytes = file_size(file);
    }
    if (options.year != 0) analyzer_options.year = options.year;
    Analyzer analyzer(*book, analyzer_options);
    if (text_on_stdout && file == "-" && stdin_is_stream()) {
      // From a pipe, findings are printed as they are found, so
      // `tail -F log | logrx scan` shows them live; files are reported whole,
      // once runs, wrappers and stale findings are known.
      streamed = true;
      analyzer.on_finding([&text, &left_out](const Finding& finding) {
        if (stdout_closed() || left_out(finding)) return;
        write_finding_text(std::cout, finding, text);
        std::cout.flush();
      });
    }
    auto feed = [&analyzer](std::string_view bytes) { analyzer.feed(bytes); };
    unsigned threads = options.threads;
    auto feed_file = [&analyzer, threads](std::string_view bytes) { analyzer.feed_all(bytes, threads); };
    // Pieces of a regular file: enough windows for every thread, little
    // memory (the pipeline drains at each piece's end, a few percent).
    constexpr std::size_t kFilePiece = std::size_t{4} << 20;
    std::string error = options.journal.empty()
                            ? read_stream(file, feed, feed_file, threads == 1 ? 0 : kFilePiece)
                            : scan_journal(options.journal, options.journal_files, options.since, feed);
    if (!error.empty()) {
      std::cerr << "logrx: " << escape_for_terminal(file) << ": " << error << "\n";
      input_error = true;
      failed_inputs.emplace_back(file, error);
    }
    reports.push_back(analyzer.finish());
    if (!error.empty()) {
      reports.back().input_error = error;
      for (FileSummary& summary : reports.back().files) summary.input_error = error;
    } else if (!reports.back().input_error.empty()) {
      std::cerr << "logrx: " << escape_for_terminal(file) << ": " << reports.back().input_error << "\n";
      input_error = true;
      failed_inputs.emplace_back(file, reports.back().input_error);
    }
    if (!options.exclude_rules.empty() || baseline) drop_findings(reports.back(), left_out);
    if (stop_requested()) break;
  }
  Report report = merge_reports(std::move(reports));
  if (stop_requested())
    std::cerr << "logrx: interrupted; the report covers the input read until then\n";

  int status = kExitClean;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    std::ostream& out = files_out[i] ? files_out[i]->stream() : std::cout;
    const std::string& format = outputs[i].format;
    if (format == "text") {
      TextOptions to_file = text;
      if (files_out[i]) to_file.color = false;
      if (!streamed || files_out[i])
        for (const Finding& finding : report.findings) write_finding_text(out, finding, to_file);
      write_summary_text(out, report, to_file);
    } else if (format == "sarif") {
      out << sarif_with_invocation(to_sarif(report, *book), failed_inputs) << "\n";
    } else if (format == "github") {
      out << to_github_annotations(report);
    } else {
      write_json(out, report);
      out << "\n";
    }
    if (files_out[i]) {
      std::string error = files_out[i]->close();
      if (!error.empty()) {
        std::cerr << "logrx: cannot write " << escape_for_terminal(outputs[i].path) << ": "
                  << error << "\n";
        status = kExitError;
      }
    }
  }
  std::cout.flush();
  if (status != kExitClean) return status;

  if (input_error) return kExitError;
  if (options.fail_on == "never") return kExitClean;
  Severity threshold = *parse_severity(options.fail_on);
  for (const Finding& finding : report.findings)
    if ((options.all_runs || !finding.stale) && finding.severity >= threshold) return kExitFindings;
  // Findings beyond the stored cap still count through the summary.
  if (report.summary.worst_severity && *report.summary.worst_severity >= threshold &&
      report.summary.findings_dropped > 0)
    return kExitFindings;
  return kExitClean;
}

}  // namespace logrx::cli
