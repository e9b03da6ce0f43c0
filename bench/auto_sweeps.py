#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# auto_sweeps.py - gkbench --sweep run several times in a row: per sweep, AUTO's sizes within 1.1x.
"""Runs `gkbench --sweep` COUNT times in a row (DESIGN.md: AUTO within 1.1x of the faster
backend at every size, in three sweeps in a row) and prints, per sweep, how many sizes AUTO
was within 1.1x of the faster backend and the worst three, with where AUTO ran them.

    python3 bench/auto_sweeps.py [--gkbench build/bench/gkbench] [--count 3] [--explain] \
        [--keep DIR] [-- --op gemm]

Each sweep calibrates into a file of its own (GK_CALIBRATION), not the user's cache. --explain
runs the sweeps with GK_LOG=1 and prints, per size, AUTO's timed calls by where they ran (and
which were retries of the other backend, their cold first calls, CPU calls right after a GPU
one, the timed audits of calls placed outright on the CPU) with their median and largest
times. Also the AUTO row of gpu_targets.py. Standard library only.
"""
import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

AUTO_WITHIN = 1.1


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def read_sweep(path):
    """The sweep's CSV rows (comment lines skipped)."""
    with open(path, newline="") as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    return list(csv.DictReader(lines))


# A placed call as GK_LOG=1 prints it (src/dispatch.c).
PLACED = re.compile(r"AUTO expected ([\d.e+-]+) s on the CPU, ([\d.e+-]+) s on the GPU; ran on "
                    r"the (CPU|GPU)(.*): ([\d.e+-]+) s")


def explain(output):
    """Per size of a GK_LOG'd sweep's output (stdout and stderr in one stream): AUTO's placed
    calls by where they ran (a retry, its cold first call, a CPU call right after a GPU one),
    their median and largest seconds, and the spread of the estimates' GPU / CPU ratio."""
    lines, groups, ratios, prev = [], {}, [], None
    for line in output.splitlines():
        m = PLACED.search(line)
        if m:
            cpu, gpu, where, tag, took = float(m[1]), float(m[2]), m[3], m[4], float(m[5])
            key = where + ("-cold" if "cold" in tag else "-retry" if "retry" in tag else
                           "-audit" if "audit" in tag else "")
            key += "-after-gpu" if where == "CPU" and prev == "GPU" else ""
            groups.setdefault(key, []).append(took)
            ratios.append(gpu / cpu)
            prev = where
        elif re.match(r"[a-z_]+ +[\d.e+]+(x[\d.e+]+)* +[\d.e+-]+ ", line):  # a size's row
            if groups:
                parts = [f"{k} {len(v)} calls, median {statistics.median(v) * 1e3:.4g} ms, max "
                         f"{max(v) * 1e3:.4g}" for k, v in sorted(groups.items())]
                lines.append(" ".join(line.split()[:2]) + ": " + "; ".join(parts) +
                             f"; estimated GPU/CPU {min(ratios):.3f} .. median "
                             f"{statistics.median(ratios):.3f} .. {max(ratios):.3f}")
            groups, ratios, prev = {}, [], None
    return lines


def keep_files(keep, number, tmp, out):
    """Copies sweep number's calibration and CSV from tmp, and its output, into keep."""
    os.makedirs(keep, exist_ok=True)
    for name, suffix in (("calibration.txt", "-calibration.txt"), ("sweep.csv", ".csv"),
                         ("reps.csv", "-reps.csv")):
        if os.path.exists(os.path.join(tmp, name)):
            shutil.copyfile(os.path.join(tmp, name), os.path.join(keep, f"sweep{number}{suffix}"))
    with open(os.path.join(keep, f"sweep{number}.log"), "w") as f:
        f.write(out)


def run_sweeps(gkbench, count, extra, timeout_s, log_calls=False, keep=None):
    """Per sweep: sizes compared, sizes within AUTO_WITHIN, the worst rows, errors; with
    log_calls, GK_LOG=1 and explain()'s lines; with keep, a directory that receives each
    sweep's calibration, CSV and output (sweepN-calibration.txt, sweepN.csv, sweepN.log) and its
    timed batches (sweepN-reps.csv, gkbench's --reps-csv)."""
    sweeps = []
    for i in range(count):
        with tempfile.TemporaryDirectory(prefix="gk_sweep") as tmp:
            path = os.path.join(tmp, "sweep.csv")
            # A calibration file of its own: the sweep calibrates, and must not touch ~/.cache.
            env = dict(os.environ, GK_CALIBRATION=os.path.join(tmp, "calibration.txt"))
            if log_calls:
                env["GK_LOG"] = "1"
            cmd = [gkbench, "--sweep", "--csv", path] + extra
            if keep:
                cmd += ["--reps-csv", os.path.join(tmp, "reps.csv")]
            log(f"auto: sweep {i + 1} of {count}: {' '.join(cmd)}")
            t0 = time.perf_counter()
            sw = {"sweep": i + 1, "command": " ".join(cmd)}
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
            try:
                out, _ = p.communicate(timeout=timeout_s)
                sw["rc"] = p.returncode
            except subprocess.TimeoutExpired:
                p.terminate()  # gkbench stops after the size in progress and writes its CSV
                out, _ = p.communicate()
                sw["rc"] = "timeout"
            except BaseException:
                p.kill()
                p.communicate()
                raise
            if sw["rc"] != 0:
                sw["output_tail"] = out[-500:]
            if log_calls:
                sw["explain"] = explain(out)
            sw["seconds"] = time.perf_counter() - t0
            if keep:
                keep_files(keep, i + 1, tmp, out)
            rows = read_sweep(path) if os.path.exists(path) else []
        rated = [r for r in rows if r.get("auto_over_best")]
        sw["sizes"] = len(rated)
        sw["within"] = sum(float(r["auto_over_best"]) <= AUTO_WITHIN for r in rated)
        worst = sorted(rated, key=lambda r: -float(r["auto_over_best"]))[:3]
        sw["worst"] = [{"op": r["op"], "m": r["m"], "n": r["n"], "d": r["d"],
                        "auto_over_best": float(r["auto_over_best"]),
                        "medians": r.get("auto_over_best_medians", ""), "cpu_ms": r["cpu_ms"],
                        "cuda_ms": r["cuda_ms"], "auto_ms": r["auto_ms"],
                        "choice": r["auto_choice"], "cpu_calls": r["auto_cpu_calls"],
                        "cuda_calls": r["auto_cuda_calls"]} for r in worst]
        sw["rows"] = [{k: r[k] for k in ("op", "m", "n", "d", "cpu_ms", "cuda_ms", "auto_ms",
                                         "auto_choice", "auto_cpu_calls", "auto_cuda_calls",
                                         "auto_over_best", "auto_over_best_medians")
                       if k in r} for r in rows]
        sweeps.append(sw)
        log(f"auto: sweep {i + 1}: {sw['within']}/{sw['sizes']} within {AUTO_WITHIN}x")
    return sweeps


def worst_text(w):
    size = f"{w['m']}x{w['n']}" if w["m"] not in ("", "0") else w["n"]
    medians = f", medians {w['medians']}" if w.get("medians") else ""
    return (f"{w['op']} {size} {w['auto_over_best']:.3f}{medians} (cpu {w['cpu_ms']} ms, cuda "
            f"{w['cuda_ms']} ms, auto {w['auto_ms']} ms, {w['choice']}: {w['cpu_calls']} cpu / "
            f"{w['cuda_calls']} cuda calls)")


def sweep_text(x):
    """One line on a sweep: sizes within, time, gkbench's status, the worst rows."""
    worst = "; ".join(worst_text(w) for w in x["worst"])
    rc = "" if x.get("rc") == 0 else f" (gkbench rc {x.get('rc')})"
    return (f"AUTO sweep {x['sweep']}: {x['within']} of {x['sizes']} sizes within {AUTO_WITHIN}x "
            f"in {x['seconds']:.0f} s{rc}; worst: {worst}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gkbench", default="gkbench", help="the gkbench to run (default: on PATH)")
    ap.add_argument("--count", type=int, default=3, help="sweeps in a row (3)")
    ap.add_argument("--timeout", type=float, default=150, help="seconds a sweep may take")
    ap.add_argument("--json", help="also write the sweeps' summaries here")
    ap.add_argument("--explain", action="store_true", help="GK_LOG=1: per size, where AUTO's "
                    "calls ran and what they took (the log costs about a microsecond a call)")
    ap.add_argument("--keep", help="a directory for each sweep's calibration, CSV, output "
                    "and timed batches")
    ap.add_argument("extra", nargs="*", help="gkbench arguments after --, e.g. -- --op gemm")
    args = ap.parse_args()
    sweeps = run_sweeps(args.gkbench, args.count, args.extra, args.timeout, args.explain,
                        args.keep)
    for x in sweeps:
        print(sweep_text(x))
        for line in x.get("explain", []):
            print("  " + line)
    ok = all(x["sizes"] > 0 and x["within"] == x["sizes"] for x in sweeps)
    print(f"{'all' if ok else 'not all'} of {len(sweeps)} sweeps had every size within "
          f"{AUTO_WITHIN}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(sweeps, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
