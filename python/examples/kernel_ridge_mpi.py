# SPDX-License-Identifier: MIT
"""Kernel ridge regression over MPI ranks, the Python twin of examples/mpi/kernel_ridge.c.

    mpiexec -n 4 python3 -m mpi4py kernel_ridge_mpi.py [--full | --n 200000] [--backend cpu] [--check]

By default n = 2000 points (seconds on a 2-core laptop); --full solves n = 20000 (minutes on
one, seconds on GPUs); rank 0 prints CG's progress every 2 s.

(-m mpi4py aborts every rank when one raises, instead of leaving the others waiting.)

(K + lambda I) alpha = y by conjugate gradients: each product K p from gpukern.mpi.rbf_matvec,
dot products by MPI Allreduce. Rank r holds a block of the points; the data come from
gpukern's counter-based generator, so every rank count solves the same problem (and the same
one as the C example with the same flags).
"""

import argparse
import math
import sys
import time

import numpy as np
from mpi4py import MPI

import gpukern
import gpukern.mpi


def share(n, rank, size, uneven):
    """This rank's first row and row count: even blocks, or none on rank 1 with --uneven."""
    before, mine = rank, 1
    if uneven and size > 1:
        before = 2 if rank == 1 else rank
        mine = 2 if rank == 0 else 0 if rank == 1 else 1
    first = n * before // size
    return first, n * (before + mine) // size - first


def make_data(ctx, a, dtype, first, count):
    x = ctx.uniform((count, a.d), a.seed, first * a.d, dtype=dtype).get()
    noise = ctx.normal((count,), a.seed + 1, first, 0.0, 0.1, dtype=dtype).get()
    y = np.sin(2 * math.pi * x[:, 0].astype(np.float64)) + noise
    if a.d > 1:
        y += np.cos(math.pi * x[:, 1].astype(np.float64))
    return x, y.astype(dtype)


def cg(product, allsum, y, a, report=None):
    """CG from alpha = 0 until |r| <= tol |y|; returns alpha, iterations, residual, seconds.
    report(iteration, residual, seconds) is called every 2 s of work, if given."""
    alpha = np.zeros_like(y)
    r = y.copy()
    p = r.copy()
    rs = allsum(float(r @ r))
    bnorm = math.sqrt(rs)
    it = 0
    t0 = last = time.perf_counter()
    while it < a.max_iter and math.sqrt(rs) > a.tol * bnorm:
        now = time.perf_counter()
        if report is not None and now - last >= 2:
            report(it, math.sqrt(rs) / bnorm, now - t0)
            last = now
        q = product(p) + a.lam * p
        step = rs / allsum(float(p @ q))
        alpha += step * p
        r -= step * q
        rs_new = allsum(float(r @ r))
        p = r + (rs_new / rs) * p
        rs = rs_new
        it += 1
    return alpha, it, (math.sqrt(rs) / bnorm if bnorm else 0.0), time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="points (default 2000; 20000 with --full)")
    ap.add_argument("--full", action="store_true", help="n = 20000, as examples/mpi/kernel_ridge.c by default")
    ap.add_argument("--d", type=int, default=3)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--lambda", dest="lam", type=float, default=1e-2)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--dtype", choices=["f32", "f64"], default="f64")
    ap.add_argument("--backend", choices=["cpu", "cuda", "auto"], default="auto")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--uneven", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.n is None:
        a.n = 20000 if a.full else 2000
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    dtype = np.float32 if a.dtype == "f32" else np.float64
    ctx = gpukern.Context(a.backend, device=gpukern.mpi.local_device(comm, a.backend))
    first, count = share(a.n, rank, size, a.uneven)
    x, y = make_data(ctx, a, dtype, first, count)
    if rank == 0:
        print("kernel ridge regression (Python): n = %d points, d = %d, gamma = %g, lambda = %g, "
              "%s, %d rank(s), %s (CUDA-aware MPI: %s)"
              % (a.n, a.d, a.gamma, a.lam, np.dtype(dtype).name, size, ctx.device_name,
                 "yes" if gpukern.mpi.cuda_aware() else "no"))

    def product(p):
        return gpukern.mpi.rbf_matvec(ctx, comm, x, x, p, a.gamma)

    def allsum(v):
        return comm.allreduce(v, op=MPI.SUM)

    def report(it, res, secs):
        if rank == 0:
            print("  CG iteration %d: relative residual %.3g after %.1f s" % (it, res, secs), flush=True)

    comm.Barrier()
    alpha, it, res, secs = cg(product, allsum, y, a, report)
    secs = comm.reduce(secs, op=MPI.MAX, root=0)
    ok = res <= a.tol
    if rank == 0:
        print("CG: %d iterations, relative residual %.3g (tol %.3g), %.4f s per iteration"
              % (it, res, a.tol, secs / max(it, 1)))
    if ok and a.check:
        parts = comm.gather(alpha, root=0)
        if rank == 0:
            whole = np.concatenate(parts)
            gx, gy = make_data(ctx, a, dtype, 0, a.n)
            print("check: solving on one process ...", flush=True)
            single, it1, res1, _ = cg(lambda p: ctx.rbf_matvec(gx, gx, p, a.gamma),
                                      lambda v: v, gy, a, report)
            rel = float(np.linalg.norm(whole.astype(np.float64) - single)
                        / max(np.linalg.norm(single), 1e-300))
            # Both stop at a relative residual of tol: they differ by about cond * tol at most.
            bound = max(10 * a.tol * (a.n + a.lam) / a.lam, 1e-3 if dtype is np.float32 else 0)
            ok = rel <= bound
            print("check: one process took %d iterations (residual %.3g); "
                  "|alpha - alpha_1| / |alpha_1| = %.3g (bound %.3g): %s"
                  % (it1, res1, rel, bound, "OK" if ok else "FAILED"))
        ok = comm.bcast(ok, root=0)
    ctx.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
