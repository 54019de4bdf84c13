// SPDX-License-Identifier: MIT
#include "logrx/metrics.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "logrx/rulebook.h"
#include "logrx/types.h"
#include "logrx/version.h"

namespace logrx {
namespace {

// The budget speaks in GiB per GPU (what the servers print as "GB" is
// torch's bytes / 2^30).
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::array<char, 64> buffer{};
  auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (error != std::errc()) return "NaN";
  return std::string(buffer.data(), end);
}

// "KV cache" -> "kv_cache": label values a PromQL matcher can name plainly.
std::string part_label(const std::string& name) {
  std::string out;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "unnamed" : out;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

using Labels = std::vector<std::pair<std::string, std::string>>;

void sample(std::string& out, const Labels& constant, const char* name,
            const std::vector<std::pair<const char*, std::string>>& labels, double value) {
  out += name;
  if (!labels.empty() || !constant.empty()) {
    out += '{';
    bool first = true;
    auto add = [&](const char* label, const std::string& text) {
      if (!first) out += ',';
      first = false;
      out += label;
      out += "=\"";
      out += escape_prometheus_label(text);
      out += '"';
    };
    for (const auto& [label, text] : labels) add(label, text);
    for (const auto& [label, text] : constant) add(label.c_str(), text);
    out += '}';
  }
  out += ' ';
  out += number(value);
  out += '\n';
}

}  // namespace

struct MetricsRegistry::Impl {
  mutable std::mutex mutex;
  std::uint64_t version = 0;
  // rule, category, severity, server
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::uint64_t> findings;
  std::uint64_t unlabelled_findings = 0;
  std::uint64_t lines = 0;
  double last_finding = 0;
  double last_line = 0;
  std::string server;
  std::string phase;
  bool ready = false;
  bool have_state = false;
  std::vector<std::pair<std::string, double>> budget;  // part label, bytes
  Labels constant;
};

MetricsRegistry::MetricsRegistry() : impl_(std::make_unique<Impl>()) {}
MetricsRegistry::~MetricsRegistry() = default;

void MetricsRegistry::count_finding(const Finding& finding, double unix_seconds) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto key = std::make_tuple(finding.rule_id, std::string(to_string(finding.category)),
                             std::string(to_string(finding.severity)),
                             finding.server.empty() ? std::string("unknown") : finding.server);
  auto it = impl_->findings.find(key);
  if (it != impl_->findings.end()) {
    ++it->second;
  } else if (impl_->findings.size() < kMaxFindingSeries) {
    impl_->findings.emplace(std::move(key), 1);
  } else {
    ++impl_->unlabelled_findings;
  }
  impl_->last_finding = unix_seconds;
  ++impl_->version;
}

void MetricsRegistry::add_lines(std::uint64_t lines, double unix_seconds) {
  if (lines == 0) return;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->lines += lines;
  impl_->last_line = unix_seconds;
  ++impl_->version;
}

void MetricsRegistry::set_state(const std::string& server, const std::string& phase, bool ready) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->have_state && impl_->server == server && impl_->phase == phase &&
      impl_->ready == ready)
    return;
  impl_->server = server.empty() ? "unknown" : server;
  impl_->phase = phase;
  impl_->ready = ready;
  impl_->have_state = true;
  ++impl_->version;
}

void MetricsRegistry::set_budget(const MemoryBudget& budget) {
  std::vector<std::pair<std::string, double>> parts;
  auto bytes = [](double gib) { return std::round(gib * kBytesPerGiB); };
  if (budget.total_gb) parts.emplace_back("total", bytes(*budget.total_gb));
  for (const BudgetPart& part : budget.parts)
    if (part.gb) parts.emplace_back(part_label(part.name), bytes(*part.gb));
  if (budget.free_gb) parts.emplace_back("free", bytes(*budget.free_gb));
  // Two parts with one label would be a duplicate series, which scrapers reject.
  std::vector<std::pair<std::string, double>> unique;
  for (auto& part : parts) {
    bool seen = false;
    for (const auto& kept : unique) seen = seen || kept.first == part.first;
    if (!seen) unique.push_back(std::move(part));
  }
  parts = std::move(unique);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (parts == impl_->budget) return;
  impl_->budget = std::move(parts);
  ++impl_->version;
}

void MetricsRegistry::set_constant_labels(std::vector<std::pair<std::string, std::string>> labels) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->constant = std::move(labels);
  ++impl_->version;
}

std::uint64_t MetricsRegistry::version() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->version;
}

std::string MetricsRegistry::render() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const Impl& m = *impl_;
  std::string out;
  header(out, "logrx_build_info", "gauge", "The logrx version that exports these metrics (always 1).");
  sample(out, m.constant, "logrx_build_info", {{"version", LOGRX_VERSION}}, 1);

  header(out, "logrx_findings_total", "counter",
         "Findings reported, by rule, category, severity and server.");
  for (const auto& [key, count] : m.findings) {
    const auto& [rule, category, severity, server] = key;
    sample(out, m.constant, "logrx_findings_total",
           {{"rule", rule}, {"category", category}, {"severity", severity}, {"server", server}},
           static_cast<double>(count));
  }
  header(out, "logrx_findings_unlabelled_total", "counter",
         "Findings not broken down by labels because too many label sets were seen.");
  sample(out, m.constant, "logrx_findings_unlabelled_total", {}, static_cast<double>(m.unlabelled_findings));

  header(out, "logrx_lines_total", "counter", "Log lines read.");
  sample(out, m.constant, "logrx_lines_total", {}, static_cast<double>(m.lines));

  // Absent until known: a 0 would read as "1970" to time() - x alerts.
  header(out, "logrx_last_finding_timestamp_seconds", "gauge",
         "Unix time at which logrx reported its last finding.");
  if (m.last_finding > 0) sample(out, m.constant, "logrx_last_finding_timestamp_seconds", {}, m.last_finding);
  header(out, "logrx_last_line_timestamp_seconds", "gauge",
         "Unix time at which logrx last read a new log line.");
  if (m.last_line > 0) sample(out, m.constant, "logrx_last_line_timestamp_seconds", {}, m.last_line);

  header(out, "logrx_server_ready", "gauge",
         "1 when the current launch of the server reached ready, else 0.");
  if (m.have_state) sample(out, m.constant, "logrx_server_ready", {{"server", m.server}}, m.ready ? 1 : 0);
  header(out, "logrx_server_phase", "gauge",
         "The current launch's phase: 1 for the phase it is in, 0 for the others.");
  if (m.have_state)
    for (const char* phase : kPhases)
      sample(out, m.constant, "logrx_server_phase", {{"phase", phase}}, m.phase == phase ? 1 : 0);

  header(out, "logrx_gpu_memory_bytes", "gauge",
         "GPU memory per rank in the current launch's budget, by part (total, weights, kv_cache, "
         "..., free headroom).");
  for (const auto& [part, bytes] : m.budget)
    sample(out, m.constant, "logrx_gpu_memory_bytes", {{"part", part}}, bytes);
  return out;
}

std::string escape_prometheus_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace logrx

namespace logrx {

bool valid_prometheus_label_name(std::string_view name) {
  if (name.empty() || name.rfind("__", 0) == 0) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    bool ok = std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c));
    if (!ok || c > 0x7f) return false;
  }
  return true;
}

}  // namespace logrx
