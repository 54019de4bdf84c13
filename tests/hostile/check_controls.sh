#!/usr/bin/env bash
# Control, bidi and zero-width characters from a log line (through a captured
# title, the message and the file name) and from a hostile rule file never
# reach a terminal, a CI log or a JSON consumer raw: in every format of scan
# and lint, in watch's JSONL, and in stderr diagnostics.
#   check_controls.sh LOGRX DATA_DIR WORK_DIR
set -u
logrx=$1 data=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 2
export LC_ALL=C
failed=0
# BS, BEL, DEL, C1 CSI (U+009B), RLO (U+202E), LRI (U+2066), PDI (U+2069),
# LRM (U+200E), ZWSP (U+200B), ZWJ (U+200D), BOM (U+FEFF), LINE SEPARATOR (U+2028).
hostile=$'\b\a\x7f\xc2\x9b31m\xe2\x80\xae\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8b\xe2\x80\x8d\xef\xbb\xbf\xe2\x80\xa8'
forbidden=($'\b' $'\a' $'\x7f' $'\x1b' $'\xc2\x9b' $'\xe2\x80\xae' $'\xe2\x81\xa6' $'\xe2\x81\xa9'
           $'\xe2\x80\x8e' $'\xe2\x80\x8b' $'\xe2\x80\x8d' $'\xef\xbb\xbf' $'\xe2\x80\xa8' $'\x9b')
# The file name carries them too (GitHub's file= property, SARIF's uri, text).
log="$work/evil"$'\xe2\x80\xae\a'".log"
printf 'ERROR 12-25 04:48:30 [x.py:1] upstream refused: %s done %s end\n' "$hostile" "$hostile" > "$log"
printf 'upstream refused: raw byte \x9b and \x85 here\n' >> "$log"

check() {  # NAME FILE
  local name=$1 file=$2 seq
  [ -s "$file" ] || { echo "FAIL: $name printed nothing"; failed=1; return; }
  for seq in "${forbidden[@]}"; do
    if grep -q -F -- "$seq" "$file"; then
      echo "FAIL: $name carries raw $(printf '%s' "$seq" | od -An -tx1 | tr -d ' ')"
      failed=1
    fi
  done
}

for command in scan lint; do
  for format in text json sarif github; do
    "$logrx" $command --rules "$data/rules" --format $format --color never "$log" > "$work/$command.$format" 2> "$work/$command.$format.err"
    check "$command --format $format" "$work/$command.$format"
    [ -s "$work/$command.$format.err" ] && check "$command --format $format (stderr)" "$work/$command.$format.err"
  done
done
# The hostile text did reach the outputs, written visibly.
grep -q 'Upstream refused: .*\\u202e' "$work/scan.text" || { echo "FAIL: the title did not reach the text output"; failed=1; }
grep -q '^::error file=.*\\u202e.*title=site.upstream.refused%3A Upstream refused%3A \\x08\\x07\\x7f\\u009b31m\\u202e\\u2066\\u2069\\u200e\\u200b\\u200d\\ufeff\\u2028' "$work/scan.github" ||
  { echo "FAIL: GitHub annotation properties not escaped as expected:"; cat "$work/scan.github"; failed=1; }
grep -q '\\u009b31m\\u202e' "$work/scan.json" || { echo "FAIL: JSON does not escape U+009B and U+202E as \\u"; failed=1; }
grep -q '\\u009b31m\\u202e' "$work/scan.sarif" || { echo "FAIL: SARIF does not escape U+009B and U+202E as \\u"; failed=1; }
# The JSON documents still parse, and their strings decode back to the characters.
if command -v python3 > /dev/null; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "\u202e" in d["findings"][0]["title"]' "$work/scan.json" ||
    { echo "FAIL: scan --format json does not parse back to the same title"; failed=1; }
fi

"$logrx" watch --poll-ms 20 --rules "$data/rules" --format jsonl "$log" > "$work/watch.jsonl" 2> "$work/watch.err" &
pid=$!
for _ in $(seq 300); do
  [ "$(grep -c 'site.upstream.refused' "$work/watch.jsonl" 2>/dev/null)" -ge 2 ] && break
  sleep 0.1
done
kill -TERM $pid
wait $pid
check "watch --format jsonl" "$work/watch.jsonl"

# A hostile rule file: its diagnostics on stderr show the escapes, not run them.
for args in "scan --no-builtin-rules --rules $data/bad_rules /dev/null" "rules lint --no-builtin-rules $data/bad_rules"; do
  "$logrx" $args > "$work/bad.out" 2> "$work/bad.err"
  cat "$work/bad.out" >> "$work/bad.err"
  check "$args (diagnostics)" "$work/bad.err"
  grep -q 'evil\\x1b\]0;pwned\\x07' "$work/bad.err" || { echo "FAIL: $args: the rule id is not shown escaped"; cat "$work/bad.err"; failed=1; }
done

[ $failed -eq 0 ] && echo ok
exit $failed
