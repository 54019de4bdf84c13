// SPDX-License-Identifier: MIT
// The process layer of `logrx run`: a child in its own session and process
// group, signals read through a self-pipe (poll wakes up, nothing restarts),
// the whole group stopped with SIGTERM then SIGKILL, and a tiny HTTP probe.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace logrx::cli {

// Installs handlers (sigaction, no SA_RESTART) for SIGINT, SIGTERM, SIGHUP,
// SIGQUIT and SIGCHLD that write the signal number to a pipe. Idempotent.
bool install_signal_pipe();
int signal_pipe_fd();
// Reads what the pipe holds: the forwardable signals in order; *child_event
// is set when SIGCHLD arrived.
std::vector<int> drain_signal_pipe(bool* child_event);

// Makes sure descriptors 0, 1 and 2 are open (on /dev/null when closed), so
// no pipe or log logrx opens can take their numbers.
void ensure_standard_descriptors();

struct Child {
  pid_t pid = -1;  // also its process group and session id
  int out = -1;    // read ends of its stdout and stderr (O_CLOEXEC)
  int err = -1;
  std::string error;  // "" when it started
};

// Starts argv (PATH lookup) with `env` set on top of logrx's environment, in
// a new session; its stdout and stderr are pipes to logrx.
Child spawn_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);

// Sends `sig` to the child's process group (to the child alone while it has
// not made its group yet).
void signal_group(pid_t group, int sig);
// True while any process of the group is alive.
bool group_alive(pid_t group);

// Writes everything, retrying on EINTR; false on error.
bool write_all(int fd, const char* data, std::size_t size);

// Opens a file for writing with O_CLOEXEC (so no child inherits it).
int open_for_writing(const std::string& path, bool append, int mode = 0644);

// http://HOST:PORT/PATH with HOST an IPv4 address or "localhost": a plain
// GET; true on a 2xx status within `timeout_ms`.
struct HttpUrl {
  std::string host;
  int port = 80;
  std::string path = "/";
};
bool parse_http_url(const std::string& url, HttpUrl& out, std::string& error);
bool http_get_ok(const HttpUrl& url, int timeout_ms);

}  // namespace logrx::cli
