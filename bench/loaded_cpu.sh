#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# loaded_cpu.sh - gkbench's quick CPU cases with one core kept busy by another process (issue 15).
#
#   bench/loaded_cpu.sh BUILD [OLD_BUILD] [OUT_DIR]
#
# BUILD holds bench/cpu_ab and lib/libgpukern.so.1; OLD_BUILD (a build of the commit to compare
# against, e.g. eaa3a2f) holds lib/libgpukern.so.1. Runs, in one go on this machine:
#   1. unloaded, with OLD_BUILD: cpu_ab OLD NEW, default contexts: new / old per op;
#   2. loaded: a busy loop pinned to the last CPU, then cpu_ab NEW:1 NEW, a one-thread and a
#      default context of the new build: default / one-thread per op;
# cpu_ab times the two sides in one process, a ~10 ms batch of calls on each in turn, ROUNDS
# rounds (default 21), and gives per op the median of the rounds' ratios with its quartiles.
# Verdicts: loaded, every op's median default / one-thread <= 1.25; unloaded, an op is slower
# only when its median new / old is over 1.05 and its first quartile over 1 (three rounds in
# four slower). Load from other processes moves both sides of a pair alike; what it cannot hide
# is a team the new build shrinks because cores are busy, which the threads column shows.
set -euo pipefail
build=${1:?usage: loaded_cpu.sh BUILD [OLD_BUILD] [OUT_DIR]}
old=${2:-}
out=${3:-$(mktemp -d)}
rounds=${ROUNDS:-21}
mkdir -p "$out"
ab() { "$build/bench/cpu_ab" "$@" --rounds "$rounds"; }
lib=lib/libgpukern.so.1

if [ -n "$old" ]; then
  echo "unloaded: A = old, B = new (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  ab "$old/$lib" "$build/$lib" | tee "$out/unloaded.txt"
fi

last=$(($(nproc) - 1))
taskset -c "$last" sh -c 'while :; do :; done' &
busy=$!
trap 'kill $busy 2>/dev/null || true' EXIT
sleep 1 # let the load show in /proc/stat
echo "loaded (a busy loop on CPU $last): A = one thread, B = default"
ab "$build/$lib:1" "$build/$lib" | tee "$out/loaded.txt"
kill $busy
trap - EXIT

python3 - "$out" "${old:+1}" <<'PY'
import sys
out, have_old = sys.argv[1], sys.argv[2] == "1"
def rows(name):
    r = []
    for line in open(f"{out}/{name}.txt"):
        f = line.split()
        if len(f) == 9 and not line.startswith(("#", "op ")):
            r.append((" ".join(f[:3]), float(f[5]), float(f[6]), float(f[7]), f[8]))
    return r
loaded = rows("loaded")
worst = max(loaded, key=lambda r: r[1])
print(f"\n(a) loaded: worst default / one-thread = {worst[1]:.2f} ({worst[0]}, quartiles "
      f"{worst[2]:.2f}-{worst[3]:.2f}): {'meets' if worst[1] <= 1.25 else 'MISSES'} <= 1.25")
if have_old:
    unl = rows("unloaded")
    slower = [r for r in unl if r[1] > 1.05 and r[2] > 1.0]
    print("unloaded new / old: " + ("no op slower (median > 1.05 with q1 > 1)" if not slower else
          "slower: " + ", ".join(f"{r[0]} {r[1]:.2f}x (q1 {r[2]:.2f}, threads old/new {r[4]})"
                                 for r in slower)))
    fewer = [r[0] for r in unl if int(r[4].split("/")[1]) < int(r[4].split("/")[0])]
    if fewer:
        print("new ran fewer threads than old (cores it found busy): " + ", ".join(fewer))
PY
echo "raw tables: $out"
