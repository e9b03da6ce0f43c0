# SPDX-License-Identifier: MIT
"""Per-call cost of a + b and ctx.add on two 1000-element Arrays, beside CuPy's a + b (<= 10 us)."""

import argparse
import ctypes
import timeit

import numpy as np

import gpukern
from gpukern import _core


def best_per_call(fn, calls=200, repeat=50):
    # The best of many short runs: the cost of the code path, not of whatever else a shared
    # machine happens to be doing.
    fn()
    return min(timeit.repeat(fn, number=calls, repeat=repeat)) / calls


def gpukern_row(backend):
    with gpukern.Context(backend) as ctx:
        x = ctx.asarray(np.ones(1000, np.float32))
        y = ctx.asarray(np.ones(1000, np.float32))
        z = ctx.empty(1000)
        lib, h = _core.LIB, ctx._h

        def c_calls():
            # What ctx.add asks of the library, straight through ctypes: the C side's share.
            out = ctypes.c_void_p()
            lib.gk_buffer_create(h, 1, 1000, ctypes.byref(out))
            lib.gk_add(h, x._h, y._h, out)
            lib.gk_buffer_destroy(out)

        operator = best_per_call(lambda: x + y)
        total = best_per_call(lambda: ctx.add(x, y))
        library = best_per_call(c_calls)
        with_out = best_per_call(lambda: ctx.add(x, y, out=z))
        if backend == "cuda":
            ctx.synchronize()
        return operator, total, library, with_out


def cupy_row():
    try:
        import cupy
    except ImportError:
        return None
    x = cupy.ones(1000, cupy.float32)
    y = cupy.ones(1000, cupy.float32)
    t = best_per_call(lambda: x + y)
    cupy.cuda.Device().synchronize()
    return t


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.parse_args()
    print("| backend | a + b | ctx.add | of which C calls | ctx.add(out=) | CuPy a + b |")
    print("|---|---|---|---|---|---|")
    anchor = cupy_row()
    worst = 0.0
    for backend in gpukern.available_backends():
        operator, total, library, with_out = gpukern_row(backend)
        worst = max(worst, operator)
        cupy = "%.2f us" % (anchor * 1e6) if backend == "cuda" and anchor else ""
        print(
            "| %s | %.2f us | %.2f us | %.2f us | %.2f us | %s |"
            % (backend, operator * 1e6, total * 1e6, library * 1e6, with_out * 1e6, cupy)
        )
    print("a + b per call: %.2f us at most, target <= 10 us: %s" % (worst * 1e6, "met" if worst <= 10e-6 else "MISSED"))


if __name__ == "__main__":
    main()
