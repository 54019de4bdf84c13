// SPDX-License-Identifier: MIT
// Every corpus log with a golden output, wrapped the way each log shipper
// writes it, must give the report of the plain log: the same findings,
// facts, runs, server, summary and memory budget. Only what the envelope
// legitimately adds may differ: the finding's source, and a time for lines
// (and runs) that had none of their own.
#include <catch2/catch.hpp>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "logrx/analyzer.h"
#include "logrx/budget.h"
#include "logrx/output.h"
#include "parse/envelope.h"
#include "support/test_support.h"

namespace {

using logrx::Report;
using nlohmann::json;

std::vector<std::string> split_lines(const std::string& log) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < log.size()) {
    std::size_t newline = log.find('\n', pos);
    if (newline == std::string::npos) newline = log.size();
    lines.push_back(log.substr(pos, newline - pos));
    pos = newline + 1;
  }
  return lines;
}

std::string json_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", u);
      out += buffer;
    } else {
      out += c;  // raw UTF-8 (or raw invalid bytes, as a broken writer would)
    }
  }
  return out;
}

bool needs_binary(const std::string& line) {
  for (char c : line) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || (u < 0x20 && c != '\t')) return true;
  }
  return false;
}

// A time per line, one second apart, in the formats the shippers print.
struct Clock {
  std::int64_t epoch = 1779522041;  // 2026-05-23T07:40:41Z
  std::tm at(std::size_t i) const {
    std::time_t t = static_cast<std::time_t>(epoch + static_cast<std::int64_t>(i));
    std::tm tm{};
    gmtime_r(&t, &tm);
    return tm;
  }
  std::string format(std::size_t i, const char* pattern) const {
    std::tm tm = at(i);
    char buffer[64];
    std::strftime(buffer, sizeof buffer, pattern, &tm);
    return buffer;
  }
  std::string rfc3339_nano(std::size_t i) const { return format(i, "%Y-%m-%dT%H:%M:%S") + ".123456789Z"; }
  std::string micros(std::size_t i) const {
    return std::to_string((epoch + static_cast<std::int64_t>(i)) * 1000000 + 123456);
  }
};

// Pieces of at most `size` bytes, so that long lines arrive as partial lines.
std::vector<std::string> pieces(const std::string& line, std::size_t size) {
  std::vector<std::string> out;
  for (std::size_t pos = 0; pos < line.size(); pos += size) out.push_back(line.substr(pos, size));
  if (out.empty()) out.emplace_back();
  return out;
}

std::string wrap(const std::string& kind, const std::string& log) {
  Clock clock;
  std::string out;
  std::vector<std::string> lines = split_lines(log);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (kind == "cri") {
      std::vector<std::string> parts = pieces(line, 64);
      for (std::size_t p = 0; p < parts.size(); ++p)
        out += clock.rfc3339_nano(i) + " stderr " + (p + 1 < parts.size() ? "P " : "F ") + parts[p] + "\n";
    } else if (kind == "docker-json") {
      std::vector<std::string> parts = pieces(line, 64);
      for (std::size_t p = 0; p < parts.size(); ++p)
        out += "{\"log\":\"" + json_escape(parts[p]) + (p + 1 < parts.size() ? "" : "\\n") +
               "\",\"stream\":\"stderr\",\"time\":\"" + clock.rfc3339_nano(i) + "\"}\n";
    } else if (kind == "kubectl-timestamps") {
      out += clock.rfc3339_nano(i) + " " + line + "\n";
    } else if (kind == "kubectl-prefix") {
      out += "[pod/sglang-0/server] " + line + "\n";
    } else if (kind == "kubectl-prefix-timestamps") {
      out += "[pod/sglang-0/server] " + clock.rfc3339_nano(i) + " " + line + "\n";
    } else if (kind == "journal-short") {
      out += clock.format(i, "%b %d %H:%M:%S") + " gpu-node-1 python3[4242]: " + line + "\n";
    } else if (kind == "journal-short-precise") {
      out += clock.format(i, "%b %d %H:%M:%S") + ".123456 gpu-node-1 python3[4242]: " + line + "\n";
    } else if (kind == "journal-short-iso") {
      out += clock.format(i, "%Y-%m-%dT%H:%M:%S") + "+0000 gpu-node-1 python3[4242]: " + line + "\n";
    } else if (kind == "journal-json") {
      std::string message;
      if (needs_binary(line)) {
        message = "[";
        for (std::size_t b = 0; b < line.size(); ++b)
          message += (b > 0 ? "," : "") + std::to_string(static_cast<unsigned char>(line[b]));
        message += "]";
      } else {
        message = "\"" + json_escape(line) + "\"";
      }
      out += "{\"__CURSOR\":\"s=1;i=" + std::to_string(i) + "\",\"__REALTIME_TIMESTAMP\":\"" +
             clock.micros(i) + "\",\"_SYSTEMD_UNIT\":\"sglang.service\",\"SYSLOG_IDENTIFIER\":\"python3\"," +
             "\"MESSAGE\":" + message + ",\"_PID\":\"4242\"}\n";
    } else if (kind == "journal-export") {
      out += "__CURSOR=s=1;i=" + std::to_string(i) + "\n__REALTIME_TIMESTAMP=" + clock.micros(i) +
             "\n_SYSTEMD_UNIT=sglang.service\n";
      if (needs_binary(line)) {
        out += "MESSAGE\n";
        std::uint64_t length = line.size();
        for (int b = 0; b < 8; ++b) out += static_cast<char>((length >> (8 * b)) & 0xFF);
        out += line + "\n";
      } else {
        out += "MESSAGE=" + line + "\n";
      }
      out += "SYSLOG_IDENTIFIER=python3\n\n";
    } else if (kind == "syslog-3164") {
      out += "<14>" + clock.format(i, "%b %d %H:%M:%S") + " gpu-node-1 python3[4242]: " + line + "\n";
    } else if (kind == "syslog-5424") {
      out += "<14>1 " + clock.format(i, "%Y-%m-%dT%H:%M:%S") + ".123456Z gpu-node-1 python3 4242 - - " +
             line + "\n";
    }
  }
  return out;
}

struct Scan {
  json report;
  std::vector<json> budgets;
};

Scan scan(const logrx::Rulebook& book, const std::string& text, const logrx::AnalyzerOptions& options) {
  logrx::Analyzer analyzer(book, options);
  // Chunks that cut envelopes and escapes in the middle.
  for (std::size_t pos = 0; pos < text.size(); pos += 4093) analyzer.feed(std::string_view(text).substr(pos, 4093));
  Report report = analyzer.finish();
  Scan result{json::parse(logrx::to_json(report)), {}};
  for (const logrx::RunInfo& run : report.runs)
    result.budgets.push_back(json::parse(logrx::budget_to_json(logrx::compute_budget(run))));
  return result;
}

// Removes from `wrapped` what the envelope may add, checking that it only
// adds: a time where the plain report had none, and a source.
void drop_envelope_additions(json& wrapped, const json& plain, const std::string& expected_source) {
  for (std::size_t i = 0; i < wrapped["findings"].size() && i < plain["findings"].size(); ++i) {
    json& f = wrapped["findings"][i];
    const json& p = plain["findings"][i];
    if (f.contains("source")) {
      CHECK(f["source"] == expected_source);
      f.erase("source");
    }
    if (!p.contains("timestamp")) f.erase("timestamp");
    if (!p.contains("timestamp_iso")) f.erase("timestamp_iso");
  }
  for (std::size_t i = 0; i < wrapped["runs"].size() && i < plain["runs"].size(); ++i) {
    json& r = wrapped["runs"][i];
    const json& p = plain["runs"][i];
    for (const char* key : {"first_timestamp", "last_timestamp", "first_timestamp_iso", "last_timestamp_iso"})
      if (!p.contains(key)) r.erase(key);
  }
}

logrx::AnalyzerOptions options_for(const std::filesystem::path& log) {
  logrx::AnalyzerOptions options;
  options.stream_name = "server.log";
  // The envelope's dated clock would otherwise give yearless server lines
  // its year, where the plain log infers one from the current date.
  options.year = 2026;
  std::filesystem::path args = log;
  args.replace_extension(".args");
  std::ifstream in(args);
  std::string name;
  std::string value;
  while (std::getline(in, name) && std::getline(in, value)) {
    if (name == "--launch-cmd") options.launch_command = value;
    if (name == "--since") options.since = value;
    if (name == "--server") options.server = value;
  }
  return options;
}

}  // namespace

TEST_CASE("Every corpus log gives the plain log's report inside each shipper's envelope",
          "[analysis][envelope]") {
  logrx::Rulebook book = logrx::test::load_builtin();
  namespace fs = std::filesystem;
  const std::vector<std::pair<std::string, std::string>> kinds{
      {"cri", ""},
      {"docker-json", ""},
      {"kubectl-timestamps", ""},
      {"kubectl-prefix", "pod/sglang-0/server"},
      {"kubectl-prefix-timestamps", "pod/sglang-0/server"},
      {"journal-short", "python3"},
      {"journal-short-precise", "python3"},
      {"journal-short-iso", "python3"},
      {"journal-json", "sglang.service"},
      {"journal-export", "sglang.service"},
      {"syslog-3164", "python3"},
      {"syslog-5424", "python3"},
  };
  int logs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(LOGRX_SOURCE_DIR "/corpus")) {
    if (entry.path().extension() != ".log") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string log = text.str();
    // The envelopes end every line; so must the plain log for a like comparison.
    if (log.empty() || log.back() != '\n') continue;
    // A log that already has an envelope (a journald excerpt, also one
    // quoted or after a code fence) would be wrapped twice; only the outer
    // envelope is removed.
    {
      logrx::detail::EnvelopeDecoder probe;
      std::istringstream lines(log);
      std::string line;
      for (int n = 0; n < 16 && probe.kind() == logrx::detail::EnvelopeKind::Undecided && std::getline(lines, line);
           ++n)
        probe.line(line, false, [](std::string_view, bool, const logrx::detail::EnvelopeMeta*) {});
      if (probe.kind() != logrx::detail::EnvelopeKind::None &&
          probe.kind() != logrx::detail::EnvelopeKind::Undecided)
        continue;
    }
    logrx::AnalyzerOptions options = options_for(entry.path());
    Scan plain = scan(book, log, options);
    for (const auto& [kind, source] : kinds) {
      INFO(entry.path().string() << " as " << kind);
      Scan wrapped = scan(book, wrap(kind, log), options);
      drop_envelope_additions(wrapped.report, plain.report, source);
      INFO(json::diff(plain.report, wrapped.report).dump().substr(0, 2000));
      CHECK(wrapped.report == plain.report);
      CHECK(wrapped.budgets == plain.budgets);
    }
    ++logs;
  }
  CHECK(logs >= 500);
}

TEST_CASE("A shipper's time is a line's time only when the line has none of its own",
          "[analysis][envelope]") {
  logrx::Rulebook book = logrx::test::load_builtin();
  // llama.cpp prints no times: the envelope's are the only ones.
  std::string log =
      "2026-05-23T07:40:41.100000000Z stderr F llama_model_load: error loading model: "
      "failed to open /models/x.gguf: No such file or directory\n"
      "2026-05-23T07:40:42.200000000Z stderr F main: exiting due to model loading error\n";
  logrx::AnalyzerOptions options;
  options.stream_name =
      "/var/log/containers/llama-0_inference_server-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.log";
  logrx::Analyzer analyzer(book, options);
  analyzer.feed(log);
  Report report = analyzer.finish();
  REQUIRE_FALSE(report.findings.empty());
  CHECK(report.findings[0].timestamp == "2026-05-23T07:40:41.100000000Z");
  CHECK(report.findings[0].source == "inference/llama-0/server");
  CHECK(report.findings[0].message.rfind("llama_model_load", 0) == 0);
  REQUIRE(report.runs.size() == 1);
  CHECK(report.runs[0].server == "llamacpp");
  CHECK(report.runs[0].first_timestamp == "2026-05-23T07:40:41.100000000Z");
  CHECK(report.runs[0].last_timestamp == "2026-05-23T07:40:42.200000000Z");

  // vLLM prints local times; an envelope in UTC two hours earlier must not
  // make its traceback lines look like a new launch.
  std::string vllm =
      "2026-05-23T07:40:41Z INFO 05-23 09:40:41 [api_server.py:1] vLLM API server version 0.9.0\n"
      "2026-05-23T07:40:42Z Traceback (most recent call last):\n"
      "2026-05-23T07:40:42Z   File \"/usr/lib/python3/dist-packages/vllm/x.py\", line 1, in <module>\n"
      "2026-05-23T07:40:42Z torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
      "2026-05-23T07:40:43Z INFO 05-23 09:40:43 [api_server.py:2] Shutting down\n";
  logrx::Analyzer second(book, {});
  second.feed(vllm);
  Report r2 = second.finish();
  CHECK(r2.runs.size() == 1);
  REQUIRE(r2.runs.size() >= 1);
  CHECK(r2.runs[0].server == "vllm");
  CHECK(r2.runs[0].first_timestamp == "05-23 09:40:41");
}
