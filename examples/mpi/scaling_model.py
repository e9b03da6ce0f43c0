# SPDX-License-Identifier: MIT
"""The strong-scaling model of docs/scaling.md: gk_mpi_rbf_matvec's ring on P GPUs.

    python3 scaling_model.py [--rate-1e6 0.389] [--rate-1e5 4.373e-3] [--step-overhead-us 30]

Prints the tables of docs/scaling.md (markdown). Every input is a flag, so measured values
replace the assumed ones as they come in.

Per product, each of the P ranks runs P steps. Step k multiplies the rank's n/P rows of x by
the shard of n/P rows of y and w it holds (t_c = (n/P)^2 / R(n/P) on one GPU) while the next
shard, n/P rows of d + 1 floats, travels one hop of the ring (t_m = bytes / B + latency,
overlapped with t_c). A step costs max(t_c, t_m) + o, o being the fixed cost of a step that
does not overlap (kernel launches, posting and completing the messages, one stream
synchronization; with host staging also the copy of the received shard to the GPU). Each call
adds three small collectives (argument agreement, shard sizes, final status).
"""

import argparse
import math


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate-1e6", type=float, default=0.389,
                    help="seconds of gk_rbf_matvec f32 1e6^2 x 3 on one GPU (measured, docs/scaling.md)")
    ap.add_argument("--rate-1e5", type=float, default=4.373e-3,
                    help="seconds of gk_rbf_matvec f32 1e5^2 x 3 on one GPU (measured, docs/scaling.md)")
    ap.add_argument("--d", type=int, default=3)
    ap.add_argument("--nvlink-gbs", type=float, default=350.0,
                    help="achieved NVLink bandwidth per direction per GPU, GB/s (assumed)")
    ap.add_argument("--ib-gbs", type=float, default=45.0,
                    help="achieved InfiniBand NDR bandwidth per GPU (one 400 Gb/s NIC each), GB/s (assumed)")
    ap.add_argument("--pcie-gbs", type=float, default=20.0,
                    help="host-to-device copy of a received shard without CUDA-aware MPI, GB/s (assumed)")
    ap.add_argument("--step-overhead-us", type=float, default=30.0,
                    help="fixed cost of one ring step, microseconds (assumed)")
    ap.add_argument("--collective-us", type=float, default=5.0,
                    help="cost per log2(P) of one small collective, microseconds (assumed)")
    ap.add_argument("--gpus-per-node", type=int, default=8)
    a = ap.parse_args()

    r_big, r_small = 1e12 / a.rate_1e6, 1e10 / a.rate_1e5

    def rate(rows):
        """Pairs per second on one GPU for a rows x rows block: the two measured points, log-linear
        between them, flat outside (below 1e5 rows this is optimistic; see the text)."""
        if rows >= 1e6:
            return r_big
        if rows <= 1e5:
            return r_small
        return r_small + (r_big - r_small) * math.log10(rows / 1e5)

    def model(n, p, staged):
        rows = n / p
        tc = rows * rows / rate(rows)
        if p == 1:
            return {"T": tc, "E": 1.0, "busy": 0.0, "exposed": 0.0, "tc": tc, "tm": 0.0}
        inside = p <= a.gpus_per_node
        bw = (a.nvlink_gbs if inside else a.ib_gbs) * 1e9
        lat = 3e-6 if inside else 5e-6
        nbytes = rows * (a.d + 1) * 4
        tm = nbytes / bw + lat
        step = max(tc, tm) + a.step_overhead_us * 1e-6
        if staged:
            step += nbytes / (a.pcie_gbs * 1e9)
        t = p * step + 3 * a.collective_us * 1e-6 * math.log2(p)
        t1 = n * n / rate(n)
        return {"T": t, "E": t1 / (p * t), "busy": p * tm / t, "exposed": (t - p * tc) / t,
                "tc": tc, "tm": tm}

    def table(n, ps):
        print("\n**n = %.0e** (one GPU: %.3g s per product)\n" % (n, model(n, 1, False)["T"]))
        print("| GPUs | rows per GPU | compute per step | shard transfer | time per product | "
              "efficiency | link busy | not overlapped | efficiency, host staging |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for p in ps:
            m, s = model(n, p, False), model(n, p, True)
            print("| %d | %.3g | %s | %s | %s | %.1f%% | %.2f%% | %.2f%% | %.1f%% |" % (
                p, n / p, fmt(m["tc"]), fmt(m["tm"]) if p > 1 else "-", fmt(m["T"]),
                100 * m["E"], 100 * m["busy"], 100 * m["exposed"], 100 * s["E"]))

    def first_below(n, staged, limit=0.8):
        p = 1
        while model(n, p, staged)["E"] >= limit and p < 1 << 20:
            p *= 2
        return p

    print("Rate: %.3g pairs/s at 1e6 rows, %.3g at 1e5 (d = %d); NVLink %.0f GB/s, IB %.0f GB/s, "
          "PCIe staging %.0f GB/s, step overhead %.0f us"
          % (r_big, r_small, a.d, a.nvlink_gbs, a.ib_gbs, a.pcie_gbs, a.step_overhead_us))
    table(1e6, [1, 2, 4, 8])
    table(1e7, [8, 16, 32, 64, 128, 256, 512])
    table(1e8, [8, 16, 32, 64, 128, 256, 512])
    print("\n| n | efficiency first below 80% at (CUDA-aware) | (host staging) |\n|---:|---:|---:|")
    for n in (1e6, 1e7, 1e8):
        print("| %.0e | %d GPUs | %d GPUs |" % (n, first_below(n, False), first_below(n, True)))


def fmt(seconds):
    if seconds >= 1:
        return "%.3g s" % seconds
    if seconds >= 1e-3:
        return "%.3g ms" % (1e3 * seconds)
    return "%.3g us" % (1e6 * seconds)


if __name__ == "__main__":
    main()
