// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "logrx/budget.h"
#include "support/test_support.h"

using logrx::test::load_builtin;
using logrx::test::scan_text;

TEST_CASE("The SGLang budget adds up what the server printed", "[analysis][budget]") {
  auto report = scan_text(
      load_builtin(),
      "[2026-06-02 14:05:12] server_args=ServerArgs(mem_fraction_static=0.9)\n"
      "[2026-06-02 14:05:19] Init torch distributed ends. elapsed=0.71 s, mem usage=0.61 GB\n"
      "[2026-06-02 14:05:20] Load weight begin. avail mem=177.32 GB\n"
      "[2026-06-02 14:05:58] Load weight end. elapsed=38.02 s, type=Qwen3_5ForConditionalGeneration, avail mem=126.16 GB, mem usage=51.16 GB.\n"
      "[2026-06-02 14:06:02] Load weight end. elapsed=1.75 s, type=Qwen3_5MTP, avail mem=124.97 GB, mem usage=1.19 GB.\n"
      "[2026-06-02 14:06:03] KV Cache is allocated. #tokens: 77056, K size: 5.88 GB, V size: 5.88 GB\n"
      "[2026-06-02 14:06:21] Capture cuda graph end. Time elapsed: 15.87 s. mem usage=0.42 GB. avail mem=36.09 GB.\n"
      "[2026-06-02 14:06:34] max_total_num_tokens=77056, max_running_requests=4, context_len=262144, available_gpu_mem=30.12 GB\n");
  auto budget = logrx::compute_budget(report.runs.back());
  CHECK(budget.server == "sglang");
  REQUIRE(budget.total_gb.has_value());
  CHECK(*budget.total_gb == Approx(177.93));
  CHECK(budget.total_estimated);
  CHECK(budget.fraction == 0.9);
  REQUIRE(budget.parts.size() == 4);
  CHECK(budget.parts[0].name == "weights");
  CHECK(budget.parts[0].gb == 51.16);
  CHECK(budget.parts[1].name == "draft weights");
  CHECK(budget.parts[1].gb == 1.19);
  CHECK(budget.parts[2].name == "KV cache");
  CHECK(*budget.parts[2].gb == Approx(11.76));
  CHECK(budget.parts[2].detail == "77056 tokens");
  CHECK(budget.parts[3].name == "CUDA graphs");
  CHECK(budget.free_gb == 30.12);
  CHECK(budget.missing.empty());
  std::ostringstream text;
  logrx::write_budget_text(text, budget, false);
  CHECK(text.str().find("accounted for: 51.16 + 1.19 + 11.76 + 0.42 = 64.53 GB") != std::string::npos);
  CHECK(text.str().find('\x1b') == std::string::npos);
  auto json = nlohmann::json::parse(logrx::budget_to_json(budget));
  CHECK(json.at("parts").size() == 4);
  CHECK(json.at("free_gb") == 30.12);
}

TEST_CASE("The budget says plainly what the log did not report", "[analysis][budget]") {
  auto report = scan_text(load_builtin(),
                          "(EngineCore_DP0 pid=79) INFO 12-25 04:49:08 [gpu_model_runner.py:3549] Model "
                          "loading took 15.2683 GiB memory and 5.530168 seconds\n");
  auto budget = logrx::compute_budget(report.runs.back());
  CHECK(budget.server == "vllm");
  CHECK(budget.parts[0].gb == 15.2683);
  CHECK_FALSE(budget.total_gb.has_value());
  CHECK(std::find(budget.missing.begin(), budget.missing.end(), "KV cache") != budget.missing.end());
  CHECK(std::find(budget.missing.begin(), budget.missing.end(), "GPU memory size") != budget.missing.end());
}

TEST_CASE("The budget keeps the unit the log printed", "[analysis][budget]") {
  auto vllm = scan_text(load_builtin(),
                        "(EngineCore_DP0 pid=79) INFO 12-25 04:49:08 [gpu_model_runner.py:3549] Model "
                        "loading took 15.2683 GiB memory and 5.530168 seconds\n");
  auto budget = logrx::compute_budget(vllm.runs.back());
  CHECK(budget.unit == "GiB");
  CHECK(budget.parts[0].unit == "GiB");
  CHECK(vllm.runs.back().facts.at("weights_gb").unit == "GiB");
  std::ostringstream text;
  logrx::write_budget_text(text, budget, false);
  CHECK(text.str().find("weights: 15.27 GiB") != std::string::npos);
  CHECK(text.str().find(" GB") == std::string::npos);
  auto json = nlohmann::json::parse(logrx::budget_to_json(budget));
  CHECK(json.at("unit") == "GiB");
  CHECK(json.at("parts").at(0).at("unit") == "GiB");

  auto sglang = scan_text(load_builtin(),
                          "[2026-06-02 14:05:58] Load weight end. elapsed=38.02 s, type=Qwen3, avail "
                          "mem=126.16 GB, mem usage=51.16 GB.\n");
  CHECK(logrx::compute_budget(sglang.runs.back()).unit == "GB");
}
