#!/usr/bin/env bash
# Command-line conventions (issue 15): global options anywhere, -q, -V, -o per
# format, --exclude-rule, --baseline, --since forms, --gpu-memory, typo'd
# commands, `run` without `--`, help footers.
#   check_conventions.sh LOGRX SOURCE_DIR WORK CASE
set -u
logrx=$1 src=$2 work=$3 case=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL ($case): $*"; echo "--- out"; cat out.txt 2>/dev/null; echo "--- err"; cat err.txt 2>/dev/null; exit 1; }
log=$src/corpus/sglang/scenario1-eagle-96gb-silent-death.log
budget_log=$src/corpus/sglang/scenario3-b200-healthy-but-starved.log
rules_of() { python3 -c 'import json,sys; print(" ".join(f["rule"] for f in json.load(open(sys.argv[1]))["findings"]))' "$1"; }
case $case in
  verbose-anywhere)
    "$logrx" scan -v "$log" > out.txt 2> err.txt
    grep -q "loaded .* rules" err.txt || fail "scan -v logged nothing" ;;
  quiet)
    "$logrx" scan --fail-on warning "$log" -q > out.txt 2> err.txt
    status=$?
    [ $status -eq 1 ] || fail "exit $status, want 1"
    [ ! -s out.txt ] || fail "-q printed on stdout" ;;
  version)
    "$logrx" -V > out.txt 2> err.txt || fail "exit $?"
    grep -Eq "^logrx [0-9]+\.[0-9]+\.[0-9]+ \(RE2 [^,]+, .*rules: [0-9]+" out.txt || fail "no build details"
    "$logrx" scan --version > out2.txt || fail "--version after a command"
    cmp -s out.txt out2.txt || fail "-V and scan --version differ" ;;
  typo)
    "$logrx" scna "$log" > out.txt 2> err.txt
    status=$?
    [ $status -eq 2 ] || fail "exit $status, want 2"
    grep -q "did you mean 'scan'" err.txt || fail "no suggestion" ;;
  run-needs-dashdash)
    "$logrx" run python3 -c 'print(1)' > out.txt 2> err.txt
    status=$?
    [ $status -eq 2 ] || fail "exit $status, want 2"
    grep -q "after '--'" err.txt || fail "does not say to add --" ;;
  outputs)
    "$logrx" lint --format sarif -o a.sarif --format github -o a.json --format json --format github "$log" \
      > out.txt 2> err.txt && fail "two outputs on stdout were accepted"
    grep -q "only one format can go to standard output" err.txt || fail "no reason"
    "$logrx" lint --format sarif -o a.sarif --format github --format json -o a.json "$log" > out.txt 2> err.txt
    status=$?
    [ $status -eq 1 ] || fail "exit $status, want 1 (a warning)"
    grep -q "^::warning file=" out.txt || fail "no annotations on stdout"
    python3 -c 'import json,sys; d=json.load(open("a.sarif")); assert d["runs"][0]["results"]' || fail "a.sarif"
    [ "$(rules_of a.json)" = "sglang.memory.max-running-requests-reset logrx.run.ends-before-ready" ] || fail "a.json: $(rules_of a.json)"
    "$logrx" scan -o /dev/full "$log" > out.txt 2> err.txt
    [ $? -eq 2 ] && grep -q "cannot write /dev/full: No space left on device" err.txt || fail "a full -o file" ;;
  exclude-rule)
    "$logrx" scan --format json --exclude-rule sglang.memory.max-running-requests-reset "$log" > out.txt 2> err.txt
    [ "$(rules_of out.txt)" = "logrx.run.ends-before-ready" ] || fail "excluded rule still listed"
    python3 -c 'import json,sys; s=json.load(open("out.txt"))["summary"]; assert s["findings"] == 1 and "warning" not in s["by_severity"], s' \
      || fail "summary still counts it"
    ! grep -q -- "--max-running-requests" out.txt || fail "its remediation is still there" ;;
  baseline)
    "$logrx" scan --format json "$log" > base.json 2> err.txt
    cp "$log" now.log
    "$logrx" scan --format json --baseline base.json now.log > out.txt 2> err.txt
    [ "$(rules_of base.json)" = "sglang.memory.max-running-requests-reset logrx.run.ends-before-ready" ] || fail "baseline: $(rules_of base.json)"
    [ -z "$(rules_of out.txt)" ] || fail "baseline findings listed again: $(rules_of out.txt)"
    echo "[2026-05-23 07:41:40] RuntimeError: CUDA error: out of memory" >> now.log
    "$logrx" scan --format json --baseline base.json now.log > out.txt 2> err.txt
    found=" $(rules_of out.txt) "
    [[ $found == *" pytorch.cuda.error-out-of-memory "* ]] || fail "new finding missing: $found"
    [[ $found != *" sglang.memory.max-running-requests-reset "* ]] || fail "old finding listed: $found"
    echo '{"no": "report"}' > bad.json
    "$logrx" scan --baseline bad.json now.log > out.txt 2> err.txt
    [ $? -eq 2 ] && grep -q "not a 'logrx scan --format json' report" err.txt || fail "a bad baseline" ;;
  since)
    # The log is from 2026-05-23 at 07:4x: a launch a day later makes it stale,
    # the day itself (midnight) does not; an age is counted back from now.
    "$logrx" scan --format json --since 2026-05-24 "$log" > out.txt 2> err.txt || true
    grep -q '"stale": true' out.txt || fail "2026-05-24 did not make it stale"
    "$logrx" scan --format json --since 2026-05-23 "$log" > out.txt 2> err.txt || true
    ! grep -q '"stale": true' out.txt || fail "2026-05-23 made it stale"
    "$logrx" scan --format json --since 1h "$log" > out.txt 2> err.txt || true
    grep -q '"stale": true' out.txt || fail "--since 1h did not make a May log stale"
    "$logrx" scan --since 1fortnight "$log" > out.txt 2> err.txt
    [ $? -eq 2 ] || fail "a bad --since was accepted" ;;
  gpu-memory)
    "$logrx" budget --format json --gpu-memory 96GiB "$budget_log" > out.txt 2> err.txt || fail "exit $?"
    python3 -c 'import json; d=json.load(open("out.txt")); assert d["total_gb"] == 96 and not d["total_estimated"], d' \
      || fail "total not taken"
    "$logrx" budget --gpu-memory lots "$budget_log" > out.txt 2> err.txt
    [ $? -eq 2 ] || fail "a bad size was accepted" ;;
  help-footers)
    # A footer names only options its command has.
    for command in budget gaps explain eval watch "rules list" "rules lint" "rules test"; do
      # shellcheck disable=SC2086
      "$logrx" $command --help > out.txt 2> err.txt
      ! grep -q -- "--fail-on" out.txt || fail "'$command --help' mentions --fail-on"
    done ;;
  terminal-hint)
    # stdin a terminal (a pseudo-terminal from script(1), whose input ends at
    # once): a hint says where the log is expected. A pipe gets none.
    timeout -k 5 30 script -qec "\"$logrx\" scan" /dev/null < /dev/null > out.txt 2>&1
    grep -q "reading the log from the terminal" out.txt || fail "no hint"
    "$logrx" scan < /dev/null > out.txt 2> err.txt
    ! grep -q "terminal" err.txt || fail "a hint for a non-terminal" ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
echo ok
