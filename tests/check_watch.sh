#!/usr/bin/env bash
# `logrx watch`: waits for the file, follows appends, survives truncation and
# rotation, and exits 0 on SIGTERM.
set -u
logrx=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL: $*"; echo "--- out"; cat out.txt; echo "--- err"; cat err.txt; exit 1; }
"$logrx" watch --poll-ms 20 --format jsonl server.log > out.txt 2> err.txt &
pid=$!
# Each step waits for watch to have seen the previous one (up to 20 s), so a
# slow machine (sanitizers, a loaded CI host) cannot make it miss a step.
await() {  # FILE PATTERN [COUNT]
  for _ in $(seq 200); do
    [ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "${3:-1}" ] && return 0
    sleep 0.1
  done
  return 1
}
await err.txt "waiting for the file to appear" || fail "did not wait"
echo "RuntimeError: CUDA error: out of memory" >> server.log
await out.txt '"rule"' 1 || fail "no first finding"
: > server.log   # truncated in place
await err.txt "truncated; reading from the start" || fail "missed the truncation"
echo "RuntimeError: CUDA error: an illegal memory access was encountered" >> server.log
await out.txt '"rule"' 2 || fail "no finding after truncation"
mv server.log server.log.1   # rotated
echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB." > server.log
await err.txt "rotated; following the new file" || fail "missed the rotation"
await out.txt '"rule"' 3 || fail "no finding after rotation"
printf 'RuntimeError: CUDA error: device-side assert trig' >> server.log   # no newline yet
sleep 0.2
kill -TERM $pid
wait $pid
status=$?
[ $status -eq 0 ] || fail "exit $status, want 0"
grep -q "waiting for the file to appear" err.txt || fail "did not wait"
grep -q "truncated; reading from the start" err.txt || fail "missed the truncation"
grep -q "rotated; following the new file" err.txt || fail "missed the rotation"
[ "$(grep -c '"rule"' out.txt)" -eq 3 ] || fail "want 3 findings, got $(grep -c '"rule"' out.txt)"
grep -q '"rule":"pytorch.cuda.error-out-of-memory"' out.txt || fail "first finding"
grep -q '"rule":"pytorch.cuda.illegal-memory-access"' out.txt || fail "after truncation"
grep -q '"rule":"pytorch.cuda.out-of-memory"' out.txt || fail "after rotation"
echo ok
