#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start: installs what is missing, builds, runs the seed articles' comparisons and gkbench --quick
# (CPU, and the GPU when there is one).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The CUDA module is built when nvcc is found; the toolkit's usual home is not always on PATH.
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
build=${GK_BUILD_DIR:-$root/build}

"$root/scripts/deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"

for demo in 002_vector_add 000_rbf_network 004_matmul; do
  echo
  echo "=== examples/$demo ==="
  "$build/examples/$demo"
done

echo
echo "=== bench/gkbench --quick (every op, per backend) ==="
"$build/bench/gkbench" --quick
