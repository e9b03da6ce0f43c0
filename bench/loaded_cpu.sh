#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# loaded_cpu.sh - gkbench --quick on the CPU with one core kept busy by another process (issue 15).
#
#   bench/loaded_cpu.sh BUILD [OLD_BUILD] [OUT_DIR]
#
# BUILD (and OLD_BUILD, a build of the commit to compare against, e.g. eaa3a2f) hold
# bench/gkbench. Runs, in one go on this machine:
#   1. unloaded: gkbench --quick --backend cpu, default context (and OLD_BUILD's, interleaved);
#   2. loaded: a busy loop pinned to the last CPU, then the default context and a
#      --threads 1 context, interleaved, ROUNDS times each;
# and prints per op: loaded default / loaded one-thread (acceptance: <= 1.25 for every op) and
# unloaded new / old (acceptance: no slower; ratios within ~5% are run-to-run noise on a VM).
# Times are the median over rounds of gkbench's own medians. Needs an otherwise idle machine.
set -euo pipefail
build=${1:?usage: loaded_cpu.sh BUILD [OLD_BUILD] [OUT_DIR]}
old=${2:-}
out=${3:-$(mktemp -d)}
rounds=${ROUNDS:-3}
mkdir -p "$out"
gk() { "$1/bench/gkbench" --quick --backend cpu "${@:3}" --json "$out/$2.json" > /dev/null; }

for r in $(seq "$rounds"); do
  gk "$build" "unloaded-new-$r"
  [ -z "$old" ] || gk "$old" "unloaded-old-$r"
done

last=$(($(nproc) - 1))
taskset -c "$last" sh -c 'while :; do :; done' &
busy=$!
trap 'kill $busy 2>/dev/null || true' EXIT
sleep 1 # let the load show in /proc/stat
for r in $(seq "$rounds"); do
  gk "$build" "loaded-default-$r"
  gk "$build" "loaded-one-$r" --threads 1
done
kill $busy
trap - EXIT

python3 - "$out" "$rounds" "${old:+1}" <<'PY'
import json, statistics, sys
out, rounds, have_old = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
def load(name):
    runs = [json.load(open(f"{out}/{name}-{r}.json"))["results"] for r in range(1, rounds + 1)]
    keys = [(x["op"], x["dtype"], x["size"]) for x in runs[0] if x["status"] == "ok"]
    med = {}
    for k in keys:
        v = [x["median_s"] for run in runs for x in run if (x["op"], x["dtype"], x["size"]) == k]
        med[k] = statistics.median(v)
    return keys, med
keys, dflt = load("loaded-default")
_, one = load("loaded-one")
_, new = load("unloaded-new")
old = load("unloaded-old")[1] if have_old else {}
print(f"{'op':<12} {'dtype':<8} {'size':<16} {'loaded dflt':>12} {'loaded 1thr':>12} {'ratio':>6}"
      f" {'unloaded':>10} {'before':>10} {'new/old':>8}")
worst, slower = 0.0, []
for k in keys:
    ratio = dflt[k] / one[k]
    worst = max(worst, ratio)
    line = (f"{k[0]:<12} {k[1]:<8} {k[2]:<16} {dflt[k]*1e3:10.4f}ms {one[k]*1e3:10.4f}ms "
            f"{ratio:6.2f} {new[k]*1e3:8.4f}ms")
    if k in old:
        no = new[k] / old[k]
        line += f" {old[k]*1e3:8.4f}ms {no:8.2f}"
        if no > 1.05:
            slower.append(f"{k[0]} {k[1]} {k[2]} ({no:.2f}x)")
    print(line)
print(f"\n(a) loaded: worst default / one-thread = {worst:.2f} "
      f"({'meets' if worst <= 1.25 else 'MISSES'} <= 1.25)")
if have_old:
    print("unloaded vs before: " + ("no op more than 5% slower" if not slower
                                    else "more than 5% slower: " + ", ".join(slower)))
PY
echo "raw gkbench JSON: $out"
