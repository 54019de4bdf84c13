// SPDX-License-Identifier: MIT
// Tiers: when no specific rule knows an error event, structure rules (the
// exception type and the module that raised it) and lexical rules (the
// words) still classify it, and the message's own hints (flags it names,
// comparisons it states) give the fix.
#include "analysis/analyzer_state.h"

namespace logrx {

using namespace detail;

bool Analyzer::Impl::is_cause(const Finding& f) {
  return f.tier == Tier::Rule && !f.wrapper && f.severity >= Severity::Warning;
}

// Moves the structure and lexical matches of this line out of `matches`
// into the candidates. A line a specific rule recognised, and a line that
// reports no error (a warning, an info line), offers none.
void Analyzer::Impl::take_fallback_matches() {
  bool specific = false;
  bool fallback_match = false;
  for (const Match& m : matches) {
    const RuleSpec& rule = rules.rules[m.rule];
    if (rule.tier != Tier::Rule) {
      fallback_match = true;
    } else if (!rule.silent && condition_holds(rules.compiled[m.rule].when, &m.captures)) {
      // A rule whose condition fails on this line (a crash rule that only
      // speaks while an image is being encoded) has not explained it.
      specific = true;
    }
  }
  if (!fallback_match) return;
  bool error_line = !is_quiet_level(event.level) &&
                    (is_error_level(event.level) || ends_traceback(event.message) ||
                     reports_error(event.message));
  // Inside a C++ terminate, what() is the error and the frame lines after
  // it ("Exception raised from ...", "frame #0: ...") are only where.
  if (open_event.open && open_event.terminate && open_event.start != event.line) {
    std::size_t text = event.message.find_first_not_of(" \t");
    error_line = text != std::string::npos && event.message.compare(text, 7, "what():") == 0;
  }
  for (Match& m : matches) {
    if (rules.rules[m.rule].tier == Tier::Rule || specific || !error_line) continue;
    if (fallback.size() >= kMaxFallbackCandidates) break;
    fallback.push_back(Candidate{m.rule, std::move(m.captures), event.line, event.message,
                                 event.text, event.level, event.process,
                                 event.timestamp_text, event.truncated,
                                 event.has_timestamp ? iso_time(event.timestamp) : std::string()});
  }
  matches.erase(std::remove_if(matches.begin(), matches.end(),
                               [this](const Match& m) { return rules.rules[m.rule].tier != Tier::Rule; }),
                matches.end());
}

namespace {

// llama.cpp's and C libraries' "function: " names in front of their words
// ("llama_model_load: error loading model: ...", "srv    load_model: failed
// to load model"), at most three. Returns the words after them; message
// itself when there are none, or when a name is a level ("warning: failed to
// mlock" is a warning).
std::string_view after_function_names(std::string_view message) {
  std::string_view words = message;
  for (std::string_view tag : {"srv ", "slot ", "que "}) {
    if (detail::starts_with(words, tag)) {
      words.remove_prefix(tag.size());
      while (!words.empty() && words[0] == ' ') words.remove_prefix(1);
      break;
    }
  }
  for (int names = 0; names < 3; ++names) {
    std::size_t k = 0;
    while (k < words.size() && ((words[k] >= 'a' && words[k] <= 'z') || words[k] == '_' ||
                                (words[k] >= '0' && words[k] <= '9')))
      ++k;
    if (k < 3 || k + 1 >= words.size() || words[k] != ':' || words[k + 1] != ' ') break;
    std::string_view name = words.substr(0, k);
    if (name == "warning" || name == "warn" || name == "info" || name == "note" || name == "debug")
      return message;
    words.remove_prefix(k + 2);
    while (!words.empty() && words[0] == ' ') words.remove_prefix(1);
  }
  return words.size() < message.size() ? words : message;
}

// A level column written as a word near the start ("[14:50:16] ERROR    app:
// ...", "07/31 12:28:43 - service - ERROR - ...", "lmdeploy - ERROR - ..."),
// with no quieter level before it.
bool has_error_column(std::string_view message) {
  constexpr std::size_t kColumnReach = 64;
  std::size_t at = message.find("ERROR");
  if (at == std::string_view::npos || at == 0 || at > kColumnReach) return false;
  auto separates = [](char c) { return c == ' ' || c == '[' || c == ']' || c == '-' || c == '|' || c == ':' || c == '(' || c == ')'; };
  if (!separates(message[at - 1]) || (at + 5 < message.size() && !separates(message[at + 5]))) return false;
  std::string_view before = message.substr(0, at);
  for (std::string_view quiet : {"INFO", "WARN", "DEBUG", "TRACE", "NOTICE"})
    if (before.find(quiet) != std::string_view::npos) return false;
  return true;
}

// An assertion, an abort or a shell's report of one anywhere in the line:
// "ggml.c:1864: GGML_ASSERT(x) failed", "Assertion `found' failed.",
// "Assertion failed: (x), function f", TurboMind's "Assertion fail: path",
// "line 2: 3385755 Aborted (core dumped) python3 ...", "Abort trap: 6".
bool reports_abort(std::string_view message) {
  std::size_t assert_at = message.find("GGML_ASSERT(");
  if (assert_at != std::string_view::npos && message.find(") failed", assert_at) != std::string_view::npos)
    return true;
  std::size_t backquote = message.find("Assertion `");
  if (backquote != std::string_view::npos && message.find("' failed", backquote) != std::string_view::npos)
    return true;
  for (std::string_view shape : {"Assertion failed", "Assertion fail:", "Aborted (core dumped)", "Abort trap",
                                 "invoked oom-killer", "oom-kill:", "OOMKilled", "Killed process "})
    if (message.find(shape) != std::string_view::npos) return true;
  // A shell's report of a child the kernel killed: "line 28:     7 Killed      cmd".
  for (std::size_t at = message.find(" Killed"); at != std::string_view::npos;
       at = message.find(" Killed", at + 7)) {
    std::size_t end = at + 7;
    if (end < message.size() && message[end] != ' ') continue;
    if (at > 0 && message[at - 1] >= '0' && message[at - 1] <= '9') return true;
  }
  return false;
}

// A C or C++ source location before the words ("init.cu:nvshmemi_init:1080:
// nvshmem initialization failed", "transport.cpp:420: non-zero status: 7
// connect EPS failed"), or a native function that failed ("ibv_modify_qp
// failed", "cudaMalloc failed: out of memory"), or a GPU driver's kernel
// line ("NVRM: ... rpcSendMessage failed"): the words then say fail or error.
bool native_failure(std::string_view message) {
  auto says_failure = [](std::string_view words) {
    return words.find("fail") != std::string_view::npos || words.find("rror") != std::string_view::npos;
  };
  if (detail::starts_with(message, "NVRM: ")) return says_failure(message);
  std::size_t k = 0;
  while (k < message.size() && ((message[k] >= 'a' && message[k] <= 'z') || (message[k] >= 'A' && message[k] <= 'Z') ||
                                (message[k] >= '0' && message[k] <= '9') || message[k] == '_'))
    ++k;
  if (k >= 3 && message[0] >= 'a' && message[0] <= 'z') {
    std::string_view after = message.substr(k);
    if (detail::starts_with(after, "()")) after.remove_prefix(2);
    if (detail::starts_with(after, " failed")) return true;
  }
  std::size_t space = message.find(' ');
  std::string_view first = message.substr(0, space);
  if (first.size() < 6 || first.back() != ':') return false;
  for (std::string_view extension : {".c:", ".cc:", ".cpp:", ".cu:", ".cxx:", ".h:", ".hpp:", ".cuh:"}) {
    std::size_t at = first.find(extension);
    if (at == std::string_view::npos) continue;
    // A line number somewhere after the extension: "x.cu:1012:", "x.cpp:fn:291:".
    std::string_view rest = first.substr(at + extension.size());
    bool digits = rest.size() >= 2 && rest[rest.size() - 2] >= '0' && rest[rest.size() - 2] <= '9';
    return digits && space != std::string_view::npos && says_failure(message.substr(space));
  }
  return false;
}

}  // namespace

// A headerless line that reads as an error report ("Error: ...",
// "error: unrecognized arguments", "FAILED ...", "llama_model_load: error
// loading model: ...", "GGML_ASSERT(x) failed").
bool Analyzer::Impl::reports_error(std::string_view message, const detail::TextMarks& marks) {
  std::size_t i = 0;
  while (i < message.size() && message[i] == ' ') ++i;
  message.remove_prefix(i);
  if (message.empty()) return false;
  if (std::string_view("EeFfpKSARCNOtGzl").find(message[0]) != std::string_view::npos) {
    for (std::string_view start : {"Error", "error", "ERROR", "Fatal", "fatal", "FATAL", "Failed",
                                   "failed", "FAILED", "Exception", "panic", "terminate called",
                                   "Killed", "Segmentation fault", "Aborted", "RuntimeError",
                                   "CUDA error", "Cuda error", "NCCL error", "Out of memory", "OOM", "CRITICAL",
                                   "GGML_ASSERT", "CMake Error", "libc++abi: terminating", "zsh: abort",
                                   "zsh: segmentation fault",
                                   "zsh: killed", "zsh: bus error", "zsh: illegal hardware instruction"})
      if (detail::starts_with(message, start)) return true;
  }
  // Everything below names an error ("error", "Error", "ERROR") or a failure
  // ("failed", "abort"); a line without those letters is settled here (this
  // runs on every light line), and every line of a block without them at once.
  if (!marks.rror && !marks.fail) return false;
  if (marks.fail && reports_abort(message)) return true;
  if (native_failure(message)) return true;
  std::string_view words = after_function_names(message);
  if (words.size() < message.size()) {
    for (std::string_view start : {"error", "Error", "ERROR", "failed", "Failed", "FAILED", "fail"})
      if (detail::starts_with(words, start)) return true;
  }
  if (!marks.rror) return false;
  if (message.find("rror") == std::string_view::npos &&
      message.find("RROR") == std::string_view::npos)
    return false;
  if (has_error_column(message)) return true;
  // An exception printed as its repr: ValueError("...").
  std::size_t name_end = 0;
  while (name_end < message.size() &&
         (std::isalnum(static_cast<unsigned char>(message[name_end])) || message[name_end] == '_' ||
          message[name_end] == '.'))
    ++name_end;
  std::string_view name = message.substr(0, name_end);
  if (name_end < message.size() && message[name_end] == '(' &&
      (detail::ends_with(name, "Error") || detail::ends_with(name, "Exception")))
    return true;
  // An error response a client printed: {"object":"error", ...}.
  if (message.find("\"object\":\"error\"") != std::string_view::npos ||
      message.find("'object': 'error'") != std::string_view::npos ||
      message.find("\"object\": \"error\"") != std::string_view::npos)
    return true;
  if (message.find(" error: ") != std::string_view::npos ||
      message.find("Error: ") != std::string_view::npos ||
      message.find("] error") != std::string_view::npos ||
      message.find("[error]") != std::string_view::npos)
    return true;
  // Tools that pad the word: "line 146; error   : Feature ... requires ...".
  for (std::size_t at = message.find("error"); at != std::string_view::npos;
       at = message.find("error", at + 5)) {
    std::size_t k = at + 5;
    while (k < message.size() && message[k] == ' ') ++k;
    if (k > at + 5 && k < message.size() && message[k] == ':') return true;
  }
  return false;
}

// Turns the best candidate of the event (or line) into a finding when no
// specific rule explained it: structure over lexical, then priority, then
// the final exception, then the latest line.
void Analyzer::Impl::resolve_fallback(bool in_event) {
  if (fallback.empty()) return;
  // In an event, a rule that knows its first line explained it, also when it
  // says the event is harmless ("Exception ignored in" a destructor at exit).
  bool has_cause = in_event ? std::any_of(held.begin(), held.end(),
                                          [this](const Held& h) {
                                            const Finding& f = h.finding;
                                            return is_cause(f) || (f.tier == Tier::Rule && !f.wrapper &&
                                                                   f.line == open_event.start);
                                          })
                            : line_has_cause;
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
  // A traceback cut after a raise line ends in that raise, not in the
  // exception line of an earlier traceback of its chain.
  std::uint64_t final_exception = !in_event ? 0
                                  : !open_event.raised_type.empty() &&
                                            open_event.raised_line > open_event.last_exception_line
                                      ? open_event.raised_line
                                      : open_event.last_exception_line;
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
    f.timestamp_iso = best->timestamp_iso;
    f.level = best->level;
    f.truncated = best->truncated;
    f.evidence.push_back(EvidenceLine{best->line, best->text});
    add_hints(f);
    add_finding(std::move(f));
  }
  fallback.clear();
}

// The server whose flag list knows `name`: the run's server when it is
// known, else the first list that has it.
std::string Analyzer::Impl::server_knowing(const std::string& server, const std::string& name) const {
  if (server != "unknown" && server != "any") return rulebook.knows(server, name) ? server : "";
  for (const ServerFlags& list : rulebook.server_flags()) {
    const std::vector<std::string>& names = name[0] == '-' ? list.flags : list.env;
    if (std::find(names.begin(), names.end(), name) != names.end()) return list.server;
  }
  return "";
}

std::string Analyzer::Impl::number_text(double v) {
  return Value::of(v).to_string();
}

std::size_t Analyzer::Impl::edit_distance(std::string_view a, std::string_view b) {
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
// that extends or shortens it by a word's end: --max-model-length for
// --max-model-len), "" when none is close.
std::string Analyzer::Impl::nearest_flag(const std::string& server, const std::string& flag) const {
  std::string best;
  std::size_t best_distance = 3;
  for (const ServerFlags& list : rulebook.server_flags()) {
    if (server != "unknown" && server != "any" && list.server != server) continue;
    for (const std::string& known : list.flags) {
      if (known.size() < 4) continue;
      std::size_t d = edit_distance(flag, known);
      const std::string& shorter = flag.size() < known.size() ? flag : known;
      const std::string& longer = flag.size() < known.size() ? known : flag;
      if (d > 2 && shorter.size() >= 8 && longer.size() - shorter.size() <= 4 &&
          longer.compare(0, shorter.size(), shorter) == 0)
        d = 2;
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
void Analyzer::Impl::add_hints(Finding& f) const {
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
    // A flag named without a value is advice: a supervisor must not append
    // it bare to a command line, so it never joins the merged remediation.
    if (!item.value) item.alternative = true;
    item.rule_id = f.rule_id;
    f.remediation.push_back(std::move(item));
  };
  auto integral = [](double v) { return v == static_cast<double>(static_cast<long long>(v)); };
  for (const detail::Comparison& cmp : detail::find_comparisons(f.message)) {
    auto first_known = [&](const std::string& name, const std::vector<std::string>& words) {
      for (const std::string& key : detail::term_keys(name, words))
        if (std::string flag = known_flag(key); !flag.empty()) return flag;
      return std::string();
    };
    std::string subject = first_known(cmp.subject, cmp.subject_words);
    std::string bound = first_known(cmp.bound, cmp.bound_words);
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
      // A variable is prescribed only with the value the message gives it.
      if (!m.value || !safe_argument(*m.value) || server_knowing(server, m.name).empty()) continue;
      item.kind = RemediationItem::Kind::Env;
      item.name = m.name;
      item.value = m.value;
      item.why = "named by the message";
    } else {
      std::string flag = known_flag(m.name);
      // A flag the parser refused as written is the cause: a flag of this
      // server in other versions (removed, or not there yet) is never the
      // fix. Refused in another spelling (--reasoning_parser), the server's
      // own spelling is.
      if (m.rejected && !flag.empty()) {
        if (flag == m.name) continue;
        item.name = flag;
        if (m.value && safe_argument(*m.value)) item.value = m.value;
        item.why = "the server spells it " + flag;
        add(std::move(item));
        continue;
      }
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

}  // namespace logrx
