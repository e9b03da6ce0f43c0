#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# reduce_costs.py - where a CUDA reduction call's time goes: its fixed cost, and its rate.
"""Times gk_sum, gk_dot and gk_nrm2 on a CUDA context through ctypes (as gpu_targets.py calls
them: every call waits for its result), and beside them the pieces a call's fixed cost is made
of: a ctypes call that does nothing on the device, 1-element fills queued without waiting (the
host's cost of a launch), a 1-element fill followed by gk_context_synchronize (one launch and
one wait), and a reduction of one element. Operands of
1e4 and 1e6 elements stay in L2 across calls; they measure the fixed cost, not memory.

    GPUKERN_LIBRARY=build/lib/libgpukern.so python3 bench/reduce_costs.py [--label L]
        [--sizes f32:1e4,1e8 ...] [--once]

--once makes each call once and exits (for a profiler such as ncu)."""
import argparse
import ctypes
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gk_ctypes  # noqa: E402

F32, F64 = 1, 2
DEFAULT_SIZES = "f32:1e4,1e6,1e8,2.5e8;f64:1e4,1e6,1e7,1e8"


def parse_sizes(text):
    out = []
    for part in text.split(";"):
        dt, ns = part.split(":")
        for n in ns.split(","):
            out.append((F32 if dt == "f32" else F64, int(float(n))))
    return out


def timed(fn, batch_s, reps):
    """Median and best microseconds per call over `reps` batches of at least batch_s each."""
    fn()
    fn()
    t0 = time.perf_counter()
    fn()
    est = max(time.perf_counter() - t0, 1e-7)
    calls = max(1, int(batch_s / est))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times), min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.environ.get("GPUKERN_LIBRARY", "libgpukern.so.1"))
    ap.add_argument("--label", default="")
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help=f"default {DEFAULT_SIZES}")
    ap.add_argument("--ops", default="sum,dot,nrm2")
    ap.add_argument("--batch-ms", type=float, default=10.0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--once", action="store_true")
    ap.add_argument("--backend", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: a smoke test of the tool without a GPU")
    a = ap.parse_args()

    lib = gk_ctypes.declare_ops(gk_ctypes.load(a.lib))
    lib.gk_context_last_backend.argtypes = [ctypes.c_void_p]
    st, ctx = gk_ctypes.context(lib, 2 if a.backend == "cuda" else 1)
    if st != 0:
        sys.exit(f"no {a.backend} context: {lib.gk_last_error().decode()}")

    def chk(s):
        if s != 0:
            raise RuntimeError(lib.gk_last_error().decode())

    def buf(dtype, n, seed):
        b = ctypes.c_void_p()
        chk(lib.gk_buffer_create(ctx, dtype, n, ctypes.byref(b)))
        chk(lib.gk_rng_uniform(ctx, seed, 0, b))
        return b

    r = ctypes.c_double()
    pr = ctypes.byref(r)
    ops = a.ops.split(",")
    label = a.label or "-"
    if not a.once:
        one = buf(F32, 1, 1)
        rows = [("ctypes gk_context_last_backend", lambda: lib.gk_context_last_backend(ctx)),
                ("fill 1 (queued, no wait)", lambda: chk(lib.gk_fill(ctx, 1.0, one))),
                ("fill 1 + synchronize", lambda: (chk(lib.gk_fill(ctx, 1.0, one)),
                                                  chk(lib.gk_context_synchronize(ctx)))),
                ("sum f32 1", lambda: chk(lib.gk_sum(ctx, one, pr)))]
        for name, fn in rows:
            med, best = timed(fn, a.batch_ms / 1e3, a.reps)
            print(f"{label:14s} {name:32s} {med:9.2f} us  (best {best:.2f})", flush=True)
        lib.gk_buffer_destroy(one)
    for dtype, n in parse_sizes(a.sizes):
        x, y = buf(dtype, n, 1), buf(dtype, n, 2)
        chk(lib.gk_context_synchronize(ctx))
        esz = 4 if dtype == F32 else 8
        for op in ops:
            if op == "dot":
                def fn():
                    chk(lib.gk_dot(ctx, x, y, pr))
            else:
                f = getattr(lib, "gk_" + op)

                def fn():
                    chk(f(ctx, x, pr))
            if a.once:
                fn()
                print(f"{label} {op} {'f32' if dtype == F32 else 'f64'} {n:.3g}: {r.value!r}",
                      flush=True)
                continue
            med, best = timed(fn, a.batch_ms / 1e3, a.reps)
            nbytes = (2 if op == "dot" else 1) * n * esz
            print(f"{label:14s} {op:4s} {'f32' if dtype == F32 else 'f64'} {n:<10.3g}"
                  f"{'':14s} {med:9.2f} us  (best {best:.2f})  {nbytes / med / 1e6:7.3f} TB/s",
                  flush=True)
        lib.gk_buffer_destroy(x)
        lib.gk_buffer_destroy(y)
    chk(lib.gk_context_synchronize(ctx))
    lib.gk_context_destroy(ctx)


if __name__ == "__main__":
    main()
