# SPDX-License-Identifier: MIT
"""Per-call cost of small ops (16 elements by default) through gpukern beside NumPy (and torch when
installed): what the Python layer adds to the C calls. Prints a Markdown table (microseconds, the
best of many short runs). Usage: python python/tools/py_overhead.py [--n 16] [--backend cpu] [--ctypes-only]"""

import argparse
import ctypes
import timeit

import numpy as np

import gpukern
from gpukern import _array, _core


def best_per_call(fn, calls=200, repeat=300):
    # The best of many short runs: the cost of the code path, not of whatever else a shared
    # machine happens to be doing.
    fn()
    return min(timeit.repeat(fn, number=calls, repeat=repeat)) / calls


def rows(backend, n):
    x = np.random.default_rng(0).random(n).astype(np.float32)
    y = x.copy()
    out = np.empty_like(x)
    with gpukern.Context(backend) as ctx:
        a, b, c = ctx.asarray(x, copy=True), ctx.asarray(y, copy=True), ctx.empty(n)
        lib, h = _core.LIB, ctx._h
        xp = x.ctypes.data
        op = ctypes.c_void_p(out.ctypes.data)

        def c_calls():
            # What ctx.exp(ndarray, out=ndarray) asks of the library through ctypes alone.
            hx, ho = ctypes.c_void_p(), ctypes.c_void_p()
            lib.gk_buffer_wrap_host(h, 1, n, xp, ctypes.byref(hx))
            lib.gk_buffer_wrap_host(h, 1, n, op, ctypes.byref(ho))
            lib.gk_exp(h, hx, ho)
            lib.gk_buffer_destroy(hx)
            lib.gk_buffer_destroy(ho)

        yield "ctx.exp(ndarray)", best_per_call(lambda: ctx.exp(x)), "np.exp(ndarray)", best_per_call(lambda: np.exp(x))
        yield "ctx.exp(ndarray, out=)", best_per_call(lambda: ctx.exp(x, out=out)), \
            "np.exp(ndarray, out=)", best_per_call(lambda: np.exp(x, out=out))
        yield "ctx.add(ndarray, ndarray)", best_per_call(lambda: ctx.add(x, y)), "x + y (ndarrays)", \
            best_per_call(lambda: x + y)
        yield "ctx.add(ndarray, ndarray, out=)", best_per_call(lambda: ctx.add(x, y, out=out)), \
            "np.add(ndarray, ndarray, out=)", best_per_call(lambda: np.add(x, y, out=out))
        yield "ctx.exp(Array)", best_per_call(lambda: ctx.exp(a)), "", None
        yield "a + b (Arrays)", best_per_call(lambda: a + b), "", None
        yield "ctx.add(a, b, out=c) (Arrays)", best_per_call(lambda: ctx.add(a, b, out=c)), "", None
        yield "a * 2.0 (Array, scalar)", best_per_call(lambda: a * 2.0), "x * 2.0 (ndarray)", \
            best_per_call(lambda: x * 2.0)
        yield "a.sum() (Array)", best_per_call(lambda: a.sum()), "x.sum() (ndarray)", best_per_call(lambda: x.sum())
        yield "ctypes alone: wrap x2, gk_exp, destroy x2", best_per_call(c_calls), "", None
        try:
            import torch
        except ImportError:
            return
        t, u = torch.from_numpy(x), torch.from_numpy(y)
        yield "ctx.exp(torch tensor)", best_per_call(lambda: ctx.exp(t)), "torch.exp(tensor)", \
            best_per_call(lambda: torch.exp(t))
        yield "ctx.add(tensor, tensor)", best_per_call(lambda: ctx.add(t, u)), "t + u (tensors)", \
            best_per_call(lambda: t + u)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=16, help="elements per operand (default 16)")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--ctypes-only", action="store_true",
                        help="without the C extension gpukern._fast, as where it is not built")
    args = parser.parse_args()
    if args.ctypes_only:
        _core._FAST_FN = _array._FAST_FN = {}
    # getattr: a package from before the extension (for a "before" column) has no _FAST_FN.
    print("gpukern %s, NumPy %s, %d float32 elements, backend %s, C extension %s; microseconds per call"
          % (gpukern.__version__, np.__version__, args.n, args.backend,
             "in use" if getattr(_core, "_FAST_FN", None) else "not in use"))
    print()
    print("| gpukern call | us | reference | us |")
    print("|---|---|---|---|")
    for name, t, ref, tr in rows(args.backend, args.n):
        print("| %s | %.2f | %s | %s |" % (name, t * 1e6, ref, "%.2f" % (tr * 1e6) if tr is not None else ""))


if __name__ == "__main__":
    main()
