// SPDX-License-Identifier: MIT
// Prometheus metrics for `watch` and `run`: an HTTP /metrics endpoint
// (--metrics-listen, cpp-httplib when built with it) and a file for
// node_exporter's textfile collector (--metrics-file). The registry is
// logrx::MetricsRegistry; this is only its transport.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "logrx/analyzer.h"
#include "logrx/metrics.h"

namespace logrx::cli {

struct MetricsOptions {
  std::string listen;  // HOST:PORT ("[::1]:9464"); port 0 picks a free one
  std::string file;    // textfile collector path (*.prom), replaced atomically
  std::vector<std::string> labels;  // NAME=VALUE added to every sample
};

void add_metrics_options(CLI::App& command, MetricsOptions& options);

// True when this build can serve --metrics-listen.
bool metrics_http_available();

// Unix time now, with sub-second precision.
double unix_now();

// This machine's name, for the "host" field of log records.
std::string host_name();

class MetricsExporter {
 public:
  explicit MetricsExporter(MetricsOptions options);
  ~MetricsExporter();  // stops the server and writes the file a last time
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  // Binds the listener and writes the first file; prints where it serves.
  // False (with the reason printed to stderr) when it cannot.
  bool start();

  bool enabled() const { return !options_.listen.empty() || !options_.file.empty(); }

  void count_finding(const Finding& finding);

  // A new analyzer (a rotated file, a restarted server) begins: lines it
  // reports are counted on top of the previous ones.
  void begin_stream();

  // Copies the analyzer's state (lines, server, phase, ready, budget) into
  // the registry and rewrites the metrics file when anything changed.
  // Lines are counted on every call; the launch's state and budget are read
  // at most every 100 ms (a supervisor calls this on every read), unless
  // `now` (after finish(), so the last state is exported).
  void update(const Analyzer& analyzer, bool now = false);

 private:
  void write_file();

  MetricsOptions options_;
  MetricsRegistry registry_;
  std::uint64_t stream_lines_ = 0;  // lines of the current analyzer already counted
  std::uint64_t written_version_ = UINT64_MAX;
  bool file_error_reported_ = false;
  std::chrono::steady_clock::time_point last_write_{};
  std::chrono::steady_clock::time_point last_state_{};
  struct Server;
  std::unique_ptr<Server> server_;
};

}  // namespace logrx::cli
