#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# test_results_latest.py - bench/results_latest.py on a made-up history: what the page takes.
"""Builds a history of four runs in a temporary directory and checks the page: the newest
compare.py figure per row and backend wins, a quick or --rows gpu_targets.py table never
becomes the targets table, the users' data of the newest day's runs are copied, every file is
listed, and --check fails on a stale page.
Standard library only: python3 test_results_latest.py PATH/TO/results_latest.py"""
import os
import subprocess
import sys
import tempfile

COMPARE = """# {date} — box: a compare.py run

## {date} — box, full run

- commit {commit}, libgpukern 1.2.0, gkbench run {date}T10:00:00Z
- devices: cpu: CPU (4 threads), cuda: NVIDIA Test GPU; load average when gkbench started: 0 0 0
- machine: x86_64, 4 logical CPUs, Python 3.11, numpy 2.0
- time: median per call; ratio = anchor time / ours (above 1: libgpukern is faster)

| op | dtype | size | backend | gkbench | rate | numpy | cupy | torch |
|---|---|---|---|---|---|---|---|---|
| add | float32 | 1e6 | cpu | {cpu} | 1 GB/s | 2.00 ms (2.00x) |  |  |
| add | float32 | 1e6 | cuda | {cuda} | 1 GB/s |  | 1.00 us (1.00x) |  |
"""
HEAD = ("| row | ours | rate | torch | CuPy | hardware bound (this run) | of bound | target | met |\n"
        "|---|---|---|---|---|---|---|---|---|\n")
TARGETS = """# {date} — box: a gpu_targets.py run

## {date} — NVIDIA Test GPU (CUDA device 0): DESIGN.md's GPU targets (bench/gpu_targets.py{how})

- commit {commit}, libgpukern 1.2.0, run {date}T12:00:00Z, 100 s

""" + HEAD + "| add f32 2.5e8 | {ours} | 4 TB/s | 1 ms (1.0×) | 1 ms (1.0×) | 1 ms | 100 % | t | yes |\n"


USERS = """# a workload suite run

## Users' data: rbf_matrix on the {what}

A paragraph before the table.
| shape | ours |
|---|---|
| 4096 | {value} |

## Not users' data

| other | {value}-other |
"""


def main():
    script = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        res = os.path.join(tmp, "results")
        os.mkdir(res)
        files = {
            "2026-01-01-box-old.md": COMPARE.format(date="2026-01-01", commit="aaaaaaa",
                                                    cpu="9.00 ms", cuda="9.00 us"),
            "2026-01-02-box-new.md": COMPARE.format(date="2026-01-02", commit="bbbbbbb",
                                                    cpu="1.00 ms", cuda="1.00 us"),
            "2026-01-03-box-targets.md": TARGETS.format(date="2026-01-03", commit="ccccccc",
                                                        how="", ours="700 µs"),
            "2026-01-04-box-quick.md": TARGETS.format(date="2026-01-04", commit="ddddddd",
                                                      how=", quick", ours="999 µs"),
            "2026-01-05-box-rows.md": TARGETS.format(date="2026-01-05", commit="eeeeeee",
                                                     how=", rows add", ours="888 µs"),
            "notes-2026-01-06.md": "# 2026-01-06 — a note, not a run\n",
            "2026-01-02-gpu-suite.md": USERS.format(what="GPU", value="old-gpu"),
            "2026-01-05-gpu-suite.md": USERS.format(what="GPU", value="new-gpu"),
            "2026-01-05-host-cpu-suite.md": USERS.format(what="CPU", value="new-cpu"),
        }
        for name, text in files.items():
            with open(os.path.join(res, name), "w", encoding="utf-8") as f:
                f.write(text)
        page = os.path.join(tmp, "RESULTS.md")
        run = [sys.executable, script, "--results", res, "--page", page]
        subprocess.run(run + ["--write"], check=True)
        text = open(page, encoding="utf-8").read()
        failures = []

        def expect(cond, what):
            if not cond:
                failures.append(what)
        expect("## Test GPU host (4 CPUs)" in text, "the machine is named by its GPU")
        expect("| add | float32 | 1e6 | 1.00 us (1.00x cupy) bbbbbbb | 1.00 ms (2.00x numpy) "
               "bbbbbbb |" in text, "the newer compare.py run's figures win")
        expect("9.00 ms" not in text, "the older run's figures are gone")
        expect("commit ccccccc" in text and "700 µs" in text, "the full targets table is taken")
        expect("999 µs" not in text and "888 µs" not in text, "quick and --rows tables are not")
        for name in files:
            expect(f"(results/{name})" in text, f"{name} is listed")
        expect(text.index("notes-2026-01-06") < text.index("2026-01-05-box-rows"),
               "the list is newest first")
        expect("new-gpu" in text and "new-cpu" in text and "old-gpu" not in text,
               "the users' data of each of the newest day's runs, not an older day's")
        expect("-other" not in text, "only the users' data sections")
        expect("A paragraph before the table.\n\n| shape" in text, "a blank line before a table")
        expect(subprocess.run(run + ["--check"]).returncode == 0, "--check passes when current")
        with open(os.path.join(res, "2026-01-07-box-later.md"), "w", encoding="utf-8") as f:
            f.write("# 2026-01-07 — box: a later run\n")
        expect(subprocess.run(run + ["--check"], capture_output=True).returncode == 1,
               "--check fails on a stale page")
    for f in failures:
        print("FAILED:", f)
    print("ok" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
