# SPDX-License-Identifier: MIT
"""Kernel ridge regression with several targets: conjugate gradients over ctx.kernel_matmul.

    python kernel_ridge_targets.py [--n 2000] [--targets 8] [--kernel rbf] [--backend auto] [--full]

Solves (K + lambda I) A = Y for r targets at once (Y n x r, one CG per column, all columns'
products K P in one kernel_matmul call, which never holds the n x n matrix), then predicts
held-out points with kernel_matmul(x_test, x, A). The same solve one column at a time shows
what the shared products save (the first target alone, times r); scikit-learn's KernelRidge (a direct solve of the n x n
system) checks the predictions where it fits in memory. --full: n = 40000, d = 8, 16 targets.
"""

import argparse
import contextlib
import math
import sys
import threading
import time

import numpy as np

import gpukern


def make_data(rng, n, d, targets):
    """Points in [0, 1)^d and r smooth targets of them, with noise 0.05."""
    x = rng.random((n, d))
    freq = 1 + np.arange(targets)
    y = np.sin(2 * math.pi * np.outer(x[:, 0], freq) / 4) + np.cos(math.pi * x[:, [1 % d]] * freq / 3)
    return x, y + 0.05 * rng.standard_normal(y.shape)


@contextlib.contextmanager
def heartbeat(what, every=2.0):
    """A line every `every` seconds while the block runs: one library call (scikit-learn's
    solve) cannot report its own progress, and it releases the GIL while it computes."""
    done = threading.Event()
    t0 = time.perf_counter()

    def beat():
        while not done.wait(every):
            print("  ... %s, %.0f s so far" % (what, time.perf_counter() - t0), flush=True)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def cg(product, y, lam, tol, max_iter, report):
    """Column-wise CG on (K + lam I) A = Y from A = 0 until every column's residual is below
    tol relative to its target; one product per iteration for all unconverged columns.
    Returns A, iterations, the worst relative residual, products made, seconds."""
    a = np.zeros_like(y)
    r = y.copy()
    p = r.copy()
    rs = (r * r).sum(axis=0)
    bnorm = np.sqrt(rs)
    active = np.sqrt(rs) > tol * bnorm
    it = products = 0
    t0 = last = time.perf_counter()
    while active.any() and it < max_iter:
        cols = np.flatnonzero(active)
        q = product(p[:, cols]) + lam * p[:, cols]
        products += 1
        step = rs[cols] / (p[:, cols] * q).sum(axis=0)
        a[:, cols] += step * p[:, cols]
        r[:, cols] -= step * q
        rs_new = (r[:, cols] ** 2).sum(axis=0)
        p[:, cols] = r[:, cols] + (rs_new / rs[cols]) * p[:, cols]
        rs[cols] = rs_new
        active[cols] = np.sqrt(rs_new) > tol * bnorm[cols]
        it += 1
        now = time.perf_counter()
        if now - last >= 2:
            report(it, float((np.sqrt(rs) / bnorm).max()), now - t0)
            last = now
    return a, it, float((np.sqrt(rs) / bnorm).max()), products, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="training points (default 2000; 40000 with --full)")
    ap.add_argument("--d", type=int, default=None, help="features (default 4; 8 with --full)")
    ap.add_argument("--targets", type=int, default=None, help="targets r (default 8; 16 with --full)")
    ap.add_argument("--kernel", choices=["rbf", "laplacian", "matern"], default="rbf")
    ap.add_argument("--gamma", type=float, default=10.0)
    ap.add_argument("--lambda", dest="lam", type=float, default=1e-2)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=2000)
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    n = a.n or (40000 if a.full else 2000)
    d = a.d or (8 if a.full else 4)
    targets = a.targets or (16 if a.full else 8)
    rng = np.random.default_rng(a.seed)
    x, y = make_data(rng, n, d, targets)
    xt, yt = make_data(rng, max(n // 4, 1), d, targets)

    def report(it, res, secs):
        print("  CG iteration %d: worst relative residual %.3g after %.1f s" % (it, res, secs), flush=True)

    with gpukern.Context(a.backend) as ctx:
        print("kernel ridge, %d targets: n = %d, d = %d, %s kernel, gamma = %g, lambda = %g, float64, %s"
              % (targets, n, d, a.kernel, a.gamma, a.lam, ctx.device_name), flush=True)
        xd = ctx.asarray(x)

        def product(p):
            return np.asarray(ctx.kernel_matmul(xd, None, ctx.asarray(np.ascontiguousarray(p)), a.kernel,
                                                gamma=a.gamma))

        print("all targets at once (one kernel_matmul per iteration):", flush=True)
        coef, it, res, products, together = cg(product, y, a.lam, a.tol, a.max_iter, report)
        print("  %d iterations, worst relative residual %.3g, %.2f s (%.2f ms per product of %d columns)"
              % (it, res, together, 1e3 * together / max(products, 1), targets), flush=True)
        predicted = np.asarray(ctx.kernel_matmul(ctx.asarray(xt), xd, ctx.asarray(coef), a.kernel, gamma=a.gamma))
        rmse = float(np.sqrt(((predicted - yt) ** 2).mean()))

        print("one target alone (the first), to time a solve per target:", flush=True)
        single = cg(product, y[:, :1], a.lam, a.tol, a.max_iter, report)
        per_column = single[4]
        print("  %d iterations, %.2f s (%.2f ms per product of one column)"
              % (single[1], per_column, 1e3 * per_column / max(single[3], 1)), flush=True)

    check = ""
    if n <= 8000 and a.kernel != "matern":
        print("scikit-learn KernelRidge, a direct solve of the %d x %d system:" % (n, n), flush=True)
        with heartbeat("importing scikit-learn and solving"):
            try:
                from sklearn.kernel_ridge import KernelRidge
            except ImportError:
                KernelRidge = None
            else:
                t0 = time.perf_counter()
                ref = KernelRidge(alpha=a.lam, kernel=a.kernel, gamma=a.gamma).fit(x, y).predict(xt)
                seconds = time.perf_counter() - t0
        if KernelRidge is None:
            print("  scikit-learn is not installed: no direct solve to compare with")
        else:
            print("  %.2f s" % seconds)
            gap = float(np.abs(predicted - ref).max())
            check = "; largest difference from scikit-learn's KernelRidge %.2g" % gap
    print("Summary: %d targets solved together in %.2f s vs %.2f s one at a time (%.1fx per target), "
          "%d CG iterations, test RMSE %.4f (noise 0.05)%s; n = %d, d = %d"
          % (targets, together, per_column * targets, per_column * targets / together, it, rmse, check, n, d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
