// SPDX-License-Identifier: MIT
// What the subcommands share: exit codes, finding the rulebook, reading input.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "logrx/rulebook.h"

namespace logrx::cli {

// Documented in README and --help; scripts depend on them.
enum ExitCode : int {
  kExitClean = 0,     // nothing at or above --fail-on
  kExitFindings = 1,  // findings at or above --fail-on (or failed rule examples)
  kExitError = 2,     // usage, input or rule errors
};

// Set when a write to stdout failed (a closed pipe: `logrx scan | head -1`,
// a full disk); commands stop producing output and reading input.
bool stdout_closed();

// A stream buffer over a file descriptor that remembers why the first write
// failed (errno), so a full disk is reported instead of lost in a badbit.
// After a failure it discards further output.
class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd);
  ~FdStreamBuf() override;
  FdStreamBuf(const FdStreamBuf&) = delete;
  FdStreamBuf& operator=(const FdStreamBuf&) = delete;
  int error() const { return error_; }  // errno of the first failed write, 0 if none
  int fd() const { return fd_; }

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;

 private:
  int drain();
  int fd_;
  int error_ = 0;
  char buffer_[1 << 16];
};

// Points std::cout at an FdStreamBuf over STDOUT_FILENO (call once, first
// thing in main).
void install_stdout();

// Flushes stdout and turns a failed write into exit 2 with a message on
// stderr. A closed pipe (EPIPE: `logrx scan | head -1`) is the reader's
// choice, not an error: it keeps `code` and prints nothing.
int finish_stdout(int code);

// An output file of `-o FILE`: created (truncated) on open; close() flushes
// it and says why writing failed ("" on success).
class OutputFile {
 public:
  // Returns nullptr and sets `error` when the file cannot be created.
  static std::unique_ptr<OutputFile> create(const std::string& path, std::string& error);
  ~OutputFile();
  std::ostream& stream() { return stream_; }
  const std::string& path() const { return path_; }
  std::string close();

 private:
  OutputFile(std::string path, int fd);
  std::string path_;
  FdStreamBuf buffer_;
  std::ostream stream_;
  bool closed_ = false;
};

// SIGINT and SIGTERM end reading instead of the process: the handler (no
// SA_RESTART, so blocking reads return EINTR) sets a flag and writes to a
// self-pipe that waits poll(). A second signal kills as usual.
void install_stop_handlers();
bool stop_requested();
// Waits up to `ms` milliseconds, or less when a stop is requested. Returns
// stop_requested().
bool wait_unless_stopped(int ms);
// Waits until `fd` is readable or a stop is requested; true when readable.
bool wait_readable(int fd);

struct RuleOptions {
  std::vector<std::string> extra_dirs;  // --rules DIR (repeatable), after $LOGRX_RULES_PATH
  bool no_builtin = false;              // --no-builtin-rules
};

// Loads the built-in rulebook plus the --rules directories; prints every
// diagnostic to stderr and returns std::nullopt on any error.
std::optional<Rulebook> load_rulebook(const RuleOptions& options);

// Streams a file ("-" is stdin) to `sink` in large chunks. Returns an error
// message, "" on success.
// Stops early, without error, once stdout is closed.
std::string read_stream(const std::string& path,
                        const std::function<void(std::string_view)>& sink);

// read_stream, with a regular file given to `file_sink` in pieces of up to
// `file_piece` bytes (Analyzer::feed_all's parallel scanning needs large
// ones); pipes and terminals still go to `sink` as they arrive. Reading,
// not mapping, the file: a file truncated while mapped (logrotate's
// copytruncate) would kill the process with SIGBUS.
std::string read_stream(const std::string& path, const std::function<void(std::string_view)>& sink,
                        const std::function<void(std::string_view)>& file_sink,
                        std::size_t file_piece);

// One input of scan/lint: a path to read, or why a named input has none.
struct Input {
  std::string path;
  std::string error;  // "" when readable so far
};
// Expands the named inputs: a file or '-' stays itself; a directory becomes
// its regular files, recursively and sorted, hidden entries left out, those
// matching one of `globs` when any are given (a pattern without '/' is
// matched against the file name, one with '/' against the path below the
// directory). A directory with no such file is an input with an error.
std::vector<Input> expand_inputs(const std::vector<std::string>& named,
                                 const std::vector<std::string>& globs);

// Streams a whole file to `sink`, decoded when it is compressed (gzip, zstd,
// xz, bzip2: told by its first bytes). Returns an error message, "" on success.
std::string read_decoded(const std::string& path,
                         const std::function<void(std::string_view)>& sink);

// The rotated siblings of a log (FILE.1, FILE.2.gz, FILE-20260523.zst, ...),
// oldest first: by modification time, then by rotation number, highest first.
std::vector<std::string> rotated_siblings(const std::string& path);

// Modification time of a file (Unix seconds), std::nullopt when unknown.
std::optional<std::int64_t> file_mtime(const std::string& path);

// Size of a regular file in bytes, std::nullopt for anything else.
std::optional<std::uint64_t> file_size(const std::string& path);

// True when standard input is a pipe, socket or terminal (not a file).
bool stdin_is_stream();

// True when stdout is a terminal and NO_COLOR is not set.
bool stdout_wants_color();

}  // namespace logrx::cli
