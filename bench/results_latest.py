#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# results_latest.py - builds bench/RESULTS.md, the current figures, from the runs in bench/results/.
"""Usage: results_latest.py [--write | --check] [--results DIR] [--page FILE]

bench/results/ holds the history: one markdown file per run (or per session), never edited
once committed. bench/RESULTS.md is generated from it and holds, per machine:
  - DESIGN.md's GPU targets: the newest full gpu_targets.py table of each GPU, as pasted;
  - gkbench beside its peers: the newest figure of each compare.py row per backend, with the
    commit it was measured at;
then a list of every file of the history, newest first.

Adding a run:
  1. Measure, e.g. `gkbench --json run.json && python3 bench/compare.py run.json > out.md`,
     or `python3 bench/gpu_targets.py > out.md` on a GPU machine.
  2. Save it as bench/results/YYYY-MM-DD-<host>-<topic>.md. Its first line is a heading,
     "# YYYY-MM-DD — <host>: <what was measured>" (compare.py and gpu_targets.py print one;
     make it a level-1 heading). Below it, say what changed and anything unusual about the
     machine, and paste the tools' output unchanged: their "- commit ..." lines and tables are
     how this script finds the figures.
  3. Run `python3 bench/results_latest.py --write` and commit both files.
`--check` (scripts/test.sh, so CI) exits 1 when RESULTS.md is not what the history gives.

A gpu_targets.py table counts as full unless its heading says "quick" or "rows" (gpu_targets.py
writes these for --quick and --rows). Sections headed "## Users' data: ..." (the RBF workload
suite's rows) of the newest day's runs that have them are copied whole. Standard library only.
"""
import argparse
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TITLE_MAX = 110  # characters of a run's title in the list of runs
TARGETS_HEAD = "| row | ours | rate | torch | CuPy | hardware bound (this run) | of bound | target | met |"
TARGETS_TITLE = re.compile(r"(\d{4}-\d{2}-\d{2}) — (.+?): DESIGN\.md's GPU targets "
                           r"\(bench/gpu_targets\.py([^)]*)\)")


class Run:
    """One compare.py table: gkbench's rows of one run, with its machine."""

    def __init__(self, path, commit, date):
        self.path, self.commit, self.date = path, commit, date
        self.cuda_name = None
        self.cpus = None
        self.cols = None
        self.rows = []


class Targets:
    """One gpu_targets.py table as pasted: its meta lines and its rows."""

    def __init__(self, path, device, full, commit, date):
        self.path, self.device, self.full, self.commit, self.date = path, device, full, commit, date
        self.lines = []


def parse_file(path, text):
    """The compare.py and gpu_targets.py tables of one file, in file order."""
    runs, targets, run, tgt, title = [], [], None, None, None
    for line in text.splitlines():
        m = TARGETS_TITLE.search(line)
        if m:
            title = m
            continue
        m = re.match(r"- commit (\S+)(.*?), libgpukern \S+, run (\S+), \d+ s", line)
        if m and title:
            full = "quick" not in title.group(3) and "rows" not in title.group(3)
            tgt = Targets(path, title.group(2), full, m.group(1).rstrip(","), m.group(3).rstrip(","))
            targets.append(tgt)
            title = None
            continue
        if tgt is not None:
            if line.startswith("|") and (tgt.lines or line.strip() == TARGETS_HEAD):
                tgt.lines.append(line.rstrip())
            elif tgt.lines:
                tgt = None
            continue
        m = re.match(r"- commit (\S+)(.*?), libgpukern \S+, gkbench run (\S+)", line)
        if m:
            commit = m.group(1) + ("+" if "uncommitted" in m.group(2) else "")
            run = Run(path, commit, m.group(3).rstrip(","))
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
            run = None  # the table ended; what follows belongs to no run until the next one
    return [r for r in runs if r.rows and r.cpus], [t for t in targets if len(t.lines) > 2]


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


def gpu_short(name):
    return re.sub(r"\s*\(CUDA device \d+\)", "", name).replace("NVIDIA ", "")


def machine_labels(runs):
    """A host is known by its CPU count; it is named by the GPU any of its runs saw."""
    gpu = {}
    for r in runs:
        if r.cuda_name:
            gpu.setdefault(r.cpus, gpu_short(r.cuda_name))
    return {c: (f"{gpu[c]} host ({c} CPUs)" if c in gpu else f"{c}-CPU host, no GPU")
            for c in {r.cpus for r in runs}}


def link(path, page_dir):
    return os.path.relpath(path, page_dir)


def runs_line(used, page_dir):
    """'date commit' links to the files the figures come from, newest first."""
    seen, out = set(), []
    for date, commit, path in sorted(used, reverse=True):
        if (date, commit, path) not in seen:
            seen.add((date, commit, path))
            out.append(f"[{date[:10]} {commit}]({link(path, page_dir)})")
    return ", ".join(out)


def gkbench_table(runs, cpus, page_dir):
    """Per row, the newest figure of each backend on the machine with cpus CPUs."""
    mine = [r for r in runs if r.cpus == cpus]
    latest, op_order = {}, []  # (op, dtype, size) -> {backend: (date, cell, run)}
    for r in sorted(mine, key=lambda r: -len(r.rows)):
        for row in r.rows:
            if row["op"] not in op_order:
                op_order.append(row["op"])
    for r in mine:
        anchors = r.cols[6:]
        for row in r.rows:
            cell = f"{row['gkbench']} ({fastest_anchor(row, anchors)}) {r.commit}"
            slot = latest.setdefault((row["op"], row["dtype"], row["size"]), {})
            if row["backend"] not in slot or slot[row["backend"]][0] < r.date:
                slot[row["backend"]] = (r.date, cell, r)
    backends = sorted({b for s in latest.values() for b in s}, key=lambda b: (b != "cuda", b))
    out = ["| op | dtype | size | " + " | ".join(backends) + " |", "|" + "---|" * (3 + len(backends))]
    for key in sorted(latest, key=lambda k: (op_order.index(k[0]), k[1], size_value(k[2]))):
        out.append("| " + " | ".join(list(key) + [latest[key][b][1] if b in latest[key] else ""
                                                  for b in backends]) + " |")
    used = {(v[2].date, v[2].commit, v[2].path) for s in latest.values() for v in s.values()}
    out += ["", f"{len(latest)} rows from {len(used)} runs: {runs_line(used, page_dir)}."]
    return out


def history(paths, page_dir):
    """Every file of the history, newest first by the date in its name, with its title."""
    def key(p):
        m = re.search(r"\d{4}-\d{2}-\d{2}", os.path.basename(p))
        return (m.group(0) if m else "", os.path.basename(p))
    out = []
    for p in sorted(paths, key=key, reverse=True):
        with open(p, encoding="utf-8") as f:
            title = next((ln.lstrip("#").strip() for ln in f if ln.startswith("#")),
                         os.path.basename(p))
        if len(title) > TITLE_MAX:
            title = title[:TITLE_MAX].rsplit(" ", 1)[0] + " …"
        out.append(f"- [{title}]({link(p, page_dir)})")
    return out


def sections(paths, page_dir, prefix, title):
    """The sections whose heading starts with prefix ("## Users' data") of the newest day's runs
    that have them (a GPU's and a CPU's are separate runs), copied whole under title, each run's
    after a line naming it."""
    def key(p):
        m = re.search(r"\d{4}-\d{2}-\d{2}", os.path.basename(p))
        return m.group(0) if m else ""
    out, day = [], None
    for p in sorted(paths, key=key, reverse=True):
        if day is not None and key(p) != day:
            break
        with open(p, encoding="utf-8") as f:
            lines = f.read().splitlines()
        mine, keep = [], False
        for ln in lines:
            if ln.startswith("## "):
                keep = ln.startswith(prefix)
                if keep:
                    mine += ["", "### " + ln[3:], ""]
                continue
            if keep and ln.strip():
                # A table and a paragraph next to each other need a blank line between.
                if mine and mine[-1] and ln.startswith("|") != mine[-1].startswith("|"):
                    mine.append("")
                mine.append(ln)
        if mine:
            day = key(p)
            out += ["", f"From [{os.path.basename(p)}]({link(p, page_dir)}), which says how they "
                    "were measured."] + mine
    if not out:
        return []
    return ["", title] + out


def build_page(results_dir, page_dir):
    paths = sorted(os.path.join(results_dir, n) for n in os.listdir(results_dir)
                   if n.endswith(".md") and n != "README.md")
    runs, targets = [], []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            r, t = parse_file(p, f.read())
        runs += r
        targets += t
    labels = machine_labels(runs)
    out = ["<!-- SPDX-License-Identifier: MIT -->",
           "<!-- Generated by bench/results_latest.py from bench/results/: do not edit. -->",
           "# Benchmark results", "",
           "The current figures per machine, built from the history of runs in "
           f"[results/]({link(results_dir, page_dir)}/) (listed at the end, newest first).",
           "How the runs are made and what each column means: "
           f"[results/README.md]({link(os.path.join(results_dir, 'README.md'), page_dir)}).",
           "To add a run, save the tools' output as `bench/results/YYYY-MM-DD-<host>-<topic>.md` "
           "and run", "`python3 bench/results_latest.py --write` (its docstring says more); CI "
           "checks this page with `--check`."]
    gpus = {}
    for t in targets:
        if t.full and (t.device not in gpus or gpus[t.device].date < t.date):
            gpus[t.device] = t
    for cpus in sorted(labels, key=lambda c: -c):
        out += ["", f"## {labels[cpus]}"]
        name = next((gpu_short(r.cuda_name) for r in runs if r.cpus == cpus and r.cuda_name), None)
        for dev, t in sorted(gpus.items()):
            if name and gpu_short(dev) == name:
                out += ["", f"### DESIGN.md's GPU targets on {dev}", "",
                        f"The newest full `bench/gpu_targets.py` run: {t.date}, commit {t.commit} "
                        f"([run]({link(t.path, page_dir)})). Ratios in brackets: the peer's time "
                        "over ours (above 1: ours is faster).", ""] + t.lines
        out += ["", "### gkbench beside NumPy, scikit-learn, CuPy and PyTorch", "",
                "Each cell: gkbench's median per call, in brackets the fastest peer's ratio in "
                "that run (peer time / ours, above 1: libgpukern is faster), then the commit "
                "(+: uncommitted changes); the newest figure of each row and backend.", ""]
        out += gkbench_table(runs, cpus, page_dir)
    out += sections(paths, page_dir, "## Users' data", "## Users' data (the RBF workload suite's rows)")
    out += sections(paths, page_dir, "## Per-call cost", "## Per-call cost of the Python package")
    out += ["", "## All runs", ""] + history(paths, page_dir)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(HERE, "results"), help="the history")
    ap.add_argument("--page", default=os.path.join(HERE, "RESULTS.md"), help="the page")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="write the page")
    g.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = ap.parse_args()
    page = build_page(os.path.abspath(args.results), os.path.dirname(os.path.abspath(args.page)))
    if args.check:
        try:
            with open(args.page, encoding="utf-8") as f:
                current = f.read()
        except OSError as e:
            sys.exit(f"results_latest.py: cannot read {args.page}: {e.strerror}")
        if current != page:
            sys.exit(f"results_latest.py: {args.page} is not what {args.results} gives; "
                     "run python3 bench/results_latest.py --write and commit it")
        return
    if args.write:
        with open(args.page, "w", encoding="utf-8") as f:
            f.write(page)
        return
    sys.stdout.write(page)


if __name__ == "__main__":
    main()
