// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "logrx/analyzer.h"
#include "logrx/line.h"
#include "logrx/output.h"
#include "support/test_support.h"

namespace {

std::string redacted(std::string text) {
  logrx::redact_secrets(text);
  return text;
}

}  // namespace

TEST_CASE("Secrets in config dumps are redacted, unset keys are kept", "[parse][redact]") {
  CHECK(redacted("ServerArgs(model_path='m', api_key='abc123', admin_api_key=None)") ==
        "ServerArgs(model_path='m', api_key='<redacted>', admin_api_key=None)");
  CHECK(redacted("{'api_key': 'abc', 'hf_token': \"xyz\"}") ==
        "{'api_key': '<redacted>', 'hf_token': \"<redacted>\"}");
  CHECK(redacted("password=hunter2 and Password: swordfish") ==
        "password=<redacted> and Password: <redacted>");
}

TEST_CASE("Headers, tokens, command lines and URL credentials are redacted", "[parse][redact]") {
  CHECK(redacted("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc") == "Authorization: Bearer <redacted>");
  CHECK(redacted("'authorization': 'Basic dXNlcjpwYXNz'") == "'authorization': 'Basic <redacted>'");
  CHECK(redacted("using hf_AbCdEfGhIjKlMnOpQrStUv now") == "using <redacted> now");
  CHECK(redacted("key sk-proj-AbCdEfGhIjKlMnOpQrSt1234") == "key <redacted>");
  CHECK(redacted("launch --api-key topsecret --port 1") == "launch --api-key <redacted> --port 1");
  CHECK(redacted("clone https://bob:s3cr3t@example.org/x.git") == "clone https://bob:<redacted>@example.org/x.git");
}

TEST_CASE("Ordinary log text is left alone", "[parse][redact]") {
  for (const char* text :
       {"max_total_num_tokens=77056, #token: 3428, token usage: 0.04",
        "Invalid password for user root", "GPU KV cache size: 383,504 tokens",
        "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
        "keyboard interrupt", "sk-short"}) {
    INFO(text);
    std::string copy = text;
    CHECK_FALSE(logrx::redact_secrets(copy));
    CHECK(copy == text);
  }
}

TEST_CASE("No output of a scan carries a secret unless asked", "[parse][redact]") {
  auto book = logrx::test::load_builtin();
  std::string log =
      "[2026-05-23 07:40:41] server_args=ServerArgs(model_path='m', api_key='sk-live-abcdefghijklmnopqrstuv', "
      "mem_fraction_static=0.8)\n"
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
      "mem_fraction_static=0.8 (token hf_AbCdEfGhIjKlMnOpQrStUv)\n";
  logrx::AnalyzerOptions options;
  options.launch_command = "python -m sglang.launch_server --api-key sk-live-abcdefghijklmnopqrstuv --mem-fraction-static 0.9";
  logrx::Analyzer analyzer(book, options);
  analyzer.feed(log);
  std::string json = logrx::to_json(analyzer.finish());
  CHECK(json.find("sk-live") == std::string::npos);
  CHECK(json.find("hf_AbCd") == std::string::npos);
  CHECK(json.find("<redacted>") != std::string::npos);

  options.redact = false;
  logrx::Analyzer plain(book, options);
  plain.feed(log);
  CHECK(logrx::to_json(plain.finish()).find("sk-live") != std::string::npos);
}
