// SPDX-License-Identifier: MIT
// The block prefilter is an optimisation: scanning a stream in large chunks
// (blocks whose lines no rule can match are not matched) must report exactly
// what scanning it line by line reports.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "logrx/analyzer.h"
#include "logrx/output.h"
#include "match/rulebook_impl.h"
#include "support/test_support.h"

using namespace logrx;

namespace {

std::string json_of(Report report) {
  return to_json(report);
}

std::string scan_line_by_line(const Rulebook& book, const std::string& text) {
  AnalyzerOptions options;
  options.stream_name = "s";
  return json_of(test::scan_line_by_line(book, text, options));
}

std::string scan_in_chunks(const Rulebook& book, const std::string& text, std::size_t chunk,
                           std::uint64_t* prefiltered = nullptr) {
  AnalyzerOptions options;
  options.stream_name = "s";
  Analyzer analyzer(book, options);
  for (std::size_t at = 0; at < text.size(); at += chunk)
    analyzer.feed(std::string_view(text).substr(at, chunk));
  if (prefiltered != nullptr) *prefiltered = analyzer.prefiltered_lines();
  return json_of(analyzer.finish());
}

// A long serving log: start-up, then batch statistics and access lines with
// rare problem lines and a traceback at random places.
std::string serving_log(unsigned seed) {
  std::mt19937 rng(seed);
  std::ostringstream out;
  out << "[2026-07-01 15:18:40] server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, "
         "chunked_prefill_size=8192, tp_size=1)\n"
      << "[2026-07-01 15:19:56] max_total_num_tokens=431011, chunked_prefill_size=8192, "
         "max_prefill_tokens=16384, max_running_requests=4097, context_len=131072, "
         "available_gpu_mem=8.71 GB\n"
      << "[2026-07-01 15:19:59] The server is fired up and ready to roll!\n";
  const char* rare[] = {
      "[2026-07-01 16:00:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, "
      "#new_token_ratio: 0.4123 -> 0.7000",
      "[2026-07-01 16:00:00] The input (140000 tokens) is longer than the model's context length "
      "(131072 tokens).",
      "[2026-07-01 16:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"scheduler.py\", line 1, in event_loop\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.19 GiB of which 1.02 GiB is free.",
  };
  for (int i = 0; i < 6000; ++i) {
    if (rng() % 700 == 0) {
      out << rare[rng() % 3] << "\n";
    } else if (i % 4 == 0) {
      out << "[2026-07-01 16:00:00] INFO:     10.0.3.17:4" << i << " - \"POST /v1/chat/completions "
          << "HTTP/1.1\" 200 OK\n";
    } else {
      out << "[2026-07-01 16:00:00 TP0] Decode batch, #running-req: " << i % 50 << ", #token: "
          << i * 7 << ", token usage: 0.3" << i % 10 << ", cuda graph: True, gen throughput "
          << "(token/s): 1234.5, #queue-req: 0, \n";
    }
  }
  return out.str();
}

// The same for vLLM's format: process prefixes, levels, ERROR records that
// open events, raw traceback lines, a timestamp that goes back (a restart).
std::string vllm_serving_log(unsigned seed) {
  std::mt19937 rng(seed);
  std::ostringstream out;
  out << "(APIServer pid=1) INFO 12-25 04:48:38 [api_server.py:1351] vLLM API server version 0.13.0\n"
      << "(APIServer pid=1) INFO 12-25 04:48:38 [utils.py:253] non-default args: {'model': 'Qwen/Qwen3-8B', "
         "'gpu_memory_utilization': 0.9, 'max_num_batched_tokens': 8192}\n"
      << "(APIServer pid=1) INFO:     Application startup complete.\n";
  const char* rare[] = {
      "(EngineCore_DP0 pid=79) ERROR 12-25 05:00:00 [core.py:710] EngineCore encountered a fatal error.\n"
      "(EngineCore_DP0 pid=79) ERROR 12-25 05:00:00 [core.py:710] Traceback (most recent call last):\n"
      "(EngineCore_DP0 pid=79) ERROR 12-25 05:00:00 [core.py:710]   File \"core.py\", line 1, in run\n"
      "(EngineCore_DP0 pid=79) ERROR 12-25 05:00:00 [core.py:710] torch.OutOfMemoryError: CUDA out of "
      "memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB is free.",
      "(EngineCore_DP0 pid=79) Process EngineCore_DP0:\n(EngineCore_DP0 pid=79) Traceback (most recent call "
      "last):\n(EngineCore_DP0 pid=79)   File \"x.py\", line 2, in y\n(EngineCore_DP0 pid=79) ValueError: "
      "something unexpected",
      "(APIServer pid=1) ERROR 12-25 05:00:00 [serving_chat.py:222] This model's maximum context length is "
      "32768 tokens. However, you requested 40960 output tokens and your prompt contains at least 1024 "
      "input tokens, for a total of at least 41984 tokens.",
      "(APIServer pid=1) INFO 12-25 03:00:00 [api_server.py:1351] vLLM API server version 0.13.0",
  };
  for (int i = 0; i < 6000; ++i) {
    int minute = 10 + (i / 600);
    if (rng() % 600 == 0) {
      out << rare[rng() % 4] << "\n";
    } else if (i % 3 == 0) {
      out << "(APIServer pid=1) INFO:     10.0.3.17:4" << i << " - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n";
    } else {
      out << "(APIServer pid=1) INFO 12-25 05:" << minute << ":00 [loggers.py:248] Engine 000: Avg prompt "
          << "throughput: " << i % 900 << ".1 tokens/s, Avg generation throughput: 12.5 tokens/s, Running: "
          << i % 40 << " reqs, Waiting: 0 reqs, GPU KV cache usage: 41.2%, Prefix cache hit rate: 12.0%\n";
    }
  }
  return out.str();
}

// Chunked scans of a long serving log report exactly what the line-by-line
// scan does; the comparison means something only if most lines took the
// light path.
void check_chunked_equals_line_by_line(const Rulebook& book, const std::string& log) {
  std::string expected = scan_line_by_line(book, log);
  for (std::size_t chunk : {std::size_t{1} << 20, std::size_t{65536}, std::size_t{4093}}) {
    INFO("chunks of " << chunk << " bytes");
    std::uint64_t prefiltered = 0;
    CHECK(scan_in_chunks(book, log, chunk, &prefiltered) == expected);
    CHECK(prefiltered > 3000);
  }
}

}  // namespace

TEST_CASE("Chunked scanning with the block prefilter reports what line-by-line scanning does",
          "[analysis][prefilter]") {
  Rulebook book = test::load_builtin();
  for (unsigned seed : {1u, 2u, 3u}) check_chunked_equals_line_by_line(book, serving_log(seed));
}

TEST_CASE("vLLM-format serving logs give the same report in chunks and line by line",
          "[analysis][prefilter]") {
  Rulebook book = test::load_builtin();
  for (unsigned seed : {4u, 5u, 6u}) check_chunked_equals_line_by_line(book, vllm_serving_log(seed));
}

// The light path runs only once the run is serving, so the markers of the
// phases before (and of serving itself) have nothing left to do there; a
// shutdown's still moves the run to "exited", in a block of healthy traffic.
TEST_CASE("A shutdown amid serving traffic the prefilter clears still ends the run",
          "[analysis][prefilter]") {
  Rulebook book = test::load_builtin();
  std::string log = serving_log(7);
  log += "[2026-07-01 17:00:00] INFO:     Shutting down\n";
  for (int i = 0; i < 40; ++i)
    log += "[2026-07-01 17:00:01 TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.01, "
           "cuda graph: True, gen throughput (token/s): 12.5, #queue-req: 0, \n";
  Report report = test::scan_line_by_line(book, log, AnalyzerOptions{});
  REQUIRE(!report.runs.empty());
  REQUIRE(report.runs.back().phase == "exited");
  std::uint64_t prefiltered = 0;
  CHECK(scan_in_chunks(book, log, 1 << 16, &prefiltered) == scan_line_by_line(book, log));
  CHECK(prefiltered > 3000);
}

// An error line in every block: the lines around it still take the light
// path (the block is split around the line the structure and lexical tiers
// read, and the light path takes over once the event it opened is closed),
// and the report is the line-by-line one. Chunks of 4093 bytes start blocks
// inside a line.
TEST_CASE("Blocks with an error line take the light path around it", "[analysis][prefilter]") {
  Rulebook book = test::load_builtin();
  // Built ahead: used from the first serving block on.
  REQUIRE(RulebookAccess::impl(book).has_prefilter());
  std::mt19937 rng(11);
  std::ostringstream out;
  out << "[2026-07-01 15:19:59] The server is fired up and ready to roll!\n"
      << "(APIServer pid=1) INFO:     Application startup complete.\n";
  const char* errors[] = {
      // A vLLM ERROR record: an event the same source continues.
      "(APIServer pid=1) ERROR 12-25 05:00:00 [serving_chat.py:222] Error in preprocessing prompt inputs",
      // An SGLang exception with its raw traceback.
      "[2026-07-01 16:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"scheduler.py\", line 1, in event_loop\n"
      "RuntimeError: something went wrong in the scheduler",
      // An error word at INFO level.
      "[2026-07-01 16:00:00 TP1] Decode out of memory happened. #retracted_reqs: 2, #new_token_ratio: 0.5 -> 0.7",
      // A long line a terminal may have cut, and its headerless rest.
      "[2026-07-01 16:00:00] Received a request the tokenizer could not handle, the request",
      // A traceback pasted indented as a whole.
      "  Traceback (most recent call last):\n"
      "    File \"scheduler.py\", line 1, in event_loop\n"
      "  RuntimeError: something went wrong in the scheduler",
  };
  int lines = 0;
  for (int i = 0; i < 8000; ++i) {
    if (i % 40 == 17) {
      const char* line = errors[rng() % 5];
      out << line << "\n";
      if (line == errors[3]) out << "was dropped after the first chunk failed\n";
    } else if (i % 3 == 0) {
      out << "(APIServer pid=1) INFO:     10.0.3.17:4" << i << " - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n";
    } else {
      out << "[2026-07-01 16:00:00 TP0] Decode batch, #running-req: " << i % 50 << ", #token: " << i * 7
          << ", token usage: 0.3" << i % 10 << ", cuda graph: True, gen throughput (token/s): 1234.5, "
          << "#queue-req: 0, \n";
    }
    ++lines;
  }
  std::string log = out.str();
  std::string expected = scan_line_by_line(book, log);
  for (std::size_t chunk : {std::size_t{1} << 20, std::size_t{4093}}) {
    INFO("chunks of " << chunk << " bytes");
    std::uint64_t prefiltered = 0;
    CHECK(scan_in_chunks(book, log, chunk, &prefiltered) == expected);
    // Every block has an error line: matched in full, none would be.
    UNSCOPED_INFO("prefiltered " << prefiltered);
    CHECK(prefiltered > static_cast<std::uint64_t>(lines) * 9 / 10);
  }
}

TEST_CASE("Every corpus log gives the same report in chunks and line by line",
          "[analysis][prefilter]") {
  Rulebook book = test::load_builtin();
  // A prefilter already built is used from the first serving block on, so
  // even a short log takes the light path where it can.
  REQUIRE(RulebookAccess::impl(book).has_prefilter());
  namespace fs = std::filesystem;
  int logs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(LOGRX_SOURCE_DIR "/corpus")) {
    if (entry.path().extension() != ".log") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string log = text.str();
    // Line-by-line scanning cannot see a missing final newline.
    if (log.empty() || log.back() != '\n') continue;
    INFO(entry.path().string());
    CHECK(scan_in_chunks(book, log, 1 << 16) == scan_line_by_line(book, log));
    ++logs;
  }
  CHECK(logs >= 10);
}

// Colour codes written out as text ("[1;36m" whose ESC a paste lost, cat -v's
// "^[[", rsyslog's "#033[") are plain ASCII to the block checks; only
// sanitize_line removes them, so lines holding them take the full path.
TEST_CASE("Lines with colour codes written out as text take the full path", "[analysis][prefilter]") {
  Rulebook book = test::load_builtin();
  REQUIRE(RulebookAccess::impl(book).has_prefilter());
  std::ostringstream out;
  out << "[2026-07-01 15:19:59] The server is fired up and ready to roll!\n";
  const char* coloured[] = {
      "[1;36m(EngineCore_DP0 pid=9)[0;0m ERROR 07-01 16:00:00 [core.py:1] torch.OutOfMemoryError: "
      "CUDA out of memory. Tried to allocate 2.00 GiB.",
      "^[[1;36m(EngineCore_DP0 pid=9)^[[0;0m INFO 07-01 16:00:00 [loggers.py:1] Engine 000: "
      "Avg prompt throughput: 10.0 tokens/s, GPU KV cache usage: 99.9%, Prefix cache hit rate: 0.0%^M",
      "#033[32mINFO#033[0m:     10.0.3.17:40000 - \"POST /v1/completions HTTP/1.1\" 200 OK",
  };
  int lines = 0;
  for (int i = 0; i < 6000; ++i) {
    if (i % 50 == 7) {
      out << coloured[(i / 50) % 3] << "\n";
    } else {
      out << "[2026-07-01 16:00:00 TP0] Decode batch, #running-req: " << i % 50 << ", #token: " << i * 7
          << ", token usage: 0.3" << i % 10 << ", cuda graph: True, gen throughput (token/s): 1234.5, "
          << "#queue-req: 0, \n";
    }
    ++lines;
  }
  std::string log = out.str();
  std::string expected = scan_line_by_line(book, log);
  // The lost-ESC line is read as vLLM's, its codes gone.
  CHECK(expected.find("\"server\": \"vllm\"") != std::string::npos);
  CHECK(expected.find("[1;36m") == std::string::npos);
  for (std::size_t chunk : {std::size_t{1} << 20, std::size_t{4093}}) {
    INFO("chunks of " << chunk << " bytes");
    std::uint64_t prefiltered = 0;
    CHECK(scan_in_chunks(book, log, chunk, &prefiltered) == expected);
    UNSCOPED_INFO("prefiltered " << prefiltered);
    CHECK(prefiltered > static_cast<std::uint64_t>(lines) * 8 / 10);
  }
}

// With a rulebook the build's table does not know (a user's own), a short
// log takes the full path until 256 KB of serving traffic have gone by
// (building its prefilter costs more than matching it); told that the input
// is large, the analyzer prefilters from the first serving block, and the
// report is the same.
TEST_CASE("An input known to be large is prefiltered from its first serving block",
          "[analysis][prefilter]") {
  std::string log = serving_log(8);
  std::string expected = scan_line_by_line(test::load_builtin(), log);
  // A rulebook of its own for each scan: once built, a prefilter is used
  // from the start by every stream.
  auto scan = [&](std::optional<std::uint64_t> input_bytes, std::uint64_t& prefiltered) {
    Rulebook book = test::load_builtin_untabled();
    REQUIRE(!RulebookAccess::impl(book).prefilter_cheap());
    REQUIRE(!RulebookAccess::impl(book).prefilter_built.load());
    AnalyzerOptions options;
    options.stream_name = "s";
    options.input_bytes = input_bytes;
    Analyzer analyzer(book, options);
    analyzer.feed(log);
    prefiltered = analyzer.prefiltered_lines();
    return json_of(analyzer.finish());
  };
  std::uint64_t small = 0;
  std::uint64_t large = 0;
  CHECK(scan(std::nullopt, small) == expected);
  CHECK(scan(std::uint64_t{8} << 20, large) == expected);
  CHECK(large > small + 1000);
  // The built-in rules' prefilter comes from the build's table, cheap
  // enough to use from the first serving block whatever the input's size.
  std::uint64_t tabled = 0;
  Rulebook book = test::load_builtin();
  REQUIRE(RulebookAccess::impl(book).prefilter_cheap());
  AnalyzerOptions options;
  options.stream_name = "s";
  Analyzer analyzer(book, options);
  analyzer.feed(log);
  tabled = analyzer.prefiltered_lines();
  CHECK(json_of(analyzer.finish()) == expected);
  CHECK(tabled > small + 1000);
}
