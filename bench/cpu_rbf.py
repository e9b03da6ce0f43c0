#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cpu_rbf.py - CPU rbf_matrix against scikit-learn's rbf_kernel, and sgemm against NumPy's @.
"""CPU rbf_matrix beside scikit-learn's rbf_kernel (what users call), and sgemm beside NumPy.

    GPUKERN_LIBRARY=build/lib/libgpukern.so.1 python3 bench/cpu_rbf.py [--threads 0] [--n 4096]

Times, in one process and one run: rbf_matrix float32 n x n over d features (default d = 256
and 20; uniform [0, 1) data, gamma = 1 / d, as compare.py uses) on a CPU context with
--threads threads (0: the library's default), sklearn.metrics.pairwise.rbf_kernel on the same
arrays (float32 in, as users pass them), and gemm float32 n^3 against NumPy's `x @ y`.
--rounds rounds alternate the two sides, each the best of --reps calls started --idle seconds
after the other side's last call: NumPy's and our OpenBLAS threads spin for some 0.1 s after a
call and would share the cores with the next side's threads (bench/cpu_blas_threads.py times
that case). ratio = anchor time / ours (above 1: libgpukern is faster): "best" of the best
times, "median" over the rounds. NumPy and scikit-learn use their own OpenBLAS threads (all
cores unless OPENBLAS_NUM_THREADS says otherwise).
"""
import argparse
import ctypes
import os
import platform
import statistics
import time

import numpy as np

import gk_ctypes
from gk_ctypes import best, cpu_context


def load(path):
    lib = gk_ctypes.load(path)
    vp, sz, dbl, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_double, ctypes.c_int
    lib.gk_buffer_destroy.argtypes = [vp]
    lib.gk_rbf_matrix.argtypes = [vp, sz, sz, sz, dbl, vp, vp, vp]
    lib.gk_gemm.argtypes = [vp, i, i, sz, sz, sz, dbl, vp, sz, vp, sz, dbl, vp, sz]
    return lib


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--d", default="256,20")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle", type=float, default=0.3)
    ap.add_argument("--no-gemm", action="store_true")
    args = ap.parse_args()
    from sklearn import __version__ as skv
    from sklearn.metrics.pairwise import rbf_kernel
    path = os.environ.get("GPUKERN_LIBRARY", "libgpukern.so.1")
    lib = load(path)
    status, ctx = cpu_context(lib, args.threads)
    if status:
        raise SystemExit(lib.gk_last_error().decode())
    print(f"# {lib.gk_context_device_name(ctx).decode()} ({path}); numpy {np.__version__}, "
          f"scikit-learn {skv}; {platform.machine()}, {os.cpu_count()} logical CPUs")
    gen = np.random.default_rng(1)
    n = args.n

    def wrap(a):
        b = ctypes.c_void_p()
        code = 1 if a.dtype == np.float32 else 2
        if lib.gk_buffer_wrap_host(ctx, code, a.size, a.ctypes.data, ctypes.byref(b)):
            raise SystemExit(lib.gk_last_error().decode())
        return b

    def run(status):
        if status:
            raise SystemExit(lib.gk_last_error().decode())

    def alternate(ours_fn, theirs_fn):
        """(our best, their best, median of their / our best per round)."""
        o, t = [], []
        for _ in range(args.rounds):
            time.sleep(args.idle)
            o.append(best(ours_fn, args.reps))
            time.sleep(args.idle)
            t.append(best(theirs_fn, args.reps))
        return min(o), min(t), statistics.median(b / a for a, b in zip(o, t))

    print(f"# {args.rounds} rounds alternating, each side the best of {args.reps} calls started "
          f"{args.idle} s after the other's")
    print(f"{'work':<34} {'ours ms':>9} {'anchor ms':>10} {'best':>6} {'median':>7}  anchor")
    for d in [int(v) for v in args.d.split(",")]:
        x = gen.random((n, d), dtype=np.float32)
        y = gen.random((n, d), dtype=np.float32)
        k = np.empty((n, n), dtype=np.float32)
        bx, by, bk = wrap(x), wrap(y), wrap(k)
        g = 1.0 / d
        run(lib.gk_rbf_matrix(ctx, n, n, d, g, bx, by, bk))
        ref = rbf_kernel(x, y, gamma=g)
        err = float(np.max(np.abs(ref.astype(np.float64) - k)))
        ours, theirs, med = alternate(lambda: run(lib.gk_rbf_matrix(ctx, n, n, d, g, bx, by, bk)),
                                      lambda: rbf_kernel(x, y, gamma=g))
        print(f"{f'rbf_matrix f32 {n}^2 x {d}':<34} {ours*1e3:9.2f} {theirs*1e3:10.2f} "
              f"{theirs/ours:6.2f} {med:7.2f}  sklearn rbf_kernel (max |ours - theirs| {err:.1e})")
        for b in (bx, by, bk):
            lib.gk_buffer_destroy(b)
    if not args.no_gemm:
        a = gen.random((n, n), dtype=np.float32)
        b = gen.random((n, n), dtype=np.float32)
        c = np.empty((n, n), dtype=np.float32)
        ba, bb, bc = wrap(a), wrap(b), wrap(c)
        ours, theirs, med = alternate(
            lambda: run(lib.gk_gemm(ctx, 0, 0, n, n, n, 1.0, ba, n, bb, n, 0.0, bc, n)),
            lambda: np.matmul(a, b, out=c))
        print(f"{f'sgemm {n}^3':<34} {ours*1e3:9.2f} {theirs*1e3:10.2f} {theirs/ours:6.2f} "
              f"{med:7.2f}  NumPy a @ b")

if __name__ == "__main__":
    main()
