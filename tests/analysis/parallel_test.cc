// SPDX-License-Identifier: MIT
// Analyzer::feed_all surveys blocks on several threads ahead of the
// analysis; the report must be exactly the one feed() gives, on every corpus
// log and on long generated serving logs, whatever the number of threads.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "analysis/block_survey.h"
#include "logrx/analyzer.h"
#include "logrx/logrx.h"
#include "logrx/output.h"
#include "match/rulebook_impl.h"
#include "support/test_support.h"

using namespace logrx;

namespace {

// Sets feed_all's grain for one scope (the grain is process-wide).
class Grain {
 public:
  Grain(std::size_t window, std::size_t from, bool from_start) : saved_(detail::parallel_grain()) {
    detail::parallel_grain() = detail::ParallelGrain{window, from, from_start};
  }
  ~Grain() { detail::parallel_grain() = saved_; }
  Grain(const Grain&) = delete;
  Grain& operator=(const Grain&) = delete;

 private:
  detail::ParallelGrain saved_;
};

struct Scan {
  std::string json;
  std::uint64_t prefiltered = 0;
};

Scan scan_fed(const Rulebook& book, const std::string& text, const AnalyzerOptions& options) {
  Analyzer analyzer(book, options);
  analyzer.feed(text);
  Scan out;
  out.json = to_json(analyzer.finish());
  out.prefiltered = analyzer.prefiltered_lines();
  return out;
}

// In pieces, the way the CLI reads a file: a line may span two calls.
Scan scan_all(const Rulebook& book, const std::string& text, const AnalyzerOptions& options,
              unsigned threads, std::size_t piece) {
  Analyzer analyzer(book, options);
  for (std::size_t at = 0; at < text.size(); at += piece)
    analyzer.feed_all(std::string_view(text).substr(at, piece), threads);
  Scan out;
  out.json = to_json(analyzer.finish());
  out.prefiltered = analyzer.prefiltered_lines();
  return out;
}

// Hours of serving traffic from SGLang and vLLM, one line each interleaved,
// with rare problems: warnings some rule knows, error records, tracebacks
// (raw and in vLLM records), a restart whose clock goes back, an over-long
// line, escaped quotes and a line that is cut mid-word.
std::string serving_traffic(unsigned seed, std::size_t bytes) {
  std::mt19937 rng(seed);
  std::ostringstream out;
  out << "[2026-07-01 15:18:40] server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, "
         "chunked_prefill_size=8192, tp_size=1)\n"
      << "[2026-07-01 15:19:56] max_total_num_tokens=431011, chunked_prefill_size=8192, "
         "max_prefill_tokens=16384, max_running_requests=4097, context_len=131072, "
         "available_gpu_mem=8.71 GB\n"
      << "[2026-07-01 15:19:59] The server is fired up and ready to roll!\n";
  const std::string rare[] = {
      "[2026-07-01 16:00:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, "
      "#new_token_ratio: 0.4123 -> 0.7000",
      "[2026-07-01 16:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"scheduler.py\", line 1, in event_loop\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.19 GiB of which 1.02 GiB is free.",
      "(EngineCore_DP0 pid=79) WARNING 07-01 16:00:00 [scheduler.py:1754] Sequence group cmpl-1 is "
      "preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. "
      "total_num_cumulative_preemption=51",
      "(APIServer pid=1) ERROR 07-01 16:00:00 [serving_chat.py:222] Error in preprocessing prompt inputs",
      "(EngineCore_DP0 pid=79) Process EngineCore_DP0:\n(EngineCore_DP0 pid=79) Traceback (most recent "
      "call last):\n(EngineCore_DP0 pid=79)   File \"x.py\", line 2, in y\n(EngineCore_DP0 pid=79) "
      "ValueError: something unexpected",
      "[2026-07-01 15:20:00] The server is fired up and ready to roll!",  // a restart, back in time
      "[2026-07-01 16:00:00 TP0] Decode batch, #running-req: 1, " + std::string(70000, 'x'),
      "[2026-07-01 16:00:00] Received \\\"quoted\\\" text",
      "[2026-07-01 16:00:00 TP0] Load weight end. avail mem=12.",
  };
  int minute = 0;
  while (static_cast<std::size_t>(out.tellp()) < bytes) {
    for (int i = 0; i < 1000; ++i) {
      if (rng() % 3000 == 0) {
        out << rare[rng() % (sizeof rare / sizeof rare[0])] << "\n";
      } else if (i % 2 == 0) {
        out << "[2026-07-01 16:" << (10 + minute % 50) << ":00 TP" << i % 4
            << "] Decode batch, #running-req: " << i % 50 << ", #token: " << i * 7
            // Now and then a usage some rule reads (a line matched amid light ones).
            << ", token usage: " << (i % 97 == 0 ? "0.9" : "0.3") << i % 10
            << ", cuda graph: True, gen throughput (token/s): 1234.5, "
            << "#queue-req: 0, \n";
      } else if (i % 5 == 1) {
        out << "(APIServer pid=1) INFO:     10.0.3.17:4" << i << " - \"POST /v1/chat/completions "
            << "HTTP/1.1\" 200 OK\n";
      } else {
        out << "(APIServer pid=1) INFO 07-01 16:" << (10 + minute % 50) << ":00 [loggers.py:248] "
            << "Engine 000: Avg prompt throughput: " << i % 900 << ".1 tokens/s, Avg generation "
            << "throughput: 12.5 tokens/s, Running: " << i % 40 << " reqs, Waiting: 0 reqs, GPU KV "
            << "cache usage: 41.2%, Prefix cache hit rate: 12.0%\n";
      }
    }
    ++minute;
  }
  return out.str();
}

}  // namespace

TEST_CASE("feed_all on several threads reports what feed does, on long serving logs",
          "[analysis][parallel]") {
  Rulebook book = test::load_builtin();
  AnalyzerOptions options;
  options.stream_name = "server.log";
  options.year = 2026;
  for (unsigned seed : {1u, 2u}) {
    std::string log = serving_traffic(seed, std::size_t{6} << 20);
    Scan expected = scan_fed(book, log, options);
    CHECK(expected.json == to_json(test::scan_line_by_line(book, log, options)));
    // The comparison means something only if most lines took the light path.
    REQUIRE(expected.prefiltered > 25000);
    for (unsigned threads : {2u, 3u, 4u}) {
      INFO("seed " << seed << ", " << threads << " threads");
      Scan parallel = scan_all(book, log, options, threads, log.size());
      CHECK(parallel.json == expected.json);
      // Windows cut blocks elsewhere, so the light path takes other lines.
      CHECK(parallel.prefiltered > 25000);
    }
    // Pieces that cut lines, as a file is read.
    INFO("seed " << seed << ", pieces of 5 MiB + 3");
    CHECK(scan_all(book, log, options, 2, (std::size_t{5} << 20) + 3).json == expected.json);
    // The same with a fine grain: many windows, surveys from the start.
    Grain fine(20000, 0, true);
    CHECK(scan_all(book, log, options, 3, log.size()).json == expected.json);
    // A log that ends without a newline, mid-line.
    std::string cut = log.substr(0, log.size() - 37);
    CHECK(scan_all(book, cut, options, 2, cut.size()).json == scan_fed(book, cut, options).json);
  }
}

// Surveys made ahead skip the line-by-line check of rules the stream has
// retired; a restart revives them, and the surveys made before it must not
// hide their lines from the new launch.
TEST_CASE("feed_all matches rules a restart revives, in windows surveyed before it",
          "[analysis][parallel]") {
  Rulebook book = test::load_builtin();
  AnalyzerOptions options;
  options.stream_name = "server.log";
  options.year = 2026;
  auto launch = [](std::ostringstream& out, int hour) {
    out << "[2026-07-01 " << hour << ":00:00] server_args=ServerArgs(model_path='m', "
           "mem_fraction_static=0.88, tp_size=1)\n"
        << "[2026-07-01 " << hour << ":00:30] max_total_num_tokens=431011, chunked_prefill_size=8192, "
           "max_prefill_tokens=16384, max_running_requests=4097, context_len=131072, "
           "available_gpu_mem=8.71 GB\n"
        << "[2026-07-01 " << hour << ":01:00] The server is fired up and ready to roll!\n";
  };
  auto decode = [](std::ostringstream& out, int hour, int i, const char* usage) {
    out << "[2026-07-01 " << hour << ":" << (10 + i / 1000 % 50) << ":00 TP0] Decode batch, "
        << "#running-req: " << i % 50 << ", #token: " << i * 7 << ", token usage: " << usage
        << ", cuda graph: True, gen throughput (token/s): 1234.5, #queue-req: 0, \n";
    out << "(APIServer pid=1) INFO:     10.0.3.17:4" << i % 1000 << " - \"POST /v1/chat/completions "
        << "HTTP/1.1\" 200 OK\n";
  };
  std::ostringstream out;
  launch(out, 10);
  // The first launch's usage retires the statistics rules early on.
  for (int i = 0; i < 30000; ++i) decode(out, 10, i, i % 1000 == 5 ? "0.95" : "0.31");
  launch(out, 11);
  // The second launch's high usage comes right after its start, within
  // the windows surveyed ahead while the first launch still had them retired.
  // Next to it, a line with the words of a rule still live but not its
  // pattern: the survey checks that rule line by line and finds nothing.
  for (int i = 0; i < 30000; ++i) {
    decode(out, 11, i, i == 400 ? "0.97" : "0.32");
    if (i == 401) out << "[2026-07-01 11:10:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: none\n";
  }
  std::string log = out.str();
  Scan expected = scan_fed(book, log, options);
  Report report = test::scan_line_by_line(book, log, options);
  REQUIRE(expected.json == to_json(report));
  int nearly_full = 0;
  for (const Finding& f : report.findings)
    if (f.rule_id == "sglang.memory.kv-cache-nearly-full") ++nearly_full;
  // Both launches say so: the comparison below covers the revived rule.
  REQUIRE(nearly_full == 2);
  for (std::size_t window : {std::size_t{20000}, std::size_t{200000}}) {
    Grain grain(window, 0, false);
    for (unsigned threads : {2u, 4u}) {
      INFO(threads << " threads, windows of " << window);
      CHECK(scan_all(book, log, options, threads, log.size()).json == expected.json);
    }
  }
}

TEST_CASE("feed_all on several threads reports what feed does, on every corpus log",
          "[analysis][parallel]") {
  Rulebook book = test::load_builtin();
  namespace fs = std::filesystem;
  // Windows of a few blocks and surveys from the first, so that even a short
  // log is cut into windows surveyed on other threads; a prefilter already
  // built is used from the first serving block on.
  Grain fine(20000, 0, true);
  REQUIRE(RulebookAccess::impl(book).has_prefilter());
  // Under AddressSanitizer one log in three (the normal build compares every
  // one): what the sanitizer looks for, memory errors on the threads' paths,
  // each third of the corpus walks too, and the whole corpus under it took
  // most of the sanitized suite's time.
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kStride = 3;
#else
  constexpr int kStride = 1;
#endif
  int logs = 0;
  int seen = 0;
  for (const auto& entry : fs::recursive_directory_iterator(LOGRX_SOURCE_DIR "/corpus")) {
    if (entry.path().extension() != ".log") continue;
    if (seen++ % kStride != 0) continue;
    // Long enough to have windows: the log, serving traffic, the log again.
    std::string log = test::read_file(entry.path());
    std::string longer = log + "\n" + serving_traffic(7, 60000) + log;
    AnalyzerOptions options;
    options.stream_name = "server.log";
    options.year = 2026;
    for (const std::string* input : {&log, &longer}) {
      INFO(entry.path().string() << (input == &log ? "" : " with serving traffic"));
      std::string expected = scan_fed(book, *input, options).json;
      CHECK(scan_all(book, *input, options, 3, input->size()).json == expected);
    }
    ++logs;
  }
  CHECK(logs >= 500 / kStride);
}

TEST_CASE("feed_all leaves compressed input and shippers' envelopes to the sequential path",
          "[analysis][parallel]") {
  Rulebook book = test::load_builtin();
  Grain fine(20000, 0, false);
  AnalyzerOptions options;
  options.year = 2026;
  std::string log = serving_traffic(3, 300000);
  // Docker's json-file: every line in an envelope.
  std::string wrapped;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    std::string escaped;
    for (char c : line) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    wrapped += "{\"log\":\"" + escaped + "\\n\",\"stream\":\"stdout\",\"time\":\"2026-07-01T16:00:00.000000000Z\"}\n";
  }
  CHECK(scan_all(book, wrapped, options, 2, wrapped.size()).json == scan_fed(book, wrapped, options).json);
}

TEST_CASE("The C API's feed_all reports what its feed does", "[analysis][parallel][capi]") {
  char* error = nullptr;
  const char* dirs[] = {LOGRX_SOURCE_DIR "/rules"};
  logrx_rulebook* book = logrx_rulebook_load(dirs, 1, 0, &error);
  REQUIRE(book != nullptr);
  std::string log = serving_traffic(5, std::size_t{3} << 20);
  auto report_of = [&](unsigned threads) {
    logrx_analyzer* an = logrx_analyzer_new(book, "server.log", nullptr, &error);
    REQUIRE(an != nullptr);
    int fed = threads == 0 ? logrx_analyzer_feed(an, log.data(), log.size())
                           : logrx_analyzer_feed_all(an, log.data(), log.size(), threads);
    CHECK(fed == 0);
    char* json = logrx_analyzer_finish(an);
    REQUIRE(json != nullptr);
    std::string text(json);
    logrx_free(json);
    CHECK(logrx_analyzer_feed_all(an, "x\n", 2, 2) == -1);  // finished
    logrx_analyzer_free(an);
    return text;
  };
  std::string expected = report_of(0);
  CHECK(report_of(2) == expected);
  CHECK(report_of(4) == expected);
  CHECK(logrx_analyzer_feed_all(nullptr, "x", 1, 2) == -1);
  logrx_rulebook_free(book);
}
