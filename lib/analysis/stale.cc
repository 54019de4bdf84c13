// SPDX-License-Identifier: MIT
// Does the log describe the process the operator thinks it does? Compares the
// latest run against the launch command and the launch time, and flags
// findings that come from earlier launches in the same file.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include "analysis/analyzer_impl.h"
#include "match/rulebook_impl.h"
#include "util/text.h"

namespace logrx {

std::optional<std::int64_t> parse_iso8601(std::string_view text) {
  using detail::parse_fixed_digits;
  if (text.size() < 16) return std::nullopt;
  int year = parse_fixed_digits(text, 0, 4);
  int month = parse_fixed_digits(text, 5, 2);
  int day = parse_fixed_digits(text, 8, 2);
  int hour = parse_fixed_digits(text, 11, 2);
  int minute = parse_fixed_digits(text, 14, 2);
  if (year < 0 || text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != ' ') ||
      text[13] != ':' || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 ||
      hour > 23 || minute < 0 || minute > 59)
    return std::nullopt;
  int second = 0;
  std::size_t pos = 16;
  if (pos < text.size() && text[pos] == ':') {
    second = parse_fixed_digits(text, pos + 1, 2);
    if (second < 0 || second > 60) return std::nullopt;
    pos += 3;
    if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
      ++pos;
      while (pos < text.size() && detail::is_digit(text[pos])) ++pos;
    }
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  if (pos == text.size()) {
    tm.tm_isdst = -1;
    std::time_t local = std::mktime(&tm);
    if (local == static_cast<std::time_t>(-1)) return std::nullopt;
    return static_cast<std::int64_t>(local);
  }
  std::int64_t offset = 0;
  std::string_view zone = text.substr(pos);
  if (zone == "Z" || zone == "z") {
    offset = 0;
  } else if ((zone[0] == '+' || zone[0] == '-') && (zone.size() == 6 || zone.size() == 5 || zone.size() == 3)) {
    int zh = parse_fixed_digits(zone, 1, 2);
    int zm = zone.size() == 3 ? 0 : parse_fixed_digits(zone, zone.size() == 6 ? 4 : 3, 2);
    if (zh < 0 || zm < 0 || (zone.size() == 6 && zone[3] != ':')) return std::nullopt;
    offset = (zh * 3600 + zm * 60) * (zone[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(timegm(&tm)) - offset;
}

namespace detail {
namespace {

struct CommandFlag {
  std::string name;   // normalised: no dashes, '-' -> '_'
  std::string shown;  // as written
  std::string value;  // "True" for a flag without value
};

std::vector<std::string> split_command(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < command.size()) {
        word += command[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::vector<CommandFlag> command_flags(std::string_view command) {
  std::vector<CommandFlag> flags;
  auto words = split_command(command);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "serve" && i + 1 < words.size() && words[i + 1].rfind("-", 0) != 0) {
      flags.push_back({"model", "vllm serve", words[i + 1]});  // vllm serve MODEL
      continue;
    }
    if (w.size() < 3 || w.compare(0, 2, "--") != 0) continue;
    CommandFlag flag;
    std::string body = w.substr(2);
    if (auto eq = body.find('='); eq != std::string::npos) {
      flag.value = body.substr(eq + 1);
      body = body.substr(0, eq);
    } else if (i + 1 < words.size() && (words[i + 1].rfind("-", 0) != 0 ||
                                        parse_quantity(words[i + 1]).has_value())) {
      flag.value = words[++i];
    } else {
      flag.value = "True";
    }
    flag.shown = "--" + body;
    for (char& c : body)
      if (c == '-') c = '_';
    flag.name = body;
    flags.push_back(std::move(flag));
  }
  return flags;
}

// Config keys a command-line flag is recorded under, in the order to try.
std::vector<std::string> fact_names_for(const std::string& flag) {
  static const std::map<std::string, std::vector<std::string>> kAliases{
      {"tp", {"tp_size", "tensor_parallel_size"}},
      {"tp_size", {"tp_size", "tensor_parallel_size"}},
      {"tensor_parallel_size", {"tensor_parallel_size", "tp_size"}},
      {"dp", {"dp_size", "data_parallel_size"}},
      {"dp_size", {"dp_size", "data_parallel_size"}},
      {"pp", {"pp_size", "pipeline_parallel_size"}},
      {"pp_size", {"pp_size", "pipeline_parallel_size"}},
      {"model", {"model", "model_path", "model_tag"}},
      {"model_path", {"model_path", "model"}},
      {"max_model_len", {"max_model_len", "max_seq_len"}},
      {"context_length", {"context_length", "context_len"}},
  };
  if (auto it = kAliases.find(flag); it != kAliases.end()) return it->second;
  return {flag};
}

bool same_value(const std::string& command_value, const Fact& fact) {
  if (fact.number) {
    auto n = parse_quantity(command_value);
    return n && std::abs(*n - *fact.number) < 1e-9 * std::max(1.0, std::abs(*n));
  }
  if (command_value == "True" || command_value == "False") return fact.text == command_value;
  if (fact.text == "True" || fact.text == "False") {
    std::string lower = command_value;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return (lower == "true" || lower == "1") == (fact.text == "True");
  }
  return fact.text == command_value;
}

void mark_run_stale(Report& report, int run) {
  for (Finding& f : report.findings)
    if (f.run == run && f.category != Category::StaleOutput) f.stale = true;
}

std::string format_local(std::int64_t when) {
  std::time_t t = static_cast<std::time_t>(when);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S", &tm);
  return buffer;
}

}  // namespace

void check_stale_output(const Rulebook& book, const AnalyzerOptions& options, Report& report) {
  const Rulebook::Impl& rules = RulebookAccess::impl(book);
  if (report.runs.empty()) return;
  const RunInfo& latest = report.runs.back();
  std::vector<Finding> added;

  std::size_t earlier = 0;
  for (const Finding& f : report.findings) earlier += f.stale ? 1 : 0;
  if (const RuleSpec* rule = rules.engine_rule("logrx.stale.earlier-runs");
      rule != nullptr && earlier > 0) {
    added.push_back(engine_finding(
        *rule, options.stream_name, latest.first_line, latest.run,
        "This log holds " + std::to_string(report.runs.size()) + " launches; " +
            std::to_string(earlier) + (earlier == 1 ? " finding comes" : " findings come") +
            " from earlier ones and " + (earlier == 1 ? "is" : "are") +
            " marked stale. The latest launch starts at line " +
            std::to_string(latest.first_line) + "."));
  }

  if (!options.launch_command.empty()) {
    if (const RuleSpec* rule = rules.engine_rule("logrx.stale.command-mismatch")) {
      std::vector<std::string> contradictions;
      std::uint64_t at_line = 0;
      for (const CommandFlag& flag : command_flags(options.launch_command)) {
        for (const std::string& name : fact_names_for(flag.name)) {
          auto it = latest.facts.find(name);
          if (it == latest.facts.end()) continue;
          if (!same_value(flag.value, it->second)) {
            contradictions.push_back("the log has " + name + "=" + it->second.text + " (line " +
                                     std::to_string(it->second.line) + "), the command says " +
                                     flag.shown + (flag.value == "True" ? "" : " " + flag.value));
            if (at_line == 0 || it->second.line < at_line) at_line = it->second.line;
          }
          break;
        }
      }
      if (!contradictions.empty()) {
        std::string message = "The log contradicts the launch command: ";
        for (std::size_t i = 0; i < contradictions.size(); ++i)
          message += (i > 0 ? "; " : "") + contradictions[i];
        message += ".";
        added.push_back(engine_finding(*rule, options.stream_name, at_line, latest.run, message));
        mark_run_stale(report, latest.run);
      }
    }
  }

  if (!options.since.empty()) {
    auto since = parse_iso8601(options.since);
    const RuleSpec* rule = rules.engine_rule("logrx.stale.predates-launch");
    if (since && rule != nullptr) {
      std::vector<std::string> reasons;
      if (!latest.last_timestamp.empty()) {
        // Log timestamps are local wall-clock time; vLLM's carry no year.
        std::time_t t = static_cast<std::time_t>(*since);
        std::tm local{};
        localtime_r(&t, &local);
        LineEvent probe;
        parse_line("[" + latest.last_timestamp + "] x", 0, probe);
        if (!probe.has_timestamp) parse_line("INFO " + latest.last_timestamp + " [a:1] x", 0, probe);
        if (probe.has_timestamp) {
          Timestamp launch{local.tm_year + 1900, local.tm_mon + 1, local.tm_mday,
                           local.tm_hour,        local.tm_min,     local.tm_sec, 0};
          std::int64_t last = timestamp_seconds(probe.timestamp, launch.year);
          if (last < timestamp_seconds(launch, launch.year))
            reasons.push_back("its last line is timestamped " + latest.last_timestamp +
                              ", before the launch at " + format_local(*since));
        }
      }
      if (options.file_mtime && *options.file_mtime < *since)
        reasons.push_back("the file was last modified at " + format_local(*options.file_mtime) +
                          ", before the launch at " + format_local(*since));
      if (!reasons.empty()) {
        std::string message = "The log predates the launch: ";
        for (std::size_t i = 0; i < reasons.size(); ++i) message += (i > 0 ? "; " : "") + reasons[i];
        message += ".";
        added.push_back(
            engine_finding(*rule, options.stream_name, latest.last_line, latest.run, message));
        mark_run_stale(report, latest.run);
      }
    }
  }

  for (Finding& f : added) {
    // The launch command may carry --api-key and the like.
    if (options.redact) redact_finding(f);
    Summary& s = report.summary;
    ++s.findings;
    if (!s.worst_severity || f.severity > *s.worst_severity) s.worst_severity = f.severity;
    ++s.by_category[std::string(to_string(f.category))];
    ++s.by_severity[std::string(to_string(f.severity))];
    report.findings.push_back(std::move(f));
  }
}

}  // namespace detail
}  // namespace logrx
