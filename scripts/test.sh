#!/usr/bin/env bash
# Builds logrx with warnings as errors and runs the whole test suite through
# ctest. Pass a build directory as $1 (default: build-test); further arguments
# go to cmake (scripts/test.sh build-asan -DLOGRX_SANITIZE=ON runs it under
# AddressSanitizer and UndefinedBehaviorSanitizer).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-test}
shift || true
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOGRX_WERROR=ON -DLOGRX_BUILD_TESTS=ON -DLOGRX_BUILD_BENCH=ON "$@"
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
