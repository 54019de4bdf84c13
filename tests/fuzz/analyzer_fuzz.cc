// SPDX-License-Identifier: MIT
// Fuzzes the analyzer as a whole: any bytes, fed in chunks of any size, then
// finish(), with the built-in rulebook and small caps. Beyond "no crash":
// every cap of AnalyzerOptions holds in the report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "logrx/analyzer.h"
#include "logrx/output.h"

namespace {

const logrx::Rulebook& rulebook() {
  static const logrx::Rulebook book = [] {
    logrx::Diagnostics errors;
    auto loaded = logrx::Rulebook::load({{LOGRX_RULES_DIR}}, errors);
    if (!loaded) __builtin_trap();
    return *loaded;
  }();
  return book;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // The first two bytes pick the chunk size and the caps, so that both stay explored.
  std::size_t chunk = 1 + data[0] % 61;
  std::size_t small = 1 + data[1] % 5;
  std::string_view input(reinterpret_cast<const char*>(data + 2), size - 2);
  logrx::AnalyzerOptions options;
  options.max_line_bytes = 64 + small * 200;
  options.max_findings = small * 3;
  options.max_finding_bytes = small * 4096;
  options.max_event_lines = small * 4;
  options.max_held_findings = small;
  options.max_held_bytes = small * 2048;
  options.max_facts_per_run = small * 4;
  options.max_fact_bytes_per_run = small * 512;
  options.max_diagnostics = small;
  options.max_ranks_per_finding = small;
  options.max_runs = small;
  options.check_templates = (data[1] & 0x80) != 0;
  logrx::Analyzer analyzer(rulebook(), options);
  std::size_t seen = 0;
  analyzer.on_finding([&seen](const logrx::Finding&) { ++seen; });
  for (std::size_t i = 0; i < input.size(); i += chunk) analyzer.feed(input.substr(i, chunk));
  logrx::Report report = analyzer.finish();

  const logrx::Summary& s = report.summary;
  if (report.findings.size() > options.max_findings + 64) __builtin_trap();  // + end-of-run rules
  if (report.diagnostics.size() > options.max_diagnostics) __builtin_trap();
  if (report.runs.size() > options.max_runs) __builtin_trap();
  if (s.findings < report.findings.size()) __builtin_trap();
  for (const logrx::Finding& f : report.findings) {
    if (f.ranks.size() > options.max_ranks_per_finding) __builtin_trap();
    for (const logrx::EvidenceLine& e : f.evidence)
      if (e.text.size() > options.max_line_bytes * 2 + 1) __builtin_trap();
  }
  for (const logrx::RunInfo& run : report.runs) {
    if (run.facts.size() > options.max_facts_per_run) __builtin_trap();
    std::size_t bytes = 0;
    for (const auto& [name, fact] : run.facts) bytes += name.size() + fact.text.size();
    if (bytes > options.max_fact_bytes_per_run) __builtin_trap();
  }
  // Every output format takes whatever the analyzer produced.
  std::string json = logrx::to_json(report);
  if (json.empty()) __builtin_trap();
  return 0;
}
