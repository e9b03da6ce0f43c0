#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite: C tests (ctest), the same tests under ASan+UBSan+LSan, and pytest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GK_BUILD_DIR:-$root/build}
jobs=$(nproc)

echo "=== build and ctest ($build) ==="
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$jobs"
ctest --test-dir "$build" --output-on-failure -j"$jobs"

echo "=== ctest under AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer ==="
cmake -S "$root" -B "$build-asan" -DCMAKE_BUILD_TYPE=Debug -DGK_SANITIZE=address,undefined \
  -DGK_WITH_CUDA=OFF -DGK_BUILD_EXAMPLES=OFF -DGK_BUILD_BENCH=OFF
cmake --build "$build-asan" -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$build-asan" --output-on-failure -j"$jobs" -LE no-sanitizer

echo "=== pytest (python/) in a fresh virtualenv ==="
venv="$build/venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q "$root/python" pytest cffi
GPUKERN_LIBRARY="$build/lib/libgpukern.so.1" \
GPUKERN_INCLUDE="$root/include:$build/include" \
  "$venv/bin/python" -m pytest -q "$root/python/tests"
