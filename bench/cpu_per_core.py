#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cpu_per_core.py - one CPU thread against NumPy in one process: rng_normal and exp (issue 15).
"""Per-core speed of the CPU backend beside NumPy, in the same process.

    GPUKERN_LIBRARY=build/lib/libgpukern.so.1 python3 bench/cpu_per_core.py [--n 10000000]

Times, on a context with cpu_threads = 1 and on NumPy in the same process, rng_normal against
Generator.standard_normal and exp against np.exp, float32 and float64, on n elements (in-place
outputs on both sides). The two sides alternate call by call (--reps pairs after one warm-up
call each, the order swapped every pair), so a change in the machine's state (another
process's memory traffic, the clock) falls on both. NumPy's own element-wise loops are
single-threaded; OPENBLAS_NUM_THREADS does not matter here. Prints one line per row and a
verdict: best = NumPy's best time / ours, median = the median over pairs of NumPy's time / ours
(at least 1: as fast as NumPy or faster); the verdict is on the median.
"""
import argparse
import ctypes
import os
import platform
import statistics
import sys
import time

import numpy as np

import gk_ctypes
from gk_ctypes import cpu_context


def load(path):
    lib = gk_ctypes.load(path)
    vp, u64, dbl = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_double
    lib.gk_rng_normal.argtypes = [vp, u64, u64, dbl, dbl, vp]
    lib.gk_exp.argtypes = [vp, vp, vp]
    return lib


def alternate(ours, theirs, reps):
    """(our best, their best, median of their / our time) over reps pairs of calls."""
    ours()
    theirs()
    a, b = [], []
    for r in range(reps):
        for fn, out in ((ours, a), (theirs, b)) if r % 2 == 0 else ((theirs, b), (ours, a)):
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return min(a), min(b), statistics.median(y / x for x, y in zip(a, b))


def check(lib, status):
    if status:
        sys.exit(f"libgpukern: status {status}: {lib.gk_last_error().decode()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--threads", type=int, default=1, help="the context's cpu_threads")
    args = ap.parse_args()
    path = os.environ.get("GPUKERN_LIBRARY", "libgpukern.so.1")
    lib = load(path)
    status, ctx = cpu_context(lib, args.threads)
    check(lib, status)
    print(f"# {lib.gk_context_device_name(ctx).decode()} ({path}); numpy {np.__version__}; "
          f"{platform.machine()}, {os.cpu_count()} logical CPUs; n = {args.n}, {args.reps} "
          "alternating pairs")
    gen = np.random.default_rng(1)
    rows, ok = [], True
    for dtype, code in ((np.float32, 1), (np.float64, 2)):
        out = np.empty(args.n, dtype=dtype)
        x = gen.random(args.n, dtype=dtype) * 20 - 10
        y = np.empty_like(x)
        bo, bx, by = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        for arr, b in ((out, bo), (x, bx), (y, by)):
            check(lib, lib.gk_buffer_wrap_host(ctx, code, arr.size, arr.ctypes.data, ctypes.byref(b)))
        seed = [0]

        def ours_normal():
            seed[0] += 1
            check(lib, lib.gk_rng_normal(ctx, seed[0], 0, 0.0, 1.0, bo))

        name = np.dtype(dtype).name
        rows.append((f"rng_normal {name}",
                     *alternate(ours_normal, lambda: gen.standard_normal(out=out, dtype=dtype),
                                args.reps), "Generator.standard_normal"))
        rows.append((f"exp {name}", *alternate(lambda: check(lib, lib.gk_exp(ctx, bx, by)),
                                               lambda: np.exp(x, out=y), args.reps), "np.exp"))
    print(f"{'op':<20} {'ours ms':>9} {'numpy ms':>9} {'best':>6} {'median':>7}  anchor")
    for label, ours, theirs, median, anchor in rows:
        ok = ok and median >= 1.0
        print(f"{label:<20} {ours * 1e3:9.2f} {theirs * 1e3:9.2f} {theirs / ours:6.2f} "
              f"{median:7.2f}  {anchor}")
    print("verdict: every row >= 1.0x NumPy (median)" if ok
          else "verdict: some row is slower than NumPy (median)")


if __name__ == "__main__":
    main()
