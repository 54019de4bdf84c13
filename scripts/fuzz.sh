#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for
# SECONDS (default 600), two at a time. Findings land in build-fuzz/findings/<target>/;
# the corpus grows in build-fuzz/corpus/<target>/ (seeded from tests/fuzz/corpus/).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(line_parser config_dump expression rule_loader redact analyzer)

command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLOGRX_FUZZ=ON -DLOGRX_BUILD_TESTS=OFF -DLOGRX_BUILD_CLI=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}")

run_one() {
  local t=$1
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/findings/$t"
  cp -n tests/fuzz/corpus/"$t"/* "build-fuzz/corpus/$t/" 2>/dev/null || true
  echo "fuzzing $t for ${seconds}s"
  # rss_limit and max_len keep one run inside the machine's budget.
  local rc=0
  "build-fuzz/bin/fuzz_$t" "build-fuzz/corpus/$t" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -max_len=65536 -timeout=10 \
    -artifact_prefix="build-fuzz/findings/$t/" -print_final_stats=1 \
    > "build-fuzz/findings/$t.log" 2>&1 || rc=$?
  tail -n 12 "build-fuzz/findings/$t.log"
  echo "$t: exit $rc"
  return $rc
}

status=0
jobs=$(nproc)
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
