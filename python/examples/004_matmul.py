# SPDX-License-Identifier: MIT
"""Article 004 redone: 5 x (a random N x N float64 matrix; x @ x), NumPy against gpukern per backend.

The article (a 2021 blog post on CuPy as "CUDA for NumPy") timed 5 rounds at N = 5000, NumPy
against CuPy, waiting for the device before reading the clock; so does this with --full (about a
minute on a 2-core CPU). By default N = 1000, which takes seconds; -n picks any order.
"""

import argparse
import time

import numpy as np

import gpukern

ROUNDS = 5
ARTICLE_N = 5000


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


def timed(fn, warm_up, repeat):
    """(best seconds of `repeat` runs, what the last run returned), after one warm-up call."""
    warm_up()  # thread pools, cuBLAS handles and first-touch page faults are not the work
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def phase(what, fn):
    """fn() with a line before and after, so that long work shows progress."""
    print("  %s ..." % what, end="", flush=True)
    t0 = time.perf_counter()
    result = fn()
    print(" %.1f s" % (time.perf_counter() - t0), flush=True)
    return result


def seconds(s):
    return "%.2f s" % s if s >= 1 else "%.1f ms" % (s * 1e3)


def summary(work, times):
    """The closing line: the fastest method, and how it compares with NumPy and the others."""
    fastest = min(times, key=times.get)
    others = ", ".join("%s %.2fx NumPy" % (k, times["NumPy"] / v) for k, v in times.items()
                       if k not in ("NumPy", fastest))
    if fastest == "NumPy":
        verdict = "NumPy was fastest (%s)" % seconds(times["NumPy"])
    else:
        verdict = "%s was fastest, %.2fx faster than NumPy (%s against %s)" % (
            fastest, times["NumPy"] / times[fastest], seconds(times[fastest]), seconds(times["NumPy"]))
    return "Summary: %s: %s%s" % (work, verdict, "; " + others if others else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="the article's N = %d (default 1000)" % ARTICLE_N)
    parser.add_argument("-n", type=int, help="matrix order (overrides --full)")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs after a small warm-up (best kept)")
    args = parser.parse_args()
    n = args.n or (ARTICLE_N if args.full else 1000)
    contexts = [gpukern.Context(b) for b in gpukern.available_backends()]
    for ctx in contexts:
        print("backend %s: %s" % (ctx.backend, ctx.device_name))
    if n != ARTICLE_N:
        print("(N = %d, not the article's %d: --full runs it)" % (n, ARTICLE_N))

    flops = ROUNDS * 2.0 * n**3
    small = min(n, 256)
    times = {"NumPy": phase("NumPy", lambda: timed(lambda: numpy_workload(n), lambda: numpy_workload(small),
                                                     args.repeat))[0]}
    errors = {"NumPy": ""}
    for ctx in contexts:
        name = "gpukern %s" % ctx.backend
        times[name], last = phase(name, lambda: timed(lambda: gpukern_workload(ctx, n),
                                                      lambda: gpukern_workload(ctx, small), args.repeat))
        # NumPy's product of the last round's random matrix (the same on every backend) bounds the error.
        x = ctx.uniform((n, n), seed=ROUNDS - 1, dtype=np.float64).get()
        ref = phase("NumPy's product for %s's error" % name, lambda: x @ x)
        errors[name] = "%.1e" % (np.linalg.norm(last.get() - ref) / np.linalg.norm(ref))
    print()
    work = "%d x (rand(%d, %d) float64; x @ x)" % (ROUNDS, n, n)
    print(work)
    print("%-14s %10s %10s %10s" % ("method", "total ms", "GFLOP/s", "rel err"))
    for name, t in times.items():
        print("%-14s %10.1f %10.1f %10s" % (name, t * 1e3, flops / t / 1e9, errors[name]))
    print()
    print(summary(work + (", the article's size" if n == ARTICLE_N else ""), times))


if __name__ == "__main__":
    main()
