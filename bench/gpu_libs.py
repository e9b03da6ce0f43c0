#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gpu_libs.py - the libraries gpu_targets.py times: ours (the gpukern package), CuPy, torch, one timer.
"""How each library does a gpu_targets.py row, the way its users write it, and the one timer
they all share: wall clock around batches of calls ending in the library's synchronize."""
import gc
import math
import os
import statistics
import sys
import time

F32, F64 = 1, 2
# Anchors materialize rbf kernel matrices at most this many elements at a time, and time
# rbf_matvec on at most this many kernel entries (a row subset), as compare.py does.
CHUNK_ELEMS = 1 << 28
MATVEC_ELEMS = 1 << 32


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Timing: the same for every library.
# ---------------------------------------------------------------------------------------------

class Plan:
    def __init__(self, quick):
        self.min_batch_s = 0.005 if quick else 0.025  # a timed batch lasts at least this long
        self.reps = 3 if quick else 7
        self.budget_s = 0.6 if quick else 2.5  # timed batches of one library on one row
        self.max_calls = 1 << 16


def measure(fn, sync, plan):
    """Median seconds per call of batches of calls ending in sync, after two warm-up calls (the
    first pays for compilation, plans and first touches; the second sizes the batch)."""
    fn(0)
    sync()
    t0 = time.perf_counter()
    fn(1)
    sync()
    est = max(time.perf_counter() - t0, 1e-7)
    calls = max(1, min(plan.max_calls, math.ceil(plan.min_batch_s / est)))
    reps = plan.reps
    if est * calls * reps > plan.budget_s:
        reps = max(3, int(plan.budget_s / (est * calls)))
    times, it = [], 2
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(it)
            it += 1
        sync()
        times.append((time.perf_counter() - t0) / calls)
    return {"median_s": statistics.median(times), "min_s": min(times), "calls": calls,
            "reps": reps}


# ---------------------------------------------------------------------------------------------
# Ours: the gpukern package on Arrays of its own context (context memory: device memory on CUDA).
# ---------------------------------------------------------------------------------------------

class Ours:
    name = "ours"

    def __init__(self, path, backend):
        """A context of backend ("cpu" or "cuda") on the library at path (GPUKERN_LIBRARY)."""
        if path:
            os.environ["GPUKERN_LIBRARY"] = path
        import gpukern
        import numpy

        self.np = numpy
        self.ctx = gpukern.Context(backend)
        self.device = self.ctx.device_name
        self.version = gpukern.library_version
        self.path = gpukern.library_path
        self.arrays = []

    def buf(self, dtype, shape, seed=None):
        """An Array of the given shape, uniform [0, 1) unless seed is None."""
        dt = self.np.float64 if dtype == F64 else self.np.float32
        if seed is None:
            a = self.ctx.empty(shape, dt)
        else:
            a = self.ctx.uniform(shape, seed=seed, dtype=dt)
        self.arrays.append(a)
        return a

    def sync(self):
        self.ctx.synchronize()

    def free(self):
        try:
            self.sync()
        except Exception as e:  # a failed call's error is the row's already
            log(f"ours: synchronize before freeing: {e}")
        self.arrays = []
        gc.collect()

    def setup(self, row, s):
        """fn(i), one call of the row's work, and the factor its time is scaled by (1)."""
        ctx, t, B = self.ctx, row.dtype, self.buf
        k, n = row.kind, s.get("n", 0)
        if k in ("add", "sub", "mul", "tiny"):
            x, y, z = B(t, n, 1), B(t, n, 2), B(t, n)
            f = getattr(ctx, "add" if k == "tiny" else k)
            return lambda i: f(x, y, out=z), 1.0
        if k == "axpy":
            x, y = B(t, n, 1), B(t, n, 2)
            return lambda i: ctx.axpy(0.5 if i % 2 == 0 else -0.5, x, y), 1.0
        if k == "scale":
            x = B(t, n, 1)
            return lambda i: ctx.scale(2.0 if i % 2 == 0 else 0.5, x), 1.0
        if k == "exp":
            x, y = B(t, n, 1), B(t, n)
            return lambda i: ctx.exp(x, out=y), 1.0
        if k in ("sum", "nrm2", "dot"):
            x, y = B(t, n, 1), B(t, n, 2)
            if k == "dot":
                return lambda i: ctx.dot(x, y), 1.0
            f = getattr(ctx, k)
            return lambda i: f(x), 1.0
        if k == "rng_uniform":
            x = B(t, n)
            return lambda i: ctx.uniform(n, seed=7 + i, dtype=x.dtype, out=x), 1.0
        if k == "rng_normal":
            x = B(t, n)
            return lambda i: ctx.normal(n, seed=7 + i, dtype=x.dtype, out=x), 1.0
        if k == "rbf_rows":
            d, g = s["d"], s["gamma"]
            a, b, out = B(t, (n, d), 1), B(t, (n, d), 2), B(t, n)
            return lambda i: ctx.rbf_rows(a, b, gamma=g, out=out), 1.0
        if k == "rbf_matrix":
            m, d, g = s["m"], s["d"], s["gamma"]
            x, y, kk = B(t, (m, d), 1), B(t, (n, d), 2), B(t, (m, n))
            return lambda i: ctx.rbf_matrix(x, y, gamma=g, out=kk), 1.0
        if k == "rbf_matvec":
            m, d, g = s["m"], s["d"], s["gamma"]
            x, y, w, out = B(t, (m, d), 1), B(t, (n, d), 2), B(t, n, 3), B(t, m)
            return lambda i: ctx.rbf_matvec(x, y, w, gamma=g, out=out), 1.0
        if k == "gemm":
            a, b, c = B(t, (n, n), 1), B(t, (n, n), 2), B(t, (n, n))
            return lambda i: ctx.gemm(a, b, c=c), 1.0
        if k == "seed004":
            rounds, x, y = s["rounds"], B(F64, (n, n)), B(F64, (n, n))

            def seed004(i):
                for r in range(rounds):  # the article: x = rand(N, N); x = x @ x
                    ctx.uniform((n, n), seed=i * rounds + r, dtype=x.dtype, out=x)
                    ctx.gemm(x, x, c=y)
            return seed004, 1.0
        raise ValueError(f"no call for {k}")


# ---------------------------------------------------------------------------------------------
# The anchors: the same work written the way each library's users write it (as compare.py).
# ---------------------------------------------------------------------------------------------

class TorchLib:
    name = "torch"

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no GPU")
        self.torch, self.version = torch, torch.__version__
        # Our float32 gemm and kernels do not use TF32 unless asked; neither may the anchor.
        torch.backends.cuda.matmul.allow_tf32 = False

    def dt(self, dtype):
        return self.torch.float64 if dtype == F64 else self.torch.float32

    def rand(self, count, dtype):
        return self.torch.rand(count, dtype=self.dt(dtype), device="cuda")

    def sync(self):
        self.torch.cuda.synchronize()

    def free(self):
        self.torch.cuda.synchronize()
        gc.collect()
        self.torch.cuda.empty_cache()

    def rbf_block(self, x, y, gamma):
        return self.torch.exp(-gamma * self.torch.cdist(x, y) ** 2)

    def setup(self, row, s):
        torch, t, R = self.torch, row.dtype, self.rand
        k, n = row.kind, s.get("n", 0)
        if k in ("add", "sub", "mul", "tiny"):
            x, y, z = R(n, t), R(n, t), R(n, t)
            f = {"sub": torch.sub, "mul": torch.mul}.get(k, torch.add)
            return lambda i: f(x, y, out=z), 1.0
        if k == "axpy":  # one fused kernel: torch's own axpy
            x, y = R(n, t), R(n, t)
            return lambda i: y.add_(x, alpha=0.5 if i % 2 == 0 else -0.5), 1.0
        if k == "scale":
            x = R(n, t)
            return lambda i: x.mul_(2.0 if i % 2 == 0 else 0.5), 1.0
        if k == "exp":
            x, y = R(n, t), R(n, t)
            return lambda i: torch.exp(x, out=y), 1.0
        if k == "sum":
            x = R(n, t)
            return lambda i: float(x.sum()), 1.0
        if k == "dot":
            x, y = R(n, t), R(n, t)
            return lambda i: float(torch.dot(x, y)), 1.0
        if k == "nrm2":
            x = R(n, t)
            return lambda i: float(torch.linalg.vector_norm(x)), 1.0
        if k == "rng_uniform":
            x = torch.empty(n, dtype=self.dt(t), device="cuda")
            return lambda i: x.uniform_(), 1.0
        if k == "rng_normal":
            x = torch.empty(n, dtype=self.dt(t), device="cuda")
            return lambda i: x.normal_(), 1.0
        return pairwise_setup(self, torch, row, s)


class CupyLib:
    name = "cupy"

    def __init__(self):
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("CuPy sees no GPU")
        self.cp, self.version = cupy, cupy.__version__

    def dt(self, dtype):
        return self.cp.float64 if dtype == F64 else self.cp.float32

    def rand(self, count, dtype):
        return self.cp.random.random(count, dtype=self.dt(dtype))

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def free(self):
        self.cp.cuda.Device().synchronize()
        gc.collect()
        self.cp.get_default_memory_pool().free_all_blocks()

    def rbf_block(self, x, y, gamma):
        cp = self.cp  # the expansion |x|^2 + |y|^2 - 2 x.y, one GEMM
        d2 = (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2 * (x @ y.T)
        return cp.exp(-gamma * cp.maximum(d2, 0))

    def setup(self, row, s):
        cp, t, R = self.cp, row.dtype, self.rand
        k, n = row.kind, s.get("n", 0)
        if k in ("add", "sub", "mul", "tiny"):
            x, y, z = R(n, t), R(n, t), R(n, t)
            f = {"sub": cp.subtract, "mul": cp.multiply}.get(k, cp.add)
            return lambda i: f(x, y, out=z), 1.0
        if k == "axpy":
            x, y = R(n, t), R(n, t)

            def axpy(i):
                y.__iadd__((0.5 if i % 2 == 0 else -0.5) * x)
            return axpy, 1.0
        if k == "scale":
            x = R(n, t)
            return lambda i: x.__imul__(2.0 if i % 2 == 0 else 0.5), 1.0
        if k == "exp":
            x, y = R(n, t), R(n, t)
            return lambda i: cp.exp(x, out=y), 1.0
        if k == "sum":
            x = R(n, t)
            return lambda i: float(x.sum()), 1.0
        if k == "dot":
            x, y = R(n, t), R(n, t)
            return lambda i: float(cp.dot(x, y)), 1.0
        if k == "nrm2":
            x = R(n, t)
            return lambda i: float(cp.linalg.norm(x)), 1.0
        if k == "rng_uniform":  # CuPy's idiom allocates, as its users write it
            return lambda i: cp.random.random(n, dtype=self.dt(t)), 1.0
        if k == "rng_normal":
            return lambda i: cp.random.standard_normal(n, dtype=self.dt(t)), 1.0
        return pairwise_setup(self, cp, row, s)


def pairwise_setup(lib, xp, row, s):
    """rbf_rows, rbf_matrix, rbf_matvec, gemm and seed 004 for torch and CuPy alike."""
    k, t, R, n = row.kind, row.dtype, lib.rand, s.get("n", 0)
    if k == "rbf_rows":
        d, g = s["d"], s["gamma"]
        a, b = R(n * d, t).reshape(n, d), R(n * d, t).reshape(n, d)
        return lambda i: xp.exp(-g * ((a - b) ** 2).sum(1)), 1.0
    if k == "rbf_matrix":
        m, d, g = s["m"], s["d"], s["gamma"]
        x, y, kk = R(m * d, t).reshape(m, d), R(n * d, t).reshape(n, d), R(m * n, t).reshape(m, n)
        step = max(1, CHUNK_ELEMS // n)

        def rbf_matrix(i):
            for r in range(0, m, step):
                kk[r:r + step] = lib.rbf_block(x[r:r + step], y, g)
        return rbf_matrix, 1.0
    if k == "rbf_matvec":
        m, d, g = s["m"], s["d"], s["gamma"]
        rows = min(m, max(1, MATVEC_ELEMS // n))
        x, y = R(rows * d, t).reshape(rows, d), R(n * d, t).reshape(n, d)
        w, out = R(n, t), R(rows, t)
        step = max(1, CHUNK_ELEMS // n)

        def rbf_matvec(i):
            for r in range(0, rows, step):
                out[r:r + step] = lib.rbf_block(x[r:r + step], y, g) @ w
        return rbf_matvec, m / rows
    if k == "gemm":
        a, b, c = (R(n * n, t).reshape(n, n) for _ in range(3))
        return lambda i: xp.matmul(a, b, out=c), 1.0
    if k == "seed004":
        rounds = s["rounds"]

        def seed004(i):
            for _ in range(rounds):
                x = R(n * n, F64).reshape(n, n)
                x = x @ x
        return seed004, 1.0
    raise ValueError(f"no anchor for {k}")


def load_anchors(names):
    libs = {}
    for cls in (TorchLib, CupyLib):
        if cls.name not in names:
            continue
        try:
            libs[cls.name] = cls()
        except Exception as e:  # an anchor that does not import is absent, and said so
            log(f"{cls.name}: not used ({type(e).__name__}: {e})")
    return libs
