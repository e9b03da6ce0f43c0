# SPDX-License-Identifier: MIT
"""gpukern.mpi under mpiexec: NumPy arrays and gpukern Arrays in, uneven shards with an empty
one, out=, and collective errors (the same status and message on every rank). Exits nonzero on
every rank if any rank saw a failure."""

import sys

import numpy as np
from mpi4py import MPI

import gpukern
import gpukern.mpi

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("rank %d: FAILED: %s" % (rank, what), flush=True)


def shard(total):
    # Rank 1 holds nothing; rank 0 twice the others.
    weights = [1] if size == 1 else [2, 0] + [1] * (size - 2)
    edges = np.cumsum([0] + weights) * total // sum(weights)
    return int(edges[rank]), int(edges[rank + 1])


with gpukern.Context("cpu") as ctx:
    for dtype, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        rng = np.random.default_rng(2026)  # the same global data on every rank
        m, n, d, gamma = 301, 257, 4, 0.3
        x = rng.random((m, d)).astype(dtype)
        y = rng.random((n, d)).astype(dtype)
        w = (rng.random(n) - 0.5).astype(dtype)
        (x0, x1), (y0, y1) = shard(m), shard(n)
        ref = ctx.rbf_matvec(x, y, w, gamma)[x0:x1]
        bound = tol * np.abs(w).sum()
        got = gpukern.mpi.rbf_matvec(ctx, comm, x[x0:x1], y[y0:y1], w[y0:y1], gamma)
        check(type(got) is np.ndarray and got.shape == (x1 - x0,), "ndarray result")
        check(np.abs(got - ref).max(initial=0) <= bound, "%s ndarrays: max err %.3g > %.3g"
              % (np.dtype(dtype).name, np.abs(got - ref).max(initial=0), bound))
        xa, ya, wa = ctx.asarray(x[x0:x1]), ctx.asarray(y[y0:y1]), ctx.asarray(w[y0:y1])
        got = gpukern.mpi.rbf_matvec(ctx, comm, xa, ya, wa, gamma)
        check(type(got) is gpukern.Array, "Array result for Array inputs")
        check(np.abs(got.get() - ref).max(initial=0) <= bound, "%s Arrays" % np.dtype(dtype).name)
        out = np.full(x1 - x0, -1.0, dtype)
        back = gpukern.mpi.rbf_matvec(ctx, comm, x[x0:x1], y[y0:y1], w[y0:y1], gamma, out=out)
        check(back is out and np.abs(out - ref).max(initial=0) <= bound, "out=")

    # Errors: every rank raises the same status with the same message.
    cases = [
        ("gamma differs", lambda: gpukern.mpi.rbf_matvec(
            ctx, comm, x[:2], y[:2], w[:2], 0.3 if rank else 0.4), gpukern.Status.INVALID_ARGUMENT),
        ("d differs", lambda: gpukern.mpi.rbf_matvec(
            ctx, comm, x[:2, : 3 if rank == size - 1 else 4], y[:2, : 3 if rank == size - 1 else 4],
            w[:2], 0.3), gpukern.Status.INVALID_ARGUMENT),
    ]
    for what, call, want in cases:
        if size < 2:
            break
        try:
            call()
            status, message = None, ""
        except gpukern.GpukernError as e:
            status, message = e.status, str(e)
        everyone = comm.allgather((status, message))
        check(status == want, "%s: raised %s, want %s" % (what, status, want))
        check(all(e == everyone[0] for e in everyone), "%s: ranks disagree: %s" % (what, everyone))
        check(message.startswith("gk_mpi_rbf_matvec: "), "%s: message %r" % (what, message))

total = comm.allreduce(len(failures))
if rank == 0:
    print("gpukern.mpi on %d rank(s): %s" % (size, "OK" if total == 0 else "%d failure(s)" % total))
sys.exit(1 if total else 0)
