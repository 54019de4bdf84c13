// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "logrx/analyzer.h"
#include "logrx/decompress.h"
#include "logrx/output.h"
#include "support/test_support.h"

using logrx::Compression;
using logrx::Decompressor;

namespace {

std::string read_data(const std::string& name) {
  std::ifstream in(LOGRX_SOURCE_DIR "/tests/data/compressed/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Decodes `bytes` fed in pieces of `piece` bytes; the error, "" when none.
std::string decode(const std::string& bytes, std::size_t piece, std::string& out) {
  Decompressor decoder(logrx::detect_compression(bytes));
  auto sink = [&out](std::string_view text) {
    CHECK(text.size() <= Decompressor::kOutputChunk);
    out.append(text.data(), text.size());
  };
  for (std::size_t at = 0; at < bytes.size(); at += piece)
    if (!decoder.feed(std::string_view(bytes).substr(at, piece), sink)) return decoder.error();
  return decoder.finish(sink) ? "" : decoder.error();
}

// Like `logrx scan --format json`, with the stream name fixed.
std::string scan_json(const logrx::Rulebook& book, const std::string& bytes, std::size_t piece) {
  logrx::AnalyzerOptions options;
  options.stream_name = "server.log";
  options.year = 2026;
  logrx::Analyzer analyzer(book, options);
  for (std::size_t at = 0; at < bytes.size(); at += piece)
    analyzer.feed(std::string_view(bytes).substr(at, piece));
  logrx::Report report = analyzer.finish();
  report.summary.compression.clear();
  for (logrx::FileSummary& file : report.files) file.summary.compression.clear();
  return logrx::to_json(report);
}

}  // namespace

TEST_CASE("Compressed data is told by its magic number, never by a name", "[parse][decompress]") {
  CHECK(logrx::detect_compression(read_data("log.gz")) == Compression::Gzip);
  CHECK(logrx::detect_compression(read_data("log.zst")) == Compression::Zstd);
  CHECK(logrx::detect_compression(read_data("log.xz")) == Compression::Xz);
  CHECK(logrx::detect_compression(read_data("log.bz2")) == Compression::Bzip2);
  CHECK(logrx::detect_compression(read_data("plain.log")) == Compression::None);
  // Text that starts like a magic number is text.
  CHECK(logrx::detect_compression("BZh9 is a log line\n") == Compression::None);
  CHECK(logrx::detect_compression("(EngineCore_DP0 pid=1) INFO") == Compression::None);
  CHECK_FALSE(logrx::may_be_compressed("[2026"));
  CHECK(logrx::may_be_compressed("BZh"));
  CHECK(logrx::may_be_compressed(std::string("\x1f", 1)));
  CHECK_FALSE(logrx::may_be_compressed("BZh9 is"));
}

TEST_CASE("Every format decodes to the plain log, fed in any pieces", "[parse][decompress]") {
  const std::string plain = read_data("plain.log");
  REQUIRE_FALSE(plain.empty());
  for (const char* name : {"log.gz", "log.zst", "log.xz", "log.bz2", "two-members.gz",
                           "two-frames.zst", "two-streams.xz", "two-streams.bz2", "zero-padded.gz"}) {
    INFO(name);
    if (!logrx::compression_supported(logrx::detect_compression(read_data(name)))) {
      WARN(std::string(name) + ": this build has no library for the format");
      continue;
    }
    for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{1} << 20}) {
      std::string out;
      CHECK(decode(read_data(name), piece, out).empty());
      CHECK(out == plain);
    }
  }
}

TEST_CASE("Truncated and corrupt data say so and keep what came before", "[parse][decompress]") {
  for (const char* name : {"truncated.gz", "truncated.zst", "truncated.xz", "truncated.bz2", "corrupt.gz"}) {
    INFO(name);
    if (!logrx::compression_supported(logrx::detect_compression(read_data(name)))) continue;
    std::string out;
    std::string error = decode(read_data(name), 64, out);
    CHECK_FALSE(error.empty());
    CHECK(read_data("plain.log").compare(0, out.size(), out) == 0);  // a prefix, never garbage
  }
}

TEST_CASE("The analyzer reads a compressed stream as the plain one", "[analysis][decompress]") {
  logrx::Rulebook book = logrx::test::load_builtin();
  const std::string plain = scan_json(book, read_data("plain.log"), 1 << 20);
  for (const char* name : {"log.gz", "log.zst", "log.xz", "log.bz2", "two-members.gz"}) {
    INFO(name);
    if (!logrx::compression_supported(logrx::detect_compression(read_data(name)))) continue;
    // Pieces of 1 byte: the magic number arrives over several calls.
    CHECK(scan_json(book, read_data(name), 1) == plain);
    CHECK(scan_json(book, read_data(name), 4096) == plain);
  }

  logrx::Analyzer analyzer(book);
  analyzer.feed(read_data("log.xz"));
  logrx::Report report = analyzer.finish();
  CHECK(report.summary.compression == "xz");
  CHECK(report.input_error.empty());

  logrx::Analyzer broken(book);
  broken.feed(read_data("truncated.gz"));
  logrx::Report cut = broken.finish();
  CHECK(cut.input_error.find("gzip") != std::string::npos);
  CHECK(cut.files.at(0).input_error == cut.input_error);
  CHECK(logrx::to_json(cut).find("\"input_error\"") != std::string::npos);

  // Without decompression the bytes are read as they are.
  logrx::AnalyzerOptions raw;
  raw.decompress = false;
  logrx::Analyzer as_is(book, raw);
  as_is.feed(read_data("log.gz"));
  CHECK(as_is.finish().summary.compression.empty());
}

TEST_CASE("A short text stream is not held back waiting for a magic number", "[analysis][decompress]") {
  logrx::Rulebook book = logrx::test::load_builtin();
  logrx::Analyzer analyzer(book);
  analyzer.feed("Killed\n");
  CHECK(analyzer.lines() == 1);
  logrx::Analyzer short_one(book);
  short_one.feed("BZh");  // could still be bzip2: held, then read as text at the end
  CHECK(short_one.lines() == 0);
  CHECK(short_one.finish().summary.lines == 1);
}
