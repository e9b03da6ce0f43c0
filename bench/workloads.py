#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# workloads.py - the RBF ops on users' data beside torch (GPU) or scikit-learn (CPU), one process.
"""The RBF ops on data as users have it, beside what users would run instead, in one process.

    GPUKERN_LIBRARY=build/lib/libgpukern.so.1 python3 bench/workloads.py --backend cpu [--quick]
    GPUKERN_LIBRARY=build/lib/libgpukern.so.1 python3 bench/workloads.py --backend cuda
    ... --ops kernel,distance,knn,kernel_matmul   # the 1.3 family (run_family, at the end)
    ... --more-data [--data 'raw features;low-rank']   # five more distributions (MORE_DATA)

Every row: rbf_matrix, rbf_matvec and rbf_rows, float32, on U[0,1), standardized N(0,1) and a
Gaussian mixture (30 clusters, centres N(0, 9 I), spread 0.3), each at gamma = 1/d,
1/median||x - y||^2 (over 2000 random pairs) and 0.5, with y a second array (x vs y) and y the
same buffer as x (x vs x). --more-data adds (to these rows and the family's) data as users pass
it unscaled: raw features (columns of scales 0.1 to 100, some offset by 1e3), one-hot/ints (0..3,
a quarter of the rows exact duplicates), low-rank (a 3-dimensional subspace plus 1e-3 noise),
heavy tails (Student t, 2 degrees of freedom) and N(0,1) offset by 1e3. Beside ours:
  - CPU: scikit-learn's rbf_kernel (rbf_matvec: rbf_kernel(X[rows], Y) @ w over chunks of rows;
    rbf_rows: NumPy's exp(-gamma ((a - b)**2).sum(1))), on as many threads as it takes;
  - CUDA: torch's expanded form, exp(-gamma cdist(x, y)^2) (rbf_matvec: that @ w over chunks of
    rows of at most 2^28 entries; rbf_rows: exp(-gamma ((a - b)**2).sum(1))), each call timed between
    two torch.cuda.synchronize() (the whole device: ours runs on the library's own stream).
Times are medians of --reps calls after one untimed call (one call where it took over 2 s); on the CPU each side starts --idle
seconds after the other's last call (NumPy's OpenBLAS threads spin for some 0.1 s after a call
and would share the cores with ours: 1024^2 x 64 on one thread, 3.1 ms alone, 5.9 ms beside
them). "bound" is the hardware's floor for
the call: the bytes it must move (output written, operands read once) over the peak bandwidth,
--peak-gbs or measured by a copy. "form" is what ran ours (GK_LOG=1 on a second context, its
stderr caught for one call). "worst/best" is, per op, shape, gamma and operands, our slowest
distribution's time over our fastest's. The output is a Markdown table (and --csv).
"""
import argparse
import contextlib
import csv
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gpukern as gk  # noqa: E402

DISTRIBUTIONS = ("U[0,1)", "N(0,1)", "mixture")
# --more-data appends these (make_rows: MORE_DATA)
MORE_DISTRIBUTIONS = ("raw features", "one-hot/ints", "low-rank", "heavy tails", "offset 1e3")
# A call that takes longer than this (torch's chunked rbf_matvec 1e6^2 x 3) is timed once.
LONG_CALL_S = 2.0
GAMMAS = ("1/d", "1/median", "0.5")

# (op, m, n, d): the targets of docs/DESIGN.md and issue 30; rbf_rows has n = m pairs.
SIZES = {
    ("cpu", False): [("rbf_matrix", 4096, 4096, 20), ("rbf_matrix", 4096, 4096, 64),
                     ("rbf_matrix", 4096, 4096, 256), ("rbf_matvec", 16384, 16384, 64),
                     ("rbf_rows", 1000000, 1000000, 20)],
    ("cpu", True): [("rbf_matrix", 1024, 1024, 20), ("rbf_matrix", 1024, 1024, 64),
                    ("rbf_matrix", 1024, 1024, 256), ("rbf_matvec", 4096, 4096, 64),
                    ("rbf_rows", 100000, 100000, 20)],
    ("cuda", False): [("rbf_matrix", 16384, 16384, 256), ("rbf_matrix", 32768, 32768, 64),
                      ("rbf_matrix", 16384, 16384, 20), ("rbf_matvec", 200000, 200000, 64),
                      ("rbf_matvec", 1000000, 1000000, 3), ("rbf_rows", 10000000, 10000000, 32)],
    ("cuda", True): [("rbf_matrix", 4096, 4096, 256), ("rbf_matrix", 8192, 8192, 64),
                     ("rbf_matrix", 4096, 4096, 20), ("rbf_matvec", 20000, 20000, 64),
                     ("rbf_matvec", 100000, 100000, 3), ("rbf_rows", 1000000, 1000000, 32)],
}


def make_rows(rng, dist, rows, d):
    if dist == "U[0,1)":
        return rng.random((rows, d), dtype=np.float32)
    if dist == "N(0,1)":
        return rng.standard_normal((rows, d), dtype=np.float32)
    if dist in MORE_DATA:
        return MORE_DATA[dist](rng, rows, d).astype(np.float32)
    centres = rng.normal(0.0, 3.0, (30, d))
    labels = rng.integers(0, 30, rows)
    return (centres[labels] + 0.3 * rng.standard_normal((rows, d))).astype(np.float32)


# --more-data: data as users pass it before (or without) StandardScaler; issue 30's reviewers run
# distributions the three above do not cover. Each is one function of (rng, rows, d), in float64.
def raw_features(rng, rows, d):
    """Unstandardized columns: column j scaled by 10^(j mod 4 - 1), every eighth offset by 1e3."""
    j = np.arange(d)
    return rng.standard_normal((rows, d)) * 10.0 ** (j % 4 - 1) + np.where(j % 8 == 3, 1e3, 0.0)


def one_hot_ints(rng, rows, d):
    """Small integers 0..3, a quarter of the rows copies of 64 prototypes (exact duplicates)."""
    a = rng.integers(0, 4, (rows, d)).astype(np.float64)
    dup = rng.random(rows) < 0.25
    a[dup] = rng.integers(0, 4, (64, d))[rng.integers(0, 64, int(dup.sum()))]
    return a


def low_rank(rng, rows, d):
    """Points on a 3-dimensional subspace of R^d (an orthonormal basis) plus 1e-3 noise."""
    basis = np.linalg.qr(rng.standard_normal((d, min(3, d))))[0].T
    return rng.standard_normal((rows, len(basis))) @ basis + 1e-3 * rng.standard_normal((rows, d))


def heavy_tails(rng, rows, d):
    """Student t with 2 degrees of freedom (infinite variance)."""
    return rng.standard_t(2, (rows, d))


def offset_1e3(rng, rows, d):
    """Standardized N(0,1) moved by 1e3 in every feature (the contract's offset data)."""
    return rng.standard_normal((rows, d)) + 1e3


MORE_DATA = {"raw features": raw_features, "one-hot/ints": one_hot_ints, "low-rank": low_rank,
             "heavy tails": heavy_tails, "offset 1e3": offset_1e3}


def make_data(dist, m, n, d, seed):
    """x (m x d) and y (n x d) of one distribution; a mixture's two share its centres, the other
    structured data (low rank, duplicated prototypes) its subspace or prototypes likewise."""
    rng = np.random.default_rng(seed)
    if dist in ("U[0,1)", "N(0,1)"):
        return make_rows(rng, dist, m, d), make_rows(rng, dist, n, d)
    both = make_rows(rng, dist, m + n, d)
    return both[:m].copy(), both[m:].copy()


def gamma_of(rule, x, y, d, seed):
    if rule == "1/d":
        return 1.0 / d
    if rule == "0.5":
        return 0.5
    rng = np.random.default_rng(seed + 1)
    i = rng.integers(0, len(x), 2000)
    j = rng.integers(0, len(y), 2000)
    dist2 = ((x[i].astype(np.float64) - y[j].astype(np.float64)) ** 2).sum(1)
    return 1.0 / float(np.median(dist2[dist2 > 0]))


def bytes_moved(op, m, n, d):
    if op == "rbf_matrix":
        return 4 * (m * n + (m + n) * d)
    if op == "rbf_matvec":
        return 4 * ((m + n) * d + n + m)
    return 4 * (2 * m * d + m)


@contextlib.contextmanager
def caught_stderr():
    """Collects what is written to file descriptor 2 (the C library's stderr) meanwhile."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as f:
        os.dup2(f.fileno(), 2)
        lines = []
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            f.seek(0)
            lines.extend(f.read().decode(errors="replace").splitlines())


def logged_form(lines, op):
    prefix = "gpukern: %s: form " % op
    forms = [ln[len(prefix):].split(" ", 1)[0] for ln in lines if ln.startswith(prefix)]
    return forms[-1] if forms else "?"


class Cpu:
    """Host arrays; scikit-learn as the anchor."""

    name = "scikit-learn"

    def __init__(self, threads):
        from sklearn import __version__
        from sklearn.metrics.pairwise import rbf_kernel
        self.rbf_kernel = rbf_kernel
        self.anchor_version = "scikit-learn %s, numpy %s" % (__version__, np.__version__)
        self.threads = threads
        self.idle = 0.0

    def context(self):
        return gk.Context("cpu", cpu_threads=self.threads or None)

    def put(self, ctx, a):
        return a

    def out(self, ctx, shape):
        return np.empty(shape, np.float32)

    def sync(self, ctx):
        pass

    def time(self, fn, reps):
        time.sleep(self.idle)

        def once():
            t = time.perf_counter()
            fn()
            return time.perf_counter() - t
        first = once()
        if first > LONG_CALL_S:
            return first
        return statistics.median([once() for _ in range(reps)])

    def anchor(self, op, x, y, w, gamma):
        if op == "rbf_matrix":
            return lambda: self.rbf_kernel(x, y, gamma=gamma)
        if op == "rbf_matvec":
            step = max(1, (1 << 26) // len(y))
            return lambda: np.concatenate([self.rbf_kernel(x[i:i + step], y, gamma=gamma) @ w
                                           for i in range(0, len(x), step)])
        return lambda: np.exp(-gamma * ((x - y) ** 2).sum(1))

    def peak_gbs(self):
        a = np.ones(1 << 26, np.float32)
        b = np.empty_like(a)
        t = self.time(lambda: np.copyto(b, a), 5)
        return 2 * a.nbytes / t / 1e9


class Cuda:
    """torch tensors on the GPU, shared with ours through DLPack; torch as the anchor."""

    name = "torch"

    def __init__(self, threads):
        import torch
        self.torch = torch
        self.anchor_version = "torch %s, %s" % (torch.__version__, torch.cuda.get_device_name())

    def context(self):
        """Ours on torch's current stream, so that the CUDA events below time our kernels too.
        That stream is a created one: torch's default stream has handle 0, which set_stream
        takes for the context's own (non-blocking) stream, and events on torch's default stream
        would then time nothing of ours."""
        torch = self.torch
        if torch.cuda.current_stream().cuda_stream == 0:
            torch.cuda.set_stream(torch.cuda.Stream())
        c = gk.Context("cuda")
        c.set_stream(torch.cuda.current_stream())
        return c

    def put(self, ctx, a):
        t = self.torch.from_numpy(a).cuda()
        return t, gk.from_dlpack(t, ctx)

    def out(self, ctx, shape):
        return ctx.empty(shape, np.float32)

    def sync(self, ctx):
        ctx.synchronize()
        self.torch.cuda.synchronize()

    def time(self, fn, reps):
        """CUDA events on torch's current stream around each call: ours is queued on that
        stream too (context()), so the events bracket both libraries' kernels alike."""
        torch = self.torch

        def once():
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            return a.elapsed_time(b) / 1e3
        first = once()
        if first > LONG_CALL_S:
            return first
        return statistics.median([once() for _ in range(reps)])

    def anchor(self, op, x, y, w, gamma):
        torch = self.torch
        if op == "rbf_matrix":
            return lambda: torch.cdist(x, y).square_().mul_(-gamma).exp_()
        if op == "rbf_matvec":
            step = max(1, (1 << 28) // len(y))
            return lambda: torch.cat([torch.cdist(x[i:i + step], y).square_().mul_(-gamma).exp_() @ w
                                      for i in range(0, len(x), step)])
        return lambda: torch.exp(-gamma * ((x - y) ** 2).sum(1))

    def peak_gbs(self):
        a = self.torch.ones(1 << 28, dtype=self.torch.float32, device="cuda")
        b = self.torch.empty_like(a)
        t = self.time(lambda: b.copy_(a), 10)
        return 2 * a.numel() * 4 / t / 1e9


def run_case(side, ctx, log_ctx, op, m, n, d, dist, rule, same, reps, seed):
    x, y = make_data(dist, m, n, d, seed)
    if same:
        y = x
    gamma = gamma_of(rule, x, y, d, seed)
    w = np.random.default_rng(seed + 2).uniform(-1, 1, len(y)).astype(np.float32)
    gpu = isinstance(side, Cuda)
    tx = side.put(ctx, x)
    ty = tx if same else side.put(ctx, y)
    tw = side.put(ctx, w)
    ours_x, ours_y, ours_w = (a[1] if gpu else a for a in (tx, ty, tw))
    any_x, any_y, any_w = (a[0] if gpu else a for a in (tx, ty, tw))
    shape = {"rbf_matrix": (m, len(y)), "rbf_matvec": (m,), "rbf_rows": (m,)}[op]
    out = side.out(ctx, shape)

    def ours(c=ctx):
        if op == "rbf_matrix":
            c.rbf_matrix(ours_x, ours_y, gamma=gamma, out=out)
        elif op == "rbf_matvec":
            c.rbf_matvec(ours_x, ours_y, ours_w, gamma=gamma, out=out)
        else:
            c.rbf_rows(ours_x, ours_y, gamma=gamma, out=out)
    t_ours = side.time(ours, reps)
    # An anchor of more than 2^36 pairs (torch's chunked 1e6^2 rbf_matvec, some 13 s a call) is
    # timed on the first 1/16 of the rows and scaled: the table marks it "~".
    part = 16 if op == "rbf_matvec" and m * len(y) > 1 << 36 else 1
    t_anchor = part * side.time(side.anchor(op, any_x[:m // part], any_y, any_w, gamma), reps)
    if gpu:  # the same arrays under the logging context (DLPack again, without a copy)
        ours_x, ours_y, ours_w = (gk.from_dlpack(a[0], log_ctx) for a in (tx, ty, tw))
        if same:
            ours_y = ours_x
        out = side.out(log_ctx, shape)
    with caught_stderr() as lines:
        ours(log_ctx)
        side.sync(log_ctx)
    return gamma, t_ours, t_anchor, part > 1, logged_form(lines, op)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 reps (the 2-core VM)")
    ap.add_argument("--reps", type=int, default=0, help="timed calls per case (default 5, quick 3)")
    ap.add_argument("--threads", type=int, default=0, help="CPU: cpu_threads (0: the default)")
    ap.add_argument("--peak-gbs", type=float, default=0.0,
                    help="the memory bandwidth for the bound column, GB/s (0: measured by a copy)")
    ap.add_argument("--ops", default="rbf_matrix,rbf_matvec,rbf_rows")
    ap.add_argument("--shapes", default="",
                    help="only these m x n x d, comma-separated (e.g. 200000x200000x64)")
    ap.add_argument("--more-data", action="store_true",
                    help="also raw features, one-hot/ints, low-rank, heavy tails, offset 1e3")
    ap.add_argument("--data", default="",
                    help="only these distributions, ';'-separated (e.g. 'mixture;low-rank')")
    ap.add_argument("--csv", help="also write the rows to this CSV file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--idle", type=float, default=0.25,
                    help="CPU: seconds between one side's calls and the other's (default 0.25)")
    args = ap.parse_args()
    args.dists = [(k, dist) for k, dist in enumerate(
        DISTRIBUTIONS + (MORE_DISTRIBUTIONS if args.more_data else ()))
        if not args.data or dist in args.data.split(";")]
    reps = args.reps or (3 if args.quick else 5)
    side = (Cpu if args.backend == "cpu" else Cuda)(args.threads)
    if args.backend == "cpu":
        side.idle = args.idle
    ctx = side.context()
    os.environ["GK_LOG"] = "1"
    with caught_stderr():
        log_ctx = side.context()
    del os.environ["GK_LOG"]
    peak = args.peak_gbs or side.peak_gbs()
    print("# RBF workloads, %s backend: %s; beside %s" % (args.backend, ctx.device_name, side.anchor_version))
    print("# %s, %d logical CPUs; %s; median of %d calls; bound at %.0f GB/s (%s)\n" % (
        platform.machine(), os.cpu_count(), "--quick" if args.quick else "full sizes", reps, peak,
        "given" if args.peak_gbs else "measured by a copy"))
    print("| op | m x n x d | gamma | operands | data | ours ms | %s ms | %s/ours | bound ms | form |"
          % (side.name, side.name))
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows, groups = [], {}
    ops = set(args.ops.split(","))
    for op, m, n, d in SIZES[(args.backend, args.quick)]:
        if op not in ops or (args.shapes and "%dx%dx%d" % (m, n, d) not in args.shapes.split(",")):
            continue
        for rule in GAMMAS:
            for same in (False, True):
                for k, dist in args.dists:
                    gamma, t_ours, t_anchor, scaled, form = run_case(
                        side, ctx, log_ctx, op, m, n, d, dist, rule, same, reps, args.seed + k)
                    bound = bytes_moved(op, m, n, d) / (peak * 1e9)
                    # No GPU call beats memory: the timing is wrong. (On the CPU the bound is
                    # one NumPy thread's copy, not the cores' bandwidth: no such test.)
                    if args.backend == "cuda" and t_ours < 0.9 * bound:
                        form += " (below the bound: timing suspect)"
                    row = (op, "%dx%dx%d" % (m, n, d), "%s=%.3g" % (rule, gamma),
                           "x vs x" if same else "x vs y", dist, t_ours * 1e3, t_anchor * 1e3,
                           t_anchor / t_ours, bound * 1e3, form)
                    rows.append(row)
                    groups.setdefault((op, row[1], rule, row[3]), []).append(row)
                    print("| %s | %s | %s | %s | %s | %.3f | %s%.3f | %.2f | %.3f | %s |"
                          % (row[:6] + ("~" if scaled else "",) + row[6:]), flush=True)
    print("\n| op | m x n x d | gamma | operands | worst/best (ours) | lowest %s/ours |" % side.name)
    print("|---|---|---|---|---|---|")
    for key, group in groups.items():
        times = [r[5] for r in group]
        print("| %s | %s | %s | %s | %.2f | %.2f |" % (key + (max(times) / min(times),
                                                          min(r[7] for r in group))))
    if ops & set(FAMILY_OPS):
        run_family(side, ctx, args, reps)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(("op", "shape", "gamma", "operands", "data", "ours_ms", "anchor_ms", "ratio",
                          "bound_ms", "form"))
            out.writerows(rows)


# -- the 1.3 family: kernels, distances, kernel_matmul, k-NN (issue 34) --------------------------
# Run with --ops kernel,distance,knn,kernel_matmul (any of them). Every row: float32, x vs y, the
# three distributions; kernels that take gamma at gamma = 1/d and 1/median, the others once.
# Beside ours, what users run instead:
#   - CPU: scikit-learn's pairwise_kernels / pairwise_distances (Matern: sklearn.gaussian_process's
#     Matern), NearestNeighbors(algorithm="brute").kneighbors, rbf_kernel chunks @ W; FAISS's
#     IndexFlatL2 for euclidean k-NN where faiss imports;
#   - CUDA: torch's expanded forms (cdist, x @ y.T with the kernel's epilogue, normalize for
#     cosine), cdist + topk over chunks of queries for k-NN (FAISS's GpuIndexFlatL2 where it
#     runs), cdist chunks @ W for kernel_matmul; kernel_matmul is also set beside r separate
#     rbf_matvec calls of ours (issue 34: r = 16 in <= 4x one rbf_matvec).

FAMILY_OPS = ("kernel", "distance", "knn", "kernel_matmul")
FAMILY_KERNELS = ("rbf", "laplacian", "polynomial", "sigmoid", "linear", "cosine", "matern")
FAMILY_METRICS = ("euclidean", "sqeuclidean", "manhattan", "cosine")
USES_GAMMA = {"rbf", "laplacian", "polynomial", "sigmoid", "matern"}
# (op, m, n, d, k or r): m queries or rows of x, n points or rows of y; issue 34's sizes.
FAMILY_SIZES = {
    ("cpu", False): [("kernel", 16384, 16384, 64, 0), ("distance", 16384, 16384, 64, 0),
                     ("knn", 10000, 100000, 64, 10), ("kernel_matmul", 20000, 20000, 64, 16)],
    ("cpu", True): [("kernel", 2048, 2048, 64, 0), ("distance", 2048, 2048, 64, 0),
                    ("knn", 2000, 20000, 64, 10), ("kernel_matmul", 4096, 4096, 64, 16)],
    ("cuda", False): [("kernel", 16384, 16384, 64, 0), ("distance", 16384, 16384, 64, 0),
                      ("knn", 100000, 1000000, 64, 10), ("kernel_matmul", 200000, 200000, 64, 16)],
    ("cuda", True): [("kernel", 4096, 4096, 64, 0), ("distance", 4096, 4096, 64, 0),
                     ("knn", 10000, 100000, 64, 10), ("kernel_matmul", 20000, 20000, 64, 16)],
}
# Parameters of the kernels that take more than gamma (scikit-learn's defaults).
FAMILY_PARAMS = {"degree": 3, "coef0": 1.0, "nu": 1.5}


def family_cases(op):
    """(metric, gamma rules) of an op."""
    if op == "kernel":
        return [(k, ("1/d", "1/median") if k in USES_GAMMA else ("-",)) for k in FAMILY_KERNELS]
    if op == "kernel_matmul":
        return [("rbf", ("1/d", "1/median"))]
    return [(m, ("-",)) for m in FAMILY_METRICS]


def sklearn_family(op, metric, x, y, w, k, gamma):
    """scikit-learn's call for a family row, as a thunk."""
    from sklearn.metrics import pairwise as skp
    if op == "kernel":
        if metric == "matern":
            from sklearn.gaussian_process.kernels import Matern
            kern = Matern(length_scale=1.0 / np.sqrt(gamma), nu=FAMILY_PARAMS["nu"])
            return lambda: kern(x, y)
        kw = {"gamma": gamma} if metric in USES_GAMMA else {}
        if metric in ("polynomial", "sigmoid"):
            kw["coef0"] = FAMILY_PARAMS["coef0"]
        if metric == "polynomial":
            kw["degree"] = FAMILY_PARAMS["degree"]
        return lambda: skp.pairwise_kernels(x, y, metric=metric, **kw)
    if op == "distance":
        return lambda: skp.pairwise_distances(x, y, metric=metric)
    if op == "knn":
        from sklearn.neighbors import NearestNeighbors
        nn = NearestNeighbors(algorithm="brute", metric="euclidean" if metric == "sqeuclidean" else metric).fit(y)
        return lambda: nn.kneighbors(x, k)
    step = max(1, (1 << 26) // len(y))
    return lambda: np.concatenate([skp.rbf_kernel(x[i:i + step], y, gamma=gamma) @ w
                                   for i in range(0, len(x), step)])


def torch_family(torch, op, metric, x, y, w, k, gamma):
    """torch's expanded forms for a family row, as a thunk."""
    fn = torch.nn.functional

    def kernel(a, b):
        if metric == "rbf":
            return torch.cdist(a, b).square_().mul_(-gamma).exp_()
        if metric == "laplacian":
            return torch.cdist(a, b, p=1).mul_(-gamma).exp_()
        if metric == "matern":  # nu = 1.5
            r = torch.cdist(a, b).mul_(float(np.sqrt(3 * gamma)))
            e = torch.exp(-r)
            return r.add_(1).mul_(e)
        if metric == "cosine":
            return fn.normalize(a) @ fn.normalize(b).T
        g = a @ b.T
        if metric == "polynomial":
            return g.mul_(gamma).add_(FAMILY_PARAMS["coef0"]).pow_(FAMILY_PARAMS["degree"])
        if metric == "sigmoid":
            return g.mul_(gamma).add_(FAMILY_PARAMS["coef0"]).tanh_()
        return g

    def distance(a, b):
        if metric == "euclidean":
            return torch.cdist(a, b)
        if metric == "sqeuclidean":
            return torch.cdist(a, b).square_()
        if metric == "manhattan":
            return torch.cdist(a, b, p=1)
        return 1 - fn.normalize(a) @ fn.normalize(b).T

    step = max(1, (1 << 28) // len(y))
    if op == "kernel":
        return lambda: kernel(x, y)
    if op == "distance":
        return lambda: distance(x, y)
    if op == "knn":
        return lambda: [torch.topk(distance(x[i:i + step], y), k, dim=1, largest=False)
                        for i in range(0, len(x), step)]
    return lambda: torch.cat([kernel(x[i:i + step], y) @ w for i in range(0, len(x), step)])


def faiss_family(gpu, d, y, k):
    """FAISS's exact euclidean k-NN (flat index) over y, as a function of the queries, or None
    where faiss does not import (or, on CUDA, has no GPU support)."""
    try:
        import faiss
    except ImportError:
        return None
    if gpu:
        if not hasattr(faiss, "StandardGpuResources"):
            return None
        import faiss.contrib.torch_utils  # noqa: F401 (torch tensors as faiss arguments)
        res = faiss.StandardGpuResources()
        index = faiss.GpuIndexFlatL2(res, d)
    else:
        index = faiss.IndexFlatL2(d)
    index.add(y)
    return lambda x: index.search(x, k)


def run_family(side, ctx, args, reps):
    gpu = isinstance(side, Cuda)
    ops = set(args.ops.split(","))
    print("\n# The kernel family, distances, k-NN and kernel_matmul (float32, x vs y); "
          "anchor/ours above 1: ours is faster\n")
    print("| op | metric | m x n x d | gamma | data | ours ms | anchors: ms (anchor/ours) |")
    print("|---|---|---|---|---|---|---|")
    for op, m, n, d, extra in FAMILY_SIZES[(args.backend, args.quick)]:
        if op not in ops:
            continue
        for metric, rules in family_cases(op):
            for rule in rules:
                for j, dist in args.dists:
                    seed = args.seed + j
                    x, y = make_data(dist, m, n, d, seed)
                    gamma = gamma_of(rule, x, y, d, seed) if rule != "-" else 1.0 / d
                    w = np.random.default_rng(seed + 2).uniform(-1, 1, (n, max(extra, 1))).astype(np.float32)
                    tx, ty, tw = side.put(ctx, x), side.put(ctx, y), side.put(ctx, w)
                    ox, oy, ow = (a[1] if gpu else a for a in (tx, ty, tw))
                    ax, ay, aw = (a[0] if gpu else a for a in (tx, ty, tw))
                    params = dict(FAMILY_PARAMS, gamma=gamma)
                    if op == "kernel":
                        out = side.out(ctx, (m, n))
                        ours = lambda: ctx.pairwise_kernels(ox, oy, metric, out=out, **params)  # noqa: E731
                    elif op == "distance":
                        out = side.out(ctx, (m, n))
                        ours = lambda: ctx.pairwise_distances(ox, oy, metric, out=out)  # noqa: E731
                    elif op == "knn":
                        ours = lambda: ctx.kneighbors(ox, oy, extra, metric)  # noqa: E731
                    else:
                        out = side.out(ctx, (m, extra))
                        ours = lambda: ctx.kernel_matmul(ox, oy, ow, metric, gamma=gamma, out=out)  # noqa: E731
                    t_ours = side.time(ours, reps)
                    anchors = [(side.name, side.time(
                        torch_family(side.torch, op, metric, ax, ay, aw, extra, gamma) if gpu
                        else sklearn_family(op, metric, ax, ay, aw, extra, gamma), reps))]
                    if op == "knn" and metric in ("euclidean", "sqeuclidean"):
                        try:  # a FAISS that imports but fails (no GPU build, old API) is noted, not fatal
                            search = faiss_family(gpu, d, ay, extra)
                            if search is not None:
                                anchors.append(("faiss flat", side.time(lambda: search(ax), reps)))
                        except Exception as e:  # noqa: BLE001
                            anchors.append(("faiss failed (%s: %s)" % (type(e).__name__, e), None))
                    if op == "kernel_matmul":
                        # r separate products of one column each: what the r columns save.
                        col = side.put(ctx, np.ascontiguousarray(w[:, 0]))
                        vec = col[1] if gpu else col
                        one = side.out(ctx, (m,))
                        t_one = side.time(lambda: ctx.rbf_matvec(ox, oy, vec, gamma=gamma, out=one), reps)
                        anchors.append(("ours rbf_matvec x1", t_one))
                        anchors.append(("ours rbf_matvec x%d" % extra, t_one * extra))
                    side.sync(ctx)
                    print("| %s | %s | %dx%dx%d%s | %s | %s | %.3f | %s |" % (
                        op, metric, m, n, d, " k=%d" % extra if op == "knn" else " r=%d" % extra if extra else "",
                        "%s=%.3g" % (rule, gamma) if rule != "-" else "-", dist, t_ours * 1e3,
                        "; ".join("%s %.3f (%.2f)" % (name, t * 1e3, t / t_ours) if t is not None else name
                                  for name, t in anchors)),
                        flush=True)


if __name__ == "__main__":
    main()
