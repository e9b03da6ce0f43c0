# SPDX-License-Identifier: MIT
# Settings that scripts/build-wheel.sh and scripts/build-deb.sh share (sourced, not run).

# The CUDA architectures of the packaged module: every GPU generation CUDA 13 builds for from the
# A100 on (sm_80 A100, sm_86 RTX 30xx/A10, sm_89 RTX 40xx/L4/L40, sm_90 H100/H200, sm_100 B200,
# sm_120 RTX 50xx/RTX PRO), plus PTX of the newest for GPUs that come after.
GK_PACKAGE_CUDA_ARCHS=${GK_PACKAGE_CUDA_ARCHS:-"80-real;86-real;89-real;90-real;100-real;120-real;120-virtual"}

[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"

# ON or OFF for a package's CUDA module from auto|ON|OFF: auto is ON where nvcc is found.
gk_package_cuda() {
  case "$1" in
    auto) if command -v nvcc >/dev/null; then echo ON; else echo OFF; fi ;;
    ON | OFF) echo "$1" ;;
    *) echo "expected auto, ON or OFF for the CUDA module, not '$1'" >&2; return 2 ;;
  esac
}
