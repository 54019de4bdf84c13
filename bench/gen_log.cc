// SPDX-License-Identifier: MIT
// Writes a large, realistic inference-server log to stdout: steady-state
// SGLang or vLLM traffic (batch statistics, periodic engine stats, access
// logs) with rare problem lines and tracebacks, deterministic for a seed.
//   gen_log [--server sglang|vllm|mixed|serving] [--mb N] [--seed S] [--problem-every N]
// "serving" interleaves both servers line by line, the way a shared log of an
// SGLang and a vLLM deployment reads: batch statistics, vLLM's throughput
// lines and access lines from both, one problem line (a warning some rule
// knows, now and then a short traceback) per --problem-every lines (5000).
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

// The steady-state lines both generators write, into buf (1024 bytes).
int decode_batch(char* buf, Rng& rng, const char* ts, int tp) {
  return std::snprintf(buf, 1024,
                       "[%s TP%d] Decode batch, #running-req: %d, #token: %d, token usage: %.2f, cuda graph: True, gen throughput (token/s): %.2f, #queue-req: %d, \n",
                       ts, tp, rng.below(256), rng.below(400000), rng.unit(), 1000 + rng.unit() * 5000, rng.below(50));
}

int prefill_batch(char* buf, Rng& rng, const char* ts, int tp) {
  return std::snprintf(buf, 1024,
                       "[%s TP%d] Prefill batch, #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, #running-req: %d, #queue-req: %d, \n",
                       ts, tp, 1 + rng.below(16), rng.below(16384), rng.below(8192), rng.unit(), rng.below(256), rng.below(50));
}

int sglang_access(char* buf, Rng& rng, const char* ts) {
  return std::snprintf(buf, 1024, "[%s] INFO:     10.0.%d.%d:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
                       ts, rng.below(256), rng.below(256), 30000 + rng.below(30000));
}

int vllm_stats(char* buf, Rng& rng, const char* ts) {
  return std::snprintf(buf, 1024,
                       "(APIServer pid=1) INFO %s [loggers.py:208] Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%\n",
                       ts, rng.unit() * 90000, rng.unit() * 4000, rng.below(256), rng.below(64), rng.unit() * 100, rng.unit() * 100);
}

int vllm_access(char* buf, Rng& rng) {
  return std::snprintf(buf, 1024, "(APIServer pid=1) INFO:     10.1.%d.%d:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
                       rng.below(256), rng.below(256), 40000 + rng.below(20000));
}

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
    n = decode_batch(buf, rng, ts, tp);
  } else if (r < 85000) {
    n = prefill_batch(buf, rng, ts, tp);
  } else {
    n = sglang_access(buf, rng, ts);
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
    n = vllm_stats(buf, rng, ts);
  } else {
    n = vllm_access(buf, rng);
  }
  out.append(buf, static_cast<std::size_t>(n));
  return static_cast<std::size_t>(n);
}

// One line of the "serving" log; `problem` picks a problem line instead.
std::size_t serving_line(Rng& rng, const Clock& clock, bool problem, std::string& out) {
  char sg[32];
  char vl[32];
  clock.sglang(sg);
  clock.vllm(vl);
  char buf[1024];
  int n = 0;
  int tp = rng.below(4);
  if (problem) {
    switch (rng.below(20)) {
      case 0:
        n = std::snprintf(buf, sizeof buf,
                          "[%s TP%d] Scheduler hit an exception: Traceback (most recent call last):\n"
                          "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 2900, in run_scheduler_process\n"
                          "    scheduler.event_loop_overlap()\n"
                          "RuntimeError: Prefill out of memory. Try to lower your batch size.\n",
                          sg, tp);
        break;
      case 1: case 2: case 3: case 4: case 5:
        n = std::snprintf(buf, sizeof buf,
                          "(EngineCore_DP0 pid=79) WARNING %s [scheduler.py:1754] Sequence group cmpl-%08x is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=%d\n",
                          vl, static_cast<unsigned>(rng.next()), 1 + 50 * rng.below(100));
        break;
      case 6: case 7: case 8: case 9: case 10: case 11:
        n = std::snprintf(buf, sizeof buf,
                          "[%s TP%d] KV cache pool is full. Retract requests. #retracted_reqs: %d, #new_token_ratio: 0.%04d -> 0.%04d\n",
                          sg, tp, 1 + rng.below(8), rng.below(10000), rng.below(10000));
        break;
      case 12: case 13: case 14:
        n = std::snprintf(buf, sizeof buf,
                          "[%s TP%d] Decode out of memory happened. #retracted_reqs: %d, #new_token_ratio: 0.%04d -> 0.%04d\n",
                          sg, tp, 1 + rng.below(8), rng.below(10000), rng.below(10000));
        break;
      default:
        n = std::snprintf(buf, sizeof buf,
                          "(APIServer pid=1) ERROR %s [serving_chat.py:222] Error in preprocessing prompt inputs\n", vl);
        break;
    }
  } else {
    int r = rng.below(1000);
    if (r < 300) {
      n = decode_batch(buf, rng, sg, tp);
    } else if (r < 400) {
      n = prefill_batch(buf, rng, sg, tp);
    } else if (r < 550) {
      n = sglang_access(buf, rng, sg);
    } else if (r < 650) {
      n = vllm_stats(buf, rng, vl);
    } else if (r < 700) {
      n = std::snprintf(buf, sizeof buf,
                        "(APIServer pid=1) INFO %s [logger.py:43] Received request chatcmpl-%08x%08x: prompt: '', params: SamplingParams(n=1, temperature=0.7, top_p=1.0, max_tokens=%d), lora_request: None.\n",
                        vl, static_cast<unsigned>(rng.next()), static_cast<unsigned>(rng.next()), 16 + rng.below(4096));
    } else {
      n = vllm_access(buf, rng);
    }
  }
  out.append(buf, static_cast<std::size_t>(n));
  return static_cast<std::size_t>(n);
}

}  // namespace

int main(int argc, char** argv) {
  std::string server = "mixed";
  double mb = 300;
  std::uint64_t seed = 42;
  int problem_every = 5000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--server") == 0) server = argv[i + 1];
    if (std::strcmp(argv[i], "--mb") == 0) mb = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--seed") == 0) seed = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--problem-every") == 0) problem_every = std::atoi(argv[i + 1]);
  }
  if (problem_every < 1) problem_every = 1;
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
    if (server == "serving")
      written += serving_line(rng, clock, rng.below(problem_every) == 0, chunk);
    else
      written += vllm_phase ? vllm_line(rng, clock, chunk) : sglang_line(rng, clock, chunk);
    if (chunk.size() > (1 << 20) - 2048) {
      std::fwrite(chunk.data(), 1, chunk.size(), stdout);
      chunk.clear();
    }
  }
  std::fwrite(chunk.data(), 1, chunk.size(), stdout);
  return 0;
}
