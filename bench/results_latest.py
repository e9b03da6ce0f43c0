#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# results_latest.py - builds the table at the top of bench/RESULTS.md: the latest figure per row and machine.
"""Usage: results_latest.py [--write | --check] [RESULTS.md]

Reads every compare.py table in bench/RESULTS.md (a block that starts with "- commit ...",
"- devices: ...", "- machine: ..." lines and then "| op | dtype | size | backend | ..."), keeps
for each (op, dtype, size) and each machine and backend the row of the newest gkbench run (by
the run's timestamp), and prints one markdown table. --write replaces the table between the
"latest:begin" and "latest:end" markers in the file; --check exits 1 when that table is not the
one the sections below it give (so a new section without a regenerated table is caught).
Standard library only.
"""
import argparse
import math
import os
import re
import sys

BEGIN = "<!-- latest:begin -->"
END = "<!-- latest:end -->"


class Run:
    def __init__(self, commit, date):
        self.commit, self.date = commit, date
        self.cuda_name = None
        self.cpus = None
        self.cols = None
        self.rows = []


def parse_runs(lines):
    """Every compare.py block of the file, in file order."""
    runs, run = [], None
    for line in lines:
        m = re.match(r"- commit (\S+)(.*?), libgpukern \S+, gkbench run (\S+)", line)
        if m:
            commit = m.group(1) + ("+" if "uncommitted" in m.group(2) else "")
            run = Run(commit, m.group(3).rstrip(","))
            runs.append(run)
            continue
        if run is None:
            continue
        m = re.match(r"- devices: (.*);", line)
        if m:
            cuda = re.search(r"cuda: ([^,;]+)", m.group(1))
            run.cuda_name = cuda.group(1).strip() if cuda else None
            continue
        m = re.match(r"- machine: \S+, (\d+) logical CPUs", line)
        if m:
            run.cpus = int(m.group(1))
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| op | dtype | size | backend |"):
            run.cols = cells
        elif line.startswith("|") and run.cols and not line.startswith("|---"):
            if len(cells) == len(run.cols):
                run.rows.append(dict(zip(run.cols, cells)))
        elif run.cols and not line.startswith("|"):
            run = None  # the table ended; what follows belongs to no run until the next commit line
    return [r for r in runs if r.rows and r.cpus]


def size_value(size):
    """Orders sizes numerically: 1e6, 4096x4096x20 and 5x5000^2 alike."""
    total = 1.0
    for part in size.split("x"):
        base, _, exp = part.partition("^")
        try:
            total *= float(base) ** (float(exp) if exp else 1.0)
        except ValueError:
            return math.inf
    return total


def fastest_anchor(row, anchors):
    """The anchor with the smallest ratio (the fastest library), as 'name ratio'."""
    best = None
    for name in anchors:
        m = re.search(r"\((\d+(?:\.\d+)?)x\)", row.get(name, ""))
        if m and (best is None or float(m.group(1)) < best[1]):
            best = (name, float(m.group(1)))
    return f"{best[1]:.2f}x {best[0]}" if best else "no anchor"


def machine_labels(runs):
    """A host is known by its CPU count; it is named by the GPU any of its runs saw."""
    gpu = {}
    for r in runs:
        if r.cuda_name:
            gpu.setdefault(r.cpus, r.cuda_name.replace("NVIDIA ", ""))
    return {c: (f"{gpu[c]} host ({c} CPUs)" if c in gpu else f"{c}-CPU host, no GPU")
            for c in {r.cpus for r in runs}}


def build_table(runs):
    labels = machine_labels(runs)
    latest = {}  # (op, dtype, size) -> {(cpus, backend): (date, cell)}
    op_order = []
    for r in sorted(runs, key=lambda r: -len(r.rows)):
        for row in r.rows:
            if row["op"] not in op_order:
                op_order.append(row["op"])
    for r in runs:
        anchors = r.cols[6:]
        for row in r.rows:
            key = (row["op"], row["dtype"], row["size"])
            col = (r.cpus, row["backend"])
            cell = f"{row['gkbench']} ({fastest_anchor(row, anchors)}) {r.commit}"
            slot = latest.setdefault(key, {})
            if col not in slot or slot[col][0] < r.date:
                slot[col] = (r.date, cell)
    cols = sorted({c for s in latest.values() for c in s}, key=lambda c: (-c[0], c[1] != "cuda"))
    head = ["op", "dtype", "size"] + [f"{labels[c[0]]}: {c[1]}" for c in cols]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(latest, key=lambda k: (op_order.index(k[0]), k[1], size_value(k[2]))):
        out.append("| " + " | ".join(list(key) + [latest[key][c][1] if c in latest[key] else ""
                                                  for c in cols]) + " |")
    dates = sorted(r.date for r in runs)
    out.append("")
    out.append(f"{len(latest)} rows from {len(runs)} runs, {dates[0]} to {dates[-1]}. Each cell: "
               "gkbench's median per call, in brackets the fastest anchor's ratio in that run "
               "(anchor time / ours, above 1: libgpukern is faster), then the commit "
               "(+: uncommitted changes). Regenerate with `python3 bench/results_latest.py "
               "--write` after adding a section.")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"))
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="replace the table in the file")
    g.add_argument("--check", action="store_true", help="exit 1 when the file's table is stale")
    args = ap.parse_args()
    with open(args.path, encoding="utf-8") as f:
        text = f.read()
    head, sep, rest = text.partition(BEGIN)
    old, sep2, tail = rest.partition(END)
    if (args.write or args.check) and not (sep and sep2):
        sys.exit(f"results_latest.py: {args.path} has no {BEGIN} ... {END} block")
    table = build_table(parse_runs((tail if sep2 else text).splitlines()))
    if args.check:
        if old.strip() != table.strip():
            sys.exit(f"results_latest.py: the table at the top of {args.path} is stale; "
                     "run python3 bench/results_latest.py --write")
        return
    if args.write:
        with open(args.path, "w", encoding="utf-8") as f:
            f.write(head + BEGIN + "\n" + table + "\n" + END + tail)
        return
    print(table)


if __name__ == "__main__":
    main()
