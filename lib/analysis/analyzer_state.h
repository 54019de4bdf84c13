// SPDX-License-Identifier: MIT
// The state of one stream's analysis, shared by the analyzer's stages:
//   lines.cc     per-line processing, matching, the light path, cut lines
//   events.cc    multi-line events (tracebacks, error records)
//   runs.cc      launches, timestamps, the server, facts
//   findings.cc  expressions, building, holding and merging findings
//   tiers.cc     structure and lexical rules, the message's own hints
//   analyzer.cc  the public API and the end of the stream
#pragma once

#include <chrono>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include "analysis/analyzer_impl.h"
#include "analysis/block_survey.h"
#include "analysis/line_shapes.h"
#include "analysis/hints.h"
#include "logrx/analyzer.h"
#include "logrx/decompress.h"
#include "logrx/line.h"
#include "match/rulebook_impl.h"
#include "match/template.h"
#include "parse/config_dump.h"
#include "parse/envelope.h"
#include "parse/line_parser_internal.h"
#include "util/text.h"

namespace logrx {

using detail::Value;

struct Analyzer::Impl {
  Impl(Rulebook book, AnalyzerOptions opts)
      : rulebook(std::move(book)),
        rules(RulebookAccess::impl(rulebook)),
        options(std::move(opts)),
        splitter(options.max_line_bytes),
        envelope(options.max_line_bytes, options.stream_name) {
    if (!options.ready_pattern.empty()) {
      re2::RE2::Options re_options;
      re_options.set_log_errors(false);
      ready = std::make_unique<re2::RE2>(options.ready_pattern, re_options);
    }
    if (auto known = parse_dialect(options.server)) stream_dialect = *known;
    created_at = static_cast<std::int64_t>(std::time(nullptr));
    if (options.decompress) decoder = std::make_unique<Decompressor>();
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
    std::map<std::string, std::string> fact_units;  // sizes: the unit the line printed
    std::size_t fact_bytes = 0;  // of facts' names and values, against max_fact_bytes_per_run
    std::set<std::string> banners;
    bool has_timestamp = false;
    Timestamp last_timestamp;
    std::int64_t last_seconds = 0;  // last_timestamp in seconds (in its own year)
    std::string first_timestamp_text;
    std::string last_timestamp_text;
    Timestamp first_timestamp;
    // Times of lines that had none of their own, from a shipper's envelope:
    // shown when the run has no server timestamps, never compared with them
    // (the envelope may be UTC and the server local time).
    std::string first_envelope_timestamp;
    std::string last_envelope_timestamp;
    Timestamp first_envelope_time;
    Timestamp last_envelope_time;
    std::uint64_t first_line = 0;
    std::uint64_t last_line = 0;
    std::uint64_t lines = 0;
    std::size_t errors = 0;
    std::set<std::size_t> fired_fact_rules;
    // The servers whose own lines (by their header) recorded facts: a facts
    // rule of one of them applies even when the run is another's (two
    // servers writing one stream).
    std::vector<Dialect> fact_dialects;
    std::size_t first_finding = 0;  // index into report.findings
    std::uint64_t last_cause_line = 0;  // last specific error or fatal finding
    // The run's lines end inside a traceback: frames, and neither the
    // exception line nor a raise line after them (a paste cut short, or a
    // process that died while printing).
    bool ended_in_traceback = false;
  };

  struct Event {
    bool open = false;
    bool traceback = false;
    // A C++ exception that ended the process ("terminate called after
    // throwing an instance of 'c10::Error'"): its what() and frames follow.
    bool terminate = false;
    // An error record that may announce the traceback on the next line
    // ("ERROR:    Exception in ASGI application", logger.exception's
    // message): the traceback joins it, or the event closes with it alone.
    bool lead_in = false;
    Dialect dialect = Dialect::Unknown;
    std::int64_t pid = -1;
    std::string source;
    std::string process;
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t lines = 0;
    bool after_exception = false;
    bool in_frames = false;  // the last line was a frame or the source under one
    bool in_destructor = false;  // a frame is an object's __del__
    bool logged_below_error = false;  // the last line's level: a warning or below
    std::string first_exception;
    std::string last_exception;
    std::uint64_t last_exception_line = 0;
    std::vector<std::string> frames;  // files of the innermost traceback frames
    // The innermost "raise X(" source line, for a paste cut before the
    // exception line it would have printed.
    std::string raised_type;
    std::uint64_t raised_line = 0;
    std::string raised_message;
    std::string raised_text;
    std::string raised_level;
    std::string raised_timestamp;
    // A traceback pasted indented as a whole ("  Traceback (most recent call
    // last):"): the spaces its lines carry in front of Python's own layout.
    std::size_t indent = 0;

    // Back to closed, keeping the strings' storage: this runs on every line.
    void reset() {
      frames.clear();
      indent = 0;
      raised_type.clear();
      raised_line = 0;
      last_exception_line = 0;
      open = false;
      traceback = false;
      terminate = false;
      lead_in = false;
      dialect = Dialect::Unknown;
      pid = -1;
      source.clear();
      process.clear();
      start = 0;
      end = 0;
      lines = 0;
      after_exception = false;
      in_frames = false;
      in_destructor = false;
      logged_below_error = false;
      first_exception.clear();
      last_exception.clear();
    }
  };

  std::unique_ptr<re2::RE2> ready;  // user-defined ready marker
  Rulebook rulebook;  // keeps `rules` alive
  const Rulebook::Impl& rules;
  AnalyzerOptions options;
  LineSplitter splitter;
  detail::EnvelopeDecoder envelope;
  const detail::EnvelopeMeta* envelope_meta = nullptr;  // of the line being processed
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
  // Findings of the open event. The findings of one line (often dozens) share
  // its text: each keeps an index into held_text instead of its own copy of a
  // line that may be 64 KB long.
  static constexpr std::size_t kNoText = static_cast<std::size_t>(-1);
  struct Held {
    Finding finding;
    std::size_t message = kNoText;      // index into held_text, or kept in the finding
    std::vector<std::size_t> evidence;  // per evidence line, likewise
  };
  std::vector<Held> held;
  std::vector<std::string> held_text;
  std::size_t held_bytes = 0;  // of held findings and held_text, against max_held_bytes
  // The index of `text` in held_text, moved there unless one of the latest
  // entries already holds it; kNoText leaves short text in the finding.
  std::size_t share_held_text(std::string& text);
  std::size_t stored_finding_bytes = 0;  // of report.findings and merge keys
  bool backwards_noted = false;          // timestamps going back reported once
  // Compressed input (options.decompress): the decoder tells the format
  // from the first bytes and passes text through.
  std::unique_ptr<Decompressor> decoder;
  bool input_failed = false;  // undecodable data: the rest of the input is ignored
  void feed_text(std::string_view bytes);   // decoded bytes: lines, blocks, prefilter
  // feed_text with the surveys of bytes' blocks made ahead (feed_all), in
  // block order; a survey that does not fit its block is ignored.
  void feed_blocks(std::string_view bytes, const detail::BlockSurvey* surveys, std::size_t count);
  void feed_block(std::string_view block, const detail::BlockSurvey* survey);
  // feed_block's one pass: the bytes of `block` it consumed (all, unless it
  // split the block around a line only the full path can take).
  std::size_t feed_block_part(std::string_view block, const detail::BlockSurvey* survey);
  static bool survey_fits(const detail::BlockSurvey* survey, std::string_view lines);
  bool can_split(std::string_view block, const detail::BlockSurvey& survey) const;
  std::size_t split_block(std::string_view block, const detail::BlockSurvey& survey);
  // Whether the light path would take the first line of `lines` the full
  // way with every line after it (process_unmatched_block).
  bool needs_full_path(std::string_view lines) const;
  // Complete or partial lines down the full path (matched when may_match).
  void run_lines(std::string_view lines, bool may_match, bool plain);
  void feed_checked_block(std::string_view block, const detail::BlockSurvey& survey, bool plain);
  // The stateless part of a block's light path (headers, lines the tiers must
  // see), of the complete lines `whole`.
  // With keep_lines, each line is kept too (out.lines), not only the summary.
  // `known_marks`: find_marks of a text holding `whole` (its block), when
  // already found; a mark of the larger text only enables a line's check.
  static void survey_lines(std::string_view whole, std::size_t max_line_bytes,
                           detail::BlockSurvey& out, bool keep_lines,
                           const detail::TextMarks* known_marks = nullptr);
  bool apply_light(const detail::BlockSurvey& survey);
  // Everything a survey holds, for a block of a stream in passthrough (no
  // envelope). `retired_hint` (by rule index, may be empty) is what the
  // stream had retired when the survey began: its potentials are not checked
  // line by line, and the analysis ignores the check if one is live again.
  static void survey_block(std::string_view block, const Rulebook::Impl& rules,
                           Rulebook::Impl::PrefilterScratch& scratch, std::size_t max_line_bytes,
                           const std::vector<char>& retired_hint, detail::BlockSurvey& out);
  // Whether the line-by-line check of a survey's potentials still holds for
  // the stream's retired rules now.
  bool check_holds(const detail::BlockSurvey& survey) const;
  void feed_parallel(std::string_view bytes, unsigned threads);
  std::vector<detail::SurveyWindow> survey_ring;  // feed_parallel's, kept between calls
  // Sets survey.potentials_cleared when no surveyed line matches any of
  // `potentials` (few, see kPotentialsChecked).
  static void clear_potentials(const Rulebook::Impl& rules, const std::vector<int>& potentials,
                               detail::BlockSurvey& survey);
  void note_compression();
  void fail_input();
  // The latest timestamp of the stream that printed its year (a shipper's
  // envelope, a dated dialect): the year of those that print none.
  struct {
    int year = 0;
    int month = 0;
  } dated;
  std::int64_t created_at = 0;  // Unix seconds when the analyzer was made ("now" for the year)
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
    std::string timestamp_iso;
  };
  std::vector<Candidate> fallback;
  bool line_has_cause = false;  // the current line produced a specific, non-wrapper finding
  // The previous line, when it may have been cut, or the lines before this
  // one that a terminal or a paste cut one message into, joined without a
  // space (a terminal's wrap) and with one (a paste's line breaks).
  struct {
    std::string message;
    std::string spaced;
    std::vector<std::size_t> rules;  // the rules those lines matched alone
    std::vector<EvidenceLine> pieces;  // their line numbers and texts
    std::size_t bytes = 0;             // the pieces' texts, bounded by kMaxCutBytes
    std::uint64_t line = 0;            // the last of them
  } cut;
  static constexpr std::size_t kMaxCutPieces = 3;   // a message cut into up to four lines
  static constexpr std::size_t kMaxCutBytes = 8192;
  std::vector<char> retired;       // by rule index: retired in this launch (retire_after)
  const std::map<std::string, Value>* lookup_overrides = nullptr;  // refine_serverless_findings
  std::vector<EvidenceLine> joined;  // the lines before this one that its message was joined to
  detail::BlockSurvey local_survey;     // process_unmatched_block's, when none was made ahead
  detail::BlockSurvey segment_survey;   // feed_checked_block's, for each run of lines between hits
  detail::BlockSurvey settled_survey;   // process_unmatched_block's, of the lines after those it took the full way
  std::vector<int> live_potentials;     // feed_block's: the prefilter's, less the retired rules
  bool block_needs_matching = false;   // why process_unmatched_block declined
  // The lines being processed are in a block the prefilter cleared: only
  // the rules it leaves out can match them (Rulebook::Impl::cleared_candidates).
  bool in_cleared_block = false;
  // The lines being matched are in a block the prefilter left these few
  // rules (prefilter ids) for; `raw_message` while the line's own message,
  // which the prefilter saw, is the one matched.
  const std::vector<int>* block_potentials_hint = nullptr;
  std::vector<int> hinted_potentials;
  bool raw_message = false;
  // Sets block_potentials_hint to `potentials` when few enough of them are
  // live for their own regexes to be cheaper than the whole selector.
  void hint_potentials(const std::vector<int>& potentials);
  std::uint64_t serving_bytes = 0;     // fed while the run was serving
  std::uint64_t prefiltered_lines = 0;
  detail::DayClock day_clock;
  mutable std::vector<ScanDiagnostic> template_problems;  // with options.check_templates
  mutable std::size_t template_problems_capped = 0;      // past max_diagnostics
  // The run's merge key -> the stored finding and the ranks it lists (a hash
  // set: a linear search per line made 80,000 lines take 18 s).
  struct Merged {
    std::size_t index = 0;
    std::unordered_set<std::string> ranks;
  };
  std::unordered_map<std::string, Merged> merged;
  Dialect stream_dialect = Dialect::Unknown;
  bool exit_noted = false;  // the caller saw the process end (note_exit)
  std::chrono::steady_clock::time_point last_input = std::chrono::steady_clock::now();  // poll()
  bool finished = false;

  // ---- expressions -----------------------------------------------------------

  std::optional<Value> lookup(const std::string& name,
                              const std::map<std::string, std::string>* captures,
                              const std::optional<Value>& item_value) const;
  detail::Lookup lookup_for(const std::map<std::string, std::string>* captures,
                            std::optional<Value> item_value = std::nullopt) const;
  bool condition_holds(const std::optional<detail::Expression>& when,
                       const std::map<std::string, std::string>* captures) const;

  // ---- runs ------------------------------------------------------------------

  void start_run(int number);
  void close_run();
  RunInfo run_info() const;  // the current launch as the report states it
  // A wrapper ("Scheduler hit an exception", "Engine core initialization
  // failed") points to the cause: the nearest non-wrapper error of the run,
  // inside its own event first. It never outranks that cause.
  void link_wrappers();
  void demote_explained_findings();
  bool timestamp_went_backwards();
  std::int64_t seconds_of(const Timestamp& ts) { return day_clock.seconds_of(ts); }
  bool jumped_back(const Timestamp& now_ts, const Timestamp& last_ts, std::int64_t last_seconds) {
    return day_clock.jumped_back(now_ts, last_ts, last_seconds);
  }
  // The line ends the open traceback with its exception (whatever its name).
  bool ends_traceback(const std::string& message) const {
    if (detail::is_exception_line(message)) return true;
    return open_event.open && open_event.traceback && !open_event.frames.empty() &&
           !open_event.after_exception && event.level.empty() && detail::is_traceback_tail(message);
  }
  // Names of "(Name pid=N)" prefixes seen around another server's lines (Ray's).
  std::set<std::string> foreign_prefixes;
  static constexpr std::size_t kMaxForeignPrefixes = 64;
  void unwrap_foreign_prefix();
  void offer_fixes_per_server();
  Dialect server_named_by_findings() const;
  void note_dated(const Timestamp& ts) {
    if (ts.year != 0) dated = {ts.year, ts.month};
  }
  // `ts` in ISO 8601, its year inferred when it has none; "" for no time.
  std::string iso_time(const Timestamp& ts) const;
  // The server of the run: the first line dialect seen, except that Ollama
  // passes llama.cpp's runner output through (Ollama wins), and a log without
  // headers still names its server in the paths of its tracebacks.
  void note_server(Dialect dialect, std::string_view message);

  // ---- blocks no rule can match ----------------------------------------------

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
  // `survey`, when given, was made of `block` ahead (else one is made here).
  bool process_unmatched_block(std::string_view block, const detail::BlockSurvey* survey);

  // ---- events ----------------------------------------------------------------

  bool continues_event() const;
  void open_new_event();
  void track_event();
  void close_event();
  void offer_raised_exception();
  void match_quoted_cause();
  // A line of a traceback pasted indented as a whole, read without the
  // indent (and the trailing spaces a padded paste adds).
  void dedent_traceback_line();

  // ---- findings --------------------------------------------------------------

  // Text for people; an unfilled reference is left out, and reported when
  // rules are being tested.
  std::string display(const std::string& text, const detail::Lookup& lookup,
                      const std::string& rule_id, const std::string& what) const;
  Finding make_finding(std::size_t index, const std::map<std::string, std::string>* captures,
                       std::uint64_t line) const;
  std::vector<RemediationItem> build_remediation(std::size_t index,
                                                 const std::map<std::string, std::string>* captures) const;
  void refine_serverless_findings();
  // Marks each item applicable or advice and fits its value to the flag's
  // range, for the finding's server (one choke point: every finding passes).
  void check_remediation(Finding& f) const;
  void add_finding(Finding f);
  // Merges the same message from several ranks (or repeated) into one finding.
  void store(Finding f);

  // ---- lines -----------------------------------------------------------------

  void record_fact(const std::string& name, Value value);
  // Keeps a diagnostic unless max_diagnostics are kept already (then counts it).
  // The unit a size fact was printed in: the one after its captured number
  // on the line ("56.91 GiB"), "" when the line shows none.
  static std::string unit_of_fact(std::string_view message, const Value& value,
                                  const std::map<std::string, std::string>& captures);
  void add_diagnostic(std::uint64_t line, std::string message);
  void read_config_dump(const std::string& text);
  // One physical line of a stream that has (or may have) a shipper's
  // envelope: unwrapped, then processed.
  void process_enveloped(std::string_view raw, bool truncated);
  void process_unwrapped(std::string_view text, bool truncated, const detail::EnvelopeMeta* meta);
  // Gives event the envelope's origin, and its time when the line has none.
  void apply_envelope();
  void process(std::string_view raw, bool truncated, bool may_match = true, bool plain = false);

  // ---- lines cut by a terminal -----------------------------------------------

  // A long line that may have been wrapped by a terminal or a paste: its
  // message goes on in the next line, which has no header.
  // `marks`: those of the block the message is in, when it was scanned (find_marks).
  static bool may_be_cut(std::string_view message, const detail::TextMarks& marks = detail::kAnyMarks);
  static bool may_continue(Dialect dialect, std::string_view message,
                           const detail::TextMarks& marks = detail::kAnyMarks);
  // When this line did not match a specific rule and continues the one
  // before, the two are matched as one message; rules the first line matched
  // alone are left out.
  void rejoin_cut_line(bool may_match);

  // ---- structure and lexical tiers -------------------------------------------

  static bool is_cause(const Finding& f);
  // Moves the structure and lexical matches of this line out of `matches`
  // into the candidates. A line a specific rule recognised, and a line that
  // reports no error (a warning, an info line), offers none.
  void take_fallback_matches();
  // A headerless line that reads as an error report ("Error: ...",
  // "error: unrecognized arguments", "FAILED ...").
  static bool reports_error(std::string_view message, const detail::TextMarks& marks = detail::kAnyMarks);
  // A record that may announce a traceback on the next line (see Event::lead_in).
  static bool announces_traceback(std::string_view level, std::string_view message);
  // Turns the best candidate of the event (or line) into a finding when no
  // specific rule explained it: structure over lexical, then priority, then
  // the final exception, then the latest line.
  void resolve_fallback(bool in_event);
  // The server whose flag list knows `flag`: the run's server first, else
  // the only server that has it.
  std::string server_knowing(const std::string& server, const std::string& name) const;
  static std::string number_text(double v);
  static std::size_t edit_distance(std::string_view a, std::string_view b);
  // The known flag of `server` closest to `flag` (at most two edits, or one
  // that extends it), "" when none is close.
  std::string nearest_flag(const std::string& server, const std::string& flag) const;
  // What the message itself says about its fix: the flags and variables it
  // names, with values where it states a comparison. A message whose own
  // numbers contradict its claim gets a note instead of a value.
  void add_hints(Finding& f) const;
  void find_matches();
  void collect_matches();  // find_matches without the unescaped retry
  bool has_specific_match() const;  // a non-silent rule-tier match among `matches`
  // Correlation rules fire once per run, on the line whose facts completed
  // their condition.
  void evaluate_fact_rules();
  void finish_stream();
};

}  // namespace logrx
