// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "logrx/line.h"
#include "parse/line_parser_internal.h"

using logrx::Dialect;
using logrx::LineEvent;
using logrx::parse_line;

TEST_CASE("SGLang lines give timestamp, rank tags and message", "[parse][sglang]") {
  LineEvent e;
  parse_line("[2025-04-03 20:06:34 DP1 TP0] Watchdog timeout (self.watchdog_timeout=300)", 7, e);
  CHECK(e.line == 7);
  CHECK(e.dialect == Dialect::SGLang);
  CHECK(e.has_timestamp);
  CHECK(e.timestamp.year == 2025);
  CHECK(e.timestamp.month == 4);
  CHECK(e.timestamp.second == 34);
  CHECK(e.timestamp_text == "2025-04-03 20:06:34");
  CHECK(e.process == "DP1 TP0");
  CHECK(e.level.empty());
  CHECK(e.message == "Watchdog timeout (self.watchdog_timeout=300)");
}

TEST_CASE("SGLang lines without rank tag or without timestamp are recognised", "[parse][sglang]") {
  LineEvent e;
  parse_line("[2026-05-23 07:40:53] Load weight begin. avail mem=50.69 GB", 1, e);
  CHECK(e.dialect == Dialect::SGLang);
  CHECK(e.process.empty());
  CHECK(e.message == "Load weight begin. avail mem=50.69 GB");

  parse_line("[TP0 EP0] Load weight begin. avail mem=108.11 GB", 2, e);
  CHECK(e.dialect == Dialect::SGLang);
  CHECK_FALSE(e.has_timestamp);
  CHECK(e.process == "TP0 EP0");

  parse_line("[2026-07-01 15:18:59 ATTN_CP1 MOE_DP2 TP9] x", 3, e);
  CHECK(e.process == "ATTN_CP1 MOE_DP2 TP9");
}

TEST_CASE("SGLang uvicorn lines carry a level", "[parse][sglang]") {
  LineEvent e;
  parse_line("[2026-05-23 07:41:06] INFO:     Application startup complete.", 1, e);
  CHECK(e.dialect == Dialect::SGLang);
  CHECK(e.level == "INFO");
  CHECK(e.message == "Application startup complete.");
}

TEST_CASE("Bracketed text that is not an SGLang header stays unknown", "[parse][sglang]") {
  LineEvent e;
  parse_line("[rank0]: Traceback (most recent call last):", 1, e);
  CHECK(e.dialect == Dialect::Unknown);
  // torch's rank tag is looked through (see "Launcher tags ..."), not read as a header.
  CHECK(e.message == "Traceback (most recent call last):");
  parse_line("[2026-13-01 00:00:00] bad month", 1, e);
  CHECK(e.dialect == Dialect::Unknown);
}

TEST_CASE("vLLM lines give process, pid, level, timestamp without year and source", "[parse][vllm]") {
  LineEvent e;
  parse_line(
      "(EngineCore_DP0 pid=79) INFO 12-25 04:53:55 [kv_cache_utils.py:1291] GPU KV cache size: "
      "211,936 tokens",
      3, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.process == "EngineCore_DP0");
  CHECK(e.pid == 79);
  CHECK(e.level == "INFO");
  CHECK(e.timestamp.year == 0);
  CHECK(e.timestamp.month == 12);
  CHECK(e.timestamp.day == 25);
  CHECK(e.timestamp_text == "12-25 04:53:55");
  CHECK(e.source == "kv_cache_utils.py:1291");
  CHECK(e.message == "GPU KV cache size: 211,936 tokens");
}

TEST_CASE("vLLM worker, Ray and unprefixed forms are recognised", "[parse][vllm]") {
  LineEvent e;
  parse_line("(VllmWorker rank=2 pid=504) ERROR 05-04 12:23:00 [multiproc_executor.py:380] "
             "WorkerProc hit an exception: boom",
             1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.process == "VllmWorker rank=2");
  CHECK(e.level == "ERROR");
  CHECK(e.message == "WorkerProc hit an exception: boom");

  parse_line("(RayWorkerWrapper pid=206994, ip=10.0.0.3) INFO 05-04 12:23:00 [a.py:1] hi", 1, e);
  CHECK(e.process == "RayWorkerWrapper");
  CHECK(e.pid == 206994);
  CHECK(e.message == "hi");

  parse_line("INFO 04-29 22:59:27 [loader.py:458] Loading weights took 3.10 seconds", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.process.empty());
  CHECK(e.message == "Loading weights took 3.10 seconds");

  parse_line("INFO 03-01 10:30:57 worker.py:267] Memory profiling takes 1.48 seconds", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.source == "worker.py:267");
  CHECK(e.message == "Memory profiling takes 1.48 seconds");
}

TEST_CASE("A vLLM process prefix without a record header is raw process output", "[parse][vllm]") {
  LineEvent e;
  parse_line("(EngineCore_DP0 pid=265) Traceback (most recent call last):", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.level.empty());
  CHECK(e.process == "EngineCore_DP0");
  CHECK(e.message == "Traceback (most recent call last):");
}

TEST_CASE("ANSI colour, OSC sequences and carriage returns are removed", "[parse][sanitize]") {
  LineEvent e;
  parse_line("\x1b[36m(APIServer pid=1)\x1b[0m \x1b[32mINFO\x1b[0m 12-25 04:48:38 "
             "[api_server.py:1351] vLLM API server version 0.13.0\r",
             1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.process == "APIServer");
  CHECK(e.message == "vLLM API server version 0.13.0");
  CHECK(e.text.find('\x1b') == std::string::npos);

  parse_line("before\x1b]0;window title\x07" "after\x1b]8;;http://x\x1b\\" "link", 1, e);
  CHECK(e.text == "beforeafterlink");
}

TEST_CASE("Colour codes whose ESC a paste lost are removed too", "[parse][sanitize]") {
  LineEvent e;
  parse_line("\xEF\xBF\xBD[1;36m(EngineCore_0 pid=79)\xEF\xBF\xBD[0;0m ERROR 06-13 11:42:20 [core.py:1] boom", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.process == "EngineCore_0");
  CHECK(e.message == "boom");
  parse_line("\x9b[31mred\xEF\xBF\xBD not a code", 1, e);
  CHECK(e.text == "red\xEF\xBF\xBD not a code");
}

TEST_CASE("Python's logging as KServe formats it gives the level, time and message", "[parse]") {
  LineEvent e;
  parse_line("2024-07-01 07:28:04.488 1 kserve ERROR [__main__.py:<module>():254] Failed to start model server: "
             "integer division or modulo by zero", 1, e);
  CHECK(e.dialect == Dialect::Unknown);
  CHECK(e.level == "ERROR");
  CHECK(e.has_timestamp);
  CHECK(e.timestamp.year == 2024);
  CHECK(e.timestamp.millisecond == 488);
  CHECK(e.process == "kserve");
  CHECK(e.source == "__main__.py:<module>():254");
  CHECK(e.message == "Failed to start model server: integer division or modulo by zero");
  // Look-alikes stay text.
  parse_line("2024-07-01 07:28:04.488 1 kserve said ERROR [x] no", 1, e);
  CHECK(e.level.empty());
  parse_line("2024-07-01 07:28:04.488 12 items ERROR [no colon] here", 1, e);
  CHECK(e.level.empty());
}

TEST_CASE("Ray's C++ and Python log lines give the level, component, file and message", "[parse]") {
  LineEvent e;
  parse_line("[2023-07-23 15:21:29,851 E 9751 9751] (raylet) node_manager.cc:3084: 4 Workers (tasks / actors) "
             "killed due to memory pressure (OOM)", 1, e);
  CHECK(e.dialect == Dialect::Unknown);
  CHECK(e.level == "ERROR");
  CHECK(e.process == "raylet");
  CHECK(e.source == "node_manager.cc:3084");
  CHECK(e.message == "4 Workers (tasks / actors) killed due to memory pressure (OOM)");
  // No time: a full date beside a server's year-less one would read as a jump.
  CHECK_FALSE(e.has_timestamp);
  // Before Ray 2.x there is no component; the driver echoes a daemon's line
  // behind "(raylet) " or "(raylet, ip=...) ".
  parse_line("[2024-06-13 16:11:51,588 C 13261 13261] core_worker.cc:228: Failed to register worker to Raylet", 1, e);
  CHECK(e.level == "CRITICAL");
  CHECK(e.source == "core_worker.cc:228");
  CHECK(e.message == "Failed to register worker to Raylet");
  parse_line("(raylet, ip=10.0.0.2) [2025-04-02 15:02:00,117 W 135782 135782] (raylet) node_manager.cc:3069: slow",
             1, e);
  CHECK(e.level == "WARNING");
  CHECK(e.process == "raylet");
  CHECK(e.message == "slow");
  parse_line("2025-02-22 21:02:44,020\tINFO worker.py:1654 -- Connecting to existing Ray cluster at address: x:6379",
             1, e);
  CHECK(e.level == "INFO");
  CHECK(e.source == "worker.py:1654");
  CHECK(e.message == "Connecting to existing Ray cluster at address: x:6379");
  // Look-alikes stay text.
  parse_line("[2023-07-23 15:21:29,851 X 9751 9751] node_manager.cc:1: no", 1, e);
  CHECK(e.level.empty());
  parse_line("[2023-07-23 15:21:29,851 E pid 9751] node_manager.cc:1: no", 1, e);
  CHECK(e.level.empty());
  parse_line("2025-02-22 21:02:44,020 INFO worker.py:1654 -- no tab, no Ray", 1, e);
  CHECK(e.level.empty());
  parse_line("(raylets) [2023-07-23 15:21:29,851 E 9751 9751] x.cc:1: not Ray's daemon", 1, e);
  CHECK(e.process.empty());
}

TEST_CASE("dmesg's prefixes and trtexec's levels are taken off", "[parse]") {
  LineEvent e;
  parse_line("[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).", 1, e);
  CHECK(e.process == "kernel");
  CHECK(e.message == "NVRM: The NVIDIA probe routine failed for 1 device(s).");
  parse_line("[Sun Mar 30 08:24:00 2025] Out of memory: Killed process 7899 (python)", 1, e);
  CHECK(e.process == "kernel");
  CHECK(e.message == "Out of memory: Killed process 7899 (python)");
  // An epoch in brackets is another program's time (UCX), not the kernel's uptime.
  parse_line("[1721216845.639899] [host:849  :f]        vfs_fuse.c:281  UCX  ERROR inotify_add_watch failed", 1, e);
  CHECK(e.process.empty());
  parse_line("[12.5] not a kernel line", 1, e);
  CHECK(e.process.empty());
  parse_line("[09/11/2024-21:49:27] [E] Engine set up failed", 1, e);
  CHECK(e.level == "ERROR");
  CHECK(e.message == "Engine set up failed");
  CHECK(e.dialect == Dialect::Unknown);
  CHECK(e.has_timestamp);
}

TEST_CASE("Colour codes and CRs written out as text are removed", "[parse][sanitize]") {
  LineEvent e;
  // A paste that dropped the ESC bytes.
  parse_line("[1;36m(EngineCore_DP0 pid=79)[0;0m ERROR 06-13 11:42:20 [core.py:1] boom", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.process == "EngineCore_DP0");
  CHECK(e.level == "ERROR");
  CHECK(e.message == "boom");
  // cat -v / less caret notation, with the CR at the end.
  parse_line("^[[36m(APIServer pid=1)^[[0m ^[[32mINFO^[[0m 12-25 04:48:38 [api_server.py:1351] up^M", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.level == "INFO");
  CHECK(e.message == "up");
  // rsyslog's octal escapes.
  std::string out;
  logrx::sanitize_line("host vllm[7]: #033[1;36m(APIServer pid=1)#033[0;0m text#015", out);
  CHECK(out == "host vllm[7]: (APIServer pid=1) text");
  // What only looks like them stays.
  logrx::sanitize_line("waited [5m] for the node", out);
  CHECK(out == "waited [5m] for the node");
  logrx::sanitize_line("x ^M y and #0331 and ^[x", out);
  CHECK(out == "x ^M y and #0331 and ^[x");
  logrx::sanitize_line("#running-req: 3, #token: 10", out);
  CHECK(out == "#running-req: 3, #token: 10");
}

TEST_CASE("Invalid UTF-8 and NUL bytes become U+FFFD, valid UTF-8 is kept", "[parse][sanitize]") {
  std::string out;
  logrx::sanitize_line(std::string("a\xff" "b\0c", 5), out);
  CHECK(out == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c");
  logrx::sanitize_line("100%|\xE2\x96\x88\xE2\x96\x88|", out);
  CHECK(out == "100%|\xE2\x96\x88\xE2\x96\x88|");
  logrx::sanitize_line("overlong \xC0\xAF and surrogate \xED\xA0\x80", out);
  CHECK(out.find("\xC0") == std::string::npos);
  CHECK(out.find("\xED\xA0") == std::string::npos);
  logrx::sanitize_line("cut \xE2\x96", out);
  CHECK(out == "cut \xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("The other servers' line formats are recognised", "[parse][dialects]") {
  LineEvent e;
  parse_line("2024-06-12T10:00:20.912333Z ERROR text_generation_launcher: Webserver Crashed", 1, e);
  CHECK(e.dialect == Dialect::TGI);
  CHECK(e.level == "ERROR");
  CHECK(e.timestamp.year == 2024);
  CHECK(e.message == "text_generation_launcher: Webserver Crashed");

  parse_line("time=2025-03-01T10:00:00.000Z level=WARN source=runner.go:130 msg=\"truncating input prompt\" limit=2048", 2, e);
  CHECK(e.dialect == Dialect::Ollama);
  CHECK(e.level == "WARNING");
  CHECK(e.source == "runner.go:130");
  CHECK(e.message == "msg=\"truncating input prompt\" limit=2048");

  parse_line("[GIN] 2025/03/01 - 10:00:02 | 200 |  1.2s | 127.0.0.1 | POST \"/api/chat\"", 3, e);
  CHECK(e.dialect == Dialect::Ollama);

  parse_line("srv  log_server_r: request: POST /completion 127.0.0.1 200", 4, e);
  CHECK(e.dialect == Dialect::LlamaCpp);
  parse_line("llama_model_load: error loading model: unknown model architecture: 'gemma4'", 5, e);
  CHECK(e.dialect == Dialect::LlamaCpp);
  // common/log.cpp's prefix: minutes since start and a level letter.
  parse_line("0.26.291.198 E srv                send_error: task 12 | error = input is too large to process", 5, e);
  CHECK(e.dialect == Dialect::LlamaCpp);
  CHECK(e.level == "ERROR");
  CHECK_FALSE(e.has_timestamp);
  CHECK(e.message == "srv                send_error: task 12 | error = input is too large to process");
  parse_line("123.05.000.007 W llama_context: n_ctx_per_seq (4096) < n_ctx_train (131072)", 5, e);
  CHECK(e.dialect == Dialect::LlamaCpp);
  CHECK(e.level == "WARNING");
  parse_line("I slot launch_slot_: id  0 | task 0 | processing task", 5, e);
  CHECK(e.dialect == Dialect::LlamaCpp);
  CHECK(e.level == "INFO");
  // PyTorch's C++ logging, behind torch.distributed's rank tag and alone.
  parse_line("[rank1]:[E909 08:45:30.126335825 ProcessGroupNCCL.cpp:2252] [PG ID 2 PG GUID 3 Rank 1]  failure detected by watchdog", 5, e);
  INFO(e.message);
  CHECK(e.level == "ERROR");
  CHECK(e.message == "[PG ID 2 PG GUID 3 Rank 1]  failure detected by watchdog");
  parse_line("[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500", 5, e);
  CHECK(e.level == "WARNING");
  CHECK(e.message == "[c10d] The client socket has failed to connect to [localhost]:29500");
  parse_line("[W1209 10:58:28.523284 49843 torch/csrc/distributed/c10d/socket.cpp:767] [c10d] x", 5, e);
  CHECK(e.level == "WARNING");
  CHECK(e.message == "[c10d] x");
  parse_line("E get_hf_plan: file 'x.gguf' not found in repository", 5, e);
  CHECK(e.dialect == Dialect::LlamaCpp);
  CHECK(e.level == "ERROR");
  // A level letter alone is not enough, nor a number that is not the time.
  parse_line("E something else entirely", 5, e);
  CHECK(e.dialect != Dialect::LlamaCpp);
  parse_line("I Love: this line", 5, e);
  CHECK(e.dialect != Dialect::LlamaCpp);
  parse_line("0.26.291 E srv send_error: x", 5, e);
  CHECK(e.dialect != Dialect::LlamaCpp);

  parse_line("2024-05-10 12:00:00,123 - lmdeploy - ERROR - engine.py:1 - No enough blocks", 6, e);
  CHECK(e.dialect == Dialect::LMDeploy);
  CHECK(e.level == "ERROR");
  parse_line("[TM][WARNING] [LlamaTritonModel] `max_context_token_num` is not set", 7, e);
  CHECK(e.dialect == Dialect::LMDeploy);
  CHECK(e.level == "WARNING");

  parse_line("[05/10/2024-12:00:00] [TRT-LLM] [E] Executor creation failed", 8, e);
  CHECK(e.dialect == Dialect::TRTLLM);
  CHECK(e.level == "ERROR");
  CHECK(e.timestamp.year == 2024);
  parse_line("[TensorRT-LLM][ERROR] Assertion failed: mNextBlocks.empty()", 9, e);
  CHECK(e.dialect == Dialect::TRTLLM);
  CHECK(e.message == "Assertion failed: mNextBlocks.empty()");
}

TEST_CASE("Compose, docker --timestamps and syslog prefixes are looked through", "[parse][dialects]") {
  LineEvent e;
  parse_line("vllm-1  | INFO 05-12 10:00:00 [api_server.py:1] vLLM API server version 0.8.5", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.message == "vLLM API server version 0.8.5");

  parse_line("2025-01-17T10:00:00.123456789Z [2026-05-23 07:40:53] Load weight begin. avail mem=50.69 GB", 2, e);
  CHECK(e.dialect == Dialect::SGLang);
  CHECK(e.message == "Load weight begin. avail mem=50.69 GB");

  parse_line("Jan 17 10:00:00 gpu1 ollama[1234]: time=2025-01-17T10:00:00.000Z level=INFO source=routes.go:1 msg=\"Listening on [::]:11434\"", 3, e);
  CHECK(e.dialect == Dialect::Ollama);

  // Not a prefix: an unknown line behind it stays as it is.
  parse_line("Jan 17 10:00:00 gpu1 kernel: Out of memory: Killed process 1234 (python3)", 4, e);
  CHECK(e.dialect == Dialect::Unknown);
  CHECK(e.message == "Jan 17 10:00:00 gpu1 kernel: Out of memory: Killed process 1234 (python3)");
  parse_line("ValueError: a | b", 5, e);
  CHECK(e.dialect == Dialect::Unknown);
}

TEST_CASE("Launcher tags in front of a line are looked through", "[parse][launchers]") {
  LineEvent e;
  parse_line("[rank0]: Traceback (most recent call last):", 1, e);
  CHECK(e.message == "Traceback (most recent call last):");
  CHECK(e.process == "rank0");
  parse_line("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", 1, e);
  CHECK(e.message == "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.");
  CHECK(e.process == "rank1");
  parse_line("Thu Jan 23 11:55:50 2025[1,1]<stderr>:  File \"/x/scheduler.py\", line 489, in f", 1, e);
  CHECK(e.message == "  File \"/x/scheduler.py\", line 489, in f");
  CHECK(e.process == "1,1");
  parse_line("[1,0]<stdout>:[2026-05-23 07:40:41 TP0] Load weight begin. avail mem=77.32 GB", 1, e);
  CHECK(e.dialect == Dialect::SGLang);
  CHECK(e.process == "TP0");
  CHECK(e.message == "Load weight begin. avail mem=77.32 GB");
  parse_line("(pid=4242) INFO 12-25 04:49:08 [gpu_model_runner.py:3549] Model loading took 15.27 GiB", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.process == "pid=4242");
  // A log quoted in Markdown.
  parse_line("> [2026-05-23 07:40:41 TP0] Scheduler hit an exception: Traceback (most recent call last):", 1, e);
  CHECK(e.dialect == Dialect::SGLang);
  CHECK(e.message == "Scheduler hit an exception: Traceback (most recent call last):");
  parse_line(">   File \"/x/scheduler.py\", line 489, in f", 1, e);
  CHECK(e.message == "  File \"/x/scheduler.py\", line 489, in f");
  // The same quote as a renderer's bar.
  parse_line("\xE2\x96\x8E (EngineCore_DP0 pid=9) ERROR 07-01 16:00:00 [core.py:1] ValueError: boom", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.message == "ValueError: boom");
  parse_line("\xE2\x96\x8E", 1, e);
  CHECK(e.message.empty());
  // Look-alikes are text.
  parse_line("[rank] is not a tag", 1, e);
  CHECK(e.message == "[rank] is not a tag");
  parse_line("[1,2,3] list", 1, e);
  CHECK(e.message == "[1,2,3] list");
  // A line of nothing but tags stays bounded.
  std::string tags;
  for (int i = 0; i < 5000; ++i) tags += "[rank0]:";
  parse_line(tags, 1, e);
  CHECK(e.message.size() < tags.size());
}

// The light path trusts this to skip parsing a vLLM API server's uvicorn
// records a second time (survey_lines): whatever follows the level, even
// another server's whole line, no header starts with "LEVEL:  ".
TEST_CASE("uvicorn records are no server's header", "[parse][vllm]") {
  const std::string_view tails[] = {
      "10.1.143.176:53748 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
      "Started server process [1]",
      "[2026-06-02 14:00:01 TP2] Decode batch, #running-req: 136",
      "INFO 06-02 14:00:02 [loggers.py:208] Engine 000: Avg prompt throughput",
      "(EngineCore_DP0 pid=79) ERROR 07-01 16:00:00 [core.py:1] x",
      "vllm-1  | INFO 06-02 14:00:02 [api_server.py:1] up",
      "2024-05-10T12:00:00.123456Z  INFO text_generation_launcher: Starting",
      "Jan 17 10:00:00 host ollama[123]: time=2024-05-10T12:00:00.000Z level=INFO msg=x",
      "E1103 02:59:01.152656 81041 backend_model.cc:553] failed",
      "[rank0]: Traceback (most recent call last):",
      "llama_model_load: error loading model",
  };
  for (std::string_view level : {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}) {
    for (std::string_view spaces : {" ", "     ", "  "}) {
      for (std::string_view tail : tails) {
        std::string text = std::string(level) + ":" + std::string(spaces) + std::string(tail);
        INFO(text);
        CHECK(logrx::detail::is_uvicorn_record(text));
        CHECK(logrx::detail::parse_header(text).dialect == logrx::Dialect::Unknown);
      }
    }
  }
  CHECK_FALSE(logrx::detail::is_uvicorn_record("INFO 06-02 14:00:02 [loggers.py:208] x"));
  CHECK_FALSE(logrx::detail::is_uvicorn_record("INFO:"));
  CHECK_FALSE(logrx::detail::is_uvicorn_record("Information: x"));
}

TEST_CASE("A shipper's prefix before a server line is taken off", "[parse][prefix]") {
  LineEvent e;
  // Docker Desktop's copied log view.
  parse_line("2025-03-05 12:00:01 ERROR 03-05 12:00:01 [engine.py:1] RuntimeError: CUDA error", 1, e);
  CHECK(e.dialect == Dialect::VLLM);
  CHECK(e.level == "ERROR");
  CHECK(e.message == "RuntimeError: CUDA error");
  // A stream tag carries no time of its own.
  parse_line("[stderr] llama_model_load: error loading model: tensor 'x' not found", 2, e);
  CHECK(e.dialect == Dialect::LlamaCpp);
  CHECK_FALSE(e.has_timestamp);
  // Python logging's own layout is no prefix.
  parse_line("2024-01-01 10:00:00 1234 vllm.engine INFO [a.py:1] started", 3, e);
  CHECK(e.dialect != Dialect::VLLM);
  CHECK(e.level == "INFO");
}

TEST_CASE("Behind a compose replica's prefix the message is what the container wrote", "[parse][prefix]") {
  LineEvent e;
  parse_line("pull-model-1  | panic: runtime error: invalid memory address", 1, e);
  CHECK(e.dialect == Dialect::Unknown);
  CHECK(e.message == "panic: runtime error: invalid memory address");
  parse_line("app_vllm_1 | ValueError: x", 2, e);
  CHECK(e.message == "ValueError: x");
  // A level column is not a compose service.
  parse_line("ERROR | failed to connect", 3, e);
  CHECK(e.message == "ERROR | failed to connect");
  parse_line("INFO | x", 4, e);
  CHECK(e.message == "INFO | x");
}

TEST_CASE("Wrappers' columns, exports' epochs and editors' line numbers before a server line",
          "[parse][prefix]") {
  const std::string vllm = "(VllmWorker rank=1 pid=2775) ERROR 03-20 16:54:38 [multiproc_executor.py:375] RuntimeError: x";
  for (const std::string prefix : {"2026-05-29 09:14:45,594 - INFO - [container] ", "2025-03-20 16:54:38.604 [Info] (Process) ",
                                   "1756143989824,", "41  ", "41\t", "41 | ", "41: "}) {
    LineEvent e;
    INFO(prefix);
    parse_line(prefix + vllm, 1, e);
    CHECK(e.dialect == Dialect::VLLM);
    CHECK(e.process == "VllmWorker rank=1");
    CHECK(e.level == "ERROR");
    CHECK(e.message == "RuntimeError: x");
  }
  // The wrapper's time is the line's when the server's line has none.
  LineEvent e;
  parse_line("2026-05-29 09:14:45,594 - INFO - [container] [TP0] Load weight end.", 2, e);
  CHECK(e.dialect == Dialect::SGLang);
  CHECK(e.timestamp_text == "2026-05-29 09:14:45,594");
  // A server's own bracket after Docker Desktop's time is not a wrapper column.
  parse_line("2024-01-05 10:38:07 [GIN] 2023/10/02 - 03:30:54 | 200 |  3.7s |  127.0.0.1 | POST \"/api/generate\"", 3, e);
  CHECK(e.dialect == Dialect::Ollama);
}
