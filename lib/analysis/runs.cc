// SPDX-License-Identifier: MIT
// Runs: launches inside one stream, their timestamps and server, the facts
// recorded for them, and wrappers linked to their causes when a run ends.
#include "analysis/analyzer_state.h"

namespace logrx {

using namespace detail;

void Analyzer::Impl::start_run(int number) {
  run = Run{};
  std::fill(retired.begin(), retired.end(), 0);
  if (auto known = parse_dialect(options.server)) run.server = *known;
  run.number = number;
  run.first_finding = report.findings.size();
  merged.clear();
}

void Analyzer::Impl::close_run() {
  run.ended_in_traceback = open_event.open && open_event.traceback && open_event.in_frames &&
                           !open_event.after_exception &&
                           !open_event.in_destructor && !open_event.logged_below_error &&
                           open_event.raised_type.empty() && open_event.end == run.last_line;
  close_event();
  for (int index : rules.run_end_rules) {
    auto rule_index = static_cast<std::size_t>(index);
    if (!condition_holds(rules.compiled[rule_index].when, nullptr)) continue;
    Finding f = make_finding(rule_index, nullptr, run.last_line);
    f.message = detail::expand_display(rules.rules[rule_index].title, lookup_for(nullptr));
    add_finding(std::move(f));
  }
  demote_explained_findings();
  refine_serverless_findings();
  link_wrappers();
  report.runs.push_back(run_info());
  // An endless stream of restarts must not grow without bound.
  if (report.runs.size() > std::max<std::size_t>(options.max_runs, 1)) {
    report.runs.erase(report.runs.begin());
    ++report.summary.capped.runs;
  }
}

// Rules whose findings later evidence in the run explains away (demote_when):
// checked once the run's facts are complete.
void Analyzer::Impl::demote_explained_findings() {
  if (!rules.any_demote_when) return;
  for (Finding& f : report.findings) {
    if (f.run != run.number || f.severity == Severity::Info) continue;
    auto it = std::lower_bound(rules.rules.begin(), rules.rules.end(), f.rule_id,
                               [](const RuleSpec& rule, const std::string& id) { return rule.id < id; });
    if (it == rules.rules.end() || it->id != f.rule_id) continue;
    const auto& demote = rules.compiled[static_cast<std::size_t>(it - rules.rules.begin())].demote_when;
    if (!demote || !condition_holds(demote, nullptr)) continue;
    // The summary counted the finding as it was reported first.
    Summary& s = report.summary;
    auto uncount = [](std::map<std::string, std::size_t>& counts, const std::string& key) {
      auto at = counts.find(key);
      if (at == counts.end()) return;
      if (at->second <= 1) {
        counts.erase(at);
      } else {
        --at->second;
      }
    };
    uncount(s.by_severity, std::string(to_string(f.severity)));
    uncount(s.by_category, std::string(to_string(f.category)));
    f.severity = Severity::Info;
    f.category = Category::Info;
    ++s.by_severity[std::string(to_string(f.severity))];
    ++s.by_category[std::string(to_string(f.category))];
    s.worst_severity.reset();
    for (Severity level : {Severity::Info, Severity::Warning, Severity::Error, Severity::Fatal})
      if (s.by_severity.count(std::string(to_string(level))) > 0) s.worst_severity = level;
    f.explanation += " Later lines of this run explain it away (its rule's demote_when holds), so it is only noted.";
  }
}

RunInfo Analyzer::Impl::run_info() const {
  RunInfo info;
  info.run = run.number;
  info.file = options.stream_name;
  info.first_line = run.first_line;
  info.last_line = run.last_line;
  info.server = std::string(to_string(run.server));
  info.phase = kPhases[run.phase];
  info.reached_ready = run.reached_ready;
  info.first_timestamp = run.has_timestamp ? run.first_timestamp_text : run.first_envelope_timestamp;
  info.last_timestamp = run.has_timestamp ? run.last_timestamp_text : run.last_envelope_timestamp;
  if (!info.first_timestamp.empty())
    info.first_timestamp_iso = iso_time(run.has_timestamp ? run.first_timestamp : run.first_envelope_time);
  if (!info.last_timestamp.empty())
    info.last_timestamp_iso = iso_time(run.has_timestamp ? run.last_timestamp : run.last_envelope_time);
  for (const auto& [name, value] : run.facts) {
    Fact fact;
    fact.text = value.to_string();
    if (value.kind == Value::Kind::Number) fact.number = value.number;
    auto line = run.fact_lines.find(name);
    fact.line = line == run.fact_lines.end() ? 0 : line->second;
    if (auto unit = run.fact_units.find(name); unit != run.fact_units.end()) fact.unit = unit->second;
    info.facts.emplace(name, std::move(fact));
  }
  return info;
}

// A wrapper ("Scheduler hit an exception", "Engine core initialization
// failed") points to the cause: the nearest non-wrapper error of the run,
// inside its own event first. It never outranks that cause.
void Analyzer::Impl::link_wrappers() {
  auto& all = report.findings;
  for (std::size_t i = run.first_finding; i < all.size(); ++i) {
    Finding& wrapper = all[i];
    if (!wrapper.wrapper) continue;
    const Finding* best = nullptr;
    std::uint64_t best_distance = UINT64_MAX;
    for (std::size_t j = run.first_finding; j < all.size(); ++j) {
      const Finding& cause = all[j];
      // A warning explains a wrapper only on its own line ("error in
      // forward(): Input length ... must be less than ...").
      if (cause.wrapper) continue;
      if (cause.severity < Severity::Error &&
          !(cause.line == wrapper.line && cause.severity >= Severity::Warning))
        continue;
      // Only what the log itself said can be a cause, not a conclusion
      // drawn about the whole run.
      const RuleSpec* spec = rulebook.find(cause.rule_id);
      if (spec == nullptr || spec->trigger != Trigger::Line) continue;
      bool same_event = wrapper.event_start != 0 && cause.event_start == wrapper.event_start;
      std::uint64_t distance = cause.line > wrapper.line ? cause.line - wrapper.line
                                                         : (wrapper.line - cause.line) * 2;
      if (same_event) distance = 0;
      if (distance < best_distance) {
        best = &cause;
        best_distance = distance;
      }
    }
    if (best != nullptr) {
      wrapper.root_cause = RootCause{best->rule_id, best->line};
      wrapper.severity = std::min(wrapper.severity, best->severity);
    } else {
      wrapper.explanation +=
          " The root cause is not in this log: the failing process's own output went "
          "elsewhere, or it was killed without writing one (exit code -9 is usually the "
          "host's OOM killer; check `dmesg -T | grep -i oom`).";
    }
  }
}

bool Analyzer::Impl::timestamp_went_backwards() {
  if (!event.has_timestamp || event.timestamp_from_envelope || !run.has_timestamp) return false;
  return jumped_back(event.timestamp, run.last_timestamp, run.last_seconds);
}

std::int64_t detail::DayClock::seconds_in(const Timestamp& ts, int year) {
  int y = ts.year != 0 ? ts.year : year;
  if (y != year_ || ts.month != month_ || ts.day != day_) {
    year_ = y;
    month_ = ts.month;
    day_ = ts.day;
    midnight_ = detail::timestamp_seconds(Timestamp{y, ts.month, ts.day, 0, 0, 0, 0}, y);
  }
  return midnight_ + ts.hour * 3600 + ts.minute * 60 + ts.second;
}

bool detail::DayClock::jumped_back(const Timestamp& now_ts, const Timestamp& last_ts,
                                   std::int64_t last_seconds) {
  int year = last_ts.year != 0 ? last_ts.year : 2000;
  std::int64_t now = seconds_in(now_ts, year);
  // vLLM prints no year: December followed by January is the year turning.
  if (now_ts.year == 0 && last_ts.month == 12 && now_ts.month == 1) return false;
  return last_seconds - now > kBackwardsJumpSeconds;
}

std::string Analyzer::Impl::iso_time(const Timestamp& ts) const {
  if (ts.month < 1 || ts.month > 12 || ts.day < 1 || ts.day > 31) return {};
  int year = ts.year;
  if (year == 0 && options.year) year = *options.year;
  if (year == 0 && dated.year != 0) {
    // A yearless line next to dated ones shares their year, unless the
    // months say the year turned between them (December, then January).
    year = dated.year;
    if (ts.month - dated.month > 6) --year;
    if (dated.month - ts.month > 6) ++year;
  }
  if (year == 0) {
    // No line says the year: the log was written before it was last modified
    // (or before now), so a date after that one is from the year before.
    auto reference = static_cast<std::time_t>(options.file_mtime.value_or(created_at));
    std::tm local{};
    if (localtime_r(&reference, &local) == nullptr) return {};
    year = local.tm_year + 1900;
    int month = local.tm_mon + 1;
    if (ts.month > month || (ts.month == month && ts.day > local.tm_mday + 1)) --year;
  }
  if (year < 1 || year > 9999) return {};
  char buffer[40];
  int n = std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d", year, ts.month,
                        ts.day, ts.hour, ts.minute, ts.second);
  std::string out(buffer, static_cast<std::size_t>(n > 0 ? n : 0));
  if (ts.millisecond > 0) {
    std::snprintf(buffer, sizeof buffer, ".%03d", ts.millisecond % 1000);
    out += buffer;
  }
  return out;
}

Dialect detail::next_server(Dialect server, Dialect dialect, std::string_view message) {
  if (dialect != Dialect::Unknown) {
    if (server == Dialect::Unknown || (server == Dialect::LlamaCpp && dialect == Dialect::Ollama))
      return dialect;
    return server;
  }
  // Ollama's words for its llama.cpp runner, in its CLI's and its server's
  // errors ("Error: llama runner process has terminated: ..."): a log of
  // llama.cpp lines and that one is Ollama's.
  if ((server == Dialect::Unknown || server == Dialect::LlamaCpp) &&
      message.find("llama runner process") != std::string_view::npos)
    return Dialect::Ollama;
  if (server != Dialect::Unknown) return server;
  // A server's own tag or sources inside another program's line: TensorRT-LLM's
  // "[TensorRT-LLM][ERROR]" in a Triton log, ggml's sources in an assertion.
  if (message.find("[TensorRT-LLM]") != std::string_view::npos) return Dialect::TRTLLM;
  if (message.find("/ggml/src/") != std::string_view::npos) return Dialect::LlamaCpp;
  if (message.find(".py\"") == std::string_view::npos) return server;
  static constexpr std::pair<std::string_view, Dialect> kPaths[] = {
      {"/sglang/", Dialect::SGLang},           {"/vllm/", Dialect::VLLM},
      {"/text_generation_server/", Dialect::TGI}, {"/tensorrt_llm/", Dialect::TRTLLM},
      {"/lmdeploy/", Dialect::LMDeploy}};
  for (const auto& [path, named] : kPaths)
    if (message.find(path) != std::string_view::npos) return named;
  return server;
}

Dialect detail::server_of_program(std::string_view program) {
  if (detail::ends_with(program, ".service")) program.remove_suffix(8);
  // Only where the lines cannot tell: Ollama's runner writes llama.cpp's
  // lines. Every other server's own headers name it, and a unit named after
  // one server may well run another.
  return program == "ollama" ? Dialect::Ollama : Dialect::Unknown;
}

void Analyzer::Impl::note_server(Dialect dialect, std::string_view message) {
  run.server = detail::next_server(run.server, dialect, message);
}

void Analyzer::Impl::record_fact(const std::string& name, Value value) {
  // Captured text such as "51.16" or "383,504" is a number; "2.00 GiB"
  // stays text (its unit would be lost).
  if (value.kind == Value::Kind::String && !value.text.empty() &&
      value.text.find_first_of("abcdfghijklmnopqrstuvwxyzABCDFGHIJKLMNOPQRSTUVWXYZ ") ==
          std::string::npos) {
    if (auto number = detail::parse_quantity(value.text)) value = Value::of(*number);
  }
  auto bytes_of = [&name](const Value& v) { return name.size() + v.text.size() + 64; };
  auto it = run.facts.find(name);
  std::size_t replaced = it == run.facts.end() ? 0 : bytes_of(it->second);
  bool new_name = it == run.facts.end();
  if ((new_name && run.facts.size() >= options.max_facts_per_run) ||
      run.fact_bytes - replaced + bytes_of(value) > options.max_fact_bytes_per_run) {
    // A dump of thousands of keys or huge values (hostile, or not a config
    // at all) must not grow the run without bound.
    ++report.summary.capped.facts;
    return;
  }
  run.fact_bytes = run.fact_bytes - replaced + bytes_of(value);
  if (new_name) {
    run.facts.emplace(name, std::move(value));
  } else {
    it->second = std::move(value);
  }
  run.fact_lines[name] = event.line;
}

std::string Analyzer::Impl::unit_of_fact(std::string_view message, const Value& value,
                                         const std::map<std::string, std::string>& captures) {
  auto unit_after = [message](std::string_view text) -> std::string {
    if (text.empty()) return {};
    for (std::size_t at = message.find(text); at != std::string_view::npos;
         at = message.find(text, at + 1)) {
      std::size_t p = at + text.size();
      while (p < message.size() && message[p] == ' ') ++p;
      // Only the units size facts are kept in: a rule that captured MiB
      // converted the number, so the unit after it is not the fact's.
      for (std::string_view unit : {"GiB", "GB"})
        if (message.substr(p, unit.size()) == unit) return std::string(unit);
    }
    return {};
  };
  // The capture that holds the fact's own number names its unit; a computed
  // fact (k + v) takes the unit of the first size it was computed from.
  std::string first;
  for (const auto& [name, text] : captures) {
    std::string unit = unit_after(text);
    if (unit.empty()) continue;
    if (value.kind == Value::Kind::Number) {
      auto number = detail::parse_quantity(text);
      if (number && *number == value.number) return unit;
    }
    if (first.empty()) first = unit;
  }
  return first;
}

void Analyzer::Impl::add_diagnostic(std::uint64_t line, std::string message) {
  if (report.diagnostics.size() >= options.max_diagnostics) {
    ++report.summary.capped.diagnostics;
    return;
  }
  report.diagnostics.push_back(ScanDiagnostic{options.stream_name, line, std::move(message)});
}

void Analyzer::Impl::read_config_dump(const std::string& text) {
  std::vector<detail::ConfigEntry> entries;
  std::string error;
  if (!detail::parse_config_dump(text, entries, error)) {
    add_diagnostic(event.line, std::move(error));
    return;
  }
  for (const auto& entry : entries) record_fact(entry.key, to_value(entry.value));
}

}  // namespace logrx
