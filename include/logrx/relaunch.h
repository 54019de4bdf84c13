// SPDX-License-Identifier: MIT
// Applying remediation to a launch command, for supervisors (logrx run, or
// your own): only applicable items, checked again against the flag's spec.
//
//   logrx::LaunchCommand cmd{{"python", "-m", "sglang.launch_server", "--mem-fraction-static", "0.8"}, {}};
//   auto outcome = logrx::apply_remediation(book, "sglang", report.remediation, cmd);
//   if (outcome.error.empty() && outcome.changed) relaunch(cmd);
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "logrx/finding.h"
#include "logrx/rulebook.h"

namespace logrx {

struct LaunchCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // variables set on top of the inherited environment
};

struct ApplyOutcome {
  bool changed = false;
  std::vector<std::string> applied;  // "--flag value (was old)", "VAR=value"
  std::vector<std::string> skipped;  // "--flag (why)"
  // Set when the command cannot be rewritten at all (a shell script the
  // rewriter cannot parse safely); nothing was changed then.
  std::string error;
};

// The server a command line starts ("sglang", "vllm", "tgi", "llamacpp",
// "trtllm", "lmdeploy", "ollama"), or "" when it cannot tell.
std::string detect_server(const std::vector<std::string>& argv);

// Merges remediation into a command: a switch is added once, a value flag's
// value replaced (--flag value or --flag=value) or the flag appended, a
// repeatable flag appended, a variable set. Only applicable primary items
// whose name `server`'s flag list knows, with a value that fits the flag's
// spec, are applied; the others are listed in `skipped`. A command of the
// form `sh|bash -c "script"` is rewritten inside the script when the script
// is plain words (optionally after `exec` and VAR=value); otherwise `error`
// says why it is refused.
ApplyOutcome apply_remediation(const Rulebook& book, std::string_view server,
                               const std::vector<RemediationItem>& items, LaunchCommand& command);

// Whether apply_remediation can rewrite this command ("" when it can, else why not).
std::string rewrite_problem(const std::vector<std::string>& argv);

// A word quoted for a POSIX shell ('...' when it needs quoting).
std::string shell_quote(std::string_view word);

// The command as one shell line: VAR=value ... argv (quoted).
std::string command_line(const LaunchCommand& command);

}  // namespace logrx
