// SPDX-License-Identifier: MIT
// The per-stream analyzer. Per line: find the run it belongs to, attach it
// to the open multi-line event (traceback), match the rules, record facts and
// phases, and hold findings until their event closes so each one knows its
// line range; then merge the same error from several ranks into one finding.
#include "logrx/analyzer.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <re2/re2.h>

#include "analysis/analyzer_impl.h"
#include "analysis/hints.h"
#include "logrx/line.h"
#include "match/rulebook_impl.h"
#include "match/template.h"
#include "parse/config_dump.h"
#include "parse/line_parser_internal.h"
#include "util/text.h"

namespace logrx {
namespace {

using detail::Value;

constexpr std::size_t kPhaseCount = sizeof(kPhases) / sizeof(kPhases[0]);
constexpr std::size_t kPhaseReady = 4;
constexpr std::size_t kPhaseExited = 6;
// Processes of one server flush independently, so slightly older timestamps
// are normal; only a jump back of more than this starts a new run.
constexpr std::int64_t kBackwardsJumpSeconds = 60;

std::size_t phase_index(const std::string& name) {
  for (std::size_t i = 0; i < kPhaseCount; ++i)
    if (name == kPhases[i]) return i;
  return 0;
}

Value to_value(const detail::ConfigValue& c) {
  switch (c.kind) {
    case detail::ConfigValue::Kind::None:
      return Value::null();
    case detail::ConfigValue::Kind::Bool:
      return Value::of(c.boolean);
    case detail::ConfigValue::Kind::Number:
      return Value::of(c.number);
    case detail::ConfigValue::Kind::String:
    case detail::ConfigValue::Kind::Raw:
      break;
  }
  return Value::of(c.text);
}

bool is_exception_line(std::string_view message) {
  // "RuntimeError: ...", "torch.OutOfMemoryError: ...", "KeyboardInterrupt"
  if (message.empty() || message[0] == ' ' || message[0] == '\t') return false;
  std::size_t end = 0;
  auto name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
  };
  while (end < message.size() && name_char(message[end]))
    ++end;
  if (end == 0 || (end < message.size() && message[end] != ':')) return false;
  std::string_view name = message.substr(0, end);
  for (std::string_view suffix : {"Error", "Exception", "Exit", "Interrupt", "Warning", "Failure"})
    if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
      return true;
  return false;
}

// A value computed from log text becomes a server argument if a supervisor
// applies it: it must be one plain word that cannot read as another flag or
// carry shell syntax. Literal values written in the rule are trusted.
bool safe_argument(std::string_view value) {
  if (value.empty() || value.size() > 256 || value[0] == '-') return false;
  for (char c : value) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '.' || c == ':' || c == ',' || c == '/' || c == '+' || c == '=' ||
                 c == '@' || c == '%' || c == '-';
    if (!plain) return false;
  }
  return true;
}

bool is_chain_marker(std::string_view message) {
  return detail::starts_with(message, "The above exception was the direct cause") ||
         detail::starts_with(message, "During handling of the above exception");
}

constexpr std::size_t kFramesKept = 3;
constexpr std::size_t kMaxFallbackCandidates = 32;

// The file of a traceback frame line ('  File "/x/vllm/config.py", line 3, in f').
std::string_view frame_file(std::string_view message) {
  std::size_t i = 0;
  while (i < message.size() && (message[i] == ' ' || message[i] == '\t')) ++i;
  if (message.compare(i, 6, "File \"") != 0) return {};
  std::size_t start = i + 6;
  std::size_t end = message.find('"', start);
  if (end == std::string_view::npos) return {};
  return message.substr(start, end - start);
}

// A line that reports an error by its level or its shape. Warnings and
// informational lines never feed the structure and lexical tiers: healthy
// logs are full of scary-sounding warnings.
bool is_error_level(std::string_view level) {
  return level == "ERROR" || level == "CRITICAL" || level == "FATAL" || level == "E" ||
         level == "F" || level == "error" || level == "fatal" || level == "ERR" ||
         level == "EROR" || level == "critical";
}

bool is_quiet_level(std::string_view level) {
  return !level.empty() && !is_error_level(level);
}

bool opens_traceback(std::string_view message) {
  if (message.find("Traceback (most recent call last):") != std::string_view::npos) return true;
  // multiprocessing's "Process EngineCore_DP0:" before a child's traceback
  if (detail::starts_with(message, "Process ") && !message.empty() && message.back() == ':' &&
      message.find(' ', 8) == std::string_view::npos)
    return true;
  return false;
}

RemediationItem::Kind to_item_kind(RemediationSpec::Kind kind) {
  switch (kind) {
    case RemediationSpec::Kind::Env:
      return RemediationItem::Kind::Env;
    case RemediationSpec::Kind::Param:
      return RemediationItem::Kind::Param;
    case RemediationSpec::Kind::Flag:
      break;
  }
  return RemediationItem::Kind::Flag;
}

}  // namespace

namespace detail {

std::int64_t timestamp_seconds(const Timestamp& ts, int year) {
  // Days from civil (proleptic Gregorian), good for ordering and differences.
  int y = ts.year != 0 ? ts.year : year;
  int m = ts.month;
  y -= m <= 2 ? 1 : 0;
  int era = (y >= 0 ? y : y - 399) / 400;
  int yoe = y - era * 400;
  int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + ts.day - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  std::int64_t days = static_cast<std::int64_t>(era) * 146097 + doe - 719468;
  return days * 86400 + ts.hour * 3600 + ts.minute * 60 + ts.second;
}

Finding finding_base(const RuleSpec& rule, const std::string& stream, std::uint64_t line,
                     int run) {
  Finding f;
  f.rule_id = rule.id;
  f.title = rule.title;
  f.explanation = rule.explanation;
  f.category = rule.category;
  f.severity = rule.severity;
  f.file = stream;
  f.line = line;
  f.end_line = line;
  f.last_line = line;
  f.run = run;
  f.server = rule.servers.size() == 1 ? rule.servers[0] : "any";
  f.references = rule.references;
  f.wrapper = rule.wrapper;
  return f;
}

Finding engine_finding(const RuleSpec& rule, const std::string& stream, std::uint64_t line,
                       int run, std::string message) {
  Finding f = finding_base(rule, stream, line, run);
  f.message = std::move(message);
  for (const RemediationSpec& spec : rule.remediation) {
    if (!spec.value) continue;
    RemediationItem item;
    item.kind = to_item_kind(spec.kind);
    item.name = spec.name;
    item.value = spec.value;
    item.why = spec.why;
    item.alternative = spec.alternative;
    item.rule_id = rule.id;
    f.remediation.push_back(std::move(item));
  }
  return f;
}

}  // namespace detail

struct Analyzer::Impl {
  Impl(Rulebook book, AnalyzerOptions opts)
      : rulebook(std::move(book)),
        rules(RulebookAccess::impl(rulebook)),
        options(std::move(opts)),
        splitter(options.max_line_bytes) {
    if (!options.ready_pattern.empty()) {
      re2::RE2::Options re_options;
      re_options.set_log_errors(false);
      ready = std::make_unique<re2::RE2>(options.ready_pattern, re_options);
    }
    start_run(1);
  }

  struct Match {
    std::size_t rule;
    std::map<std::string, std::string> captures;
  };

  struct Run {
    int number = 1;
    std::size_t phase = 0;
    bool reached_ready = false;
    Dialect server = Dialect::Unknown;
    std::map<std::string, Value> facts;
    std::map<std::string, std::uint64_t> fact_lines;
    std::set<std::string> banners;
    bool has_timestamp = false;
    Timestamp last_timestamp;
    std::int64_t last_seconds = 0;  // last_timestamp in seconds (in its own year)
    std::string first_timestamp_text;
    std::string last_timestamp_text;
    std::uint64_t first_line = 0;
    std::uint64_t last_line = 0;
    std::uint64_t lines = 0;
    std::size_t errors = 0;
    std::set<std::size_t> fired_fact_rules;
    std::size_t first_finding = 0;  // index into report.findings
    std::uint64_t last_cause_line = 0;  // last specific error or fatal finding
  };

  struct Event {
    bool open = false;
    bool traceback = false;
    Dialect dialect = Dialect::Unknown;
    std::int64_t pid = -1;
    std::string source;
    std::string process;
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t lines = 0;
    bool after_exception = false;
    std::string first_exception;
    std::string last_exception;
    std::uint64_t last_exception_line = 0;
    std::vector<std::string> frames;  // files of the innermost traceback frames

    // Back to closed, keeping the strings' storage: this runs on every line.
    void reset() {
      frames.clear();
      last_exception_line = 0;
      open = false;
      traceback = false;
      dialect = Dialect::Unknown;
      pid = -1;
      source.clear();
      process.clear();
      start = 0;
      end = 0;
      lines = 0;
      after_exception = false;
      first_exception.clear();
      last_exception.clear();
    }
  };

  std::unique_ptr<re2::RE2> ready;  // user-defined ready marker
  Rulebook rulebook;  // keeps `rules` alive
  const Rulebook::Impl& rules;
  AnalyzerOptions options;
  LineSplitter splitter;
  LineEvent event;
  std::vector<int> candidates;
  Rulebook::Impl::PrefilterScratch prefilter_scratch;
  std::vector<Match> matches;
  std::map<std::string, std::string> scratch_captures;
  std::string redact_scratch;
  FindingCallback callback;
  LineCallback unmatched_callback;
  Report report;
  Run run;
  Event open_event;
  std::vector<Finding> held;  // findings of the open event
  // Structure and lexical matches of the open event (or of the current line
  // when no event is open); one of them becomes a finding when the event
  // closes, if no specific rule recognised the event.
  struct Candidate {
    std::size_t rule = 0;
    std::map<std::string, std::string> captures;
    std::uint64_t line = 0;
    std::string message;
    std::string text;
    std::string level;
    std::string process;
    std::string timestamp;
    bool truncated = false;
  };
  std::vector<Candidate> fallback;
  std::size_t pending_candidates = 0;  // candidates the current line offered
  bool line_has_cause = false;  // the current line produced a specific, non-wrapper finding
  struct {
    std::string message;  // of the previous line, when it may have been cut
    std::string text;
    std::uint64_t line = 0;
  } cut;
  std::uint64_t joined_from = 0;  // this line's message was joined to line joined_from's
  std::string joined_text;
  struct LightLine {
    std::string_view text;
    detail::HeaderView header;
  };
  std::vector<LightLine> light_lines;  // scratch of process_unmatched_block
  bool block_needs_matching = false;   // why process_unmatched_block declined
  std::uint64_t serving_bytes = 0;     // fed while the run was serving
  std::uint64_t prefiltered_lines = 0;
  struct {
    int year = -1;
    int month = 0;
    int day = 0;
    std::int64_t midnight = 0;
  } day_cache;
  mutable std::vector<ScanDiagnostic> template_problems;  // with options.check_templates
  std::unordered_map<std::string, std::size_t> merged;  // run's merge key -> finding index
  Dialect stream_dialect = Dialect::Unknown;
  bool exit_noted = false;  // the caller saw the process end (note_exit)
  bool finished = false;

  // ---- expressions ------------------------------------------------------

  std::optional<Value> lookup(const std::string& name,
                              const std::map<std::string, std::string>* captures,
                              const std::optional<Value>& item_value) const {
    if (captures != nullptr) {
      auto it = captures->find(name);
      if (it != captures->end()) return Value::of(it->second);
    }
    if (auto it = run.facts.find(name); it != run.facts.end()) return it->second;
    if (name == "phase") return Value::of(std::string(kPhases[run.phase]));
    if (name == "run") return Value::of(static_cast<double>(run.number));
    if (name == "server") {
      Dialect d = run.server != Dialect::Unknown ? run.server : stream_dialect;
      return Value::of(std::string(to_string(d)));
    }
    if (name == "reached_ready") return Value::of(run.reached_ready);
    if (name == "exited") return Value::of(run.phase == kPhaseExited || exit_noted);
    if (name == "errors") return Value::of(static_cast<double>(run.errors));
    if (name == "lines") return Value::of(static_cast<double>(run.lines));
    if (name == "truncated") return Value::of(event.truncated);
    if (name == "value" && item_value) return item_value;
    return std::nullopt;
  }

  detail::Lookup lookup_for(const std::map<std::string, std::string>* captures,
                            std::optional<Value> item_value = std::nullopt) const {
    return [this, captures, item_value](const std::string& name) {
      return lookup(name, captures, item_value);
    };
  }

  bool condition_holds(const std::optional<detail::Expression>& when,
                       const std::map<std::string, std::string>* captures) const {
    if (!when) return true;
    auto v = when->evaluate(lookup_for(captures));
    return v && v->truthy();
  }

  // ---- runs -------------------------------------------------------------

  void start_run(int number) {
    run = Run{};
    run.number = number;
    run.first_finding = report.findings.size();
    merged.clear();
  }

  void close_run() {
    close_event();
    for (int index : rules.run_end_rules) {
      auto rule_index = static_cast<std::size_t>(index);
      if (!condition_holds(rules.compiled[rule_index].when, nullptr)) continue;
      Finding f = make_finding(rule_index, nullptr, run.last_line);
      f.message = detail::expand_display(rules.rules[rule_index].title, lookup_for(nullptr));
      add_finding(std::move(f));
    }
    link_wrappers();
    RunInfo info;
    info.run = run.number;
    info.first_line = run.first_line;
    info.last_line = run.last_line;
    info.server = std::string(to_string(run.server));
    info.phase = kPhases[run.phase];
    info.reached_ready = run.reached_ready;
    info.first_timestamp = run.first_timestamp_text;
    info.last_timestamp = run.last_timestamp_text;
    for (const auto& [name, value] : run.facts) {
      Fact fact;
      fact.text = value.to_string();
      if (value.kind == Value::Kind::Number) fact.number = value.number;
      fact.line = run.fact_lines[name];
      info.facts.emplace(name, std::move(fact));
    }
    report.runs.push_back(std::move(info));
    // An endless stream of restarts must not grow without bound.
    if (report.runs.size() > std::max<std::size_t>(options.max_runs, 1))
      report.runs.erase(report.runs.begin());
  }

  // A wrapper ("Scheduler hit an exception", "Engine core initialization
  // failed") points to the cause: the nearest non-wrapper error of the run,
  // inside its own event first. It never outranks that cause.
  void link_wrappers() {
    auto& all = report.findings;
    for (std::size_t i = run.first_finding; i < all.size(); ++i) {
      Finding& wrapper = all[i];
      if (!wrapper.wrapper) continue;
      const Finding* best = nullptr;
      std::uint64_t best_distance = UINT64_MAX;
      for (std::size_t j = run.first_finding; j < all.size(); ++j) {
        const Finding& cause = all[j];
        if (cause.wrapper || cause.severity < Severity::Error) continue;
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

  bool timestamp_went_backwards() {
    if (!event.has_timestamp || !run.has_timestamp) return false;
    return jumped_back(event.timestamp, run.last_timestamp, run.last_seconds);
  }

  // Seconds of ts, in `year` when ts has none. Consecutive lines share their
  // day, so the calendar arithmetic is done once per day.
  std::int64_t seconds_in(const Timestamp& ts, int year) {
    int y = ts.year != 0 ? ts.year : year;
    if (y != day_cache.year || ts.month != day_cache.month || ts.day != day_cache.day) {
      day_cache.year = y;
      day_cache.month = ts.month;
      day_cache.day = ts.day;
      day_cache.midnight = detail::timestamp_seconds(Timestamp{y, ts.month, ts.day, 0, 0, 0, 0}, y);
    }
    return day_cache.midnight + ts.hour * 3600 + ts.minute * 60 + ts.second;
  }

  std::int64_t seconds_of(const Timestamp& ts) { return seconds_in(ts, 2000); }

  bool jumped_back(const Timestamp& now_ts, const Timestamp& last_ts, std::int64_t last_seconds) {
    int year = last_ts.year != 0 ? last_ts.year : 2000;
    std::int64_t now = seconds_in(now_ts, year);
    // vLLM prints no year: December followed by January is the year turning.
    if (now_ts.year == 0 && last_ts.month == 12 && now_ts.month == 1) return false;
    return last_seconds - now > kBackwardsJumpSeconds;
  }

  // The server of the run: the first line dialect seen, except that Ollama
  // passes llama.cpp's runner output through (Ollama wins), and a log without
  // headers still names its server in the paths of its tracebacks.
  void note_server(Dialect dialect, std::string_view message) {
    if (dialect != Dialect::Unknown) {
      if (run.server == Dialect::Unknown ||
          (run.server == Dialect::LlamaCpp && dialect == Dialect::Ollama))
        run.server = dialect;
      return;
    }
    if (run.server != Dialect::Unknown || message.find(".py\"") == std::string_view::npos) return;
    static constexpr std::pair<std::string_view, Dialect> kPaths[] = {
        {"/sglang/", Dialect::SGLang},           {"/vllm/", Dialect::VLLM},
        {"/text_generation_server/", Dialect::TGI}, {"/tensorrt_llm/", Dialect::TRTLLM},
        {"/lmdeploy/", Dialect::LMDeploy}};
    for (const auto& [path, server] : kPaths) {
      if (message.find(path) != std::string_view::npos) {
        run.server = server;
        return;
      }
    }
  }

  // ---- blocks no rule can match -------------------------------------------

  // A block of lines in which the prefilter proved that no rule can match.
  // Such lines still count, move timestamps and shape events, so they are
  // processed lightly: the header is parsed into views, runs and timestamps
  // are updated, and the full per-line path (with event tracking, but no
  // matching) runs only from the last line whose event state cannot be
  // derived without it. The result is exactly what full processing gives
  // (tests compare the two); anything unusual in the block (a timestamp
  // going back, an over-long line, findings waiting on an open event, a
  // custom ready pattern) sends the whole block down the full path.
  // Returns false when the block must take the full path.
  bool process_unmatched_block(std::string_view block) {
    block_needs_matching = false;
    if (!held.empty() || ready || splitter.has_pending() || block.empty() || block.back() != '\n')
      return false;
    light_lines.clear();
    bool has_ts = run.has_timestamp;
    Timestamp last_ts = run.last_timestamp;
    std::int64_t last_seconds = run.last_seconds;
    // Event state as the full path would have it: closed, opened by an SGLang
    // header line of this block (a header line never continues an event, so
    // the state after it depends on that line alone), or open from before.
    enum class State { Closed, OpenedHere, OpenBefore };
    State state = open_event.open ? State::OpenBefore : State::Closed;
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::size_t full_from = kNone;  // first line that needs the full path
    std::size_t opened_at = 0;
    for (std::size_t pos = 0; pos < block.size();) {
      std::size_t newline = block.find('\n', pos);
      std::string_view line = block.substr(pos, newline - pos);
      pos = newline + 1;
      if (line.size() > options.max_line_bytes) return false;
      detail::HeaderView header = detail::parse_header(line);
      // The prefilter leaves out the structure and lexical rules: an error
      // line needs the full path so that they can still speak.
      std::size_t previous = light_lines.empty() ? cut.message.size() : light_lines.back().header.message.size();
      bool previous_cut = light_lines.empty() ? !cut.message.empty() : may_be_cut(light_lines.back().header.message);
      if (is_error_level(header.level) ||
          (!is_quiet_level(header.level) &&
           (is_exception_line(header.message) || reports_error(header.message))) ||
          (previous > 0 && previous_cut && may_continue(header.dialect, header.message))) {
        block_needs_matching = true;
        return false;
      }
      std::size_t index = light_lines.size();
      light_lines.push_back(LightLine{line, header});
      if (full_from != kNone) continue;  // the full path checks those lines itself
      if (header.has_timestamp) {
        if (has_ts && jumped_back(header.timestamp, last_ts, last_seconds)) return false;
        has_ts = true;
        last_ts = header.timestamp;
        last_seconds = seconds_of(header.timestamp);
      }
      if (header.dialect == Dialect::SGLang) {
        state = State::OpenedHere;
        opened_at = index;
        continue;
      }
      bool opens = opens_traceback(header.message) || !frame_file(header.message).empty() ||
                   (header.dialect == Dialect::VLLM &&
                    (header.level == "ERROR" || header.level == "CRITICAL"));
      if (state == State::Closed) {
        if (opens) full_from = index;
      } else {
        full_from = state == State::OpenedHere ? opened_at : 0;
      }
    }
    if (full_from == kNone) {
      // The last line always goes the full way, so `event` is what it would be.
      full_from = state == State::OpenedHere ? opened_at
                  : state == State::Closed   ? light_lines.size() - 1
                                             : 0;
    }
    std::string_view last_timestamp_text;
    for (std::size_t i = 0; i < full_from; ++i) {
      const LightLine& l = light_lines[i];
      std::uint64_t number = ++report.summary.lines;
      if (l.header.dialect != Dialect::Unknown) stream_dialect = l.header.dialect;
      note_server(l.header.dialect, l.header.message);
      ++run.lines;
      if (run.first_line == 0) run.first_line = number;
      run.last_line = number;
      if (l.header.has_timestamp) {
        if (!run.has_timestamp) run.first_timestamp_text.assign(l.header.timestamp_text);
        run.has_timestamp = true;
        run.last_timestamp = l.header.timestamp;
        run.last_seconds = seconds_of(l.header.timestamp);
        last_timestamp_text = l.header.timestamp_text;
      }
    }
    if (!last_timestamp_text.empty()) run.last_timestamp_text.assign(last_timestamp_text);
    // The line before full_from is not continued by it (or the block would
    // have been declined), so no cut line is pending there.
    if (full_from > 0) cut.message.clear();
    for (std::size_t i = full_from; i < light_lines.size(); ++i)
      process(light_lines[i].text, false, false, true);
    prefiltered_lines += light_lines.size();
    return true;
  }

  // ---- events -----------------------------------------------------------

  bool continues_event() const {
    if (!open_event.open) return false;
    if (open_event.lines >= options.max_event_lines) return false;
    if (event.dialect == Dialect::VLLM) {
      // logger.exception repeats the record header on every line; a raw
      // traceback repeats only the process prefix.
      if (open_event.dialect != Dialect::VLLM || event.pid != open_event.pid) return false;
      return event.level.empty() ? open_event.traceback : event.source == open_event.source;
    }
    if (event.dialect != Dialect::Unknown) return false;
    // A raw line: SGLang writes continuation lines (tracebacks, multi-line
    // messages) without a header.
    if (open_event.dialect == Dialect::SGLang) return true;
    if (!open_event.traceback) return false;
    const std::string& m = event.message;
    if (open_event.after_exception)
      return m.empty() || is_chain_marker(m) || opens_traceback(m) || m[0] == ' ';
    return true;
  }

  void open_new_event() {
    open_event.reset();
    // An excerpt may begin inside a traceback: a frame line opens one too.
    bool traceback = opens_traceback(event.message) || !frame_file(event.message).empty();
    bool vllm_error = event.dialect == Dialect::VLLM &&
                      (event.level == "ERROR" || event.level == "CRITICAL");
    if (event.dialect != Dialect::SGLang && !traceback && !vllm_error) return;
    open_event.open = true;
    open_event.traceback = traceback;
    open_event.dialect = event.dialect;
    open_event.pid = event.pid;
    open_event.source = event.source;
    open_event.process = event.process;
    open_event.start = event.line;
    open_event.end = event.line;
  }

  void track_event() {
    if (continues_event()) {
      open_event.end = event.line;
      ++open_event.lines;
      if (opens_traceback(event.message)) open_event.traceback = true;
    } else {
      close_event();
      open_new_event();
    }
    if (!open_event.open) return;
    const std::string& m = event.message;
    if (is_exception_line(m)) {
      if (open_event.first_exception.empty()) open_event.first_exception = m;
      open_event.last_exception = m;
      open_event.last_exception_line = event.line;
      open_event.after_exception = true;
    } else if (auto file = frame_file(m); !file.empty()) {
      // Only the innermost frames say which module raised the exception.
      if (open_event.frames.size() >= kFramesKept) open_event.frames.erase(open_event.frames.begin());
      open_event.frames.emplace_back(file);
    } else if (is_chain_marker(m) || opens_traceback(m)) {
      open_event.after_exception = false;
    }
  }

  void close_event() {
    if (!open_event.open) return;
    resolve_fallback(true);
    std::vector<Finding> findings = std::move(held);
    held.clear();
    for (Finding& f : findings) {
      f.end_line = open_event.end;
      if (open_event.traceback || open_event.end > open_event.start) {
        f.event_start = open_event.start;
        f.exception = open_event.last_exception;
        if (open_event.first_exception != open_event.last_exception)
          f.root_exception = open_event.first_exception;
      }
      if (f.process.empty()) f.process = open_event.process;
      store(std::move(f));
    }
    open_event.reset();
  }

  // ---- findings ---------------------------------------------------------

  // Text for people; an unfilled reference is left out, and reported when
  // rules are being tested.
  std::string display(const std::string& text, const detail::Lookup& lookup,
                      const std::string& rule_id, const std::string& what) const {
    if (options.check_templates && !detail::expand_template(text, lookup))
      template_problems.push_back(ScanDiagnostic{
          options.stream_name, event.line,
          "rule " + rule_id + ": the " + what + " has a reference this finding cannot fill: " + text});
    return detail::expand_display(text, lookup);
  }

  Finding make_finding(std::size_t index, const std::map<std::string, std::string>* captures,
                       std::uint64_t line) const {
    const RuleSpec& rule = rules.rules[index];
    const CompiledRule& compiled = rules.compiled[index];
    auto plain = lookup_for(captures);
    Finding f = detail::finding_base(rule, options.stream_name, line, run.number);
    f.title = display(rule.title, plain, rule.id, "title");
    Dialect effective = run.server != Dialect::Unknown ? run.server : stream_dialect;
    if (event.dialect != Dialect::Unknown && line == event.line) effective = event.dialect;
    f.server = rule.servers.size() == 1 && rule.servers[0] != "any"
                   ? rule.servers[0]
                   : std::string(to_string(effective));
    f.phase = kPhases[run.phase];
    if (captures != nullptr) f.captures = *captures;
    for (std::size_t i = 0; i < rule.remediation.size(); ++i) {
      const RemediationSpec& spec = rule.remediation[i];
      const CompiledRemediation& compiled_item = compiled.remediation[i];
      if (!condition_holds(compiled_item.when, captures)) continue;
      RemediationItem item;
      item.kind = to_item_kind(spec.kind);
      item.name = spec.name;
      std::optional<Value> value;
      if (compiled_item.value) {
        // A value that cannot be computed from this log would be a guess:
        // leave the item out rather than prescribe a wrong number.
        value = compiled_item.value->evaluate(plain);
        if (!value || !safe_argument(value->to_string())) continue;
        item.value = value->to_string();
      } else if (spec.value) {
        auto text = detail::expand_template(*spec.value, plain);
        if (!text) continue;
        if (*text != *spec.value && !safe_argument(*text)) continue;
        item.value = *text;
        value = Value::of(*text);
      }
      item.why = display(spec.why, lookup_for(captures, value), rule.id, "why of " + spec.name);
      item.alternative = spec.alternative;
      item.rule_id = rule.id;
      f.remediation.push_back(std::move(item));
    }
    return f;
  }

  void add_finding(Finding f) {
    if (f.severity >= Severity::Error) ++run.errors;
    if (is_cause(f) && f.line == event.line) line_has_cause = true;
    if (is_cause(f) && f.severity >= Severity::Error) run.last_cause_line = std::max(run.last_cause_line, f.line);
    if (open_event.open && f.line >= open_event.start && f.line <= open_event.end) {
      held.push_back(std::move(f));
    } else {
      store(std::move(f));
    }
  }

  // Merges the same message from several ranks (or repeated) into one finding.
  void store(Finding f) {
    Summary& s = report.summary;
    // A logged error and the exception that carries it ("Prefill out of
    // memory..." then "RuntimeError: Prefill out of memory...") are one error.
    std::string_view text = f.message;
    if (is_exception_line(text)) {
      std::size_t colon = text.find(": ");
      if (colon != std::string_view::npos) text.remove_prefix(colon + 2);
    }
    // Ranks print their own device numbers ("GPU 0", "GPU 1"): digits do not
    // make a different error.
    std::string key = f.rule_id + '\n';
    for (char c : text) {
      if (!detail::is_digit(c)) {
        key += c;
      } else if (key.back() != '#') {
        key += '#';
      }
    }
    if (auto it = merged.find(key); it != merged.end()) {
      Finding& first = report.findings[it->second];
      ++first.count;
      first.last_line = std::max(first.last_line, f.line);
      first.end_line = std::max(first.end_line, f.end_line);
      if (!f.process.empty() &&
          std::find(first.ranks.begin(), first.ranks.end(), f.process) == first.ranks.end())
        first.ranks.push_back(f.process);
      return;
    }
    ++s.findings;
    if (!s.worst_severity || f.severity > *s.worst_severity) s.worst_severity = f.severity;
    ++s.by_category[std::string(to_string(f.category))];
    ++s.by_severity[std::string(to_string(f.severity))];
    if (!f.process.empty()) f.ranks.push_back(f.process);
    if (callback) callback(f);
    if (report.findings.size() < options.max_findings) {
      merged.emplace(std::move(key), report.findings.size());
      report.findings.push_back(std::move(f));
    } else {
      ++s.findings_dropped;
    }
  }

  // ---- lines ------------------------------------------------------------

  void record_fact(const std::string& name, Value value) {
    // Captured text such as "51.16" or "383,504" is a number; "2.00 GiB"
    // stays text (its unit would be lost).
    if (value.kind == Value::Kind::String && !value.text.empty() &&
        value.text.find_first_of("abcdfghijklmnopqrstuvwxyzABCDFGHIJKLMNOPQRSTUVWXYZ ") ==
            std::string::npos) {
      if (auto number = detail::parse_quantity(value.text)) value = Value::of(*number);
    }
    run.facts[name] = std::move(value);
    run.fact_lines[name] = event.line;
  }

  void read_config_dump(const std::string& text) {
    std::vector<detail::ConfigEntry> entries;
    std::string error;
    if (!detail::parse_config_dump(text, entries, error)) {
      report.diagnostics.push_back(ScanDiagnostic{options.stream_name, event.line, error});
      return;
    }
    for (const auto& entry : entries) record_fact(entry.key, to_value(entry.value));
  }

  void process(std::string_view raw, bool truncated, bool may_match = true, bool plain = false) {
    ++report.summary.lines;
    joined_from = 0;
    if (plain) {
      detail::parse_plain_line(raw, report.summary.lines, event);
    } else {
      parse_line(raw, report.summary.lines, event, false);
    }
    event.truncated = truncated;
    if (truncated) ++report.summary.truncated_lines;
    if (event.dialect != Dialect::Unknown) stream_dialect = event.dialect;

    if (may_match) {
      find_matches();
    } else {
      matches.clear();
    }
    // Secrets only matter in what is reported: a line that matched a rule or
    // goes to the gap collector. It is redacted, then matched again, so that
    // no capture, fact or message carries the secret.
    if (options.redact && (!matches.empty() || unmatched_callback)) {
      redact_scratch = event.text;
      if (redact_secrets(redact_scratch)) {
        parse_line(raw, report.summary.lines, event, true);
        event.truncated = truncated;
        find_matches();
      }
    }

    rejoin_cut_line(may_match);
    take_fallback_matches();

    bool banner = false;
    for (const Match& m : matches) {
      const RuleSpec& rule = rules.rules[m.rule];
      if (rule.starts_run && (run.banners.count(rule.id) > 0 || run.phase > 0)) banner = true;
    }
    if ((banner || timestamp_went_backwards()) && run.lines > 0) {
      close_run();
      start_run(run.number + 1);
    }
    for (const Match& m : matches)
      if (rules.rules[m.rule].starts_run) run.banners.insert(rules.rules[m.rule].id);

    ++run.lines;
    if (run.first_line == 0) run.first_line = event.line;
    run.last_line = event.line;
    note_server(event.dialect, event.message);
    if (event.has_timestamp) {
      if (!run.has_timestamp) run.first_timestamp_text = event.timestamp_text;
      run.has_timestamp = true;
      run.last_timestamp = event.timestamp;
      run.last_seconds = seconds_of(event.timestamp);
      run.last_timestamp_text = event.timestamp_text;
    }

    track_event();
    if (ready && ready->ok() && re2::RE2::PartialMatch(event.text, *ready) &&
        run.phase < kPhaseReady) {
      run.phase = kPhaseReady;
      run.reached_ready = true;
    }
    line_has_cause = false;
    if (matches.empty()) {
      if (unmatched_callback) unmatched_callback(event);
      if (!open_event.open) resolve_fallback(false);
      return;
    }

    // Conditions see the facts as they were before this line; facts and
    // phases change after every rule of the line has been decided.
    std::vector<const Match*> firing;
    for (const Match& m : matches)
      if (condition_holds(rules.compiled[m.rule].when, &m.captures)) firing.push_back(&m);

    bool facts_changed = false;
    for (const Match* m : firing) {
      const RuleSpec& rule = rules.rules[m->rule];
      for (const auto& [name, expression] : rules.compiled[m->rule].facts) {
        if (auto value = expression.evaluate(lookup_for(&m->captures))) {
          record_fact(name, std::move(*value));
          facts_changed = true;
        }
      }
      if (!rule.config_dump.empty()) {
        auto it = m->captures.find(rule.config_dump);
        if (it != m->captures.end()) {
          read_config_dump(it->second);
          facts_changed = true;
        }
      }
    }
    for (const Match* m : firing) {
      const RuleSpec& rule = rules.rules[m->rule];
      if (rule.silent && !options.include_silent) continue;
      Finding f = make_finding(m->rule, &m->captures, event.line);
      f.message = event.message;
      if (rule.hints) add_hints(f);
      if (joined_from != 0) f.evidence.push_back(EvidenceLine{joined_from, joined_text});
      f.process = event.process;
      f.timestamp = event.timestamp_text;
      f.level = event.level;
      f.truncated = event.truncated;
      f.evidence.push_back(EvidenceLine{event.line, event.text});
      add_finding(std::move(f));
    }
    for (const Match* m : firing) {
      const RuleSpec& rule = rules.rules[m->rule];
      if (rule.sets_phase.empty()) continue;
      std::size_t next = phase_index(rule.sets_phase);
      if (next > run.phase) run.phase = next;
      if (next >= kPhaseReady && next != kPhaseExited) run.reached_ready = true;
    }
    if (facts_changed) evaluate_fact_rules();
    if (!open_event.open) resolve_fallback(false);
  }

  // ---- lines cut by a terminal --------------------------------------------

  // A long line that may have been wrapped by a terminal or a paste: its
  // message goes on in the next line, which has no header.
  static bool may_be_cut(std::string_view message) {
    constexpr std::size_t kMinCutLength = 40;
    return message.size() >= kMinCutLength && message[0] != ' ' && message[0] != '\t' &&
           frame_file(message).empty() && !opens_traceback(message);
  }

  static bool may_continue(Dialect dialect, std::string_view message) {
    return dialect == Dialect::Unknown && !message.empty() && message[0] != ' ' &&
           message[0] != '\t' && !is_exception_line(message) && frame_file(message).empty() &&
           !opens_traceback(message) && !is_chain_marker(message);
  }

  // When neither this line nor the one before matched a specific rule and
  // this one continues the other, the two are matched as one message.
  void rejoin_cut_line(bool may_match) {
    bool specific = std::any_of(matches.begin(), matches.end(), [this](const Match& m) {
      return rules.rules[m.rule].tier == Tier::Rule && !rules.rules[m.rule].silent;
    });
    bool join = may_match && !specific && !cut.message.empty() && cut.line + 1 == event.line &&
                may_continue(event.dialect, event.message);
    std::string previous = std::move(cut.message);
    cut.message.clear();
    if (join) {
      std::string own = event.message;
      std::vector<Match> own_matches = std::move(matches);
      for (const char* glue : {"", " "}) {
        event.message = previous + glue + own;
        if (options.redact) redact_secrets(event.message);
        find_matches();
        bool found = std::any_of(matches.begin(), matches.end(), [this](const Match& m) {
          return rules.rules[m.rule].tier == Tier::Rule && !rules.rules[m.rule].silent;
        });
        if (found) {
          joined_from = cut.line;
          joined_text = cut.text;
          return;
        }
      }
      event.message = std::move(own);
      matches = std::move(own_matches);
    }
    if (!specific && may_be_cut(event.message)) {
      cut.message = event.message;
      cut.text = event.text;
      cut.line = event.line;
    }
  }

  // ---- structure and lexical tiers ----------------------------------------

  static bool is_cause(const Finding& f) {
    return f.tier == Tier::Rule && !f.wrapper && f.severity >= Severity::Warning;
  }

  // Moves the structure and lexical matches of this line out of `matches`
  // into the candidates. A line a specific rule recognised, and a line that
  // reports no error (a warning, an info line), offers none.
  void take_fallback_matches() {
    pending_candidates = 0;
    bool specific = false;
    bool fallback_match = false;
    for (const Match& m : matches) {
      const RuleSpec& rule = rules.rules[m.rule];
      if (rule.tier != Tier::Rule) {
        fallback_match = true;
      } else if (!rule.silent) {
        specific = true;
      }
    }
    if (!fallback_match) return;
    bool error_line = !is_quiet_level(event.level) &&
                      (is_error_level(event.level) || is_exception_line(event.message) ||
                       reports_error(event.message));
    for (Match& m : matches) {
      if (rules.rules[m.rule].tier == Tier::Rule || specific || !error_line) continue;
      if (fallback.size() >= kMaxFallbackCandidates) break;
      fallback.push_back(Candidate{m.rule, std::move(m.captures), event.line, event.message,
                                   event.text, event.level, event.process,
                                   event.timestamp_text, event.truncated});
      ++pending_candidates;
    }
    matches.erase(std::remove_if(matches.begin(), matches.end(),
                                 [this](const Match& m) { return rules.rules[m.rule].tier != Tier::Rule; }),
                  matches.end());
  }

  // A headerless line that reads as an error report ("Error: ...",
  // "error: unrecognized arguments", "FAILED ...").
  static bool reports_error(std::string_view message) {
    std::size_t i = 0;
    while (i < message.size() && message[i] == ' ') ++i;
    message.remove_prefix(i);
    for (std::string_view start : {"Error", "error", "ERROR", "Fatal", "fatal", "FATAL", "Failed",
                                   "failed", "FAILED", "Exception", "panic", "terminate called",
                                   "Killed", "Segmentation fault", "Aborted", "RuntimeError",
                                   "CUDA error", "NCCL error", "Out of memory", "OOM"})
      if (detail::starts_with(message, start)) return true;
    return message.find(" error: ") != std::string_view::npos ||
           message.find("Error: ") != std::string_view::npos ||
           message.find("] error") != std::string_view::npos;
  }

  // Turns the best candidate of the event (or line) into a finding when no
  // specific rule explained it: structure over lexical, then priority, then
  // the final exception, then the latest line.
  void resolve_fallback(bool in_event) {
    if (fallback.empty()) return;
    bool has_cause = in_event ? std::any_of(held.begin(), held.end(), is_cause) : line_has_cause;
    // What follows a recognised error (a crashed webserver, shards shutting
    // down) is its consequence, not a new problem.
    constexpr std::uint64_t kConsequenceLines = 100;
    std::uint64_t first_line = fallback.front().line;
    if (run.last_cause_line != 0 && first_line >= run.last_cause_line &&
        first_line - run.last_cause_line <= kConsequenceLines)
      has_cause = true;
    if (has_cause) {
      fallback.clear();
      return;
    }
    const std::vector<std::string>* frames = in_event ? &open_event.frames : nullptr;
    std::uint64_t final_exception = in_event ? open_event.last_exception_line : 0;
    const Candidate* best = nullptr;
    std::tuple<int, int, int, std::uint64_t> best_rank{};
    for (const Candidate& c : fallback) {
      const RuleSpec& rule = rules.rules[c.rule];
      const CompiledRule& compiled = rules.compiled[c.rule];
      if (compiled.raised_in) {
        bool raised = false;
        if (frames != nullptr)
          for (const std::string& file : *frames)
            raised |= re2::RE2::PartialMatch(file, *compiled.raised_in);
        if (!raised) continue;
      }
      if (!condition_holds(compiled.when, &c.captures)) continue;
      std::tuple<int, int, int, std::uint64_t> rank{rule.tier == Tier::Structure ? 1 : 0,
                                                    rule.priority, c.line == final_exception,
                                                    c.line};
      if (best == nullptr || rank > best_rank) {
        best = &c;
        best_rank = rank;
      }
    }
    if (best != nullptr) {
      Finding f = make_finding(best->rule, &best->captures, best->line);
      f.tier = rules.rules[best->rule].tier;
      f.message = best->message;
      f.process = best->process;
      f.timestamp = best->timestamp;
      f.level = best->level;
      f.truncated = best->truncated;
      f.evidence.push_back(EvidenceLine{best->line, best->text});
      add_hints(f);
      add_finding(std::move(f));
    }
    fallback.clear();
  }

  // The server whose flag list knows `flag`: the run's server first, else
  // the only server that has it.
  std::string server_knowing(const std::string& server, const std::string& name) const {
    if (server != "unknown" && server != "any") return rulebook.knows(server, name) ? server : "";
    for (const ServerFlags& list : rulebook.server_flags()) {
      const std::vector<std::string>& names = name[0] == '-' ? list.flags : list.env;
      if (std::find(names.begin(), names.end(), name) != names.end()) return list.server;
    }
    return "";
  }

  static std::string number_text(double v) { return Value::of(v).to_string(); }

  static std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  }

  // The known flag of `server` closest to `flag` (at most two edits, or one
  // that extends it), "" when none is close.
  std::string nearest_flag(const std::string& server, const std::string& flag) const {
    std::string best;
    std::size_t best_distance = 3;
    for (const ServerFlags& list : rulebook.server_flags()) {
      if (server != "unknown" && server != "any" && list.server != server) continue;
      for (const std::string& known : list.flags) {
        if (known.size() < 4) continue;
        std::size_t d = edit_distance(flag, known);
        if (d < best_distance) {
          best = known;
          best_distance = d;
        }
      }
    }
    return best;
  }

  // What the message itself says about its fix: the flags and variables it
  // names, with values where it states a comparison. A message whose own
  // numbers contradict its claim gets a note instead of a value.
  void add_hints(Finding& f) const {
    constexpr std::size_t kMaxItems = 4;
    std::string server = f.server;
    auto known_flag = [&](const std::string& name) -> std::string {
      if (name.empty()) return "";
      std::string flag = detail::flag_spelling(name);
      return server_knowing(server, flag).empty() ? "" : flag;
    };
    auto add = [&](RemediationItem item) {
      for (const RemediationItem& other : f.remediation)
        if (other.name == item.name) return;
      if (f.remediation.size() >= kMaxItems) return;
      item.rule_id = f.rule_id;
      f.remediation.push_back(std::move(item));
    };
    auto integral = [](double v) { return v == static_cast<double>(static_cast<long long>(v)); };
    for (const detail::Comparison& cmp : detail::find_comparisons(f.message)) {
      std::string subject = known_flag(cmp.subject);
      std::string bound = known_flag(cmp.bound);
      if (cmp.subject_value && cmp.bound_value) {
        double a = *cmp.subject_value;
        double b = *cmp.bound_value;
        bool holds = cmp.op == "<=" ? a <= b
                     : cmp.op == "<" ? a < b
                     : cmp.op == ">=" ? a >= b
                     : cmp.op == ">" ? a > b
                     : (b != 0 && integral(a) && integral(b) &&
                        static_cast<long long>(a) % static_cast<long long>(b) == 0);
        if (holds) {
          // The message reports a violation its own numbers do not show.
          f.inconsistencies.push_back(
              (cmp.subject.empty() ? std::string("the value") : cmp.subject) + " (" + number_text(a) +
              ") and " + (cmp.bound.empty() ? std::string("the limit") : cmp.bound) + " (" +
              number_text(b) + ") already satisfy '" + cmp.op +
              "': this message does not describe these values; the log may come from another run or process");
          continue;
        }
      }
      if (!subject.empty()) {
        RemediationItem item;
        item.name = subject;
        if (cmp.bound_value) {
          double b = *cmp.bound_value;
          std::optional<double> v;
          if (cmp.op == "<=" || cmp.op == ">=") v = b;
          if (cmp.op == "<" && integral(b)) v = b - 1;
          if (cmp.op == ">" && integral(b)) v = b + 1;
          if (cmp.op == "divisible" && cmp.subject_value && b > 0 && integral(b)) {
            double down = std::floor(*cmp.subject_value / b) * b;
            if (down > 0) v = down;
          }
          if (v && *v > 0) item.value = number_text(*v);
        }
        item.why = item.value ? "the message requires " + cmp.subject + " " + cmp.op + " " +
                                    (cmp.bound.empty() ? number_text(*cmp.bound_value) : cmp.bound + " (" + number_text(*cmp.bound_value) + ")")
                              : "named by the message";
        add(std::move(item));
      }
      if (!bound.empty() && bound != subject) {
        RemediationItem item;
        item.name = bound;
        item.alternative = !subject.empty();
        if (cmp.subject_value && (cmp.op == "<=" || cmp.op == ">=")) item.value = number_text(*cmp.subject_value);
        if (cmp.subject_value && cmp.op == "<" && integral(*cmp.subject_value)) item.value = number_text(*cmp.subject_value + 1);
        if (cmp.subject_value && cmp.op == ">" && integral(*cmp.subject_value) && *cmp.subject_value > 1) item.value = number_text(*cmp.subject_value - 1);
        item.why = item.value ? "or move the other side of the comparison to " + *item.value : "named by the message";
        add(std::move(item));
      }
    }
    for (const detail::Mention& m : detail::find_mentions(f.message)) {
      RemediationItem item;
      if (m.env) {
        if (server_knowing(server, m.name).empty()) continue;
        item.kind = RemediationItem::Kind::Env;
        item.name = m.name;
        item.value = m.value;
        item.why = "named by the message";
      } else {
        std::string flag = known_flag(m.name);
        if (flag.empty() && m.name.size() > 2 && m.name[0] == '-' && m.name[1] == '-') {
          // A flag the server does not have: a typo of one it has, or one
          // from another version.
          std::string nearest = nearest_flag(server, m.name);
          if (nearest.empty()) continue;
          item.name = nearest;
          item.why = "the server has no " + m.name + "; did you mean " + nearest + "?";
          add(std::move(item));
          continue;
        }
        if (flag.empty()) continue;
        item.name = flag;
        if (m.value && m.name.size() > 2 && m.name[0] == '-' && m.name[1] == '-' && safe_argument(*m.value))
          item.value = m.value;
        item.why = "named by the message";
      }
      add(std::move(item));
    }
  }

  void find_matches() {
    matches.clear();
    if (event.message.empty()) return;
    if (!rules.candidates(event.message, candidates) || candidates.empty()) return;
    Dialect effective = event.dialect != Dialect::Unknown ? event.dialect : stream_dialect;
    for (int candidate : candidates) {
      auto index = static_cast<std::size_t>(candidate);
      if (!rules.applies_to(index, effective)) continue;
      const CompiledRule& compiled = rules.compiled[index];
      // Serving-phase markers match most lines of a busy log; once the run is
      // in that phase they have nothing left to do.
      if (compiled.phase_only && !options.include_silent && run.phase >= compiled.phase_index)
        continue;
      if (!rules.extract(index, event.message, scratch_captures)) continue;
      matches.push_back(Match{index, scratch_captures});
    }
  }

  // Correlation rules fire once per run, on the line whose facts completed
  // their condition.
  void evaluate_fact_rules() {
    for (int index : rules.fact_rules) {
      auto rule_index = static_cast<std::size_t>(index);
      if (run.fired_fact_rules.count(rule_index) > 0) continue;
      if (!rules.applies_to(rule_index, run.server)) continue;
      if (!condition_holds(rules.compiled[rule_index].when, nullptr)) continue;
      run.fired_fact_rules.insert(rule_index);
      if (rules.rules[rule_index].silent && !options.include_silent) continue;
      Finding f = make_finding(rule_index, nullptr, event.line);
      f.message = f.title;
      f.timestamp = event.timestamp_text;
      f.evidence.push_back(EvidenceLine{event.line, event.text});
      add_finding(std::move(f));
    }
  }

  void finish_stream() {
    splitter.finish([this](std::string_view line, bool truncated) {
      // The stream ended without a newline: the last line may have been cut
      // mid-word (a killed process, a copy from a terminal).
      process(line, true);
      if (!truncated) --report.summary.truncated_lines;
    });
    if (run.lines > 0 || report.runs.empty()) close_run();
    report.summary.runs = static_cast<int>(report.runs.size());
    int latest = report.runs.empty() ? 1 : report.runs.back().run;
    for (Finding& f : report.findings) f.stale = f.run < latest;
    detail::check_stale_output(rulebook, options, report);
    std::stable_sort(report.findings.begin(), report.findings.end(),
                     [](const Finding& a, const Finding& b) {
                       return std::tie(a.line, a.rule_id) < std::tie(b.line, b.rule_id);
                     });
    report.remediation = merge_remediation(report.findings);
    for (ScanDiagnostic& d : template_problems) report.diagnostics.push_back(std::move(d));
  }
};

Analyzer::Analyzer(Rulebook rulebook, AnalyzerOptions options)
    : impl_(std::make_unique<Impl>(std::move(rulebook), std::move(options))) {}

Analyzer::~Analyzer() = default;
Analyzer::Analyzer(Analyzer&&) noexcept = default;
Analyzer& Analyzer::operator=(Analyzer&&) noexcept = default;

void Analyzer::on_finding(FindingCallback callback) { impl_->callback = std::move(callback); }

void Analyzer::on_unmatched_line(LineCallback callback) {
  impl_->unmatched_callback = std::move(callback);
}

void Analyzer::feed(std::string_view bytes) {
  Impl& impl = *impl_;
  auto run_lines = [&impl](std::string_view block, bool may_match, bool plain) {
    // A line that began in an earlier block is always matched in full, and
    // its earlier part was not checked for plainness.
    bool first_line_spans = impl.splitter.has_pending();
    impl.splitter.feed(block, [&](std::string_view line, bool truncated) {
      impl.process(line, truncated, may_match || first_line_spans, plain && !first_line_spans);
      first_line_spans = false;
    });
  };
  // Once a run is serving, most lines are batch statistics and access logs
  // that only phase markers match. One pass of the literal prefilter over a block
  // of lines tells whether any line in it can matter; if none can, the lines
  // are still parsed (runs, events, timestamps) but not matched. Blocks are
  // small so that a rare problem line keeps only its neighbours from being
  // skipped, and only plain ASCII blocks qualify: sanitising could otherwise
  // change what matches.
  constexpr std::size_t kBlock = 8 * 1024;
  while (!bytes.empty()) {
    std::size_t cut = bytes.size();
    if (cut > kBlock) {
      std::size_t newline = bytes.find('\n', kBlock);
      cut = newline == std::string_view::npos ? bytes.size() : newline + 1;
    }
    std::string_view block = bytes.substr(0, cut);
    bool may_match = true;
    bool plain = is_plain_text(block);
    // The prefilter is built on first use (a few milliseconds): only once the
    // stream has shown enough serving traffic for it to pay off.
    constexpr std::uint64_t kPrefilterAfterBytes = 256 * 1024;
    if (impl.run.phase == 5) impl.serving_bytes += block.size();
    if (plain && impl.run.phase == 5 && impl.serving_bytes > kPrefilterAfterBytes &&
        !impl.options.include_silent && !impl.unmatched_callback && impl.rules.has_prefilter()) {
      may_match = impl.rules.block_may_match(block, impl.prefilter_scratch);
    }
    if (may_match) {
      run_lines(block, true, plain);
    } else {
      // No rule can match a line of this block. A line that began in an
      // earlier buffer is still matched in full (its start was not scanned
      // with it), and an unfinished last line waits for the next buffer, where
      // it will be matched in full too; the complete lines between take the
      // light path.
      std::string_view rest = block;
      if (impl.splitter.has_pending()) {
        std::size_t newline = rest.find('\n');
        std::size_t end = newline == std::string_view::npos ? rest.size() : newline + 1;
        run_lines(rest.substr(0, end), false, plain);
        rest.remove_prefix(end);
      }
      std::size_t last = rest.rfind('\n');
      std::string_view whole = last == std::string_view::npos ? std::string_view{} : rest.substr(0, last + 1);
      std::string_view tail = rest.substr(whole.size());
      // A block with an error line is matched in full: the structure and
      // lexical rules the prefilter leaves out may still speak on it.
      if (!whole.empty() && !impl.process_unmatched_block(whole))
        run_lines(whole, impl.block_needs_matching, plain);
      if (!tail.empty()) run_lines(tail, false, plain);
    }
    bytes.remove_prefix(cut);
  }
}

void Analyzer::feed_line(std::string_view line) {
  bool truncated = line.size() > impl_->options.max_line_bytes;
  impl_->process(truncated ? line.substr(0, impl_->options.max_line_bytes) : line, truncated);
}

Report Analyzer::finish() {
  if (!impl_->finished) {
    impl_->finish_stream();
    impl_->finished = true;
  }
  return impl_->report;
}

void Analyzer::note_exit() { impl_->exit_noted = true; }

std::uint64_t Analyzer::lines() const noexcept { return impl_->report.summary.lines; }

std::uint64_t Analyzer::prefiltered_lines() const noexcept { return impl_->prefiltered_lines; }

std::string Analyzer::phase() const { return kPhases[impl_->run.phase]; }

bool Analyzer::ready() const noexcept { return impl_->run.reached_ready; }

std::string Analyzer::server() const {
  Dialect d = impl_->run.server != Dialect::Unknown ? impl_->run.server : impl_->stream_dialect;
  return std::string(to_string(d));
}

bool Analyzer::ok(std::string* error) const {
  if (!impl_->ready || impl_->ready->ok()) return true;
  if (error != nullptr) *error = "--ready-pattern does not compile: " + impl_->ready->error();
  return false;
}

}  // namespace logrx
