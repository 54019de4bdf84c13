// SPDX-License-Identifier: MIT
#include "metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <thread>

#include "logrx/budget.h"

#ifdef LOGRX_HAVE_HTTPLIB
#include <httplib.h>
#include <sys/socket.h>
#endif

namespace logrx::cli {

void add_metrics_options(CLI::App& command, MetricsOptions& options) {
  command
      .add_option("--metrics-listen", options.listen,
                  "Serve Prometheus metrics at http://HOST:PORT/metrics (port 0: any free port)")
      ->type_name("HOST:PORT");
  command
      .add_option("--metrics-file", options.file,
                  "Keep Prometheus metrics in PATH (node_exporter textfile collector), replaced "
                  "atomically")
      ->type_name("PATH");
  command
      .add_option("--metrics-label", options.labels,
                  "Add NAME=VALUE to every metric (repeatable), e.g. pod=$POD_NAME")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
}

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

#ifdef LOGRX_HAVE_HTTPLIB
bool metrics_http_available() { return true; }

struct MetricsExporter::Server {
  httplib::Server http;
  std::thread thread;
};
#else
bool metrics_http_available() { return false; }

struct MetricsExporter::Server {};
#endif

MetricsExporter::MetricsExporter(MetricsOptions options) : options_(std::move(options)) {}

MetricsExporter::~MetricsExporter() {
#ifdef LOGRX_HAVE_HTTPLIB
  if (server_) {
    server_->http.stop();
    if (server_->thread.joinable()) server_->thread.join();
  }
#endif
  if (!options_.file.empty()) write_file();
}

bool MetricsExporter::start() {
  std::vector<std::pair<std::string, std::string>> constant;
  for (const std::string& label : options_.labels) {
    auto equals = label.find('=');
    std::string name = label.substr(0, equals);
    static const char* const kTaken[] = {"rule", "category", "severity", "server",
                                         "phase", "part", "version"};
    bool taken = false;
    for (const char* t : kTaken) taken = taken || name == t;
    for (const auto& kept : constant) taken = taken || kept.first == name;
    if (equals == std::string::npos || !valid_prometheus_label_name(name) || taken) {
      std::cerr << "logrx: --metrics-label " << label
                << ": expected NAME=VALUE with a new label name ([a-zA-Z_][a-zA-Z0-9_]*, not "
                   "rule, category, severity, server, phase, part or version)\n";
      return false;
    }
    constant.emplace_back(name, label.substr(equals + 1));
  }
  registry_.set_constant_labels(std::move(constant));
  if (!options_.listen.empty()) {
#ifndef LOGRX_HAVE_HTTPLIB
    std::cerr << "logrx: --metrics-listen is not available: this logrx was built without "
                 "cpp-httplib (install libcpp-httplib-dev and rebuild); --metrics-file works "
                 "without it\n";
    return false;
#else
    // HOST:PORT, with [v6]:PORT for IPv6 addresses.
    std::string host;
    std::string port_text;
    const std::string& listen = options_.listen;
    auto colon = listen.rfind(':');
    if (colon != std::string::npos) {
      host = listen.substr(0, colon);
      port_text = listen.substr(colon + 1);
      if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    }
    int port = -1;
    if (!port_text.empty() && port_text.size() <= 5 &&
        port_text.find_first_not_of("0123456789") == std::string::npos)
      port = std::stoi(port_text);
    if (host.empty() || port < 0 || port > 65535) {
      std::cerr << "logrx: --metrics-listen " << listen
                << ": expected HOST:PORT, such as 127.0.0.1:9464 or [::1]:9464\n";
      return false;
    }
    server_ = std::make_unique<Server>();
    httplib::Server& http = server_->http;
    // Scrapes are rare and small: two workers are plenty.
    http.new_task_queue = [] { return new httplib::ThreadPool(2); };
    http.set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      // A server started by `logrx run` must not inherit the listener.
      ::fcntl(sock, F_SETFD, FD_CLOEXEC);
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
      response.set_content(registry_.render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    http.Get("/", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("logrx: metrics are at /metrics\n", "text/plain; charset=utf-8");
    });
    errno = 0;
    int bound = port;
    bool ok = port == 0 ? (bound = http.bind_to_any_port(host)) > 0 : http.bind_to_port(host, port);
    if (!ok) {
      std::cerr << "logrx: --metrics-listen " << listen << ": cannot listen there"
                << (errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string())
                << "\n";
      server_.reset();
      return false;
    }
    server_->thread = std::thread([this] { server_->http.listen_after_bind(); });
    // stop() before the accept loop runs would be lost and the join would
    // hang: wait (boundedly) until it runs.
    for (int i = 0; i < 5000 && !http.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    std::cerr << "logrx: serving metrics on http://" << shown << ":" << bound << "/metrics\n";
#endif
  }
  if (!options_.file.empty()) {
    write_file();
    if (file_error_reported_) return false;
  }
  return true;
}

void MetricsExporter::count_finding(const Finding& finding) {
  if (enabled()) registry_.count_finding(finding, unix_now());
}

void MetricsExporter::begin_stream() { stream_lines_ = 0; }

void MetricsExporter::update(const Analyzer& analyzer, bool now) {
  if (!enabled()) return;
  std::uint64_t lines = analyzer.lines();
  if (lines > stream_lines_) {
    registry_.add_lines(lines - stream_lines_, unix_now());
    stream_lines_ = lines;
  }
  auto clock = std::chrono::steady_clock::now();
  if (now || clock - last_state_ >= std::chrono::milliseconds(100)) {
    // The budget copies the launch's facts: not on every read of a busy server.
    registry_.set_state(analyzer.server(), analyzer.phase(), analyzer.ready());
    registry_.set_budget(compute_budget(analyzer.current_run()));
    last_state_ = clock;
  }
  // A busy server changes the lines counter on every read: the file is
  // rewritten at most once a second (and a last time at exit).
  if (!options_.file.empty() && registry_.version() != written_version_ &&
      (now || clock - last_write_ >= std::chrono::seconds(1)))
    write_file();
}

void MetricsExporter::write_file() {
  std::uint64_t version = registry_.version();
  std::string text = registry_.render();
  // Written beside the target and renamed over it, so the collector never
  // reads half a file; the temporary name does not end in .prom, so the
  // collector never picks it up.
  std::string temporary = options_.file + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  const char* data = text.data();
  std::size_t left = text.size();
  while (ok && left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  int saved = errno;
  if (fd >= 0 && ::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && ::rename(temporary.c_str(), options_.file.c_str()) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    if (fd >= 0) ::unlink(temporary.c_str());
    if (!file_error_reported_)
      std::cerr << "logrx: --metrics-file " << options_.file << ": " << std::strerror(saved)
                << "\n";
    file_error_reported_ = true;
    return;
  }
  file_error_reported_ = false;
  written_version_ = version;
  last_write_ = std::chrono::steady_clock::now();
}

}  // namespace logrx::cli
