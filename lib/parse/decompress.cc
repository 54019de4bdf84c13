// SPDX-License-Identifier: MIT
// Streaming decoders for compressed logs over Debian's zlib, libzstd, liblzma
// and libbz2, each optional at build time. Every decoder writes into one
// fixed output buffer that is handed to the sink whenever it fills, so a
// decompression bomb costs time, never memory.
#include "logrx/decompress.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#ifdef LOGRX_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef LOGRX_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef LOGRX_HAVE_LZMA
#include <lzma.h>
#endif
#ifdef LOGRX_HAVE_BZIP2
#include <bzlib.h>
#endif

namespace logrx {

std::string_view to_string(Compression format) noexcept {
  switch (format) {
    case Compression::Gzip: return "gzip";
    case Compression::Zstd: return "zstd";
    case Compression::Xz: return "xz";
    case Compression::Bzip2: return "bzip2";
    case Compression::None: break;
  }
  return "none";
}

namespace {

constexpr unsigned char kGzip[] = {0x1f, 0x8b};
constexpr unsigned char kZstd[] = {0x28, 0xb5, 0x2f, 0xfd};
constexpr unsigned char kXz[] = {0xfd, '7', 'z', 'X', 'Z', 0x00};
// "BZh" + block size '1'..'9' + the magic of a block (pi) or of the end of
// the stream (sqrt(pi), an empty file).
constexpr unsigned char kBzipBlock[] = {0x31, 0x41, 0x59, 0x26, 0x53, 0x59};
constexpr unsigned char kBzipEnd[] = {0x17, 0x72, 0x45, 0x38, 0x50, 0x90};

template <std::size_t N>
bool starts(std::string_view bytes, const unsigned char (&magic)[N], std::size_t at = 0) {
  if (bytes.size() < at + N) return false;
  return std::memcmp(bytes.data() + at, magic, N) == 0;
}

// How much of `magic` the (short) prefix agrees with.
template <std::size_t N>
bool agrees(std::string_view prefix, const unsigned char (&magic)[N], std::size_t at = 0) {
  for (std::size_t i = 0; i < N && at + i < prefix.size(); ++i)
    if (static_cast<unsigned char>(prefix[at + i]) != magic[i]) return false;
  return true;
}

bool bzip_header(std::string_view bytes, std::size_t n) {
  return (n < 1 || bytes[0] == 'B') && (n < 2 || bytes[1] == 'Z') && (n < 3 || bytes[2] == 'h') &&
         (n < 4 || (bytes[3] >= '1' && bytes[3] <= '9'));
}

}  // namespace

Compression detect_compression(std::string_view b) noexcept {
  if (starts(b, kGzip)) return Compression::Gzip;
  if (starts(b, kZstd)) return Compression::Zstd;
  if (starts(b, kXz)) return Compression::Xz;
  if (b.size() >= kCompressionMagicBytes && bzip_header(b, 4) &&
      (starts(b, kBzipBlock, 4) || starts(b, kBzipEnd, 4)))
    return Compression::Bzip2;
  return Compression::None;
}

bool may_be_compressed(std::string_view p) noexcept {
  if (p.empty()) return true;
  if (p.size() >= kCompressionMagicBytes) return detect_compression(p) != Compression::None;
  return agrees(p, kGzip) || agrees(p, kZstd) || agrees(p, kXz) ||
         (bzip_header(p, std::min<std::size_t>(p.size(), 4)) &&
          (agrees(p, kBzipBlock, 4) || agrees(p, kBzipEnd, 4)));
}

bool compression_supported(Compression format) noexcept {
  switch (format) {
    case Compression::None: return true;
#ifdef LOGRX_HAVE_ZLIB
    case Compression::Gzip: return true;
#endif
#ifdef LOGRX_HAVE_ZSTD
    case Compression::Zstd: return true;
#endif
#ifdef LOGRX_HAVE_LZMA
    case Compression::Xz: return true;
#endif
#ifdef LOGRX_HAVE_BZIP2
    case Compression::Bzip2: return true;
#endif
    default: return false;
  }
}

// One format's decoder. step() decodes from `in` into `out` until the input is
// used up or the output is full; it reports a member (stream, frame) that
// ended so that the caller can tell a truncated file from a complete one.
struct Backend {
  virtual ~Backend() = default;
  enum class Status { Ok, MemberEnd, Error };
  virtual Status step(const char*& in, std::size_t& in_left, char* out, std::size_t& out_left) = 0;
  // Called at the end of the input; may still produce output (xz).
  virtual Status end(char* out, std::size_t& out_left) {
    (void)out;
    (void)out_left;
    return Status::Ok;
  }
  virtual void restart() = 0;  // the next member begins
  std::string message;
};

namespace {

#ifdef LOGRX_HAVE_ZLIB
struct GzipBackend final : Backend {
  z_stream z{};
  bool ready = false;
  GzipBackend() { ready = inflateInit2(&z, 15 + 16) == Z_OK; }
  ~GzipBackend() override {
    if (ready) inflateEnd(&z);
  }
  Status step(const char*& in, std::size_t& in_left, char* out, std::size_t& out_left) override {
    if (!ready) {
      message = "cannot start the gzip decoder";
      return Status::Error;
    }
    uInt in_now = static_cast<uInt>(std::min<std::size_t>(in_left, UINT_MAX));
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
    z.avail_in = in_now;
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = static_cast<uInt>(out_left);
    int rc = inflate(&z, Z_NO_FLUSH);
    std::size_t used = in_now - z.avail_in;
    in += used;
    in_left -= used;
    out_left = z.avail_out;
    if (rc == Z_STREAM_END) return Status::MemberEnd;
    if (rc == Z_OK || rc == Z_BUF_ERROR) return Status::Ok;
    message = z.msg != nullptr ? z.msg : "corrupt data";
    return Status::Error;
  }
  void restart() override { inflateReset(&z); }
};
#endif

#ifdef LOGRX_HAVE_ZSTD
struct ZstdBackend final : Backend {
  ZSTD_DStream* stream = ZSTD_createDStream();
  ZstdBackend() {
    if (stream != nullptr) {
      ZSTD_initDStream(stream);
      // Frames that ask for a window over 128 MiB (zstd --long=31) are
      // refused rather than allocated.
      ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, 27);
    }
  }
  ~ZstdBackend() override { ZSTD_freeDStream(stream); }
  Status step(const char*& in, std::size_t& in_left, char* out, std::size_t& out_left) override {
    if (stream == nullptr) {
      message = "cannot start the zstd decoder";
      return Status::Error;
    }
    ZSTD_inBuffer input{in, in_left, 0};
    ZSTD_outBuffer output{out, out_left, 0};
    std::size_t rc = ZSTD_decompressStream(stream, &output, &input);
    in += input.pos;
    in_left -= input.pos;
    out_left -= output.pos;
    if (ZSTD_isError(rc)) {
      message = ZSTD_getErrorName(rc);
      return Status::Error;
    }
    return rc == 0 ? Status::MemberEnd : Status::Ok;
  }
  // A new frame starts by itself after the previous one is complete.
  void restart() override {}
};
#endif

#ifdef LOGRX_HAVE_LZMA
struct XzBackend final : Backend {
  lzma_stream z = LZMA_STREAM_INIT;
  bool ready = false;
  XzBackend() {
    // 256 MiB of decoder memory at most (xz -9 needs 65 MiB); concatenated
    // .xz files (and padding between them) are one input, as for xz(1).
    ready = lzma_stream_decoder(&z, 256u << 20, LZMA_CONCATENATED) == LZMA_OK;
  }
  ~XzBackend() override { lzma_end(&z); }
  Status code(lzma_action action, const char*& in, std::size_t& in_left, char* out,
              std::size_t& out_left) {
    if (!ready) {
      message = "cannot start the xz decoder";
      return Status::Error;
    }
    z.next_in = reinterpret_cast<const uint8_t*>(in);
    z.avail_in = in_left;
    z.next_out = reinterpret_cast<uint8_t*>(out);
    z.avail_out = out_left;
    lzma_ret rc = lzma_code(&z, action);
    std::size_t used = in_left - z.avail_in;
    in += used;
    in_left -= used;
    out_left = z.avail_out;
    switch (rc) {
      case LZMA_OK: return Status::Ok;
      case LZMA_STREAM_END: return Status::MemberEnd;
      case LZMA_BUF_ERROR:
        if (action == LZMA_RUN) return Status::Ok;
        message = "unexpected end of data";
        return Status::Error;
      case LZMA_MEMLIMIT_ERROR: message = "needs more than 256 MiB of memory to decode"; break;
      case LZMA_FORMAT_ERROR: message = "not in the .xz format"; break;
      case LZMA_OPTIONS_ERROR: message = "unsupported options"; break;
      case LZMA_DATA_ERROR: message = "corrupt data"; break;
      default: message = "decoder error " + std::to_string(static_cast<int>(rc)); break;
    }
    return Status::Error;
  }
  Status step(const char*& in, std::size_t& in_left, char* out, std::size_t& out_left) override {
    Status s = code(LZMA_RUN, in, in_left, out, out_left);
    // With LZMA_CONCATENATED the stream ends only at LZMA_FINISH.
    return s == Status::MemberEnd ? Status::Ok : s;
  }
  Status end(char* out, std::size_t& out_left) override {
    const char* none = nullptr;
    std::size_t zero = 0;
    return code(LZMA_FINISH, none, zero, out, out_left);
  }
  void restart() override {}
};
#endif

#ifdef LOGRX_HAVE_BZIP2
struct Bzip2Backend final : Backend {
  bz_stream z{};
  bool ready = false;
  Bzip2Backend() { ready = BZ2_bzDecompressInit(&z, 0, 0) == BZ_OK; }
  ~Bzip2Backend() override {
    if (ready) BZ2_bzDecompressEnd(&z);
  }
  Status step(const char*& in, std::size_t& in_left, char* out, std::size_t& out_left) override {
    if (!ready) {
      message = "cannot start the bzip2 decoder";
      return Status::Error;
    }
    unsigned in_now = static_cast<unsigned>(std::min<std::size_t>(in_left, UINT_MAX));
    z.next_in = const_cast<char*>(in);
    z.avail_in = in_now;
    z.next_out = out;
    z.avail_out = static_cast<unsigned>(out_left);
    int rc = BZ2_bzDecompress(&z);
    std::size_t used = in_now - z.avail_in;
    in += used;
    in_left -= used;
    out_left = z.avail_out;
    if (rc == BZ_STREAM_END) return Status::MemberEnd;
    if (rc == BZ_OK) return Status::Ok;
    message = rc == BZ_MEM_ERROR ? "out of memory" : "corrupt data";
    return Status::Error;
  }
  void restart() override {
    if (ready) BZ2_bzDecompressEnd(&z);
    z = bz_stream{};
    ready = BZ2_bzDecompressInit(&z, 0, 0) == BZ_OK;
  }
};
#endif

std::unique_ptr<Backend> make_backend(Compression format) {
  switch (format) {
#ifdef LOGRX_HAVE_ZLIB
    case Compression::Gzip: return std::make_unique<GzipBackend>();
#endif
#ifdef LOGRX_HAVE_ZSTD
    case Compression::Zstd: return std::make_unique<ZstdBackend>();
#endif
#ifdef LOGRX_HAVE_LZMA
    case Compression::Xz: return std::make_unique<XzBackend>();
#endif
#ifdef LOGRX_HAVE_BZIP2
    case Compression::Bzip2: return std::make_unique<Bzip2Backend>();
#endif
    default: return nullptr;
  }
}

}  // namespace

struct Decompressor::Impl {
  Compression format = Compression::None;
  bool detecting = false;  // the format is told from the first bytes, held in `head`
  std::string head;
  std::unique_ptr<Backend> backend;
  std::vector<char> out;
  std::string error;
  std::uint64_t in_total = 0;
  std::uint64_t out_total = 0;
  bool in_member = false;     // bytes of a member were read and its end not yet
  bool member_ended = false;  // the last member ended; what follows is another or padding
  bool trailing = false;      // bytes after the last member that start no other: ignored

  void start(Compression f) {
    format = f;
    if (format == Compression::None) return;
    backend = make_backend(format);
    out.resize(kOutputChunk);
    if (!backend)
      fail("this logrx was built without its library; decompress the file first (or "
           "rebuild with the library's -dev package installed)");
  }

  void fail(std::string why) {
    if (error.empty()) error = std::string(to_string(format)) + ": " + std::move(why);
  }

  void flush(std::size_t out_left, const Sink& sink) {
    std::size_t produced = out.size() - out_left;
    if (produced == 0) return;
    out_total += produced;
    sink(std::string_view(out.data(), produced));
  }

  // After a member ended: another member must start with the format's magic;
  // anything else (the zeros tar or a disk pads with) ends the input, as
  // gzip(1) ignores trailing garbage.
  bool next_member_starts(std::string_view rest) const {
    switch (format) {
      case Compression::Gzip: return agrees(rest, kGzip);
      case Compression::Bzip2: return bzip_header(rest, std::min<std::size_t>(rest.size(), 4));
      default: return true;
    }
  }
};

Decompressor::Decompressor() : impl_(std::make_unique<Impl>()) { impl_->detecting = true; }

Decompressor::Decompressor(Compression format) : impl_(std::make_unique<Impl>()) {
  impl_->start(format);
}

Decompressor::~Decompressor() = default;
Decompressor::Decompressor(Decompressor&&) noexcept = default;
Decompressor& Decompressor::operator=(Decompressor&&) noexcept = default;

bool Decompressor::feed(std::string_view bytes, const Sink& sink) {
  Impl& d = *impl_;
  if (!d.error.empty()) return false;
  if (d.detecting) {
    // The common case, text, is told by its first byte and never copied.
    if (d.head.empty() && !bytes.empty() && !may_be_compressed(bytes.substr(0, 1))) {
      d.detecting = false;
    } else {
      std::size_t take = std::min(bytes.size(), kCompressionMagicBytes - d.head.size());
      d.head.append(bytes.data(), take);
      bytes.remove_prefix(take);
      if (d.head.size() < kCompressionMagicBytes && may_be_compressed(d.head)) return true;
      d.detecting = false;
      d.start(detect_compression(d.head));
      std::string first = std::move(d.head);
      d.head.clear();
      if (!feed(first, sink)) return false;
    }
  }
  if (d.format == Compression::None) {
    d.in_total += bytes.size();
    d.out_total += bytes.size();
    if (!bytes.empty()) sink(bytes);
    return true;
  }
  if (d.trailing) return true;
  const char* in = bytes.data();
  std::size_t in_left = bytes.size();
  while (in_left > 0) {
    if (d.member_ended) {
      if (!d.next_member_starts(std::string_view(in, in_left))) {
        d.trailing = true;
        d.in_total += in_left;
        return true;
      }
      d.backend->restart();
      d.member_ended = false;
    }
    std::size_t out_left = d.out.size();
    std::size_t before = in_left;
    Backend::Status status = d.backend->step(in, in_left, d.out.data(), out_left);
    d.in_total += before - in_left;
    d.in_member = true;
    d.flush(out_left, sink);
    if (status == Backend::Status::Error) {
      d.fail(d.backend->message + " after " + std::to_string(d.in_total) + " compressed bytes");
      return false;
    }
    if (status == Backend::Status::MemberEnd) {
      d.in_member = false;
      d.member_ended = true;
      continue;
    }
    // No input used and no room used: the decoder waits for more input.
    if (before == in_left && out_left == d.out.size()) break;
  }
  // The decoder may hold output it could not write into a full buffer.
  for (;;) {
    std::size_t out_left = d.out.size();
    const char* none = in;
    std::size_t zero = 0;
    if (d.member_ended) break;
    Backend::Status status = d.backend->step(none, zero, d.out.data(), out_left);
    d.flush(out_left, sink);
    if (status == Backend::Status::Error) {
      d.fail(d.backend->message);
      return false;
    }
    if (status == Backend::Status::MemberEnd) {
      d.in_member = false;
      d.member_ended = true;
    }
    if (out_left == d.out.size()) break;
  }
  return true;
}

bool Decompressor::finish(const Sink& sink) {
  Impl& d = *impl_;
  if (!d.error.empty()) return false;
  if (d.detecting) {
    // Fewer bytes than a magic number needs: whatever they start like, text.
    d.detecting = false;
    d.start(detect_compression(d.head));
    std::string first = std::move(d.head);
    d.head.clear();
    if (!feed(first, sink)) return false;
  }
  if (d.format == Compression::None || d.in_total == 0) return true;
  for (int rounds = 0;; ++rounds) {
    std::size_t out_left = d.out.size();
    Backend::Status status = d.backend->end(d.out.data(), out_left);
    d.flush(out_left, sink);
    if (status == Backend::Status::Error) {
      d.fail(d.backend->message + " (truncated file?)");
      return false;
    }
    if (status == Backend::Status::MemberEnd) {
      d.in_member = false;
      d.member_ended = true;
      break;
    }
    if (out_left == d.out.size() || rounds > 1 << 20) break;
  }
  if (d.in_member && !d.member_ended && d.format != Compression::Xz) {
    d.fail("unexpected end of data after " + std::to_string(d.in_total) +
           " compressed bytes (truncated file?)");
    return false;
  }
  return true;
}

Compression Decompressor::format() const noexcept { return impl_->format; }
const std::string& Decompressor::error() const noexcept { return impl_->error; }
std::uint64_t Decompressor::bytes_in() const noexcept { return impl_->in_total; }
std::uint64_t Decompressor::bytes_out() const noexcept { return impl_->out_total; }

}  // namespace logrx
