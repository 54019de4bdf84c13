// SPDX-License-Identifier: MIT
// Events: a traceback or an error record spans several lines; findings are
// held until their event closes so that each knows its line range.
#include "analysis/analyzer_state.h"

namespace logrx {

using namespace detail;

bool Analyzer::Impl::continues_event() const {
  if (!open_event.open) return false;
  if (open_event.lines >= options.max_event_lines) return false;
  if (open_event.terminate) {
    if (event.dialect != open_event.dialect || event.pid != open_event.pid) return false;
    std::string_view m = event.message;
    m.remove_prefix(std::min(m.size(), m.find_first_not_of(" \t")));
    return detail::starts_with(m, "what():") || detail::starts_with(m, "Exception raised from ") ||
           detail::starts_with(m, "frame #");
  }
  if (open_event.lead_in && !open_event.traceback) {
    // Only a traceback's first line continues the record announcing it.
    return open_event.lines == 0 && event.pid == open_event.pid &&
           (event.dialect == open_event.dialect || event.dialect == Dialect::Unknown) &&
           opens_traceback(event.message);
  }
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

namespace {

// The spaces in front of a traceback's header when the whole traceback was
// pasted indented ("  Traceback (most recent call last):"); 0 otherwise.
std::size_t traceback_indent(std::string_view message) {
  constexpr std::size_t kMostIndent = 8;
  std::size_t spaces = 0;
  while (spaces < message.size() && spaces <= kMostIndent && message[spaces] == ' ') ++spaces;
  if (spaces == 0 || spaces > kMostIndent) return 0;
  return detail::starts_with(message.substr(spaces), "Traceback (most recent call last):") ? spaces : 0;
}

}  // namespace

// A record that Python prints right before a traceback when it logs an
// exception: an error-level record (logger.exception, uvicorn's "ERROR:
// Exception in ASGI application", also behind vLLM's process prefix), or
// the interpreter's own announcements of an exception outside any handler.
bool Analyzer::Impl::announces_traceback(std::string_view level, std::string_view message) {
  if (is_error_level(level)) return true;
  for (std::string_view lead : {"ERROR:", "CRITICAL:", "Exception in thread ", "Exception in callback ",
                                "Task exception was never retrieved", "Error in atexit._run_exitfuncs:"})
    if (detail::starts_with(message, lead)) return true;
  return false;
}

void Analyzer::Impl::dedent_traceback_line() {
  if (!open_event.open || open_event.indent == 0 || event.dialect != Dialect::Unknown) return;
  std::string& m = event.message;
  std::size_t spaces = 0;
  while (spaces < m.size() && spaces < open_event.indent && m[spaces] == ' ') ++spaces;
  if (spaces < open_event.indent) return;
  // A paste padded to a width carries trailing spaces too.
  std::size_t end = m.find_last_not_of(' ');
  m = end == std::string::npos || end < spaces ? std::string() : m.substr(spaces, end + 1 - spaces);
}

void Analyzer::Impl::open_new_event() {
  open_event.reset();
  // An excerpt may begin inside a traceback: a frame line opens one too.
  bool traceback = opens_traceback(event.message) || !frame_file(event.message).empty();
  bool vllm_error = event.dialect == Dialect::VLLM &&
                    (event.level == "ERROR" || event.level == "CRITICAL");
  bool terminate = !traceback &&
                   (event.dialect == Dialect::Unknown ||
                    (event.dialect == Dialect::VLLM && event.level.empty())) &&
                   detail::starts_with(event.message, "terminate called after throwing an instance of");
  bool opens = event.dialect == Dialect::SGLang || traceback || vllm_error || terminate;
  bool lead_in = !opens && announces_traceback(event.level, event.message);
  if (!opens && !lead_in) return;
  open_event.open = true;
  open_event.traceback = traceback;
  open_event.terminate = terminate;
  open_event.lead_in = lead_in;
  open_event.dialect = event.dialect;
  open_event.pid = event.pid;
  open_event.source = event.source;
  open_event.process = event.process;
  open_event.start = event.line;
  open_event.end = event.line;
  open_event.indent = traceback_indent(event.message);
}

void Analyzer::Impl::track_event() {
  if (continues_event()) {
    open_event.end = event.line;
    ++open_event.lines;
    if (opens_traceback(event.message)) {
      open_event.traceback = true;
      if (std::size_t indent = traceback_indent(event.message); indent > 0) open_event.indent = indent;
    }
  } else {
    close_event();
    open_new_event();
  }
  if (!open_event.open) return;
  const std::string& m = event.message;
  if (open_event.terminate) {
    // what() carries the exception's message: the event's final exception.
    std::size_t text = m.find_first_not_of(" \t");
    if (text != std::string::npos && m.compare(text, 7, "what():") == 0) {
      open_event.last_exception = m.substr(text);
      if (open_event.first_exception.empty()) open_event.first_exception = open_event.last_exception;
      open_event.last_exception_line = event.line;
    }
    return;
  }
  bool frame = false;
  if (ends_traceback(m)) {
    if (open_event.first_exception.empty()) open_event.first_exception = m;
    open_event.last_exception = m;
    open_event.last_exception_line = event.line;
    open_event.after_exception = true;
  } else if (auto file = frame_file(m); !file.empty()) {
    frame = true;
    // Only the innermost frames say which module raised the exception.
    if (open_event.frames.size() >= kFramesKept) open_event.frames.erase(open_event.frames.begin());
    open_event.frames.emplace_back(file);
  } else if (std::string_view raised = raised_exception(m); !raised.empty() && open_event.traceback) {
    open_event.raised_type.assign(raised);
    open_event.raised_line = event.line;
    open_event.raised_message.assign(m, m.find_first_not_of(" \t"));
    open_event.raised_text = event.text;
    open_event.raised_level = event.level;
    open_event.raised_timestamp = event.timestamp_text;
  } else if (is_chain_marker(m) || opens_traceback(m)) {
    open_event.after_exception = false;
  }
  // Still in the frames: a frame line, or the indented source (and Python
  // 3.11's ^^^ markers) under one.
  open_event.in_frames = frame || (open_event.in_frames && !m.empty() && (m[0] == ' ' || m[0] == '\t'));
  // An object's destructor at exit ("Exception ignored in: <function
  // LLMEngine.__del__ ...>"), and a traceback a logger printed as a warning,
  // are not the failure of the run.
  if (frame && ends_with(m, " in __del__")) open_event.in_destructor = true;
  open_event.logged_below_error = is_quiet_level(event.level);
}

// A traceback pasted up to its innermost "raise ValueError(" but not the
// exception line: the structure rules still read the exception's type and
// the module that raised it (the frames), as they would the missing line.
void Analyzer::Impl::offer_raised_exception() {
  if (!open_event.traceback || open_event.raised_type.empty() ||
      open_event.raised_line < open_event.last_exception_line || fallback.size() >= kMaxFallbackCandidates)
    return;
  Dialect effective = open_event.dialect != Dialect::Unknown ? open_event.dialect : run.server;
  std::map<std::string, std::string> captures;
  for (std::size_t index = 0; index < rules.rules.size(); ++index) {
    if (rules.rules[index].tier != Tier::Structure || !rules.applies_to(index, effective)) continue;
    if (!rules.extract(index, open_event.raised_type, captures)) continue;
    fallback.push_back(Candidate{index, captures, open_event.raised_line, open_event.raised_message,
                                 open_event.raised_text, open_event.raised_level, open_event.process,
                                 open_event.raised_timestamp, false, std::string()});
    if (fallback.size() >= kMaxFallbackCandidates) break;
  }
}

void Analyzer::Impl::close_event() {
  if (!open_event.open) return;
  offer_raised_exception();
  resolve_fallback(true);
  std::vector<Held> waiting = std::move(held);
  std::vector<std::string> texts = std::move(held_text);
  held.clear();
  held_text.clear();
  held_bytes = 0;
  // One rule matching several lines of one traceback (two frames, a logged
  // error and the exception that carries it) is one error: the first line
  // stands for it, counted once per line.
  std::vector<Finding> closing;
  for (Held& h : waiting) {
    Finding& f = h.finding;
    if (open_event.traceback) {
      auto same = std::find_if(closing.begin(), closing.end(), [&f](const Finding& r) {
        return r.rule_id == f.rule_id && r.stale == f.stale && r.run == f.run;
      });
      if (same != closing.end()) {
        same->count += f.count;
        same->last_line = std::max(same->last_line, std::max(f.line, f.last_line));
        continue;
      }
    }
    // One finding at a time gets its own copy of the shared text: store()
    // keeps it only when the finding is new.
    if (h.message != kNoText) f.message = texts[h.message];
    for (std::size_t i = 0; i < h.evidence.size() && i < f.evidence.size(); ++i)
      if (h.evidence[i] != kNoText) f.evidence[i].text = texts[h.evidence[i]];
    f.end_line = open_event.end;
    if (open_event.traceback || open_event.end > open_event.start) {
      f.event_start = open_event.start;
      f.exception = open_event.last_exception;
      if (open_event.first_exception != open_event.last_exception)
        f.root_exception = open_event.first_exception;
    }
    if (f.process.empty()) f.process = open_event.process;
    closing.push_back(std::move(f));
  }
  for (Finding& f : closing) store(std::move(f));
  open_event.reset();
}

}  // namespace logrx
