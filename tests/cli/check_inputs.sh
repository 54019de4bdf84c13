#!/usr/bin/env bash
# Real inputs: compressed files and stdin in every subcommand that reads logs,
# several inputs (files, directories with --glob, '-'), each its own stream,
# an unreadable one reported while the others are still scanned, and watch
# reading rotated compressed copies first.
#   check_inputs.sh LOGRX SOURCE_DIR WORK CASE
set -u
logrx=$1 src=$2 work=$3 case=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fail() { echo "FAIL ($case): $*"; echo "--- out"; cat out.txt 2>/dev/null; echo "--- err"; cat err.txt 2>/dev/null; exit 1; }
data=$src/tests/data/compressed
sglang=$src/corpus/sglang/scenario1-not-enough-memory.log
vllm=$src/corpus/vllm/max-model-len-too-large-colour-crlf.log
json() { python3 -c "import json,sys; d=json.load(open('out.txt')); print($1)"; }
case $case in
  compressed-everywhere)
    "$logrx" scan --format json "$sglang" > plain.json 2> err.txt
    plain_rules=$(python3 -c 'import json; print([f["rule"] for f in json.load(open("plain.json"))["findings"]])')
    for f in log.gz log.zst log.xz log.bz2 two-members.gz; do
      "$logrx" scan --format json "$data/$f" > out.txt 2> err.txt
      [ $? -eq 1 ] || fail "$f: scan exit $?"
      [ "$(json '[f["rule"] for f in d["findings"]]')" = "$plain_rules" ] || fail "$f: other findings than the plain log"
      [ "$(json 'd["summary"]["compression"]')" != "" ] || fail "$f: compression not named"
      # stdin too, and the other subcommands.
      "$logrx" scan --format json - < "$data/$f" > out.txt 2> err.txt
      [ "$(json '[f["rule"] for f in d["findings"]]')" = "$plain_rules" ] || fail "$f: stdin differs"
      "$logrx" lint --format sarif "$data/$f" > out.txt 2> err.txt
      [ $? -eq 1 ] || fail "$f: lint passed a compressed failing log"
      "$logrx" budget --format json "$data/$f" > out.txt 2> err.txt || fail "$f: budget exit $?"
      [ "$(json 'd["parts"][0]["gb"]')" = "51.16" ] || fail "$f: budget lost the weights"
      "$logrx" gaps "$data/$f" > out.txt 2> err.txt || fail "$f: gaps exit $?"
    done ;;
  compressed-errors)
    for f in corrupt.gz truncated.gz truncated.zst truncated.xz truncated.bz2; do
      "$logrx" scan --format json "$data/$f" > out.txt 2> err.txt
      [ $? -eq 2 ] || fail "$f: exit $? for undecodable data"
      grep -q "$f: " err.txt || fail "$f: no message"
      [ "$(json 'd["input_error"] != ""')" = "True" ] || fail "$f: no input_error"
      "$logrx" lint --format sarif "$data/$f" > out.txt 2> err.txt
      [ "$(json 'd["runs"][0]["invocations"][0]["executionSuccessful"]')" = "False" ] || fail "$f: SARIF says the read succeeded"
    done ;;
  several-inputs)
    mkdir -p logs/node-1 logs/node-2 logs/.cache
    cp "$sglang" logs/node-1/server.log
    gzip -c "$vllm" > logs/node-2/server.log.1.gz
    cp "$sglang" logs/.cache/hidden.log
    echo "not a log" > logs/README.md
    "$logrx" scan --format json --glob '*.log' --glob '*.gz' logs - < "$vllm" > out.txt 2> err.txt
    [ $? -eq 1 ] || fail "exit $?"
    [ "$(json '[r["file"] for r in d["runs"]]')" = "['logs/node-1/server.log', 'logs/node-2/server.log.1.gz', '<stdin>']" ] \
      || fail "runs[].file: $(json '[r["file"] for r in d["runs"]]')"
    [ "$(json 'list(d["remediation_by_file"])')" = "['logs/node-1/server.log', 'logs/node-2/server.log.1.gz', '<stdin>']" ] \
      || fail "remediation_by_file keys"
    [ "$(json '[i.get("flag") for i in d["remediation_by_file"]["logs/node-1/server.log"]]')" = "['--max-running-requests', '--mem-fraction-static']" ] \
      || fail "the SGLang file's own remediation: $(json 'd["remediation_by_file"]["logs/node-1/server.log"]')"
    [ "$(json '[i.get("flag") for i in d["remediation_by_file"]["<stdin>"]]')" = "['--max-model-len']" ] \
      || fail "the vLLM stream's own remediation"
    [ "$(json '[(f["file"], f["findings"] > 0) for f in d["summary"]["files"]]')" = "[('logs/node-1/server.log', True), ('logs/node-2/server.log.1.gz', True), ('<stdin>', True)]" ] \
      || fail "summary.files"
    # Text groups the fixes per file.
    "$logrx" scan --brief logs/node-1/server.log "$vllm" > out.txt 2> err.txt
    [ "$(grep -c '^Suggested remediation for ' out.txt)" = 2 ] || fail "text not grouped per file"
    # One unreadable input: reported, the others still scanned, exit 2 at the end.
    "$logrx" scan --format json missing.log logs/node-1/server.log > out.txt 2> err.txt
    [ $? -eq 2 ] || fail "exit $? with an unreadable input"
    grep -q "missing.log" err.txt || fail "unreadable input not named"
    [ "$(json 'len(d["findings"]) > 0')" = "True" ] || fail "the readable input was not scanned"
    # A directory with nothing to read is an error, not a clean result.
    mkdir empty
    "$logrx" scan empty > out.txt 2> err.txt
    [ $? -eq 2 ] || fail "an empty directory passed"
    "$logrx" scan --glob '*.nothing' logs > out.txt 2> err.txt
    [ $? -eq 2 ] || fail "a glob that matches nothing passed" ;;
  watch-rotated)
    mkdir w
    gzip -c "$sglang" > w/server.log.2.gz && touch -d '2 hours ago' w/server.log.2.gz
    xz -c "$vllm" > w/server.log.1.xz 2>/dev/null || cp "$vllm" w/server.log.1
    touch -d '1 hour ago' w/server.log.1*
    echo "[2026-05-23 09:00:00] The server is fired up and ready to roll!" > w/server.log
    timeout -s INT 5 "$logrx" watch --include-rotated --format jsonl w/server.log > out.txt 2> err.txt
    python3 - <<'PY' || fail "rotated copies not read oldest first"
import json
rules = [json.loads(l).get("rule") for l in open("out.txt") if l.strip()]
assert "sglang.memory.not-enough-memory" in rules, rules
assert "vllm.memory.max-model-len-too-large" in rules, rules
assert rules.index("sglang.memory.not-enough-memory") < rules.index("vllm.memory.max-model-len-too-large"), rules
PY
    ;;
  large-file-pieces)
    # A file of several 4 MB pieces (read ahead on a thread, scanned on every
    # core) reports what one thread and a pipe report; problems sit on and
    # around the pieces' boundaries.
    python3 - "$sglang" > big.log <<'PY'
import sys
head = open(sys.argv[1]).read()
out = [head]
size = len(head)
i = 0
while size < (13 << 20):
    if i % 20011 == 0:
        line = "[2026-07-01 16:00:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_token_ratio: 0.4123 -> 0.7000\n"
    elif i % 3 == 0:
        line = "[2026-07-01 16:00:%02d] INFO:     10.0.3.17:4%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n" % (i % 60, i)
    else:
        line = "[2026-07-01 16:00:%02d TP0] Decode batch, #running-req: %d, #token: %d, token usage: 0.3%d, gen throughput (token/s): 1234.5, #queue-req: 0, \n" % (i % 60, i % 50, i * 7, i % 10)
    out.append(line)
    size += len(line)
    i += 1
sys.stdout.write("".join(out))
PY
    "$logrx" scan --format json --threads 1 big.log > one.json 2> err.txt
    [ $? -eq 1 ] || fail "one thread: exit $?"
    "$logrx" scan --format json --threads 2 big.log > out.txt 2> err.txt
    [ $? -eq 1 ] || fail "two threads: exit $?"
    cmp -s one.json out.txt || fail "two threads report otherwise than one"
    cat big.log | "$logrx" scan --format json - > pipe.json 2> err.txt
    python3 - <<'PY' || fail "the pipe reports other findings"
import json
a = json.load(open("one.json")); b = json.load(open("pipe.json"))
key = lambda d: [(f["rule"], f["line"]) for f in d["findings"]]
assert key(a) == key(b), (key(a), key(b))
assert len(a["findings"]) > 0
PY
    rm -f big.log
    ;;
  *) fail "unknown case" ;;
esac
echo "ok ($case)"
