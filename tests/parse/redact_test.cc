// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <string>
#include <vector>

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

TEST_CASE("Every form of a secret's key hides the whole value", "[parse][redact]") {
  struct Case {
    const char* in;
    const char* out;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"token=Zq8xW2v9Lk3m", "token=<redacted>"},
           {"--token Zq8xW2v9Lk3m --port 8000", "--token <redacted> --port 8000"},
           {"OPENAI_API_KEY=Zq8xW2v9Lk3m VLLM_API_KEY=Pw7rT5yu", "OPENAI_API_KEY=<redacted> VLLM_API_KEY=<redacted>"},
           {"MY_SERVICE_API_KEY=Zq8xW2v9Lk3m", "MY_SERVICE_API_KEY=<redacted>"},
           {"body {\\\"api_key\\\": \\\"Zq8 xW2, v9Lk3m\\\"}", "body {\\\"api_key\\\": \\\"<redacted>\\\"}"},
           {"headers={'Authorization': ['Bearer Zq8xW2v9Lk3m']}", "headers={'Authorization': ['Bearer <redacted>']}"},
           {"GET /v1?Authorization=Bearer%20Zq8xW2v9Lk3m&x=1", "GET /v1?Authorization=Bearer%20<redacted>&x=1"},
           {"redis://:Zq8xW2v9Lk3m@cache:6379/0", "redis://:<redacted>@cache:6379/0"},
           {"secret=Zq8xW2v9Lk3m", "secret=<redacted>"},
           {"https://api.example.com/v1/models?key=Zq8xW2v9Lk3m&alt=json",
            "https://api.example.com/v1/models?key=<redacted>&alt=json"},
           {"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = <redacted>"},
           {"Cookie: session=Zq8xW2v9Lk3m; csrf=Pw7rT5yu", "Cookie: <redacted>"},
           {"non-default args: {'model': 'm', 'api_key': ['Zq8xW2v9Lk3m', 'Pw7rT5yu'], 'port': 1}",
            "non-default args: {'model': 'm', 'api_key': ['<redacted>', '<redacted>'], 'port': 1}"},
           {"password='correct horse, battery staple' user=x", "password='<redacted>' user=x"},
           {"password=p@ss@word!x host=db", "password=<redacted> host=db"},
           {"postgres://admin:p@ss@word@db.internal:5432/app", "postgres://admin:<redacted>@db.internal:5432/app"},
           {"api_key='it\\'s-a-secret' port=1", "api_key='<redacted>' port=1"},
       }) {
    INFO(c.in);
    CHECK(redacted(c.in) == c.out);
  }
}

TEST_CASE("Tokens of known formats are hidden wherever they are", "[parse][redact]") {
  for (const char* token :
       {"hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "sk-proj-AbCdEfGhIjKlMnOpQrSt_uvwxyz0123",
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv-wxyz", "sk-AbCdEfGhIjKlMnOpQrSt1234", "AKIAIOSFODNN7EXAMPLE",
        "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "gho_AbCdEfGhIjKlMnOpQrStUvWxYz01",
        "ghs_AbCdEfGhIjKlMnOpQrStUvWxYz01", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "glpat-AbCdEfGhIjKlMnOpQrSt", "xoxb-123456789012-AbCdEfGhIjKl",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}) {
    INFO(token);
    std::string text = std::string("failed with ") + token + ", retrying";
    CHECK(redacted(text) == "failed with <redacted>, retrying");
    std::string path = std::string("/cache/") + token + "/x";
    CHECK(redacted(path) == "/cache/<redacted>/x");
  }
}

TEST_CASE("Redaction is idempotent and keeps unset values", "[parse][redact]") {
  for (const char* text :
       {"api_key=<redacted> hf_token=None password='' secret: null",
        "redis://:<redacted>@cache:6379", "{'api_key': ['<redacted>']}", "Authorization: Bearer <redacted>"}) {
    INFO(text);
    std::string copy = text;
    CHECK_FALSE(logrx::redact_secrets(copy));
    CHECK(copy == text);
  }
}

TEST_CASE("Counts and words named like tokens are not secrets", "[parse][redact]") {
  for (const char* text :
       {"#new-token: 5, #cached-token: 0, token usage: 0.04", "max_tokens=512 max_num_batched_tokens=8192",
        "tokenizer='meta/llama' ssl_keyfile=/etc/key.pem", "Invalid token: expected a string",
        "failed to sample token: sample: logits sum to NaN", "unexpected token: end.",
        "key_cache dtype=float16 key=value", "a::b::c and x := y",
        "Uvicorn running on http://0.0.0.0:30000", "see https://docs.vllm.ai/en/latest/ (and https://x.org)"}) {
    INFO(text);
    std::string copy = text;
    CHECK_FALSE(logrx::redact_secrets(copy));
  }
}

TEST_CASE("A line full of '://' without '@' is redacted in linear time", "[parse][redact]") {
  // 200,000 "://" and no '@': a rescan per "://" would take 10^10 steps.
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "a://b";
  std::string copy = text;
  CHECK_FALSE(logrx::redact_secrets(copy));
  std::string quotes(300000, '\'');
  std::string line = "api_key=" + quotes;
  logrx::redact_secrets(line);
  CHECK(line.find("api_key=") == 0);
}

TEST_CASE("Command lines are redacted argument by argument", "[parse][redact]") {
  std::vector<std::string> argv{"vllm",       "serve",           "m",         "--api-key",
                                "sk-not-a-real-key-0123456789", "--hf-token", "hf_AbCdEfGhIjKlMnOpQrStUv",
                                "--token",    "Zq8xW2v9Lk3m",   "--admin-api-key=Pw7rT5yuQ1",
                                "--port",     "8000",            "--password", "--max-num-seqs", "8",
                                "OPENAI_API_KEY=Zq8xW2v9Lk3m"};
  std::vector<std::string> expected{"vllm",       "serve",        "m",           "--api-key",
                                    "<redacted>", "--hf-token",   "<redacted>",  "--token",
                                    "<redacted>", "--admin-api-key=<redacted>", "--port", "8000",
                                    "--password", "--max-num-seqs", "8",        "OPENAI_API_KEY=<redacted>"};
  CHECK(logrx::redact_argv(argv) == expected);
  // Flags that only look similar keep their values.
  std::vector<std::string> plain{"--tokenizer", "meta/llama", "--max-num-batched-tokens", "8192",
                                 "--ssl-keyfile", "/etc/k.pem"};
  CHECK(logrx::redact_argv(plain) == plain);
}

TEST_CASE("A vLLM dump with api_key as a list keeps its facts and loses the keys", "[parse][redact]") {
  auto book = logrx::test::load_builtin();
  logrx::Analyzer analyzer(book);
  analyzer.feed(
      "(APIServer pid=1) INFO 12-25 04:48:30 [utils.py:253] non-default args: {'model': 'Qwen/Qwen3-8B', "
      "'api_key': ['Lf5Kq8Zm1Xw4Pv7R', 'Lg2 Mn5, Bq8'], 'max_model_len': 4096, 'gpu_memory_utilization': 0.91}\n");
  logrx::Report report = analyzer.finish();
  CHECK(report.diagnostics.empty());
  REQUIRE(report.runs.size() == 1);
  const auto& facts = report.runs[0].facts;
  REQUIRE(facts.count("model") == 1);
  CHECK(facts.at("model").text == "Qwen/Qwen3-8B");
  REQUIRE(facts.count("max_model_len") == 1);
  CHECK(facts.at("max_model_len").number == 4096);
  REQUIRE(facts.count("gpu_memory_utilization") == 1);
  REQUIRE(facts.count("api_key") == 1);
  CHECK(facts.at("api_key").text.find("Lf5Kq8") == std::string::npos);
  CHECK(facts.at("api_key").text.find("Mn5") == std::string::npos);
  std::string json = logrx::to_json(report);
  CHECK(json.find("Lf5Kq8") == std::string::npos);
  CHECK(json.find("Bq8") == std::string::npos);
}

TEST_CASE("Exceptions of a traceback that matched no rule are redacted where they leave", "[parse][redact]") {
  auto book = logrx::test::load_builtin();
  logrx::Analyzer analyzer(book);
  std::vector<std::string> seen;
  analyzer.on_finding([&](const logrx::Finding& f) { seen.push_back(f.root_exception + "|" + f.exception); });
  analyzer.feed(
      "Traceback (most recent call last):\n"
      "  File \"/srv/app.py\", line 3, in <module>\n"
      "app.UpstreamFailure: upstream said token=Tq4Wm8Zr2Xv6Nb1K\n"
      "\n"
      "During handling of the above exception, another exception occurred:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"/srv/app.py\", line 9, in <module>\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
  logrx::Report report = analyzer.finish();
  REQUIRE_FALSE(report.findings.empty());
  CHECK(report.findings[0].root_exception == "app.UpstreamFailure: upstream said token=<redacted>");
  REQUIRE_FALSE(seen.empty());
  CHECK(seen[0].find("Tq4Wm8") == std::string::npos);
  CHECK(seen[0].find("token=<redacted>") != std::string::npos);
}

TEST_CASE("A token value after a colon is still hidden unless it reads as a word", "[parse][redact]") {
  std::string text = "auth token: Zx81kQp2Lm9aTrW";
  CHECK(logrx::redact_secrets(text));
  CHECK(text.find("Zx81kQp2Lm9aTrW") == std::string::npos);
}
