// SPDX-License-Identifier: MIT
// Runs, phases, multi-line events, rank merging and wrapper linking.
#include <catch2/catch.hpp>

#include "logrx/analyzer.h"
#include "support/test_support.h"

using logrx::Finding;
using logrx::Report;
using logrx::test::load_builtin;
using logrx::test::scan_text;

namespace {

const Finding* find(const Report& report, const std::string& rule, std::size_t nth = 0) {
  for (const Finding& f : report.findings)
    if (f.rule_id == rule && nth-- == 0) return &f;
  return nullptr;
}

const std::string kOom =
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current "
    "value: mem_fraction_static=0.72\n";

}  // namespace

TEST_CASE("A launch banner after progress starts a new run, earlier findings are stale",
          "[analysis][runs]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "[2026-04-10 09:00:01] server_args=ServerArgs(mem_fraction_static=0.72)\n"
                          "[2026-04-10 09:00:10 TP0] Load weight begin. avail mem=43.21 GB\n" +
                              kOom +
                              "[2026-04-10 09:07:45] server_args=ServerArgs(mem_fraction_static=0.8)\n"
                              "[2026-04-10 09:08:31] The server is fired up and ready to roll!\n");
  REQUIRE(report.runs.size() == 2);
  CHECK(report.runs[0].first_line == 1);
  CHECK(report.runs[0].last_line == 3);
  CHECK(report.runs[1].first_line == 4);
  CHECK(report.runs[1].reached_ready);
  CHECK(report.runs[0].facts.at("mem_fraction_static").number == 0.72);
  CHECK(report.runs[1].facts.at("mem_fraction_static").number == 0.8);
  const Finding* oom = find(report, "sglang.memory.not-enough-memory");
  REQUIRE(oom != nullptr);
  CHECK(oom->run == 1);
  CHECK(oom->stale);
  CHECK(oom->phase == "loading_weights");
  const Finding* earlier = find(report, "logrx.stale.earlier-runs");
  REQUIRE(earlier != nullptr);
  CHECK(earlier->run == 2);
  CHECK_FALSE(earlier->stale);
  CHECK(report.remediation.empty());  // the latest run is healthy
}

TEST_CASE("vLLM's two banners belong to one launch, a repeated banner starts the next",
          "[analysis][runs]") {
  auto book = load_builtin();
  std::string launch =
      "(APIServer pid=1) INFO 12-25 04:48:38 [api_server.py:1351] vLLM API server version 0.13.0\n"
      "(APIServer pid=1) INFO 12-25 04:48:38 [utils.py:253] non-default args: {'model': 'm'}\n";
  CHECK(scan_text(book, launch).runs.size() == 1);
  CHECK(scan_text(book, launch + launch).runs.size() == 2);
}

TEST_CASE("A launch after timestamps jump back starts a new run, a jump alone does not",
          "[analysis][runs]") {
  auto book = load_builtin();
  // Back in time to an earlier phase of start-up: the server was relaunched.
  auto relaunch = scan_text(book,
                            "[2026-04-10 09:00:40 TP0] Load weight begin. avail mem=43.21 GB\n"
                            "[2026-04-10 09:01:40 TP0] KV Cache is allocated. #tokens: 77056, K size: 5.88 GB, V size: 5.88 GB\n"
                            "[2026-04-10 08:10:00 TP0] Load weight begin. avail mem=43.21 GB\n");
  CHECK(relaunch.runs.size() == 2);
  CHECK(relaunch.diagnostics.empty());
  // A merged or clock-skewed log: the time goes back, nothing is launched.
  // One run, and the jump noted once.
  auto jump = scan_text(book,
                        "[2026-04-10 09:00:01 TP0] Init torch distributed begin.\n"
                        "[2026-04-10 09:00:40 TP0] Load weight begin. avail mem=43.21 GB\n"
                        "[2026-04-10 08:10:00 TP1] Load weight begin. avail mem=43.21 GB\n"
                        "[2026-04-10 09:10:00 TP0] x\n"
                        "[2026-04-10 08:10:00 TP1] y\n");
  CHECK(jump.runs.size() == 1);
  REQUIRE(jump.diagnostics.size() == 1);
  CHECK(jump.diagnostics[0].line == 3);
  CHECK(jump.diagnostics[0].message.find("timestamps go back") != std::string::npos);
  auto jitter = scan_text(book,
                          "[2026-04-10 09:00:40 TP0] Load weight begin. avail mem=43.21 GB\n"
                          "[2026-04-10 09:00:39 TP1] Load weight begin. avail mem=43.21 GB\n");
  CHECK(jitter.runs.size() == 1);
  auto new_year = scan_text(book,
                            "(APIServer pid=1) INFO 12-31 23:59:50 [a.py:1] x\n"
                            "(APIServer pid=1) INFO 01-01 00:00:10 [a.py:1] y\n");
  CHECK(new_year.runs.size() == 1);
}

TEST_CASE("A traceback is one event: findings carry its range and exceptions",
          "[analysis][events]") {
  auto book = load_builtin();
  auto report = scan_text(
      book,
      "[2026-05-23 08:03:04 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"scheduler.py\", line 1, in run\n"
      "KeyError: 'x'\n"
      "\n"
      "The above exception was the direct cause of the following exception:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"model_runner.py\", line 2, in init\n" +
          kOom + "[2026-05-23 08:03:05] Received sigquit from a child process.\n");
  const Finding* oom = find(report, "sglang.memory.not-enough-memory");
  REQUIRE(oom != nullptr);
  CHECK(oom->line == 9);
  CHECK(oom->event_start == 1);
  CHECK(oom->end_line == 9);
  CHECK(oom->process == "TP3");  // the raw line takes the rank of its event
  CHECK(oom->exception.rfind("RuntimeError: Not enough memory", 0) == 0);
  CHECK(oom->root_exception == "KeyError: 'x'");
}

TEST_CASE("vLLM logger.exception lines and raw child tracebacks form events",
          "[analysis][events]") {
  auto book = load_builtin();
  auto report = scan_text(
      book,
      "(EngineCore_DP0 pid=79) ERROR 12-26 09:00:07 [core.py:843] EngineCore encountered a fatal error.\n"
      "(EngineCore_DP0 pid=79) ERROR 12-26 09:00:07 [core.py:843] Traceback (most recent call last):\n"
      "(EngineCore_DP0 pid=79) ERROR 12-26 09:00:07 [core.py:843]   File \"core.py\", line 834, in run\n"
      "(EngineCore_DP0 pid=79) ERROR 12-26 09:00:07 [core.py:843] RuntimeError: CUDA error: out of memory\n"
      "(APIServer pid=1) INFO 12-26 09:00:08 [a.py:1] after\n");
  const Finding* oom = find(report, "pytorch.cuda.error-out-of-memory");
  REQUIRE(oom != nullptr);
  CHECK(oom->event_start == 1);
  CHECK(oom->end_line == 4);
  const Finding* dead = find(report, "vllm.lifecycle.engine-dead");
  REQUIRE(dead != nullptr);
  REQUIRE(dead->root_cause.has_value());
  CHECK(dead->root_cause->rule_id == "pytorch.cuda.error-out-of-memory");
  CHECK(dead->root_cause->line == 4);
}

TEST_CASE("The same error from several ranks is one finding listing the ranks",
          "[analysis][ranks]") {
  auto book = load_builtin();
  std::string log;
  for (int rank = 0; rank < 4; ++rank)
    log += "[2026-05-23 08:03:04 TP" + std::to_string(rank) +
           "] Scheduler hit an exception: Traceback (most recent call last):\n" + kOom;
  auto report = scan_text(book, log);
  const Finding* oom = find(report, "sglang.memory.not-enough-memory");
  REQUIRE(oom != nullptr);
  CHECK(find(report, "sglang.memory.not-enough-memory", 1) == nullptr);
  CHECK(oom->ranks == std::vector<std::string>{"TP0", "TP1", "TP2", "TP3"});
  CHECK(oom->count == 4);
  CHECK(oom->last_line == 8);
}

TEST_CASE("Wrappers link to their root cause and never outrank it", "[analysis][wrappers]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "[2026-05-23 08:03:04] Scheduler hit an exception: Traceback (most recent call last):\n" +
                              kOom + "[2026-05-23 08:03:05] Received sigquit from a child process. It usually means the child failed.\n"
                              "Killed\n");
  for (const char* wrapper : {"sglang.lifecycle.scheduler-exception", "sglang.lifecycle.child-sigquit",
                              "common.process.killed"}) {
    INFO(wrapper);
    const Finding* f = find(report, wrapper);
    REQUIRE(f != nullptr);
    CHECK(f->wrapper);
    REQUIRE(f->root_cause.has_value());
    CHECK(f->root_cause->rule_id == "sglang.memory.not-enough-memory");
    CHECK(f->severity <= logrx::Severity::Fatal);
  }
  auto alone = scan_text(book, "[2026-05-23 08:03:05] Received sigquit from a child process.\n");
  const Finding* orphan = find(alone, "sglang.lifecycle.child-sigquit");
  REQUIRE(orphan != nullptr);
  CHECK_FALSE(orphan->root_cause.has_value());
  CHECK(orphan->explanation.find("root cause is not in this log") != std::string::npos);
  CHECK(orphan->explanation.find("dmesg") != std::string::npos);
}

TEST_CASE("A run that ends before ready is info, and with evidence of an exit it died", "[analysis][runs]") {
  auto book = load_builtin();
  const std::string start =
      "[2026-05-23 07:40:41] server_args=ServerArgs(model_path='m')\n"
      "[2026-05-23 07:40:49] Load weight begin. avail mem=93.87 GB\n";
  // An excerpt that stops early is not evidence of a death.
  auto cut = scan_text(book, start);
  CHECK(find(cut, "logrx.run.died-before-ready") == nullptr);
  const Finding* ends = find(cut, "logrx.run.ends-before-ready");
  REQUIRE(ends != nullptr);
  CHECK(ends->severity == logrx::Severity::Info);
  CHECK(ends->title.find("loading_weights") != std::string::npos);
  // An exit the log reports is.
  auto killed = scan_text(book, start + "[2026-05-23 07:40:50] INFO:     Finished server process [1]\n");
  const Finding* died = find(killed, "logrx.run.died-before-ready");
  REQUIRE(died != nullptr);
  CHECK(died->severity == logrx::Severity::Error);
  CHECK(died->line == 3);
  // So is a supervisor that saw the process exit.
  logrx::Analyzer supervised(book);
  supervised.feed(start);
  supervised.note_exit();
  CHECK(find(supervised.finish(), "logrx.run.died-before-ready") != nullptr);
  auto ready = scan_text(book,
                         "[2026-05-23 07:40:41] server_args=ServerArgs(model_path='m')\n"
                         "[2026-05-23 07:41:08] The server is fired up and ready to roll!\n");
  CHECK(find(ready, "logrx.run.died-before-ready") == nullptr);
  CHECK(find(ready, "logrx.run.ends-before-ready") == nullptr);
}

TEST_CASE("A cut final line still matches by its prefix and is flagged", "[analysis][truncation]") {
  auto book = load_builtin();
  auto report = scan_text(book, "[2026-05-23 07:40:41] Max running requests is reset to 48 for speculat");
  const Finding* f = find(report, "sglang.memory.max-running-requests-reset");
  REQUIRE(f != nullptr);
  CHECK(f->truncated);
  CHECK(f->captures.at("reason") == "speculat");
  auto whole = scan_text(book, "[2026-05-23 07:40:41] Max running requests is reset to 48 for speculative decoding.\n");
  CHECK_FALSE(find(whole, "sglang.memory.max-running-requests-reset")->truncated);
}

TEST_CASE("Remediation follows the phase of an out-of-memory", "[analysis][phases]") {
  auto book = load_builtin();
  std::string start =
      "[2026-05-23 07:40:41] server_args=ServerArgs(mem_fraction_static=0.88, chunked_prefill_size=8192)\n";
  std::string oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
  auto value_of = [](const Report& r, const std::string& flag) -> std::string {
    for (const auto& item : r.remediation)
      if (item.name == flag) return item.value.value_or("");
    return "(none)";
  };
  auto pool = scan_text(book, start + "[2026-05-23 07:41:36] KV Cache is allocated. #tokens: 1000, KV size: 1.00 GB\n" + oom);
  CHECK(find(pool, "pytorch.cuda.out-of-memory")->phase == "allocating_memory_pool");
  // A CUDA out-of-memory while the pool is allocated means the static share
  // asked for more than was free (unlike "Not enough memory", where the share
  // left the pool nothing): lower it.
  CHECK(value_of(pool, "--mem-fraction-static") == "0.83");
  auto capture = scan_text(book, start + "[2026-05-23 07:41:40] Capture cuda graph begin. This can take up to several minutes. avail mem=9 GB\n" + oom);
  CHECK(value_of(capture, "--mem-fraction-static") == "0.83");
  auto serving = scan_text(book, start + "[2026-05-23 07:42:00] The server is fired up and ready to roll!\n"
                                         "[2026-05-23 07:43:00] Decode batch, #running-req: 40, #token: 9, token usage: 0.90, #queue-req: 0, \n" + oom);
  CHECK(find(serving, "pytorch.cuda.out-of-memory")->phase == "serving");
  CHECK(value_of(serving, "--mem-fraction-static") == "0.83");
  CHECK(value_of(serving, "--chunked-prefill-size") == "4096");
}

TEST_CASE("Facts come from the config dump and from captures", "[analysis][facts]") {
  auto book = load_builtin();
  auto report = scan_text(
      book,
      "[2026-06-02 14:05:12] server_args=ServerArgs(model_path='Qwen/Qwen3.6-27B', mem_fraction_static=0.9, "
      "speculative_algorithm='EAGLE', mamba_scheduler_strategy='extra_buffer', disable_radix_cache=False)\n"
      "[2026-06-02 14:06:03] Mamba Cache is allocated. max_mamba_cache_size: 24, conv_state size: 0.11GB, "
      "ssm_state size: 3.52GB intermediate_ssm_state_cache size: 2.81GB intermediate_conv_window_cache size: 0.09GB\n"
      "[2026-06-02 14:06:34] max_total_num_tokens=77056, chunked_prefill_size=16384, max_prefill_tokens=16384, "
      "max_running_requests=4, context_len=262144, available_gpu_mem=30.12 GB\n");
  const auto& facts = report.runs.at(0).facts;
  CHECK(facts.at("speculative_algorithm").text == "EAGLE");
  CHECK(facts.at("disable_radix_cache").text == "False");
  CHECK(facts.at("mamba_slots").number == 24.0);
  CHECK(facts.at("mamba_gb").number == Approx(6.53));
  CHECK(facts.at("max_running_requests").number == 4.0);
  CHECK(facts.at("available_gpu_mem_gb").line == 3);
  const Finding* starved = find(report, "sglang.memory.starved-concurrency");
  REQUIRE(starved != nullptr);
  CHECK(starved->line == 3);
  REQUIRE(starved->remediation.size() == 2);
  CHECK(starved->remediation[0].value == std::optional<std::string>("17"));
  CHECK(starved->remediation[1].value == std::optional<std::string>("102"));
}

TEST_CASE("A config dump that does not parse is a diagnostic, the scan goes on",
          "[analysis][facts]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "[2026-06-02 14:05:12] server_args=ServerArgs(model_path='unterminated)\n" + kOom);
  REQUIRE(report.diagnostics.size() == 1);
  CHECK(report.diagnostics[0].line == 1);
  CHECK(find(report, "sglang.memory.not-enough-memory") != nullptr);
}

TEST_CASE("Merged remediation keeps one value per flag and names the others",
          "[analysis][remediation]") {
  auto book = load_builtin();
  // Not enough memory asks for a higher fraction, the graph-capture OOM for a lower one.
  auto report = scan_text(book,
                          "[2026-05-23 07:40:41] server_args=ServerArgs(mem_fraction_static=0.8)\n" + kOom +
                              "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
  int count = 0;
  for (const auto& item : report.remediation) {
    if (item.name != "--mem-fraction-static") continue;
    ++count;
    CHECK_FALSE(item.conflicts.empty());
  }
  CHECK(count == 1);
}
