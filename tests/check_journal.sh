#!/usr/bin/env bash
# journald input: `scan --journal UNIT [--since]` and `watch --journal UNIT` through
# sd-journal, on a journal file written by systemd-journal-remote (no running
# journald needed), and the option's errors.
#   check_journal.sh LOGRX WORKDIR HAVE_SYSTEMD
# Exit 77 (a ctest skip) only when systemd-journal-remote is not installed.
set -u
logrx=$1 work=$2 have_systemd=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL: $*"; for f in out.txt err.txt; do [ -f $f ] && { echo "--- $f"; cat $f; }; done; exit 1; }
expect_error() {  # CODE PATTERN ARGS...: logrx exits CODE and says PATTERN on stderr
  code=$1 pattern=$2; shift 2
  "$logrx" "$@" > out.txt 2> err.txt
  status=$?
  [ $status -eq "$code" ] || fail "logrx $*: exit $status, want $code"
  grep -q -- "$pattern" err.txt || fail "logrx $*: stderr does not say '$pattern'"
}

expect_error 2 "needs a FILE or --journal UNIT" watch
expect_error 2 "needs a FILE or --journal UNIT" watch --journal sglang server.log
expect_error 2 "give one or the other" scan --journal sglang server.log

if [ "$have_systemd" != 1 ]; then
  expect_error 2 "built without libsystemd (install libsystemd-dev and rebuild)" watch --journal sglang
  expect_error 2 "built without libsystemd" scan --journal sglang
  echo ok; exit 0
fi

remote=$(command -v systemd-journal-remote || ls /lib/systemd/systemd-journal-remote /usr/lib/systemd/systemd-journal-remote 2>/dev/null | head -1)
[ -n "$remote" ] || { echo "SKIP: systemd-journal-remote is not installed (apt-get install systemd-journal-remote)"; exit 77; }

# Two units in one journal: only sglang.service's entries are read.
entry() {  # SECONDS UNIT MESSAGE
  printf '__REALTIME_TIMESTAMP=%s000000\n__MONOTONIC_TIMESTAMP=%s000000\n_BOOT_ID=0123456789abcdef0123456789abcdef\n_SYSTEMD_UNIT=%s\n_HOSTNAME=gpu1\nMESSAGE=%s\n\n' "$1" "$1" "$2" "$3"
}
{
  entry 1779522000 sglang.service "[2026-05-23 07:40:00] Load weight begin. avail mem=77.00 GB"
  entry 1779522041 sglang.service "RuntimeError: CUDA error: out of memory"
  entry 1779522042 other.service "RuntimeError: CUDA error: an illegal memory access was encountered"
  entry 1779522043 sglang.service "[2026-05-23 07:40:43] INFO:     127.0.0.1:40000 - \"GET /health HTTP/1.1\" 200 OK"
} > entries.export
"$remote" --output="$PWD/test.journal" entries.export > remote.log 2>&1 || { cat remote.log; fail "systemd-journal-remote failed"; }

"$logrx" scan --format json --journal sglang --journal-file "$PWD/test.journal" > out.txt 2> err.txt
status=$?
[ $status -eq 1 ] || fail "scan: exit $status, want 1 (a fatal finding)"
grep -q '"rule": "pytorch.cuda.error-out-of-memory"' out.txt || fail "scan: the unit's OOM was not found"
grep -q 'illegal-memory-access' out.txt && fail "scan: read another unit's entries"
grep -q '"file": "journal:sglang"' out.txt || fail "scan: the stream is not named after the unit"

# --since: entries before it are not read.
"$logrx" scan --format json --journal sglang.service --journal-file "$PWD/test.journal" \
  --since 2026-05-23T07:40:42Z > out.txt 2> err.txt
status=$?
[ $status -eq 0 ] || fail "scan --since: exit $status, want 0"
grep -q 'out-of-memory' out.txt && fail "scan --since: read an entry before --since"
grep -q '"lines": 1' out.txt || fail "scan --since: want the one later line"

expect_error 2 "cannot open" scan --journal sglang --journal-file "$PWD/missing.journal"
expect_error 2 "ISO 8601" scan --journal sglang --journal-file "$PWD/test.journal" --since yesterday

# watch follows the unit; an offline journal file is read from its start.
"$logrx" watch --format jsonl --poll-ms 20 --journal sglang --journal-file "$PWD/test.journal" > out.txt 2> err.txt &
pid=$!
for _ in $(seq 300); do grep -q '"rule"' out.txt 2>/dev/null && break; sleep 0.1; done
kill -TERM $pid; wait $pid
status=$?
[ $status -eq 0 ] || fail "watch: exit $status, want 0"
grep -q '"rule":"pytorch.cuda.error-out-of-memory"' out.txt || fail "watch: no finding"
grep -q '"stream":"journal:sglang"' out.txt || fail "watch: the record's stream is not the unit"
grep -q 'illegal-memory-access' out.txt && fail "watch: read another unit's entries"
echo ok
