// SPDX-License-Identifier: MIT
#include "outputs.h"

#include <cctype>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "logrx/analyzer.h"

namespace logrx::cli {

std::vector<OutputSpec> resolve_outputs(const CLI::App& command,
                                        const std::vector<std::string>& formats,
                                        const std::vector<std::string>& paths,
                                        const std::string& default_format) {
  std::vector<OutputSpec> outputs;
  for (const std::string& format : formats) outputs.push_back({format, ""});
  std::size_t next_format = 0;
  std::size_t next_path = 0;
  std::optional<std::size_t> current;
  std::vector<std::string> early;  // -o before any --format
  for (const CLI::Option* option : command.parse_order()) {
    if (option->check_lname("format")) {
      current = next_format++;
    } else if (option->check_sname("o")) {
      if (next_path >= paths.size()) continue;
      const std::string& path = paths[next_path++];
      if (!current) {
        early.push_back(path);
        continue;
      }
      if (!outputs[*current].path.empty())
        throw CLI::ValidationError("-o", "two files for --format " + outputs[*current].format +
                                             "; give each -o after its own --format");
      outputs[*current].path = path;
    }
  }
  if (outputs.empty()) outputs.push_back({default_format, ""});
  for (const std::string& path : early) {
    if (!outputs[0].path.empty())
      throw CLI::ValidationError("-o", "two files for --format " + outputs[0].format +
                                           "; give each -o after its own --format");
    outputs[0].path = path;
  }
  std::size_t to_stdout = 0;
  for (const OutputSpec& output : outputs) to_stdout += output.path.empty() ? 1 : 0;
  if (to_stdout > 1)
    throw CLI::ValidationError("--format",
                               "only one format can go to standard output; give the others "
                               "-o FILE after their --format");
  return outputs;
}

bool Baseline::contains(const Finding& finding) const {
  return known.count({finding.rule_id, finding.message}) != 0;
}

std::optional<Baseline> load_baseline(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read it";
    return std::nullopt;
  }
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("findings") ||
      !doc["findings"].is_array()) {
    error = "not a 'logrx scan --format json' report";
    return std::nullopt;
  }
  Baseline baseline;
  for (const auto& finding : doc["findings"]) {
    if (!finding.is_object() || !finding.contains("rule") || !finding["rule"].is_string()) continue;
    std::string message;
    if (finding.contains("message") && finding["message"].is_string())
      message = finding["message"].get<std::string>();
    baseline.known.insert({finding["rule"].get<std::string>(), message});
  }
  return baseline;
}

void forget_finding(Summary& summary, const Finding& finding) {
  if (summary.findings > 0) --summary.findings;
  auto lower = [](std::map<std::string, std::size_t>& counts, const std::string& key) {
    auto it = counts.find(key);
    if (it == counts.end()) return;
    if (--it->second == 0) counts.erase(it);
  };
  lower(summary.by_category, std::string(to_string(finding.category)));
  lower(summary.by_severity, std::string(to_string(finding.severity)));
  summary.worst_severity.reset();
  for (const auto& [name, count] : summary.by_severity) {
    auto severity = parse_severity(name);
    if (severity && (!summary.worst_severity || *severity > *summary.worst_severity))
      summary.worst_severity = severity;
  }
}

std::optional<std::string> normalize_since(const std::string& value) {
  if (parse_iso8601(value)) return value;
  auto digits = [&](std::size_t from, std::size_t count) {
    if (from + count > value.size()) return false;
    for (std::size_t i = from; i < from + count; ++i)
      if (!std::isdigit(static_cast<unsigned char>(value[i]))) return false;
    return true;
  };
  if (value.size() == 10 && digits(0, 4) && value[4] == '-' && digits(5, 2) && value[7] == '-' &&
      digits(8, 2)) {
    std::string midnight = value + "T00:00:00";
    if (parse_iso8601(midnight)) return midnight;
    return std::nullopt;
  }
  if (value.size() >= 2 && value.size() <= 8 && digits(0, value.size() - 1)) {
    long long seconds_per = 0;
    switch (value.back()) {
      case 's': seconds_per = 1; break;
      case 'm': seconds_per = 60; break;
      case 'h': seconds_per = 3600; break;
      case 'd': seconds_per = 86400; break;
      case 'w': seconds_per = 7 * 86400; break;
      default: return std::nullopt;
    }
    long long age = std::stoll(value.substr(0, value.size() - 1)) * seconds_per;
    std::time_t at = std::time(nullptr) - static_cast<std::time_t>(age);
    std::tm utc{};
    if (gmtime_r(&at, &utc) == nullptr) return std::nullopt;
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(text);
  }
  return std::nullopt;
}

}  // namespace logrx::cli
