// SPDX-License-Identifier: MIT
// The analyzer: reads one log stream and produces findings.
//
//   logrx::Analyzer analyzer(book, {.stream_name = "server.log"});
//   analyzer.on_finding([](const logrx::Finding& f) { ... });
//   while (read(fd, buf, n) > 0) analyzer.feed({buf, n});
//   logrx::Report report = analyzer.finish();
//
// Thread-safety: an Analyzer belongs to one stream; use one per thread. Many
// analyzers may share one Rulebook. The finding callback runs synchronously
// inside feed()/finish() and must not call back into the same Analyzer.
#pragma once

#include <cstddef>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "logrx/finding.h"
#include "logrx/line.h"
#include "logrx/rulebook.h"

namespace logrx {

struct AnalyzerOptions {
  std::string stream_name = "<stdin>";
  std::size_t max_line_bytes = 64 * 1024;  // longer lines keep this prefix
  std::size_t max_findings = 10000;        // stored findings; the rest are counted
  std::size_t max_event_lines = 2000;      // a traceback longer than this is cut into pieces
  // The intended run, to detect a log that describes another process:
  std::string launch_command;       // the command the operator believes produced the log
  std::string since;                // launch time, ISO 8601 ("2026-11-29T09:30:00[Z|+01:00]")
  std::optional<std::int64_t> file_mtime;  // the log file's modification time (Unix seconds)
  // The input's size when known (a regular file). A large one builds the
  // block prefilter at once instead of after the first serving traffic
  // (short logs do not pay for it): reports are the same either way.
  std::optional<std::uint64_t> input_bytes;
  // The year of timestamps that print none (vLLM's "12-25 04:49:58", syslog's
  // "Dec 25 04:49:58"), for Finding::timestamp_iso. Unset, it is inferred: from
  // the stream's own dated lines (a shipper's envelope, another dialect), else
  // from file_mtime or the current time, a date after which is the year before.
  std::optional<int> year;
  // A stream that starts with the magic number of gzip, zstd, xz or bzip2 is
  // decoded before anything else (Summary::compression names the format);
  // false reads every stream as it is.
  bool decompress = true;
  bool include_silent = false;      // report fact-only rules too (rule testing)
  bool redact = true;               // replace secrets before anything sees a line
  std::string ready_pattern;        // RE2: a line matching it means the server is ready
  // The server that writes the stream ("vllm", "ollama", ...) when the caller
  // knows it; "" tells it from the lines. Gives a header-less log its
  // server's remediation.
  std::string server;
  // Report a title or fix explanation with a reference the finding could not
  // fill as a diagnostic (rule testing: `rules test` fails on it).
  bool check_templates = false;
  // Every collection the analyzer keeps for a stream is capped, so that
  // memory stays bounded whatever the input; what a cap leaves out is
  // counted in Summary::capped (and findings in Summary::findings_dropped).
  std::size_t max_runs = 1000;      // launches remembered in Report::runs; older ones are dropped
  // poll(): a multi-line event (a traceback) still open after this long
  // without a line is closed, so its findings are reported while the process
  // that wrote it hangs.
  std::chrono::milliseconds quiet_period{2000};
  std::size_t max_finding_bytes = 32u << 20;  // text held by stored findings; the rest are counted
  // Findings wait for their traceback to close (to learn its range and
  // exceptions); past either cap they are stored at once, without them.
  std::size_t max_held_findings = 1000;
  std::size_t max_held_bytes = 8u << 20;
  std::size_t max_facts_per_run = 1000;         // distinct fact names per launch
  std::size_t max_fact_bytes_per_run = 256u << 10;  // names and values of a launch's facts
  std::size_t max_diagnostics = 1000;           // Report::diagnostics
  std::size_t max_ranks_per_finding = 1024;     // Finding::ranks of a merged finding
};

// Parses an ISO 8601 time ("2026-11-29T09:30:00", optional fraction and zone)
// into Unix seconds; local time unless a zone is given.
std::optional<std::int64_t> parse_iso8601(std::string_view text);

class Analyzer {
 public:
  using FindingCallback = std::function<void(const Finding&)>;

  explicit Analyzer(Rulebook rulebook, AnalyzerOptions options = {});
  ~Analyzer();
  Analyzer(Analyzer&&) noexcept;
  Analyzer& operator=(Analyzer&&) noexcept;
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // Called for each finding as soon as it is known.
  void on_finding(FindingCallback callback);

  // Called for every line no rule matched (rule authors' gap search).
  using LineCallback = std::function<void(const LineEvent&)>;
  void on_unmatched_line(LineCallback callback);

  // Feeds raw bytes; lines may span calls.
  void feed(std::string_view bytes);

  // feed() for bytes that are all in memory at once (a large piece of a
  // regular file). With threads > 1 (0: the cores available), the stateless
  // work on them (the block prefilter, parsing the headers of lines no rule
  // can match) runs on that many threads ahead of the analysis, which stays
  // in line order, so the report is exactly the one feed(bytes) gives. The
  // bytes must stay valid until the call returns; extra memory is bounded
  // (a few MiB per thread) whatever their size. Small inputs, compressed
  // ones and streams in a shipper's envelope are simply fed.
  void feed_all(std::string_view bytes, unsigned threads = 0);

  // Feeds one complete line (without its terminator). Like feed(), it
  // removes a log shipper's envelope the stream turns out to have.
  void feed_line(std::string_view line);

  // Tells the analyzer that the process writing the stream has ended (a
  // supervisor saw it exit). A launch that never became ready is then known
  // to have died, rather than to be still starting. Call before finish().
  void note_exit();

  // Closes a multi-line event (a traceback) that is still waiting for more
  // lines, reporting the findings held for it now. A line that arrives later
  // starts a new event. For a stream that has gone quiet (a hung server).
  void flush_idle();

  // The analyzer's clock: when no line has been fed for
  // options.quiet_period before `now`, flush_idle(). Returns true when it
  // closed an event. Call it periodically (a supervisor's poll loop).
  bool poll(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

  // Ends the stream and returns the report. Precondition: called once.
  Report finish();

  // Lines seen so far.
  std::uint64_t lines() const noexcept;

  // Of those, lines no regex ran on because the block prefilter proved that
  // no rule can match them (a statistic for benchmarks and tests).
  std::uint64_t prefiltered_lines() const noexcept;

  // The current launch: its phase ("launching", ..., "exited"), whether it
  // reached ready, and the server seen in its output ("sglang", "vllm", ...).
  std::string phase() const;
  bool ready() const noexcept;
  std::string server() const;

  // False when options.ready_pattern does not compile; the error says why.
  bool ok(std::string* error = nullptr) const;

  // The current launch as Report::runs will state it (facts so far), for
  // live views such as the budget gauges of `watch --metrics-listen`.
  RunInfo current_run() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace logrx
