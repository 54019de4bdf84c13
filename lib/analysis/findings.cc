// SPDX-License-Identifier: MIT
// Findings: expressions over captures, facts and run state; building a
// finding from a rule; holding findings until their event closes; merging the
// same error from several ranks; fact-triggered rules.
#include "analysis/analyzer_state.h"

namespace logrx {

using namespace detail;

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

std::size_t text_bytes(const Finding& f) {
  std::size_t bytes = sizeof(Finding) + f.rule_id.size() + f.title.size() + f.explanation.size() +
                      f.file.size() + f.server.size() + f.message.size() + f.level.size() +
                      f.process.size() + f.timestamp.size() + f.timestamp_iso.size() + f.phase.size() +
                      f.exception.size() + f.root_exception.size();
  for (const auto& [name, value] : f.captures) bytes += name.size() + value.size() + 64;
  for (const RemediationItem& item : f.remediation)
    bytes += sizeof item + item.name.size() + item.why.size() + item.value.value_or("").size();
  for (const std::string& r : f.references) bytes += r.size() + 32;
  for (const EvidenceLine& e : f.evidence) bytes += sizeof e + e.text.size();
  for (const std::string& r : f.ranks) bytes += r.size() + 32;
  for (const std::string& i : f.inconsistencies) bytes += i.size() + 32;
  return bytes;
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
    item.applicable = !spec.advice;
    item.rule_id = rule.id;
    f.remediation.push_back(std::move(item));
  }
  return f;
}

}  // namespace detail

std::optional<Value> Analyzer::Impl::lookup(const std::string& name,
                            const std::map<std::string, std::string>* captures,
                            const std::optional<Value>& item_value) const {
  if (captures != nullptr) {
    auto it = captures->find(name);
    if (it != captures->end()) return Value::of(it->second);
  }
  if (lookup_overrides != nullptr) {
    auto it = lookup_overrides->find(name);
    if (it != lookup_overrides->end()) return it->second;
  }
  if (auto it = run.facts.find(name); it != run.facts.end()) return it->second;
  if (name == "phase") return Value::of(std::string(kPhases[run.phase]));
  if (name == "run") return Value::of(static_cast<double>(run.number));
  if (name == "server") {
    Dialect d = run.server != Dialect::Unknown ? run.server : stream_dialect;
    return Value::of(std::string(to_string(d)));
  }
  if (name == "reached_ready") return Value::of(run.reached_ready);
  if (name == "ended_in_traceback") return Value::of(run.ended_in_traceback);
  // The log shows this run starting (a launch banner, or a start-up phase
  // past the first): an excerpt of serving-time lines alone does not.
  if (name == "launched") return Value::of(!run.banners.empty() || run.phase > 0);
  if (name == "exited") return Value::of(run.phase == kPhaseExited || exit_noted);
  if (name == "errors") return Value::of(static_cast<double>(run.errors));
  if (name == "lines") return Value::of(static_cast<double>(run.lines));
  if (name == "truncated") return Value::of(event.truncated);
  if (name == "value" && item_value) return item_value;
  return std::nullopt;
}

detail::Lookup Analyzer::Impl::lookup_for(const std::map<std::string, std::string>* captures,
                          std::optional<Value> item_value) const {
  return [this, captures, item_value](const std::string& name) {
    return lookup(name, captures, item_value);
  };
}

bool Analyzer::Impl::condition_holds(const std::optional<detail::Expression>& when,
                     const std::map<std::string, std::string>* captures) const {
  if (!when) return true;
  auto v = when->evaluate(lookup_for(captures));
  return v && v->truthy();
}

// Text for people; an unfilled reference is left out, and reported when
// rules are being tested.
std::string Analyzer::Impl::display(const std::string& text, const detail::Lookup& lookup,
                    const std::string& rule_id, const std::string& what) const {
  if (options.check_templates && !detail::expand_template(text, lookup)) {
    if (template_problems.size() >= options.max_diagnostics) {
      ++template_problems_capped;
    } else {
      template_problems.push_back(ScanDiagnostic{
          options.stream_name, event.line,
          "rule " + rule_id + ": the " + what + " has a reference this finding cannot fill: " + text});
    }
  }
  return detail::expand_display(text, lookup);
}

Finding Analyzer::Impl::make_finding(std::size_t index, const std::map<std::string, std::string>* captures,
                     std::uint64_t line) const {
  const RuleSpec& rule = rules.rules[index];
  auto plain = lookup_for(captures);
  Finding f = detail::finding_base(rule, options.stream_name, line, run.number);
  f.source = event.origin;
  f.title = display(rule.title, plain, rule.id, "title");
  Dialect effective = run.server != Dialect::Unknown ? run.server : stream_dialect;
  // Ollama's log carries llama.cpp's runner lines: they are Ollama's findings.
  bool ollama = run.server == Dialect::Ollama;
  if (event.dialect != Dialect::Unknown && line == event.line && !ollama) effective = event.dialect;
  f.server = rule.servers.size() == 1 && rule.servers[0] != "any" &&
                     !(ollama && rule.servers[0] == "llamacpp")
                 ? rule.servers[0]
                 : std::string(to_string(effective));
  f.explanation = detail::expand_display(rule.explanation, plain);
  f.phase = kPhases[run.phase];
  if (captures != nullptr) f.captures = *captures;
  f.remediation = build_remediation(index, captures);
  return f;
}

std::vector<RemediationItem> Analyzer::Impl::build_remediation(
    std::size_t index, const std::map<std::string, std::string>* captures) const {
  const RuleSpec& rule = rules.rules[index];
  const CompiledRule& compiled = rules.compiled[index];
  auto plain = lookup_for(captures);
  std::vector<RemediationItem> items;
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
    item.applicable = !spec.advice;
    item.rule_id = rule.id;
    items.push_back(std::move(item));
  }
  return items;
}

void Analyzer::Impl::check_remediation(Finding& f) const {
  for (RemediationItem& item : f.remediation) {
    switch (item.kind) {
      case RemediationItem::Kind::Param:
        item.applicable = false;
        if (item.note.empty()) item.note = "a model or request parameter, not a launch argument";
        break;
      case RemediationItem::Kind::Container:
        item.applicable = false;
        if (item.note.empty()) item.note = "an option of the container (docker run), not of the server";
        break;
      case RemediationItem::Kind::Env:
        if (!item.value) item.applicable = false;
        break;
      case RemediationItem::Kind::Flag: {
        if (!item.applicable) break;  // advice as the rule says
        ArgumentCheck check = check_argument(rulebook.flag_spec(f.server, item.name), item.name, item.value);
        item.applicable = check.applicable;
        item.note = check.note;
        // A refused value stays visible only in the note, so no consumer
        // that ignores "applicable" can pass it on; a placeholder
        // ("<fewer layers>") is advice text and stays.
        if (check.applicable || !(item.value && !item.value->empty() && item.value->front() == '<'))
          item.value = check.value;
        break;
      }
    }
  }
}

// Interleaved processes, reversed pastes and excerpts that start with the
// error name their server only after it: once the launch ends, findings made
// without a server get their server's remediation, as of the phase they
// happened in.
void Analyzer::Impl::refine_serverless_findings() {
  Dialect known = run.server != Dialect::Unknown ? run.server : stream_dialect;
  if (known == Dialect::Unknown) known = server_named_by_findings();
  if (known == Dialect::Unknown) {
    offer_fixes_per_server();
    return;
  }
  std::string server(to_string(known));
  auto refine = [&](Finding& f) {
    if (f.server != "unknown" || f.run != run.number) return;
    const RuleSpec* spec = rulebook.find(f.rule_id);
    if (spec == nullptr || spec->trigger != Trigger::Line) return;
    auto index = static_cast<std::size_t>(spec - rules.rules.data());
    std::map<std::string, Value> overrides{{"server", Value::of(server)}, {"phase", Value::of(f.phase)}};
    lookup_overrides = &overrides;
    f.server = server;
    f.remediation = build_remediation(index, &f.captures);
    if (spec->tier != Tier::Rule || spec->hints) add_hints(f);
    check_remediation(f);
    lookup_overrides = nullptr;
  };
  for (std::size_t i = run.first_finding; i < report.findings.size(); ++i) refine(report.findings[i]);
}


// A launch whose lines name no server may still hold the words one server
// wraps an error in ("Worker failed with error ..." is vLLM's, "Scheduler hit
// an exception" SGLang's): the wrapper rules for one server that reported it
// name the server, when they all name the same one. (Other rules for one
// server may match a message several print, such as argparse's.)
Dialect Analyzer::Impl::server_named_by_findings() const {
  Dialect named = Dialect::Unknown;
  for (std::size_t i = run.first_finding; i < report.findings.size(); ++i) {
    const Finding& f = report.findings[i];
    if (f.run != run.number || f.tier != Tier::Rule || !f.wrapper || f.server == "unknown" || f.server == "any")
      continue;
    auto dialect = parse_dialect(f.server);
    if (!dialect || *dialect == Dialect::Unknown) continue;
    if (named != Dialect::Unknown && named != *dialect) return Dialect::Unknown;
    named = *dialect;
  }
  return named;
}

// A pasted line that names no server (a bare traceback, a CUDA error): the
// fixes that depend on the server are offered for the servers the rule is
// for (for a rule of any server, the two that most logs come from), as
// alternatives that say which server each is for, so the reader is not left
// with nothing. They are advice: nothing is applied.
void Analyzer::Impl::offer_fixes_per_server() {
  static constexpr std::pair<const char*, const char*> kLabels[] = {
      {"vllm", "vLLM"},          {"sglang", "SGLang"},   {"tgi", "TGI"},       {"llamacpp", "llama.cpp"},
      {"trtllm", "TensorRT-LLM"}, {"lmdeploy", "LMDeploy"}, {"ollama", "Ollama"}};
  auto servers_for = [](const RuleSpec& rule) {
    std::vector<std::pair<const char*, const char*>> out;
    bool any = std::find(rule.servers.begin(), rule.servers.end(), "any") != rule.servers.end();
    for (const auto& entry : kLabels) {
      bool named = std::find(rule.servers.begin(), rule.servers.end(), entry.first) != rule.servers.end();
      bool common = std::string_view(entry.first) == "vllm" || std::string_view(entry.first) == "sglang";
      if (any ? common : named) out.push_back(entry);
    }
    return out;
  };
  // Bounded: a stream of thousands of distinct errors gets the offer on its
  // first ones only (stored findings are capped by their bytes already).
  constexpr std::size_t kMaxOffers = 32;
  std::size_t offers = 0;
  for (std::size_t i = run.first_finding; i < report.findings.size() && offers < kMaxOffers; ++i) {
    Finding& f = report.findings[i];
    if (f.server != "unknown" || f.run != run.number || f.severity < Severity::Warning) continue;
    ++offers;
    const RuleSpec* spec = rulebook.find(f.rule_id);
    if (spec == nullptr || spec->trigger != Trigger::Line || spec->remediation.empty()) continue;
    auto index = static_cast<std::size_t>(spec - rules.rules.data());
    std::set<std::string> offered;
    for (const RemediationItem& item : f.remediation) offered.insert(item.name);
    for (const auto& [server, label] : servers_for(*spec)) {
      std::map<std::string, Value> overrides{{"server", Value::of(std::string(server))},
                                             {"phase", Value::of(f.phase)}};
      lookup_overrides = &overrides;
      std::vector<RemediationItem> items = build_remediation(index, &f.captures);
      lookup_overrides = nullptr;
      for (RemediationItem& item : items) {
        if (offered.count(item.name) > 0) continue;
        if (item.kind != RemediationItem::Kind::Container && item.kind != RemediationItem::Kind::Param &&
            !rulebook.knows(server, item.name))
          continue;
        offered.insert(item.name);
        item.alternative = true;
        item.applicable = false;
        item.why = std::string("if the server is ") + label + ": " + item.why;
        item.note = std::string("for ") + label + "; the log does not say which server wrote it";
        f.remediation.push_back(std::move(item));
      }
    }
  }
}

void Analyzer::Impl::add_finding(Finding f) {
  if (f.severity >= Severity::Error) ++run.errors;
  if (is_cause(f) && f.line == event.line) line_has_cause = true;
  if (is_cause(f) && f.severity >= Severity::Error) run.last_cause_line = std::max(run.last_cause_line, f.line);
  if (!open_event.open || f.line < open_event.start || f.line > open_event.end) {
    store(std::move(f));
    return;
  }
  if (held.size() >= options.max_held_findings || held_bytes >= options.max_held_bytes) {
    // Past the caps a finding is stored without waiting for its event to
    // close: it does not learn the event's range and exceptions, but memory
    // stays bounded.
    ++report.summary.capped.held_findings;
    store(std::move(f));
    return;
  }
  Held h;
  h.message = share_held_text(f.message);
  for (EvidenceLine& e : f.evidence) h.evidence.push_back(share_held_text(e.text));
  held_bytes += text_bytes(f);
  h.finding = std::move(f);
  held.push_back(std::move(h));
}

std::size_t Analyzer::Impl::share_held_text(std::string& text) {
  constexpr std::size_t kShareFrom = 256;  // shorter text stays in its finding
  constexpr std::size_t kLookBack = 4;     // a line's findings are held one after another
  if (text.size() < kShareFrom) return kNoText;
  std::size_t from = held_text.size() > kLookBack ? held_text.size() - kLookBack : 0;
  for (std::size_t i = held_text.size(); i-- > from;) {
    if (held_text[i] == text) {
      text.clear();
      text.shrink_to_fit();
      return i;
    }
  }
  held_bytes += text.size();
  held_text.push_back(std::move(text));
  text = std::string();
  return held_text.size() - 1;
}

// Merges the same message from several ranks (or repeated) into one finding.
void Analyzer::Impl::store(Finding f) {
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
  // A wrapper is a consequence: however it is worded on each line (the
  // launcher's "Webserver Crashed", then "Error: WebserverFailed"), one
  // finding per rule and launch says it.
  if (f.wrapper) text = {};
  for (char c : text) {
    if (!detail::is_digit(c)) {
      key += c;
    } else if (key.back() != '#') {
      key += '#';
    }
  }
  if (auto it = merged.find(key); it != merged.end()) {
    Finding& first = report.findings[it->second.index];
    first.count += std::max<std::size_t>(f.count, 1);  // f may stand for several lines already
    first.last_line = std::max({first.last_line, f.line, f.last_line});
    first.end_line = std::max(first.end_line, f.end_line);
    if (!f.process.empty() && it->second.ranks.count(f.process) == 0) {
      if (first.ranks.size() >= options.max_ranks_per_finding) {
        ++s.capped.ranks;
      } else {
        it->second.ranks.insert(f.process);
        first.ranks.push_back(f.process);
        stored_finding_bytes += f.process.size() * 2 + 64;
      }
    }
    return;
  }
  ++s.findings;
  if (!s.worst_severity || f.severity > *s.worst_severity) s.worst_severity = f.severity;
  ++s.by_category[std::string(to_string(f.category))];
  ++s.by_severity[std::string(to_string(f.severity))];
  if (!f.process.empty()) f.ranks.push_back(f.process);
  check_remediation(f);
  // The choke point for the finding callback: nothing leaves unredacted.
  if (options.redact) redact_finding(f);
  if (callback) callback(f);
  std::size_t bytes = text_bytes(f) + key.size() * 2 + f.process.size();
  bool over_bytes = stored_finding_bytes + bytes > options.max_finding_bytes;
  if (report.findings.size() < options.max_findings && !over_bytes) {
    stored_finding_bytes += bytes;
    Merged entry{report.findings.size(), {}};
    if (!f.process.empty()) entry.ranks.insert(f.process);
    merged.emplace(std::move(key), std::move(entry));
    report.findings.push_back(std::move(f));
  } else {
    ++s.findings_dropped;
    if (over_bytes) ++s.capped.finding_bytes;
  }
}

// Correlation rules fire once per run, on the line whose facts completed
// their condition.
void Analyzer::Impl::evaluate_fact_rules() {
  for (int index : rules.fact_rules) {
    auto rule_index = static_cast<std::size_t>(index);
    if (run.fired_fact_rules.count(rule_index) > 0) continue;
    bool applies = rules.applies_to(rule_index, run.server) ||
                   std::any_of(run.fact_dialects.begin(), run.fact_dialects.end(),
                               [&](Dialect d) { return rules.applies_to(rule_index, d); });
    if (!applies) continue;
    if (!condition_holds(rules.compiled[rule_index].when, nullptr)) continue;
    run.fired_fact_rules.insert(rule_index);
    for (std::size_t r = 0; r < rules.compiled.size(); ++r) {
      if (rules.compiled[r].retire_after != static_cast<int>(rule_index)) continue;
      if (retired.empty()) retired.assign(rules.compiled.size(), 0);
      retired[r] = 1;
    }
    if (rules.rules[rule_index].silent && !options.include_silent) continue;
    Finding f = make_finding(rule_index, nullptr, event.line);
    f.message = f.title;
    f.timestamp = event.timestamp_text;
    if (event.has_timestamp) f.timestamp_iso = iso_time(event.timestamp);
    f.evidence.push_back(EvidenceLine{event.line, event.text});
    add_finding(std::move(f));
  }
}

}  // namespace logrx
