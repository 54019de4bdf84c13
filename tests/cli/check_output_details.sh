#!/usr/bin/env bash
# Output details (issue 15): SARIF rule descriptions without template source,
# a failed input in SARIF's invocation, JSON numbers without binary noise,
# "caused by" in text, singular counts.
#   check_output_details.sh LOGRX SOURCE_DIR WORK CASE
set -u
logrx=$1 src=$2 work=$3 case=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL ($case): $*"; echo "--- out"; head -c 3000 out.txt 2>/dev/null; echo "--- err"; cat err.txt 2>/dev/null; exit 1; }
case $case in
  sarif-descriptions)
    # Every rule that fires on the corpus (one pass over every log): no
    # description shows "{name}" or "{= expr}".
    "$logrx" scan --format sarif --fail-on never "$src"/corpus/*/*.log "$src"/corpus/real/*/*.log > out.txt 2> err.txt \
      || fail "exit $?"
    python3 - out.txt <<'PY' || fail "a raw template"
import json, sys
rules = json.load(open(sys.argv[1]))["runs"][0]["tool"]["driver"]["rules"]
assert len(rules) > 100, len(rules)
for rule in rules:
    text = rule["shortDescription"]["text"]
    assert text and "{" not in text and "}" not in text, (rule["id"], text)
PY
    ;;
  sarif-failed-input)
    "$logrx" scan --format sarif missing.log "$src/corpus/sglang/scenario1-not-enough-memory.log" > out.txt 2> err.txt
    [ $? -eq 2 ] || fail "exit status"
    python3 - out.txt <<'PY' || fail "no failed invocation"
import json, sys
inv = json.load(open(sys.argv[1]))["runs"][0]["invocations"][0]
assert inv["executionSuccessful"] is False, inv
note = inv["toolExecutionNotifications"][0]
assert note["level"] == "error" and "missing.log" in note["message"]["text"], note
PY
    "$logrx" scan --format sarif "$src/corpus/vllm/healthy-start-0.13.log" > out.txt 2> err.txt
    python3 -c 'import json,sys; assert json.load(open("out.txt"))["runs"][0]["invocations"][0]["executionSuccessful"] is True' \
      || fail "a clean run is not successful" ;;
  json-numbers)
    "$logrx" scan --format json "$src/corpus/sglang/scenario1-eagle-96gb-silent-death.log" > out.txt 2> err.txt
    grep -q '"mamba_gb": 11.41,' out.txt || fail "mamba_gb is not 11.41"
    ! grep -Eq '[0-9]\.[0-9]*(0000000|9999999)[0-9]' out.txt || fail "binary noise in a number" ;;
  text-caused-by)
    "$logrx" scan "$src/corpus/sglang/scenario1-not-enough-memory.log" > out.txt 2> err.txt
    grep -q "caused by sglang.memory.not-enough-memory at line 23" out.txt || fail "no 'caused by'" ;;
  one-launch)
    "$logrx" budget --run 2 "$src/corpus/sglang/scenario3-b200-healthy-but-starved.log" > out.txt 2> err.txt
    [ $? -eq 2 ] || fail "exit status"
    grep -q "holds 1 launch, not 2" err.txt || fail "plural" ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
echo ok
