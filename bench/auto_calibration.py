#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# auto_calibration.py - AUTO's calibrated CPU rates over a few runs, and rbf_rows after a gemm.
"""Does gk_context_calibrate measure the CPU's rates as the CPU runs them later?

    GPUKERN_LIBRARY=build/lib/libgpukern.so python3 bench/auto_calibration.py [--runs 3]

Calibrates an AUTO context --runs times (each into a file of its own: GK_CALIBRATION) and
prints the CPU rates it measured; then, on a CPU context, times rbf_rows 2^18 x 16 float32 (the
calibration's own run) alone, right after a 1024^3 gemm (OpenBLAS, whose threads spin for a
while after a call), and again 0.3 s later. Best or each of a few calls, milliseconds. On a
machine without CUDA the AUTO context is the CPU alone and has nothing to calibrate: those lines
say so. Standard library only.
"""
import argparse
import ctypes
import os
import tempfile
import time

import gk_ctypes

RATES = ("cpu_stream_f32", "cpu_exp_f32", "cpu_rbf_rows_f32", "cpu_rbf_rows_f64",
         "cpu_rbf_pairs_f32", "cpu_rbf_pairs_f64", "cpu_gemm_f32", "cpu_rng_uniform_f32",
         "cpu_rng_normal_f32")


def calibrations(lib, runs, tmp):
    for i in range(runs):
        path = os.path.join(tmp, f"calibration_{i}.txt")
        os.environ["GK_CALIBRATION"] = path
        st, ctx = gk_ctypes.context(lib, 0)
        if st != 0:
            raise SystemExit(lib.gk_last_error().decode())
        t0 = time.perf_counter()
        st = lib.gk_context_calibrate(ctx, 0)
        took = time.perf_counter() - t0
        lib.gk_context_destroy(ctx)
        if st != 0 or not os.path.exists(path):
            print(f"calibration {i}: status {st}, no file written (a CPU-only AUTO context?)")
            continue
        with open(path) as f:
            vals = dict(ln.split() for ln in f if ln.strip() and not ln.startswith("#"))
        print(f"calibration {i} ({took:.2f} s): " +
              ", ".join(f"{k} {float(vals[k]):.3g}" for k in RATES))


def rows_after_gemm(lib):
    st, cpu = gk_ctypes.cpu_context(lib, 0)
    if st != 0:
        raise SystemExit(lib.gk_last_error().decode())

    def buf(count):
        b = ctypes.c_void_p()
        assert lib.gk_buffer_create(cpu, 1, count, ctypes.byref(b)) == 0
        assert lib.gk_fill(cpu, 0.0, b) == 0  # zeros, as the calibration's arrays
        return b
    n, d, g = 1 << 18, 16, 1024
    a, b, k, ga, gb, gc = buf(n * d), buf(n * d), buf(n), buf(g * g), buf(g * g), buf(g * g)

    def ms(f):
        t0 = time.perf_counter()
        assert f() == 0
        return (time.perf_counter() - t0) * 1e3
    rows = lambda: lib.gk_rbf_rows(cpu, n, d, 0.5, a, b, k)
    gemm = lambda: lib.gk_gemm(cpu, 0, 0, g, g, g, 1.0, ga, g, gb, g, 0.0, gc, g)
    rows()
    alone = min(ms(rows) for _ in range(5))
    after = []
    for _ in range(5):
        gemm()
        after.append(ms(rows))
    time.sleep(0.3)
    later = min(ms(rows) for _ in range(3))
    print(f"rbf_rows 2^18 x 16 f32, {lib.gk_context_device_name(cpu).decode()}: alone "
          f"{alone:.3f} ms (best of 5); right after a gemm 1024^3: "
          f"{' '.join(f'{x:.3f}' for x in after)} ms; 0.3 s later {later:.3f} ms (best of 3)")
    lib.gk_context_destroy(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="calibrations (3)")
    args = ap.parse_args()
    path = os.environ.get("GPUKERN_LIBRARY", "libgpukern.so.1")
    lib = gk_ctypes.declare_ops(gk_ctypes.load(path))
    lib.gk_context_calibrate.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    print(f"# {path}, libgpukern {lib.gk_version_string().decode()}")
    with tempfile.TemporaryDirectory(prefix="gk_cal") as tmp:
        calibrations(lib, args.runs, tmp)
    rows_after_gemm(lib)


if __name__ == "__main__":
    main()
