// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "logrx/logrx.h"
#include "logrx/output.h"
#include "logrx/relaunch.h"
#include "support/test_support.h"

using namespace logrx;

namespace {

FlagSpec fraction() {
  FlagSpec spec;
  spec.described = true;
  spec.type = FlagSpec::Type::Float;
  spec.gt = 0;
  spec.lt = 1;
  return spec;
}

const Rulebook& builtin() {
  static Rulebook book = test::load_builtin();
  return book;
}

RemediationItem flag(std::string name, std::optional<std::string> value = std::nullopt) {
  RemediationItem item;
  item.name = std::move(name);
  item.value = std::move(value);
  return item;
}

}  // namespace

TEST_CASE("A flag's value is checked against its arity, type and range", "[relaunch]") {
  CHECK(check_argument(fraction(), "--mem-fraction-static", std::string("0.85")).applicable);
  auto too_big = check_argument(fraction(), "--mem-fraction-static", std::string("7.45"));
  CHECK_FALSE(too_big.applicable);
  CHECK_FALSE(too_big.value);
  CHECK_THAT(too_big.note, Catch::Contains("outside") && Catch::Contains("(0, 1)"));
  CHECK_FALSE(check_argument(fraction(), "--mem-fraction-static", std::string("0")).applicable);
  CHECK_FALSE(check_argument(fraction(), "--mem-fraction-static", std::nullopt).applicable);
  CHECK_FALSE(check_argument(fraction(), "--mem-fraction-static", std::string("high")).applicable);

  FlagSpec tokens;
  tokens.type = FlagSpec::Type::Int;
  tokens.min = 1;
  tokens.max = 4096;
  tokens.multiple_of = 64;
  CHECK_FALSE(check_argument(tokens, "--max-model-len", std::string("0")).applicable);
  CHECK_FALSE(check_argument(tokens, "--max-model-len", std::string("1.5")).applicable);
  auto rounded = check_argument(tokens, "--max-model-len", std::string("1000"));
  CHECK(rounded.applicable);
  CHECK(rounded.value == std::string("960"));
  CHECK_THAT(rounded.note, Catch::Contains("multiple of 64"));
  auto up = check_argument(tokens, "--max-model-len", std::string("10"));
  CHECK(up.value == std::string("64"));
  auto clamped = check_argument(tokens, "--max-model-len", std::string("100000"));
  CHECK(clamped.value == std::string("4096"));
  CHECK_THAT(clamped.note, Catch::Contains("clamped"));

  FlagSpec on_off;
  on_off.arity = FlagSpec::Arity::Switch;
  CHECK(check_argument(on_off, "--enforce-eager", std::nullopt).applicable);
  CHECK(check_argument(on_off, "--enforce-eager", std::string("")).applicable);
  CHECK_FALSE(check_argument(on_off, "--enforce-eager", std::string("1")).applicable);

  FlagSpec choice;
  choice.type = FlagSpec::Type::Enum;
  choice.choices = {"auto", "extra_buffer"};
  CHECK(check_argument(choice, "--x", std::string("extra_buffer")).applicable);
  CHECK_FALSE(check_argument(choice, "--x", std::string("torch.float16")).applicable);

  FlagSpec untyped;  // the conservative default: one value of any form
  CHECK(check_argument(untyped, "--x", std::string("y")).applicable);
  CHECK_FALSE(check_argument(untyped, "--x", std::nullopt).applicable);
  CHECK_FALSE(check_argument(untyped, "--x", std::string("<fewer layers>")).applicable);
}

TEST_CASE("The built-in flag files describe the flags remediation sets", "[relaunch]") {
  const Rulebook& book = builtin();
  FlagSpec msf = book.flag_spec("sglang", "--mem-fraction-static");
  CHECK(msf.described);
  CHECK(msf.type == FlagSpec::Type::Float);
  CHECK(msf.lt == 1.0);
  CHECK(book.flag_spec("vllm", "--gpu-memory-utilization").lt == 1.0);
  CHECK(book.flag_spec("vllm", "--enforce-eager").arity == FlagSpec::Arity::Switch);
  CHECK(book.flag_spec("sglang", "--max-running-requests").min == 1.0);
  CHECK_FALSE(book.flag_spec("sglang", "--no-such-flag").described);
}

TEST_CASE("SGLang's request-slot reset is advice, never a bare flag", "[relaunch]") {
  Report report = test::scan_text(
      builtin(),
      "[2026-05-23 07:40:51] Max running requests is reset to 48 for speculative decoding. You "
      "can override this by explicitly setting --max-running-requests.\n");
  bool seen = false;
  for (const RemediationItem& item : report.remediation) {
    if (item.name != "--max-running-requests") continue;
    seen = true;
    CHECK_FALSE(item.applicable);
    CHECK_FALSE(item.why.empty());
  }
  CHECK(seen);
  LaunchCommand command{{"python", "-m", "sglang.launch_server", "--mem-fraction-static", "0.85"}, {}};
  ApplyOutcome outcome = apply_remediation(builtin(), "sglang", report.remediation, command);

  bool skipped = false;
  for (const std::string& s : outcome.skipped) skipped |= s.rfind("--max-running-requests (advice", 0) == 0;
  CHECK(skipped);
  for (const std::string& word : command.argv) CHECK(word != "--max-running-requests");
}

TEST_CASE("Applying remediation replaces values, adds switches once, refuses bad values", "[relaunch]") {
  LaunchCommand command{{"vllm", "serve", "m", "--gpu-memory-utilization=0.9", "--no-enable-chunked-prefill"}, {}};
  std::vector<RemediationItem> items = {flag("--gpu-memory-utilization", "0.85"),
                                        flag("--enable-chunked-prefill"),
                                        flag("--max-model-len", "0"),
                                        flag("--max-num-seqs", "<fewer>")};
  RemediationItem env;
  env.kind = RemediationItem::Kind::Env;
  env.name = "PYTORCH_CUDA_ALLOC_CONF";
  env.value = "expandable_segments:True";
  items.push_back(env);
  ApplyOutcome outcome = apply_remediation(builtin(), "vllm", items, command);
  CHECK(outcome.changed);
  CHECK(command.argv == std::vector<std::string>{"vllm", "serve", "m", "--gpu-memory-utilization=0.85",
                                                  "--enable-chunked-prefill"});
  CHECK(command.env["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True");
  CHECK(outcome.skipped.size() == 2);
  // Applying the same again changes nothing.
  CHECK_FALSE(apply_remediation(builtin(), "vllm", items, command).changed);

  LaunchCommand sglang{{"python", "-m", "sglang.launch_server", "--cuda-graph-bs", "1", "2", "4", "--tp-size", "2"}, {}};
  ApplyOutcome nargs = apply_remediation(builtin(), "sglang", {flag("--cuda-graph-bs", "1,2")}, sglang);
  CHECK(nargs.changed);
  CHECK(sglang.argv == std::vector<std::string>{"python", "-m", "sglang.launch_server", "--cuda-graph-bs", "1",
                                                 "2", "--tp-size", "2"});
}

TEST_CASE("A sh -c command is rewritten inside the script or refused", "[relaunch]") {
  LaunchCommand command{{"bash", "-c", "CUDA_VISIBLE_DEVICES=0 exec python -m sglang.launch_server --mem-fraction-static 0.8 --model-path 'my model'"}, {}};
  ApplyOutcome outcome = apply_remediation(builtin(), "sglang", {flag("--mem-fraction-static", "0.85")}, command);
  CHECK(outcome.error.empty());
  CHECK(outcome.changed);
  REQUIRE(command.argv.size() == 3);
  CHECK(command.argv[2] ==
        "CUDA_VISIBLE_DEVICES=0 exec python -m sglang.launch_server --mem-fraction-static 0.85 --model-path 'my model'");

  LaunchCommand piped{{"sh", "-c", "python -m sglang.launch_server --mem-fraction-static 0.8 | tee log"}, {}};
  ApplyOutcome refused = apply_remediation(builtin(), "sglang", {flag("--mem-fraction-static", "0.85")}, piped);
  CHECK_THAT(refused.error, Catch::Contains("'|'"));
  CHECK_FALSE(refused.changed);
  CHECK(piped.argv[2] == "python -m sglang.launch_server --mem-fraction-static 0.8 | tee log");
  CHECK_FALSE(rewrite_problem(piped.argv).empty());
  CHECK(rewrite_problem({"python", "-c", "x; y"}).empty());  // not a shell
}

TEST_CASE("Lint rejects a value flag without a value unless it is advice", "[relaunch][lint]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("logrx-lint-advice-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto rule = [](const std::string& id, const std::string& item) {
    return "{\"id\": \"" + id + "\", \"title\": \"t\", \"category\": \"memory_pressure\", \"severity\": \"error\", "
           "\"servers\": [\"sglang\"], \"pattern\": \"boom " + id + "\", \"explanation\": \"e\", "
           "\"remediation\": [" + item + "], \"examples\": {\"match\": [{\"line\": \"boom " + id +
           "\"}], \"no_match\": [\"calm\"]}}";
  };
  std::ofstream(dir / "rules.json")
      << test::rule_file(rule("t.bare", "{\"flag\": \"--max-running-requests\", \"why\": \"w\"}") + "," +
                         rule("t.advice", "{\"flag\": \"--max-running-requests\", \"advice\": true, \"why\": \"choose\"}") + "," +
                         rule("t.switch", "{\"flag\": \"--disable-cuda-graph\"}") + "," +
                         rule("t.range", "{\"flag\": \"--mem-fraction-static\", \"value\": \"1.5\"}"));
  std::ofstream(dir / "flags.json")
      << "{\"version\": 1, \"server\": \"sglang\", \"flags\": [\"--max-running-requests\", "
         "\"--disable-cuda-graph\", \"--mem-fraction-static\"], \"arguments\": {"
         "\"--max-running-requests\": {\"type\": \"int\", \"min\": 1}, "
         "\"--disable-cuda-graph\": {\"arity\": \"switch\"}, "
         "\"--mem-fraction-static\": {\"type\": \"float\", \"gt\": 0, \"lt\": 1}}}";
  Diagnostics problems = Rulebook::lint({{dir.string()}});
  fs::remove_all(dir);
  std::vector<std::string> codes;
  for (const Diagnostic& d : problems) codes.push_back(d.code + " " + d.message.substr(0, 40));
  CAPTURE(codes);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].code == "rule.value-missing");
  CHECK(problems[0].rule_id == "t.bare");
  CHECK(problems[1].code == "rule.bad-value");
  CHECK(problems[1].rule_id == "t.range");
}

// A rule of two servers may prescribe a switch only one of them has: the
// other's flag list, which does not know it, says nothing of its value.
TEST_CASE("Lint checks a flag's value only against the servers that have the flag", "[relaunch][lint]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("logrx-lint-two-servers-" + std::to_string(::getpid()));
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  std::ofstream(dir / "rules.json")
      << test::rule_file(
             "{\"id\": \"t.mmap\", \"title\": \"t\", \"category\": \"other\", \"severity\": \"error\", "
             "\"servers\": [\"llamacpp\", \"ollama\"], \"pattern\": \"mmap failed\", \"explanation\": \"e\", "
             "\"remediation\": [{\"flag\": \"--no-mmap\"}], \"examples\": {\"match\": [\"mmap failed\"], "
             "\"no_match\": [\"calm\"]}}");
  std::ofstream(dir / "a" / "flags.json")
      << "{\"version\": 1, \"server\": \"llamacpp\", \"flags\": [\"--no-mmap\"], \"arguments\": {"
         "\"--no-mmap\": {\"arity\": \"switch\"}}}";
  std::ofstream(dir / "b" / "flags.json")
      << "{\"version\": 1, \"server\": \"ollama\", \"flags\": [\"--verbose\"], \"arguments\": {}}";
  Diagnostics problems = Rulebook::lint({{dir.string()}});
  fs::remove_all(dir);
  std::vector<std::string> codes;
  for (const Diagnostic& d : problems) codes.push_back(d.code + " " + d.message);
  CAPTURE(codes);
  CHECK(problems.empty());
}

TEST_CASE("poll reports a fatal error held by an open traceback once the stream is quiet", "[relaunch][poll]") {
  AnalyzerOptions options;
  options.stream_name = "hang.log";
  Analyzer analyzer(builtin(), options);
  std::vector<std::string> seen;
  analyzer.on_finding([&](const Finding& f) { seen.push_back(f.rule_id); });
  analyzer.feed(
      "[2026-05-23 07:40:41] server_args=ServerArgs(model_path='m', mem_fraction_static=0.8)\n"
      "[2026-05-23 07:40:49] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"model_runner.py\", line 402, in init_memory_pool\n"
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
      "mem_fraction_static=0.8\n");
  auto held = std::find(seen.begin(), seen.end(), "sglang.memory.not-enough-memory");
  REQUIRE(held == seen.end());  // the traceback may still go on
  // Not quiet long enough: nothing changes.
  CHECK_FALSE(analyzer.poll(std::chrono::steady_clock::now()));
  CHECK(std::find(seen.begin(), seen.end(), "sglang.memory.not-enough-memory") == seen.end());
  CHECK(analyzer.poll(std::chrono::steady_clock::now() + std::chrono::seconds(3)));
  CHECK(std::find(seen.begin(), seen.end(), "sglang.memory.not-enough-memory") != seen.end());
  CHECK_FALSE(analyzer.poll(std::chrono::steady_clock::now() + std::chrono::seconds(6)));
  Report report = analyzer.finish();
  CHECK(std::count_if(report.findings.begin(), report.findings.end(), [](const Finding& f) {
          return f.rule_id == "sglang.memory.not-enough-memory";
        }) == 1);
}

TEST_CASE("The C API flushes a quiet stream and applies remediation", "[relaunch][capi]") {
  char* error = nullptr;
  const char* dirs[] = {LOGRX_SOURCE_DIR "/rules"};
  logrx_rulebook* book = logrx_rulebook_load(dirs, 1, 0, &error);
  REQUIRE(book != nullptr);
  logrx_analyzer* an = logrx_analyzer_new(book, "hang.log", nullptr, &error);
  REQUIRE(an != nullptr);
  int findings = 0;
  logrx_analyzer_set_callback(
      an, [](const char* json, void* data) {
        if (std::string(json).find("sglang.memory.not-enough-memory") != std::string::npos) ++*static_cast<int*>(data);
      },
      &findings);
  std::string log =
      "[2026-05-23 07:40:49] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"model_runner.py\", line 402, in init_memory_pool\n"
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
      "mem_fraction_static=0.8\n";
  REQUIRE(logrx_analyzer_feed(an, log.data(), log.size()) == 0);
  CHECK(findings == 0);
  CHECK(logrx_analyzer_poll(an, 3600) == 0);  // fed just now
  CHECK(logrx_analyzer_poll(an, 0) == 1);
  CHECK(findings == 1);
  char* report = logrx_analyzer_finish(an);
  REQUIRE(report != nullptr);
  const char* argv[] = {"python", "-m", "sglang.launch_server", "--mem-fraction-static", "0.8"};
  char* applied = logrx_apply_remediation(book, "sglang", report, argv, 5, &error);
  REQUIRE(applied != nullptr);
  CHECK_THAT(std::string(applied), Catch::Contains("\"--mem-fraction-static\",\"0.85\""));
  const char* piped[] = {"sh", "-c", "python -m sglang.launch_server --mem-fraction-static 0.8 | tee x"};
  CHECK(logrx_apply_remediation(book, "sglang", report, piped, 3, &error) == nullptr);
  REQUIRE(error != nullptr);
  CHECK_THAT(std::string(error), Catch::Contains("cannot rewrite"));
  logrx_free(error);
  logrx_free(applied);
  logrx_free(report);
  logrx_analyzer_free(an);
  logrx_rulebook_free(book);
}

TEST_CASE("A container option is prescribed but never put on the server's command line", "[relaunch]") {
  Report report = test::scan_text(
      builtin(),
      "node-1:123:456 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-abc to "
      "9637892 bytes\n"
      "node-1:123:456 [0] misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment "
      "/dev/shm/nccl-abc (size 9637888)\n");
  const RemediationItem* shm = nullptr;
  for (const RemediationItem& item : report.remediation)
    if (item.kind == RemediationItem::Kind::Container) shm = &item;
  REQUIRE(shm != nullptr);
  CHECK(shm->name == "--shm-size");
  CHECK_FALSE(shm->applicable);
  CHECK(to_json(report).find("\"container\": \"--shm-size\"") != std::string::npos);
  LaunchCommand command{{"vllm", "serve", "m"}, {}};
  ApplyOutcome outcome = apply_remediation(builtin(), "vllm", report.remediation, command);
  for (const std::string& word : command.argv) CHECK(word.find("shm") == std::string::npos);
}
