#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# family_cuda.py - the CUDA kernel family, distances, k-NN and kernel_matmul beside
# torch's expanded forms, in one process, timed by CUDA events on one stream.
"""Times the 1.3 calls of the CUDA backend beside what torch users run instead.

    GPUKERN_LIBRARY=build/lib/libgpukern.so.1 python3 bench/family_cuda.py [--quick]

The library is called through ctypes on torch's own tensors (gk_buffer_wrap_device) with the
context queued on torch's current stream (gk_context_set_stream), so both sides are timed by
the same pair of CUDA events: the median of --reps calls after one untimed call. float32,
N(0,1) rows, and the same rows offset by 1e3 for the distances (where the expanded forms
cancel). Rows:
  - kernels and distances at 16384^2 x 64 (target: >= 3x torch);
  - k-NN, 1e6 points x 1e5 queries, d = 64, k = 10, against torch.cdist + topk over chunks of
    queries (target: >= 3x);
  - kernel_matmul with r = 16 at 2e5^2 x 64 against one rbf_matvec (target: <= 4x).
"""
import argparse
import ctypes
import os
import statistics

import torch

GK_FLOAT32, GK_INT64, GK_BACKEND_CUDA = 1, 3, 2
KINDS = {"rbf": 1, "laplacian": 2, "polynomial": 3, "sigmoid": 4, "linear": 5, "cosine": 6,
         "matern": 7}
METRICS = {"sqeuclidean": 1, "euclidean": 2, "manhattan": 3, "cosine": 4}


class Kernel(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("kind", ctypes.c_int32),
                ("gamma", ctypes.c_double), ("coef0", ctypes.c_double),
                ("degree", ctypes.c_double), ("nu", ctypes.c_double)]


class Lib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.gk_last_error.restype = ctypes.c_char_p
        self.ctx = ctypes.c_void_p()
        self.ok(self.lib.gk_context_create(GK_BACKEND_CUDA, ctypes.byref(self.ctx)))
        # A created stream for both libraries: torch's default stream has handle 0, which
        # gk_context_set_stream takes for the context's own (non-blocking) stream.
        torch.cuda.set_stream(torch.cuda.Stream())
        stream = torch.cuda.current_stream().cuda_stream
        self.ok(self.lib.gk_context_set_stream(self.ctx, ctypes.c_void_p(stream)))
        self.held = []

    def ok(self, status):
        if status != 0:
            raise RuntimeError(self.lib.gk_last_error().decode())

    def wrap(self, t):
        """A buffer viewing tensor t (float32 or int64, contiguous, on the context's device)."""
        assert t.is_contiguous()
        dtype = GK_FLOAT32 if t.dtype == torch.float32 else GK_INT64
        b = ctypes.c_void_p()
        self.ok(self.lib.gk_buffer_wrap_device(self.ctx, dtype, ctypes.c_size_t(t.numel()),
                                               ctypes.c_void_p(t.data_ptr()), ctypes.byref(b)))
        self.held.append((b, t))
        return b

    def release(self):
        """Destroys every buffer wrapped so far (the tensors are the caller's)."""
        for b, _ in self.held:
            self.lib.gk_buffer_destroy(b)
        self.held = []

    def kernel(self, name, gamma, coef0=1.0, degree=3.0, nu=1.5):
        k = Kernel()
        self.lib.gk_kernel_init(ctypes.byref(k), KINDS[name])
        k.gamma, k.coef0, k.degree, k.nu = gamma, coef0, degree, nu
        return k


def timed(fn, reps):
    """Median milliseconds of reps calls of fn after one untimed call, by events on the stream."""
    fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def torch_kernel(name, x, y, gamma, coef0=1.0, degree=3, nu=1.5):
    """The expanded forms torch users write (scikit-learn's formulas on the GPU)."""
    if name in ("linear", "polynomial", "sigmoid"):
        ip = x @ y.T
        if name == "linear":
            return ip
        if name == "polynomial":
            return (gamma * ip + coef0) ** degree
        return torch.tanh(gamma * ip + coef0)
    if name == "cosine":
        return torch.nn.functional.normalize(x) @ torch.nn.functional.normalize(y).T
    if name == "laplacian":
        return torch.exp(-gamma * torch.cdist(x, y, p=1))
    r = (gamma ** 0.5) * torch.cdist(x, y, compute_mode="use_mm_for_euclid_dist")
    a = (3.0 ** 0.5) * r
    return (1 + a) * torch.exp(-a)


def torch_distance(name, x, y):
    if name == "cosine":
        return 1 - torch.nn.functional.normalize(x) @ torch.nn.functional.normalize(y).T
    if name == "manhattan":
        return torch.cdist(x, y, p=1)
    d = torch.cdist(x, y, compute_mode="use_mm_for_euclid_dist")
    return d * d if name == "sqeuclidean" else d


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller shapes (a smoke run)")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    lib = Lib(os.environ.get("GPUKERN_LIBRARY", "build/lib/libgpukern.so.1"))
    torch.manual_seed(0)
    dev = torch.device("cuda")
    side, d = (4096, 64) if args.quick else (16384, 64)
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    print("| call | shape | data | ours ms | torch ms | torch / ours |")
    print("|---|---|---|---|---|---|")

    def row(call, shape, data, ours, theirs):
        ratio = f"{theirs / ours:.2f}" if theirs else "-"
        theirs_s = f"{theirs:.3f}" if theirs else "-"
        print(f"| {call} | {shape} | {data} | {ours:.3f} | {theirs_s} | {ratio} |", flush=True)

    x = torch.randn(side, d, device=dev)
    y = torch.randn(side, d, device=dev)
    out = torch.empty(side, side, device=dev)
    bx, by, bo = lib.wrap(x), lib.wrap(y), lib.wrap(out)
    shape = f"{side}^2 x {d}"
    for name in ("laplacian", "polynomial", "sigmoid", "linear", "cosine", "matern", "rbf"):
        gamma = 1.0 / d
        k = lib.kernel(name, gamma, coef0=1.0, degree=3.0, nu=1.5)
        ours = timed(lambda: lib.ok(lib.lib.gk_kernel_matrix(
            lib.ctx, ctypes.byref(k), ctypes.c_size_t(side), ctypes.c_size_t(side),
            ctypes.c_size_t(d), bx, by, bo)), args.reps)
        theirs = None
        if name != "rbf":
            theirs = timed(lambda: torch_kernel(name, x, y, gamma), args.reps)
        row(f"kernel_matrix {name}", shape, "N(0,1)", ours, theirs)
    for data, off in (("N(0,1)", 0.0), ("N(0,1) + 1e3", 1e3)):
        xo, yo = x + off, y + off
        bxo, byo = lib.wrap(xo), lib.wrap(yo)
        for name, metric in METRICS.items():
            ours = timed(lambda: lib.ok(lib.lib.gk_distance_matrix(
                lib.ctx, metric, ctypes.c_size_t(side), ctypes.c_size_t(side),
                ctypes.c_size_t(d), bxo, byo, bo)), args.reps)
            theirs = timed(lambda: torch_distance(name, xo, yo), args.reps)
            row(f"distance_matrix {name}", shape, data, ours, theirs)
    lib.release()
    del out, bo
    torch.cuda.empty_cache()

    # k-NN: torch's chunks of queries hold at most 2^31 distances.
    n, m, k = (100000, 10000, 10) if args.quick else (1000000, 100000, 10)
    pts = torch.randn(n, d, device=dev)
    qs = torch.randn(m, d, device=dev)
    dist = torch.empty(m, k, device=dev)
    index = torch.empty(m, k, device=dev, dtype=torch.int64)
    bp, bq, bd, bi = lib.wrap(pts), lib.wrap(qs), lib.wrap(dist), lib.wrap(index)
    chunk = max(1, (1 << 31) // n)

    def torch_knn():
        for i in range(0, m, chunk):
            torch.cdist(qs[i:i + chunk], pts).topk(k, dim=1, largest=False)

    reps = 1 if not args.quick else args.reps
    ours = timed(lambda: lib.ok(lib.lib.gk_knn(
        lib.ctx, METRICS["euclidean"], ctypes.c_size_t(m), ctypes.c_size_t(n),
        ctypes.c_size_t(d), ctypes.c_size_t(k), bq, bp, bd, bi)), reps)
    theirs = timed(torch_knn, reps)
    row("knn euclidean k=10", f"{n} pts x {m} queries x {d}", "N(0,1)", ours, theirs)
    want = torch.cdist(qs[:256], pts).topk(k, dim=1, largest=False).indices
    print(f"k-NN: first 256 queries, indices equal to torch's: "
          f"{(want == index[:256]).float().mean().item():.4f}")
    lib.release()
    del pts, qs, dist, index, bp, bq, bd, bi
    torch.cuda.empty_cache()

    # kernel_matmul r = 16 against one rbf_matvec, same x, y.
    s = 20000 if args.quick else 200000
    xs = torch.randn(s, d, device=dev)
    ys = torch.randn(s, d, device=dev)
    w1 = torch.randn(s, device=dev)
    w16 = torch.randn(s, 16, device=dev)
    o1 = torch.empty(s, device=dev)
    o16 = torch.empty(s, 16, device=dev)
    bxs, bys, bw1, bw16, bo1, bo16 = map(lib.wrap, (xs, ys, w1, w16, o1, o16))
    kr = lib.kernel("rbf", 1.0 / d)
    one = timed(lambda: lib.ok(lib.lib.gk_rbf_matvec(
        lib.ctx, ctypes.c_size_t(s), ctypes.c_size_t(s), ctypes.c_size_t(d),
        ctypes.c_double(1.0 / d), bxs, bys, bw1, bo1)), 1 if not args.quick else args.reps)
    sixteen = timed(lambda: lib.ok(lib.lib.gk_kernel_matmul(
        lib.ctx, ctypes.byref(kr), ctypes.c_size_t(s), ctypes.c_size_t(s), ctypes.c_size_t(d),
        ctypes.c_size_t(16), bxs, bys, bw16, bo16)), 1 if not args.quick else args.reps)
    print(f"kernel_matmul rbf r=16 {s}^2 x {d}: {sixteen:.1f} ms; rbf_matvec: {one:.1f} ms; "
          f"ratio {sixteen / one:.2f} (target <= 4)")


if __name__ == "__main__":
    main()
