#!/usr/bin/env bash
# A write error is an error: every subcommand whose output cannot be written
# (here /dev/full: ENOSPC) exits 2 and says why on stderr, instead of exit 0
# with the output lost.
#   check_write_errors.sh LOGRX SOURCE_DIR WORK CASE
set -u
logrx=$1 src=$2 work=$3 case=$4
mkdir -p "$work" && cd "$work" || exit 2
[ -w /dev/full ] || { echo "FAIL: /dev/full is needed for this test"; exit 1; }
log=$src/corpus/sglang/scenario1-not-enough-memory.log
expect_enospc() {  # COMMAND... (stdout goes to /dev/full)
  "$@" > /dev/full 2> err.txt
  local status=$?
  if [ $status -ne 2 ] || ! grep -q "No space left on device" err.txt; then
    echo "FAIL: $* > /dev/full: exit $status, want 2 with the reason"; cat err.txt; exit 1
  fi
}
case $case in
  scan)           expect_enospc "$logrx" scan "$log" ;;
  scan-json)      expect_enospc "$logrx" scan --format json "$log" ;;
  scan-stdin)     expect_enospc sh -c "exec \"\$0\" scan < \"\$1\"" "$logrx" "$log" ;;
  lint-sarif)     expect_enospc "$logrx" lint --format sarif "$log" ;;
  lint-github)    expect_enospc "$logrx" lint --format github "$log" ;;
  budget)         expect_enospc "$logrx" budget "$src/corpus/sglang/scenario3-b200-healthy-but-starved.log" ;;
  budget-json)    expect_enospc "$logrx" budget --format json "$src/corpus/sglang/scenario3-b200-healthy-but-starved.log" ;;
  gaps)           expect_enospc "$logrx" gaps "$log" ;;
  rules-list)     expect_enospc "$logrx" rules list ;;
  rules-patterns) expect_enospc "$logrx" rules patterns ;;
  rules-test)     expect_enospc "$logrx" rules test ;;
  rules-lint)     expect_enospc "$logrx" rules lint ;;
  rules-coverage) expect_enospc "$logrx" rules coverage --templates "$src/corpus/templates" ;;
  explain)        expect_enospc "$logrx" explain sglang.memory.not-enough-memory ;;
  eval)           expect_enospc "$logrx" eval "$src/tests/data/eval/good" ;;
  help)           expect_enospc "$logrx" --help ;;
  watch|watch-jsonl)
    # watch writes a finding as soon as it sees one: the failed write ends it
    # (no signal needed), exit 2.
    format=text; [ $case = watch-jsonl ] && format=jsonl
    echo "RuntimeError: CUDA error: out of memory" > server.log
    timeout 60 "$logrx" watch --poll-ms 20 --format $format server.log > /dev/full 2> err.txt
    status=$?
    if [ $status -ne 2 ] || ! grep -q "No space left on device" err.txt; then
      echo "FAIL: watch > /dev/full: exit $status, want 2 with the reason"; cat err.txt; exit 1
    fi ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
echo ok
