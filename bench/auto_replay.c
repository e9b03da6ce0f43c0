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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_file.h"
#include "placement.h"

#define MIN_BATCH_S 2e-3
#define POINT_BUDGET_S 0.3
#define MIN_REPS 10 /* as bench/sweep.c: even */
#define MAX_REPS 62

typedef struct world {
    double t[2]; /* seconds a call takes: CPU, GPU */
    double cold; /* the factor on the first `warm` calls after a switch of backend */
    int warm;
    double noise;            /* sigma of a log-normal factor on the times AUTO observes */
    double burst_p, burst_f; /* with probability burst_p an observed time is burst_f times */
    uint64_t rng;
    int last;  /* backend of the previous call: 0 CPU, 1 GPU, -1 none */
    int since; /* calls on it since the switch */
} world;

/* Uniform in (0, 1) from a 64-bit xorshift. */
static double uniform(world *sim)
{
    sim->rng ^= sim->rng << 13;
    sim->rng ^= sim->rng >> 7;
    sim->rng ^= sim->rng << 17;
    return ((double)(sim->rng >> 11) + 0.5) / 9007199254740992.0;
}

/* The factor noise and bursts put on one observed time. */
static double disturbance(world *sim)
{
    double f = 1.0;
    if (sim->noise > 0.0) {
        double u = uniform(sim), v = uniform(sim);
        f *= exp(sim->noise * sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
    }
    if (sim->burst_p > 0.0 && uniform(sim) < sim->burst_p)
        f *= sim->burst_f;
    return f;
}

/* One AUTO call: placed, run in the simulated world, observed (disturbed). Returns its seconds
 * as the world gave them, undisturbed: what the placement made of the call. */
static double call(const gk_cost_model *m, gk_placement_history *h, const gk_workload *w, double in,
                   double out, world *sim, int *on)
{
    gk_placement p = gk__place_learned(m, h, w, in, out);
    int g = p.backend == GK_BACKEND_CUDA;
    sim->since = sim->last == g ? sim->since + 1 : 0;
    double s = sim->t[g] * (sim->last >= 0 && sim->since < sim->warm ? sim->cold : 1.0);
    sim->last = g;
    gk__placement_observe(h, w, p, s * disturbance(sim));
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
        *w = (gk_workload){GK_WORK_RNG_UNIFORM, 0, 4.0 * n};
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

/* A sweep row as the CSV gives it. */
typedef struct row {
    char op[32];
    double size, m, n, d, cpu_ms, cuda_ms, auto_ms;
} row;

#define MAX_ROWS 128

/* Replays the sweep's rows in one history, as the sweep's AUTO context sees them; per row, the
 * replayed time over the faster backend's into ratio[] and the timed calls by backend into
 * on[][2] (NULL: not wanted). Returns how many rows were within 1.1x. */
static int replay(const gk_cost_model *m, const row *rows, int nrows, world proto, double *ratio,
                  int (*on)[2])
{
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    int ok = 0;
    for (int r0 = 0; r0 < nrows; r0++) {
        const row *q = &rows[r0];
        gk_workload w;
        double in, out;
        workload(q->op, q->m, q->n, q->d, &w, &in, &out);
        world sim = proto;
        sim.t[0] = q->cpu_ms * 1e-3;
        sim.t[1] = q->cuda_ms * 1e-3;
        sim.last = -1;
        /* The sweep's warm-up: one call, then up to three more, the fastest sizing the batches. */
        double est = batch(m, &h, &w, in, out, &sim, 1, NULL), fastest = INFINITY;
        for (int i = 0; i < 3 && est < POINT_BUDGET_S / 4; i++)
            fastest = fmin(fastest, batch(m, &h, &w, in, out, &sim, 1, NULL));
        if (fastest < INFINITY)
            est = fastest;
        int calls = (int)fmax(1.0, ceil(MIN_BATCH_S / est));
        double sum = calls * est;
        for (int k = 0; k < 2; k++)
            sum += ceil(MIN_BATCH_S / sim.t[k]) * sim.t[k];
        int reps = (int)fmin(MAX_REPS, fmax(MIN_REPS, floor(POINT_BUDGET_S / sum)));
        reps += reps % 2;
        double v[MAX_REPS];
        int ran[2] = {0, 0};
        for (int r = 0; r < reps; r++) {
            sim.last = -1; /* the other contexts ran in between */
            batch(m, &h, &w, in, out, &sim, calls / 8 + 1, NULL);
            v[r] = batch(m, &h, &w, in, out, &sim, calls, ran);
            if (calls * v[r] < MIN_BATCH_S)
                calls = (int)ceil(MIN_BATCH_S / v[r]);
        }
        proto.rng = sim.rng;
        qsort(v, (size_t)reps, sizeof v[0], cmp);
        ratio[r0] = v[reps / 2] * 1e3 / fmin(q->cpu_ms, q->cuda_ms);
        if (on != NULL) {
            on[r0][0] = ran[0];
            on[r0][1] = ran[1];
        }
        ok += ratio[r0] <= 1.1;
    }
    return ok;
}

int main(int argc, char **argv)
{
    world proto = {{0, 0}, 1.5, 1, 0.0, 0.0, 1.0, 0, -1, 0};
    int trials = 1;
    unsigned long long seed = 1;
    if (argc < 3 || (argc - 3) % 2 != 0) {
        fprintf(stderr,
                "usage: %s CALIBRATION SWEEP_CSV [--cold FACTOR] [--warm CALLS] [--noise SIGMA]"
                " [--burst P:FACTOR] [--trials N] [--seed S]\n",
                argv[0]);
        return EXIT_FAILURE;
    }
    for (int a = 3; a + 1 < argc; a += 2) {
        const char *k = argv[a], *v = argv[a + 1];
        if (strcmp(k, "--cold") == 0)
            proto.cold = atof(v);
        else if (strcmp(k, "--warm") == 0)
            proto.warm = atoi(v);
        else if (strcmp(k, "--noise") == 0)
            proto.noise = atof(v);
        else if (strcmp(k, "--burst") == 0 &&
                 sscanf(v, "%lf:%lf", &proto.burst_p, &proto.burst_f) == 2)
            ;
        else if (strcmp(k, "--trials") == 0)
            trials = atoi(v);
        else if (strcmp(k, "--seed") == 0)
            seed = strtoull(v, NULL, 10);
        else {
            fprintf(stderr, "%s: unknown option %s %s\n", argv[0], k, v);
            return EXIT_FAILURE;
        }
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
    static row rows[MAX_ROWS];
    int nrows = 0;
    char line[1024];
    while (nrows < MAX_ROWS && fgets(line, sizeof line, f) != NULL) {
        row *q = &rows[nrows];
        gk_workload w;
        double in, out;
        if (line[0] == '#' ||
            sscanf(line, "%31[^,],%lf,%*[^,],%lf,%lf,%lf,%lf,%lf,%lf", q->op, &q->size, &q->m,
                   &q->n, &q->d, &q->cpu_ms, &q->cuda_ms, &q->auto_ms) != 8 ||
            !workload(q->op, q->m, q->n, q->d, &w, &in, &out))
            continue;
        nrows++;
    }
    fclose(f);
    static double ratio[MAX_ROWS];
    static int on[MAX_ROWS][2], missed[MAX_ROWS];
    if (trials <= 1) {
        proto.rng = seed * 0x9E3779B97F4A7C15ULL | 1;
        int ok = replay(&m, rows, nrows, proto, ratio, on);
        printf("%-11s %10s %11s %11s %11s  replay/best measured/best  timed calls cpu/gpu\n", "op",
               "size", "cpu ms", "cuda ms", "replay ms");
        for (int r = 0; r < nrows; r++) {
            const row *q = &rows[r];
            double best = fmin(q->cpu_ms, q->cuda_ms);
            printf("%-11s %10.0f %11.4g %11.4g %11.4g  %11.3f %12.3f  %d/%d\n", q->op, q->size,
                   q->cpu_ms, q->cuda_ms, ratio[r] * best, ratio[r], q->auto_ms / best, on[r][0],
                   on[r][1]);
        }
        printf("replayed: %d of %d sizes within 1.1x\n", ok, nrows);
        return EXIT_SUCCESS;
    }
    int clean = 0;
    for (int t = 0; t < trials; t++) {
        proto.rng = (seed + (unsigned long long)t) * 0x9E3779B97F4A7C15ULL | 1;
        int ok = replay(&m, rows, nrows, proto, ratio, NULL);
        clean += ok == nrows;
        for (int r = 0; r < nrows; r++)
            missed[r] += ratio[r] > 1.1;
    }
    for (int r = 0; r < nrows; r++)
        if (missed[r] > 0)
            printf("%-11s %10.0f  missed in %d of %d trials\n", rows[r].op, rows[r].size, missed[r],
                   trials);
    printf("replayed %d trials: %d with every size within 1.1x\n", trials, clean);
    return EXIT_SUCCESS;
}
