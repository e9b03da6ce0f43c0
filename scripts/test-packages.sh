#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the binary packages and installs each as a user would: the wheel into a fresh virtualenv
# with no compiler, CMake or nvcc on its PATH, then the smoke test and pytest python/tests against
# it; the .debs with apt-get, then pkg-config and tests/consumer (and tests/mpi/consumer) built
# against the installed files and run. Debian 12, as root or with sudo; the packages it installed
# are removed again at the end, so no libgpukern is left in /usr/lib.
#
# usage: scripts/test-packages.sh   (environment: as scripts/build-wheel.sh and build-deb.sh, and
#                                    GK_PACKAGES_DIR, the work directory, default build-packages/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${GK_PACKAGES_DIR:-$root/build-packages}
dist=$work/dist
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
fail() { echo "test-packages.sh: FAIL: $*" >&2; exit 1; }

rm -rf "$dist" && mkdir -p "$dist"
GK_WHEEL_BUILD_DIR=$work/wheel "$root/scripts/build-wheel.sh" "$dist"
GK_DEB_BUILD_DIR=$work/deb "$root/scripts/build-deb.sh" "$dist"

# A packaged library has one compiled-in directory for its CUDA module: none in a wheel (it looks
# beside itself), the packaged one in a .deb; never the build tree or a build's staging directory.
# (the calibration cache's suffix under $HOME, /.cache/gpukern, is not a directory)
module_dirs() { strings -a "$1" | grep -E '^/.*/gpukern$' | grep -vx '/.cache/gpukern' || true; }

echo "=== the wheel in a fresh virtualenv, with no compiler, CMake or nvcc on PATH ==="
venv=$work/venv
rm -rf "$venv"
python3 -m venv "$venv"
# Binary wheels only, so that nothing is compiled on the way.
"$venv/bin/pip" install -q --only-binary :all: "$dist"/gpukern-*.whl pytest
clean=(env -i HOME="$work" LANG=C.UTF-8 PATH="$venv/bin")
"${clean[@]}" python -c "
import shutil, sys
found = {t: shutil.which(t) for t in ('cc', 'gcc', 'cmake', 'nvcc', 'pkg-config')}
sys.exit('build tools on PATH: %s' % found if any(found.values()) else 0)"
site=$("${clean[@]}" python -c "import sysconfig; print(sysconfig.get_paths()['platlib'])")
[ -z "$(module_dirs "$site/gpukern/libgpukern.so.1")" ] ||
  fail "the wheel's library has a CUDA module directory compiled in: $(module_dirs "$site/gpukern/libgpukern.so.1")"
# From outside the checkout, so that `import gpukern` cannot find python/gpukern/.
(cd "$work" && "${clean[@]}" python "$root/tests/wheel/smoke.py")
(cd "$work" && "${clean[@]}" python -m pytest -q -p no:cacheprovider "$root/python/tests")

echo "=== the Debian packages: apt-get install, pkg-config and consumers against /usr ==="
packages=(libgpukern1 libgpukern-dev)
[ -e "$(ls "$dist"/libgpukern-mpi1_*.deb 2>/dev/null | head -n 1)" ] &&
  packages+=(libgpukern-mpi1 libgpukern-mpi-dev)
for p in "${packages[@]}"; do
  ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    fail "$p is installed already; remove it first (this test removes what it installs)"
done
debs=()
for p in "${packages[@]}"; do debs+=("$(ls "$dist/${p}"_*.deb)"); done
remove() { $sudo apt-get remove -y -qq --purge "${packages[@]}" >/dev/null || true; }
trap remove EXIT
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${debs[@]}"
libdir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
[ "$(module_dirs "$libdir/libgpukern.so.1")" = "$libdir/gpukern" ] ||
  fail "libgpukern.so.1 looks for its CUDA module in: $(module_dirs "$libdir/libgpukern.so.1")"
pclibs=$(pkg-config --libs gpukern)
echo "pkg-config --libs gpukern: $pclibs"
[ "${pclibs% }" = "-lgpukern" ] || fail "pkg-config --libs gpukern says '$pclibs', not -lgpukern"
consumer=$work/consumer
rm -rf "$consumer" && mkdir -p "$consumer"
# shellcheck disable=SC2046
cc $(pkg-config --cflags gpukern) "$root/tests/consumer/consumer.c" -o "$consumer/consumer_pc" \
  $(pkg-config --libs gpukern)
# The library each program loads, as a file (with merged /usr, ldd may say /lib/...).
loaded() { readlink -f "$(ldd "$1" | awk '$1 == "libgpukern.so.1" { print $3 }')"; }
installed=$(readlink -f "$libdir/libgpukern.so.1")
"$consumer/consumer_pc"
[ "$(loaded "$consumer/consumer_pc")" = "$installed" ] || fail "consumer_pc: $(ldd "$consumer/consumer_pc")"
cmake -S "$root/tests/consumer" -B "$consumer/cmake" >/dev/null
cmake --build "$consumer/cmake" >/dev/null
"$consumer/cmake/consumer"
[ "$(loaded "$consumer/cmake/consumer")" = "$installed" ] || fail "consumer: $(ldd "$consumer/cmake/consumer")"
if [ -e "$libdir/gpukern/libgpukern-cuda.so" ]; then
  # Where it cannot load (no GPU, no cuBLAS), the reason names the packaged module (with merged
  # /usr, by way of /lib/<triplet>).
  python3 -c "
import ctypes, os, re, sys
lib = ctypes.CDLL('libgpukern.so.1')
lib.gk_last_error.restype = ctypes.c_char_p
if not lib.gk_backend_available(2):
    why = lib.gk_last_error().decode()
    print(why)
    tried = [os.path.realpath(p) for p in re.findall(r'^  (/[^:]*): ', why, re.M)]
    module = os.path.realpath('$libdir/gpukern/libgpukern-cuda.so')
    sys.exit(0 if module in tried else 'the reason does not name ' + module)"
fi
if [[ " ${packages[*]} " == *" libgpukern-mpi-dev "* ]]; then
  echo "pkg-config --libs gpukern-mpi: $(pkg-config --libs gpukern-mpi)"
  cmake -S "$root/tests/mpi/consumer" -B "$consumer/mpi" >/dev/null
  cmake --build "$consumer/mpi" >/dev/null
  mpiflags=()
  [ "$(id -u)" -ne 0 ] || mpiflags=(--allow-run-as-root --oversubscribe)
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 mpiexec "${mpiflags[@]}" -n 2 "$consumer/mpi/consumer_mpi"
fi
echo "packages OK: $(cd "$dist" && ls)"
