#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cpu_vm_acceptance.py - issue 15's criteria on a small machine, in one command: loaded and per-core.
"""Issue 15's acceptance on a small CPU-only machine (the 2-core VM), in one go.

    python3 bench/cpu_vm_acceptance.py --python /path/to/venv/bin/python [--before eaa3a2f]
        [--rounds 3] [--work /tmp/gk-vm-acceptance]

Builds this tree and the commit --before (CPU only, Release, -j2, under --work), then runs:
  1. bench/loaded_cpu.sh: every `gkbench --quick --backend cpu` op with a default context
     against a one-thread context while a busy loop holds the last CPU (at most 1.25x), and
     unloaded against the --before build (no slower; within ~5 % is this VM's noise);
  2. bench/cpu_per_core.py with --python (NumPy in the same process, one thread, ours and
     NumPy alternating): rng_normal and exp, float32 and float64, at least as fast as NumPy.
Prints both scripts' tables and their verdicts. Needs an otherwise idle machine: other load
makes the one-thread and default columns differ for reasons of its own. Nothing is installed.
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
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="/tmp/gk-vm-acceptance")
    ap.add_argument("--n", type=int, default=10_000_000, help="elements for cpu_per_core.py")
    args = ap.parse_args()
    new, old, old_src = (os.path.join(args.work, v) for v in ("new", "old", "old-src"))
    os.makedirs(args.work, exist_ok=True)
    build(ROOT, new, ["gkbench"])
    if not os.path.isdir(old_src):
        os.makedirs(old_src)
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.before], check=True,
                                 stdout=subprocess.PIPE).stdout
        subprocess.run(["tar", "-x", "-C", old_src], input=archive, check=True)
    build(old_src, old, ["gkbench"])
    print("\n== (a) loaded VM: bench/loaded_cpu.sh", flush=True)
    sh([os.path.join(HERE, "loaded_cpu.sh"), new, old, os.path.join(args.work, "loaded")],
       env={**os.environ, "ROUNDS": str(args.rounds)})
    print("\n== (b) one thread against NumPy: bench/cpu_per_core.py", flush=True)
    sh([args.python, os.path.join(HERE, "cpu_per_core.py"), "--n", str(args.n)],
       env={**os.environ, "GPUKERN_LIBRARY": os.path.join(new, "lib", "libgpukern.so.1")})


if __name__ == "__main__":
    sys.exit(main())
