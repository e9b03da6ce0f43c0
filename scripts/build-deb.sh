#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the Debian packages with CPack (cmake/package.cmake) into dist/: libgpukern1 (the library
# and, where nvcc is found, its CUDA module in /usr/lib/<triplet>/gpukern/), libgpukern-dev and,
# where MPI is found, libgpukern-mpi1 and libgpukern-mpi-dev.
#
# usage: scripts/build-deb.sh [output dir, default dist/]
# environment:
#   GK_DEB_CUDA          auto (default: the CUDA module where nvcc is found), ON or OFF
#   GK_PACKAGE_CUDA_ARCHS  CMAKE_CUDA_ARCHITECTURES of the module (default: the wheel's list)
#   GK_DEB_BUILD_DIR     CMake build directory (default build-deb/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)
build=${GK_DEB_BUILD_DIR:-$root/build-deb}
# shellcheck source=scripts/package-settings.sh
. "$root/scripts/package-settings.sh"
cuda=$(gk_package_cuda "${GK_DEB_CUDA:-auto}")

echo "=== Debian packages (CUDA module: $cuda) in $build ==="
# /usr: GNUInstallDirs then installs into /usr/lib/<triplet>, and the library's compiled-in
# module directory is the packaged one; no build-tree path is compiled in, and gpukern.pc
# names /usr.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DGK_MODULE_FROM_BUILD_TREE=OFF -DGK_PC_RELOCATABLE=OFF -DGK_WITH_CUDA="$cuda" \
  -DCMAKE_CUDA_ARCHITECTURES="$GK_PACKAGE_CUDA_ARCHS" \
  -DGK_BUILD_TESTS=OFF -DGK_BUILD_EXAMPLES=OFF -DGK_BUILD_BENCH=OFF
start=$(date +%s)
cmake --build "$build" -j"$(nproc)"
echo "built in $(($(date +%s) - start)) s"
(cd "$build" && rm -f ./*.deb && cpack -G DEB)
for deb in "$build"/*.deb; do
  cp "$deb" "$out/"
  echo "$out/$(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
done
