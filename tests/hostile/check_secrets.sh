#!/usr/bin/env bash
# No secret of the corpus reaches any output: every subcommand that prints log
# content, in every format, and the C API. A secret counts as leaked when any
# 6-character window of it appears, so a partial redaction fails too.
#   check_secrets.sh LOGRX CAPI_DUMP DATA_DIR WORK_DIR
set -u
logrx=$1 capi=$2 data=$3 work=$4
rm -rf "$work" && mkdir -p "$work" || exit 2
log=$data/secrets.log
failed=0
# Every 6-character window of every secret.
awk '{ for (i = 1; i + 5 <= length($0); i++) print substr($0, i, 6) }' "$data/fragments.txt" > "$work/windows.txt"
[ -s "$work/windows.txt" ] || { echo "FAIL: no secrets to look for"; exit 1; }

check() {  # NAME FILE [must-show-redacted]
  local name=$1 file=$2
  if [ ! -s "$file" ]; then
    echo "FAIL: $name printed nothing"; failed=1; return
  fi
  if grep -F -q -f "$work/windows.txt" "$file"; then
    echo "FAIL: $name leaks:"
    grep -F -o -f "$work/windows.txt" "$file" | sort -u | head -20
    failed=1
  fi
  if [ "${3:-}" = redacted ] && ! grep -q 'redacted' "$file"; then
    echo "FAIL: $name shows no <redacted> (did the secrets reach it at all?)"; failed=1
  fi
}

# The corpus must reach the output: without redaction every secret shows.
"$logrx" scan --no-redact --format json "$log" > "$work/no-redact.json"
missing=$(grep -F -v -x -f <(grep -F -o -f "$data/fragments.txt" "$work/no-redact.json" | sort -u) "$data/fragments.txt")
if [ -n "$missing" ]; then
  echo "FAIL: these secrets never reach scan's output, so the test cannot see them leak:"
  echo "$missing"
  failed=1
fi

for command in scan lint; do
  for format in text json sarif github; do
    "$logrx" $command --format $format --color never "$log" > "$work/$command.$format" 2> "$work/$command.$format.err"
    check "$command --format $format" "$work/$command.$format" redacted
    [ -s "$work/$command.$format.err" ] && check "$command --format $format (stderr)" "$work/$command.$format.err"
  done
done
# Explanations off, and several files at once.
"$logrx" scan --brief --color never "$log" "$log" > "$work/scan.brief" 2>&1
check "scan --brief" "$work/scan.brief" redacted
"$logrx" scan --launch-cmd "vllm serve m --api-key Ak8Pi2Ky5Vl9Xq3M" --format json "$log" > "$work/scan.launch" 2>&1
check "scan --launch-cmd" "$work/scan.launch" redacted
"$logrx" scan --format json < "$log" > "$work/scan.stdin" 2>&1
check "scan (stdin)" "$work/scan.stdin" redacted

for format in text json; do
  "$logrx" gaps --format $format "$log" > "$work/gaps.$format" 2>&1
  check "gaps --format $format" "$work/gaps.$format"
  "$logrx" budget --format $format "$log" > "$work/budget.$format" 2>&1
  check "budget --format $format" "$work/budget.$format"
done
# gaps shows the problem lines no rule matched, themselves.
sed 's/^/ERROR 12-25 04:48:30 [x.py:1] upstream refused the call: /' "$data/secret-lines.txt" > "$work/unmatched.log"
"$logrx" gaps --no-redact "$work/unmatched.log" > "$work/gaps.no-redact" 2>&1
grep -F -q -f "$work/windows.txt" "$work/gaps.no-redact" || { echo "FAIL: gaps shows none of the secret lines"; failed=1; }
for format in text json; do
  "$logrx" gaps --format $format "$work/unmatched.log" > "$work/gaps.unmatched.$format" 2>&1
  check "gaps --format $format of unmatched lines" "$work/gaps.unmatched.$format" redacted
done

# watch prints findings as they happen (jsonl) and its summary on SIGTERM.
for format in jsonl text; do
  cp "$log" "$work/watched.$format.log"
  "$logrx" watch --poll-ms 20 --format $format "$work/watched.$format.log" > "$work/watch.$format" 2> "$work/watch.$format.err" &
  pid=$!
  for _ in $(seq 300); do
    [ "$(grep -c 'out-of-memory' "$work/watch.$format" 2>/dev/null)" -ge 20 ] && break
    sleep 0.1
  done
  kill -TERM $pid
  wait $pid
  check "watch --format $format" "$work/watch.$format" redacted
  [ -s "$work/watch.$format.err" ] && check "watch --format $format (stderr)" "$work/watch.$format.err"
done

"$capi" "$log" > "$work/capi.out" 2>&1
check "C API" "$work/capi.out" redacted

[ $failed -eq 0 ] && echo ok
exit $failed
