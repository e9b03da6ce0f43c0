#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cpu_vm_acceptance.py - issue 15's criteria on a small machine, in one command: loaded and per-core.
"""Issue 15's acceptance on a small CPU-only machine (the 2-core VM), in one go.

    python3 bench/cpu_vm_acceptance.py --python /path/to/venv/bin/python [--before eaa3a2f]
        [--rounds 21] [--work /tmp/gk-vm-acceptance]

Builds this tree (gpukern, cpu_ab) and the commit --before (gpukern), CPU only, Release, -j2,
under --work (again only what changed when --work holds them from an earlier run), then runs:
  1. bench/loaded_cpu.sh: gkbench --quick's CPU cases through bench/cpu_ab, which times two
     sides in one process in alternating ~10 ms batches over --rounds rounds: unloaded, the
     --before build against this one (no op slower: median new / old over 1.05 with three
     rounds in four slower is a regression), then with a busy loop on the last CPU a
     one-thread context against a default one (every op at most 1.25x);
  2. bench/cpu_per_core.py with --python (NumPy in the same process, one thread, ours and
     NumPy alternating): rng_normal and exp, float32 and float64, at least as fast as NumPy.
Prints both scripts' tables and their verdicts; about 5 minutes on the 2-core VM with the
builds. An idle machine still gives the cleanest figures, but load that comes and goes moves
both sides of each pair alike. Nothing is installed.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def build(src, out, targets):
    sh(["cmake", "-S", src, "-B", out, "-DCMAKE_BUILD_TYPE=Release", "-DGK_WITH_CUDA=OFF"],
       stdout=subprocess.DEVNULL)
    sh(["cmake", "--build", out, "-j2", "--target", *targets], stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True, help="a Python with NumPy (for cpu_per_core.py)")
    ap.add_argument("--before", default="eaa3a2f", help="commit the unloaded column compares to")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--work", default="/tmp/gk-vm-acceptance")
    ap.add_argument("--n", type=int, default=10_000_000, help="elements for cpu_per_core.py")
    args = ap.parse_args()
    new, old, old_src = (os.path.join(args.work, v) for v in ("new", "old", "old-src"))
    os.makedirs(args.work, exist_ok=True)
    build(ROOT, new, ["gpukern", "cpu_ab"])
    if not os.path.isdir(old_src):
        os.makedirs(old_src)
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.before], check=True,
                                 stdout=subprocess.PIPE).stdout
        subprocess.run(["tar", "-x", "-C", old_src], input=archive, check=True)
    build(old_src, old, ["gpukern"])
    print("\n== (a) loaded VM: bench/loaded_cpu.sh", flush=True)
    sh([os.path.join(HERE, "loaded_cpu.sh"), new, old, os.path.join(args.work, "loaded")],
       env={**os.environ, "ROUNDS": str(args.rounds)})
    print("\n== (b) one thread against NumPy: bench/cpu_per_core.py", flush=True)
    sh([args.python, os.path.join(HERE, "cpu_per_core.py"), "--n", str(args.n)],
       env={**os.environ, "GPUKERN_LIBRARY": os.path.join(new, "lib", "libgpukern.so.1")})


if __name__ == "__main__":
    sys.exit(main())
