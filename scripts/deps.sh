#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages libgpukern needs to build and test, if any is missing.
set -euo pipefail

packages=(build-essential cmake pkg-config libopenblas-dev libsleef-dev libcmocka-dev python3 python3-dev python3-venv
          python3-pip clang libclang-rt-14-dev libomp-dev valgrind abigail-tools
          libopenmpi-dev openmpi-bin python3-mpi4py python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
