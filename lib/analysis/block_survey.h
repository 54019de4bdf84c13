// SPDX-License-Identifier: MIT
// What the light path needs to know about a block of lines that it can find
// without the stream's state: whether the block is plain text, which rules
// the prefilter leaves possible in it, and its lines' headers. Being
// stateless, a survey can be made ahead of the analysis, on other threads
// (Analyzer::feed_all); the analysis then applies it in line order.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "parse/line_parser_internal.h"

namespace logrx::detail {

struct SurveyedLine {
  std::string_view text;
  HeaderView header;
  bool hits = false;  // matches one of the block's potentials (clear_potentials)
};

// What the light path does with a block's lines, found by the survey so
// that applying it costs the same whatever the number of lines: which line
// the full path takes over from, and what the lines before it change in the
// run (counts, server, timestamps). It holds for a block entered with no
// event open, or with an SGLang event open that its first line does not
// continue (first_unknown false); the analysis handles the other cases.
struct LightSummary {
  bool known = false;
  std::size_t lines = 0;
  // The first line taken the full way, and its offset in lines_range;
  // from it on, lines are matched too when match_rest.
  std::size_t full_from = 0;
  std::size_t full_from_offset = 0;
  bool match_rest = false;
  bool first_unknown = false;  // the first line has no header
  bool first_has_timestamp = false;
  Timestamp first_timestamp;  // of the first line
  // The timestamps the light path checks (lines up to full_from): a jump
  // back between two of them, and the first of them.
  bool jumps_back = false;
  bool checked_has_timestamp = false;
  Timestamp first_checked;
  // The lines before full_from.
  Dialect last_dialect = Dialect::Unknown;     // their last header's
  Dialect server_from_unknown = Dialect::Unknown;  // next_server over them from Unknown
  bool has_ollama = false;
  bool has_timestamp = false;
  Timestamp first_time;
  Timestamp last_time;
  std::string_view first_time_text;
  std::string_view last_time_text;
  bool has_dated = false;  // a timestamp with its year
  Timestamp last_dated;
};

struct BlockSurvey {
  std::string_view block;  // what was surveyed: a survey applies to these bytes only
  bool plain = false;      // is_plain_text(block)
  bool potentials_known = false;
  std::vector<int> potentials;  // prefilter ids whose formula holds for the block
  // The lines were surveyed and none of them matches any of the potentials'
  // own regexes (a rule such as "token usage: 0.9x" whose literals are on
  // every statistics line but whose pattern holds on few): no rule can
  // match the block after all.
  bool potentials_cleared = false;
  bool potentials_checked = false;  // each line's `hits` says whether it matches one
  // Potentials left out of that check: rules the stream had retired when the
  // survey began (the check says nothing of them).
  std::vector<int> unchecked;

  // Of the block's complete lines (up to its last newline), when lines_known.
  bool lines_known = false;
  std::string_view lines_range;
  // A line the structure and lexical tiers must see (an error level, an
  // exception, a line that may continue the one before it, an over-long line):
  // the block is matched in full.
  bool needs_matching = false;
  // Where in lines_range the first such line begins, and how many lines
  // from there go the full way (two when it may continue the line before,
  // which goes with it); kNoSplit when the survey cannot tell (a line it did
  // not parse). The lines before may take the light path as a block of their own.
  static constexpr std::size_t kNoSplit = static_cast<std::size_t>(-1);
  std::size_t needs_from = kNoSplit;
  std::size_t needs_lines = 0;
  // A line the light path cannot take (over-long, a Ray prefix around
  // another server's line): the block takes the full path.
  bool declined = false;
  // A "(Name pid=N)" line without a level: declined once the stream has
  // seen Ray prefixes around other servers' lines.
  bool levelless_vllm = false;
  // The first line may continue a cut line of the block before (read only
  // when !needs_matching).
  bool first_continues = false;
  LightSummary light;
  // Each line, when the survey was asked to keep them (the potentials are
  // checked line by line, see clear_potentials); the light summary otherwise.
  std::vector<SurveyedLine> lines;

  bool first_may_continue() const { return first_continues; }

  void clear() {
    block = {};
    plain = false;
    potentials_known = false;
    potentials.clear();
    potentials_cleared = false;
    potentials_checked = false;
    unchecked.clear();
    lines_known = false;
    lines_range = {};
    needs_matching = false;
    needs_from = kNoSplit;
    needs_lines = 0;
    declined = false;
    levelless_vllm = false;
    first_continues = false;
    light = LightSummary{};
    lines.clear();
  }
};

// At most this many potentials are checked line by line (clear_potentials).
inline constexpr std::size_t kPotentialsChecked = 6;

// Where the block that starts at `start` of `bytes` ends: after the first
// newline at or past `target` bytes (or at the end). Blocks are small so that
// a rare problem line keeps only its neighbours from being skipped.
inline constexpr std::size_t kBlockBytes = 8 * 1024;
inline std::size_t block_end(std::string_view bytes, std::size_t start) {
  if (bytes.size() - start <= kBlockBytes) return bytes.size();
  std::size_t newline = bytes.find('\n', start + kBlockBytes);
  return newline == std::string_view::npos ? bytes.size() : newline + 1;
}

}  // namespace logrx::detail

namespace logrx::detail {

// A window of feed_all's input and the surveys of its blocks.
struct SurveyWindow {
  std::string_view bytes;
  std::vector<BlockSurvey> surveys;  // kept between uses: their vectors' storage is reused
  std::size_t count = 0;             // surveys in use
  bool ready = false;
};

// How Analyzer::feed_all cuts its input. Tests make the grain fine so that
// short logs go through every stage; nothing else changes it.
struct ParallelGrain {
  std::size_t window_bytes = 256 * 1024;
  std::size_t parallel_from = 1024 * 1024;  // smaller inputs are simply fed
  // Survey from the first window, each thread tuning its own scanner,
  // instead of once the analysis has tuned one on serving traffic.
  bool survey_from_start = false;
};
ParallelGrain& parallel_grain();

}  // namespace logrx::detail
