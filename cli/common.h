// SPDX-License-Identifier: MIT
// What the subcommands share: exit codes, finding the rulebook, reading input.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "logrx/rulebook.h"

namespace logrx::cli {

// Documented in README and --help; scripts depend on them.
enum ExitCode : int {
  kExitClean = 0,     // nothing at or above --fail-on
  kExitFindings = 1,  // findings at or above --fail-on (or failed rule examples)
  kExitError = 2,     // usage, input or rule errors
};

// Set when a write to stdout failed (a closed pipe: `logrx scan | head -1`);
// commands stop producing output and reading input.
bool stdout_closed();

struct RuleOptions {
  std::vector<std::string> extra_dirs;  // --rules DIR (repeatable), after $LOGRX_RULES_PATH
  bool no_builtin = false;              // --no-builtin-rules
};

// Loads the built-in rulebook plus the --rules directories; prints every
// diagnostic to stderr and returns std::nullopt on any error.
std::optional<Rulebook> load_rulebook(const RuleOptions& options);

// Streams a file ("-" is stdin) to `sink` in large chunks. Returns an error
// message, "" on success.
// Stops early, without error, once stdout is closed.
std::string read_stream(const std::string& path,
                        const std::function<void(std::string_view)>& sink);

// Modification time of a file (Unix seconds), std::nullopt when unknown.
std::optional<std::int64_t> file_mtime(const std::string& path);

// True when standard input is a pipe, socket or terminal (not a file).
bool stdin_is_stream();

// True when stdout is a terminal and NO_COLOR is not set.
bool stdout_wants_color();

}  // namespace logrx::cli
