#!/usr/bin/env bash
# `logrx watch`: waits for the file, follows appends, survives truncation and
# rotation, and exits 0 on SIGTERM.
set -u
logrx=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL: $*"; echo "--- out"; cat out.txt; echo "--- err"; cat err.txt; exit 1; }
"$logrx" watch --poll-ms 20 --format jsonl server.log > out.txt 2> err.txt &
pid=$!
sleep 0.3
echo "RuntimeError: CUDA error: out of memory" >> server.log
sleep 0.3
: > server.log   # truncated in place
sleep 0.2
echo "RuntimeError: CUDA error: an illegal memory access was encountered" >> server.log
sleep 0.3
mv server.log server.log.1   # rotated
echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB." > server.log
sleep 0.4
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
