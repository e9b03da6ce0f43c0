#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a build's CMocka test programs under valgrind memcheck, one per core at a time.
# usage: tests/valgrind/run.sh <build dir>
# Any memcheck error, or a definitely or indirectly lost block, fails the program. "Possibly
# lost" blocks are not counted: libgomp keeps its thread pool's stacks until exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
logs=$build/valgrind
rm -rf "$logs"
mkdir -p "$logs"

run_one() { # run_one <test program>: prints "PASS name errors" or "FAIL name errors"
  local name
  name=$(basename "$1")
  if valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
      --show-leak-kinds=definite,indirect --suppressions="$here/gpukern.supp" \
      --log-file="$logs/$name.log" "$1" >"$logs/$name.out" 2>&1; then
    echo "PASS $name $(grep -o 'ERROR SUMMARY: [0-9]*' "$logs/$name.log" | grep -o '[0-9]*$')"
  else
    echo "FAIL $name $(grep -o 'ERROR SUMMARY: [0-9]*' "$logs/$name.log" | grep -o '[0-9]*$')"
  fi
}
export -f run_one
export here logs

find "$build/tests" -maxdepth 1 -name 'test_*' -type f -perm -u+x -print0 |
  xargs -0 -r -P "$(nproc)" -I{} bash -c 'run_one "$1"' _ {} | sort >"$logs/summary"
[ -s "$logs/summary" ] || { echo "no test programs in $build/tests"; exit 1; }
cat "$logs/summary"
passed=$(grep -c '^PASS' "$logs/summary" || true)
failed=$(grep -c '^FAIL' "$logs/summary" || true)
errors=$(awk '{ n += $3 } END { print n + 0 }' "$logs/summary")
for f in $(awk '$1 == "FAIL" { print $2 }' "$logs/summary"); do
  echo "=== $f: valgrind log ($logs/$f.log), then the program's output ==="
  grep -v '^==[0-9]*== *$' "$logs/$f.log" | tail -60
  tail -30 "$logs/$f.out"
done
echo "valgrind memcheck: $errors errors reported"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
