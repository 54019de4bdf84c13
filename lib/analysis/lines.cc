// SPDX-License-Identifier: MIT
// Lines: the per-line path (parse, match, redact, facts, phases), the light
// path for blocks no rule can match, and messages cut by a terminal.
#include <array>

#include "analysis/analyzer_state.h"

namespace logrx {

using namespace detail;

// A block of lines in which the prefilter proved that no rule can match.
// Such lines still count, move timestamps and shape events, so they are
// processed lightly: the header is parsed into views, runs and timestamps
// are updated, and the full per-line path (with event tracking, but no
// matching) runs only from the last line whose event state cannot be
// derived without it. The result is exactly what full processing gives
// (tests compare the two); anything unusual in the block (a timestamp
// going back, an over-long line, a custom ready pattern) sends the whole
// block down the full path; findings waiting on an open event, the lines up
// to the event's end.
// Returns false when the block must take the full path.
bool Analyzer::Impl::process_unmatched_block(std::string_view block,
                                             const detail::BlockSurvey* survey) {
  bool fits = survey_fits(survey, block);
  if (ready || splitter.has_pending() || block.empty() || block.back() != '\n') {
    // The full path, matched unless the block is known to hold no line the
    // structure and lexical tiers read (the prefilter leaves them out).
    block_needs_matching = !fits || survey->needs_matching ||
                           (survey->first_may_continue() && !cut.message.empty());
    return false;
  }
  block_needs_matching = false;
  if (!fits) {
    local_survey.clear();
    survey_lines(block, options.max_line_bytes, local_survey, false);
    survey = &local_survey;
  }
  // A line the structure and lexical tiers must see wins over every other
  // reason to decline: a declined block is otherwise not matched at all.
  // (feed_block splits a block around such lines.)
  if (survey->needs_matching) {
    block_needs_matching = true;
    return false;
  }
  // A Ray actor's prefix around another server's line is unwrapped by the full path.
  if (survey->declined || (survey->levelless_vllm && !foreign_prefixes.empty())) return false;
  // The first lines may be ones the light path would take the full way with
  // every line after them (an event they continue, a cut line they may go
  // on, matched), or that findings held for an open event keep from it (not
  // matched): they go that way alone, and the light path takes over once it can.
  std::size_t settled = 0;
  while (settled < block.size()) {
    bool full = needs_full_path(block.substr(settled));
    if (!full && held.empty()) break;
    std::size_t end = block.find('\n', settled) + 1;
    run_lines(block.substr(settled, end - settled), full, true);
    settled = end;
  }
  if (settled > 0) {
    if (settled == block.size()) return true;
    std::string_view rest = block.substr(settled);
    settled_survey.clear();
    survey_lines(rest, options.max_line_bytes, settled_survey, false);
    if (!process_unmatched_block(rest, &settled_survey)) run_lines(rest, block_needs_matching, true);
    return true;
  }
  // A survey that reached the end of the block always summarised it.
  return survey->light.known && apply_light(*survey);
}

// Whether the light path, entering `lines` now, would take its first line
// the full way and all the lines after it: the line may continue a cut one
// before it, or an event open before it that the light path cannot follow
// (one with fallback matches or of vLLM, or an SGLang one it continues).
bool Analyzer::Impl::needs_full_path(std::string_view lines) const {
  std::string_view line = lines.substr(0, lines.find('\n'));
  detail::HeaderView header = detail::parse_header(line);
  if (!cut.message.empty() && may_continue(header.dialect, header.message)) return true;
  if (!open_event.open) return false;
  if (!fallback.empty() || open_event.dialect == Dialect::VLLM) return true;
  return header.dialect == Dialect::Unknown;
}

// process_unmatched_block's walk, from the survey's summary of it: the same
// result, at a cost that does not grow with the block's lines.
bool Analyzer::Impl::apply_light(const detail::BlockSurvey& survey) {
  const detail::LightSummary& light = survey.light;
  enum class State { Closed, Open, Loud };
  State state = State::Closed;
  if (open_event.open)
    state = fallback.empty() && open_event.dialect != Dialect::VLLM ? State::Open : State::Loud;
  std::size_t full_from = 0;
  std::size_t offset = 0;
  bool match_rest = true;
  if (state == State::Open && light.first_unknown) {
    // The open event goes on in the first line: all of it the full way.
    if (light.first_has_timestamp && run.has_timestamp &&
        jumped_back(light.first_timestamp, run.last_timestamp, run.last_seconds))
      return false;
  } else if (state != State::Loud) {
    if (light.jumps_back) return false;
    if (light.checked_has_timestamp && run.has_timestamp &&
        jumped_back(light.first_checked, run.last_timestamp, run.last_seconds))
      return false;
    full_from = light.full_from;
    offset = light.full_from_offset;
    match_rest = light.match_rest;
  }
  if (full_from > 0) {
    // An event open from before the block that its first line closed.
    if (open_event.open) close_event();
    std::uint64_t first = report.summary.lines + 1;
    report.summary.lines += full_from;
    if (light.last_dialect != Dialect::Unknown) stream_dialect = light.last_dialect;
    if (run.server == Dialect::Unknown) {
      run.server = light.server_from_unknown;
    } else if (run.server == Dialect::LlamaCpp && light.has_ollama) {
      run.server = Dialect::Ollama;
    }
    run.lines += full_from;
    if (run.first_line == 0) run.first_line = first;
    run.last_line = report.summary.lines;
    if (light.has_timestamp) {
      if (!run.has_timestamp) {
        run.first_timestamp_text.assign(light.first_time_text);
        run.first_timestamp = light.first_time;
      }
      if (light.has_dated) note_dated(light.last_dated);
      run.has_timestamp = true;
      run.last_timestamp = light.last_time;
      run.last_timestamp_text.assign(light.last_time_text);
      run.last_seconds = seconds_of(run.last_timestamp);
    }
    cut.message.clear();
    cut.spaced.clear();
    cut.rules.clear();
    cut.pieces.clear();
    cut.bytes = 0;
  }
  struct Cleared {
    bool& flag;
    ~Cleared() { flag = false; }
  } cleared{in_cleared_block = true};
  std::string_view rest = survey.lines_range.substr(offset);
  for (std::size_t pos = 0; pos < rest.size();) {
    std::size_t newline = rest.find('\n', pos);
    if (newline == std::string_view::npos) newline = rest.size();
    process(rest.substr(pos, newline - pos), false, match_rest, true);
    pos = newline + 1;
  }
  prefiltered_lines += light.lines;
  return true;
}

void Analyzer::Impl::survey_lines(std::string_view whole, std::size_t max_line_bytes,
                                  detail::BlockSurvey& out, bool keep_lines,
                                  const detail::TextMarks* known_marks) {
  out.lines_known = true;
  out.lines_range = whole;
  const detail::TextMarks marks = known_marks != nullptr ? *known_marks : detail::find_marks(whole);
  // The light path's walk over the lines (process_unmatched_block), for a
  // block entered with no event open: the event state an SGLang header
  // line opens and the next line keeps or closes, where the full path must
  // take over, and what the lines before that change in the run.
  detail::LightSummary& light = out.light;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  bool open = false;
  std::size_t open_from = 0;
  std::size_t open_offset = 0;
  std::size_t stop = kNone;  // where the walk stops: the full path's first line
  std::size_t stop_offset = 0;
  detail::DayClock clock;
  Timestamp previous_time;
  std::int64_t previous_seconds = 0;
  // Lines are folded into the summary one behind, once it is known that the
  // walk went past them: the last line always goes the full way.
  detail::HeaderView pending;
  bool has_pending = false;
  auto fold = [&light](const detail::HeaderView& line) {
    if (line.dialect != Dialect::Unknown) light.last_dialect = line.dialect;
    if (line.dialect == Dialect::Ollama) light.has_ollama = true;
    light.server_from_unknown = detail::next_server(light.server_from_unknown, line.dialect, line.message);
    if (!line.has_timestamp) return;
    if (!light.has_timestamp) {
      light.has_timestamp = true;
      light.first_time = line.timestamp;
      light.first_time_text = line.timestamp_text;
    }
    light.last_time = line.timestamp;
    light.last_time_text = line.timestamp_text;
    if (line.timestamp.year != 0) {
      light.has_dated = true;
      light.last_dated = line.timestamp;
    }
  };
  std::string_view previous_message;
  std::size_t previous_offset = 0;
  std::size_t last_offset = 0;      // of the last line walked
  std::size_t index = 0;
  for (std::size_t pos = 0; pos < whole.size(); ++index) {
    std::size_t newline = whole.find('\n', pos);
    if (newline == std::string_view::npos) newline = whole.size();
    std::string_view line = whole.substr(pos, newline - pos);
    std::size_t offset = pos;
    pos = newline + 1;
    if (line.size() > max_line_bytes) {
      // Not parsed: what the tiers would say of it is unknown.
      out.declined = true;
      out.needs_matching = true;
      return;
    }
    detail::HeaderView header = detail::parse_header(line);
    if (header.dialect == Dialect::VLLM && header.level.empty()) {
      if (!is_vllm_process_name(header.process) ||
          (!detail::is_uvicorn_record(header.message) &&
           detail::parse_header(header.message).dialect != Dialect::Unknown))
        out.declined = true;
      out.levelless_vllm = true;
    }
    // The prefilter leaves out the structure and lexical rules: an error
    // line needs the full path so that they can still speak. A line that may
    // continue a cut one, joined with it, may match.
    bool continues = may_continue(header.dialect, header.message, marks);
    if (index > 0 && continues && may_be_cut(previous_message, marks)) {
      out.needs_matching = true;
      out.needs_from = previous_offset;
      out.needs_lines = 2;
    } else if (is_error_level(header.level) ||
               (!is_quiet_level(header.level) &&
                (is_exception_line(header.message) || reports_error(header.message, marks))) ||
               (marks.backslash && detail::has_escaped_quotes(header.message)) ||
               // Its header and message are only known once the colour
               // codes written out as text are removed (sanitize_line).
               (marks.notation && detail::find_marks(line).notation)) {
      out.needs_matching = true;
      out.needs_from = offset;
      out.needs_lines = 1;
    }
    // The full path takes over from this line (feed_block splits the block
    // there, see Analyzer::Impl::split_block): the rest is not needed.
    if (out.needs_matching) return;
    bool opens = opens_traceback(header.message, marks) || !frame_file(header.message).empty() ||
                 (header.dialect == Dialect::VLLM &&
                  (header.level == "ERROR" || header.level == "CRITICAL"));
    if (keep_lines) out.lines.push_back(SurveyedLine{line, header, false});
    previous_message = header.message;
    previous_offset = offset;
    if (index == 0) {
      out.first_continues = continues;
      light.first_unknown = header.dialect == Dialect::Unknown;
      light.first_has_timestamp = header.has_timestamp;
      light.first_timestamp = header.timestamp;
    }
    if (stop != kNone) continue;
    if (header.has_timestamp) {
      if (light.checked_has_timestamp) {
        light.jumps_back = light.jumps_back || clock.jumped_back(header.timestamp, previous_time, previous_seconds);
      } else {
        light.checked_has_timestamp = true;
        light.first_checked = header.timestamp;
      }
      previous_time = header.timestamp;
      previous_seconds = clock.seconds_of(header.timestamp);
    }
    last_offset = offset;
    if (header.dialect == Dialect::SGLang) {
      if (has_pending) fold(pending);
      pending = header;
      has_pending = true;
      open = true;
      open_from = index;
      open_offset = offset;
      continue;
    }
    if (open && header.dialect == Dialect::Unknown) {
      // A raw line continues the event: the full path takes it from the
      // line that opened it (the one before, still pending).
      stop = open_from;
      stop_offset = open_offset;
      continue;
    }
    if (has_pending) fold(pending);
    pending = header;
    has_pending = true;
    open = false;
    if (opens) {
      stop = index;
      stop_offset = offset;
    }
  }
  light.lines = index;
  if (index == 0) return;
  if (stop != kNone) {
    light.full_from = stop;
    light.full_from_offset = stop_offset;
    light.match_rest = true;
  } else {
    // The last line always goes the full way (an event open at the end was
    // opened by it: any other line after an SGLang one closes or stops).
    light.match_rest = open;
    light.full_from = index - 1;
    light.full_from_offset = last_offset;
  }
  light.known = true;
}

void Analyzer::Impl::survey_block(std::string_view block, const Rulebook::Impl& rules,
                                  Rulebook::Impl::PrefilterScratch& scratch,
                                  std::size_t max_line_bytes, const std::vector<char>& retired_hint,
                                  detail::BlockSurvey& out) {
  out.block = block;
  // One pass finds whether the block is plain and the marks its lines' checks use.
  const detail::TextMarks marks = detail::find_marks(block);
  out.plain = !marks.unclean;
  if (!out.plain || !rules.has_prefilter()) return;
  out.potentials = rules.block_potentials(block, scratch);
  out.potentials_known = true;
  // Lines are only surveyed where the light path may take them: a few
  // potentials left, checked line by line, besides rules the stream had
  // retired (a launch retires the statistics rules whose literals are on
  // every serving line: checking those would cost a regex per line).
  thread_local std::vector<int> live;
  live.clear();
  for (int id : out.potentials) {
    auto rule = static_cast<std::size_t>(rules.prefilter_rules[static_cast<std::size_t>(id)]);
    if (!retired_hint.empty() && retired_hint[rule]) {
      out.unchecked.push_back(id);
    } else {
      live.push_back(id);
    }
  }
  if (live.size() > kPotentialsChecked) return;
  std::size_t last = block.rfind('\n');
  if (last == std::string_view::npos) return;
  survey_lines(block.substr(0, last + 1), max_line_bytes, out, !live.empty(), &marks);
  clear_potentials(rules, live, out);
}

bool Analyzer::Impl::check_holds(const detail::BlockSurvey& survey) const {
  if (survey.unchecked.empty()) return true;
  return !rules.any_live(survey.unchecked, retired);
}

void Analyzer::Impl::clear_potentials(const Rulebook::Impl& rules, const std::vector<int>& potentials,
                                      detail::BlockSurvey& survey) {
  survey.potentials_cleared = false;
  survey.potentials_checked = false;
  if (potentials.empty() || potentials.size() > kPotentialsChecked || !survey.lines_known ||
      survey.needs_matching || survey.declined)
    return;
  // What candidates() would ask of each line's message, asked of the few
  // rules the prefilter left (the others cannot match any line of the block).
  // A rule whose regex is nowhere in the block is on none of its lines: one
  // search of the block instead of one per line (its literals are often on
  // every statistics line, its pattern on none).
  std::array<const re2::RE2*, kPotentialsChecked> regexes{};
  std::size_t count = 0;
  re2::StringPiece block(survey.lines_range.data(), survey.lines_range.size());
  for (int id : potentials) {
    const CompiledRule& rule =
        rules.compiled[static_cast<std::size_t>(rules.prefilter_rules[static_cast<std::size_t>(id)])];
    if (!rule.regex || !rule.regex->get().ok()) return;
    const re2::RE2& regex = rule.regex->get();
    if (rule.block_searchable && !regex.Match(block, 0, block.size(), re2::RE2::UNANCHORED, nullptr, 0))
      continue;
    if (std::find(regexes.begin(), regexes.begin() + static_cast<std::ptrdiff_t>(count), &regex) ==
        regexes.begin() + static_cast<std::ptrdiff_t>(count))
      regexes[count++] = &regex;
  }
  bool any = false;
  for (SurveyedLine& line : survey.lines) {
    re2::StringPiece text(line.header.message.data(), line.header.message.size());
    line.hits = std::any_of(regexes.begin(), regexes.begin() + static_cast<std::ptrdiff_t>(count),
                            [&](const re2::RE2* regex) {
                              return regex->Match(text, 0, text.size(), re2::RE2::UNANCHORED, nullptr, 0);
                            });
    any = any || line.hits;
  }
  survey.potentials_checked = true;
  survey.potentials_cleared = !any;
}

void Analyzer::Impl::process_enveloped(std::string_view raw, bool truncated) {
  envelope.line(raw, truncated, [this](std::string_view text, bool piece_cut, const detail::EnvelopeMeta* meta) {
    process_unwrapped(text, piece_cut, meta);
  });
}

void Analyzer::Impl::process_unwrapped(std::string_view text, bool truncated,
                                       const detail::EnvelopeMeta* meta) {
  envelope_meta = meta;
  process(text, truncated);
  envelope_meta = nullptr;
}

void Analyzer::Impl::apply_envelope() {
  if (envelope_meta == nullptr) return;
  sanitize_line(envelope_meta->source, event.origin);
  // journald's or syslog's program ("ollama[1405]:", the unit ollama.service)
  // names the server before its lines do: Ollama's runner writes llama.cpp's
  // lines, and the first of them may be the error.
  if (Dialect named = detail::server_of_program(event.origin); named != Dialect::Unknown)
    note_server(named, {});
  if (envelope_meta->has_timestamp) note_dated(envelope_meta->timestamp);
  if (!event.has_timestamp && envelope_meta->has_timestamp) {
    event.has_timestamp = true;
    event.timestamp_from_envelope = true;
    event.timestamp = envelope_meta->timestamp;
    event.timestamp_text.assign(envelope_meta->timestamp_text);
  }
}

// Ray forwards every actor's output behind "(ActorName pid=N) ", the shape of
// vLLM's own process prefix. When what follows is another server's line
// ("(WorkerDict pid=7) [2026-05-23 07:40:41 TP0] ..." from an SGLang engine
// inside verl), the prefix is Ray's: the line is that server's, and the
// prefix's later raw lines (its traceback) continue that server's events.
void Analyzer::Impl::unwrap_foreign_prefix() {
  if (event.dialect != Dialect::VLLM || !event.level.empty() || event.process.empty()) return;
  detail::HeaderView inner = detail::parse_header(std::string_view(event.message));
  bool foreign = inner.dialect != Dialect::Unknown && inner.dialect != Dialect::VLLM;
  if (foreign) {
    if (foreign_prefixes.size() < kMaxForeignPrefixes) foreign_prefixes.insert(event.process);
    std::string message(inner.message);
    event.dialect = inner.dialect;
    event.has_timestamp = inner.has_timestamp;
    event.timestamp = inner.timestamp;
    event.timestamp_text.assign(inner.timestamp_text);
    event.level.assign(inner.level);
    if (!inner.process.empty()) event.process.assign(inner.process);
    event.pid = inner.pid;
    event.source.assign(inner.source);
    event.message = std::move(message);
    return;
  }
  if (foreign_prefixes.count(event.process) > 0 || !is_vllm_process_name(event.process)) {
    // Raw output of a Ray actor: a headerless line of whatever runs inside
    // (the server its other lines name, or the stream's).
    event.dialect = Dialect::Unknown;
    event.pid = -1;
  }
}

void Analyzer::Impl::process(std::string_view raw, bool truncated, bool may_match, bool plain) {
  ++report.summary.lines;
  joined.clear();
  if (plain) {
    detail::parse_plain_line(raw, report.summary.lines, event);
  } else {
    parse_line(raw, report.summary.lines, event, false);
  }
  unwrap_foreign_prefix();
  apply_envelope();
  event.truncated = truncated;
  if (truncated) ++report.summary.truncated_lines;
  if (event.dialect != Dialect::Unknown) stream_dialect = event.dialect;
  dedent_traceback_line();

  if (may_match) {
    raw_message = true;
    find_matches();
    raw_message = false;
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
      unwrap_foreign_prefix();
      apply_envelope();
      event.truncated = truncated;
      find_matches();
    }
  }

  rejoin_cut_line(may_match);
  take_fallback_matches();

  // A run starts at launch evidence: a banner, a config dump or a version
  // line seen again (or after the launch moved on). A timestamp jumping back
  // starts one only with evidence of a launch on the same line (a banner, or
  // a phase earlier than the run's): merged or clock-skewed logs jump back
  // on every line, and each jump alone once made a run that "died before ready".
  bool banner = false;
  bool launch_evidence = false;
  for (const Match& m : matches) {
    const RuleSpec& rule = rules.rules[m.rule];
    if (rule.starts_run) {
      launch_evidence = true;
      if (run.banners.count(rule.id) > 0 || run.phase > 0) banner = true;
    }
    if (!rule.sets_phase.empty() && phase_index(rule.sets_phase) < run.phase) launch_evidence = true;
  }
  bool went_back = timestamp_went_backwards();
  if ((banner || (went_back && launch_evidence)) && run.lines > 0) {
    close_run();
    start_run(run.number + 1);
  } else if (went_back && !backwards_noted) {
    backwards_noted = true;
    add_diagnostic(event.line,
                   "timestamps go back by more than " + std::to_string(kBackwardsJumpSeconds) +
                       " s here and no launch begins (a merged or clock-skewed log?); runs are "
                       "split only where a launch shows");
  }
  for (const Match& m : matches)
    if (rules.rules[m.rule].starts_run) run.banners.insert(rules.rules[m.rule].id);

  ++run.lines;
  if (run.first_line == 0) run.first_line = event.line;
  run.last_line = event.line;
  note_server(event.dialect, event.message);
  if (event.timestamp_from_envelope) {
    if (run.first_envelope_timestamp.empty()) {
      run.first_envelope_timestamp = event.timestamp_text;
      run.first_envelope_time = event.timestamp;
    }
    run.last_envelope_timestamp = event.timestamp_text;
    run.last_envelope_time = event.timestamp;
  } else if (event.has_timestamp) {
    if (!run.has_timestamp) {
      run.first_timestamp_text = event.timestamp_text;
      run.first_timestamp = event.timestamp;
    }
    note_dated(event.timestamp);
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
  auto note_fact_dialect = [this] {
    if (event.dialect == Dialect::Unknown || event.dialect == run.server) return;
    if (std::find(run.fact_dialects.begin(), run.fact_dialects.end(), event.dialect) == run.fact_dialects.end())
      run.fact_dialects.push_back(event.dialect);
  };
  for (const Match* m : firing) {
    const RuleSpec& rule = rules.rules[m->rule];
    for (const auto& [name, expression] : rules.compiled[m->rule].facts) {
      if (auto value = expression.evaluate(lookup_for(&m->captures))) {
        bool size = name.size() > 3 && name.compare(name.size() - 3, 3, "_gb") == 0;
        std::string unit = size ? unit_of_fact(event.message, *value, m->captures) : std::string();
        record_fact(name, std::move(*value));
        note_fact_dialect();
        if (size && run.facts.count(name) > 0) {
          if (unit.empty()) {
            run.fact_units.erase(name);
          } else {
            run.fact_units[name] = std::move(unit);
          }
        }
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
    bool superseded = std::any_of(firing.begin(), firing.end(), [&](const Match* other) {
      const auto& by = rules.rules[other->rule].supersedes;
      return other != m && std::find(by.begin(), by.end(), rule.id) != by.end();
    });
    if (superseded) continue;
    Finding f = make_finding(m->rule, &m->captures, event.line);
    f.message = event.message;
    if (rule.hints) add_hints(f);
    for (const EvidenceLine& piece : joined) f.evidence.push_back(piece);
    f.process = event.process;
    f.timestamp = event.timestamp_text;
    if (event.has_timestamp) f.timestamp_iso = iso_time(event.timestamp);
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

// A long line that may have been wrapped by a terminal or a paste: its
// message goes on in the next line, which has no header.
bool Analyzer::Impl::may_be_cut(std::string_view message, const detail::TextMarks& marks) {
  constexpr std::size_t kMinCutLength = 40;
  return message.size() >= kMinCutLength && message[0] != ' ' && message[0] != '\t' &&
         frame_file(message).empty() && !opens_traceback(message, marks);
}

bool Analyzer::Impl::may_continue(Dialect dialect, std::string_view message,
                                  const detail::TextMarks& marks) {
  // One space first is where a terminal wrapped the line at a space; two or
  // more are a traceback's or a listing's indentation.
  bool indented = !message.empty() && (message[0] == '\t' ||
                                       (message[0] == ' ' && (message.size() < 2 || message[1] == ' ' ||
                                                              message[1] == '\t')));
  return dialect == Dialect::Unknown && !message.empty() && !indented && !is_exception_line(message) &&
         frame_file(message).empty() && !opens_traceback(message, marks) && !is_chain_marker(message);
}

// When this line did not match a specific rule and continues the ones
// before (a message a terminal wrapped at its width, or a paste broke into
// lines), they are matched as one message; rules the earlier lines matched
// alone are left out.
void Analyzer::Impl::rejoin_cut_line(bool may_match) {
  bool specific = has_specific_match();
  bool join = may_match && !specific && !cut.message.empty() && cut.line + 1 == event.line &&
              may_continue(event.dialect, event.message);
  auto reset_cut = [this] {
    cut.message.clear();
    cut.spaced.clear();
    cut.rules.clear();
    cut.pieces.clear();
    cut.bytes = 0;
  };
  if (join) {
    std::string own = event.message;
    std::vector<Match> own_matches = std::move(matches);
    for (const std::string* previous : {&cut.message, &cut.spaced}) {
      event.message = *previous + (previous == &cut.spaced ? " " : "") + own;
      if (options.redact) redact_secrets(event.message);
      find_matches();
      // What the earlier lines already said alone is not said again.
      matches.erase(std::remove_if(matches.begin(), matches.end(),
                                   [&](const Match& m) {
                                     return std::find(cut.rules.begin(), cut.rules.end(), m.rule) !=
                                            cut.rules.end();
                                   }),
                    matches.end());
      if (has_specific_match()) {
        joined = std::move(cut.pieces);
        // The earlier lines were not redacted when they matched nothing alone.
        if (options.redact)
          for (EvidenceLine& piece : joined) redact_secrets(piece.text);
        reset_cut();
        return;
      }
    }
    event.message = std::move(own);
    matches = std::move(own_matches);
    // Not yet the whole message: a middle piece as long as the first goes on
    // being joined, up to a bound.
    if (cut.pieces.size() < kMaxCutPieces && may_be_cut(event.message) &&
        cut.bytes + event.text.size() <= kMaxCutBytes) {
      cut.message += event.message;
      cut.spaced += " " + event.message;
      for (const Match& m : matches) cut.rules.push_back(m.rule);
      cut.pieces.push_back(EvidenceLine{event.line, event.text});
      cut.bytes += event.text.size();
      cut.line = event.line;
      return;
    }
  }
  reset_cut();
  if (may_be_cut(event.message) && event.text.size() <= kMaxCutBytes) {
    cut.message = event.message;
    cut.spaced = event.message;
    cut.pieces.push_back(EvidenceLine{event.line, event.text});
    cut.bytes = event.text.size();
    cut.line = event.line;
    for (const Match& m : matches) cut.rules.push_back(m.rule);
  }
}

// A wrapper that quotes its cause ("Worker failed with error '<message>',
// please check the stack trace above"), in a capture named "inner": the
// quoted message is matched as a message of its own, and a specific rule
// that knows it names the cause on this line (causes outrank wrappers).
void Analyzer::Impl::match_quoted_cause() {
  constexpr std::size_t kShortestCause = 8;
  const std::string* inner = nullptr;
  for (const Match& m : matches) {
    const RuleSpec& rule = rules.rules[m.rule];
    if (!rule.wrapper) continue;
    auto it = m.captures.find("inner");
    if (it != m.captures.end() && it->second.size() >= kShortestCause) inner = &it->second;
  }
  if (inner == nullptr) return;
  bool cause_known = std::any_of(matches.begin(), matches.end(), [this](const Match& m) {
    const RuleSpec& rule = rules.rules[m.rule];
    return rule.tier == Tier::Rule && !rule.silent && !rule.wrapper;
  });
  if (cause_known) return;
  std::string quoted = *inner;
  std::string message = std::exchange(event.message, std::move(quoted));
  std::vector<Match> outer = std::move(matches);
  bool raw = std::exchange(raw_message, false);  // not the block's own text
  collect_matches();
  raw_message = raw;
  event.message = std::move(message);
  for (Match& m : matches) {
    const RuleSpec& rule = rules.rules[m.rule];
    if (rule.tier != Tier::Rule || rule.silent || rule.wrapper) continue;
    if (std::any_of(outer.begin(), outer.end(), [&m](const Match& o) { return o.rule == m.rule; })) continue;
    outer.push_back(std::move(m));
  }
  matches = std::move(outer);
}

bool Analyzer::Impl::has_specific_match() const {
  return std::any_of(matches.begin(), matches.end(), [this](const Match& m) {
    return rules.rules[m.rule].tier == Tier::Rule && !rules.rules[m.rule].silent;
  });
}

void Analyzer::Impl::find_matches() {
  collect_matches();
  match_quoted_cause();
  // A message inside a JSON error body or a repr ({"message": "... model\'s
  // context ..."}) is matched as its author wrote it when nothing specific
  // matched the escaped form.
  if (has_specific_match() || !detail::has_escaped_quotes(event.message)) return;
  raw_message = false;
  std::string escaped = std::exchange(event.message, detail::unescape_quotes(event.message));
  std::vector<Match> before = std::move(matches);
  collect_matches();
  if (!has_specific_match()) {
    event.message = std::move(escaped);
    matches = std::move(before);
  }
}

void Analyzer::Impl::collect_matches() {
  matches.clear();
  if (event.message.empty()) return;
  // A launch starting inside a cleared block would need the phase markers
  // cleared_candidates leaves out (the prefilter would have kept its banner).
  bool serving = run.phase >= kServingPhase && !options.include_silent;
  bool decided = false;
  if (in_cleared_block && serving) {
    decided = rules.cleared_candidates(event.message, candidates);
  } else if (block_potentials_hint != nullptr && raw_message && serving) {
    // A line of a block the prefilter left a few rules for: those rules'
    // own regexes, and the rules it leaves out. The message must be the
    // block's own text (not joined to the line before, not unescaped).
    decided = rules.cleared_candidates(event.message, candidates);
    for (int id : *block_potentials_hint) {
      auto index = static_cast<std::size_t>(rules.prefilter_rules[static_cast<std::size_t>(id)]);
      if (!retired.empty() && retired[index]) continue;
      const CompiledRule& rule = rules.compiled[index];
      if (!rule.regex || !rule.regex->get().ok()) {
        decided = false;
        break;
      }
      re2::StringPiece text(event.message.data(), event.message.size());
      if (rule.regex->get().Match(text, 0, text.size(), re2::RE2::UNANCHORED, nullptr, 0))
        candidates.push_back(static_cast<int>(index));
    }
    if (decided) {
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    } else {
      decided = rules.candidates(event.message, candidates);
    }
  } else {
    decided = rules.candidates(event.message, candidates);
  }
  if (!decided || candidates.empty()) return;
  // A header-less line belongs to the server the stream was last seen
  // writing, else to the one its tracebacks' paths name.
  Dialect effective = event.dialect != Dialect::Unknown ? event.dialect
                      : stream_dialect != Dialect::Unknown ? stream_dialect
                                                          : run.server;
  for (int candidate : candidates) {
    auto index = static_cast<std::size_t>(candidate);
    if (!rules.applies_to(index, effective)) continue;
    const CompiledRule& compiled = rules.compiled[index];
    // Serving-phase markers match most lines of a busy log; once the run is
    // in that phase they have nothing left to do.
    if (compiled.phase_only && !options.include_silent && run.phase >= compiled.phase_index)
      continue;
    if (!retired.empty() && retired[index] && !options.include_silent) continue;
    if (!rules.extract(index, event.message, scratch_captures)) continue;
    matches.push_back(Match{index, scratch_captures});
  }
}

}  // namespace logrx
