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
    # A bad argument on the last rank alone: that rank's Python checks fail before the collective
    # call, and every rank raises the same error naming it (issue 31; the others used to wait
    # forever in the C call, which ctest's time limit would end).
    last = rank == size - 1
    x2, y2, w2 = x[:2], y[:2], w[:2]
    cases += [
        ("w of the wrong length", lambda: gpukern.mpi.rbf_matvec(
            ctx, comm, x2, y2, w[:1] if last else w2, 0.3), ValueError),
        ("mixed dtypes", lambda: gpukern.mpi.rbf_matvec(
            ctx, comm, x2, y2, w2.astype(np.float32) if last else w2, 0.3), TypeError),
        ("1-D x", lambda: gpukern.mpi.rbf_matvec(
            ctx, comm, x2[0] if last else x2, y2, w2, 0.3), ValueError),
        ("gamma not a number", lambda: gpukern.mpi.rbf_matvec(
            ctx, comm, x2, y2, w2, "0.3x" if last else 0.3), ValueError),
        ("gamma negative", lambda: gpukern.mpi.rbf_matvec(
            ctx, comm, x2, y2, w2, -0.3 if last else 0.3), ValueError),
        ("out of the wrong shape", lambda: gpukern.mpi.rbf_matvec(
            ctx, comm, x2, y2, w2, 0.3, out=np.empty(3 if last else 2, x2.dtype)), ValueError),
        ("the dtype differs", lambda: gpukern.mpi.rbf_matvec(
            ctx, comm, *(a.astype(np.float32) if last else a for a in (x2, y2, w2)), 0.3),
            gpukern.Status.DTYPE),
    ]
    for what, call, want in cases:
        if size < 2:
            break
        try:
            call()
            status, message = None, ""
        except gpukern.GpukernError as e:
            status, message = e.status, str(e)
        except (ValueError, TypeError) as e:
            status, message = ValueError if isinstance(e, ValueError) else type(e), str(e)
        everyone = comm.allgather((str(status), message))
        check(status == want, "%s: raised %s (%s), want %s" % (what, status, message, want))
        check(all(e == everyone[0] for e in everyone), "%s: ranks disagree: %s" % (what, everyone))
        prefix = ("gk_mpi_rbf_matvec: " if isinstance(want, gpukern.Status)
                  else "gpukern.mpi.rbf_matvec: rank %d: " % (size - 1))
        check(message.startswith(prefix), "%s: message %r" % (what, message))

    # gamma 0.0 on some ranks and -0.0 on others is one value: accepted (every kernel value 1).
    if size >= 2:
        got = gpukern.mpi.rbf_matvec(ctx, comm, x[:2], y[:2], w[:2], -0.0 if rank == size - 1 else 0.0)
        check(np.allclose(got, comm.allreduce(float(w[:2].sum()))), "gamma 0.0 and -0.0: %s" % (got,))

    # An intercommunicator is refused on every rank (its collectives span two groups).
    if size >= 2:
        half = comm.Split(rank % 2, rank)
        inter = half.Create_intercomm(0, comm, 1 - rank % 2, 7)
        try:
            gpukern.mpi.rbf_matvec(ctx, inter, x[:2], y[:2], w[:2], 0.3)
            check(False, "intercommunicator: no error")
        except ValueError as e:
            check("intercommunicator" in str(e), "intercommunicator: message %r" % str(e))
        inter.Free()
        half.Free()

total = comm.allreduce(len(failures))
if rank == 0:
    print("gpukern.mpi on %d rank(s): %s" % (size, "OK" if total == 0 else "%d failure(s)" % total))
sys.exit(1 if total else 0)
