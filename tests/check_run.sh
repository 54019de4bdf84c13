#!/usr/bin/env bash
# `logrx run` with real child processes (tests/fake_server.sh).
#   check_run.sh LOGRX FAKE_SERVER WORKDIR CASE
set -u
logrx=$1 fake=$2 work=$3 case=$4
rm -rf "$work/$case" && mkdir -p "$work/$case" && cd "$work/$case" || exit 2
fail() { echo "FAIL ($case): $*"; echo "--- stdout"; cat out.txt 2>/dev/null | head -40; echo "--- stderr"; cat err.txt 2>/dev/null | head -60; exit 1; }

case "$case" in
relaunch)
  "$logrx" run --restart 3 --apply-remediation --log-dir logs -- \
    sh "$fake" --model-path fake/model --mem-fraction-static 0.80 --tp-size 1 > out.txt 2> err.txt
  status=$?
  [ $status -eq 0 ] || fail "exit $status, want 0 after the healed relaunch"
  grep -q "relaunching (attempt 2 of 4) with: --mem-fraction-static 0.85 (was 0.80)" err.txt || fail "no relaunch line"
  grep -q "^ARGS: --model-path fake/model --mem-fraction-static 0.85 --tp-size 1$" out.txt || fail "relaunch argv"
  head -1 logs/attempt-1.log | grep -q "^# logrx run attempt 1: sh .*fake_server.sh --model-path fake/model --mem-fraction-static 0.80 --tp-size 1$" || fail "attempt-1 header"
  head -1 logs/attempt-2.log | grep -q "mem-fraction-static 0.85" || fail "attempt-2 header"
  grep -q "Not enough memory" logs/attempt-1.log || fail "attempt-1 log lacks the output"
  [ ! -e logs/attempt-3.log ] || fail "a third attempt ran"
  ;;
flags-and-environment)
  "$logrx" run --restart 2 --apply-remediation -- \
    sh "$fake" --mode spec-conflict --model-path sglang-fake > out.txt 2> err.txt
  [ $? -eq 0 ] || fail "exit status after the relaunch"
  grep -q "^ARGS: --mode spec-conflict --model-path sglang-fake --mamba-scheduler-strategy extra_buffer$" out.txt || fail "flag not added"
  grep -q "^ENV SGLANG_ENABLE_SPEC_V2=1 " out.txt || fail "variable not set in the child"
  grep -q "attempt 2: SGLANG_ENABLE_SPEC_V2=1 sh " err.txt || fail "command line does not show the variable"
  ;;
stop-when-nothing-new)
  # 0.95 is the ceiling: the prescription equals the current value.
  "$logrx" run --restart 5 --apply-remediation -- sh "$fake" --mode always-fail --mem-fraction-static 0.95 > out.txt 2> err.txt
  status=$?
  [ $status -eq 1 ] || fail "exit $status, want the child's 1"
  grep -q "nothing new to apply; not relaunching" err.txt || fail "did not stop"
  [ "$(grep -c '^ARGS:' out.txt)" -eq 1 ] || fail "relaunched anyway"
  ;;
stop-when-recurring)
  # 0.80 -> 0.85 -> 0.90 -> 0.95, then the same finding with nothing new.
  "$logrx" run --restart 10 --apply-remediation -- sh "$fake" --mode always-fail --mem-fraction-static 0.80 > out.txt 2> err.txt
  [ "$(grep -c '^ARGS:' out.txt)" -eq 4 ] || fail "want 4 attempts, got $(grep -c '^ARGS:' out.txt)"
  grep -q "nothing new to apply" err.txt || fail "no stop reason"
  ;;
no-restart-without-apply)
  "$logrx" run --restart 3 -- sh "$fake" --mem-fraction-static 0.80 > out.txt 2> err.txt
  [ $? -eq 1 ] || fail "exit status"
  [ "$(grep -c '^ARGS:' out.txt)" -eq 1 ] || fail "relaunched without --apply-remediation"
  grep -q "fix: --mem-fraction-static 0.85" err.txt || fail "no diagnosis"
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
