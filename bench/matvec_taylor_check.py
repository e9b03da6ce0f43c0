#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# matvec_taylor_check.py - CUDA rbf_matvec f32 1e6^2 x 3 with the Taylor form and without, against float64.
"""The Taylor form's error at bench size (needs a GPU, torch and the gpukern package).

    GPUKERN_LIBRARY=build/lib/libgpukern.so.1 PYTHONPATH=python python3 bench/matvec_taylor_check.py

rbf_matvec f32, 1e6 x 3 U[0,1) rows, gamma = 1/3 (gpu_targets.py's row), with mixed-sign and
positive weights, once with the form allowed and once under GK_MATVEC_TAYLOR=off (read at each
call), both against a float64 torch reference on 2000 sampled rows: max |ours - ref| / sum|w|
(the contract allows 1e-5). The call times include the host copies.
"""
import os, time, numpy as np, torch, gpukern
ctx = gpukern.Context("cuda")
rng = np.random.default_rng(7)
n, d, g = 1_000_000, 3, 1.0 / 3
x = rng.random((n, d), dtype=np.float32); y = rng.random((n, d), dtype=np.float32)
for wname, w in (("w U[-1,1)", (rng.random(n) * 2 - 1).astype(np.float32)),
                 ("w U[0,1)", rng.random(n).astype(np.float32))):
    res = {}
    for mode in ("default", "off"):
        os.environ["GK_MATVEC_TAYLOR"] = mode
        t = time.perf_counter(); out = np.asarray(ctx.rbf_matvec(x, y, w, g)); t = time.perf_counter() - t
        res[mode] = (out.astype(np.float64), t)
    rows = rng.choice(n, 2000, replace=False)
    X = torch.tensor(x[rows], dtype=torch.float64, device="cuda")
    Y = torch.tensor(y, dtype=torch.float64, device="cuda"); W = torch.tensor(w, dtype=torch.float64, device="cuda")
    ref = torch.zeros(len(rows), dtype=torch.float64, device="cuda")
    for s in range(0, n, 100_000):
        ref += torch.exp(-g * torch.cdist(X, Y[s:s + 100_000]) ** 2) @ W[s:s + 100_000]
    ref = ref.cpu().numpy(); sw = float(np.abs(w.astype(np.float64)).sum())
    for mode, (out, t) in res.items():
        e = np.abs(out[rows] - ref).max() / sw
        print(f"{wname} {mode:8s} call {t*1e3:9.2f} ms (host copies included)  max|ours-ref|/sum|w| = {e:.2e}")
    print(f"{wname} on vs off on all rows: max |on-off|/sum|w| = {np.abs(res['default'][0]-res['off'][0]).max()/sw:.2e}")
