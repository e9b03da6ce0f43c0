#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# auto_probe.py - the CPU's rbf_matrix by size and team, and AUTO against a CPU context, per size.
"""Two probes behind AUTO's sweep misses (issue 16), on host buffers of uniform random floats:

    GPUKERN_LIBRARY=build/lib/libgpukern.so python3 bench/auto_probe.py cpu-rbf \
        [--sizes 178,237,316,422,562] [--threads 0,1,2,4,8,16]
    GPUKERN_LIBRARY=build/lib/libgpukern.so python3 bench/auto_probe.py contexts \
        [--case rbf_matrix:3162] [--case gemm:256] [--no-cuda]

cpu-rbf: float32 rbf_matrix n^2 x 20 (gamma = 1/20, as gkbench --sweep) on CPU contexts of each
thread count (0: the library's default), the median of batches of calls, in milliseconds.

contexts: for each case, a CPU, a CUDA (unless --no-cuda or none is usable) and an AUTO context
on the same host arrays, timed as gkbench --sweep times them: batches of at least 2 ms (a
shorter one sizes the next), interleaved across the contexts in every order, an untimed call
before each batch; the median per call of each context, AUTO / CPU, where AUTO's timed calls
ran, and in how many of each context's batches (with the untimed call before) this process
created a thread (libgomp refilling its pool, say). Standard library only.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gk_ctypes  # noqa: E402

F32 = 1  # gk_dtype GK_FLOAT32
CPU, CUDA, AUTO = 1, 2, 0  # gk_backend


def check(lib, status, what):
    if status != 0:
        raise SystemExit(f"{what}: status {status}: {lib.gk_last_error().decode()}")


def host_buffers(lib, ctxs, counts, filler):
    """Host arrays of counts floats, wrapped in every context, filled by filler's rng."""
    arrays = [(ctypes.c_float * c)() for c in counts]
    bufs = {}
    for k, ctx in ctxs.items():
        bufs[k] = []
        for a, c in zip(arrays, counts):
            b = ctypes.c_void_p()
            check(lib, lib.gk_buffer_wrap_host(ctx, F32, c, ctypes.addressof(a), ctypes.byref(b)),
                  "wrap")
            bufs[k].append(b)
    for j, b in enumerate(bufs[filler]):
        check(lib, lib.gk_rng_uniform(ctxs[filler], 1000 + j, 0, b), "fill")
    return arrays, bufs


def case_call(lib, op, n):
    """(operand counts, fn(ctx, bufs)) of a case: rbf_matrix n^2 x 20, gemm n^3 or add n, float32."""
    if op == "rbf_matrix":
        d = 20
        return [n * d, n * d, n * n], lambda c, b: lib.gk_rbf_matrix(c, n, n, d, 1.0 / d, *b)
    if op == "gemm":
        return [n * n] * 3, lambda c, b: lib.gk_gemm(c, 0, 0, n, n, n, 1.0, b[0], n, b[1], n, 0.0,
                                                     b[2], n)
    if op == "add":
        return [n] * 3, lambda c, b: lib.gk_add(c, *b)
    raise SystemExit(f"unknown op {op}")


def newest_thread():
    """The largest thread id of this process: it grows when a thread is created."""
    return max(int(t) for t in os.listdir("/proc/self/task"))


def batch(lib, fn, ctx, bufs, calls, on=None):
    t = time.perf_counter()
    for _ in range(calls):
        st = fn(ctx, bufs)
        if st != 0:
            check(lib, st, "call")
        if on is not None:
            k = lib.gk_context_last_backend(ctx)
            on[k] = on.get(k, 0) + 1
    check(lib, lib.gk_context_synchronize(ctx), "synchronize")
    return (time.perf_counter() - t) / calls


def cpu_rbf(lib, sizes, threads, reps):
    print("# float32 rbf_matrix n^2 x 20 on CPU contexts: median ms per call (batches >= 2 ms)")
    ctxs = {}
    for t in threads:
        st, ctx = gk_ctypes.cpu_context(lib, t)
        check(lib, st, f"CPU context ({t} threads)")
        ctxs[t] = ctx
    print("n      " + "".join(f"{('default' if t == 0 else f'{t} thr'):>10}" for t in threads))
    for n in sizes:
        counts, fn = case_call(lib, "rbf_matrix", n)
        arrays, bufs = host_buffers(lib, ctxs, counts, threads[0])
        row = []
        for t in threads:
            est = min(batch(lib, fn, ctxs[t], bufs[t], 1) for _ in range(3))
            calls = max(1, int(2e-3 / max(est, 1e-7)))
            row.append(statistics.median(batch(lib, fn, ctxs[t], bufs[t], calls)
                                         for _ in range(reps)))
        print(f"{n:<7d}" + "".join(f"{v * 1e3:10.4f}" for v in row), flush=True)
        for k in bufs:
            for b in bufs[k]:
                lib.gk_buffer_destroy(b)
        del arrays


def contexts(lib, cases, no_cuda, budget_s):
    ctxs = {}
    for name, be in (("cpu", CPU), ("cuda", CUDA), ("auto", AUTO)):
        if name == "cuda" and no_cuda:
            continue
        st, ctx = gk_ctypes.context(lib, be)
        if st != 0:
            print(f"# no {name} context: {lib.gk_last_error().decode()}")
            continue
        ctxs[name] = ctx
        print(f"# {name}: {lib.gk_context_device_name(ctx).decode()}")
    orders = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    names = list(ctxs)
    for spec in cases:
        op, n = spec.split(":")
        counts, fn = case_call(lib, op, int(n))
        arrays, bufs = host_buffers(lib, ctxs, counts, "cpu")
        est, calls, times, on = {}, {}, {k: [] for k in names}, {}
        created = {k: 0 for k in names}
        for k in names:
            batch(lib, fn, ctxs[k], bufs[k], 1)
            est[k] = min(batch(lib, fn, ctxs[k], bufs[k], 1) for _ in range(3))
            calls[k] = max(1, int(-(-2e-3 // max(est[k], 1e-9))))
        reps = int(min(63, max(5, budget_s / sum(calls[k] * est[k] for k in names))))
        for r in range(reps):
            for j in orders[r % 6]:
                if j >= len(names):
                    continue
                k = names[j]
                before = newest_thread()
                batch(lib, fn, ctxs[k], bufs[k], calls[k] // 8 + 1)
                times[k].append(batch(lib, fn, ctxs[k], bufs[k], calls[k],
                                      on if k == "auto" else None))
                created[k] += newest_thread() > before
                if calls[k] * times[k][-1] < 2e-3:  # as gkbench --sweep: sizes the next batch
                    calls[k] = int(-(-2e-3 // max(times[k][-1], 1e-9)))
        med = {k: statistics.median(v) for k, v in times.items()}
        where = ", ".join(f"{ {0: 'auto', 1: 'cpu', 2: 'cuda'}[b]} {c}" for b, c in
                          sorted(on.items()))
        cols = "  ".join(f"{k} {med[k] * 1e3:.4f} ms" for k in names)
        ratio = f"  auto/cpu {med['auto'] / med['cpu']:.3f}" if "auto" in med else ""
        print(f"{op} {n}: {cols}{ratio}  ({reps} reps, batches {calls}; auto ran: {where}; "
              f"batches in which a thread was created: {created})", flush=True)
        for k in bufs:
            for b in bufs[k]:
                lib.gk_buffer_destroy(b)
        del arrays
    for ctx in ctxs.values():
        lib.gk_context_destroy(ctx)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("probe", choices=("cpu-rbf", "contexts"))
    ap.add_argument("--lib", default=os.environ.get("GPUKERN_LIBRARY", "libgpukern.so.1"))
    ap.add_argument("--sizes", default="178,237,316,422,562")
    ap.add_argument("--threads", default="0,1,2,4,8,16")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--case", action="append", help="op:n, rbf_matrix, gemm or add (repeatable)")
    ap.add_argument("--no-cuda", action="store_true", help="contexts: no CUDA context")
    ap.add_argument("--budget", type=float, default=0.3, help="contexts: seconds per case")
    args = ap.parse_args()
    lib = gk_ctypes.declare_ops(gk_ctypes.load(args.lib))
    lib.gk_context_last_backend.argtypes = [ctypes.c_void_p]
    if args.probe == "cpu-rbf":
        cpu_rbf(lib, [int(s) for s in args.sizes.split(",")],
                [int(t) for t in args.threads.split(",")], args.reps)
    else:
        contexts(lib, args.case or ["rbf_matrix:3162", "gemm:256"], args.no_cuda, args.budget)


if __name__ == "__main__":
    main()
