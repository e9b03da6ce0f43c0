#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cpu_blas_threads.py - sgemm and rbf_matrix of one or more builds, alternated in one process.
"""CPU sgemm against NumPy's @, and rbf_matrix on a default and an explicit-thread context.

    python3 bench/cpu_blas_threads.py --lib new=build/lib/libgpukern.so.1 [--lib old=...]
        [--rounds 5] [--n 4096] [--busy]

Each build is loaded into this one process (ctypes, RTLD_LOCAL), and every round times, build
after build: sgemm float32 n^3 on a default context and NumPy's `a @ b` right after it; then
rbf_matrix float32 n x n (d = 256: the GEMM form, d = 20: our OpenMP only) on a default
context and on one with cpu_threads = --threads (default: all CPUs), each right after
scikit-learn's rbf_kernel on the same data (its OpenBLAS pool still awake, as in cpu_rbf.py)
and again after --idle seconds of sleep (the pools asleep). Times are the best of --reps calls;
the summary gives each row's median over rounds and the spread. With --busy a process spins on
the last CPU throughout, and sgemm is also timed on a context with one thread fewer than the
CPUs. ratio = anchor time / ours (above 1: libgpukern is faster).
"""
import argparse
import ctypes
import multiprocessing as mp
import os
import platform
import statistics
import time

import numpy as np

import gk_ctypes
from gk_ctypes import best, cpu_context


def spin(cpu):
    os.sched_setaffinity(0, {cpu})
    while True:
        pass


class Build:
    def __init__(self, label, path, threads, busy):
        self.label = label
        lib = gk_ctypes.load(path)
        vp, sz, dbl, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_double, ctypes.c_int
        lib.gk_buffer_destroy.argtypes = [vp]
        lib.gk_rbf_matrix.argtypes = [vp, sz, sz, sz, dbl, vp, vp, vp]
        lib.gk_gemm.argtypes = [vp, i, i, sz, sz, sz, dbl, vp, sz, vp, sz, dbl, vp, sz]
        self.lib = lib
        self.ctx = {"default": self.context(0), f"{threads} threads": self.context(threads)}
        if busy:
            self.ctx[f"{os.cpu_count() - 1} threads"] = self.context(os.cpu_count() - 1)
        self.names = {k: lib.gk_context_device_name(c).decode() for k, c in self.ctx.items()}

    def context(self, threads):
        status, ctx = cpu_context(self.lib, threads)
        self.check(status)
        return ctx

    def check(self, status):
        if status:
            raise SystemExit(f"{self.label}: {self.lib.gk_last_error().decode()}")

    def wrap(self, ctx, a):
        b = ctypes.c_void_p()
        self.check(self.lib.gk_buffer_wrap_host(ctx, 1 if a.dtype == np.float32 else 2, a.size,
                                                a.ctypes.data, ctypes.byref(b)))
        return b

    def gemm(self, ctx, a, b, c, reps):
        n = a.shape[0]
        ba, bb, bc = (self.wrap(ctx, v) for v in (a, b, c))
        t = best(lambda: self.check(self.lib.gk_gemm(ctx, 0, 0, n, n, n, 1.0, ba, n, bb, n, 0.0,
                                                     bc, n)), reps)
        for h in (ba, bb, bc):
            self.lib.gk_buffer_destroy(h)
        return t

    def rbf(self, ctx, x, y, k, gamma, reps):
        n, d = x.shape
        bx, by, bk = (self.wrap(ctx, v) for v in (x, y, k))
        t = best(lambda: self.check(self.lib.gk_rbf_matrix(ctx, n, n, d, gamma, bx, by, bk)),
                 reps)
        for h in (bx, by, bk):
            self.lib.gk_buffer_destroy(h)
        return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", action="append", required=True, help="LABEL=PATH, repeatable")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--d", default="256,20")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--idle", type=float, default=0.3)
    ap.add_argument("--busy", action="store_true")
    ap.add_argument("--no-rbf", action="store_true")
    args = ap.parse_args()
    spinner = None
    if args.busy:
        spinner = mp.Process(target=spin, args=(os.cpu_count() - 1,), daemon=True)
        spinner.start()
        time.sleep(1.0)
    builds = [Build(*spec.split("=", 1), args.threads, args.busy) for spec in args.lib]
    print(f"# numpy {np.__version__}; {platform.machine()}, {os.cpu_count()} logical CPUs; "
          f"rounds {args.rounds}, best of {args.reps}; busy loop on the last CPU: "
          f"{'yes' if args.busy else 'no'}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
    for b in builds:
        print(f"# {b.label}: {', '.join(f'{k}: {v}' for k, v in b.names.items())}")
    try:
        from threadpoolctl import threadpool_info
        for p in threadpool_info():
            print(f"# pool: {p.get('internal_api')} {p.get('version')} "
                  f"{p.get('threading_layer', '')} {p.get('architecture', '')} "
                  f"threads {p.get('num_threads')}: {p.get('filepath')}")
    except ImportError:
        print("# (threadpoolctl not installed: BLAS pools not listed)")
    gen = np.random.default_rng(1)
    n = args.n
    rows = {}

    def add(key, ours, theirs):
        rows.setdefault(key, []).append((ours, theirs))

    a, b = gen.random((n, n), dtype=np.float32), gen.random((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    data = {d: (gen.random((n, d), dtype=np.float32), gen.random((n, d), dtype=np.float32))
            for d in ([] if args.no_rbf else [int(v) for v in args.d.split(",")])}
    k = np.empty((n, n), dtype=np.float32)
    if data:
        from sklearn.metrics.pairwise import rbf_kernel
    for _ in range(args.rounds):
        for bd in builds:
            for name, ctx in bd.ctx.items():
                if name == "default" or args.busy:
                    ours = bd.gemm(ctx, a, b, c, args.reps)
                    theirs = best(lambda: np.matmul(a, b, out=c), args.reps)
                    add((f"sgemm {n}^3", bd.label, name), ours, theirs)
        for d, (x, y) in data.items():
            g = 1.0 / d
            for bd in builds:
                for name, ctx in bd.ctx.items():
                    theirs = best(lambda: rbf_kernel(x, y, gamma=g), args.reps)
                    ours = bd.rbf(ctx, x, y, k, g, args.reps)
                    add((f"rbf_matrix {n}^2 x {d} after anchor", bd.label, name), ours, theirs)
                    time.sleep(args.idle)
                    ours = bd.rbf(ctx, x, y, k, g, args.reps)
                    add((f"rbf_matrix {n}^2 x {d} after {args.idle} s idle", bd.label, name),
                        ours, theirs)
    if spinner is not None:
        spinner.kill()
    print(f"{'work':<36} {'build':<8} {'context':<11} {'ours ms':>8} {'min-max':>13} "
          f"{'anchor ms':>9} {'ratio':>6}")
    for (work, label, name), v in rows.items():
        ours = [o for o, _ in v]
        theirs = [t for _, t in v]
        mo, mt = statistics.median(ours), statistics.median(theirs)
        anchor = "NumPy a @ b" if work.startswith("sgemm") else "sklearn rbf_kernel"
        print(f"{work:<36} {label:<8} {name:<11} {mo*1e3:8.2f} "
              f"{min(ours)*1e3:6.1f}-{max(ours)*1e3:6.1f} {mt*1e3:9.2f} {mt/mo:6.2f}  {anchor}")
    sg = [(label, statistics.median([t / o for o, t in v]))
          for (work, label, name), v in rows.items() if work.startswith("sgemm")
          and name == "default"]
    for label, r in sg:
        print(f"sgemm {n}^3 {label} default: median over rounds of NumPy / ours = {r:.3f} "
              f"({'meets' if r >= 1.0 else 'MISSES'} >= 1)")


if __name__ == "__main__":
    main()
