#!/usr/bin/env bash
# Prometheus metrics of `logrx watch`: the HTTP endpoint scraped by a real
# Prometheus (queried through its HTTP API), the textfile-collector file, and
# the option's errors.
#   check_metrics.sh LOGRX WORKDIR CASE HAVE_HTTPLIB
# Exit 77 (a skip for ctest) only when a tool the case needs is not installed.
set -u
logrx=$1 work=$2 case=$3 have_http=$4
rm -rf "$work/$case" && mkdir -p "$work/$case" && cd "$work/$case" || exit 2
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in out.txt err.txt scraped.txt prometheus.log query.json metrics.prom; do
    [ -f "$f" ] && { echo "--- $f"; tail -c 3000 "$f"; }
  done
  exit 1
}
skip() { echo "SKIP: $*"; exit 77; }
await() {  # FILE PATTERN [COUNT]: waits up to 30 s for COUNT lines matching
  for _ in $(seq 300); do
    n=$(grep -c -- "$2" "$1" 2>/dev/null)
    [ "${n:-0}" -ge "${3:-1}" ] && return 0
    sleep 0.1
  done
  return 1
}
fetch() {  # URL -> stdout
  if command -v curl > /dev/null; then
    curl -fsS --max-time 10 "$1"
  else
    python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"
  fi
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
served_port() { sed -n 's|.*serving metrics on http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' err.txt | head -1; }
oom='RuntimeError: CUDA error: out of memory'
# An error line may start a traceback: the finding comes once the next line shows it ended.
next_line='INFO:     127.0.0.1:40000 - "GET /health HTTP/1.1" 200 OK'

case $case in
prometheus)
  [ "$have_http" = 1 ] || skip "logrx was built without cpp-httplib (apt-get install libcpp-httplib-dev)"
  command -v prometheus > /dev/null || skip "prometheus is not installed (apt-get install prometheus)"
  command -v promtool > /dev/null || skip "promtool is not installed (apt-get install prometheus)"
  "$logrx" watch --poll-ms 20 --format jsonl --metrics-listen 127.0.0.1:0 server.log > out.txt 2> err.txt &
  pids+=($!)
  await err.txt "serving metrics on" || fail "no listening address on stderr"
  port=$(served_port)
  [ -n "$port" ] || fail "cannot read the port"
  printf '%s\n%s\n' "$oom" "$next_line" >> server.log
  await out.txt '"rule"' 1 || fail "no finding"
  fetch "http://127.0.0.1:$port/metrics" > scraped.txt || fail "cannot fetch /metrics"
  promtool check metrics < scraped.txt || fail "promtool check metrics rejects the page"
  pport=$(free_port)
  cat > prometheus.yml <<EOT
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: logrx
    static_configs:
      - targets: ["127.0.0.1:$port"]
EOT
  prometheus --config.file=prometheus.yml --storage.tsdb.path=data \
    --web.listen-address="127.0.0.1:$pport" > prometheus.log 2>&1 &
  pids+=($!)
  query='logrx_findings_total{job="logrx",rule="pytorch.cuda.error-out-of-memory",severity="fatal"}'
  got=""
  for _ in $(seq 120); do   # up to 60 s: start-up, then the first scrapes
    if fetch "http://127.0.0.1:$pport/api/v1/query?query=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$query")" > query.json 2>/dev/null; then
      got=$(python3 -c '
import json, sys
doc = json.load(open("query.json"))
result = doc["data"]["result"]
print(result[0]["value"][1] if doc["status"] == "success" and result else "")')
      [ -n "$got" ] && break
    fi
    sleep 0.5
  done
  [ "$got" = 1 ] || fail "Prometheus does not hold the counter (got '$got')"
  # A second finding (another rule: repeats of one are merged into its finding)
  # reaches Prometheus too.
  printf '%s\n%s\n' 'RuntimeError: CUDA error: an illegal memory access was encountered' "$next_line" >> server.log
  for _ in $(seq 120); do
    fetch "http://127.0.0.1:$pport/api/v1/query?query=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "sum(logrx_findings_total)")" > query.json 2>/dev/null &&
      got=$(python3 -c 'import json; r = json.load(open("query.json"))["data"]["result"]; print(r[0]["value"][1] if r else "")')
    [ "$got" -ge 2 ] 2>/dev/null && break
    sleep 0.5
  done
  [ "$got" -ge 2 ] 2>/dev/null || fail "Prometheus did not see the counter grow (got '$got')"
  kill -TERM "${pids[1]}"; wait "${pids[1]}"
  kill -TERM "${pids[0]}"; wait "${pids[0]}"
  status=$?
  pids=()
  [ $status -eq 0 ] || fail "watch exit $status, want 0"
  ;;
file)
  command -v promtool > /dev/null && have_promtool=1 || have_promtool=0
  "$logrx" watch --poll-ms 20 --format jsonl --metrics-file metrics.prom server.log > out.txt 2> err.txt &
  pids+=($!)
  await metrics.prom "^logrx_lines_total 0" || fail "no metrics file at start"
  printf '%s\n%s\n' "$oom" "$next_line" >> server.log
  await out.txt '"rule":"pytorch.cuda.error-out-of-memory"' || fail "no finding"
  await metrics.prom 'logrx_findings_total{rule="pytorch.cuda.error-out-of-memory",category="memory_pressure",severity="fatal",server="unknown"} 1' ||
    fail "the file does not count the finding"
  # A healthy start-up that reports its memory: budget gauges, phase, ready.
  cat "${LOGRX_CORPUS}/sglang/scenario3-b200-healthy-but-starved.log" >> server.log
  await metrics.prom '^logrx_gpu_memory_bytes{part="kv_cache"} [1-9]' || fail "no budget gauges"
  await metrics.prom '^logrx_server_ready{server="sglang"} 1' || fail "not ready"
  await metrics.prom '^logrx_server_phase{phase="serving"} 1' || fail "no phase"
  lines=$(wc -l < server.log)
  await metrics.prom "^logrx_lines_total $lines\$" || fail "logrx_lines_total is not $lines"
  # Truncation starts a new analyzer; the counter still only grows.
  : > server.log
  await err.txt "truncated" || fail "missed the truncation"
  printf '%s\n%s\n' "$oom" "$next_line" >> server.log
  await metrics.prom "^logrx_lines_total $((lines + 2))\$" || fail "lines counter did not carry on"
  await metrics.prom 'pytorch.cuda.error-out-of-memory.* 2$' || fail "findings counter did not carry on"
  kill -TERM "${pids[0]}"; wait "${pids[0]}"
  status=$?
  pids=()
  [ $status -eq 0 ] || fail "watch exit $status, want 0"
  ls -a | grep -q '\.tmp\.' && fail "a temporary file was left behind"
  grep -q '^# TYPE logrx_findings_total counter$' metrics.prom || fail "no TYPE line"
  grep -q '^# HELP logrx_server_ready ' metrics.prom || fail "no HELP line"
  if [ $have_promtool = 1 ]; then
    promtool check metrics < metrics.prom || fail "promtool check metrics rejects the file"
  fi
  ;;
file-unwritable)
  "$logrx" watch --metrics-file /nonexistent-dir/metrics.prom server.log > out.txt 2> err.txt
  status=$?
  [ $status -eq 2 ] || fail "exit $status, want 2"
  grep -q -- "--metrics-file /nonexistent-dir/metrics.prom: No such file or directory" err.txt ||
    fail "the error does not say why"
  ;;
bad-listen)
  "$logrx" watch --metrics-listen nonsense server.log > out.txt 2> err.txt
  status=$?
  [ $status -eq 2 ] || fail "exit $status, want 2"
  if [ "$have_http" = 1 ]; then
    grep -q "expected HOST:PORT" err.txt || fail "the error does not say what is expected"
  else
    grep -q "built without cpp-httplib" err.txt || fail "the error does not say why"
  fi
  ;;
port-in-use)
  [ "$have_http" = 1 ] || skip "logrx was built without cpp-httplib"
  "$logrx" watch --metrics-listen 127.0.0.1:0 server.log > out.txt 2> err.txt &
  pids+=($!)
  await err.txt "serving metrics on" || fail "no listening address on stderr"
  port=$(served_port)
  "$logrx" watch --metrics-listen "127.0.0.1:$port" server.log > out2.txt 2> err2.txt
  status=$?
  [ $status -eq 2 ] || fail "second watch on the same port: exit $status, want 2"
  grep -q "cannot listen there" err2.txt || { cat err2.txt; fail "the error does not say why"; }
  ;;
run)
  # logrx run takes the same options; the file is written a last time at exit.
  "$logrx" run --metrics-file metrics.prom --metrics-label pod=sglang-0 -- \
    sh -c "echo '$oom'; echo '$next_line'; exit 3" > out.txt 2> err.txt
  status=$?
  [ $status -eq 3 ] || fail "exit $status, want the server's 3"
  grep -q '^logrx_findings_total{rule="pytorch.cuda.error-out-of-memory",category="memory_pressure",severity="fatal",server="unknown",pod="sglang-0"} 1$' metrics.prom ||
    fail "the finding is not counted with the constant label"
  grep -q '^logrx_lines_total{pod="sglang-0"} 2$' metrics.prom || fail "lines not counted"
  # The health-check line it printed shows it serving.
  grep -q '^logrx_server_phase{phase="serving",pod="sglang-0"} 1$' metrics.prom || fail "phase is not serving"
  if command -v promtool > /dev/null; then
    promtool check metrics < metrics.prom || fail "promtool check metrics rejects the file"
  fi
  ;;
bad-label)
  for label in 'pod' '9pod=x' '__name__=x' 'rule=x'; do
    "$logrx" watch --metrics-file m.prom --metrics-label "$label" server.log > out.txt 2> err.txt
    status=$?
    [ $status -eq 2 ] || fail "--metrics-label $label: exit $status, want 2"
    grep -q "expected NAME=VALUE" err.txt || fail "--metrics-label $label: the error does not say why"
  done
  ;;
unavailable)
  # Only registered for builds without cpp-httplib.
  "$logrx" watch --metrics-listen 127.0.0.1:0 server.log > out.txt 2> err.txt
  status=$?
  [ $status -eq 2 ] || fail "exit $status, want 2"
  grep -q "built without cpp-httplib (install libcpp-httplib-dev and rebuild)" err.txt || fail "unclear error"
  ;;
*)
  echo "unknown case $case"; exit 2 ;;
esac
echo ok
