// SPDX-License-Identifier: MIT
// journald as an input (`watch --journal UNIT`, `scan --journal UNIT`)
// through libsystemd's sd-journal API, when logrx is built with it (Debian's
// libsystemd-dev); otherwise every call reports that clearly.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace logrx::cli {

struct JournalQuery {
  std::string unit;                 // _SYSTEMD_UNIT to read ("sglang" means sglang.service)
  std::vector<std::string> files;   // read these journal files instead of the system journal
  std::optional<std::int64_t> since;  // Unix seconds: entries from then on; else all (scan) or new (watch)
  bool follow = false;              // wait for new entries until `stop` says so
};

// True when this build reads journald.
bool journal_available();

// Calls `on_line` with each entry's MESSAGE, oldest first; while following,
// calls `on_idle` whenever it has caught up and waits (up to `poll_ms`) for
// more, until `stop` returns true. Returns an error message, "" on success.
std::string read_journal(const JournalQuery& query, int poll_ms,
                         const std::function<bool()>& stop,
                         const std::function<void(std::string_view)>& on_line,
                         const std::function<void()>& on_idle);

// `scan --journal UNIT [--since TIME]`: the unit's entries (from TIME on, an
// ISO 8601 time) as lines to `sink`. Returns an error message, "" on success.
std::string scan_journal(const std::string& unit, const std::vector<std::string>& files,
                         const std::string& since,
                         const std::function<void(std::string_view)>& sink);

}  // namespace logrx::cli
