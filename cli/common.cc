// SPDX-License-Identifier: MIT
#include "common.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <filesystem>
#include <memory>
#include <iostream>
#include <spdlog/spdlog.h>

#include "logrx/decompress.h"

namespace logrx::cli {

std::optional<Rulebook> load_rulebook(const RuleOptions& options) {
  std::vector<RuleSource> sources;
  // The built-in rulebook is always there: compiled into the library when
  // no copy is installed next to it.
  if (!options.no_builtin) sources.push_back(builtin_rule_source());
  // $LOGRX_RULES_PATH (colon-separated) comes before --rules, so the command
  // line has the last word.
  if (const char* path = std::getenv("LOGRX_RULES_PATH"); path != nullptr) {
    std::string list = path;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) sources.push_back({list.substr(start, end - start)});
      start = end + 1;
    }
  }
  for (const std::string& dir : options.extra_dirs) sources.push_back({dir});
  if (sources.empty()) {
    std::cerr << "logrx: no rules to load (--no-builtin-rules without --rules)\n";
    return std::nullopt;
  }
  Diagnostics errors;
  auto book = Rulebook::load(sources, errors);
  for (const Diagnostic& d : errors) std::cerr << format_diagnostic(d) << "\n";
  if (!book) {
    std::cerr << "logrx: " << errors.size() << (errors.size() == 1 ? " error" : " errors")
              << " in the rulebook; nothing was scanned\n";
    return std::nullopt;
  }
  spdlog::debug("loaded {} rules from {} source(s)", book->size(), sources.size());
  return book;
}

std::string read_stream(const std::string& path,
                        const std::function<void(std::string_view)>& sink) {
  return read_stream(path, sink, sink, 0);
}

namespace {

// Reads up to `size` bytes into `data`: short only at the end of the file,
// on an error or when asked to stop.
std::size_t fill_piece(int fd, char* data, std::size_t size, bool& at_end, std::string& error) {
  std::size_t filled = 0;
  while (filled < size && !stop_requested()) {
    ssize_t n = ::read(fd, data + filled, size - filled);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      error = std::strerror(errno);
      break;
    }
    if (n == 0) {
      at_end = true;
      break;
    }
    filled += static_cast<std::size_t>(n);
  }
  return filled;
}

// A regular file of several pieces: while the analysis works on one, a
// thread reads the next into the other buffer. The read is a copy the
// analysis (and the threads it runs) would otherwise wait for, once per
// piece. False when no thread could be started (nothing was read).
bool read_pieces_ahead(int fd, std::size_t size, const std::function<void(std::string_view)>& sink,
                       std::string& error) {
  struct Piece {
    std::unique_ptr<char[]> data;
    std::size_t filled = 0;
    bool at_end = false;
    bool ready = false;
    std::string error;
  };
  Piece pieces[2];
  for (Piece& piece : pieces) piece.data.reset(new char[size]);
  std::mutex mutex;
  std::condition_variable changed;
  bool quit = false;
  std::thread reader;
  try {
    reader = std::thread([&] {
      for (int k = 0;; k ^= 1) {
        Piece& piece = pieces[k];
        {
          std::unique_lock<std::mutex> lock(mutex);
          changed.wait(lock, [&] { return quit || !piece.ready; });
          if (quit) return;
        }
        bool at_end = false;
        std::string read_error;
        std::size_t filled = fill_piece(fd, piece.data.get(), size, at_end, read_error);
        {
          std::lock_guard<std::mutex> lock(mutex);
          piece.filled = filled;
          piece.at_end = at_end || filled < size;
          piece.error = std::move(read_error);
          piece.ready = true;
        }
        changed.notify_all();
        if (piece.at_end || !piece.error.empty()) return;
      }
    });
  } catch (const std::system_error&) {
    return false;
  }
  struct Joined {
    std::thread& thread;
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& quit;
    ~Joined() {
      {
        std::lock_guard<std::mutex> lock(mutex);
        quit = true;
      }
      changed.notify_all();
      thread.join();
    }
  } joined{reader, mutex, changed, quit};
  for (int k = 0;; k ^= 1) {
    Piece& piece = pieces[k];
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return piece.ready; });
    }
    if (piece.filled > 0) sink(std::string_view(piece.data.get(), piece.filled));
    bool last = piece.at_end || !piece.error.empty();
    if (!piece.error.empty()) error = piece.error;
    {
      std::lock_guard<std::mutex> lock(mutex);
      piece.ready = false;
    }
    changed.notify_all();
    if (last || stdout_closed() || stop_requested()) break;
  }
  return true;
}

}  // namespace

std::string read_stream(const std::string& path, const std::function<void(std::string_view)>& sink,
                        const std::function<void(std::string_view)>& file_sink,
                        std::size_t file_piece) {
  int fd = 0;
  bool is_stdin = path == "-";
  if (is_stdin && ::isatty(STDIN_FILENO) != 0)
    std::cerr << "logrx: reading the log from the terminal; give a file or pipe one in "
                 "(Ctrl-D ends the input)\n";
  if (!is_stdin) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::strerror(errno);
    struct stat info {};
    if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
      ::close(fd);
      return "is a directory";
    }
  }
  // Large reads: the analyzer splits lines itself, so a chunk boundary may
  // fall anywhere.
  static constexpr std::size_t kChunk = 1 << 18;
  std::string error;
  // A pipe can stay open and silent (`tail -F log | logrx scan`): wait for
  // data or a stop signal, so Ctrl-C ends the input and the report is still
  // printed.
  struct stat info {};
  bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  std::size_t size = kChunk;
  if (regular && file_piece > kChunk) {
    // No bigger than the file (plus a byte to see its end in one read).
    auto file_size = static_cast<std::size_t>(info.st_size > 0 ? info.st_size : 0);
    size = std::max(kChunk, std::min(file_piece, file_size + 1));
    if (file_size >= size && read_pieces_ahead(fd, size, file_sink, error)) {
      if (!is_stdin) ::close(fd);
      return error;
    }
  }
  std::unique_ptr<char[]> buffer(new char[size]);
  const auto& deliver = regular ? file_sink : sink;
  while (!stop_requested()) {
    if (!regular && !wait_readable(fd)) break;
    // A regular file fills the buffer before it is handed on.
    std::size_t filled = 0;
    bool at_end = false;
    do {
      ssize_t n = ::read(fd, buffer.get() + filled, size - filled);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        error = std::strerror(errno);
        break;
      }
      if (n == 0) {
        at_end = true;
        break;
      }
      filled += static_cast<std::size_t>(n);
    } while (regular && filled < size && !stop_requested());
    if (filled > 0) deliver(std::string_view(buffer.get(), filled));
    if (!error.empty() || at_end || stdout_closed()) break;
  }
  if (stop_requested() && !regular && error.empty() && !stdout_closed()) {
    // What the writer had already sent when the stop came is part of the
    // log (a bounded amount: a pipe holds 64 KiB by default).
    std::size_t drained = 0;
    while (drained < (std::size_t{16} << 20)) {
      pollfd ready{fd, POLLIN, 0};
      if (::poll(&ready, 1, 0) <= 0 || (ready.revents & POLLIN) == 0) break;
      ssize_t n = ::read(fd, buffer.get(), size);
      if (n <= 0) break;
      drained += static_cast<std::size_t>(n);
      sink(std::string_view(buffer.get(), static_cast<std::size_t>(n)));
    }
  }
  if (!is_stdin) ::close(fd);
  return error;
}

std::vector<Input> expand_inputs(const std::vector<std::string>& named,
                                 const std::vector<std::string>& globs) {
  namespace fs = std::filesystem;
  std::vector<Input> inputs;
  for (const std::string& path : named) {
    std::error_code ec;
    if (path == "-" || !fs::is_directory(path, ec)) {
      inputs.push_back(Input{path, ""});
      continue;
    }
    auto wanted = [&globs](const fs::path& relative) {
      if (globs.empty()) return true;
      std::string name = relative.filename().string();
      std::string below = relative.generic_string();
      return std::any_of(globs.begin(), globs.end(), [&](const std::string& glob) {
        bool by_path = glob.find('/') != std::string::npos;
        return fnmatch(glob.c_str(), (by_path ? below : name).c_str(), by_path ? FNM_PATHNAME : 0) == 0;
      });
    };
    std::vector<std::string> found;
    std::vector<Input> unreadable;
    fs::recursive_directory_iterator it(path, fs::directory_options::none, ec);
    if (ec) {
      inputs.push_back(Input{path, ec.message()});
      continue;
    }
    for (fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
      if (ec) {
        unreadable.push_back(Input{it->path().string(), ec.message()});
        ec.clear();
        continue;
      }
      std::string name = it->path().filename().string();
      // Hidden files and folders (.git, editors' swap files) are not logs.
      if (!name.empty() && name[0] == '.') {
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file(ec)) continue;
      if (wanted(it->path().lexically_relative(path))) found.push_back(it->path().string());
    }
    std::sort(found.begin(), found.end());
    if (found.empty() && unreadable.empty())
      inputs.push_back(Input{path, globs.empty() ? "directory holds no file"
                                                 : "directory holds no file matching --glob"});
    for (std::string& file : found) inputs.push_back(Input{std::move(file), ""});
    for (Input& input : unreadable) inputs.push_back(std::move(input));
  }
  return inputs;
}

std::string read_decoded(const std::string& path,
                         const std::function<void(std::string_view)>& sink) {
  Decompressor decoder;
  std::string read_error = read_stream(path, [&](std::string_view bytes) { decoder.feed(bytes, sink); });
  if (!read_error.empty()) return read_error;
  decoder.finish(sink);
  return decoder.error();
}

std::vector<std::string> rotated_siblings(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path live(path);
  fs::path dir = live.has_parent_path() ? live.parent_path() : fs::path(".");
  std::string base = live.filename().string();
  struct Sibling {
    std::string path;
    fs::file_time_type mtime;
    long number;  // logrotate's .N, 0 for dated names
  };
  std::vector<Sibling> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() <= base.size() + 1 || name.compare(0, base.size(), base) != 0) continue;
    char separator = name[base.size()];
    if (separator != '.' && separator != '-') continue;
    std::string rest = name.substr(base.size() + 1);
    // FILE.1, FILE.2.gz, FILE-20260523, FILE-20260523.zst: a number or date,
    // then at most a compression suffix (which is only a hint: the bytes decide).
    std::size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    if (digits == 0) continue;
    std::string suffix = rest.substr(digits);
    if (!(suffix.empty() || suffix == ".gz" || suffix == ".zst" || suffix == ".xz" ||
          suffix == ".bz2"))
      continue;
    if (!it->is_regular_file(ec)) continue;
    long number = separator == '.' && digits < 6 ? std::stol(rest.substr(0, digits)) : 0;
    found.push_back(Sibling{it->path().string(), it->last_write_time(ec), number});
  }
  std::sort(found.begin(), found.end(), [](const Sibling& a, const Sibling& b) {
    if (a.mtime != b.mtime) return a.mtime < b.mtime;
    if (a.number != b.number) return a.number > b.number;
    return a.path < b.path;
  });
  std::vector<std::string> paths;
  for (Sibling& s : found) paths.push_back(std::move(s.path));
  return paths;
}

std::optional<std::int64_t> file_mtime(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return static_cast<std::int64_t>(info.st_mtime);
}

std::optional<std::uint64_t> file_size(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size < 0) return std::nullopt;
  return static_cast<std::uint64_t>(info.st_size);
}

bool stdout_closed() {
  // SIGPIPE is ignored (main), so a closed pipe shows up as a failed stream.
  return !std::cout.good();
}

FdStreamBuf::FdStreamBuf(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }

FdStreamBuf::~FdStreamBuf() { drain(); }

int FdStreamBuf::drain() {
  const char* at = pbase();
  const char* end = pptr();
  while (error_ == 0 && at < end) {
    ssize_t n = ::write(fd_, at, static_cast<std::size_t>(end - at));
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
    } else {
      at += n;
    }
  }
  setp(buffer_, buffer_ + sizeof buffer_);
  return error_ == 0 ? 0 : -1;
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type ch) {
  if (drain() != 0) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

int FdStreamBuf::sync() { return drain(); }

namespace {
// Never freed: std::cout may be flushed by the runtime after main returns.
FdStreamBuf* g_stdout = nullptr;
}  // namespace

void install_stdout() {
  if (g_stdout != nullptr) return;
  g_stdout = new FdStreamBuf(STDOUT_FILENO);
  std::cout.rdbuf(g_stdout);
}

int finish_stdout(int code) {
  std::cout.flush();
  int error = g_stdout != nullptr ? g_stdout->error() : 0;
  if (error == 0 && !std::cout.good()) error = EIO;
  if (error == 0 || error == EPIPE) return code;
  std::cerr << "logrx: cannot write the output to standard output: " << std::strerror(error)
            << "\n";
  return kExitError;
}

OutputFile::OutputFile(std::string path, int fd)
    : path_(std::move(path)), buffer_(fd), stream_(&buffer_) {}

OutputFile::~OutputFile() { close(); }

std::unique_ptr<OutputFile> OutputFile::create(const std::string& path, std::string& error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0) {
    error = std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<OutputFile>(new OutputFile(path, fd));
}

std::string OutputFile::close() {
  if (closed_) return "";
  closed_ = true;
  stream_.flush();
  int error = buffer_.error();
  if (error == 0 && !stream_.good()) error = EIO;
  if (::close(buffer_.fd()) != 0 && error == 0) error = errno;
  return error == 0 ? "" : std::strerror(error);
}

namespace {
volatile std::sig_atomic_t g_stop = 0;
int g_stop_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int) {
  int saved = errno;
  g_stop = 1;
  if (g_stop_pipe[1] >= 0) {
    char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(g_stop_pipe[1], &byte, 1);
  }
  errno = saved;
}

// Polls `fd` (or nothing, -1) together with the stop pipe.
int poll_with_stop(int fd, int timeout_ms) {
  pollfd fds[2] = {{g_stop_pipe[0], POLLIN, 0}, {fd, POLLIN, 0}};
  return ::poll(fds, fd >= 0 ? 2 : 1, timeout_ms) > 0 && fd >= 0 && fds[1].revents != 0 ? 1 : 0;
}
}  // namespace

void install_stop_handlers() {
  if (g_stop_pipe[0] < 0 && ::pipe2(g_stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_stop_pipe[0] = g_stop_pipe[1] = -1;
  }
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: a blocked read returns EINTR. SA_RESETHAND: a second
  // Ctrl-C kills a process that is stuck in finishing.
  action.sa_flags = SA_RESETHAND;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() { return g_stop != 0; }

bool wait_unless_stopped(int ms) {
  if (g_stop == 0) {
    if (g_stop_pipe[0] >= 0) {
      poll_with_stop(-1, ms);
    } else {
      ::usleep(static_cast<useconds_t>(ms) * 1000);
    }
  }
  return g_stop != 0;
}

bool wait_readable(int fd) {
  while (g_stop == 0) {
    if (g_stop_pipe[0] < 0) return true;  // no pipe: a plain blocking read
    if (poll_with_stop(fd, -1) == 1) return true;
  }
  return false;
}

bool stdin_is_stream() {
  struct stat info {};
  if (::fstat(STDIN_FILENO, &info) != 0) return false;
  return !S_ISREG(info.st_mode);
}

bool stdout_wants_color() {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return ::isatty(STDOUT_FILENO) != 0;
}

}  // namespace logrx::cli
