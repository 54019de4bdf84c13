// SPDX-License-Identifier: MIT
// Log-shipper envelopes: the wrapping a container runtime, kubectl, journald
// or syslog puts around each line a server wrote. The stage sits between the
// line splitter and the dialect parser: it recognises the envelope of a
// stream from its first line, then hands every server line on unwrapped,
// with the envelope's timestamp and origin (unit, pod/container) beside it.
// Formats: CRI (partial "P" lines joined), Docker json-file (partial pieces
// joined), kubectl logs --timestamps / --prefix (and both), journalctl
// short / short-iso / short-precise / short-iso-precise, journalctl -o json
// and -o export, syslog RFC 3164 and RFC 5424, and the JSON records log
// stores export a line in (Loki's "line", Google Cloud Logging's
// "textPayload", CloudWatch's "@message").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "logrx/line.h"

namespace logrx::detail {

enum class EnvelopeKind {
  Undecided,
  None,
  CRI,
  DockerJson,
  KubectlTimestamps,
  KubectlPrefix,
  Journal,       // journalctl's short formats and RFC 3164 syslog without a priority
  JournalJson,
  JournalExport,
  Syslog,        // RFC 3164 or RFC 5424 with a "<PRI>"
  JsonRecord,    // a log store's export: one JSON object per line holding the server's line
  JournalIdent,  // journal lines whose time and host a paste cut off: "ollama[8017]: message"
};

std::string_view to_string(EnvelopeKind kind);

// "May 23 07:40:41" or "May  3 07:40:41.123456" (RFC 3164, journalctl short
// and short-precise) at text[0]. Returns its length, 0 when absent.
std::size_t parse_bsd_time(std::string_view text, Timestamp& ts);

// After such a time, at text[pos]: " host ident[pid]: message" or " host
// ident: message". Sets ident; returns the index of the message, 0 when absent.
std::size_t parse_host_ident(std::string_view text, std::size_t pos, std::string_view& ident);

// What the envelope said about one server line. Views are valid only during
// the callback.
struct EnvelopeMeta {
  bool has_timestamp = false;
  Timestamp timestamp;
  std::string_view timestamp_text;
  std::string_view source;  // unit, "pod/NAME/CONTAINER", "ns/pod/container", "" when unknown
};

// The envelope's origin known from the file's path alone: the kubelet's
// /var/log/containers/<pod>_<ns>_<container>-<id>.log and
// /var/log/pods/<ns>_<pod>_<uid>/<container>/N.log give "ns/pod/container";
// Docker's /var/lib/docker/containers/<id>/<id>-json.log the short id.
std::string source_from_path(std::string_view path);

class EnvelopeDecoder {
 public:
  // meta is nullptr for a line passed on as it was (no envelope, or a line
  // that does not have the stream's envelope).
  using Sink = std::function<void(std::string_view line, bool truncated, const EnvelopeMeta* meta)>;

  explicit EnvelopeDecoder(std::size_t max_line_bytes = LineSplitter::kDefaultMaxLineBytes,
                           std::string_view stream_name = {});

  // One physical line (without its terminator), as the splitter gives it.
  void line(std::string_view raw, bool truncated, const Sink& sink);

  // Ends the stream: emits a pending partial line or export entry.
  void finish(const Sink& sink);

  EnvelopeKind kind() const noexcept { return kind_; }
  // Lines are passed on unchanged from now on: the stream has no envelope.
  bool passthrough() const noexcept { return kind_ == EnvelopeKind::None; }

  // Which envelope a first line has (None when it has none). Exposed for tests.
  static EnvelopeKind detect(std::string_view line);

 private:
  bool unwrap(std::string_view raw, bool truncated, const Sink& sink);
  void emit(std::string_view text, bool truncated, const Sink& sink);
  void emit_lines(std::string_view text, bool truncated, const Sink& sink);
  void emit_message(bool truncated, const Sink& sink);
  void flush_partial(const Sink& sink);
  void flush_export(const Sink& sink);
  void set_timestamp(const Timestamp& ts, std::string_view text);
  void set_epoch_micros(std::string_view digits);

  std::size_t max_line_bytes_;
  std::string path_source_;
  EnvelopeKind kind_ = EnvelopeKind::Undecided;
  bool prefix_timestamps_ = false;  // kubectl --prefix --timestamps
  bool quoted_ = false;             // the envelope is inside a Markdown quote ("> ")
  std::size_t decorations_ = 0;     // paste decorations passed while undecided
  std::string held_;          // journal header lines seen before the decision, '\n'-joined
  std::size_t held_count_ = 0;

  // The current line's envelope fields (owned: JSON values are unescaped).
  EnvelopeMeta meta_;
  std::string ts_text_;
  std::string source_;
  std::string text_;

  // A partial line (CRI "P", Docker without "\n") waiting for its end.
  std::string partial_;
  bool partial_open_ = false;
  bool partial_truncated_ = false;
  EnvelopeMeta partial_meta_;
  std::string partial_ts_text_;
  std::string partial_source_;

  // journalctl -o export: fields of the entry being read.
  std::string export_message_;
  bool export_has_message_ = false;
  bool export_truncated_ = false;
  std::string export_unit_;
  std::string export_ident_;
  std::uint64_t export_binary_left_ = 0;  // bytes of a binary field still to come
  bool export_binary_is_message_ = false;
  bool export_binary_header_ = false;     // the next line starts with the 8-byte length
  std::string export_length_bytes_;       // the length's bytes read so far
};

}  // namespace logrx::detail
