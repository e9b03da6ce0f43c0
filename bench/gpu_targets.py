#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gpu_targets.py - DESIGN.md's GPU targets (issue 16) in one process: ours, CuPy, torch, bound, met.
"""DESIGN.md's GPU performance targets (issue 16's acceptance table), measured in one process.

    GPUKERN_LIBRARY=build/lib/libgpukern.so python3 bench/gpu_targets.py [--quick] \\
        [--rows add,rbf_matrix] [--json gpu_targets.json] > table.md

For every row: ours through the gpukern package on Arrays of a CUDA context (device memory),
CuPy and PyTorch on their own arrays of the same U[0, 1) data, all timed alike: wall clock
around a batch of calls ending in the library's device synchronize, median of the batches,
after warm-up. rbf_matvec's CuPy and torch anchors materialize the kernel matrix in chunks and
time a row subset, scaled to all rows (as compare.py does; marked ~). Beside them the hardware
bound measured in the same run where it can be: the d2d copy rate (cudaMemcpy of 1 GiB, read +
write) for streaming rows, a TF32 cuBLAS GEMM of the same shape through torch for the
tensor-core rbf_matrix rows (three of them, less two of their output writes, plus one write:
the compensated form's floor), the MUFU exponential rate (SMs x 16 a clock x clock) for the
rbf rows; then DESIGN.md's target and whether it is met, computed from the figures. The AUTO
row runs `gkbench --sweep` --auto-sweeps times (3 in a full run) and counts the sizes where
AUTO is within 1.1x of the faster backend. A markdown table goes to stdout, progress to stderr,
everything to --json (rewritten after each row, so a run cut short keeps what it measured).
Every row is measured in its own try: one failure costs one row. --dry-run prints the plan and
needs no GPU; --backend cpu --test-sizes runs ours on the CPU at small sizes (a smoke test of
the tool where there is no GPU). Needs the gpukern package (installed, or python/ on PYTHONPATH)
and NumPy, plus CuPy and torch where they import.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import time

from auto_sweeps import AUTO_WITHIN, run_sweeps, sweep_text
from gpu_libs import F32, F64, Ours, Plan, load_anchors, log, measure

SIZE = {F32: 4, F64: 8}
# Exponentials a clock per SM on the special-function units (CUDA C Programming Guide,
# arithmetic instruction throughput: ex2 on compute capability 5.0 to 9.0).
MUFU_PER_SM_CLOCK = 16


# ---------------------------------------------------------------------------------------------
# The rows: DESIGN.md's "Performance targets" for the GPU, and issue 16's acceptance table.
# ---------------------------------------------------------------------------------------------

class Row:
    """One row: kind of work, dtype, sizes (s: n, m, d, gamma, rounds), the sizes of --test-sizes
    and the target, a tuple whose first item names the rule (see judge)."""

    def __init__(self, rid, label, kind, dtype, s, test, target):
        self.id, self.label, self.kind, self.dtype = rid, label, kind, dtype
        self.s, self.test, self.target = s, test, target


def make_rows():
    rows = []
    big, mid = 250_000_000, 100_000_000
    for op in ("add", "sub", "mul", "axpy", "scale", "exp"):
        rows.append(Row(f"{op}_f32_2.5e8", f"{op} f32 2.5e8", op, F32, {"n": big},
                        {"n": 1 << 20}, ("stream",)))
    for n, name in ((big, "2.5e8"), (mid, "1e8")):
        for op in ("sum", "dot", "nrm2"):
            rows.append(Row(f"{op}_f32_{name}", f"{op} f32 {name}", op, F32, {"n": n},
                            {"n": 1 << 20}, ("stream",)))
    rows.append(Row("rng_uniform_f32_1e8", "rng_uniform f32 1e8", "rng_uniform", F32, {"n": mid},
                    {"n": 1 << 20}, ("time_rate", 0.13e-3, 3e12)))
    rows.append(Row("rng_uniform_f64_1e8", "rng_uniform f64 1e8", "rng_uniform", F64, {"n": mid},
                    {"n": 1 << 20}, ("rate", 3e12)))
    rows.append(Row("rng_normal_f32_1e8", "rng_normal f32 1e8", "rng_normal", F32, {"n": mid},
                    {"n": 1 << 20}, ("time", 0.20e-3)))
    # "f64 in proportion": twice the bytes of f32, so twice f32's time (our reading).
    rows.append(Row("rng_normal_f64_1e8", "rng_normal f64 1e8", "rng_normal", F64, {"n": mid},
                    {"n": 1 << 20}, ("time", 0.40e-3, "f32's 0.20 ms x 2 (twice the bytes)")))
    for n, d, goal in ((16384, 256, 2.0e-3), (32768, 64, 3.0e-3), (16384, 20, 0.55e-3)):
        for gname, gamma in (("1/d", 1.0 / d), ("0.5", 0.5)):
            rows.append(Row(f"rbf_matrix_{n}x{d}_g{gname.replace('/', '')}",
                            f"rbf_matrix f32 {n}²×{d}, γ = {gname}", "rbf_matrix", F32,
                            {"m": n, "n": n, "d": d, "gamma": gamma},
                            {"m": 256, "n": 256, "d": d, "gamma": gamma}, ("time", goal)))
    for n, name, d, goal in ((1_000_000, "1e6", 3, 0.25), (200_000, "2e5", 64, 0.12)):
        rows.append(Row(f"rbf_matvec_{name}x{d}", f"rbf_matvec f32 {name}²×{d}", "rbf_matvec", F32,
                        {"m": n, "n": n, "d": d, "gamma": 1.0 / d},
                        {"m": 2048, "n": 2048, "d": d, "gamma": 1.0 / d}, ("time", goal)))
    rows.append(Row("rbf_rows_1e7x32", "rbf_rows f32 1e7×32", "rbf_rows", F32,
                    {"n": 10_000_000, "d": 32, "gamma": 1.0 / 32},
                    {"n": 100_000, "d": 32, "gamma": 1.0 / 32}, ("hold",)))
    for dt, name in ((F32, "sgemm"), (F64, "dgemm")):
        rows.append(Row(f"{name}_8192", f"{name} 8192", "gemm", dt, {"n": 8192}, {"n": 256},
                        ("gemm", 0.99)))
    rows.append(Row("tiny_add_1000", "tiny op (add f32 1000) on device data", "tiny", F32,
                    {"n": 1000}, {"n": 1000}, ("hold",)))
    rows.append(Row("seed004", "seed 004 (5 × rand 5000² f64, x @ x)", "seed004", F64,
                    {"n": 5000, "rounds": 5}, {"n": 200, "rounds": 5}, ("hold",)))
    rows.append(Row("auto", "AUTO on host data (gkbench --sweep)", "auto", F32, {}, {},
                    ("auto", AUTO_WITHIN)))
    return rows


def select(rows, patterns):
    """Rows whose id contains any of the comma-separated patterns (all rows for None)."""
    if not patterns:
        return rows
    pats = [p.strip().lower() for p in patterns.split(",") if p.strip()]
    return [r for r in rows if any(p in r.id.lower() for p in pats)]


def bytes_moved(row, s):
    """Bytes a call must read and write at least: the streaming rows' unit of work."""
    k, n, e = row.kind, s.get("n", 0), SIZE[row.dtype]
    per = {"add": 3, "sub": 3, "mul": 3, "axpy": 3, "scale": 2, "exp": 2, "sum": 1, "nrm2": 1,
           "dot": 2, "rng_uniform": 1, "rng_normal": 1}
    if k in per:
        return per[k] * n * e
    if k == "rbf_rows":
        return (2 * n * s["d"] + n) * e
    if k == "rbf_matrix":
        return (s["m"] * s["n"] + (s["m"] + s["n"]) * s["d"]) * e
    return 0


def operand_bytes(row, s):
    """Device memory one library's operands of the row take (for the plan)."""
    k, e = row.kind, SIZE[row.dtype]
    if k in ("rbf_matrix",):
        return (s["m"] * s["n"] + (s["m"] + s["n"]) * s["d"]) * e
    if k == "rbf_matvec":
        return (s["m"] * s["d"] + s["n"] * s["d"] + s["n"] + s["m"]) * e
    if k in ("gemm", "seed004"):
        return 3 * s["n"] ** 2 * e
    if k == "tiny":
        return 3 * s["n"] * e
    return bytes_moved(row, s)


# ---------------------------------------------------------------------------------------------
# Hardware bounds measured (or computed from the device's properties) in the same run.
# ---------------------------------------------------------------------------------------------

def copy_rate(libs, plan):
    """Bytes per second (read + write) of a 1 GiB device-to-device cudaMemcpy, and how."""
    nbytes = 1 << 30
    cp = libs.get("cupy")
    if cp is not None:
        a, b = cp.cp.empty(nbytes, dtype=cp.cp.uint8), cp.cp.empty(nbytes, dtype=cp.cp.uint8)
        rt = cp.cp.cuda.runtime
        fn = lambda i: rt.memcpy(b.data.ptr, a.data.ptr, nbytes, rt.memcpyDeviceToDevice)
        how = "cudaMemcpy 1 GiB device to device (CuPy's runtime binding)"
        sync, owner = cp.sync, cp
    elif "torch" in libs:
        torch = libs["torch"].torch
        a = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        fn = lambda i: b.copy_(a)
        how = "1 GiB device-to-device copy_ (torch)"
        sync, owner = libs["torch"].sync, libs["torch"]
    else:
        return None, "no CuPy or torch to measure it"
    try:
        m = measure(fn, sync, plan)
        return 2 * nbytes / m["median_s"], how
    finally:
        a = b = fn = None
        owner.free()


def device_props(libs):
    """(SM count, clock in Hz, where from) of device 0, or (None, None, why)."""
    cp, torch = libs.get("cupy"), libs.get("torch")
    sms = clock = None
    src = []
    if cp is not None:
        try:
            attrs = cp.cp.cuda.Device(0).attributes
            sms, clock = attrs["MultiProcessorCount"], attrs["ClockRate"] * 1e3
            src.append("cudaDeviceGetAttribute")
        except Exception as e:
            src.append(f"CuPy attributes: {e}")
    if sms is None and torch is not None:
        sms = torch.torch.cuda.get_device_properties(0).multi_processor_count
        src.append("torch properties")
    if clock is None:
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm",
                                  "--format=csv,noheader,nounits", "-i", "0"],
                                 capture_output=True, text=True, timeout=20).stdout
            clock = float(out.split()[0]) * 1e6
            src.append("nvidia-smi clocks.max.sm")
        except Exception as e:
            src.append(f"nvidia-smi: {e}")
    return sms, clock, "; ".join(src)


def tf32_gemm(libs, s, plan):
    """Seconds of one TF32 cuBLAS GEMM of rbf_matrix's shape (m x d by d x n into m x n)."""
    tl = libs.get("torch")
    if tl is None:
        return None
    torch = tl.torch
    m, n, d = s["m"], s["n"], s["d"]
    x, y, out = tl.rand(m * d, F32).reshape(m, d), tl.rand(n * d, F32).reshape(n, d), None
    out = torch.empty(m, n, dtype=torch.float32, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        return measure(lambda i: torch.matmul(x, y.T, out=out), tl.sync, plan)["median_s"]
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
        x = y = out = None
        tl.free()


def bound_of(row, s, hw, libs, plan):
    """(seconds, how) the hardware needs at least for the row's work; (None, why) if unknown."""
    k, copy, mufu = row.kind, hw.get("copy_Bps"), hw.get("mufu_per_s")
    if k in ("add", "sub", "mul", "axpy", "scale", "exp", "sum", "dot", "nrm2", "rbf_rows",
             "rng_uniform", "rng_normal"):
        if not copy:
            return None, "no copy rate"
        b = bytes_moved(row, s)
        return b / copy, f"{b / 1e9:.2f} GB at the d2d copy's {copy / 1e12:.2f} TB/s"
    if k == "rbf_matrix":
        pairs = s["m"] * s["n"]
        write = pairs * 4 / copy if copy else None
        exps = pairs / mufu if mufu else None
        if s["d"] >= 64:
            g = tf32_gemm(libs, s, plan)
            if g is None or write is None:
                return None, "no torch or no copy rate"
            # Three TF32 products less the two extra writes of their outputs, plus one write.
            t = max(3 * g - 2 * write, write)
            return t, (f"3 × TF32 GEMM ({g * 1e3:.3f} ms each, measured) − 2 writes of "
                       f"{pairs * 4 / 1e9:.2f} GB")
        parts = [(v, h) for v, h in ((write, f"write {pairs * 4 / 1e9:.2f} GB at the d2d rate"),
                                     (exps, f"{pairs:.2e} exps at the MUFU rate")) if v]
        if not parts:
            return None, "no copy rate or MUFU rate"
        return max(parts)
    if k == "rbf_matvec":
        if not mufu:
            return None, "no SM count or clock"
        pairs = s["m"] * s["n"]
        return pairs / mufu, f"{pairs:.0e} exps at the MUFU rate {mufu / 1e12:.2f}e12/s"
    if k == "gemm":
        cp = row.cells.get("cupy") or {}
        if "median_s" in cp:
            return cp["median_s"], "cuBLAS through CuPy, this run"
        return None, "no CuPy"
    return None, ""


# ---------------------------------------------------------------------------------------------
# Verdicts and output
# ---------------------------------------------------------------------------------------------

def fmt_time(s):
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    return f"{s * 1e3:.3f} ms" if s < 1 else f"{s:.3f} s"


def rate_text(row, s, t):
    b = bytes_moved(row, s)
    if row.kind == "gemm":
        return f"{2 * s['n'] ** 3 / t / 1e12:.1f} TFLOP/s"
    if row.kind == "rbf_matvec":
        return f"{s['m'] * s['n'] / t:.2e} pairs/s"
    return f"{b / t / 1e12:.2f} TB/s" if b else ""


def peers(row):
    return {k: v["median_s"] for k, v in row.cells.items() if k != "ours" and "median_s" in v}


def judge(row, s, hw):
    """(met: True, False or None for unknown, the target in words)."""
    rule = row.target
    ours = (row.cells.get("ours") or {}).get("median_s")
    if rule[0] == "auto":
        sw = row.sweeps
        ok = [x["sizes"] > 0 and x["within"] == x["sizes"] for x in sw]
        text = f"every size within {rule[1]}× of the faster backend, three sweeps in a row"
        if not all(ok):
            return False, text
        return (True if len(sw) >= 3 else None), text  # fewer sweeps cannot decide
    if ours is None:
        return None, ""
    pr = peers(row)
    ahead = all(ours < v for v in pr.values()) if pr else None
    if rule[0] == "stream":
        copy = hw.get("copy_Bps")
        text = "< torch, ≥ 98 % of the d2d copy's rate"
        if "torch" not in pr or not copy:
            return None, text
        return ours < pr["torch"] and bytes_moved(row, s) / ours >= 0.98 * copy, text
    if rule[0] == "time_rate":
        return ours <= rule[1] and bytes_moved(row, s) / ours >= rule[2], \
            f"≤ {fmt_time(rule[1])}, ≥ {rule[2] / 1e12:.0f} TB/s"
    if rule[0] == "rate":
        return bytes_moved(row, s) / ours >= rule[1], f"≥ {rule[1] / 1e12:.0f} TB/s"
    if rule[0] == "time":
        text = f"≤ {fmt_time(rule[1])}" + (f" ({rule[2]})" if len(rule) > 2 else "")
        return ours <= rule[1], text
    if rule[0] == "gemm":
        ref = pr.get("cupy")
        text = f"hold: ≥ {rule[1] * 100:.0f} % of CuPy's rate"
        return (ours * rule[1] <= ref if ref else None), text
    if rule[0] == "hold":
        return ahead, "hold: ahead of every peer"
    return None, ""


def cell_text(row, name):
    c = row.cells.get(name)
    if c is None:
        return "—"
    if "error" in c:
        return c["error"]
    ours = (row.cells.get("ours") or {}).get("median_s")
    t = fmt_time(c["median_s"])
    if c.get("scaled"):
        t = "~" + t
    if name != "ours" and ours:
        t += f" ({c['median_s'] / ours:.2f}×)"
    return t


def markdown(rows, meta, sizes_of, hw, interrupted):
    # results_latest.py takes a table for the current page unless this says quick or rows.
    how = (", quick" if meta["quick"] else "") + (f", rows {meta['rows']}" if meta.get("rows") else "")
    out = [f"## {meta['date'][:10]} — {meta['device']}: DESIGN.md's GPU targets "
           f"(bench/gpu_targets.py{how})", ""]
    out.append(f"- commit {meta['commit']}, libgpukern {meta['version']}, run {meta['date']}, "
               f"{meta['elapsed_s']:.0f} s")
    out.append(f"- {meta['python']}; " + ", ".join(f"{k} {v}" for k, v in meta["anchors"].items()))
    out.append(f"- timing: wall clock around batches of calls (≥ {meta['min_batch_ms']} ms) "
               f"ending in each library's device synchronize, median of up to {meta['reps']} "
               "batches, after two warm-up calls; ours through the gpukern package on its Arrays")
    out.append(f"- d2d copy: {hw.get('copy_how')}: "
               + (f"{hw['copy_Bps'] / 1e12:.3f} TB/s (read + write)" if hw.get("copy_Bps")
                  else "not measured"))
    out.append(f"- MUFU rate: {hw.get('sms')} SMs × {MUFU_PER_SM_CLOCK} a clock × "
               + (f"{hw['clock_hz'] / 1e9:.3f} GHz = {hw['mufu_per_s']:.3e} exp/s"
                  if hw.get("mufu_per_s") else "unknown") + f" ({hw.get('props_how')})")
    if meta["test_sizes"]:
        out.append("- **test sizes** (--test-sizes), not DESIGN.md's: no verdict counts")
    out.append("- ratio in brackets: anchor time / ours (above 1: ours is faster); ~: a row "
               "subset timed and scaled to all rows; of bound: bound / ours")
    out.append("")
    head = ["row", "ours", "rate", "torch", "CuPy", "hardware bound (this run)", "of bound",
            "target", "met"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for r in rows:
        s = sizes_of(r)
        if r.kind == "auto":
            sw = r.sweeps
            ours = ", ".join(f"{x['within']}/{x['sizes']}" for x in sw) if sw else r.error or "—"
            if sw and r.error:
                ours += f" ({r.error})"
            line = [r.label, ours + (" sizes within 1.1×" if sw else ""), "", "", "", "", "",
                    r.target_text, yes_no(r.met)]
            out.append("| " + " | ".join(line) + " |")
            continue
        o = (r.cells.get("ours") or {}).get("median_s")
        rate = rate_text(r, s, o) if o else ""
        bound = "—" if r.bound_s is None else f"{fmt_time(r.bound_s)} ({r.bound_how})"
        if r.bound_s is None and r.bound_how:
            bound = r.bound_how
        if r.error and "ours" in r.cells:
            bound = r.error
        of = f"{r.bound_s / o * 100:.0f} %" if (o and r.bound_s) else ""
        target = r.target_text
        ratio = normal_ratio(rows, "ours")
        if r.id == "rng_normal_f64_1e8" and ratio:
            target += f"; ours f64 / f32 {ratio:.2f}×"
        line = [r.label, cell_text(r, "ours") if "ours" in r.cells else (r.error or "—"), rate,
                cell_text(r, "torch"), cell_text(r, "cupy"), bound, of, target, yes_no(r.met)]
        out.append("| " + " | ".join(line) + " |")
    notes = proportion_notes(rows)
    sweeps = [r for r in rows if r.kind == "auto" and r.sweeps]
    if notes or sweeps:
        out.append("")
    out.extend(notes)
    for r in sweeps:
        out.extend("- " + sweep_text(x) for x in r.sweeps)
    if interrupted:
        out.append("\nInterrupted: the rows after these did not run.")
    return "\n".join(out)


def yes_no(met):
    return "?" if met is None else ("yes" if met else "**no**")


def normal_times(rows, name):
    """(f32, f64) seconds of rng_normal 1e8 in library name, None where not measured."""
    by = {r.id: r for r in rows}
    return tuple((by[i].cells.get(name) or {}).get("median_s") if i in by else None
                 for i in ("rng_normal_f32_1e8", "rng_normal_f64_1e8"))


def normal_ratio(rows, name):
    x, y = normal_times(rows, name)
    return y / x if x and y else None


def proportion_notes(rows):
    """rng_normal f64 beside f32 ("f64 in proportion"): the time ratio per library."""
    parts = []
    for name in ("ours", "torch", "cupy"):
        x, y = normal_times(rows, name)
        if x and y:
            parts.append(f"{name} {y / x:.2f}× ({fmt_time(y)} / {fmt_time(x)})")
    if not parts:
        return []
    return ["- rng_normal f64 / f32 time, 1e8 each (f64 writes twice the bytes): " +
            ", ".join(parts)]


def git_commit():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        return subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (pass --commit)"


def print_plan(rows, sizes_of, plan, args):
    print(f"plan: {len(rows)} rows, {'quick' if args.quick else 'full'}, batches ≥ "
          f"{plan.min_batch_s * 1e3:.0f} ms, up to {plan.reps} reps, {plan.budget_s} s a library "
          f"a row; anchors {args.libs}; AUTO sweeps {args.auto_sweeps}")
    for r in rows:
        s = sizes_of(r)
        mem = operand_bytes(r, s) / 2**30 if r.kind != "auto" else 0
        sz = ", ".join(f"{k}={v:g}" for k, v in s.items())
        print(f"  {r.id:26s} {r.kind:11s} {'f64' if r.dtype == F64 else 'f32'} {sz:40s} "
              f"{mem:7.2f} GiB a library  target {r.target}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", default=os.environ.get("GPUKERN_LIBRARY"),
                    help="the library (default $GPUKERN_LIBRARY, else the gpukern package's)")
    ap.add_argument("--gkbench", help="gkbench for the AUTO row (default: the build tree's, "
                    "../bench/gkbench from the library's directory, else gkbench on PATH)")
    ap.add_argument("--backend", choices=["cuda", "cpu"], default="cuda",
                    help="cpu: ours on a CPU context (a smoke test of the tool without a GPU)")
    ap.add_argument("--rows", help="only rows whose id contains one of these (comma-separated); "
                    "--dry-run lists the ids")
    ap.add_argument("--quick", action="store_true", help="same sizes, fewer and shorter batches, "
                    "one AUTO sweep (about a minute)")
    ap.add_argument("--test-sizes", action="store_true", help="small sizes (tests the tool)")
    ap.add_argument("--libs", default="torch,cupy", help="anchor libraries to try (none: ours "
                    "alone)")
    ap.add_argument("--auto-sweeps", type=int, help="gkbench --sweep runs (3; quick 1)")
    ap.add_argument("--sweep-args", default="", help="extra gkbench arguments for the sweeps")
    ap.add_argument("--keep-sweeps", help="a directory for each sweep's calibration, CSV and "
                    "output (auto_sweeps.py --keep)")
    ap.add_argument("--json", default="gpu_targets.json", help="where the JSON goes")
    ap.add_argument("--commit", help="the commit measured, where git cannot say (a copied tree)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    args = ap.parse_args()
    if args.auto_sweeps is None:
        args.auto_sweeps = 1 if args.quick else 3
    plan = Plan(args.quick)
    rows = select(make_rows(), args.rows)
    sizes_of = (lambda r: r.test) if args.test_sizes else (lambda r: r.s)
    if args.dry_run:
        print_plan(rows, sizes_of, plan, args)
        return
    if not rows:
        sys.exit(f"gpu_targets.py: no row matches --rows {args.rows}")

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a time limit still gets a table
    t_start = time.perf_counter()
    ours = Ours(args.lib, args.backend)
    args.lib = ours.path
    log(f"ours: {ours.device}, libgpukern {ours.version} ({args.lib})")
    libs = load_anchors(args.libs.split(","))
    gkbench = args.gkbench or os.path.join(os.path.dirname(os.path.abspath(args.lib)), "..",
                                           "bench", "gkbench")
    if not args.gkbench and not os.path.exists(gkbench):
        gkbench = "gkbench"
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": args.commit or git_commit(), "version": ours.version, "device": ours.device,
            "library": args.lib, "gkbench": gkbench, "quick": args.quick, "rows": args.rows,
            "test_sizes": args.test_sizes, "min_batch_ms": plan.min_batch_s * 1e3,
            "reps": plan.reps, "python": f"Python {platform.python_version()}",
            "anchors": {k: v.version for k, v in libs.items()}, "host": platform.node()}
    hw = {"copy_how": "not measured (no GPU anchors)", "props_how": "not read"}
    for r in rows:
        r.cells, r.bound_s, r.bound_how, r.met, r.target_text, r.error, r.sweeps = \
            {}, None, "", None, "", None, []
    done, interrupted = [], False

    def save():
        meta["elapsed_s"] = time.perf_counter() - t_start
        data = {"meta": meta, "hardware": hw, "rows": [
            {"id": r.id, "label": r.label, "sizes": sizes_of(r), "cells": r.cells,
             "bound_s": r.bound_s, "bound": r.bound_how, "target": r.target_text, "met": r.met,
             "error": r.error, "sweeps": r.sweeps} for r in done]}
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)

    try:
        if libs and any(r.kind != "auto" for r in rows):
            try:
                hw["copy_Bps"], hw["copy_how"] = copy_rate(libs, plan)
                hw["sms"], hw["clock_hz"], hw["props_how"] = device_props(libs)
                if hw["sms"] and hw["clock_hz"]:
                    hw["mufu_per_s"] = hw["sms"] * MUFU_PER_SM_CLOCK * hw["clock_hz"]
            except Exception as e:
                hw["copy_how"] = f"failed: {type(e).__name__}: {e}"
                log(f"bounds: {hw['copy_how']}")
        for r in rows:
            s = sizes_of(r)
            log(f"row {r.id}")
            try:
                if r.kind == "auto":
                    if args.auto_sweeps > 0:
                        r.sweeps = run_sweeps(gkbench, args.auto_sweeps,
                                              shlex.split(args.sweep_args), 150,
                                              keep=args.keep_sweeps)
                        bad = [f"sweep {x['sweep']} rc {x['rc']}" for x in r.sweeps
                               if x["rc"] != 0 or x["sizes"] == 0]
                        if bad:
                            r.error = "gkbench --sweep failed: " + ", ".join(bad)
                else:
                    measure_row(r, s, ours, libs, plan)
                    r.bound_s, r.bound_how = bound_of(r, s, hw, libs, plan)
                r.met, r.target_text = judge(r, s, hw)
                if args.test_sizes:
                    r.met = None  # DESIGN.md's targets are for its sizes
            except KeyboardInterrupt:
                raise
            except Exception as e:
                r.error = f"failed: {type(e).__name__}: {str(e)[:200]}"
                log(f"row {r.id}: {r.error}")
            done.append(r)
            save()
    except KeyboardInterrupt:
        interrupted = True
    save()
    print(markdown(done, meta, sizes_of, hw, interrupted))
    log(f"JSON written to {args.json}")
    # Anchors may be absent or fail (their cells say so); a row of ours that failed is an error.
    failed = [r.id for r in done if r.error or "error" in r.cells.get("ours", {})]
    if failed or interrupted:
        log(f"gpu_targets.py: {'interrupted; ' if interrupted else ''}failed rows: "
            f"{', '.join(failed) or 'none'}")
        sys.exit(1)


def measure_row(r, s, ours, libs, plan):
    """Times the row in ours and every anchor, each in its own try (one failure, one cell)."""
    for lib in [ours] + list(libs.values()):
        try:
            fn, scale = lib.setup(r, s)
            m = measure(fn, lib.sync, plan)
            if scale != 1.0:
                m.update(median_s=m["median_s"] * scale, min_s=m["min_s"] * scale, scaled=scale)
            r.cells[lib.name] = m
            log(f"  {lib.name}: {fmt_time(m['median_s'])} ({m['calls']} calls x {m['reps']})")
        except KeyboardInterrupt:
            raise
        except Exception as e:
            text = str(e)
            oom = "out of memory" in text.lower() or "OutOfMemory" in type(e).__name__
            r.cells[lib.name] = {"error": "out of memory" if oom else
                                 f"failed: {type(e).__name__}: {text[:160]}"}
            log(f"  {lib.name}: {r.cells[lib.name]['error']}")
        finally:
            fn = None
            lib.free()


if __name__ == "__main__":
    main()
