// SPDX-License-Identifier: MIT
// Compressed logs: gzip, zstd, xz and bzip2, recognised by their first bytes
// (never by a file name) and decoded as a stream, in bounded memory.
//
// The Analyzer does this by itself for a stream that starts compressed
// (AnalyzerOptions::decompress), so most callers need nothing here. The
// Decompressor is for callers that join several inputs into one stream (a
// rotated log's .gz siblings before the live file):
//
//   logrx::Decompressor decoder;  // tells the format from the first bytes
//   decoder.feed(bytes, [&](std::string_view text) { analyzer.feed(text); });
//   if (!decoder.finish(sink)) std::cerr << decoder.error();
//
// Thread-safety: a Decompressor belongs to one stream; the free functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace logrx {

enum class Compression { None, Gzip, Zstd, Xz, Bzip2 };

// "none", "gzip", "zstd", "xz", "bzip2".
std::string_view to_string(Compression format) noexcept;

// Bytes detect_compression needs to tell every format from text (bzip2's
// "BZh9" is followed by a 6-byte block magic).
constexpr std::size_t kCompressionMagicBytes = 10;

// The format whose magic number `first_bytes` starts with; None for anything
// else, including a prefix too short to be sure.
Compression detect_compression(std::string_view first_bytes) noexcept;

// True when `prefix` (shorter than kCompressionMagicBytes) could still turn
// out to be compressed once more bytes arrive; false means it is not.
bool may_be_compressed(std::string_view prefix) noexcept;

// False when this build has no library for the format (each is optional at
// build time); None is always supported.
bool compression_supported(Compression format) noexcept;

class Decompressor {
 public:
  using Sink = std::function<void(std::string_view)>;

  // Decoded bytes reach the sink in pieces of at most this many bytes, so
  // memory stays bounded whatever the compression ratio.
  static constexpr std::size_t kOutputChunk = 256 * 1024;

  // Tells the format from the stream's first bytes (holding at most
  // kCompressionMagicBytes of them until it can); text passes through.
  Decompressor();
  explicit Decompressor(Compression format);
  ~Decompressor();
  Decompressor(Decompressor&&) noexcept;
  Decompressor& operator=(Decompressor&&) noexcept;
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  // Decodes the next bytes of the compressed stream (split anywhere).
  // Concatenated members (`cat a.gz b.gz`, several zstd frames) are decoded
  // one after another. Returns false on data that cannot be decoded (error()
  // says why); later calls then do nothing.
  bool feed(std::string_view bytes, const Sink& sink);

  // The input ended: false when it ended inside a compressed member
  // (truncated file) or an error came before.
  bool finish(const Sink& sink);

  Compression format() const noexcept;  // None while still telling, or for text
  const std::string& error() const noexcept;  // "" while all is well
  std::uint64_t bytes_in() const noexcept;    // compressed bytes consumed
  std::uint64_t bytes_out() const noexcept;   // decoded bytes given to the sink

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace logrx
