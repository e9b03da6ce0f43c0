/* SPDX-License-Identifier: MIT */
/* auto_replay.c - AUTO's placement replayed on a sweep's measured times, without a GPU. */
/*
 *     auto_replay CALIBRATION SWEEP_CSV [--cold FACTOR]
 *
 * Reads the cost model a sweep calibrated (its GK_CALIBRATION file) and the sweep's CSV (gkbench
 * --sweep --csv), and runs the placement model (src/placement.c, compiled in) through the
 * sweep's protocol for the AUTO context, size after size in one history as the sweep's context
 * has it: warm-up calls, batches of at least 2 ms after an untimed eighth, a shorter batch
 * sizing the next, the median of the batches. A call takes what the CSV says a call took on
 * the CPU or the CUDA context, the first one on a backend after the other's FACTOR times that
 * (1.5 unless given: a cold team, staging memory). Prints per size the replayed AUTO time over
 * the faster backend's, the measured one, and where the timed calls ran: what the placement
 * rules alone make of those times, which separates their misses from the machine's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#define MIN_BATCH_S 2e-3
#define POINT_BUDGET_S 0.3
#define MIN_REPS 10 /* as bench/sweep.c: even */
#define MAX_REPS 62

typedef struct world {
    double t[2]; /* seconds a call takes: CPU, GPU */
    double cold;
    int last; /* backend of the previous call: 0 CPU, 1 GPU, -1 none */
} world;

/* One AUTO call: placed, run in the simulated world, observed. Returns its seconds. */
static double call(const gk_cost_model *m, gk_placement_history *h, const gk_workload *w, double in,
                   double out, world *sim, int *on)
{
    gk_placement p = gk__place_learned(m, h, w, in, out);
    int g = p.backend == GK_BACKEND_CUDA;
    double s = sim->t[g] * (sim->last >= 0 && sim->last != g ? sim->cold : 1.0);
    sim->last = g;
    gk__placement_observe(h, w, p, s);
    if (on != NULL)
        on[g]++;
    return s;
}

static double batch(const gk_cost_model *m, gk_placement_history *h, const gk_workload *w,
                    double in, double out, world *sim, int calls, int *on)
{
    double sum = 0.0;
    for (int i = 0; i < calls; i++)
        sum += call(m, h, w, in, out, sim, on);
    return sum / calls;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The workload and bytes the dispatcher sees for a sweep row (float32, d = 20). */
static int workload(const char *op, double m, double n, double d, gk_workload *w, double *in,
                    double *out)
{
    if (strcmp(op, "add") == 0) {
        *w = (gk_workload){GK_WORK_STREAM, 0, 12.0 * n};
        *in = 8.0 * n, *out = 4.0 * n;
    } else if (strcmp(op, "rng_uniform") == 0) {
        *w = (gk_workload){GK_WORK_STREAM, 0, 4.0 * n};
        *in = 0.0, *out = 4.0 * n;
    } else if (strcmp(op, "rbf_rows") == 0) {
        *w = (gk_workload){GK_WORK_RBF_ROWS, 0, 8.0 * n * d};
        *in = 8.0 * n * d, *out = 4.0 * n;
    } else if (strcmp(op, "rbf_matrix") == 0) {
        *w = (gk_workload){GK_WORK_RBF_PAIRS, 0, m * n * d};
        *in = 4.0 * (m + n) * d + 0.0, *out = 4.0 * m * n;
    } else if (strcmp(op, "gemm") == 0) {
        *w = (gk_workload){GK_WORK_GEMM, 0, 2.0 * n * n * n};
        *in = 12.0 * n * n, *out = 4.0 * n * n;
    } else {
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    double cold = 1.5;
    if (argc == 5 && strcmp(argv[3], "--cold") == 0)
        cold = atof(argv[4]);
    else if (argc != 3) {
        fprintf(stderr, "usage: %s CALIBRATION SWEEP_CSV [--cold FACTOR]\n", argv[0]);
        return EXIT_FAILURE;
    }
    gk_cost_model m;
    gk__cost_model_defaults(&m);
    char why[256];
    if (!gk__cost_model_load(&m, argv[1], why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", argv[1], why);
        return EXIT_FAILURE;
    }
    FILE *f = fopen(argv[2], "r");
    if (f == NULL) {
        perror(argv[2]);
        return EXIT_FAILURE;
    }
    static gk_placement_history h;
    char line[1024];
    int ok = 0, rows = 0;
    printf("%-11s %10s %11s %11s %11s  replay/best measured/best  timed calls cpu/gpu\n", "op",
           "size", "cpu ms", "cuda ms", "replay ms");
    while (fgets(line, sizeof line, f) != NULL) {
        char op[32];
        double size, mm, n, d, cpu_ms, cuda_ms, auto_ms;
        if (line[0] == '#' || sscanf(line, "%31[^,],%lf,%*[^,],%lf,%lf,%lf,%lf,%lf,%lf", op, &size,
                                     &mm, &n, &d, &cpu_ms, &cuda_ms, &auto_ms) != 8)
            continue;
        gk_workload w;
        double in, out;
        if (!workload(op, mm, n, d, &w, &in, &out))
            continue;
        world sim = {{cpu_ms * 1e-3, cuda_ms * 1e-3}, cold, -1};
        /* The sweep's warm-up: one call, then up to three more, the fastest sizing the batches. */
        double est = batch(&m, &h, &w, in, out, &sim, 1, NULL), fastest = INFINITY;
        for (int i = 0; i < 3 && est < POINT_BUDGET_S / 4; i++)
            fastest = fmin(fastest, batch(&m, &h, &w, in, out, &sim, 1, NULL));
        if (fastest < INFINITY)
            est = fastest;
        int calls = (int)fmax(1.0, ceil(MIN_BATCH_S / est));
        double sum = calls * est;
        for (int k = 0; k < 2; k++)
            sum += ceil(MIN_BATCH_S / sim.t[k]) * sim.t[k];
        int reps = (int)fmin(MAX_REPS, fmax(MIN_REPS, floor(POINT_BUDGET_S / sum)));
        reps += reps % 2;
        double v[MAX_REPS];
        int on[2] = {0, 0};
        for (int r = 0; r < reps; r++) {
            sim.last = -1; /* the other contexts ran in between */
            batch(&m, &h, &w, in, out, &sim, calls / 8 + 1, NULL);
            v[r] = batch(&m, &h, &w, in, out, &sim, calls, on);
            if (calls * v[r] < MIN_BATCH_S)
                calls = (int)ceil(MIN_BATCH_S / v[r]);
        }
        qsort(v, (size_t)reps, sizeof v[0], cmp);
        double best = fmin(cpu_ms, cuda_ms), replay = v[reps / 2] * 1e3;
        printf("%-11s %10.0f %11.4g %11.4g %11.4g  %11.3f %12.3f  %d/%d\n", op, size, cpu_ms,
               cuda_ms, replay, replay / best, auto_ms / best, on[0], on[1]);
        rows++;
        ok += replay / best <= 1.1;
    }
    fclose(f);
    printf("replayed: %d of %d sizes within 1.1x\n", ok, rows);
    return EXIT_SUCCESS;
}
