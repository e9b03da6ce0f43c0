#!/bin/sh
# SPDX-License-Identifier: MIT
# run_demo.sh - the quick-start demo: gkbench --quick, then every example at its default size.
# Usage: examples/run_demo.sh BUILD_DIR   (or: cmake --build BUILD_DIR --target demo)
set -eu
build=${1:?usage: run_demo.sh BUILD_DIR}
summary=""

# Runs one program, stops the demo on its failure (set -e), and remembers its wall time.
run() {
    echo "==> $*"
    start=$(date +%s.%N)
    "$@"
    secs=$(echo "$(date +%s.%N) $start" | awk '{printf "%.1f", $1 - $2}')
    summary="$summary$(basename "$1") ${secs}s
"
    echo
}

if [ -x "$build/bench/gkbench" ]; then
    run "$build/bench/gkbench" --quick
fi
for example in 000_rbf_network 002_vector_add 004_matmul; do
    run "$build/examples/$example"
done
echo "demo finished, wall time per program:"
printf '%s' "$summary"
