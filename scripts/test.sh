#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite: ctest; ctest under ASan+UBSan+LSan with the allocation-failure sweep; the
# CPU tests under valgrind; the threads test under TSan; the ABI against the released baselines;
# the libFuzzer harness for 60 s; pytest on the package as pip installs it; that bench/RESULTS.md
# is the page bench/results/ gives. The binary packages have their own test,
# scripts/test-packages.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The CUDA module is built when nvcc is found; the toolkit's usual home is not always on PATH.
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"
build=${GK_BUILD_DIR:-$root/build}
jobs=$(nproc)

"$root/scripts/deps.sh"

echo "=== build and ctest ($build) ==="
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$jobs"
ctest --test-dir "$build" --output-on-failure -j"$jobs"

echo "=== ctest under AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer ==="
# GK_FAULT_INJECTION adds tests/fault: every allocation point of each scenario fails in turn.
cmake -S "$root" -B "$build-asan" -DCMAKE_BUILD_TYPE=Debug -DGK_SANITIZE=address,undefined \
  -DGK_WITH_CUDA=OFF -DGK_BUILD_EXAMPLES=OFF -DGK_BUILD_BENCH=OFF -DGK_FAULT_INJECTION=ON
cmake --build "$build-asan" -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$build-asan" --output-on-failure -j"$jobs" -LE no-sanitizer
grep -h "fault-injection points swept" "$build-asan/Testing/Temporary/LastTest.log"

echo "=== CPU tests under valgrind memcheck; the ABI against the released baselines (abidiff) ==="
# A CPU-only build: loading the CUDA module (cuBLAS) alone takes valgrind some 20 s per program.
# Debug information is for valgrind's stacks and for abidw.
cmake -S "$root" -B "$build-check" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGK_WITH_CUDA=OFF \
  -DGK_BUILD_EXAMPLES=OFF -DGK_BUILD_BENCH=OFF
cmake --build "$build-check" -j"$jobs"
"$root/tests/valgrind/run.sh" "$build-check"
sh "$root/tests/abi/abidiff.sh" "$build-check/lib/libgpukern.so" "$root/include" "$root/tests/abi"

echo "=== the threads test under ThreadSanitizer ==="
# GCC's target_clones resolvers run before the TSan runtime starts, so this build goes without
# them (-DGK_CPU_CLONES=). libgomp and OpenBLAS are not built with TSan, which then cannot see
# their synchronisation: their thread pools stay off (one thread each), and the test's sizes are
# below the thresholds where a context of two CPU threads would start an OpenMP team.
cmake -S "$root" -B "$build-tsan" -DCMAKE_BUILD_TYPE=Debug -DGK_SANITIZE=thread \
  -DGK_WITH_CUDA=OFF -DGK_BUILD_EXAMPLES=OFF -DGK_BUILD_BENCH=OFF -DCMAKE_C_FLAGS=-DGK_CPU_CLONES=
cmake --build "$build-tsan" -j"$jobs" --target test_threads
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1 \
  ctest --test-dir "$build-tsan" --output-on-failure -R '^threads$'

echo "=== libFuzzer on the C API (clang, ASan+UBSan), 60 s ==="
GK_FUZZ_BUILD_DIR="$build-fuzz" "$root/scripts/fuzz.sh" 60

echo "=== pytest (python/): a fresh virtualenv, pip install ./python, no GPUKERN_LIBRARY ==="
# pip builds the library itself (CMake through scikit-build-core, the CUDA module too where nvcc
# is found and the driver lists a GPU) and installs it inside the package: the tests load that
# copy, as a user's would.
venv="$build/venv"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
CMAKE_BUILD_PARALLEL_LEVEL="$jobs" "$venv/bin/pip" install -q "$root/python" pytest cffi mypy scikit-learn
# From outside the checkout, so `import gpukern` cannot pick up python/gpukern/ by accident.
cd "$venv"
package=$(env -u GPUKERN_LIBRARY "$venv/bin/python" -c "import gpukern, os; print(os.path.dirname(gpukern.__file__))")
ls -l "$package/libgpukern.so.1"
if command -v nvcc >/dev/null && compgen -G "/proc/driver/nvidia/gpus/*" >/dev/null; then
  ls -l "$package/gpukern/libgpukern-cuda.so"
elif [ -e "$package/gpukern/libgpukern-cuda.so" ]; then
  echo "pip install ./python built the CUDA module on a host without a GPU" >&2
  exit 1
fi
env -u GPUKERN_LIBRARY -u GPUKERN_INCLUDE "$venv/bin/python" -m pytest -q "$root/python/tests"

echo "=== bench/RESULTS.md: generated from the runs in bench/results/ ==="
python3 "$root/bench/results_latest.py" --check
