// SPDX-License-Identifier: MIT
// Structure and lexical tiers: an unknown error still gets a category and the
// flags its message names, and never outranks a specific rule.
#include <catch2/catch.hpp>
#include <algorithm>

#include "logrx/analyzer.h"
#include "support/test_support.h"

using logrx::Category;
using logrx::Finding;
using logrx::Report;
using logrx::Severity;
using logrx::Tier;
using logrx::test::load_builtin;
using logrx::test::scan_text;

namespace {

const Finding* strongest(const Report& report) { return logrx::strongest_finding(report); }

const logrx::RemediationItem* item(const Finding& f, const std::string& name) {
  for (const auto& i : f.remediation)
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace

TEST_CASE("A ValueError raised while validating arguments is a config conflict", "[analysis][tiers]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "Traceback (most recent call last):\n"
                          "  File \"/usr/lib/python3/site-packages/vllm/engine/arg_utils.py\", line 9, in create_engine_config\n"
                          "    raise ValueError(msg)\n"
                          "ValueError: max_num_seqs (300) must be less than or equal to max_cudagraph_capture_size (256).\n");
  const Finding* f = strongest(report);
  REQUIRE(f != nullptr);
  CHECK(f->tier == Tier::Structure);
  CHECK(f->category == Category::ConfigConflict);
  CHECK(f->server == "vllm");  // from the traceback's path
  REQUIRE(item(*f, "--max-num-seqs") != nullptr);
  CHECK(item(*f, "--max-num-seqs")->value == std::optional<std::string>("256"));
  CHECK(f->line == 4);
  CHECK(f->event_start == 1);
}

TEST_CASE("The same exception raised in model code is not a config conflict", "[analysis][tiers]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "Traceback (most recent call last):\n"
                          "  File \"/x/vllm/model_executor/models/llama.py\", line 3, in forward\n"
                          "ValueError: shapes (4, 3) and (2, 2) not aligned\n");
  const Finding* f = strongest(report);
  REQUIRE(f != nullptr);
  CHECK(f->tier == Tier::Lexical);
  CHECK(f->category != Category::ConfigConflict);
}

TEST_CASE("An excerpt that starts inside a traceback still has one", "[analysis][tiers]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "  File \"/sgl-workspace/sglang/python/sglang/srt/server_args.py\", line 512, in __post_init__\n"
                          "    assert self.page_size == 1\n"
                          "AssertionError: the chosen attention backend needs a page size of 1\n");
  const Finding* f = strongest(report);
  REQUIRE(f != nullptr);
  CHECK(f->rule_id == "logrx.structure.config-validation");
  CHECK(f->event_start == 1);
}

// A paste indented as a whole (a Markdown list, a quoted block): Python's
// layout starts after the indent, and the exception line is still one.
TEST_CASE("A traceback pasted indented as a whole is read as one", "[analysis][tiers]") {
  auto book = load_builtin();
  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/server_args.py\", line 512, in __post_init__\n"
      "    assert self.page_size == 1\n"
      "AssertionError: the chosen attention backend needs a page size of 1\n";
  auto indent = [&](const std::string& prefix, const std::string& pad) {
    std::string out;
    std::size_t from = 0;
    while (from < traceback.size()) {
      std::size_t end = traceback.find('\n', from);
      out += prefix + traceback.substr(from, end - from) + pad + "\n";
      from = end + 1;
    }
    return out;
  };
  auto plain_report = scan_text(book, traceback);
  const Finding* plain = strongest(plain_report);
  REQUIRE(plain != nullptr);
  for (const auto& [prefix, pad] : std::vector<std::pair<std::string, std::string>>{{"  ", ""}, {"    ", "      "}}) {
    INFO("indent '" << prefix << "', padding '" << pad << "'");
    auto report = scan_text(book, indent(prefix, pad));
    const Finding* f = strongest(report);
    REQUIRE(f != nullptr);
    CHECK(f->rule_id == plain->rule_id);
    CHECK(f->category == plain->category);
    CHECK(f->exception == plain->exception);
  }
  // Indented text that is no traceback stays as it was.
  auto prose = scan_text(book, "  Traceback counts were collected\n  RuntimeError is a word here\n");
  for (const Finding& f : prose.findings) CHECK(f.severity < Severity::Error);
}

// vLLM's executor re-raises a worker's exception inside its own message:
// a rule that knows the quoted message names the cause on that line.
TEST_CASE("A wrapper's quoted cause is matched as a message of its own", "[analysis][tiers]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "(EngineCore_DP0 pid=9) ERROR 07-01 16:00:00 [core.py:1] RuntimeError: Worker failed with "
                          "error 'CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 "
                          "GiB of which 1.2 GiB is free.', please check the stack trace above for the root cause\n");
  const Finding* f = strongest(report);
  REQUIRE(f != nullptr);
  CHECK(f->category == Category::MemoryPressure);
  CHECK(f->line == 1);
  CHECK(std::any_of(report.findings.begin(), report.findings.end(),
                    [](const Finding& w) { return w.rule_id == "vllm.lifecycle.worker-failed-with-error"; }));
  // A quote no rule knows leaves the wrapper alone.
  auto unknown = scan_text(book,
                           "(EngineCore_DP0 pid=9) ERROR 07-01 16:00:00 [core.py:1] RuntimeError: Worker failed with "
                           "error 'something nobody wrote a rule for', please check the stack trace above for the root cause\n");
  const Finding* w = strongest(unknown);
  REQUIRE(w != nullptr);
  CHECK(w->rule_id == "vllm.lifecycle.worker-failed-with-error");
}

TEST_CASE("Out-of-memory words make memory pressure, warnings never feed the tiers", "[analysis][tiers]") {
  auto book = load_builtin();
  auto oom = scan_text(book, "RuntimeError: the allocator reports out of memory on device 0\n");
  REQUIRE(strongest(oom) != nullptr);
  CHECK(strongest(oom)->category == Category::MemoryPressure);
  auto warning = scan_text(book,
                           "WARNING 05-12 10:00:00 [x.py:1] fp8 is not supported on this GPU, using bf16\n");
  for (const Finding& f : warning.findings) CHECK(f.severity < Severity::Error);
}

TEST_CASE("Error lines without a level feed the tiers by their shape", "[analysis][tiers]") {
  auto book = load_builtin();
  // The words after llama.cpp's function names, an assertion, an abort, a
  // level column of a format no parser knows (a rule may know some of them:
  // either way they are reported).
  for (const char* line : {
           "frobnicate_init: failed to allocate compute buffers",
           "srv    load_widget: failed to load widget, '/models/w.bin'",
           "widget_load: error loading widget: widget_loader: unable to read widget info",
           "/src/widget.c:1864: GGML_ASSERT(tensor->op == GGML_OP_UNARY) failed",
           "widget-server: /src/widget.cpp:1094: void widget_apply(widget*): Assertion `found' failed.",
           "Assertion failed: (n > 0), function widget_apply, file widget.c, line 12.",
           "./launch.sh: line 2: 3385755 Aborted                 (core dumped) python3 -m widget.serve",
           "zsh: abort      ./run-widget",
           "[14:50:16.302477] ERROR    widget.config: could not frobnicate the widget",
           "07/31 12:28:43 - service.ft - ERROR - widget chatbot.py - got a broken widget",
           "[ 518.070786] Out of memory: Killed process 15783 (python3) total-vm:11964kB, anon-rss:4288kB",
           "      Reason:       OOMKilled",
           "./entrypoint.sh: line 28:     7 Killed                  /app/bin/widget-server $ARGS",
           "/src/host/init/init.cu:widget_init:1080: widget initialization failed, exiting",
           "widget_modify_qp failed",
           "libc++abi: terminating due to uncaught exception of type std::runtime_error: widget exploded"}) {
    auto report = scan_text(book, std::string(line) + "\n");
    INFO(line);
    REQUIRE(strongest(report) != nullptr);
    CHECK(strongest(report)->severity >= Severity::Warning);
  }
  // A level word before the failure keeps it a warning or a note.
  for (const char* line : {"warning: failed to mlock 139264000-byte buffer (after previously locking 0 bytes)",
                           "[14:50:16.302477] INFO     widget.config: ERROR count is 0",
                           "frobnicate_init: loaded 12 widgets, 0 failed",
                           "[ 12.345678] widget: registered new interface driver",
                           "/src/widget.cpp:40: widget loaded in 3 s"}) {
    auto report = scan_text(book, std::string(line) + "\n");
    INFO(line);
    for (const Finding& f : report.findings) CHECK(f.severity < Severity::Warning);
  }
}

TEST_CASE("A specific rule outranks the tiers in its event", "[analysis][tiers]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "Traceback (most recent call last):\n"
                          "  File \"/x/sglang/srt/managers/scheduler.py\", line 3, in init\n"
                          "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.8\n");
  for (const Finding& f : report.findings) CHECK(f.tier == Tier::Rule);
}

TEST_CASE("Numbers that contradict the message's claim are reported, not prescribed against",
          "[analysis][tiers]") {
  auto book = load_builtin();
  auto report = scan_text(book, "Error: ArgumentValidation(\"`max_stop_sequences`(8) must be > `max_best_of`(4)\")\n");
  const Finding* f = strongest(report);
  REQUIRE(f != nullptr);
  CHECK(f->tier == Tier::Lexical);
  REQUIRE_FALSE(f->inconsistencies.empty());
  const auto* stop = item(*f, "--max-stop-sequences");
  CHECK((stop == nullptr || !stop->value));
}

TEST_CASE("A message cut by a terminal is matched across the two lines", "[analysis][tiers]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "[2026-05-23 07:40:41] server_args=ServerArgs(model_path='m')\n"
                          "RuntimeError: Not enough memory. Please try to increase --mem-fraction-st\n"
                          "atic. Current value: mem_fraction_static=0.8\n");
  const Finding* f = strongest(report);
  REQUIRE(f != nullptr);
  CHECK(f->rule_id == "sglang.memory.not-enough-memory");
  CHECK(f->captures.at("mem_fraction_static") == "0.8");
  REQUIRE(f->evidence.size() == 2);
  CHECK(f->evidence[0].line == 2);
}

TEST_CASE("A message a terminal wrapped into several lines is matched as one", "[analysis][tiers]") {
  auto book = load_builtin();
  // Wrapped at 100 columns: the second piece starts with the space the wrap fell on.
  const std::string message =
      "ValueError: To serve at least one request with the model's max seq len (262144), (32.00 GiB KV cache is "
      "needed, which is larger than the available KV cache memory (9.31 GiB). Based on the available memory, the "
      "estimated maximum model length is 76176. Try increasing `gpu_memory_utilization` or decreasing "
      "`max_model_len` when initializing the engine.";
  std::string log;
  for (std::size_t at = 0; at < message.size(); at += 100) log += message.substr(at, 100) + "\n";
  auto report = scan_text(book, log);
  const Finding* f = strongest(report);
  REQUIRE(f != nullptr);
  CHECK(f->rule_id == "vllm.memory.max-model-len-too-large");
  REQUIRE(f->evidence.size() >= 2);
  CHECK(f->evidence.front().line == 1);
  const logrx::RemediationItem* len = item(*f, "--max-model-len");
  REQUIRE(len != nullptr);
  REQUIRE(len->value);
  CHECK(*len->value == "75776");
  // A listing indented by two spaces is never read as a wrapped line.
  auto indented = scan_text(book,
                            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-st\n"
                            "  atic. Current value: mem_fraction_static=0.8\n");
  for (const Finding& each : indented.findings) CHECK(each.rule_id != "sglang.memory.not-enough-memory");
}

TEST_CASE("A finding made before the log names its server gets that server's fix", "[analysis][tiers]") {
  auto book = load_builtin();
  // A pasted excerpt whose error comes before any vLLM line.
  auto report = scan_text(book,
                          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                          "total capacity of 23.68 GiB of which 1.02 GiB is free.\n"
                          "INFO 05-12 10:00:00 [api_server.py:1] vLLM API server version 0.8.5\n");
  const Finding* f = nullptr;
  for (const Finding& each : report.findings)
    if (each.rule_id == "pytorch.cuda.out-of-memory") f = &each;
  REQUIRE(f != nullptr);
  CHECK(f->server == "vllm");
  CHECK(item(*f, "--gpu-memory-utilization") != nullptr);
}

TEST_CASE("A message only one server prints names the server of a log that does not", "[analysis][tiers]") {
  auto book = load_builtin();
  // No line has vLLM's header, but only vLLM wraps a worker's error so.
  auto report = scan_text(book,
                          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                          "total capacity of 23.64 GiB of which 1.02 GiB is free.\n"
                          "RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 2.00 GiB', "
                          "please check the stack trace above for the root cause\n");
  const Finding* f = nullptr;
  for (const Finding& each : report.findings)
    if (each.rule_id == "pytorch.cuda.out-of-memory") f = &each;
  REQUIRE(f != nullptr);
  CHECK(f->server == "vllm");
  const logrx::RemediationItem* utilization = item(*f, "--gpu-memory-utilization");
  REQUIRE(utilization != nullptr);
  CHECK_FALSE(utilization->alternative);
  // Without such a message the fixes stay offers for the servers it may be.
  auto bare = scan_text(book,
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                        "total capacity of 23.64 GiB of which 1.02 GiB is free.\n");
  REQUIRE_FALSE(bare.findings.empty());
  CHECK(bare.findings.front().server == "unknown");
  const logrx::RemediationItem* offered = item(bare.findings.front(), "--gpu-memory-utilization");
  REQUIRE(offered != nullptr);
  CHECK(offered->alternative);
}

TEST_CASE("What a message only names is advice, never merged for a supervisor", "[analysis][tiers]") {
  auto book = load_builtin();
  std::size_t advice = 0;
  for (const char* log : {"api_server.py: error: unrecognized arguments: --max-num-seq 8\n",
                          "Error: the scheduler needs VLLM_USE_V1 and --enforce-eager to be set\n"}) {
    auto report = scan_text(book, log);
    for (const Finding& f : report.findings)
      for (const auto& i : f.remediation) {
        CHECK(i.name != "VLLM_USE_V1");  // named without a value: not prescribed
        if (!i.value) {
          CHECK(i.alternative);
          ++advice;
        }
      }
    for (const auto& merged : report.remediation) CHECK(merged.value.has_value());
  }
  CHECK(advice >= 2);  // --max-num-seqs (nearest) and --enforce-eager (named)
}

TEST_CASE("A flag the parser refused is never prescribed back as written", "[analysis][tiers]") {
  auto book = load_builtin();
  auto names = [&](const char* log) {
    std::vector<std::string> out;
    for (const Finding& f : scan_text(book, log).findings)
      for (const auto& i : f.remediation) out.push_back(i.name);
    return out;
  };
  auto has = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  // A flag of vLLM's list (an older release's) refused by this one.
  auto removed = names("vllm serve: error: unrecognized arguments: --engine-use-ray\n");
  CHECK_FALSE(has(removed, "--engine-use-ray"));
  // Refused in another spelling: the server's own spelling is the fix.
  CHECK(has(names("launch_server.py: error: unrecognized arguments: --reasoning_parser deepseek-r1\n"),
            "--reasoning-parser"));
  // A word's end added to a flag the server has.
  CHECK(has(names("vllm serve: error: unrecognized arguments: --max-model-length 4096\n"), "--max-model-len"));
  // Outside the refusal, a named flag is still advice.
  CHECK(has(names("error: unrecognized arguments: --foo. Did you mean --enforce-eager?\n"), "--enforce-eager"));
}

TEST_CASE("The first half of a rejoined line is redacted too", "[analysis][tiers]") {
  auto book = load_builtin();
  auto report = scan_text(book,
                          "[2026-05-23 07:40:41] server_args=ServerArgs(model_path='m')\n"
                          "RuntimeError: api_key=sk-abcdefghijklmnop1234 Not enough memory. Please try to increase --mem-fraction-st\n"
                          "atic. Current value: mem_fraction_static=0.8\n");
  const Finding* f = strongest(report);
  REQUIRE(f != nullptr);
  REQUIRE(f->evidence.size() == 2);
  CHECK(f->evidence[0].text.find("sk-abcdefghijklmnop1234") == std::string::npos);
  CHECK(f->message.find("sk-abcdefghijklmnop1234") == std::string::npos);
}

TEST_CASE("A wrapper a rule knows never outranks the cause behind it", "[analysis][tiers]") {
  Report report;
  Finding wrapper;
  wrapper.rule_id = "vllm.lifecycle.worker-failed";
  wrapper.category = logrx::Category::Other;
  wrapper.severity = logrx::Severity::Error;
  wrapper.tier = logrx::Tier::Rule;
  wrapper.wrapper = true;
  wrapper.line = 20;
  Finding cause;
  cause.rule_id = "logrx.lexical.config";
  cause.category = logrx::Category::ConfigConflict;
  cause.severity = logrx::Severity::Error;
  cause.tier = logrx::Tier::Lexical;
  cause.line = 12;
  report.findings = {wrapper, cause};
  REQUIRE(strongest(report) != nullptr);
  CHECK(strongest(report)->rule_id == "logrx.lexical.config");
  // Severity still comes first: a fatal wrapper beats an error cause.
  report.findings[0].severity = logrx::Severity::Fatal;
  CHECK(strongest(report)->rule_id == "vllm.lifecycle.worker-failed");
}

TEST_CASE("A traceback's last line is its exception whatever the class is called",
          "[analysis][events]") {
  auto report = logrx::test::scan_text(
      logrx::test::load_builtin(),
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/site-packages/huggingface_hub/file_download.py\", line 1, in f\n"
      "    raise LocalEntryNotFound(message)\n"
      "huggingface_hub.errors.LocalEntryNotFound: Cannot find the requested files in the local cache\n");
  REQUIRE_FALSE(report.findings.empty());
  CHECK(report.findings[0].exception.find("LocalEntryNotFound") != std::string::npos);
  CHECK(report.findings[0].severity >= logrx::Severity::Warning);
  // Outside a traceback the same shape is just text.
  auto plain = logrx::test::scan_text(logrx::test::load_builtin(), "LocalEntryNotFound: nothing here\n");
  CHECK(plain.findings.empty());
}

TEST_CASE("A rule that knows an event's first line explains the event, harmless or not",
          "[analysis][tiers]") {
  // A destructor's traceback at interpreter exit, its last line pasted onto a frame.
  auto report = scan_text(load_builtin(),
                          "Exception ignored in: <function LLMEngine.__del__ at 0x7f672f8916c0>\n"
                          "Traceback (most recent call last):\n"
                          "  File \"/x/vllm/engine/llm_engine.py\", line 520, in __del__\n"
                          "AttributeError: 'NoneType' object has no attribute 'getenv'\n");
  for (const Finding& f : report.findings) {
    CHECK(f.tier == Tier::Rule);
    CHECK(f.severity <= Severity::Info);
  }
}

TEST_CASE("The error record announcing a traceback is one event with it", "[analysis][tiers]") {
  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/dist-packages/vllm/entrypoints/openai/serving_chat.py\", line 200, in create_chat_completion\n"
      "    raise ValueError(msg)\n"
      "ValueError: This model's maximum context length is 8192 tokens. However, you requested 9000 tokens "
      "(8000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.\n";
  // uvicorn's record, bare and behind vLLM's process prefix, and logger.exception's.
  for (const std::string lead : {"ERROR:    Exception in ASGI application\n",
                                 "(APIServer pid=1) ERROR:    Exception in ASGI application\n",
                                 "2025-11-24 15:34:49,757 - lmdeploy - ERROR - async_engine.py:806 - request failed\n",
                                 "ERROR:vllm.entrypoints:request failed\n"}) {
    std::string text = "INFO:     10.0.0.5:41234 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request\n" + lead;
    if (lead.rfind("(APIServer", 0) == 0) {
      std::size_t at = 0;
      std::string prefixed;
      std::string body = traceback;
      while (at < body.size()) {
        std::size_t end = body.find('\n', at);
        prefixed += "(APIServer pid=1) " + body.substr(at, end + 1 - at);
        at = end + 1;
      }
      text += prefixed;
    } else {
      text += traceback;
    }
    INFO(lead);
    auto report = scan_text(load_builtin(), text);
    REQUIRE(report.findings.size() == 1);
    const Finding& f = report.findings.front();
    // Under LMDeploy's header the vLLM rule does not apply: the tiers speak, once.
    if (lead.find("lmdeploy") == std::string::npos) CHECK(f.rule_id == "vllm.request.exceeds-context");
    CHECK(f.event_start == 2);
  }
}

TEST_CASE("An error record not followed by a traceback stays an event of its own", "[analysis][tiers]") {
  auto report = scan_text(load_builtin(),
                          "ERROR:    Exception in ASGI application\n"
                          "INFO:     10.0.0.5:41234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n"
                          "Traceback (most recent call last):\n"
                          "  File \"/x/app.py\", line 3, in f\n"
                          "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  REQUIRE(report.findings.size() >= 2);
  CHECK(report.findings.front().line == 1);
  CHECK(report.findings.front().event_start == 0);
}

TEST_CASE("A rule whose condition fails on a line leaves it to the tiers", "[analysis][tiers]") {
  logrx::test::TempDir dir;
  dir.write("a.json",
            logrx::test::rule_file(
                logrx::test::rule_json("x.flux-crash", "flux capacitor failed",
                                       ", \"category\": \"other\", \"when\": \"defined(flux_on)\"") +
                "," +
                logrx::test::rule_json("x.flux-on", "flux capacitor engaged",
                                       ", \"silent\": true, \"facts\": {\"flux_on\": \"1\"}")));
  logrx::Diagnostics errors;
  auto book = logrx::Rulebook::load({{logrx::test::builtin_rules_dir()}, {dir.path()}}, errors);
  REQUIRE(book);
  const std::string crash = "RuntimeError: flux capacitor failed to align the warp coils\n";
  auto without = scan_text(*book, crash);
  REQUIRE(!without.findings.empty());
  for (const Finding& f : without.findings) CHECK(f.rule_id != "x.flux-crash");
  CHECK(strongest(without)->tier != Tier::Rule);
  auto with = scan_text(*book, "flux capacitor engaged\n" + crash);
  REQUIRE(!with.findings.empty());
  CHECK(strongest(with)->rule_id == "x.flux-crash");
}
