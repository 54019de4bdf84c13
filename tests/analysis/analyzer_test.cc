// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <set>
#include <algorithm>

#include <thread>

#include "logrx/analyzer.h"
#include "logrx/output.h"
#include "analysis/analyzer_impl.h"
#include "support/test_support.h"

using logrx::Analyzer;
using logrx::AnalyzerOptions;
using logrx::Finding;
using logrx::RemediationItem;
using logrx::Report;
using logrx::Severity;
using logrx::test::load_builtin;
using logrx::test::scan_text;

TEST_CASE("Findings carry the 1-based line, rank, server and captures", "[analysis][analyzer]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "[2026-05-23 07:40:41] server_args=ServerArgs(model_path='m')\n"
                          "[2026-05-23 07:40:41 TP0] Max running requests is reset to 48 for "
                          "speculative decoding. You can override this.\n");
  // The log also ends before the launch got ready: a second, informational finding.
  REQUIRE(report.findings.size() == 2);
  CHECK(report.findings[0].rule_id == "logrx.run.ends-before-ready");
  CHECK(report.findings[0].severity == Severity::Info);
  const Finding& f = report.findings[1];
  CHECK(f.rule_id == "sglang.memory.max-running-requests-reset");
  CHECK(f.line == 2);
  CHECK(f.run == 1);
  CHECK_FALSE(f.stale);
  CHECK(f.server == "sglang");
  CHECK(f.process == "TP0");
  CHECK(f.timestamp == "2026-05-23 07:40:41");
  CHECK(f.file == "test.log");
  CHECK(f.captures.at("max_running_requests") == "48");
  CHECK(f.title == "Concurrency capped at 48 running requests");
  REQUIRE(f.evidence.size() == 1);
  CHECK(f.evidence[0].line == 2);
  CHECK(report.summary.lines == 2);
  CHECK(report.summary.findings == 2);
  CHECK(report.summary.worst_severity == Severity::Warning);
}

TEST_CASE("Traceback lines without header inherit the stream's server", "[analysis][analyzer]") {
  auto book = load_builtin();
  // An SGLang rule must fire on SGLang's raw traceback tail, but not on the
  // same raw text inside a vLLM stream.
  std::string tail =
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current "
      "value: mem_fraction_static=0.8\n";
  auto sglang = scan_text(book, "[2026-05-23 08:03:04] Scheduler hit an exception: Traceback\n" + tail);
  bool fired = false;
  for (const auto& f : sglang.findings) fired |= f.rule_id == "sglang.memory.not-enough-memory";
  CHECK(fired);
  auto vllm = scan_text(book, "(APIServer pid=1) INFO 12-25 04:48:38 [a.py:1] vLLM\n" + tail);
  for (const auto& f : vllm.findings) CHECK(f.rule_id != "sglang.memory.not-enough-memory");
}

TEST_CASE("Remediation values are expanded from captures, or computed another way without them",
          "[analysis][remediation]") {
  auto book = load_builtin();
  auto with_estimate = scan_text(
      book,
      "ValueError: To serve at least one request with the model's max seq len (262144), (24.00 "
      "GiB KV cache is needed, which is larger than the available KV cache memory (9.31 GiB). "
      "Based on the available memory, the estimated maximum model length is 101632. Try it.\n");
  REQUIRE(with_estimate.findings.size() == 1);
  const auto& items = with_estimate.findings[0].remediation;
  REQUIRE_FALSE(items.empty());
  CHECK(items[0].name == "--max-model-len");
  CHECK(items[0].value == std::optional<std::string>("101376"));  // rounded down to 1024
  CHECK(items[0].why.find("101632") != std::string::npos);

  auto without = scan_text(
      book,
      "ValueError: To serve at least one request with the model's max seq len (262144), (24.00 "
      "GiB KV cache is needed, which is larger than the available KV cache memory (9.31 GiB). "
      "Try increasing.\n");
  // Without vLLM's estimate, the length is scaled from the KV sizes the
  // message gives: 262144 x 9.31 / 24.00 = 101690, rounded down to 1024.
  REQUIRE(without.findings.size() == 1);
  REQUIRE_FALSE(without.findings[0].remediation.empty());
  CHECK(without.findings[0].remediation[0].name == "--max-model-len");
  CHECK(without.findings[0].remediation[0].value == std::optional<std::string>("101376"));
  CHECK(without.findings[0].remediation[0].why.find("101690") != std::string::npos);

  // A missing capture drops an item that needs it: no value is guessed.
  auto bare = scan_text(book, "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n");
  REQUIRE_FALSE(bare.findings.empty());
  for (const auto& item : bare.findings[0].remediation)
    if (item.name == "--mem-fraction-static") CHECK_FALSE(item.value.has_value());
}

TEST_CASE("The callback sees each finding as it is found", "[analysis][analyzer]") {
  auto book = load_builtin();
  Analyzer analyzer(book);
  std::vector<std::uint64_t> seen;
  analyzer.on_finding([&](const Finding& f) { seen.push_back(f.line); });
  analyzer.feed("RuntimeError: CUDA error: out of memory\nok\nRuntimeError: CUDA error: an illeg");
  CHECK(seen == std::vector<std::uint64_t>{1});
  analyzer.feed("al memory access was encountered");
  CHECK(seen.size() == 1);  // the last line is not complete yet
  auto report = analyzer.finish();
  CHECK(seen == std::vector<std::uint64_t>{1, 3});
  CHECK(report.findings.size() == 2);
  CHECK(report.summary.lines == 3);
}

TEST_CASE("Stored findings are capped but all are counted", "[analysis][analyzer]") {
  auto book = load_builtin();
  AnalyzerOptions options;
  options.max_findings = 2;
  Analyzer analyzer(book, options);
  // Distinct errors (same digits would merge into one finding with a count).
  for (const char* unit : {"B", "KiB", "MiB", "GiB", "TiB"})
    analyzer.feed_line(std::string("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 ") +
                       unit + ".");
  auto report = analyzer.finish();
  CHECK(report.findings.size() == 2);
  CHECK(report.summary.findings == 5);
  CHECK(report.summary.findings_dropped == 3);
}

TEST_CASE("Over-long lines are counted and still matched on their prefix", "[analysis][analyzer]") {
  auto book = load_builtin();
  AnalyzerOptions options;
  options.max_line_bytes = 64;
  Analyzer analyzer(book, options);
  analyzer.feed("RuntimeError: CUDA error: out of memory" + std::string(10000, '!') + "\nnext\n");
  auto report = analyzer.finish();
  CHECK(report.summary.lines == 2);
  CHECK(report.summary.truncated_lines == 1);
  CHECK(report.findings.size() == 1);
}

TEST_CASE("Merged remediation: primary items only, the more severe finding wins",
          "[analysis][remediation]") {
  auto item = [](const char* name, const char* value, bool alternative) {
    RemediationItem i;
    i.name = name;
    i.value = value;
    i.alternative = alternative;
    return i;
  };
  Finding warning;
  warning.severity = Severity::Warning;
  warning.remediation = {item("--mem-fraction-static", "0.80", false),
                         item("--disable-radix-cache", "", true)};
  Finding fatal;
  fatal.severity = Severity::Fatal;
  fatal.remediation = {item("--mem-fraction-static", "0.85", false)};
  Finding later_warning = warning;
  later_warning.remediation = {item("--mem-fraction-static", "0.70", false)};
  Finding stale = fatal;
  stale.stale = true;
  stale.remediation = {item("--tp-size", "2", false)};

  auto merged = logrx::merge_remediation({warning, fatal, later_warning, stale});
  REQUIRE(merged.size() == 1);
  CHECK(merged[0].name == "--mem-fraction-static");
  CHECK(merged[0].value == std::optional<std::string>("0.85"));
}

TEST_CASE("One rulebook serves analyzers on several threads", "[analysis][threads]") {
  auto book = load_builtin();
  std::string log;
  for (int i = 0; i < 200; ++i)
    log += "[2026-03-11 10:40:18 TP" + std::to_string(i % 4) +
           "] KV cache pool is full. Retract requests. #retracted_reqs: " + std::to_string(i) + "\n";
  log += "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.8\n";
  std::string expected = logrx::to_json(scan_text(book, log));
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) results[static_cast<std::size_t>(t)] = logrx::to_json(scan_text(book, log));
    });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) CHECK(result == expected);
}

TEST_CASE("Skipping blocks while serving changes no result", "[analysis][performance]") {
  // A serving log with rare problems, scanned in large chunks (where blocks
  // without a rule that can act are skipped) and line by line (never skipped).
  auto book = load_builtin();
  std::string log =
      "[2026-06-02 14:06:34] max_total_num_tokens=77056, max_running_requests=64, context_len=8192, available_gpu_mem=3.12 GB\n"
      "[2026-06-02 14:06:39] The server is fired up and ready to roll!\n";
  for (int i = 0; i < 20000; ++i) {
    log += "[2026-06-02 14:10:05 TP0] Decode batch, #running-req: 4, #token: " + std::to_string(i) +
           ", token usage: 0.04, cuda graph: True, gen throughput (token/s): 412.37, #queue-req: 9, \n";
    if (i % 997 == 0)
      log += "[2026-06-02 14:10:05 TP1] KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_token_ratio: 0.4500 -> 0.7000\n";
    if (i == 15000)
      log += "[2026-06-02 14:11:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
             "RuntimeError: Prefill out of memory. Try to lower your batch size.\n";
  }
  logrx::Analyzer chunked(book);
  for (std::size_t at = 0; at < log.size(); at += 1 << 18) chunked.feed(std::string_view(log).substr(at, 1 << 18));
  logrx::Analyzer lines(book);
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    lines.feed_line(std::string_view(log).substr(start, end - start));
    start = end + 1;
  }
  auto a = chunked.finish();
  auto b = lines.finish();
  CHECK(logrx::to_json(a) == logrx::to_json(b));
  CHECK(a.summary.findings >= 3);
}

TEST_CASE("Timestamps without a year get one in ISO 8601", "[analysis][timestamps]") {
  auto book = load_builtin();
  const std::string vllm_line =
      "(EngineCore_DP0 pid=265) ERROR 12-25 04:49:58 [core.py:700] RuntimeError: CUDA error: out of memory\n";
  auto scan_with = [&](AnalyzerOptions options, const std::string& text) {
    Analyzer analyzer(book, options);
    analyzer.feed(text);
    return analyzer.finish();
  };
  auto first_iso = [](const logrx::Report& report) {
    for (const Finding& f : report.findings)
      if (!f.timestamp_iso.empty()) return f.timestamp_iso;
    return std::string();
  };

  SECTION("an explicit year wins") {
    AnalyzerOptions options;
    options.year = 2024;
    auto report = scan_with(options, vllm_line);
    CHECK(first_iso(report) == "2024-12-25T04:49:58");
    CHECK(report.findings[0].timestamp == "12-25 04:49:58");  // as printed, unchanged
    CHECK(report.runs.back().first_timestamp_iso == "2024-12-25T04:49:58");
  }
  SECTION("a date after the file's modification time is from the year before") {
    AnalyzerOptions options;
    options.file_mtime = 1780000000;  // 2026-05-28 (UTC), 2026 in every time zone
    CHECK(first_iso(scan_with(options, vllm_line)) == "2025-12-25T04:49:58");
    options.file_mtime = 1798500000;  // 2026-12-29
    CHECK(first_iso(scan_with(options, vllm_line)) == "2026-12-25T04:49:58");
  }
  SECTION("dated lines of the stream give their year, across New Year") {
    AnalyzerOptions options;
    options.file_mtime = 1780000000;
    // An envelope (CRI) that carries the year around the yearless vLLM line.
    auto report = scan_with(options, "2023-12-31T23:59:59.100000000Z stderr F " + vllm_line);
    CHECK(first_iso(report) == "2023-12-25T04:49:58");
    auto turned = scan_with(
        options, "2024-01-01T00:00:01.000000000Z stderr F (EngineCore_DP0 pid=265) ERROR 12-31 "
                 "23:59:59 [core.py:700] RuntimeError: CUDA error: out of memory\n");
    CHECK(first_iso(turned) == "2023-12-31T23:59:59");
  }
  SECTION("dated dialects keep their own year") {
    AnalyzerOptions options;
    options.year = 1999;
    auto report = scan_with(options,
                            "[2026-05-23 07:40:41 TP0] Max running requests is reset to 48 for "
                            "speculative decoding. You can override this.\n");
    CHECK(first_iso(report) == "2026-05-23T07:40:41");
  }
}

TEST_CASE("Ray's actor prefix around another server's lines is not vLLM's", "[analysis][analyzer]") {
  // An SGLang engine inside a Ray actor (verl, slime): every line behind
  // "(WorkerDict pid=N) ", its traceback too.
  auto report = scan_text(
      load_builtin(),
      "(WorkerDict pid=2345) [2025-06-01 10:00:00 TP0] Load weight begin. avail mem=77.32 GB\n"
      "(WorkerDict pid=2345) [2025-06-01 10:00:05 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "(WorkerDict pid=2345)   File \"/usr/local/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py\", line 100, in run\n"
      "(WorkerDict pid=2345)     self.init_memory_pool()\n"
      "(WorkerDict pid=2345) RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n");
  REQUIRE_FALSE(report.runs.empty());
  CHECK(report.runs.back().server == "sglang");
  bool not_enough = false;
  for (const Finding& f : report.findings) {
    CHECK(f.server == "sglang");
    if (f.rule_id == "sglang.memory.not-enough-memory") {
      not_enough = true;
      CHECK(f.event_start == 2);  // the traceback is one event with the scheduler line
    }
  }
  CHECK(not_enough);
  // vLLM's own prefixes stay vLLM's.
  auto vllm = scan_text(load_builtin(),
                        "(EngineCore_DP0 pid=79) INFO 12-25 04:49:08 [gpu_model_runner.py:3549] Model "
                        "loading took 15.2683 GiB memory and 5.530168 seconds\n");
  CHECK(vllm.runs.back().server == "vllm");
}

TEST_CASE("One rule on several lines of one traceback is one finding", "[analysis][events]") {
  // The logged error and the exception that carries it, in one traceback.
  auto report = scan_text(load_builtin(),
                          "Traceback (most recent call last):\n"
                          "  File \"/x/vllm/worker.py\", line 1, in f\n"
                          "    raise RuntimeError(\"CUDA error: out of memory\")  # CUDA error: out of memory\n"
                          "RuntimeError: CUDA error: out of memory\n");
  std::size_t ooms = 0;
  for (const Finding& f : report.findings)
    if (f.rule_id == "pytorch.cuda.error-out-of-memory") {
      ++ooms;
      CHECK(f.count == 2);
      CHECK(f.line == 3);
      CHECK(f.last_line == 4);
    }
  CHECK(ooms == 1);
}

TEST_CASE("A traceback cut after its raise line is read by the structure rules", "[analysis][events]") {
  auto book = load_builtin();
  auto ids = [](const Report& report) {
    std::set<std::string> out;
    for (const Finding& f : report.findings) out.insert(f.rule_id);
    return out;
  };
  const std::string frame = "  File \"/x/vllm/engine/arg_utils.py\", line 9, in create_engine_config\n";
  SECTION("the raised type and the raising module give the category") {
    auto report = scan_text(book, "Traceback (most recent call last):\n" + frame + "    raise ValueError(\n");
    auto found = ids(report);
    CHECK(found.count("logrx.structure.config-validation") == 1);
    for (const Finding& f : report.findings)
      if (f.rule_id == "logrx.structure.config-validation") {
        CHECK(f.line == 3);
        CHECK(f.captures.at("exception_type") == "ValueError");
      }
  }
  SECTION("a module the rule does not name gives no structure finding") {
    auto report = scan_text(book, "Traceback (most recent call last):\n"
                                  "  File \"/x/vllm/model_executor/models/llama.py\", line 9, in forward\n"
                                  "    raise ValueError(\n");
    CHECK(ids(report).count("logrx.structure.config-validation") == 0);
  }
  SECTION("a variable re-raised names no type") {
    auto report = scan_text(book, "Traceback (most recent call last):\n" + frame + "    raise e\n");
    CHECK(ids(report).count("logrx.structure.config-validation") == 0);
  }
  SECTION("the exception line, when present, decides") {
    auto report = scan_text(book, "Traceback (most recent call last):\n" + frame +
                                      "    raise ValueError(\n"
                                      "KeyError: 'x'\n");
    for (const Finding& f : report.findings)
      if (f.rule_id == "logrx.structure.config-validation") CHECK(f.line == 4);
  }
  SECTION("a chained traceback cut after its second raise uses that raise") {
    auto report = scan_text(book, "Traceback (most recent call last):\n"
                                  "  File \"/x/vllm/model_executor/models/llama.py\", line 9, in forward\n"
                                  "    raise KeyError(k)\n"
                                  "KeyError: 'layers.0.weight'\n"
                                  "\n"
                                  "During handling of the above exception, another exception occurred:\n"
                                  "\n"
                                  "Traceback (most recent call last):\n" + frame + "    raise ValueError(\n");
    bool raised = false;
    for (const Finding& f : report.findings)
      if (f.rule_id == "logrx.structure.config-validation") raised |= f.line == 10;
    CHECK(raised);
  }
}

TEST_CASE("A C++ terminate line and its what() are one event", "[analysis][events]") {
  auto book = load_builtin();
  SECTION("a known what() explains the terminate line") {
    auto report = scan_text(book,
                            "terminate called after throwing an instance of 'std::runtime_error'\n"
                            "  what():  [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
                            "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600010 "
                            "milliseconds before timing out.\n");
    REQUIRE(report.findings.size() == 1);
    CHECK(report.findings[0].rule_id == "pytorch.distributed.watchdog-timeout");
    CHECK(report.findings[0].event_start == 1);
  }
  SECTION("an unknown what() gives one finding, on the what() line") {
    auto report = scan_text(book,
                            "terminate called after throwing an instance of 'c10::Error'\n"
                            "  what():  something nobody has a rule for, an error\n"
                            "Exception raised from f at /x/y.cpp:3 (most recent call first):\n"
                            "frame #0: c10::Error::Error() + 0x9 (0x7f in /x/libc10.so)\n");
    std::size_t warnings_or_worse = 0;
    for (const Finding& f : report.findings)
      if (f.severity >= Severity::Warning) {
        ++warnings_or_worse;
        CHECK(f.line == 2);
        CHECK(f.end_line == 4);
      }
    CHECK(warnings_or_worse == 1);
  }
  SECTION("a line that does not continue it starts afresh") {
    auto report = scan_text(book,
                            "terminate called after throwing an instance of 'c10::Error'\n"
                            "INFO 05-12 10:01:02 [api_server.py:1090] vLLM API server version 0.9.1\n");
    bool on_first = false;
    for (const Finding& f : report.findings) on_first |= f.line == 1 && f.severity >= Severity::Warning;
    CHECK(on_first);
  }
}

TEST_CASE("A log that names no server gets each likely server's fixes as labelled advice",
          "[analysis][remediation]") {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.84 GiB. GPU 1 has a total "
      "capacity of 94.50 GiB of which 4.33 GiB is free.\n";
  auto bare = scan_text(load_builtin(), oom);
  REQUIRE_FALSE(bare.findings.empty());
  bool vllm = false, sglang = false;
  for (const RemediationItem& item : bare.findings[0].remediation) {
    if (item.why.rfind("if the server is ", 0) != 0) continue;
    CHECK(item.alternative);
    CHECK_FALSE(item.applicable);
    vllm |= item.name == "--gpu-memory-utilization";
    sglang |= item.name == "--mem-fraction-static";
  }
  CHECK(vllm);
  CHECK(sglang);
  // A rule of named servers offers each of them, not only vLLM and SGLang.
  logrx::test::TempDir dir;
  dir.write("a.json", logrx::test::rule_file(
                          "{\"id\": \"x.peer\", \"title\": \"t\", \"category\": \"config_conflict\", "
                          "\"severity\": \"error\", \"servers\": [\"vllm\", \"trtllm\"], \"pattern\": "
                          "\"peer endpoints differ\", \"explanation\": \"e\", \"remediation\": ["
                          "{\"flag\": \"--kv-transfer-config\", \"advice\": true, \"why\": \"same on both\", "
                          "\"when\": \"server == \\\"vllm\\\"\"}, "
                          "{\"env\": \"TRTLLM_NIXL_KVCACHE_BACKEND\", \"value\": \"UCX\", \"why\": \"one backend\", "
                          "\"when\": \"server == \\\"trtllm\\\"\"}], "
                          "\"examples\": {\"match\": [], \"no_match\": []}}"));
  dir.write("v/flags.json", "{\"version\": 1, \"server\": \"vllm\", \"flags\": [\"--kv-transfer-config\"], \"env\": []}");
  dir.write("t/flags.json", "{\"version\": 1, \"server\": \"trtllm\", \"flags\": [], \"env\": [\"TRTLLM_NIXL_KVCACHE_BACKEND\"]}");
  logrx::Diagnostics errors;
  auto book = logrx::Rulebook::load({{dir.path()}}, errors);
  REQUIRE(book);
  auto peer = scan_text(*book, "peer endpoints differ\n");
  REQUIRE(peer.findings.size() == 1);
  std::set<std::string> offered;
  for (const RemediationItem& item : peer.findings[0].remediation)
    if (item.why.rfind("if the server is ", 0) == 0) offered.insert(item.name);
  CHECK(offered == std::set<std::string>{"--kv-transfer-config", "TRTLLM_NIXL_KVCACHE_BACKEND"});
  // Once the log names its server, only that server's fixes remain.
  auto named = scan_text(load_builtin(), "INFO 12-25 04:49:08 [api_server.py:1] vLLM API server version 0.11.0\n" + oom);
  for (const Finding& f : named.findings)
    for (const RemediationItem& item : f.remediation) {
      CHECK(item.why.rfind("if the server is ", 0) != 0);
      CHECK(item.name != "--mem-fraction-static");
    }
}

// Another program's line (Triton's glog, a bare assertion) that carries a
// server's own tag or sources names the run's server.
TEST_CASE("A server's tag or sources inside another program's line name the run's server",
          "[analysis][runs]") {
  auto server_of = [](const std::string& log) {
    Report report = scan_text(load_builtin(), log);
    REQUIRE(!report.runs.empty());
    return report.runs.front().server;
  };
  CHECK(server_of("I1127 13:25:50.480183 47468 pb_stub.cc:366] \"Failed to initialize Python stub: "
                  "AssertionError: [TensorRT-LLM][ERROR] Assertion failed: model type\"\n") == "trtllm");
  CHECK(server_of("/home/u/llama.cpp/ggml/src/ggml.c:3023: GGML_ASSERT(ggml_can_mul_mat(a, b)) failed\n") ==
        "llamacpp");
  CHECK(server_of("some tool printed [TensorRT] and ggml words\n") == "unknown");
  // Ollama's name for its llama.cpp runner, after the runner's own lines too.
  CHECK(server_of("Error: llama runner process has terminated: exit status 2\n") == "ollama");
  CHECK(server_of("llama_model_load: loaded meta data with 26 key-value pairs\n"
                  "Error: llama runner process has terminated: GGML_ASSERT(x) failed\n") == "ollama");
}

// journalctl -u ollama: the program in front of every line is the server,
// though the first lines (the runner's) are llama.cpp's.
TEST_CASE("The program a journald or syslog line names is the run's server", "[analysis][runs]") {
  Report report = scan_text(load_builtin(),
                            "May 16 15:11:15 gpu1 ollama[1405]: llama_init_from_model: V cache quantization requires flash_attn\n"
                            "May 16 15:11:15 gpu1 ollama[1405]: panic: unable to create llama context\n");
  REQUIRE(!report.runs.empty());
  CHECK(report.runs.front().server == "ollama");
  REQUIRE(!report.findings.empty());
  CHECK(report.findings.front().server == "ollama");
  CHECK(logrx::detail::server_of_program("ollama.service") == logrx::Dialect::Ollama);
  CHECK(logrx::detail::server_of_program("vllm.service") == logrx::Dialect::Unknown);
  CHECK(logrx::detail::server_of_program("python3") == logrx::Dialect::Unknown);
}

// "no usable GPU found" before the CUDA device is listed: the later line
// explains the earlier finding away once the run's facts are complete.
TEST_CASE("A finding is demoted to info when later evidence in its run explains it (demote_when)",
          "[analysis][analyzer]") {
  logrx::test::TempDir dir;
  dir.write("a.json",
            logrx::test::rule_file(
                logrx::test::rule_json("x.no-gpu", "no usable GPU found", ", \"category\": \"config_conflict\", \"demote_when\": \"defined(gpu_seen)\"") +
                "," +
                logrx::test::rule_json("x.gpu-seen", "found (?P<n>\\\\d+) CUDA devices",
                                       ", \"silent\": true, \"facts\": {\"gpu_seen\": \"n\"}")));
  logrx::Diagnostics errors;
  auto book = logrx::Rulebook::load({{dir.path()}}, errors);
  REQUIRE(book);
  auto scan = [&](const std::string& log) {
    Analyzer analyzer(*book, AnalyzerOptions{});
    analyzer.feed(log);
    return analyzer.finish();
  };
  logrx::Report alone = scan("warning: no usable GPU found, --gpu-layers option will be ignored\n");
  REQUIRE(alone.findings.size() == 1);
  CHECK(alone.findings[0].severity == Severity::Error);
  logrx::Report explained = scan("warning: no usable GPU found, --gpu-layers option will be ignored\n"
                          "ggml_cuda_init: found 1 CUDA devices\n");
  REQUIRE(explained.findings.size() == 1);
  CHECK(explained.findings[0].severity == Severity::Info);
  CHECK(explained.findings[0].category == logrx::Category::Info);
  // The summary counts it as it ended up, not as it was first reported.
  CHECK(alone.summary.worst_severity == Severity::Error);
  CHECK(explained.summary.worst_severity == Severity::Info);
  CHECK(explained.summary.by_severity == std::map<std::string, std::size_t>{{"info", 1}});
  CHECK(explained.summary.by_category == std::map<std::string, std::size_t>{{"info", 1}});
  CHECK(explained.summary.findings == 1);
}

// Two servers writing one stream: the run is vLLM's (its lines came first),
// and the SGLang lines' KV usage still reaches SGLang's facts rule.
TEST_CASE("A facts rule applies to the server whose lines recorded the facts", "[analysis][facts]") {
  std::string log =
      "(APIServer pid=1) INFO 12-25 04:48:38 [api_server.py:1351] vLLM API server version 0.13.0\n"
      "(APIServer pid=1) INFO:     Application startup complete.\n"
      "[2026-07-01 16:00:00 TP0] Decode batch, #running-req: 12, #token: 90000, token usage: 0.95, "
      "cuda graph: True, gen throughput (token/s): 1234.5, #queue-req: 0\n";
  Report report = scan_text(load_builtin(), log);
  REQUIRE(!report.runs.empty());
  CHECK(report.runs.front().server == "vllm");
  CHECK(std::any_of(report.findings.begin(), report.findings.end(),
                    [](const Finding& f) { return f.rule_id == "sglang.memory.kv-cache-nearly-full"; }));
}
