// SPDX-License-Identifier: MIT
// The per-stream analyzer. Per line: find the run it belongs to, attach it
// to the open multi-line event (traceback), match the rules, record facts and
// phases, and hold findings until their event closes so each one knows its
// line range; then merge the same error from several ranks into one finding.
// The stages live in lines.cc, events.cc, runs.cc, findings.cc and tiers.cc
// (see analyzer_state.h); this file is the public API.
#include "analysis/analyzer_state.h"
#include "analysis/redaction.h"

namespace logrx {

using namespace detail;

void Analyzer::Impl::finish_stream() {
  splitter.finish([this](std::string_view line, bool truncated) {
    // The stream ended without a newline: the last line may have been cut
    // mid-word (a killed process, a copy from a terminal).
    if (envelope.passthrough()) {
      process(line, true);
      if (!truncated) --report.summary.truncated_lines;
      return;
    }
    envelope.line(line, true, [&](std::string_view text, bool piece_cut, const detail::EnvelopeMeta* meta) {
      process_unwrapped(text, piece_cut, meta);
      if (piece_cut && !truncated) --report.summary.truncated_lines;
    });
  });
  envelope.finish([this](std::string_view text, bool piece_cut, const detail::EnvelopeMeta* meta) {
    process_unwrapped(text, piece_cut, meta);
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
  for (ScanDiagnostic& d : template_problems) add_diagnostic(d.line, std::move(d.message));
  report.summary.capped.diagnostics += template_problems_capped;
  // The choke point for the report; its findings passed the one for the
  // finding callback (store) or were redacted where they were added (stale output).
  if (options.redact) detail::redact_report_except_findings(report);
  // After the choke point: the copy is of redacted items.
  report.remediation_by_file = {{options.stream_name, report.remediation}};
  report.files = {FileSummary{options.stream_name, report.summary, report.input_error}};
}


Analyzer::Analyzer(Rulebook rulebook, AnalyzerOptions options)
    : impl_(std::make_unique<Impl>(std::move(rulebook), std::move(options))) {}

Analyzer::~Analyzer() = default;
Analyzer::Analyzer(Analyzer&&) noexcept = default;
Analyzer& Analyzer::operator=(Analyzer&&) noexcept = default;

void Analyzer::on_finding(FindingCallback callback) { impl_->callback = std::move(callback); }

void Analyzer::on_unmatched_line(LineCallback callback) {
  impl_->unmatched_callback = std::move(callback);
}

// A stream that starts with a compression format's magic number is decoded
// first (the decoder holds at most its first 10 bytes to tell).
void Analyzer::feed(std::string_view bytes) {
  Impl& impl = *impl_;
  impl.last_input = std::chrono::steady_clock::now();
  if (impl.finished || impl.input_failed) return;
  if (!impl.decoder) {
    impl.feed_text(bytes);
    return;
  }
  if (!impl.decoder->feed(bytes, [&impl](std::string_view text) { impl.feed_text(text); })) impl.fail_input();
  impl.note_compression();
}

void Analyzer::Impl::note_compression() {
  if (report.summary.compression.empty() && decoder->format() != Compression::None)
    report.summary.compression = std::string(to_string(decoder->format()));
}

void Analyzer::Impl::fail_input() {
  input_failed = true;
  report.input_error = decoder->error() + "; the report covers the lines decoded before it";
}

void Analyzer::Impl::feed_text(std::string_view bytes) { feed_blocks(bytes, nullptr, 0); }

void Analyzer::Impl::feed_blocks(std::string_view bytes, const detail::BlockSurvey* surveys,
                                 std::size_t count) {
  std::size_t index = 0;
  for (std::size_t start = 0; start < bytes.size(); ++index) {
    std::size_t end = detail::block_end(bytes, start);
    const detail::BlockSurvey* survey = index < count ? &surveys[index] : nullptr;
    std::string_view block = bytes.substr(start, end - start);
    if (survey != nullptr &&
        (survey->block.data() != block.data() || survey->block.size() != block.size()))
      survey = nullptr;
    feed_block(block, survey);
    start = end;
  }
}

void Analyzer::Impl::run_lines(std::string_view lines, bool may_match, bool plain) {
  // A line that began in an earlier block is always matched in full, and
  // its earlier part was not checked for plainness nor by the prefilter.
  bool first_line_spans = splitter.has_pending();
  splitter.feed(lines, [&](std::string_view line, bool truncated) {
    const std::vector<int>* hint = block_potentials_hint;
    if (first_line_spans) block_potentials_hint = nullptr;
    if (envelope.passthrough())
      process(line, truncated, may_match || first_line_spans, plain && !first_line_spans);
    else
      process_enveloped(line, truncated);
    block_potentials_hint = hint;
    first_line_spans = false;
  });
}

void Analyzer::Impl::hint_potentials(const std::vector<int>& potentials) {
  // Beyond this many, trying each rule's regex costs more than the selector.
  constexpr std::size_t kHintedPotentials = 8;
  block_potentials_hint = nullptr;
  std::size_t live = 0;
  for (int id : potentials)
    if (retired.empty() || !retired[static_cast<std::size_t>(rules.prefilter_rules[static_cast<std::size_t>(id)])])
      ++live;
  if (live > kHintedPotentials) return;
  // Retired rules too: a restart inside the block revives them.
  hinted_potentials = potentials;
  block_potentials_hint = &hinted_potentials;
}

void Analyzer::Impl::feed_block(std::string_view block, const detail::BlockSurvey* survey) {
  if (run.phase == kServingPhase) serving_bytes += block.size();
  // A block split around a line only the full path can take goes on as a
  // block of its own.
  while (!block.empty()) {
    block.remove_prefix(feed_block_part(block, survey));
    survey = nullptr;
  }
}

std::size_t Analyzer::Impl::feed_block_part(std::string_view block, const detail::BlockSurvey* survey) {
  // A line that began in an earlier block is matched in full (its start
  // was not seen with it): alone, so that the rest is a block like any other.
  if (splitter.has_pending()) {
    std::size_t newline = block.find('\n');
    std::size_t end = newline == std::string_view::npos ? block.size() : newline + 1;
    run_lines(block.substr(0, end), true, false);
    return end;
  }
  // Once a run is serving, most lines are batch statistics and access logs
  // that only phase markers match. One pass of the literal prefilter over a block
  // of lines tells whether any line in it can matter; if none can, the lines
  // are still parsed (runs, events, timestamps) but not matched. Only plain
  // ASCII blocks qualify: sanitising could otherwise change what matches.
  bool may_match = true;
  bool checked = true;  // a survey's line-by-line check of its potentials holds
  // Without a survey, one pass finds whether the block is plain and the
  // marks a survey of its lines uses.
  detail::TextMarks block_marks = detail::kAnyMarks;
  if (survey == nullptr) block_marks = detail::find_marks(block);
  const detail::TextMarks* known_marks = survey == nullptr ? &block_marks : nullptr;
  bool plain = survey != nullptr ? survey->plain : !block_marks.unclean;
  // The prefilter is built on first use. From the build's table it costs a
  // millisecond or two; a rulebook the table does not know builds it in
  // tens of milliseconds: only once the stream has shown enough serving
  // traffic for it to pay off, or once it is there (feed_all builds it ahead
  // on another thread).
  constexpr std::uint64_t kPrefilterAfterBytes = 256 * 1024;
  // Matching a line in full while the selector's automaton is still cold
  // costs tens of microseconds: in a large input, the first 256 KB so
  // matched cost more than building the prefilter.
  constexpr std::uint64_t kLargeInputBytes = 4u << 20;
  // The prefilter reads the raw bytes: an envelope's escapes would hide
  // what it looks for.
  bool prefilter_due = rules.prefilter_cheap() || serving_bytes > kPrefilterAfterBytes ||
                       options.input_bytes.value_or(0) >= kLargeInputBytes ||
                       rules.prefilter_built.load(std::memory_order_acquire);
  bool prefiltered = plain && envelope.passthrough() && run.phase == kServingPhase && prefilter_due &&
                     !options.include_silent && !unmatched_callback && rules.has_prefilter();
  if (prefiltered) {
    if (survey != nullptr && survey->potentials_known) {
      checked = check_holds(*survey);
      may_match = !(checked && survey->potentials_cleared) && rules.any_live(survey->potentials, retired);
    } else {
      may_match = rules.block_may_match(block, prefilter_scratch, retired);
      // A few live rules left: are they on any line at all?
      if (may_match) {
        live_potentials.clear();
        for (int id : prefilter_scratch.potentials)
          if (retired.empty() || !retired[static_cast<std::size_t>(rules.prefilter_rules[static_cast<std::size_t>(id)])])
            live_potentials.push_back(id);
        std::size_t last = block.rfind('\n');
        if (live_potentials.size() <= detail::kPotentialsChecked && last != std::string_view::npos) {
          local_survey.clear();
          local_survey.block = block;
          survey_lines(block.substr(0, last + 1), options.max_line_bytes, local_survey, true, known_marks);
          clear_potentials(rules, live_potentials, local_survey);
          survey = &local_survey;
          if (local_survey.potentials_cleared) may_match = false;
        }
      }
    }
  }
  struct Unhint {
    const std::vector<int>*& hint;
    ~Unhint() { hint = nullptr; }
  } unhint{block_potentials_hint};
  // Whatever path its lines take, those matched need only the rules the
  // prefilter left for the block.
  if (prefiltered) {
    hint_potentials(survey != nullptr && survey->potentials_known ? survey->potentials
                                                                   : prefilter_scratch.potentials);
  }
  if (may_match && checked && survey != nullptr && survey->potentials_checked) {
    feed_checked_block(block, *survey, plain);
    return block.size();
  }
  if (may_match) {
    if (prefiltered && survey != nullptr && can_split(block, *survey)) return split_block(block, *survey);
    run_lines(block, true, plain);
    return block.size();
  }
  // No rule can match a line of this block. An unfinished last line waits
  // for the next buffer, where it will be matched in full; the complete
  // lines before take the light path.
  std::size_t last = block.rfind('\n');
  std::string_view whole = last == std::string_view::npos ? std::string_view{} : block.substr(0, last + 1);
  std::string_view tail = block.substr(whole.size());
  // A block with an error line is split around it (or, when it cannot be,
  // matched in full): the structure and lexical rules the prefilter leaves
  // out may still speak on that line.
  if (!whole.empty() && !survey_fits(survey, whole)) {
    local_survey.clear();
    survey_lines(whole, options.max_line_bytes, local_survey, false, known_marks);
    survey = &local_survey;
  }
  if (!whole.empty() && can_split(whole, *survey)) return split_block(whole, *survey);
  if (!whole.empty() && !process_unmatched_block(whole, survey))
    run_lines(whole, block_needs_matching, plain);
  if (!tail.empty()) run_lines(tail, false, plain);
  return block.size();
}

bool Analyzer::Impl::survey_fits(const detail::BlockSurvey* survey, std::string_view lines) {
  return survey != nullptr && survey->lines_known && survey->lines_range.data() == lines.data() &&
         survey->lines_range.size() == lines.size();
}

bool Analyzer::Impl::can_split(std::string_view block, const detail::BlockSurvey& survey) const {
  return survey.lines_known && survey.needs_matching && !survey.declined &&
         survey.needs_from != detail::BlockSurvey::kNoSplit && survey.lines_range.data() == block.data() &&
         survey.needs_from < survey.lines_range.size() && !splitter.has_pending();
}

// A block of a serving run that the prefilter left few or no rules for,
// where a line needs the full path (an error, an exception: the structure and
// lexical tiers read it): the lines before it are fed as a block of their
// own, it goes the full way, and the caller feeds the rest as a new block.
// Returns the bytes consumed.
std::size_t Analyzer::Impl::split_block(std::string_view block, const detail::BlockSurvey& survey) {
  // Read before the lines before are fed: the survey may be local_survey,
  // which feeding them reuses.
  std::size_t from = survey.needs_from;
  std::size_t lines = survey.needs_lines;
  std::string_view range = survey.lines_range;
  // They hold no such line: they are not split again.
  for (std::string_view before = block.substr(0, from); !before.empty();)
    before.remove_prefix(feed_block_part(before, nullptr));
  std::size_t end = from;
  for (std::size_t i = 0; i < lines && end < range.size(); ++i) {
    std::size_t newline = range.find('\n', end);
    end = newline == std::string_view::npos ? range.size() : newline + 1;
  }
  run_lines(block.substr(from, end - from), true, true);
  return end;
}

// A block where the prefilter left a few rules and some of its lines match
// them: those lines are matched in full; the runs of lines between them,
// which no rule can match, take the light path.
void Analyzer::Impl::feed_checked_block(std::string_view block, const detail::BlockSurvey& survey,
                                        bool plain) {
  const std::vector<detail::SurveyedLine>& lines = survey.lines;
  auto bytes_of = [&](std::size_t first, std::size_t last) {  // lines [first, last), newlines included
    const char* begin = lines[first].text.data();
    const char* end = lines[last - 1].text.data() + lines[last - 1].text.size() + 1;
    return std::string_view(begin, static_cast<std::size_t>(end - begin));
  };
  auto light = [&](std::size_t first, std::size_t last) {
    if (first == last) return;
    // A matched line may have started a launch, whose start-up lines the
    // phase markers (which the prefilter leaves out) must see.
    if (run.phase != kServingPhase) {
      run_lines(bytes_of(first, last), true, plain);
      return;
    }
    // Surveyed again as a block of its own (its summary is not the block's),
    // in a survey of its own: local_survey may be the one whose lines these are.
    std::string_view part = bytes_of(first, last);
    segment_survey.clear();
    survey_lines(part, options.max_line_bytes, segment_survey, false);
    if (!process_unmatched_block(part, &segment_survey)) run_lines(part, block_needs_matching, plain);
  };
  std::size_t start = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].hits) continue;
    light(start, i);
    run_lines(bytes_of(i, i + 1), true, plain);
    start = i + 1;
  }
  light(start, lines.size());
  std::string_view tail = block.substr(survey.lines_range.size());
  if (!tail.empty()) run_lines(tail, false, plain);
}

void Analyzer::feed_line(std::string_view line) {
  impl_->last_input = std::chrono::steady_clock::now();
  bool truncated = line.size() > impl_->options.max_line_bytes;
  std::string_view kept = truncated ? line.substr(0, impl_->options.max_line_bytes) : line;
  if (impl_->envelope.passthrough())
    impl_->process(kept, truncated);
  else
    impl_->process_enveloped(kept, truncated);
}

Report Analyzer::finish() {
  if (!impl_->finished) {
    if (impl_->decoder && !impl_->input_failed) {
      if (!impl_->decoder->finish([this](std::string_view text) { impl_->feed_text(text); }))
        impl_->fail_input();
      impl_->note_compression();
    }
    impl_->finish_stream();
    impl_->finished = true;
  }
  return impl_->report;
}

void Analyzer::note_exit() { impl_->exit_noted = true; }

void Analyzer::flush_idle() {
  if (impl_->finished) return;
  impl_->close_event();
}

bool Analyzer::poll(std::chrono::steady_clock::time_point now) {
  if (impl_->finished || !impl_->open_event.open) return false;
  if (now - impl_->last_input < impl_->options.quiet_period) return false;
  impl_->close_event();
  return true;
}

std::uint64_t Analyzer::lines() const noexcept { return impl_->report.summary.lines; }

std::uint64_t Analyzer::prefiltered_lines() const noexcept { return impl_->prefiltered_lines; }

std::string Analyzer::phase() const { return kPhases[impl_->run.phase]; }

bool Analyzer::ready() const noexcept { return impl_->run.reached_ready; }

std::string Analyzer::server() const {
  Dialect d = impl_->run.server != Dialect::Unknown ? impl_->run.server : impl_->stream_dialect;
  return std::string(to_string(d));
}

RunInfo Analyzer::current_run() const { return impl_->run_info(); }

bool Analyzer::ok(std::string* error) const {
  if (!impl_->ready || impl_->ready->ok()) return true;
  if (error != nullptr) *error = "--ready-pattern does not compile: " + impl_->ready->error();
  return false;
}

}  // namespace logrx
