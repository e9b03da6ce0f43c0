#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tc_forms.py - CUDA float32 rbf_matrix with and without its tensor-core form (GK_RBF_TC), timed
# and checked against float64 on sampled rows.
"""Prints one line per (shape, data, gamma, form): median ms per call (gpu_libs.measure), the
host's time to return from one call, and the largest error of 24 sampled rows against a float64
reference. Forms: on (the default choice), off (the CUDA-core forms of cuda_rbf_matrix.cu only),
forced (the tensor-core form without its sample), gemm (the products of d >= 256 on cuBLASLt
from 2^28 entries), gemm-forced; GK_RBF_TC in README."""
import argparse
import ctypes
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gk_ctypes  # noqa: E402
from gpu_libs import Ours, Plan, measure, F32  # noqa: E402


def read(o, buf, n, off=0):
    a = np.empty(n, dtype=np.float32)
    o.lib.gk_buffer_read.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                                     ctypes.c_void_p]
    o.chk(o.lib.gk_buffer_read(buf, off, n, a.ctypes.data))
    return a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.environ.get("GPUKERN_LIBRARY"))
    ap.add_argument("--cases", default="16384:256,32768:64")
    ap.add_argument("--forms", default="on,off")
    ap.add_argument("--gammas", default="1/d,0.5")
    ap.add_argument("--data", default="uniform")
    ap.add_argument("--check", type=int, default=1)
    ap.add_argument("--backend", type=int, default=2, help="1 CPU, 2 CUDA")
    ap.add_argument("--once", action="store_true", help="one call per form, untimed (for ncu)")
    args = ap.parse_args()
    o = Ours(args.lib, args.backend)
    plan = Plan(True)
    for case in args.cases.split(","):
        nn, d = (int(v) for v in case.split(":"))
        for data in args.data.split(","):
            x, y, k = o.buf(F32, nn * d), o.buf(F32, nn * d), o.buf(F32, nn * nn)
            if data == "uniform":
                o.chk(o.lib.gk_rng_uniform(o.ctx, 1, 0, x))
                o.chk(o.lib.gk_rng_uniform(o.ctx, 2, 0, y))
            else:
                o.chk(o.lib.gk_rng_normal(o.ctx, 1, 0, 0.0, 1.0, x))
                o.chk(o.lib.gk_rng_normal(o.ctx, 2, 0, 0.0, 1.0, y))
            hx = read(o, x, nn * d).reshape(nn, d).astype(np.float64)
            hy = read(o, y, nn * d).reshape(nn, d).astype(np.float64)
            rows = np.linspace(0, nn - 1, 24).astype(int)
            for gs in args.gammas.split(","):
                g = float(gs.split("/")[0]) / d if gs.endswith("/d") else float(gs)
                ref = None
                if args.check:
                    dist = ((hx[rows] ** 2).sum(1)[:, None] + (hy ** 2).sum(1)[None, :]
                            - 2.0 * hx[rows] @ hy.T)
                    ref = np.exp(-float(np.float32(g)) * dist)
                for form in args.forms.split(","):
                    if form == "on":
                        os.environ.pop("GK_RBF_TC", None)
                    else:
                        os.environ["GK_RBF_TC"] = form
                    fn = lambda i: o.chk(o.lib.gk_rbf_matrix(o.ctx, nn, nn, d, g, x, y, k))
                    if args.once:
                        fn(0)
                        o.sync()
                        continue
                    r = measure(fn, o.sync, plan)
                    o.sync()
                    t0 = time.perf_counter()
                    fn(0)
                    host = time.perf_counter() - t0
                    o.sync()
                    err = float("nan")
                    if ref is not None:
                        got = np.stack([read(o, k, nn, int(i) * nn) for i in rows])
                        err = float(np.nanmax(np.abs(got.astype(np.float64) - ref)))
                    print(f"{nn}^2x{d} {data} gamma={gs} form={form}: "
                          f"{r['median_s'] * 1e3:.3f} ms (min {r['min_s'] * 1e3:.3f}, "
                          f"{r['calls']}x{r['reps']}), host {host * 1e3:.3f} ms, "
                          f"err {err:.2e}", flush=True)
            o.free()
    os.environ.pop("GK_RBF_TC", None)

if __name__ == "__main__":
    main()
