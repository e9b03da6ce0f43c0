#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# tc_forms.py - rbf_matrix float32 in each CUDA form (GK_TC_FORM) on the issue-16 shapes, timed
# and checked against float64 on sampled rows.
"""Prints one line per (shape, gamma, data, form): median ms per call (gpu_libs.measure), the
host's time to return from one call, and the largest error of 24 sampled rows against a float64
reference. GK_TC_FORM picks the form (off: the CUDA-core forms of cuda_rbf_matrix.cu)."""
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
    ap.add_argument("--forms", default="off,cublas,mma128,mma64")
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
                g = 1.0 / d if gs == "1/d" else float(gs)
                ref = None
                if args.check:
                    dist = ((hx[rows] ** 2).sum(1)[:, None] + (hy ** 2).sum(1)[None, :]
                            - 2.0 * hx[rows] @ hy.T)
                    ref = np.exp(-float(np.float32(g)) * dist)
                for form in args.forms.split(","):
                    os.environ["GK_TC_FORM"] = form.split(":")[0]
                    os.environ["GK_TC_LDM"] = "0" if ":lds" in form else "1"
                    os.environ["GK_TC_STAGES"] = "3" if ":s3" in form else "2"
                    os.environ["GK_TC_FLY"] = "1" if ":fly" in form else "0"
                    os.environ["GK_TC_BF16"] = "1" if ":bf" in form else "0"
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
    os.environ.pop("GK_TC_FORM", None)
    os.environ.pop("GK_TC_LDM", None)
    os.environ.pop("GK_TC_STAGES", None)
    os.environ.pop("GK_TC_FLY", None)
    os.environ.pop("GK_TC_BF16", None)


if __name__ == "__main__":
    main()
