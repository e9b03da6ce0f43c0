# SPDX-License-Identifier: MIT
"""Article 002 redone: the vector add of its PyCUDA example (c = a + b), NumPy against gpukern per backend."""

import argparse
import time

import numpy as np

import gpukern


def per_call(fn, sync=None):
    """Best per-call time over 5 batches, each long enough (>= 20 ms) for the clock to resolve."""
    def run(number):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        if sync is not None:
            sync()  # CUDA work on device Arrays is queued: the time counts until it is done
        return time.perf_counter() - t0

    number = 1
    while run(number) < 0.02:
        number *= 4
    return min(run(number) for _ in range(5)) / number


def print_cell(value, width, last=False):
    """One cell of the table as soon as it is measured: each row takes seconds at the larger sizes."""
    print(value.rjust(width), end="\n" if last else "  ", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true", help="up to 1e8 elements (1.2 GB of float32 operands)")
    args = parser.parse_args()
    sizes = [1024, 10**4, 10**5, 10**6] + ([10**7, 10**8] if args.full else [])
    contexts = [gpukern.Context(b) for b in gpukern.available_backends()]
    for ctx in contexts:
        print("backend %s: %s" % (ctx.backend, ctx.device_name))

    header = ["n", "NumPy"]
    for ctx in contexts:
        header += ["%s ndarray" % ctx.backend, "%s Array" % ctx.backend]
    widths = [max(len(h), 9) for h in header]
    print()
    print("c = a + b, float32: microseconds per call (results checked against NumPy, bit for bit)")
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    rows = []
    rng = np.random.default_rng(0)
    for n in sizes:
        a = rng.random(n, dtype=np.float32)
        b = rng.random(n, dtype=np.float32)
        c = np.empty_like(a)
        expected = a + b
        row = [str(n), "%.1f" % (per_call(lambda: np.add(a, b, out=c)) * 1e6)]
        print_cell(row[0], widths[0])
        print_cell(row[1], widths[1])
        for ctx in contexts:
            # ndarrays: used in place on the CPU, copied to the device and back on CUDA.
            row.append("%.1f" % (per_call(lambda: ctx.add(a, b, out=c)) * 1e6))
            assert np.array_equal(c, expected)
            print_cell(row[-1], widths[len(row) - 1])
            x, y, z = ctx.asarray(a), ctx.asarray(b), ctx.empty(n)
            row.append("%.1f" % (per_call(lambda: ctx.add(x, y, out=z), ctx.synchronize) * 1e6))
            assert np.array_equal(z.get(), expected)
            print_cell(row[-1], widths[len(row) - 1], last=len(row) == len(header))
        rows.append(row)
    n = sizes[-1]
    print()
    print("at n = %d, moving 3 x %d MB:" % (n, 4 * n // 10**6), ", ".join(
        "%s %.0f GB/s" % (h, 12 * n / float(v) / 1e3) for h, v in zip(header[1:], rows[-1][1:])))
    print()
    print("Summary: c = a + b float32: " + "; ".join(verdict(header, row) for row in (rows[0], rows[-1])))


def verdict(header, row):
    """At one size: the fastest method, and its ratio to NumPy (or the runner-up when NumPy wins)."""
    times = {h: float(v) for h, v in zip(header[1:], row[1:])}
    fastest = min(times, key=times.get)
    if fastest == "NumPy":
        second = min((k for k in times if k != "NumPy"), key=times.get)
        return "at n = %s NumPy was fastest, %.2fx faster than gpukern %s (%.1f us against %.1f us)" % (
            row[0], times[second] / times["NumPy"], second, times["NumPy"], times[second])
    return "at n = %s gpukern %s was fastest, %.2fx faster than NumPy (%.1f us against %.1f us)" % (
        row[0], fastest, times["NumPy"] / times[fastest], times[fastest], times["NumPy"])


if __name__ == "__main__":
    main()
