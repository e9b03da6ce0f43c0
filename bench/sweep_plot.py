#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# sweep_plot.py - draws a `gkbench --sweep` CSV: per op, CPU, CUDA and AUTO time against size.
"""Usage: sweep_plot.py SWEEP.csv OUT.png

One panel per op. Curves: the CPU context, the CUDA context (its times include staging the
host data to the device and the results back), and the AUTO context, whose markers say which
backend it ran each size on. The dotted vertical line is the crossover: the first size at
which CUDA was faster than the CPU. The last panel repeats the CSV's header (devices, date).
Exit status 2 without matplotlib (the message says what to install, for which Python) or for
bad arguments. gkbench runs it with $GK_PYTHON, else the python3 on PATH (an activated
virtualenv's, where `pip install './python[plot]'` brings matplotlib).
"""
import csv
import math
import sys
import textwrap

CHOICE_MARKERS = {"cpu": "o", "cuda": "^", "mixed": "X"}


def number(s):
    return float(s) if s not in ("", None) else math.nan


def read(path):
    """The '#' header lines and the rows grouped by op, in the CSV's order."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    header = [l[1:].strip() for l in lines if l.startswith("#")]
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    ops = {}
    for r in rows:
        ops.setdefault(r["op"], []).append(r)
    return header, ops


def crossover(rows):
    """First size where CUDA beat the CPU, and whether CUDA lost again at a larger size."""
    first = None
    lost_after = False
    for r in rows:
        cpu, cuda = number(r["cpu_ms"]), number(r["cuda_ms"])
        if math.isnan(cpu) or math.isnan(cuda):
            continue
        if first is None and cuda < cpu:
            first = float(r["size"])
        elif first is not None and cuda >= cpu:
            lost_after = True
    return first, lost_after


def panel(ax, op, rows):
    size = [float(r["size"]) for r in rows]
    series = {k: [number(r[k + "_ms"]) for r in rows] for k in ("cpu", "cuda", "auto")}
    ax.plot(size, series["cpu"], "-", color="tab:blue", label="CPU")
    if any(not math.isnan(v) for v in series["cuda"]):
        ax.plot(size, series["cuda"], "-", color="tab:orange", label="CUDA incl. transfers")
    # AUTO as a dashed line, with one marker per size for the backend it chose there.
    ax.plot(size, series["auto"], "--", color="tab:green", label="AUTO")
    for choice, marker in CHOICE_MARKERS.items():
        pts = [(s, t) for s, t, r in zip(size, series["auto"], rows) if r["auto_choice"] == choice]
        if pts:
            label = "AUTO's choice varied" if choice == "mixed" else f"AUTO ran on {choice}"
            ax.scatter(*zip(*pts), marker=marker, color="tab:green", zorder=3, label=label)
    slow = [(s, t) for s, t, r in zip(size, series["auto"], rows) if r["ok"] == "0"]
    if slow:
        ax.scatter(*zip(*slow), s=140, facecolors="none", edgecolors="red", zorder=4,
                   label="AUTO > 1.1x the faster")
    first, lost_after = crossover(rows)
    if first is not None:
        ax.axvline(first, color="gray", linestyle=":")
        at = f"{first:.3g}".replace("e+0", "e").replace("e+", "e")
        text = f"CUDA faster from {at}" + (" (not at every larger size)" if lost_after else "")
        # Low on the axis: the legend takes the upper left.
        ax.annotate(text, xy=(first, 0.03), xycoords=("data", "axes fraction"), rotation=90,
                    ha="right", va="bottom", fontsize=7, color="dimgray")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(op)
    ax.set_xlabel(rows[0]["size_unit"])
    ax.set_ylabel("ms per call (median)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        # Imported here so that --help and a missing matplotlib both get a clear answer.
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"sweep_plot.py: matplotlib is not installed for {sys.executable} (Python "
              f"{sys.version.split()[0]}). Install it there: `{sys.executable} -m pip install "
              "matplotlib` (with gpukern: `pip install './python[plot]'`; Debian's system "
              "python3: `apt-get install python3-matplotlib`), or point GK_PYTHON at a Python "
              f"that has it. The CSV {argv[1]} is complete without the plot.", file=sys.stderr)
        return 2
    header, ops = read(argv[1])
    if not ops:
        print(f"sweep_plot.py: no rows in {argv[1]}", file=sys.stderr)
        return 1
    cols = 3
    nrows = (len(ops) + 1 + cols - 1) // cols  # one more panel for the header text
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.2 * nrows), squeeze=False)
    axes = [a for row in axes for a in row]
    for ax, (op, rows) in zip(axes, ops.items()):
        panel(ax, op, rows)
    info = axes[len(ops)]
    info.axis("off")
    text = "\n".join(
        w for line in header for w in textwrap.wrap(line, 70, subsequent_indent="    "))
    info.text(0, 1, text, va="top", ha="left", fontsize=7, transform=info.transAxes)
    for ax in axes[len(ops) + 1:]:
        ax.axis("off")
    have_cuda = any(r["cuda_ms"] for rows in ops.values() for r in rows)
    fig.suptitle("libgpukern on host data: CPU, CUDA (with staging) and AUTO"
                 + ("" if have_cuda else " -- no CUDA on this host: AUTO is the CPU backend"),
                 fontsize=12)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
