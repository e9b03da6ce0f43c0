#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# compare.py - runs gkbench's workloads through NumPy, scikit-learn, CuPy and PyTorch beside ours.
"""Compare gkbench results with NumPy and scikit-learn (CPU rows) and CuPy / PyTorch (CUDA rows).

    gkbench --json ours.json && python3 bench/compare.py ours.json > table.md

Reads gkbench's JSON, times the same workload in every library that imports (GPU libraries only
when they see a GPU), plus the ceilings on a GPU (device-to-device copy of 1 GiB, large cuBLAS
GEMM through CuPy), and writes a markdown table to stdout for bench/results/. Progress goes
to stderr. GPU anchors are timed with CUDA events, CPU anchors with perf_counter, both after a
warm-up, median of repetitions, as gkbench does. "ratio" is anchor time / our time: above 1 we
are faster. CPU rbf_matrix and rbf_matvec rows have two anchors: NumPy broadcasting (what users
write by hand) and scikit-learn's rbf_kernel (what they call; a GEMM form, much faster).
"""
import argparse
import datetime
import json
import math
import os
import platform
import signal
import subprocess
import sys
import time

import numpy as np

ROTATE_BYTES = 256 << 20  # as gkbench: small streaming operands rotate through larger sets
MAX_SETS = 64
# Pairwise-kernel anchors (rbf_matrix, rbf_matvec) materialize at most this many matrix
# elements at a time (NumPy's broadcast: times the features).
CHUNK_ELEMS = {"numpy": 1 << 24, "sklearn": 1 << 24, "cupy": 1 << 28, "torch": 1 << 28}
# rbf_matvec anchors with more kernel entries than this time a row subset and scale up: the
# library's own kernel never materializes the matrix, and 1e6 x 1e6 chunks would take minutes.
MATVEC_ELEMS = {"numpy": 1 << 24, "sklearn": 1 << 26, "cupy": 1 << 32, "torch": 1 << 32}
# gkbench's BENCH_KNN_K and BENCH_MATMUL_R (bench/cases.h): neighbours of knn, columns of
# kernel_matmul. The anchors allocate knn's outputs themselves, as users' code does.
KNN_K, MATMUL_R = 10, 16
# Rows whose anchors may time a row subset and scale it up (see operand_sets).
SUBSET_ROWS = {"rbf_matvec", "kernel_matmul", "knn"}
STREAMING = {"fill", "copy", "add", "sub", "mul", "axpy", "scale", "exp", "sum", "dot", "nrm2",
             "rbf_rows", "rng_uniform", "rng_normal"}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Libraries: array creation, synchronization and timing differ; the workloads do not.
# ---------------------------------------------------------------------------------------------

class NumpyLib:
    name, gpu = "numpy", False

    def __init__(self):
        self.xp, self.rng = np, np.random.default_rng(1)
        self.version = np.__version__

    def rand(self, count, dtype):
        return self.rng.random(count, dtype=dtype)

    def batch(self, fn, calls, first):
        t0 = time.perf_counter()
        for i in range(first, first + calls):
            fn(i)
        return (time.perf_counter() - t0) / calls

    def free(self):
        pass


class SklearnLib(NumpyLib):
    """scikit-learn's rbf_kernel, what users of the CPU call for pairwise Gaussian kernels (a
    GEMM form through NumPy's BLAS, then exp): the anchor of the CPU rbf_matrix and rbf_matvec
    rows beside NumPy's broadcasting, which is what users write by hand."""
    name = "sklearn"

    def __init__(self):
        super().__init__()
        import sklearn
        from sklearn.metrics.pairwise import rbf_kernel
        self.rbf_kernel, self.version = rbf_kernel, sklearn.__version__


class CupyLib:
    name, gpu = "cupy", True

    def __init__(self):
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no GPU")
        self.xp, self.version = cupy, cupy.__version__

    def rand(self, count, dtype):
        return self.xp.random.random(count, dtype=dtype)

    def batch(self, fn, calls, first):
        cp = self.xp
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for i in range(first, first + calls):
            fn(i)
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) * 1e-3 / calls

    def free(self):
        self.xp.get_default_memory_pool().free_all_blocks()


class TorchLib:
    name, gpu = "torch", True

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("no GPU")
        self.torch, self.version = torch, torch.__version__
        # Our float32 gemm does not use TF32 unless asked; neither may the anchor.
        torch.backends.cuda.matmul.allow_tf32 = False

    def dtype(self, dtype):
        return self.torch.float64 if dtype == np.float64 else self.torch.float32

    def rand(self, count, dtype):
        return self.torch.rand(count, dtype=self.dtype(dtype), device="cuda")

    def batch(self, fn, calls, first):
        t = self.torch
        start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        start.record()
        for i in range(first, first + calls):
            fn(i)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e-3 / calls

    def free(self):
        self.torch.cuda.empty_cache()


def load_libs(names):
    libs = {}
    for cls in (NumpyLib, SklearnLib, CupyLib, TorchLib):
        if cls.name not in names:
            continue
        try:
            libs[cls.name] = cls()
        except Exception as e:  # an anchor library that does not import is simply absent
            log(f"{cls.name}: not used ({type(e).__name__}: {e})")
    return libs


# ---------------------------------------------------------------------------------------------
# Workloads: for a gkbench result, operand counts and one call in a library's idiom.
# ---------------------------------------------------------------------------------------------

def operand_counts(op, m, n, k):
    return {
        "fill": [n], "scale": [n], "sum": [n], "nrm2": [n], "rng_uniform": [n],
        "rng_normal": [n], "copy": [n, n], "axpy": [n, n], "exp": [n, n], "dot": [n, n],
        "add": [n] * 3, "sub": [n] * 3, "mul": [n] * 3, "tiny_add": [n] * 3,
        "gemm": [m * k, k * n, m * n], "rbf_rows": [n * k, n * k, n],
        "rbf_matrix": [m * k, n * k, m * n], "rbf_matvec": [m * k, n * k, n, m],
        "kernel_matrix": [m * k, n * k, m * n], "distance_matrix": [m * k, n * k, m * n],
        "knn": [m * k, n * k], "kernel_matmul": [m * k, n * k, n * MATMUL_R, m * MATMUL_R],
    }[op]


def rbf_block(lib, x, y, gamma):
    """exp(-gamma ||x_i - y_j||^2) the way each library's users write it."""
    if lib.name == "numpy":  # broadcasting, as the seed article's NumPy code does
        return np.exp(-gamma * ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))
    if lib.name == "torch":
        return lib.torch.exp(-gamma * lib.torch.cdist(x, y) ** 2)
    xp = lib.xp  # CuPy: the expansion ||x||^2 + ||y||^2 - 2 x.y, one GEMM
    d2 = (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2 * (x @ y.T)
    return xp.exp(-gamma * xp.maximum(d2, 0))


def rows_per_chunk(lib, n, k):
    per_row = n * (k if lib.name == "numpy" else 1)  # NumPy's broadcast holds n x k per row
    return max(1, CHUNK_ELEMS[lib.name] // per_row)


def make_call(lib, r, ops):
    """One call of result r's workload on operand set ops (a list), as fn(i)."""
    op, m, n, k = r["op"], r["m"], r["n"], r["k"]
    gamma = 1.0 / k if k else 1.0
    torch = getattr(lib, "torch", None)
    xp = getattr(lib, "xp", None)
    a = ops
    if lib.name == "sklearn":
        return sklearn_call(lib, r, ops, gamma)
    if op == "fill":
        return lambda i: a[0].fill_(0.5) if torch else a[0].fill(0.5)
    if op == "copy":
        return lambda i: a[1].copy_(a[0]) if torch else xp.copyto(a[1], a[0])
    if op in ("add", "tiny_add", "sub", "mul"):
        name = {"sub": "subtract", "mul": "multiply"}.get(op, "add")  # in NumPy, CuPy, torch
        f = getattr(torch if torch else xp, name)
        return lambda i: f(a[0], a[1], out=a[2])
    if op == "axpy":
        def axpy(i):
            a[1] += (0.5 if i % 2 == 0 else -0.5) * a[0]
        return axpy
    if op == "scale":
        def scale(i):
            a[0] *= 2.0 if i % 2 == 0 else 0.5
        return scale
    if op == "exp":
        f = (torch if torch else xp).exp
        return lambda i: f(a[0], out=a[1])
    if op == "sum":
        return lambda i: float(a[0].sum())
    if op == "dot":
        return lambda i: float((torch if torch else xp).dot(a[0], a[1]))
    if op == "nrm2":
        return lambda i: float(torch.linalg.vector_norm(a[0]) if torch else xp.linalg.norm(a[0]))
    if op == "gemm":
        A, B, C = a[0].reshape(m, k), a[1].reshape(k, n), a[2].reshape(m, n)
        f = (torch if torch else xp).matmul
        return lambda i: f(A, B, out=C)
    if op == "rbf_rows":
        A, B = a[0].reshape(n, k), a[1].reshape(n, k)
        e = (torch if torch else xp).exp
        return lambda i: e(-gamma * ((A - B) ** 2).sum(1))
    if op == "rbf_matrix":
        X, Y, K = a[0].reshape(m, k), a[1].reshape(n, k), a[2].reshape(m, n)
        step = rows_per_chunk(lib, n, k)

        def rbf_matrix(i):
            for s in range(0, m, step):
                K[s:s + step] = rbf_block(lib, X[s:s + step], Y, gamma)
        return rbf_matrix
    if op == "rbf_matvec":
        X, Y, w, out = a[0].reshape(-1, k), a[1].reshape(n, k), a[2], a[3]
        step = rows_per_chunk(lib, n, k)

        def rbf_matvec(i):
            for s in range(0, X.shape[0], step):
                out[s:s + step] = rbf_block(lib, X[s:s + step], Y, gamma) @ w
        return rbf_matvec
    if op in ("kernel_matrix", "distance_matrix", "knn", "kernel_matmul"):
        return family_call(lib, r, a, gamma)
    if op in ("rng_uniform", "rng_normal"):
        if torch:
            return (lambda i: a[0].uniform_()) if op == "rng_uniform" else (lambda i: a[0].normal_())
        if lib.name == "numpy":
            if op == "rng_uniform":
                return lambda i: lib.rng.random(out=a[0], dtype=a[0].dtype)
            return lambda i: lib.rng.standard_normal(out=a[0], dtype=a[0].dtype)
        f = xp.random.random if op == "rng_uniform" else xp.random.standard_normal
        return lambda i: f(n, dtype=a[0].dtype)  # CuPy's idiom allocates, as users write it
    if op == "seed004":
        def seed004(i):
            for _ in range(m):  # the article: x = rand(N, N); x = x @ x
                if torch:
                    x = torch.rand(n, n, dtype=torch.float64, device="cuda")
                elif lib.name == "numpy":
                    x = np.random.rand(n, n)
                else:
                    x = xp.random.rand(n, n)
                x = x @ x
        return seed004
    return None


def pair_block(lib, op, x, y, gamma):
    """A block of kernel_matrix (the Laplacian kernel) or distance_matrix (euclidean) the way
    each library's users write it: torch's cdist; NumPy's broadcasting; CuPy's expansion for
    the euclidean distance, broadcasting for the L1 one (it has no GEMM form)."""
    torch = getattr(lib, "torch", None)
    if torch:
        d = torch.cdist(x, y, p=1 if op == "kernel_matrix" else 2)
        return torch.exp(-gamma * d) if op == "kernel_matrix" else d
    xp = lib.xp
    if op == "kernel_matrix":
        return xp.exp(-gamma * xp.abs(x[:, None, :] - y[None, :, :]).sum(-1))
    if lib.name == "numpy":
        return xp.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))
    d2 = (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2 * (x @ y.T)
    return xp.sqrt(xp.maximum(d2, 0))


def family_call(lib, r, a, gamma):
    """kernel_matrix, distance_matrix, knn (cdist + topk, or argpartition then a sort of the k)
    and kernel_matmul (rbf blocks @ W) in NumPy, CuPy or torch, over row chunks."""
    op, n, k = r["op"], r["n"], r["k"]
    X, Y = a[0].reshape(-1, k), a[1].reshape(n, k)
    m = X.shape[0]
    broadcast = lib.name == "numpy" or (lib.name == "cupy" and op == "kernel_matrix")
    step = max(1, CHUNK_ELEMS[lib.name] // (n * (k if broadcast else 1)))
    torch, xp = getattr(lib, "torch", None), getattr(lib, "xp", None)
    if op in ("kernel_matrix", "distance_matrix"):
        K = a[2].reshape(m, n)

        def pairs(i):
            for s in range(0, m, step):
                K[s:s + step] = pair_block(lib, op, X[s:s + step], Y, gamma)
        return pairs
    if op == "knn":
        def knn(i):
            for s in range(0, m, step):
                d = pair_block(lib, "distance_matrix", X[s:s + step], Y, gamma)
                if torch:
                    torch.topk(d, KNN_K, dim=1, largest=False)
                else:
                    near = xp.argpartition(d, KNN_K - 1, axis=1)[:, :KNN_K]
                    xp.take_along_axis(near, xp.argsort(xp.take_along_axis(d, near, 1), 1), 1)
        return knn
    W, out = a[2].reshape(n, MATMUL_R), a[3].reshape(m, MATMUL_R)

    def kernel_matmul(i):
        for s in range(0, m, step):
            out[s:s + step] = rbf_block(lib, X[s:s + step], Y, gamma) @ W
    return kernel_matmul


def sklearn_call(lib, r, a, gamma):
    """rbf_matrix, rbf_matvec and kernel_matmul through sklearn.metrics.pairwise.rbf_kernel,
    kernel_matrix through laplacian_kernel, distance_matrix through euclidean_distances (row
    chunks, as for NumPy, where the matrix would be large), knn through NearestNeighbors'
    brute force; None for the other ops."""
    op, m, n, k = r["op"], r["m"], r["n"], r["k"]
    step = rows_per_chunk(lib, n, k)
    if op == "rbf_matrix":
        X, Y, K = a[0].reshape(m, k), a[1].reshape(n, k), a[2].reshape(m, n)

        def rbf_matrix(i):
            for s in range(0, m, step):
                K[s:s + step] = lib.rbf_kernel(X[s:s + step], Y, gamma=gamma)
        return rbf_matrix
    if op == "rbf_matvec":
        X, Y, w, out = a[0].reshape(-1, k), a[1].reshape(n, k), a[2], a[3]

        def rbf_matvec(i):
            for s in range(0, X.shape[0], step):
                out[s:s + step] = lib.rbf_kernel(X[s:s + step], Y, gamma=gamma) @ w
        return rbf_matvec
    from sklearn.metrics import pairwise
    if op in ("kernel_matrix", "distance_matrix"):
        X, Y, K = a[0].reshape(m, k), a[1].reshape(n, k), a[2].reshape(m, n)

        def pairs(i):
            for s in range(0, m, step):
                K[s:s + step] = (pairwise.laplacian_kernel(X[s:s + step], Y, gamma=gamma)
                                 if op == "kernel_matrix" else pairwise.euclidean_distances(X[s:s + step], Y))
        return pairs
    if op == "knn":
        from sklearn.neighbors import NearestNeighbors
        X = a[0].reshape(-1, k)
        nn = NearestNeighbors(n_neighbors=KNN_K, algorithm="brute").fit(a[1].reshape(n, k))
        return lambda i: nn.kneighbors(X)
    if op == "kernel_matmul":
        X, Y = a[0].reshape(-1, k), a[1].reshape(n, k)
        W, out = a[2].reshape(n, MATMUL_R), a[3].reshape(-1, MATMUL_R)

        def kernel_matmul(i):
            for s in range(0, X.shape[0], step):
                out[s:s + step] = lib.rbf_kernel(X[s:s + step], Y, gamma=gamma) @ W
        return kernel_matmul
    return None


def operand_sets(lib, r):
    """Random operand sets; streaming workloads get enough sets to defeat the caches, and the
    rbf_matvec, kernel_matmul and knn anchors get a row subset that fits (scale: our rows /
    anchor rows)."""
    if r["op"] == "seed004":
        return [[]], 1.0
    dtype = np.float64 if r["dtype"] == "float64" else np.float32
    counts = operand_counts(r["op"], r["m"], r["n"], r["k"])
    scale = 1.0
    if r["op"] in SUBSET_ROWS:
        rows = min(r["m"], max(1, MATVEC_ELEMS[lib.name] // r["n"]))
        scale = r["m"] / rows
        per_row = {"rbf_matvec": 1, "kernel_matmul": MATMUL_R}.get(r["op"])
        counts = [rows * r["k"]] + counts[1:3] + ([rows * per_row] if per_row else [])
    set_bytes = sum(counts) * np.dtype(dtype).itemsize
    sets = 1
    if r["op"] in STREAMING and set_bytes < ROTATE_BYTES:
        sets = min(MAX_SETS, math.ceil(ROTATE_BYTES / set_bytes))
    return [[lib.rand(c, dtype) for c in counts] for _ in range(sets)], scale


def time_anchor(lib, r, reps, min_rep_s, max_case_s):
    """(median seconds per call, scaled up from a row subset?) of the workload in lib, or
    (a string saying why there is none, False)."""
    try:
        sets, scale = operand_sets(lib, r)
        calls_fn = [make_call(lib, r, s) for s in sets]
        if calls_fn[0] is None:
            return "n/a", False
        fn = lambda i: calls_fn[i % len(calls_fn)](i)
        it = 0
        for _ in range(2):  # warm-up: plans, handles, first-touch
            t = lib.batch(fn, 1, it)
            it += 1
        calls = 1
        while t * calls < min_rep_s / 8 and calls < (1 << 17):
            calls *= 8
            t = lib.batch(fn, calls, it)
            it += calls
        calls = max(1, min(1 << 20, math.ceil(min_rep_s / t)))
        n = reps if t * calls * reps <= max_case_s else max(1, int(max_case_s / (t * calls)))
        times = []
        for _ in range(n):
            times.append(lib.batch(fn, calls, it))
            it += calls
        times.sort()
        return times[len(times) // 2] * scale, scale > 1
    except MemoryError:
        return "out of memory", False
    except Exception as e:  # CuPy and torch raise their own out-of-memory types
        if "out of memory" in str(e).lower() or "OutOfMemory" in type(e).__name__:
            return "out of memory", False
        raise
    finally:
        sets = calls_fn = fn = None
        lib.free()


def ceilings(libs, reps):
    """What the GPU can do at best: a 1 GiB device-to-device copy, large cuBLAS GEMMs."""
    rows = []
    nbytes = 1 << 30
    for lib in (libs.get("cupy"), libs.get("torch")):
        if lib is None:
            continue
        if lib.name == "cupy":
            a, b = lib.xp.empty(nbytes, dtype=np.uint8), lib.xp.empty(nbytes, dtype=np.uint8)
            fn = lambda i: b.data.copy_from_device_async(a.data, nbytes)
        else:
            a = lib.torch.empty(nbytes, dtype=lib.torch.uint8, device="cuda")
            b = lib.torch.empty_like(a)
            fn = lambda i: b.copy_(a)
        lib.batch(fn, 3, 0)
        t = sorted(lib.batch(fn, 10, 0) for _ in range(reps))[reps // 2]
        rows.append((f"d2d copy 1 GiB ({lib.name})", t, f"{2 * nbytes / t * 1e-9:.0f} GB/s "
                     "(read + write)"))
        a = b = fn = None
        lib.free()
    cp = libs.get("cupy")
    if cp is not None:
        for dtype, label in ((np.float32, "sgemm"), (np.float64, "dgemm")):
            n = 8192
            A, B = cp.rand(n * n, dtype).reshape(n, n), cp.rand(n * n, dtype).reshape(n, n)
            C = cp.xp.empty((n, n), dtype=dtype)
            fn = lambda i: cp.xp.matmul(A, B, out=C)
            cp.batch(fn, 2, 0)
            t = sorted(cp.batch(fn, 3, 0) for _ in range(reps))[reps // 2]
            rows.append((f"cuBLAS {label} {n} (cupy)", t, f"{2 * n ** 3 / t * 1e-12:.1f} TFLOP/s"))
            A = B = C = fn = None
            cp.free()
    return rows


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

def fmt_time(s):
    if isinstance(s, str):
        return s
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    return f"{s * 1e3:.3f} ms" if s < 1 else f"{s:.3f} s"


def fmt_rate(r):
    if r.get("gflops"):
        return f"{r['gflops']:.1f} GFLOP/s"
    if r.get("gbps"):
        return f"{r['gbps']:.1f} GB/s"
    return ""


# What decides the numbers: a change elsewhere (tests, python/) does not make a run "dirty".
MEASURED_PATHS = ["include", "src", "cpu", "cuda", "cmake", "CMakeLists.txt", "bench"]


def git_commit():
    here = os.path.dirname(os.path.abspath(__file__))
    git = ["git", "-C", os.path.dirname(here)]
    try:
        sha = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        paths = MEASURED_PATHS + [":(exclude)bench/RESULTS.md", ":(exclude)bench/results"]
        dirty = subprocess.run(git + ["status", "--porcelain", "--"] + paths,
                               capture_output=True, text=True, check=True).stdout.strip()
        return sha + (" with uncommitted changes to the library or bench" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="gkbench --json output")
    ap.add_argument("--libs", default="numpy,sklearn,cupy,torch", help="anchor libraries to try")
    ap.add_argument("--op", help="only these ops, comma-separated")
    ap.add_argument("--reps", type=int, help="repetitions per anchor (default: gkbench's)")
    ap.add_argument("--no-ceilings", action="store_true", help="skip the GPU ceilings")
    ap.add_argument("--commit", help="the commit measured, where git cannot say (a copied tree)")
    args = ap.parse_args()

    with open(args.json) as f:
        ours = json.load(f)
    quick = ours.get("quick", False)
    reps = args.reps or (3 if quick else 7)
    min_rep_s, max_case_s = ours.get("min_rep_s", 0.05), 2.0 if quick else 30.0
    libs = load_libs(args.libs.split(","))
    wanted = set(args.op.split(",")) if args.op else None
    anchors_for = {"cpu": ["numpy", "sklearn"], "cuda": ["cupy", "torch"]}
    cols = [l for l in ("numpy", "sklearn", "cupy", "torch") if l in libs]

    # A run cut short (Ctrl-C, or SIGTERM from a time limit) still prints what it measured.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    rows, interrupted = [], False
    try:
        for r in ours["results"]:
            if r["status"] != "ok" or (wanted and r["op"] not in wanted):
                continue
            cells = {}
            for name in anchors_for.get(r["backend"], []):
                if name == "sklearn" and r["op"] not in ("rbf_matrix", "rbf_matvec", "kernel_matrix",
                                                         "distance_matrix", "knn", "kernel_matmul"):
                    continue
                if name in libs:
                    log(f"{name}: {r['op']} {r['dtype']} {r['size']}")
                    cells[name] = time_anchor(libs[name], r, reps, min_rep_s, max_case_s)
            rows.append((r, cells))
    except KeyboardInterrupt:
        interrupted = True

    devices = ", ".join(f"{k}: {v}" for k, v in ours.get("devices", {}).items())
    print(f"## {datetime.date.today()} — {ours.get('host', '?')}, "
          f"{'quick' if quick else 'full'} run\n")
    print(f"- commit {args.commit or git_commit()}, libgpukern {ours.get('version', '?')}, gkbench run "
          f"{ours.get('date', '?')}{', TF32 allowed' if ours.get('tf32') else ''}")
    print(f"- devices: {devices}; load average when gkbench started: {ours.get('loadavg', '?')}")
    print(f"- machine: {platform.machine()}, {os.cpu_count()} logical CPUs, Python "
          f"{platform.python_version()}, " + ", ".join(f"{n} {l.version}" for n, l in libs.items()))
    print("- time: median per call; ratio = anchor time / ours (above 1: libgpukern is faster)\n")
    head = ["op", "dtype", "size", "backend", "gkbench", "rate"] + cols
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r, cells in rows:
        line = [r["op"], r["dtype"], r["size"], r["backend"], fmt_time(r["median_s"]), fmt_rate(r)]
        for c in cols:
            v, scaled = cells.get(c, ("", False))
            if isinstance(v, str):
                line.append(v)
            else:
                line.append(f"{'~' if scaled else ''}{fmt_time(v)} ({v / r['median_s']:.2f}x)")
        print("| " + " | ".join(line) + " |")
    if any(scaled for _, cells in rows for _, scaled in cells.values()):
        print("\n~ rbf_matvec, kernel_matmul and knn anchors materialize the kernel or distance matrix "
              "in chunks; this one timed a row subset and scaled it to all rows.")
    if interrupted:
        print("\nInterrupted: the rows after these were not compared.")
    elif not args.no_ceilings and ("cupy" in libs or "torch" in libs):
        print("\n| ceiling | time | rate |\n|---|---|---|")
        for label, t, rate in ceilings(libs, reps):
            print(f"| {label} | {fmt_time(t)} | {rate} |")


if __name__ == "__main__":
    main()
