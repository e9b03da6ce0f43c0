#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds a libFuzzer harness (tests/fuzz, clang) and runs it for N seconds from its seed corpus.
# usage: scripts/fuzz.sh [seconds, default 60] [harness: api (default) or cache_file];
# GK_FUZZ_BUILD_DIR overrides build-fuzz/;
# GK_FUZZ_NEW_DIR=<dir> keeps the inputs the run adds there (for refreshing the seeds).
# Prints the number of executions; a crash, sanitizer report or leak fails the run and leaves the
# input that caused it in the build directory (crash-*, leak-*, timeout-*).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
harness=${2:-api}
build=${GK_FUZZ_BUILD_DIR:-$root/build-fuzz}
case $harness in
api)
  corpus=$root/tests/fuzz/corpus
  dict_opt=(-dict="$root/tests/fuzz/fuzz_api.dict")
  ;;
cache_file)
  corpus=$root/tests/fuzz/cache_corpus
  dict_opt=()
  ;;
*)
  echo "fuzz.sh: harness $harness is not one of: api, cache_file" >&2
  exit 2
  ;;
esac

CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGK_WITH_CUDA=OFF \
  -DGK_BUILD_TESTS=OFF -DGK_BUILD_EXAMPLES=OFF -DGK_BUILD_BENCH=OFF -DGK_BUILD_FUZZ=ON
cmake --build "$build" --target "fuzz_$harness" -j"$(nproc)"
fuzzer=$build/tests/fuzz/fuzz_$harness

# libomp's workers would spin for 200 ms after each parallel region, taking a core from the
# fuzzer; passive waiting gives it back.
export OMP_WAIT_POLICY=passive
if [ -n "${GK_FUZZ_NEW_DIR:-}" ]; then
  work=$GK_FUZZ_NEW_DIR
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

echo "replaying the $(find "$corpus" -type f | wc -l) seed inputs"
"$fuzzer" -runs=0 -artifact_prefix="$build/" "$corpus" >"$build/fuzz-replay.log" 2>&1 ||
  { tail -40 "$build/fuzz-replay.log"; exit 1; }

# New inputs go to a scratch directory, so the committed seeds stay as they are. To refresh the
# seeds from a longer run (GK_FUZZ_NEW_DIR=<run's dir>): fuzz_api -merge=1 -max_len=512 -use_counters=0
# <new dir> tests/fuzz/corpus <run's dir>, then replace tests/fuzz/corpus with <new dir>.
echo "fuzzing for $seconds s"
status=0
"$fuzzer" -max_total_time="$seconds" -max_len=1024 -print_final_stats=1 "${dict_opt[@]}" \
  -artifact_prefix="$build/" "$work" "$corpus" >"$build/fuzz.log" 2>&1 || status=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz.log")
if [ $status -ne 0 ]; then
  grep -v '^#[0-9]' "$build/fuzz.log" | tail -60
  echo "fuzz_$harness FAILED after ${execs:-?} executions (exit $status); input left in $build/"
  exit $status
fi
grep '^stat::' "$build/fuzz.log"
echo "fuzz_$harness: ${execs:-0} executions in $seconds s, no crash, no sanitizer report"
