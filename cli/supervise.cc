// SPDX-License-Identifier: MIT
#include "supervise.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace logrx::cli {
namespace {

int g_pipe[2] = {-1, -1};

extern "C" void on_signal(int sig) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(sig);
  // Full pipe: the signal is dropped, but one of its kind is already waiting.
  [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

bool install_signal_pipe() {
  if (g_pipe[0] >= 0) return true;
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_NOCLDSTOP;  // no SA_RESTART: blocking calls return EINTR
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::sigaction(sig, &action, nullptr);
  return true;
}

int signal_pipe_fd() { return g_pipe[0]; }

std::vector<int> drain_signal_pipe(bool* child_event) {
  std::vector<int> out;
  unsigned char buffer[64];
  for (;;) {
    ssize_t n = ::read(g_pipe[0], buffer, sizeof buffer);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] == SIGCHLD) {
        if (child_event) *child_event = true;
      } else {
        out.push_back(buffer[i]);
      }
    }
  }
  return out;
}

void ensure_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    int opened = ::open("/dev/null", O_RDWR);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

int open_for_writing(const std::string& path, bool append, int mode) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC),
                static_cast<mode_t>(mode));
}

Child spawn_child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  Child child;
  // Everything the child needs is built before fork: after it only
  // async-signal-safe calls run.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (env.count(name) == 0) env_strings.push_back(std::move(entry));
  }
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  std::string exec_error = "logrx: cannot run " + argv[0] + ": ";

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    child.error = std::string("cannot create pipes: ") + std::strerror(errno);
    return child;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    child.error = std::string("cannot create pipes: ") + std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return child;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    struct sigaction plain {};
    plain.sa_handler = SIG_DFL;
    sigemptyset(&plain.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGPIPE}) ::sigaction(sig, &plain, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvpe(argp[0], argp.data(), envp.data());
    const char* reason = std::strerror(errno);
    write_all(STDERR_FILENO, exec_error.data(), exec_error.size());
    write_all(STDERR_FILENO, reason, std::strlen(reason));
    write_all(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (pid < 0) {
    child.error = std::string("cannot fork: ") + std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return child;
  }
  child.pid = pid;
  child.out = out_pipe[0];
  child.err = err_pipe[0];
  return child;
}

void signal_group(pid_t group, int sig) {
  if (group <= 0) return;
  if (::kill(-group, sig) != 0 && errno == ESRCH) ::kill(group, sig);
}

bool group_alive(pid_t group) { return group > 0 && ::kill(-group, 0) == 0; }

bool parse_http_url(const std::string& url, HttpUrl& out, std::string& error) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    error = "only http://HOST:PORT/PATH is supported";
    return false;
  }
  std::string rest = url.substr(scheme.size());
  std::size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  out.path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::size_t colon = authority.rfind(':');
  out.host = authority.substr(0, colon);
  if (colon != std::string::npos) {
    std::string port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) {
      error = "bad port in " + url;
      return false;
    }
    out.port = std::stoi(port);
    if (out.port < 1 || out.port > 65535) {
      error = "bad port in " + url;
      return false;
    }
  }
  if (out.host == "localhost") out.host = "127.0.0.1";
  in_addr address{};
  if (::inet_pton(AF_INET, out.host.c_str(), &address) != 1) {
    error = "the host must be an IPv4 address or localhost (no name lookups): " + url;
    return false;
  }
  for (char c : out.path) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      error = "the path has spaces or control characters: " + url;
      return false;
    }
  }
  return true;
}

bool http_get_ok(const HttpUrl& url, int timeout_ms) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto wait_for = [&](short events) {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd, events, 0};
      int r = ::poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      return r > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
    }
  };
  bool ok = false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(url.port));
  ::inet_pton(AF_INET, url.host.c_str(), &address.sin_addr);
  int r = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  if (r == 0 || errno == EINPROGRESS) {
    int so_error = 0;
    socklen_t length = sizeof so_error;
    if (r == 0 || (wait_for(POLLOUT) && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &length) == 0 && so_error == 0)) {
      std::string request = "GET " + url.path + " HTTP/1.0\r\nHost: " + url.host + ":" + std::to_string(url.port) +
                            "\r\nConnection: close\r\n\r\n";
      std::size_t sent = 0;
      while (sent < request.size() && wait_for(POLLOUT)) {
        ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
      std::string reply;
      while (sent == request.size() && reply.find("\r\n") == std::string::npos && reply.size() < 256 && wait_for(POLLIN)) {
        char buffer[256];
        ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        reply.append(buffer, static_cast<std::size_t>(n));
      }
      // "HTTP/1.x 2xx"
      ok = reply.size() >= 12 && reply.rfind("HTTP/", 0) == 0 && reply[8] == ' ' && reply[9] == '2';
    }
  }
  ::close(fd);
  return ok;
}

}  // namespace logrx::cli
