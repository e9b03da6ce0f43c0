# SPDX-License-Identifier: MIT
"""Smoke test of an installed gpukern wheel, run from outside the checkout by the Python it is
installed in: the package loads its own libgpukern, whose OpenBLAS, SLEEF and libgomp are the
copies auditwheel put in the wheel (not the system's), and every op runs on the CPU and agrees
with NumPy. CUDA runs where it is usable; elsewhere the reason names what was tried.

usage: python smoke.py [--expect-cuda]   (--expect-cuda: fail unless the CUDA backend runs)
"""

import os
import sys

import numpy as np

import gpukern


def fail(msg):
    sys.exit("wheel smoke test: FAIL: " + msg)


def check_close(what, got, want, tol):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    err = float(np.max(np.abs(got - want) / (1 + np.abs(want)))) if want.size else 0.0
    if not err <= tol:
        fail("%s: relative error %.3g above %.3g" % (what, err, tol))


def check_loaded_from_wheel():
    package = os.path.dirname(os.path.realpath(gpukern.__file__))
    if os.path.dirname(gpukern.library_path) != package:
        fail("loaded %s, not the library inside the package %s" % (gpukern.library_path, package))
    vendored = os.path.join(os.path.dirname(package), "gpukern.libs")
    with open("/proc/self/maps") as maps:
        mapped = {line.split()[-1] for line in maps if "/" in line}
    for name in ("libopenblas", "libsleef", "libgomp"):
        paths = sorted(p for p in mapped if os.path.basename(p).startswith(name))
        if not paths or any(os.path.dirname(p) != vendored for p in paths):
            fail("%s mapped from %s, not from the wheel's %s" % (name, paths, vendored))
    print("library %s %s; vendored libraries from %s" % (gpukern.library_version,
                                                          gpukern.library_path, vendored))


def run_ops(ctx, dtype, tol):
    rng = np.random.default_rng(7)
    x = rng.random(1000).astype(dtype)
    y = (rng.random(1000) + 0.5).astype(dtype)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    check_close("add", ctx.add(x, y), xd + yd, tol)
    check_close("sub", ctx.sub(x, y), xd - yd, tol)
    check_close("mul", ctx.mul(x, y), xd * yd, tol)
    check_close("div", ctx.div(x, y), xd / yd, tol)
    check_close("exp", ctx.exp(x), np.exp(xd), tol)
    z = y.copy()
    check_close("axpy", ctx.axpy(2.0, x, z), 2 * xd + yd, tol)
    z = y.copy()
    check_close("scale", ctx.scale(3.0, z), 3 * yd, tol)
    check_close("sum", ctx.sum(x), xd.sum(), tol)
    check_close("dot", ctx.dot(x, y), xd @ yd, tol)
    check_close("nrm2", ctx.nrm2(x), np.linalg.norm(xd), tol)
    a = rng.random((37, 20)).astype(dtype)
    b = rng.random((20, 45)).astype(dtype)
    check_close("matmul", ctx.matmul(a, b), a.astype(np.float64) @ b.astype(np.float64), tol)
    p = rng.random((50, 7)).astype(dtype)
    q = rng.random((40, 7)).astype(dtype)
    w = rng.random(40).astype(dtype)
    pd, qd = p.astype(np.float64), q.astype(np.float64)
    k = np.exp(-0.5 * ((pd[:, None, :] - qd[None, :, :]) ** 2).sum(axis=2))
    check_close("rbf_rows", ctx.rbf_rows(p[:40], q, gamma=0.5), np.diag(k[:40]), tol)
    check_close("rbf_matrix", ctx.rbf_matrix(p, q, gamma=0.5), k, tol)
    check_close("rbf_matvec", ctx.rbf_matvec(p, q, w, gamma=0.5), k @ w, tol)
    u = np.asarray(ctx.uniform(10000, seed=1, dtype=dtype).get())
    if not (u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02):
        fail("uniform: min %g max %g mean %g" % (u.min(), u.max(), u.mean()))
    n = np.asarray(ctx.normal(10000, seed=1, mean=2.0, std=3.0, dtype=dtype).get())
    if not (abs(n.mean() - 2) < 0.1 and abs(n.std() - 3) < 0.1):
        fail("normal: mean %g std %g" % (n.mean(), n.std()))


def main():
    expect_cuda = sys.argv[1:] == ["--expect-cuda"]
    if sys.argv[1:] not in ([], ["--expect-cuda"]):
        sys.exit(__doc__)
    check_loaded_from_wheel()
    backends = ["cpu"]
    if "cuda" in gpukern.available_backends():
        backends.append("cuda")
    else:
        try:
            gpukern.Context("cuda")
            fail("Context('cuda') succeeded although available_backends() lacks cuda")
        except gpukern.GpukernError as e:
            reason = str(e)
        if "tried" not in reason:
            fail("the CUDA backend is unavailable without saying what was tried: %s" % reason)
        print("CUDA backend unavailable here:", reason)
        if expect_cuda:
            fail("--expect-cuda, but the CUDA backend is unavailable")
    for backend in backends:
        with gpukern.Context(backend) as ctx:
            run_ops(ctx, np.float32, 1e-5)
            run_ops(ctx, np.float64, 1e-12)
            print("%s (%s): every op agrees with NumPy" % (backend, ctx.device_name))
    with gpukern.Context() as ctx:
        run_ops(ctx, np.float32, 1e-5)
    print("wheel smoke test OK")


if __name__ == "__main__":
    main()
