#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cpu_threads_sweep.py - where a thread team starts to pay, per op class (issue 15).
"""Times CPU ops over sizes on a one-thread context and on the default one, in one process.

    GPUKERN_LIBRARY=build/lib/libgpukern.so.1 python3 bench/cpu_threads_sweep.py

For add and sum (streaming: GK_CPU_PAR_MIN_STREAM), exp and rng_normal (math:
GK_CPU_PAR_MIN_MATH), float32, sizes 2^9 .. 2^21: the best of many calls on each context, and
the smallest size from which the default context is faster by 10% or more at every larger size.
Below the library's threshold both contexts run one thread, so their times agree there.
"""
import ctypes
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_per_core import check, load  # noqa: E402
from gk_ctypes import cpu_context  # noqa: E402


def context(lib, threads):
    status, ctx = cpu_context(lib, threads)
    check(lib, status)
    return ctx


def best(fn, n):
    reps = max(20, min(2000, (1 << 22) // n))
    fn()
    b = 1e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        b = min(b, (time.perf_counter() - t) / reps)
    return b


def main():
    lib = load(os.environ.get("GPUKERN_LIBRARY", "libgpukern.so.1"))
    lib.gk_add.argtypes = [ctypes.c_void_p] * 4
    lib.gk_sum.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)]
    one, dflt = context(lib, 1), context(lib, 0)
    print(f"# {lib.gk_context_device_name(dflt).decode()} against 1 thread; {os.cpu_count()} CPUs")
    sizes = [1 << p for p in range(9, 22)]
    res = ctypes.c_double()
    for op in ("add", "sum", "exp", "rng_normal"):
        rows = []
        for n in sizes:
            x, y, z = (np.random.default_rng(1).random(n, dtype=np.float32) for _ in range(3))
            t = {}
            for name, ctx in (("one", one), ("default", dflt)):
                b = []
                for a in (x, y, z):
                    h = ctypes.c_void_p()
                    check(lib, lib.gk_buffer_wrap_host(ctx, 1, n, a.ctypes.data, ctypes.byref(h)))
                    b.append(h)
                call = {"add": lambda: lib.gk_add(ctx, b[0], b[1], b[2]),
                        "sum": lambda: lib.gk_sum(ctx, b[0], ctypes.byref(res)),
                        "exp": lambda: lib.gk_exp(ctx, b[0], b[2]),
                        "rng_normal": lambda: lib.gk_rng_normal(ctx, 7, 0, 0.0, 1.0, b[2])}[op]
                t[name] = best(call, n)
            rows.append((n, t["one"], t["default"]))
        pays = None
        for i in range(len(rows)):
            if all(d * 1.1 <= o for _, o, d in rows[i:]):
                pays = rows[i][0]
                break
        print(f"{op:<11} " + " ".join(f"{n}:{o*1e6:.1f}/{d*1e6:.1f}" for n, o, d in rows))
        print(f"{op:<11} team pays (>= 10% faster) from n = {pays} (us: one thread / default)")


if __name__ == "__main__":
    main()
