// SPDX-License-Identifier: MIT
#include "journal.h"

#include <cerrno>
#include <cstring>

#include "logrx/analyzer.h"

#ifdef LOGRX_HAVE_SYSTEMD
#include <systemd/sd-journal.h>
#endif

namespace logrx::cli {

std::string scan_journal(const std::string& unit, const std::vector<std::string>& files,
                         const std::string& since,
                         const std::function<void(std::string_view)>& sink) {
  JournalQuery query{unit, files, std::nullopt, false};
  if (!since.empty()) {
    query.since = parse_iso8601(since);
    if (!query.since) return "--since " + since + ": expected an ISO 8601 time";
  }
  return read_journal(
      query, 0, [] { return false; },
      [&](std::string_view message) {
        sink(message);
        sink("\n");
      },
      [] {});
}

#ifndef LOGRX_HAVE_SYSTEMD

bool journal_available() { return false; }

std::string read_journal(const JournalQuery&, int, const std::function<bool()>&,
                         const std::function<void(std::string_view)>&,
                         const std::function<void()>&) {
  return "--journal is not available: this logrx was built without libsystemd (install "
         "libsystemd-dev and rebuild); `journalctl -u UNIT -f | logrx scan` reads it meanwhile";
}

#else

bool journal_available() { return true; }

namespace {

struct Journal {
  sd_journal* j = nullptr;
  ~Journal() {
    if (j != nullptr) sd_journal_close(j);
  }
};

std::string failure(const std::string& what, int r) {
  return "journal: " + what + ": " + std::strerror(-r);
}

}  // namespace

std::string read_journal(const JournalQuery& query, int poll_ms, const std::function<bool()>& stop,
                         const std::function<void(std::string_view)>& on_line,
                         const std::function<void()>& on_idle) {
  Journal journal;
  int r = 0;
  if (query.files.empty()) {
    r = sd_journal_open(&journal.j, SD_JOURNAL_LOCAL_ONLY);
  } else {
    std::vector<const char*> paths;
    for (const std::string& file : query.files) paths.push_back(file.c_str());
    paths.push_back(nullptr);
    r = sd_journal_open_files(&journal.j, paths.data(), 0);
  }
  if (r < 0) return failure(query.files.empty() ? "cannot open the system journal" : "cannot open " + query.files.front(), r);
  if (!query.unit.empty()) {
    // Like journalctl -u: a bare name is a service.
    std::string unit = query.unit;
    if (unit.find('.') == std::string::npos) unit += ".service";
    std::string match = "_SYSTEMD_UNIT=" + unit;
    r = sd_journal_add_match(journal.j, match.data(), match.size());
    if (r < 0) return failure("bad unit " + query.unit, r);
  }
  if (query.since) {
    r = sd_journal_seek_realtime_usec(journal.j, static_cast<std::uint64_t>(*query.since) * 1000000ULL);
  } else if (query.follow) {
    // The journal holds the unit's whole history (that is what scan
    // --journal is for): following reads only what comes next.
    r = sd_journal_seek_tail(journal.j);
    if (r >= 0) r = sd_journal_previous(journal.j);
  } else {
    r = sd_journal_seek_head(journal.j);
  }
  if (r < 0) return failure("cannot seek", r);

  while (!stop()) {
    r = sd_journal_next(journal.j);
    if (r < 0) return failure("cannot read", r);
    if (r > 0) {
      const void* data = nullptr;
      std::size_t size = 0;
      if (sd_journal_get_data(journal.j, "MESSAGE", &data, &size) >= 0 && size >= 8) {
        // Binary-safe: MESSAGE=... may hold any bytes, the analyzer sanitises them.
        std::string_view field(static_cast<const char*>(data), size);
        on_line(field.substr(8));
      }
      continue;
    }
    if (!query.follow) break;
    on_idle();
    r = sd_journal_wait(journal.j, static_cast<std::uint64_t>(poll_ms) * 1000ULL);
    if (r < 0) return failure("cannot wait for entries", r);
  }
  return "";
}

#endif

}  // namespace logrx::cli
