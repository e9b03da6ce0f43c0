# SPDX-License-Identifier: MIT
"""Article 000 redone: the Gaussian kernel of an incremental RBF network, NumPy against gpukern.

The article (a PyCUDA test on a Jetson TX2) timed K[i] = exp(-||A_i - B_i||^2) on 1000 x 20
float32 rows from host arrays: PyCUDA 5.4 ms, NumPy 17.5 ms; in its network the GPU lost while
the node count was small.

Besides one context per backend, an AUTO context (calibrated once at the start) takes NumPy
arrays as they are: every operand is host data, so AUTO runs each call on the CPU or the GPU,
wherever its cost model predicts the call finishes first, and ctx.last_backend says which.
"""

import argparse
import time

import numpy as np

import gpukern


def best_time(fn, repeat):
    """Best wall time of `repeat` calls, in seconds: the cost of the work, not of the noise."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def print_table(header, rows):
    widths = [max(len(v) for v in col) for col in zip(header, *rows)]
    for r in [header] + rows:
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))))


def gaussian_kernel(x, u):
    # The article's per-row function, called once per row from a Python loop.
    d = x - u
    return np.exp(-np.sum(d**2))


def kernel_table(contexts, auto, rows, features, repeat):
    """The article's table: K[i] = exp(-||A_i - B_i||^2) for rows x features float32."""
    rng = np.random.default_rng(0)
    a = rng.random((rows, features), dtype=np.float32)
    b = rng.random((rows, features), dtype=np.float32)
    exact = np.exp(-np.sum((a.astype(np.float64) - b) ** 2, axis=1))

    methods = [
        ("NumPy, vectorized", lambda: np.exp(-np.sum((a - b) ** 2, axis=1))),
        ("NumPy, loop over rows", lambda: np.array([gaussian_kernel(a[j], b[j]) for j in range(rows)])),
    ]
    for ctx in contexts:
        da, db = ctx.asarray(a), ctx.asarray(b)

        def on_device(ctx=ctx, da=da, db=db):
            k = ctx.rbf_rows(da, db, 1.0)
            ctx.synchronize()
            return k

        # Host data pays the copies to the device and back, like PyCUDA's drv.In/drv.Out.
        methods.append(("gpukern %s, host data" % ctx.backend, lambda ctx=ctx: ctx.rbf_rows(a, b, 1.0)))
        methods.append(("gpukern %s, device data" % ctx.backend, on_device))
    methods.append(("gpukern auto, host data", lambda: auto.rbf_rows(a, b, 1.0)))

    rows_out = []
    for name, fn in methods:
        err = np.max(np.abs(np.asarray(fn(), dtype=np.float64) - exact))
        rows_out.append([name, "%.3f" % (best_time(fn, repeat) * 1e3), "%.1e" % err])
    print("Gaussian kernel of %d x %d float32 rows (the article: PyCUDA 5.4 ms, NumPy 17.5 ms)" % (rows, features))
    print_table(["method", "ms", "max abs err"], rows_out)
    print("(auto ran the host-data call on %s)" % auto.last_backend)
    return {name: float(ms) for name, ms, _ in rows_out}


def placement_runs(steps):
    """The AUTO steps as runs of one backend: "nodes 1-57 on cpu (0.10-2.31 ms)", ..."""
    runs = []
    for nodes, ms, where in steps:
        if runs and runs[-1][2] == where:
            runs[-1][1] = nodes
            runs[-1][3].append(ms)
        else:
            runs.append([nodes, nodes, where, [ms]])
    return ["nodes %d-%d on %s (%.2f-%.2f ms)" % (a, b, w, min(t), max(t)) for a, b, w, t in runs]


def grow_network(contexts, auto, samples, features, max_nodes, checkpoints, repeat):
    """An incremental RBF network: each step adds a node where the residual is largest.

    The work per step is the network's output on every training sample, whose cost grows with
    the node count; the table times it per method at a few node counts. The AUTO context, on
    host arrays, learns: each step's time and the backend AUTO chose for it are recorded.
    """
    rng = np.random.default_rng(1)
    x = rng.random((samples, features))
    y = np.sin(3 * x[:, 0]) * np.cos(2 * x[:, 1]) + 0.5 * x[:, 2]
    gamma = 2.0
    x_dev = {ctx.backend: ctx.asarray(x) for ctx in contexts}
    centres = np.empty((0, features))
    weights = np.empty(0)

    def numpy_output():
        # The usual NumPy formulation: the whole samples x nodes kernel matrix, then a product.
        d2 = (x**2).sum(1)[:, None] + (centres**2).sum(1)[None, :] - 2 * x @ centres.T
        return np.exp(-gamma * np.maximum(d2, 0)) @ weights

    rows_out = []
    steps = []  # (nodes, ms, backend) of every AUTO step
    output = np.zeros(samples)
    for nodes in range(1, max_nodes + 1):
        residual = y - output
        i = int(np.argmax(np.abs(residual)))
        centres = np.vstack([centres, x[i]])
        weights = np.append(weights, residual[i])
        t0 = time.perf_counter()
        output = auto.rbf_matvec(x, centres, weights, gamma)  # NumPy in and out: AUTO places it
        steps.append((nodes, (time.perf_counter() - t0) * 1e3, auto.last_backend))
        if nodes in checkpoints:
            row = [str(nodes)]
            for ctx in contexts:
                xd = x_dev[ctx.backend]
                row.append("%.2f" % (best_time(lambda: ctx.rbf_matvec(xd, centres, weights, gamma).get(), repeat) * 1e3))
            row.append("%.2f" % (best_time(lambda: auto.rbf_matvec(x, centres, weights, gamma), repeat) * 1e3))
            row.append(auto.last_backend)
            # NumPy last: its BLAS threads spin for a while after a product, and would take the
            # cores from the CPU backend's OpenMP threads if it ran just before them.
            row.insert(1, "%.2f" % (best_time(numpy_output, repeat) * 1e3))
            row.append("%.4f" % np.sqrt(np.mean((y - output) ** 2)))
            rows_out.append(row)
    print()
    print("Incremental RBF network, %d samples x %d features (float64): ms per step's output" % (samples, features))
    header = ["nodes", "NumPy"] + ["gpukern %s" % c.backend for c in contexts]
    print_table(header + ["gpukern auto", "auto ran on", "train RMSE"], rows_out)
    print("AUTO, every step (its time, and the backend it chose):")
    for run in placement_runs(steps):
        print("  " + run)
    last = rows_out[-1]
    return int(last[0]), {name: float(ms) for name, ms in zip(header[1:] + ["gpukern auto"], last[1:])}


def versus_numpy(times, numpy_name):
    """"X was fastest, 3.10x faster than NumPy (a ms against b ms)", or NumPy's lead when it wins."""
    fastest = min(times, key=times.get)
    if fastest == numpy_name:
        second = min((k for k in times if k != numpy_name), key=times.get)
        return "%s was fastest, %.2fx faster than %s (%.3f ms against %.3f ms)" % (
            numpy_name, times[second] / times[numpy_name], second, times[numpy_name], times[second])
    return "%s was fastest, %.2fx faster than %s (%.3f ms against %.3f ms)" % (
        fastest, times[numpy_name] / times[fastest], numpy_name, times[fastest], times[numpy_name])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--full", action="store_true", help="a larger network (minutes on a CPU)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per measurement (best kept)")
    args = parser.parse_args()
    contexts = [gpukern.Context(b) for b in gpukern.available_backends()]
    for ctx in contexts:
        print("backend %s: %s" % (ctx.backend, ctx.device_name))
    auto = gpukern.Context("auto")
    if auto.backend == "cpu":
        print("backend auto: no usable GPU, so AUTO is the CPU backend here (nothing to calibrate)")
    else:
        print("backend auto: CPU and %s, calibrating where it runs host-data calls ..." % auto.device_name, flush=True)
    t0 = time.perf_counter()
    auto.calibrate()
    if auto.backend != "cpu":
        print("  calibrated in %.2f s" % (time.perf_counter() - t0))
    print()
    kernel = kernel_table(contexts, auto, 1000, 20, args.repeat)
    if args.full:
        samples, net = 20000, grow_network(contexts, auto, 20000, 20, 1000, {10, 50, 100, 200, 500, 1000}, args.repeat)
    else:
        samples, net = 2000, grow_network(contexts, auto, 2000, 20, 200, {10, 50, 100, 200}, args.repeat)
    print()
    print("Summary: Gaussian kernel of 1000 x 20 rows: %s; network output at %d nodes x %d samples: %s" % (
        versus_numpy({k: v for k, v in kernel.items() if k != "NumPy, loop over rows"}, "NumPy, vectorized"),
        net[0], samples, versus_numpy(net[1], "NumPy")))


if __name__ == "__main__":
    main()
