#!/usr/bin/env bash
# SIGINT/SIGTERM end the input of scan and watch, not the process: findings
# still held, the summary and the remediation are printed (valid JSON). And
# watch never blocks on what is not a regular file, follows a file truncated
# and rewritten larger between two polls from its start.
#   check_stop.sh LOGRX WORK CASE
# Waits are bounded by polling for what the process printed (up to 30 s), never
# by fixed sleeps; `timeout` (foreground) and the ctest TIMEOUT (processes that
# are signalled: timeout would stand between) turn a hang into a failure.
set -u
logrx=$1 work=$2 case=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL ($case): $*"; echo "--- out"; cat out.txt 2>/dev/null; echo "--- err"; cat err.txt 2>/dev/null; exit 1; }
await() {  # FILE PATTERN [COUNT]
  for _ in $(seq 300); do
    [ "$(cat -- "$1" 2>/dev/null | grep -c -- "$2")" -ge "${3:-1}" ] && return 0
    sleep 0.1
  done
  return 1
}
json_ok() {  # FILE: every line (jsonl) or the whole file (json) parses
  if command -v python3 > /dev/null; then
    python3 - "$@" <<'PY' || return 1
import json, sys
path, mode = sys.argv[1], sys.argv[2]
text = open(path).read()
docs = [json.loads(l) for l in text.splitlines()] if mode == "jsonl" else [json.loads(text)]
assert docs, "no JSON"
PY
  fi
}
# A traceback with nothing after it: its finding is held until the event ends.
traceback='Traceback (most recent call last):\n  File "serve.py", line 7, in <module>\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.10 GiB is free.\n'

case $case in
  scan-json-sigint|scan-text-sigterm)
    # A pipe that stays open, as `tail -F server.log | logrx scan` does.
    format=json signal=INT
    [ $case = scan-text-sigterm ] && format=text signal=TERM
    mkfifo in.fifo
    "$logrx" scan -v --format $format < in.fifo > out.txt 2> err.txt &
    pid=$!
    exec 3> in.fifo
    printf "$traceback" >&3
    await err.txt "loaded .* rules" || fail "rulebook never loaded"
    kill -$signal $pid
    wait $pid
    status=$?
    exec 3>&-
    [ $status -eq 1 ] || fail "exit $status, want 1 (an error finding)"
    grep -q "interrupted; the report covers the input read until then" err.txt || fail "no note"
    grep -q "pytorch.cuda.out-of-memory" out.txt || fail "the held finding was not printed"
    if [ $format = json ]; then
      json_ok out.txt json || fail "not valid JSON"
      grep -q '"summary"' out.txt || fail "no summary"
      grep -q '"remediation"' out.txt || fail "no remediation"
    else
      grep -q "^1 finding (1 fatal) in 3 lines" out.txt || fail "no summary"
    fi ;;
  watch-sigint-summary|watch-jsonl-sigterm)
    format=text signal=INT
    [ $case = watch-jsonl-sigterm ] && format=jsonl signal=TERM
    printf "$traceback" > server.log
    "$logrx" watch -v --poll-ms 20 --format $format server.log > out.txt 2> err.txt &
    pid=$!
    await err.txt "loaded .* rules" || fail "rulebook never loaded"
    kill -$signal $pid
    wait $pid
    status=$?
    [ $status -eq 0 ] || fail "exit $status, want 0"
    grep -q "pytorch.cuda.out-of-memory" out.txt || fail "the held finding was not printed"
    if [ $format = jsonl ]; then
      json_ok out.txt jsonl || fail "a line is not valid JSON"
      tail -n 1 out.txt | grep -q '"summary":{' || fail "the last line is not the summary"
      tail -n 1 out.txt | grep -q '"remediation":\[' || fail "the last line has no remediation"
    else
      grep -q "^1 finding (1 fatal) in 3 lines" out.txt || fail "no summary"
    fi ;;
  watch-sigint-while-waiting)
    # The poll interval is a minute: a stop must not wait for it.
    "$logrx" watch --poll-ms 60000 missing.log > out.txt 2> err.txt &
    pid=$!
    await err.txt "waiting for the file to appear" || fail "did not wait"
    kill -INT $pid
    wait $pid
    status=$?
    [ $status -eq 0 ] || fail "exit $status, want 0"
    grep -q "^0 findings" out.txt || fail "no summary" ;;
  watch-fifo)
    # open() on a FIFO without a writer would block forever.
    mkfifo server.log
    timeout -k 5 30 "$logrx" watch server.log > out.txt 2> err.txt
    status=$?
    [ $status -eq 2 ] || fail "exit $status, want 2"
    grep -q "is a FIFO" err.txt || fail "no reason given" ;;
  watch-fifo-appears)
    "$logrx" watch --poll-ms 20 server.log > out.txt 2> err.txt &
    pid=$!
    await err.txt "waiting for the file to appear" || fail "did not wait"
    mkfifo server.log
    wait $pid
    status=$?
    [ $status -eq 2 ] || fail "exit $status, want 2"
    grep -q "is a FIFO" err.txt || fail "no reason given" ;;
  watch-device)
    timeout -k 5 30 "$logrx" watch /dev/zero > out.txt 2> err.txt
    status=$?
    [ $status -eq 2 ] || fail "exit $status, want 2"
    grep -q "is a device" err.txt || fail "no reason given" ;;
  watch-directory)
    timeout -k 5 30 "$logrx" watch . > out.txt 2> err.txt
    status=$?
    [ $status -eq 2 ] || fail "exit $status, want 2"
    grep -q "is a directory" err.txt || fail "no reason given" ;;
  watch-rewritten-larger)
    # Truncated and rewritten larger between two polls: the size alone says
    # nothing; the first bytes do. Resuming at the old offset would start
    # mid-line and lose the new first line's finding.
    echo "RuntimeError: CUDA error: out of memory" > server.log
    "$logrx" watch --poll-ms 2000 --format jsonl server.log > out.txt 2> err.txt &
    pid=$!
    await out.txt '"rule":"pytorch.cuda.error-out-of-memory"' || fail "no first finding"
    { echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
      echo "INFO:     Started server process [42]"; } > server.log
    await out.txt '"rule":"pytorch.cuda.out-of-memory"' || fail "the rewritten first line was lost"
    kill -TERM $pid
    wait $pid
    status=$?
    [ $status -eq 0 ] || fail "exit $status, want 0"
    grep -q "reading from the start" err.txt || fail "the rewrite was not noted" ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
echo ok
