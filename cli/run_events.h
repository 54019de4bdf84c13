// SPDX-License-Identifier: MIT
// `logrx run --events FILE|-`: one JSON object per line for other tools
// (attempt_started, finding, ready, stopped, exited, relaunching, verdict).
#pragma once

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>

#include "supervise.h"

namespace logrx::cli {

inline std::string utc_now() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[40];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buffer, static_cast<int>(ms));
  return out;
}

class EventSink {
 public:
  EventSink() = default;
  EventSink(const EventSink&) = delete;
  EventSink& operator=(const EventSink&) = delete;
  ~EventSink() {
    if (fd_ > STDERR_FILENO) ::close(fd_);
  }
  // "" = off, "-" = stdout; a file is opened O_CLOEXEC. False with `error` set.
  bool open(const std::string& path, std::string& error) {
    if (path.empty()) return true;
    if (path == "-") {
      fd_ = STDOUT_FILENO;
      return true;
    }
    fd_ = open_for_writing(path, false);
    if (fd_ < 0) {
      error = "cannot write --events " + path + ": " + std::strerror(errno);
      return false;
    }
    return true;
  }
  bool enabled() const { return fd_ >= 0; }
  bool to_stdout() const { return fd_ == STDOUT_FILENO; }
  void emit(const std::string& event, nlohmann::ordered_json fields = nlohmann::ordered_json::object()) {
    if (fd_ < 0) return;
    nlohmann::ordered_json line;
    line["event"] = event;
    line["time"] = utc_now();
    for (auto& [key, value] : fields.items()) line[key] = value;
    // Invalid UTF-8 from a log becomes U+FFFD instead of an exception.
    std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    write_all(fd_, text.data(), text.size());
  }

 private:
  int fd_ = -1;
};

}  // namespace logrx::cli
