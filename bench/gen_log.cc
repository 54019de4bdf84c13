// SPDX-License-Identifier: MIT
// Writes a large, realistic inference-server log to stdout: steady-state
// SGLang or vLLM traffic (batch statistics, periodic engine stats, access
// logs) with rare problem lines and tracebacks, deterministic for a seed.
//   gen_log [--server sglang|vllm|mixed] [--mb N] [--seed S]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  double unit() { return static_cast<double>(next() % 1000000) / 1e6; }
};

struct Clock {
  long seconds = 0;
  void tick(Rng& rng) { seconds += rng.below(3) == 0 ? 1 : 0; }
  void sglang(char* out) const {
    long s = seconds;
    std::snprintf(out, 32, "2026-06-02 %02ld:%02ld:%02ld", (14 + s / 3600) % 24, (s / 60) % 60, s % 60);
  }
  void vllm(char* out) const {
    long s = seconds;
    std::snprintf(out, 32, "06-02 %02ld:%02ld:%02ld", (14 + s / 3600) % 24, (s / 60) % 60, s % 60);
  }
};

std::size_t sglang_line(Rng& rng, const Clock& clock, std::string& out) {
  char ts[32];
  clock.sglang(ts);
  char buf[1024];
  int r = rng.below(100000);
  int n = 0;
  int tp = rng.below(4);
  if (r < 1) {  // a rare traceback block
    n = std::snprintf(buf, sizeof buf,
                      "[%s TP%d] Scheduler hit an exception: Traceback (most recent call last):\n"
                      "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 2900, in run_scheduler_process\n"
                      "    scheduler.event_loop_overlap()\n"
                      "RuntimeError: Prefill out of memory. Try to lower your batch size.\n",
                      ts, tp);
  } else if (r < 60) {
    n = std::snprintf(buf, sizeof buf,
                      "[%s TP%d] KV cache pool is full. Retract requests. #retracted_reqs: %d, #new_token_ratio: 0.%04d -> 0.%04d\n",
                      ts, tp, 1 + rng.below(8), rng.below(10000), rng.below(10000));
  } else if (r < 70000) {
    n = std::snprintf(buf, sizeof buf,
                      "[%s TP%d] Decode batch, #running-req: %d, #token: %d, token usage: %.2f, cuda graph: True, gen throughput (token/s): %.2f, #queue-req: %d, \n",
                      ts, tp, rng.below(256), rng.below(400000), rng.unit(), 1000 + rng.unit() * 5000, rng.below(50));
  } else if (r < 85000) {
    n = std::snprintf(buf, sizeof buf,
                      "[%s TP%d] Prefill batch, #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, #running-req: %d, #queue-req: %d, \n",
                      ts, tp, 1 + rng.below(16), rng.below(16384), rng.below(8192), rng.unit(), rng.below(256), rng.below(50));
  } else {
    n = std::snprintf(buf, sizeof buf, "[%s] INFO:     10.0.%d.%d:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
                      ts, rng.below(256), rng.below(256), 30000 + rng.below(30000));
  }
  out.append(buf, static_cast<std::size_t>(n));
  return static_cast<std::size_t>(n);
}

std::size_t vllm_line(Rng& rng, const Clock& clock, std::string& out) {
  char ts[32];
  clock.vllm(ts);
  char buf[1024];
  int r = rng.below(100000);
  int n = 0;
  if (r < 1) {
    n = std::snprintf(buf, sizeof buf,
                      "(EngineCore_DP0 pid=79) ERROR %s [core.py:843] EngineCore encountered a fatal error.\n"
                      "(EngineCore_DP0 pid=79) ERROR %s [core.py:843] Traceback (most recent call last):\n"
                      "(EngineCore_DP0 pid=79) ERROR %s [core.py:843]   File \"core.py\", line 834, in run_engine_core\n"
                      "(EngineCore_DP0 pid=79) ERROR %s [core.py:843] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.19 GiB of which 2.13 GiB is free.\n",
                      ts, ts, ts, ts);
  } else if (r < 10000) {
    n = std::snprintf(buf, sizeof buf,
                      "(APIServer pid=1) INFO %s [loggers.py:208] Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%\n",
                      ts, rng.unit() * 90000, rng.unit() * 4000, rng.below(256), rng.below(64), rng.unit() * 100, rng.unit() * 100);
  } else {
    n = std::snprintf(buf, sizeof buf,
                      "(APIServer pid=1) INFO:     10.1.%d.%d:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
                      rng.below(256), rng.below(256), 40000 + rng.below(20000));
  }
  out.append(buf, static_cast<std::size_t>(n));
  return static_cast<std::size_t>(n);
}

}  // namespace

int main(int argc, char** argv) {
  std::string server = "mixed";
  double mb = 300;
  std::uint64_t seed = 42;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--server") == 0) server = argv[i + 1];
    if (std::strcmp(argv[i], "--mb") == 0) mb = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--seed") == 0) seed = std::strtoull(argv[i + 1], nullptr, 10);
  }
  Rng rng{seed * 2654435761u + 1};
  Clock clock;
  auto target = static_cast<std::size_t>(mb * 1024 * 1024);
  std::size_t written = 0;
  std::string chunk;
  chunk.reserve(1 << 20);
  bool vllm_phase = server == "vllm";
  while (written < target) {
    clock.tick(rng);
    if (server == "mixed" && rng.below(2000000) == 0) vllm_phase = !vllm_phase;
    written += vllm_phase ? vllm_line(rng, clock, chunk) : sglang_line(rng, clock, chunk);
    if (chunk.size() > (1 << 20) - 2048) {
      std::fwrite(chunk.data(), 1, chunk.size(), stdout);
      chunk.clear();
    }
  }
  std::fwrite(chunk.data(), 1, chunk.size(), stdout);
  return 0;
}
