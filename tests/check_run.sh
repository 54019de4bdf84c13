#!/usr/bin/env bash
# `logrx run` with real child processes (tests/fake_server.sh).
#   check_run.sh LOGRX FAKE_SERVER WORKDIR CASE
set -u
logrx=$1 fake=$2 work=$3 case=$4
rm -rf "$work/$case" && mkdir -p "$work/$case" && cd "$work/$case" || exit 2
fail() { echo "FAIL ($case): $*"; echo "--- stdout"; cat out.txt 2>/dev/null | head -40; echo "--- stderr"; cat err.txt 2>/dev/null | head -60; exit 1; }

case "$case" in
relaunch)
  "$logrx" run --restart 3 --apply-remediation --backoff 0 --log-dir logs -- \
    sh "$fake" --model-path fake/model --mem-fraction-static 0.80 --tp-size 1 --tokenizer fake/tok --api-key sk-abcdefghijklmnopqrstuv > out.txt 2> err.txt
  status=$?
  [ $status -eq 0 ] || fail "exit $status, want 0 after the healed relaunch"
  grep -q "relaunching (attempt 2 of 4) with: --mem-fraction-static 0.85 (was 0.80)" err.txt || fail "no relaunch line"
  grep -q "^ARGS: --model-path fake/model --mem-fraction-static 0.85 --tp-size 1 --tokenizer fake/tok --api-key sk-abcdefghijklmnopqrstuv$" out.txt || fail "relaunch argv"
  head -1 logs/run-001/attempt-1.log | grep -q "^# logrx run attempt 1: sh .*fake_server.sh --model-path fake/model --mem-fraction-static 0.80 --tp-size 1 --tokenizer fake/tok --api-key '<redacted>'" || fail "attempt-1 header"
  head -1 logs/run-001/attempt-2.log | grep -q "mem-fraction-static 0.85" || fail "attempt-2 header"
  grep -q "Not enough memory" logs/run-001/attempt-1.log || fail "attempt-1 log lacks the output"
  [ ! -e logs/run-001/attempt-3.log ] || fail "a third attempt ran"
  # Secrets never reach the echoes, the attempt-log headers or run.json.
  ! grep -q "sk-abcdefghijklmnopqrstuv" err.txt logs/run-001/run.json || fail "the api key leaked into stderr or run.json"
  ! head -1 logs/run-001/attempt-1.log | grep -q "sk-abcdefghijklmnopqrstuv" || fail "the api key leaked into the log header"
  # A flag that only has "token" in its name keeps its value in the echo.
  grep -q "attempt 1: .*--tokenizer fake/tok --api-key '<redacted>'" err.txt || fail "echo over-redacted or under-redacted"
  grep -q '"verdict": "ready"' logs/run-001/run.json || fail "run.json verdict"
  grep -q '"attempt": 1,' logs/run-001/run.json && grep -q '"attempt": 2,' logs/run-001/run.json || fail "run.json attempts"
  grep -q '"--mem-fraction-static",' logs/run-001/run.json || fail "run.json argv"
  grep -q '"rule": "sglang.memory.not-enough-memory"' logs/run-001/run.json || fail "run.json findings"
  # A second run gets its own folder.
  "$logrx" run --log-dir logs -- sh "$fake" --mode exit --code 0 > /dev/null 2>&1
  [ -f logs/run-002/attempt-1.log ] && [ -f logs/run-002/run.json ] || fail "second run not in run-002"
  [ ! -e logs/run-001/attempt-3.log ] || fail "the second run wrote into the first one's folder"
  ;;
flags-and-environment)
  "$logrx" run --restart 2 --apply-remediation --backoff 0 -- \
    sh "$fake" --mode spec-conflict --model-path sglang-fake > out.txt 2> err.txt
  [ $? -eq 0 ] || fail "exit status after the relaunch"
  grep -q "^ARGS: --mode spec-conflict --model-path sglang-fake --mamba-scheduler-strategy extra_buffer$" out.txt || fail "flag not added"
  grep -q "^ENV SGLANG_ENABLE_SPEC_V2=1 " out.txt || fail "variable not set in the child"
  grep -q "attempt 2: SGLANG_ENABLE_SPEC_V2=1 sh " err.txt || fail "command line does not show the variable"
  ;;
stop-when-nothing-new)
  # 0.95 is the ceiling: the prescription equals the current value.
  "$logrx" run --restart 5 --apply-remediation --backoff 0 -- sh "$fake" --mode always-fail --mem-fraction-static 0.95 > out.txt 2> err.txt
  status=$?
  [ $status -eq 1 ] || fail "exit $status, want the child's 1"
  grep -q "nothing new to apply; not relaunching" err.txt || fail "did not stop"
  [ "$(grep -c '^ARGS:' out.txt)" -eq 1 ] || fail "relaunched anyway"
  ;;
stop-when-recurring)
  # 0.80 -> 0.85 -> 0.90 -> 0.95, then the same finding with nothing new.
  "$logrx" run --restart 10 --apply-remediation --backoff 0 -- sh "$fake" --mode always-fail --mem-fraction-static 0.80 > out.txt 2> err.txt
  [ "$(grep -c '^ARGS:' out.txt)" -eq 4 ] || fail "want 4 attempts, got $(grep -c '^ARGS:' out.txt)"
  grep -q "nothing new to apply" err.txt || fail "no stop reason"
  ;;
restart-alone)
  # Plain supervision: the same command again, with a growing pause.
  "$logrx" run --restart 2 --backoff 0.1 -- sh "$fake" --mem-fraction-static 0.80 > out.txt 2> err.txt
  [ $? -eq 1 ] || fail "exit status"
  [ "$(grep -c '^ARGS: --mem-fraction-static 0.80$' out.txt)" -eq 3 ] || fail "want 3 identical attempts"
  grep -q "fix: --mem-fraction-static 0.85" err.txt || fail "no diagnosis"
  grep -q "relaunching (attempt 2 of 3) with the same command in 0.1 s" err.txt || fail "first pause"
  grep -q "relaunching (attempt 3 of 3) with the same command in 0.2 s" err.txt || fail "no exponential backoff"
  ;;
honest-options)
  "$logrx" run --apply-remediation -- sh "$fake" --mode exit --code 0 > out.txt 2> err.txt
  [ $? -eq 2 ] || fail "--apply-remediation without --restart must be a usage error"
  grep -q "needs --restart" err.txt || fail "no explanation"
  [ ! -s out.txt ] || fail "the server started"
  mkdir ro && chmod 500 ro
  if [ ! -w ro ]; then
    "$logrx" run --log-dir ro/logs -- sh "$fake" --mode exit --code 0 > out.txt 2> err.txt
    [ $? -eq 2 ] || fail "an unwritable --log-dir must be an error"
    grep -q "cannot create --log-dir" err.txt || fail "no message for the log dir"
    [ ! -s out.txt ] || fail "the server started with an unwritable log dir"
  fi
  "$logrx" run --log-dir /dev/null/logs -- sh "$fake" --mode exit --code 0 > out.txt 2> err.txt
  [ $? -eq 2 ] || fail "a --log-dir under a file must be an error"
  [ ! -s out.txt ] || fail "the server started"
  "$logrx" run --ready-url http://example.com/health -- sh "$fake" --mode exit --code 0 > out.txt 2> err.txt
  [ $? -eq 2 ] || fail "a --ready-url with a host name must be refused"
  ;;
shell-script)
  # The fix goes inside the quoted command...
  "$logrx" run --restart 1 --apply-remediation --backoff 0 -- sh -c "exec sh '$fake' --mem-fraction-static 0.80 --model-path fake/model" > out.txt 2> err.txt
  [ $? -eq 0 ] || fail "exit status after the rewritten relaunch"
  grep -q "^ARGS: --mem-fraction-static 0.85 --model-path fake/model$" out.txt || fail "not rewritten inside the script"
  # ... or, when the script is more than plain words, refused before anything runs.
  "$logrx" run --restart 1 --apply-remediation -- sh -c "sh '$fake' --mem-fraction-static 0.80 | cat" > out.txt 2> err.txt
  [ $? -eq 2 ] || fail "a pipeline must be refused"
  grep -q "cannot rewrite safely" err.txt || fail "no explanation"
  [ ! -s out.txt ] || fail "the server started"
  ;;
orphaned-grandchild)
  # The server exits; its grandchild keeps the pipe open. logrx stops the
  # group and does not wait for an EOF that would never come.
  "$logrx" run --kill-grace 2 -- sh "$fake" --mode orphan > out.txt 2> err.txt
  [ $? -eq 1 ] || fail "exit status"
  grep -q "stopping what is left of its process group" err.txt || fail "no group stop"
  pid=$(cat grandchild.pid)
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  ! kill -0 "$pid" 2>/dev/null || { kill "$pid"; fail "the grandchild survived"; }
  ;;
sigterm-ignored)
  "$logrx" run --kill-grace 1 -- sh "$fake" --mode ignore-term > out.txt 2> err.txt &
  pid=$!
  for _ in $(seq 1 100); do [ -e started ] && break; sleep 0.1; done
  kill -TERM $pid
  wait $pid
  status=$?
  [ $status -eq 137 ] || fail "exit $status, want 137 (SIGKILL after the grace)"
  grep -q "sending SIGKILL" err.txt || fail "no escalation message"
  ;;
fatal-then-hang)
  # The fatal error is reported while the server hangs, the server is stopped
  # after --fatal-grace and relaunched with the fix.
  "$logrx" run --fatal-grace 1 --kill-grace 1 --restart 1 --apply-remediation --backoff 0 --events ev.jsonl -- \
    sh "$fake" --mode fatal-then-hang --mem-fraction-static 0.80 > out.txt 2> err.txt
  status=$?
  [ $status -eq 0 ] || fail "exit $status, want 0 after the relaunch"
  grep -q "logrx: fatal: Not enough GPU memory" err.txt || fail "the fatal finding was not reported during the hang"
  grep -q "still running 1 s after a fatal error; stopping it" err.txt || fail "not stopped after --fatal-grace"
  grep -q "logrx.run.hung-after-fatal" err.txt || fail "no hang finding"
  grep -q "^ARGS: --mode fatal-then-hang --mem-fraction-static 0.85$" out.txt || fail "not relaunched with the fix"
  for e in attempt_started finding stopped exited relaunching ready verdict; do
    grep -q "^{\"event\":\"$e\"" ev.jsonl || fail "no $e event"
  done
  grep -q '"reason":"fatal-grace"' ev.jsonl || fail "stop reason not in the events"
  grep -q '^{"event":"verdict".*"result":"ready"' ev.jsonl || fail "verdict event"
  ;;
closed-stdio)
  # The child closed its output: SIGTERM still reaches it.
  "$logrx" run --kill-grace 5 -- sh "$fake" --mode closed-stdio > out.txt 2> err.txt &
  pid=$!
  for _ in $(seq 1 100); do [ -e started ] && break; sleep 0.1; done
  kill -TERM $pid
  wait $pid
  status=$?
  [ -e got-term ] || fail "the child did not get SIGTERM"
  [ $status -eq 143 ] || fail "exit $status, want 143"
  # logrx's own stdout closed: the server still runs and is diagnosed.
  "$logrx" run -- sh "$fake" --mode always-fail >&- 2> err.txt
  [ $? -eq 1 ] || fail "exit status with stdout closed"
  grep -q "fix: --mem-fraction-static" err.txt || fail "no diagnosis with stdout closed"
  ;;
descriptors)
  # Nothing of logrx's (attempt log, pipes, events file) leaks into the child.
  sh "$fake" --mode fds 9> /dev/null | grep '^FD' | sort > direct.txt
  "$logrx" run --log-dir logs --events ev.jsonl -- sh "$fake" --mode fds 9> /dev/null > out.txt 2> err.txt
  grep '^FD' out.txt | sort > via.txt
  diff direct.txt via.txt > /dev/null || { diff direct.txt via.txt; fail "the child has other descriptors under logrx"; }
  grep -q "^FD 9$" via.txt || fail "an inherited descriptor was closed"
  ;;
speculative-oom-loop)
  # Start-up pool failures push --mem-fraction-static up, CUDA graph capture
  # OOM pulls it back down: logrx must not oscillate, must switch to
  # --cuda-graph-max-bs, never pass a bare --max-running-requests, and end ready.
  "$logrx" run --restart 8 --apply-remediation --backoff 0 --save-cmd worked.sh --log-dir logs -- \
    sh "$fake" --mode spec-oom --mem-fraction-static 0.80 > out.txt 2> err.txt
  status=$?
  [ $status -eq 0 ] || fail "exit $status, want 0 (ready)"
  ! grep -q "ARGV-INVALID" out.txt || fail "a relaunch argv was refused by the argument parser"
  ! grep -q "^ARGS:.*--max-running-requests" out.txt || fail "the advice became an argument"
  grep -q "not lowering --mem-fraction-static to 0.85" err.txt || fail "went back to a value that failed"
  grep -q "trying --cuda-graph-max-bs 80 instead" err.txt || fail "did not switch knobs"
  tail -1 out.txt | grep -q "ready to roll" || fail "did not end ready"
  [ "$(grep -c '^ARGS:' out.txt)" -eq 5 ] || fail "want 5 attempts, got $(grep -c '^ARGS:' out.txt)"
  grep -q "^ARGS: --mode spec-oom --mem-fraction-static 0.9 --cuda-graph-max-bs 40$" out.txt || fail "final argv"
  grep -q "verdict: ready with attempt 5" err.txt || fail "no verdict"
  [ -x worked.sh ] || fail "--save-cmd did not write an executable script"
  sh worked.sh > saved.txt 2>&1
  grep -q "^ARGS: --mode spec-oom --mem-fraction-static 0.9 --cuda-graph-max-bs 40$" saved.txt || fail "the saved command differs"
  grep -q '"verdict": "ready"' logs/run-001/run.json || fail "run.json verdict"
  ;;
only-known-flags)
  # Told the server is vLLM, the SGLang flag must not be applied.
  "$logrx" run --server vllm --restart 2 --apply-remediation -- sh "$fake" --mem-fraction-static 0.80 > out.txt 2> err.txt
  grep -q "not applied: --mem-fraction-static (not a known vllm flag)" err.txt || fail "applied an unknown flag"
  [ "$(grep -c '^ARGS:' out.txt)" -eq 1 ] || fail "relaunched"
  ;;
exit-status)
  "$logrx" run -- sh "$fake" --mode exit --code 3 > out.txt 2> err.txt
  [ $? -eq 3 ] || fail "exit status not passed through"
  "$logrx" run -- /nonexistent/server > out.txt 2> err.txt
  [ $? -eq 127 ] || fail "a missing command should exit 127"
  grep -q "cannot run /nonexistent/server" err.txt || fail "no message for a missing command"
  ;;
signal-forwarding)
  "$logrx" run -- sh "$fake" --mode serve > out.txt 2> err.txt &
  pid=$!
  for _ in $(seq 1 50); do grep -q "ready to roll" out.txt 2>/dev/null && break; sleep 0.1; done
  kill -TERM $pid
  wait $pid
  status=$?
  [ $status -eq 143 ] || fail "exit $status, want 143"
  grep -q "got SIGTERM" out.txt || fail "the child did not get SIGTERM"
  ;;
startup-timeout)
  "$logrx" run --startup-timeout 1 -- sh "$fake" --mode silent > out.txt 2> err.txt
  grep -q "the server printed nothing within 1 s (logrx.run.no-output)" err.txt || fail "no timeout report"
  grep -q "logrx.run.no-output" err.txt || fail "no finding"
  ;;
silent-death)
  "$logrx" run -- sh "$fake" --mode silent-death > out.txt 2> err.txt
  status=$?
  [ $status -eq 137 ] || fail "exit $status, want 137 (SIGKILL)"
  grep -q "killed by signal 9" err.txt || fail "no signal report"
  grep -q "logrx.run.died-before-ready" err.txt || fail "the silent death was not reported"
  ;;
pass-through)
  "$logrx" run -- sh "$fake" --mode binary > out.txt 2> err.txt
  sh "$fake" --mode binary > expected.txt
  # The ARGS line is identical too, so the whole output must be byte for byte the same.
  cmp out.txt expected.txt || fail "output changed on the way through"
  [ "$(wc -c < out.txt)" -gt 100000 ] || fail "the long line was cut"
  ;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo "ok ($case)"
