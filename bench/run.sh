#!/usr/bin/env bash
# The benchmark, in one command:  bench/run.sh [MB] [ROUNDS]
# Builds a release logrx and generates three logs of MB each (default 300):
#   mixed    long SGLang and vLLM stretches (batch statistics, engine stats,
#            access lines), rare problems;
#   serving  both servers interleaved line by line (batch statistics, vLLM
#            throughput lines, access lines), one problem line in 5,000;
#   dense    the same with ten times the problems (one in 500).
# Each is timed, ROUNDS rounds interleaved (default 5), best kept:
#   floor    reading the file and splitting its lines (bench/floor.cc);
#   rg       ripgrep with the same patterns: rg --no-unicode -c -f <(logrx rules patterns)
#            (RE2's \w, \d, \s and \b are ASCII; --no-unicode gives ripgrep
#            the same meaning, and its fast engine);
#   logrx    scan --format json with every core, then with --threads 1;
# and on the serving log, a rulebook ten times the size (bench/synth_rules.cc)
# to show what a block no rule can match costs does not grow with the rules:
# the time past the log's first 16 MB (start-up, which compiles the rules,
# does grow with them) with either rulebook.
# Then peak memory reading 1 GB from a pipe, the rulebook's load time and a
# small log's latency. Timings are reported, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-300}
rounds=${2:-5}
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
cmake -S . -B $out -DCMAKE_BUILD_TYPE=Release -DLOGRX_BUILD_TESTS=OFF -DLOGRX_BUILD_BENCH=ON > /dev/null
cmake --build $out -j"$(nproc)" > /dev/null
logrx=$out/bin/logrx
tools=$out/bench
cores=$(nproc)

declare -A data
data[mixed]=$out/bench-mixed-${mb}mb.log
data[serving]=$out/bench-serving-${mb}mb.log
data[dense]=$out/bench-dense-${mb}mb.log
[ -s "${data[mixed]}" ] || $tools/gen_log --server mixed --mb "$mb" > "${data[mixed]}"
[ -s "${data[serving]}" ] || $tools/gen_log --server serving --mb "$mb" > "${data[serving]}"
[ -s "${data[dense]}" ] || $tools/gen_log --server serving --mb "$mb" --problem-every 500 --seed 9 > "${data[dense]}"
$logrx rules patterns > $out/patterns.txt
$tools/synth_rules rules $out/rules-10x 10 > $out/rules-10x.count
rules_10x=$(cut -d' ' -f1 $out/rules-10x.count)

head_file=$out/bench-serving-head.log
head -c $((16 << 20)) "${data[serving]}" > "$head_file"

# ripgrep must accept every pattern, or its time would be that of an error.
rg_status=0
rg -q -f $out/patterns.txt /dev/null 2> $out/rg-error.txt || rg_status=$?
if [ "$rg_status" -gt 1 ]; then
  echo "ripgrep rejects a pattern of 'logrx rules patterns':" >&2
  cat $out/rg-error.txt >&2
  exit 2
fi

# One timed run: wall seconds and peak RSS (KB) into the arrays best/rss,
# keeping the best. A failing command (exit status above 1: rg -c exits 1
# when nothing matched) stops the benchmark.
declare -A best rss
run_once() {  # key command...
  local key=$1
  shift
  local status=0
  /usr/bin/time -o $out/time.txt -f "%e %M" "$@" > /dev/null 2> $out/stderr.txt || status=$?
  if [ "$status" -gt 1 ]; then
    echo "benchmark command failed ($status): $*" >&2
    cat $out/stderr.txt >&2
    exit 2
  fi
  local line t m
  line=$(tail -1 $out/time.txt)
  t=${line% *}
  m=${line#* }
  if [ -z "${best[$key]:-}" ] || awk "BEGIN { exit !($t < ${best[$key]}) }"; then
    best[$key]=$t
    rss[$key]=$m
  fi
}

logs=(mixed serving dense)
for round in $(seq 1 "$rounds"); do
  for log in "${logs[@]}"; do
    file=${data[$log]}
    run_once "$log floor" $tools/floor "$file"
    run_once "$log rg" rg --no-unicode -c -f $out/patterns.txt "$file"
    run_once "$log all" $logrx scan --format json --fail-on never "$file"
    run_once "$log one" $logrx scan --threads 1 --format json --fail-on never "$file"
  done
  run_once "10x all" $logrx scan --no-builtin-rules --rules $out/rules-10x --format json --fail-on never "${data[serving]}"
  run_once "10x one" $logrx scan --no-builtin-rules --rules $out/rules-10x --threads 1 --format json --fail-on never "${data[serving]}"
  # The same on the log's first part: the difference is what the rest costs,
  # without the start-up (loading and compiling the rules, the first lines).
  run_once "head one" $logrx scan --threads 1 --format json --fail-on never "$head_file"
  run_once "10x head one" $logrx scan --no-builtin-rules --rules $out/rules-10x --threads 1 --format json --fail-on never "$head_file"
done

row() {  # label key log
  local t=${best[$2]} m=${rss[$2]} file=${data[$3]}
  awk -v n="$1" -v t="$t" -v m="$m" -v b="$(stat -c %s "$file")" -v rg="${best[$3 rg]}" \
      -v fl="${best[$3 floor]}" -v cores="$cores" -v one="$([[ $2 == *one ]] && echo 1 || echo 0)" 'BEGIN {
    if (t <= 0) t = 0.001
    if (fl <= 0) fl = 0.001
    per_core = one ? t / fl : t * cores / fl
    printf "  %-34s %7.3f s %8.1f MB/s %7.2fx rg %7.2fx floor %6.2fx floor/core %7.1f MB RSS\n",
           n, t, b / 1048576 / t, t / rg, t / fl, per_core, m / 1024 }'
}
echo "best of $rounds interleaved rounds; $cores cores; ${mb} MB logs"
for log in "${logs[@]}"; do
  lines=$($tools/floor "${data[$log]}")
  echo "$log: ${data[$log]}, $lines lines"
  row "floor (read + split lines)" "$log floor" "$log"
  row "rg --no-unicode -c -f patterns" "$log rg" "$log"
  row "logrx scan, all cores" "$log all" "$log"
  row "logrx scan --threads 1" "$log one" "$log"
done
echo "serving log with ten times the rules ($rules_10x rules):"
row "logrx scan, all cores" "10x all" serving
row "logrx scan --threads 1" "10x one" serving
# What a block costs once started: (whole log - first 16 MB) / time difference.
marginal() {  # whole-key head-key
  awk -v t="${best[$1]}" -v h="${best[$2]}" -v b="$(stat -c %s "${data[serving]}")" \
      -v hb="$(stat -c %s "$head_file")" 'BEGIN {
    d = t - h; if (d <= 0) d = 0.001
    printf "%.1f MB/s (start-up and first 16 MB: %.3f s)", (b - hb) / 1048576 / d, h }'
}
echo "serving log past its first 16 MB, one thread (the cost of a block, without start-up):"
echo "  built-in rules:     $(marginal "serving one" "head one")"
echo "  ten times the rules: $(marginal "10x one" "10x head one")"

# Start-up: the rulebook's load (rules list loads it and prints nothing
# else of note) and a small scan; the mean of 20 runs, best of $rounds rounds.
small=corpus/sglang/healthy-start-llama8b.log
per_run_ms() {
  local fastest=""
  for _ in $(seq 1 "$rounds"); do
    local start end ms
    start=$(date +%s%N)
    for _ in $(seq 1 20); do "$@" > /dev/null; done
    end=$(date +%s%N)
    ms=$(( (end - start) / 20000000 ))
    if [ -z "$fastest" ] || [ "$ms" -lt "$fastest" ]; then fastest=$ms; fi
  done
  echo "$fastest"
}
echo "rulebook load in a process (bench/load_time.cc): $($tools/load_time - 20)"
echo "  with ten times the rules: $($tools/load_time $out/rules-10x 5)"
echo "process start + rulebook load (logrx rules list): $(per_run_ms $logrx rules list) ms per run"
echo "scan a small log: $(per_run_ms $logrx scan --fail-on never $small) ms per run"

# 1 GB through a pipe: one pass, peak memory bounded however long the stream.
$tools/gen_log --server serving --mb 1024 --seed 7 |
  /usr/bin/time -o $out/time.txt -f "%M" $logrx scan --format json --fail-on never > /dev/null
pipe_rss=$(tail -1 $out/time.txt)
echo "1 GB from a pipe: logrx peak RSS $((pipe_rss / 1024)) MB"
