// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "parse/envelope.h"

namespace {

using logrx::detail::EnvelopeDecoder;
using logrx::detail::EnvelopeKind;
using logrx::detail::EnvelopeMeta;

struct Out {
  std::string text;
  bool truncated = false;
  bool wrapped = false;
  std::string time;
  std::string source;
};

std::vector<Out> decode(const std::vector<std::string>& lines, std::size_t cap = 1024,
                        const std::string& stream = "") {
  EnvelopeDecoder decoder(cap, stream);
  std::vector<Out> out;
  auto sink = [&](std::string_view text, bool truncated, const EnvelopeMeta* meta) {
    Out o{std::string(text), truncated, meta != nullptr, "", ""};
    if (meta != nullptr) {
      if (meta->has_timestamp) o.time = std::string(meta->timestamp_text);
      o.source = std::string(meta->source);
    }
    out.push_back(o);
  };
  for (const std::string& line : lines) decoder.line(line, false, sink);
  decoder.finish(sink);
  return out;
}

}  // namespace

TEST_CASE("Servers' own lines are not taken for an envelope", "[parse][envelope]") {
  for (const char* line : {
           "[2026-05-23 07:40:53 TP0] Load weight begin.",
           "INFO 05-23 07:40:41 [api_server.py:1] vLLM API server version 0.9.0",
           "2024-05-10T12:00:00.123456Z  INFO text_generation_launcher: Args {",
           "2024-05-10T12:00:00.123456Z ERROR text_generation_launcher: Shard 0 failed to start",
           "time=2024-05-10T12:00:00.000Z level=INFO source=server.go:1 msg=\"listening\"",
           "2024-05-10 12:00:00,123 - lmdeploy - INFO - msg",
           "llama_model_load: error loading model",
           "Traceback (most recent call last):",
           "{\"level\":\"info\",\"msg\":\"a structured log\"}",
           "<frozen importlib._bootstrap>",
       }) {
    INFO(line);
    CHECK(EnvelopeDecoder::detect(line) == EnvelopeKind::None);
  }
}

TEST_CASE("Each shipper's envelope is recognised from a line", "[parse][envelope]") {
  CHECK(EnvelopeDecoder::detect("2026-05-23T07:40:41.123456789Z stderr F hello") == EnvelopeKind::CRI);
  CHECK(EnvelopeDecoder::detect("{\"log\":\"hi\\n\",\"stream\":\"stderr\",\"time\":\"2026-05-23T07:40:41Z\"}") ==
        EnvelopeKind::DockerJson);
  CHECK(EnvelopeDecoder::detect("2026-05-23T07:40:41.123456789Z INFO 05-23 07:40:41 [a.py:1] x") ==
        EnvelopeKind::KubectlTimestamps);
  CHECK(EnvelopeDecoder::detect("2026-05-23T07:40:41.5Z 2024-05-10T12:00:00Z  INFO text_generation_launcher: x") ==
        EnvelopeKind::KubectlTimestamps);
  CHECK(EnvelopeDecoder::detect("[pod/sglang-0/server] [2026-05-23 07:40:53] x") == EnvelopeKind::KubectlPrefix);
  CHECK(EnvelopeDecoder::detect("2026-05-23T07:40:41+0000 host python3[4242]: x") == EnvelopeKind::Journal);
  CHECK(EnvelopeDecoder::detect("May 23 07:40:41 host python3[4242]: x") == EnvelopeKind::Journal);
  CHECK(EnvelopeDecoder::detect("May  3 07:40:41.123456 host ollama: x") == EnvelopeKind::Journal);
  CHECK(EnvelopeDecoder::detect("{\"__CURSOR\":\"s=1\",\"MESSAGE\":\"x\"}") == EnvelopeKind::JournalJson);
  CHECK(EnvelopeDecoder::detect("__CURSOR=s=1;i=2") == EnvelopeKind::JournalExport);
  CHECK(EnvelopeDecoder::detect("<14>May 23 07:40:41 host python3[1]: x") == EnvelopeKind::Syslog);
  CHECK(EnvelopeDecoder::detect("<165>1 2026-05-23T07:40:41.003Z host app 1 ID47 - x") == EnvelopeKind::Syslog);
}

TEST_CASE("CRI partial lines are joined and keep the first piece's time", "[parse][envelope]") {
  auto out = decode({"2026-05-23T07:40:41.1Z stderr P torch.OutOfMemoryError: CUDA ",
                     "2026-05-23T07:40:41.2Z stderr P out of ",
                     "2026-05-23T07:40:41.3Z stderr F memory.",
                     "2026-05-23T07:40:42Z stdout F "},
                    1024, "/var/log/pods/inference_sglang-0_1234-abcd/server/0.log");
  REQUIRE(out.size() == 2);
  CHECK(out[0].text == "torch.OutOfMemoryError: CUDA out of memory.");
  CHECK(out[0].time == "2026-05-23T07:40:41.1Z");
  CHECK(out[0].source == "inference/sglang-0/server");
  CHECK(out[1].text.empty());
  CHECK(out[1].wrapped);
}

TEST_CASE("Joined partial lines stay within the line cap", "[parse][envelope]") {
  std::vector<std::string> lines;
  for (int i = 0; i < 100; ++i) lines.push_back("2026-05-23T07:40:41Z stderr P " + std::string(50, 'x'));
  lines.push_back("2026-05-23T07:40:41Z stderr F end");
  auto out = decode(lines, 200);
  REQUIRE(out.size() == 1);
  CHECK(out[0].text.size() == 200);
  CHECK(out[0].truncated);
}

TEST_CASE("Docker json-file lines are unescaped and split pieces joined", "[parse][envelope]") {
  auto out = decode({"{\"log\":\"a \\\"quoted\\\" \\u00e9 \\ud83d\\ude00 tab\\t\",\"stream\":\"stderr\",\"time\":\"2026-05-23T07:40:41.5Z\"}",
                     "{\"log\":\"end\\n\",\"stream\":\"stderr\",\"time\":\"2026-05-23T07:40:41.6Z\",\"attrs\":{\"tag\":\"vllm\"}}",
                     "not json at all"});
  REQUIRE(out.size() == 2);
  CHECK(out[0].text == "a \"quoted\" \xC3\xA9 \xF0\x9F\x98\x80 tab\tend");
  CHECK(out[0].time == "2026-05-23T07:40:41.5Z");
  CHECK(out[1].text == "not json at all");
  CHECK_FALSE(out[1].wrapped);
}

TEST_CASE("journalctl's header lines are dropped, its fields read", "[parse][envelope]") {
  auto out = decode({"-- Logs begin at Sat 2026-05-23 07:00:00 UTC, end at Sat 2026-05-23 08:00:00 UTC. --",
                     "May 23 07:40:41 gpu-1 python3[4242]: Killed",
                     "-- Boot 0123456789abcdef --",
                     "May 23 07:40:42 gpu-1 systemd[1]: sglang.service: Main process exited"});
  REQUIRE(out.size() == 2);
  CHECK(out[0].text == "Killed");
  CHECK(out[0].source == "python3");
  CHECK(out[0].time == "May 23 07:40:41");
  CHECK(out[1].source == "systemd");
}

TEST_CASE("journalctl -o export: text and binary MESSAGE fields", "[parse][envelope]") {
  std::string binary = "MESSAGE";
  std::string data = "line with\nnewline";
  std::string length;
  for (int b = 0; b < 8; ++b) length += static_cast<char>((data.size() >> (8 * b)) & 0xFF);
  auto out = decode({"__CURSOR=s=1", "__REALTIME_TIMESTAMP=1779522041123456", "_SYSTEMD_UNIT=vllm.service",
                     "MESSAGE=first", "", "__CURSOR=s=2", binary, length + "line with", "newline",
                     "SYSLOG_IDENTIFIER=python3", ""});
  REQUIRE(out.size() == 3);
  CHECK(out[0].text == "first");
  CHECK(out[0].time == "2026-05-23T07:40:41.123456Z");
  CHECK(out[0].source == "vllm.service");
  CHECK(out[1].text == "line with");
  CHECK(out[2].text == "newline");
  CHECK(out[2].source == "python3");
}

TEST_CASE("journalctl -o export: a binary field whose length holds a newline byte", "[parse][envelope]") {
  // 266 bytes: the length's first byte is 0x0a, which ends a physical line
  // before the length is complete.
  std::string data = "Capturing \xE2\x96\x88 " + std::string(247, 'x') + " done";
  REQUIRE(data.size() == 266);
  std::string length;
  for (int b = 0; b < 8; ++b) length += static_cast<char>((data.size() >> (8 * b)) & 0xFF);
  REQUIRE(length[0] == '\n');
  auto out = decode({"__CURSOR=s=1", "MESSAGE", "", length.substr(1) + data, "SYSLOG_IDENTIFIER=python3", "",
                     "__CURSOR=s=2", "MESSAGE=second", ""});
  REQUIRE(out.size() == 2);
  CHECK(out[0].text == data);
  CHECK(out[0].source == "python3");
  CHECK(out[1].text == "second");
}

TEST_CASE("journalctl -o json with a byte-array MESSAGE", "[parse][envelope]") {
  auto out = decode({"{\"__REALTIME_TIMESTAMP\":\"1779522041000000\",\"SYSLOG_IDENTIFIER\":\"ollama\",\"MESSAGE\":[104,105,255]}",
                     "{\"__REALTIME_TIMESTAMP\":\"1779522041000000\",\"MESSAGE\":null}"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].text == "hi\xFF");
  CHECK(out[0].source == "ollama");
}

TEST_CASE("RFC 5424 structured data is skipped", "[parse][envelope]") {
  auto out = decode({"<165>1 2026-05-23T07:40:41.003Z host vllm 42 ID47 [exampleSDID@32473 iut=\"3\" x=\"a]b\"] \xEF\xBB\xBFKilled"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].text == "Killed");
  CHECK(out[0].source == "vllm");
  CHECK(out[0].time == "2026-05-23T07:40:41.003Z");
}

TEST_CASE("A plain log passes through untouched", "[parse][envelope]") {
  auto out = decode({"", "[2026-05-23 07:40:53 TP0] Load weight begin.", "May 23 is not a header"});
  REQUIRE(out.size() == 3);
  for (const Out& o : out) CHECK_FALSE(o.wrapped);
  CHECK(out[1].text == "[2026-05-23 07:40:53 TP0] Load weight begin.");
}

TEST_CASE("A log store's JSON export gives its lines and times", "[parse][envelope]") {
  CHECK(EnvelopeDecoder::detect(R"({"labels":{"app":"vllm"},"line":"INFO 06-02 10:00:00 [a.py:1] x","timestamp":"2025-06-02T10:00:00.5Z"})") ==
        EnvelopeKind::JsonRecord);
  CHECK(EnvelopeDecoder::detect(R"({"insertId":"a1","textPayload":"x","timestamp":"2025-06-02T10:00:00Z"})") ==
        EnvelopeKind::JsonRecord);
  CHECK(EnvelopeDecoder::detect(R"({"@timestamp":"2025-06-02 10:00:00.000","@message":"x"})") ==
        EnvelopeKind::JsonRecord);
  // llama.cpp's own JSON lines number their source line; servers' "msg" is theirs.
  CHECK(EnvelopeDecoder::detect(R"({"tid":"1","timestamp":1717000000,"level":"INFO","function":"main","line":3,"msg":"HTTP server listening"})") ==
        EnvelopeKind::None);
  CHECK(EnvelopeDecoder::detect(R"({"level":"info","message":"a structured log"})") == EnvelopeKind::None);

  auto out = decode({R"({"line":"Traceback (most recent call last):\n  File \"a.py\", line 1, in f","timestamp":"2025-06-02T10:00:00.5Z"})",
                     R"({"textPayload":"ValueError: x\n","timestamp":"2025-06-02T10:00:01Z"})",
                     "an operator's note"});
  REQUIRE(out.size() == 4);
  CHECK(out[0].text == "Traceback (most recent call last):");
  CHECK(out[0].time == "2025-06-02T10:00:00.5Z");
  CHECK(out[1].text == "  File \"a.py\", line 1, in f");
  CHECK(out[2].text == "ValueError: x");
  CHECK(out[2].time == "2025-06-02T10:00:01Z");
  CHECK_FALSE(out[3].wrapped);
}

TEST_CASE("journald's time in another locale's month", "[parse][envelope]") {
  logrx::Timestamp ts;
  CHECK(logrx::detail::parse_bsd_time("oct 08 12:15:07 desktop-pc ollama[8633]: x", ts) > 0);
  CHECK(ts.month == 10);
  CHECK(logrx::detail::parse_bsd_time("2\xE6\x9C\x88 25 17:49:00 host ollama[3]: x", ts) > 0);
  CHECK(ts.month == 2);
  CHECK(ts.day == 25);
  CHECK(logrx::detail::parse_bsd_time("13\xE6\x9C\x88 25 17:49:00 host ollama[3]: x", ts) == 0);
  CHECK(logrx::detail::parse_bsd_time("xyz 08 12:15:07 host a[1]: x", ts) == 0);
  CHECK(EnvelopeDecoder::detect("2\xE6\x9C\x88 25 17:49:00 host ollama[3]: Error: x") == EnvelopeKind::Journal);
}

TEST_CASE("A journal pasted in a quote after a code fence is still a journal", "[parse][envelope]") {
  auto out = decode({"> ```log", "> -- Subject: A start job for unit ollama.service has finished",
                     "> Feb 25 17:49:00 host ollama[315]: Error: mkdir /mnt/x: permission denied", ">",
                     "> ```"});
  std::vector<std::string> wrapped;
  for (const Out& o : out)
    if (o.wrapped) wrapped.push_back(o.text + " @" + o.source);
  CHECK(wrapped == std::vector<std::string>{"Error: mkdir /mnt/x: permission denied @ollama"});
  CHECK(out.front().text == "> ```log");
}

TEST_CASE("Journal lines that kept only their program still name it", "[parse][envelope]") {
  CHECK(EnvelopeDecoder::detect("ollama[8017]: CUDA error 2 at ggml-cuda.cu:4856: out of memory") ==
        EnvelopeKind::JournalIdent);
  // Without the pid it is any program's own "name: message".
  CHECK(EnvelopeDecoder::detect("ollama: error loading model") == EnvelopeKind::None);
  CHECK(EnvelopeDecoder::detect("[rank0]: RuntimeError: x") == EnvelopeKind::None);
  auto out = decode({"ollama[8017]: CUDA error 2 at ggml-cuda.cu:4856: out of memory", "ollama[8017]:",
                     "a line of another kind"});
  REQUIRE(out.size() == 3);
  CHECK(out[0].text == "CUDA error 2 at ggml-cuda.cu:4856: out of memory");
  CHECK(out[0].source == "ollama");
  CHECK(out[1].wrapped);
  CHECK(out[1].text.empty());
  CHECK_FALSE(out[2].wrapped);
}
