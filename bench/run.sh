#!/usr/bin/env bash
# The benchmark, in one command:  bench/run.sh [MB] [RUNS]
# Builds a release logrx, generates MB of realistic server log (default 300),
# then times, RUNS times each (default 3, best kept): logrx scan with the full
# rulebook, ripgrep with the same patterns (rg -c -f <(logrx rules patterns)),
# and the floor (reading the file and splitting lines). It also measures peak
# memory reading 1 GB from a pipe, rulebook compile time and small-log latency.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-300}
runs=${2:-3}
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
need=()
command -v rg >/dev/null || need+=(ripgrep)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${need[@]}"
fi

out=build-bench
cmake -S . -B $out -DCMAKE_BUILD_TYPE=Release -DLOGRX_BUILD_TESTS=OFF > /dev/null
cmake --build $out -j"$(nproc)" > /dev/null
c++ -O2 -std=c++17 bench/gen_log.cc -o $out/gen_log
c++ -O2 -std=c++17 bench/floor.cc -o $out/floor
logrx=$out/bin/logrx
data=$out/bench-${mb}mb.log
[ -s "$data" ] || $out/gen_log --server mixed --mb "$mb" > "$data"
$logrx rules patterns > $out/patterns.txt
bytes=$(stat -c %s "$data")
lines=$($out/floor "$data")

# ripgrep must accept every pattern, or its time would be that of an error.
rg_status=0
rg -q -f $out/patterns.txt /dev/null 2> $out/rg-error.txt || rg_status=$?
if [ "$rg_status" -gt 1 ]; then
  echo "ripgrep rejects a pattern of 'logrx rules patterns':" >&2
  cat $out/rg-error.txt >&2
  exit 2
fi

# best wall time (s) and its peak RSS (KB) over $runs runs of a command; a
# command that fails (exit status above 1: rg -c exits 1 when nothing matched)
# stops the benchmark.
measure() {
  local best="" rss=""
  for _ in $(seq 1 "$runs"); do
    local line status=0
    /usr/bin/time -o $out/time.txt -f "%e %M" "$@" > /dev/null 2> $out/stderr.txt || status=$?
    if [ "$status" -gt 1 ]; then
      echo "benchmark command failed ($status): $*" >&2
      cat $out/stderr.txt >&2
      exit 2
    fi
    line=$(tail -1 $out/time.txt)
    local t=${line% *} m=${line#* }
    if [ -z "$best" ] || awk "BEGIN { exit !($t < $best) }"; then best=$t; rss=$m; fi
  done
  echo "$best $rss"
}

read -r t_floor rss_floor <<< "$(measure $out/floor "$data")"
read -r t_rg rss_rg <<< "$(measure rg -c -f $out/patterns.txt "$data")"
read -r t_logrx rss_logrx <<< "$(measure $logrx scan --format json --fail-on never "$data")"

row() {  # name seconds rss
  awk -v n="$1" -v t="$2" -v m="$3" -v b="$bytes" -v l="$lines" -v rg="$t_rg" -v fl="$t_floor" 'BEGIN {
    if (t <= 0) t = 0.001
    printf "%-28s %8.2f s %9.1f MB/s %12.0f lines/s %8.2fx rg %8.2fx floor %8.1f MB RSS\n",
           n, t, b / 1048576 / t, l / t, t / rg, t / fl, m / 1024 }'
}
echo "input: $data, $((bytes / 1048576)) MB, $lines lines; $(nproc) cores; best of $runs"
row "floor (read + split)" "$t_floor" "$rss_floor"
row "rg -c -f patterns" "$t_rg" "$rss_rg"
row "logrx scan --format json" "$t_logrx" "$rss_logrx"

# 1 GB through a pipe: peak memory must stay bounded however long the stream.
$out/gen_log --server mixed --mb 1024 --seed 7 |
  /usr/bin/time -o $out/time.txt -f "%M" $logrx scan --format json --fail-on never > /dev/null
pipe_rss=$(tail -1 $out/time.txt)
echo "1 GB from a pipe: logrx peak RSS $((pipe_rss / 1024)) MB"

# Start-up: the rulebook compile (rules list loads and compiles it) and a small
# scan; the mean of 20 runs, best of $runs rounds like the timings above.
small=corpus/sglang/healthy-start-llama8b.log
per_run_ms() {
  local best=""
  for _ in $(seq 1 "$runs"); do
    local start end ms
    start=$(date +%s%N)
    for _ in $(seq 1 20); do "$@" > /dev/null; done
    end=$(date +%s%N)
    ms=$(( (end - start) / 20000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}
echo "load + compile the rulebook (logrx rules list): $(per_run_ms $logrx rules list) ms per run"
echo "scan a small log: $(per_run_ms $logrx scan --fail-on never $small) ms per run"
