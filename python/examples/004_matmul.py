# SPDX-License-Identifier: MIT
"""Seed 004 redone: 5 x (a random N x N float64 matrix; x @ x), NumPy against gpukern per backend."""

import argparse
import time

import numpy as np

import gpukern

ROUNDS = 5


def numpy_workload(n):
    for _ in range(ROUNDS):
        x = np.random.rand(n, n)
        x = x @ x
    return x


def gpukern_workload(ctx, n):
    # The matrices are made and multiplied in the context's memory, as CuPy does in the article;
    # only the wait at the end tells when the device is done.
    for i in range(ROUNDS):
        x = ctx.uniform((n, n), seed=i, dtype=np.float64)
        x = ctx.matmul(x, x)
    ctx.synchronize()
    return x


def timed(fn, repeat):
    fn()  # warm-up: thread pools, cuBLAS handles and first-touch page faults are not the work
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true", help="the article's N = 5000 (minutes on a CPU)")
    parser.add_argument("-n", type=int, help="matrix order (default 1000, or 5000 with --full)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (best kept)")
    args = parser.parse_args()
    n = args.n or (5000 if args.full else 1000)
    contexts = [gpukern.Context(b) for b in gpukern.available_backends()]
    for ctx in contexts:
        print("backend %s: %s" % (ctx.backend, ctx.device_name))

    flops = ROUNDS * 2.0 * n**3
    rows = [("NumPy", timed(lambda: numpy_workload(n), args.repeat), "")]
    for ctx in contexts:
        t = timed(lambda: gpukern_workload(ctx, n), args.repeat)
        # The same product by NumPy, from the same random matrix, bounds the error.
        x = ctx.uniform((n, n), seed=ROUNDS - 1, dtype=np.float64).get()
        ref = x @ x
        err = np.linalg.norm(gpukern_workload(ctx, n).get() - ref) / np.linalg.norm(ref)
        rows.append(("gpukern %s" % ctx.backend, t, "%.1e" % err))
    print()
    print("%d x (rand(%d, %d) float64; x @ x)" % (ROUNDS, n, n))
    print("(anchors for N = 5000 on the 16-core H200 host: NumPy 3.66 s, CuPy 23.3 ms)")
    print("%-14s %10s %10s %10s" % ("method", "total ms", "GFLOP/s", "rel err"))
    for name, t, err in rows:
        print("%-14s %10.1f %10.1f %10s" % (name, t * 1e3, flops / t / 1e9, err))


if __name__ == "__main__":
    main()
