/* SPDX-License-Identifier: MIT */
/* cpu_ab.c - two CPU configurations (builds, thread counts) timed batch against batch in one
 * process. */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cases.h"
#include "common.h"

/* Why one process and batches that alternate: on a shared 2-core VM two builds timed one whole
 * gkbench run after the other read anything from 0.5x to 1.5x of each other for the same code
 * (bench/RESULTS.md, 2026-12-02), since load from other processes comes and goes over seconds.
 * Batches of ~10 ms taken in turn see the same machine, and the ratio of each pair is what is
 * summarized: its median over rounds and its quartiles, so a verdict says how sure it is. */

static const char usage[] =
    "usage: cpu_ab A B [--rounds 21] [--op a,b] [--batch-ms 10] [--gap-ms 20]\n"
    "              [--sizes quick|full] [--calls N]\n"
    "  A, B: LIB[:THREADS], a libgpukern.so and the cpu_threads of its context (0 or none:\n"
    "  the library's default); the same LIB twice compares two thread counts of one build.\n"
    "Times gkbench's CPU workloads (--sizes quick: gkbench --quick's list) on A and on B in\n"
    "one process, a batch of calls on each in turn (the order swapped every round), and prints\n"
    "per case the median time per call of each, and B/A: the median over rounds of the\n"
    "round's ratio with its quartiles. threads: the threads that ran at least 30% of a batch\n"
    "(median). Each batch starts --gap-ms after the previous one ended, so OpenMP threads that\n"
    "spin after one side's batch have gone to sleep before the other side's starts.\n"
    "  --calls N: no timing, N calls per case on B only (for valgrind --tool=callgrind).\n";

#define ROTATE_BYTES (256.0 * 1024 * 1024)
#define MAX_SETS 64
#define MAX_ROUNDS 201
#define MAX_TASKS 256

const gk_ab_api *gk_ab;

typedef struct side {
    const char *spec;
    char path[1024];
    int threads;
    gk_ab_api api;
    gk_context *ctx;
    int sets, nbuf;
    gk_buffer *b[MAX_SETS][BENCH_MAX_OPERANDS];
    uint64_t iter;
    double t[MAX_ROUNDS];
    int ran[MAX_ROUNDS];
} side;

static void die(const char *what, const char *why)
{
    fprintf(stderr, "cpu_ab: %s: %s\n", what, why);
    exit(EXIT_FAILURE);
}

static void open_side(side *s)
{
    const char *colon = strrchr(s->spec, ':');
    size_t len = colon != NULL ? (size_t)(colon - s->spec) : strlen(s->spec);
    if (len >= sizeof s->path)
        die(s->spec, "path too long");
    memcpy(s->path, s->spec, len);
    s->path[len] = '\0';
    s->threads = colon != NULL ? atoi(colon + 1) : 0;
    void *h = dlopen(s->path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        die(s->path, dlerror());
#define GK_AB_LOAD(f)                                                                              \
    if ((*(void **)&s->api.f = dlsym(h, "gk_" #f)) == NULL)                                        \
        die(s->path, "gk_" #f " missing");
    GK_AB_FUNCS(GK_AB_LOAD)
#undef GK_AB_LOAD
    gk_ab = &s->api;
    GKX_CHECK(gkx_open(GK_BACKEND_CPU, s->threads, 0, &s->ctx));
}

/* CPU nanoseconds of each thread of this process (schedstat's first field), by tid. */
static int task_times(long tid[MAX_TASKS], double ns[MAX_TASKS])
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d != NULL && n < MAX_TASKS && (e = readdir(d)) != NULL) {
        char path[300];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fscanf(f, "%lf", &ns[n]) == 1)
            tid[n++] = atol(e->d_name);
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* Threads that ran at least 30% of wall_ns between two task_times samples. */
static int threads_ran(int n0, const long *tid0, const double *ns0, int n1, const long *tid1,
                       const double *ns1, double wall_ns)
{
    int ran = 0;
    for (int i = 0; i < n1; i++) {
        double before = 0;
        for (int j = 0; j < n0; j++)
            if (tid0[j] == tid1[i])
                before = ns0[j];
        ran += ns1[i] - before >= 0.3 * wall_ns;
    }
    return ran;
}

static void alloc_sets(side *s, const bench_case *c)
{
    gk_ab = &s->api;
    size_t counts[BENCH_MAX_OPERANDS];
    s->nbuf = bench_case_operands(c, counts);
    double set_bytes = 0;
    for (int j = 0; j < s->nbuf; j++)
        set_bytes += (double)counts[j] * (c->dtype == GK_FLOAT64 ? 8 : 4);
    s->sets = 1;
    if (bench_case_rotates(c) && set_bytes < ROTATE_BYTES)
        s->sets = (int)fmin(MAX_SETS, ceil(ROTATE_BYTES / set_bytes));
    for (int i = 0; i < s->sets; i++)
        for (int j = 0; j < s->nbuf; j++) {
            GKX_CHECK(gk_buffer_create(s->ctx, c->dtype, counts[j], &s->b[i][j]));
            GKX_CHECK(i == 0 ? gk_rng_uniform(s->ctx, (uint64_t)j, 0, s->b[0][j])
                             : gk_copy(s->ctx, s->b[0][j], s->b[i][j]));
        }
    GKX_CHECK(gk_context_synchronize(s->ctx));
    s->iter = 0;
}

static void free_sets(side *s)
{
    gk_ab = &s->api;
    for (int i = 0; i < s->sets; i++)
        for (int j = 0; j < s->nbuf; j++)
            gk_buffer_destroy(s->b[i][j]);
}

/* Seconds per call of `calls` calls over the rotating sets, then a synchronize; *ran gets the
 * threads that ran at least 30% of it (NULL: not counted). */
static double batch(side *s, const bench_case *c, int calls, int *ran)
{
    static long tid0[MAX_TASKS], tid1[MAX_TASKS];
    static double ns0[MAX_TASKS], ns1[MAX_TASKS];
    gk_ab = &s->api;
    int n0 = ran != NULL ? task_times(tid0, ns0) : 0;
    double t0 = gkx_now();
    for (int i = 0; i < calls; i++, s->iter++)
        GKX_CHECK(bench_case_run(s->ctx, c, s->b[s->iter % (uint64_t)s->sets], s->iter));
    GKX_CHECK(gk_context_synchronize(s->ctx));
    double t = gkx_now() - t0;
    if (ran != NULL) {
        int n1 = task_times(tid1, ns1);
        *ran = threads_ran(n0, tid0, ns0, n1, tid1, ns1, t * 1e9);
    }
    return t / calls;
}

static void pause_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static double quartile(const double *v, int n, double q)
{
    double *w = gkx_malloc((size_t)n * sizeof *w);
    memcpy(w, v, (size_t)n * sizeof *w);
    qsort(w, (size_t)n, sizeof *w, gkx_cmp_double);
    double pos = q * (n - 1);
    int i = (int)pos;
    double r = i + 1 < n ? w[i] + (pos - i) * (w[i + 1] - w[i]) : w[i];
    free(w);
    return r;
}

static double median_int(const int *v, int n)
{
    double w[MAX_ROUNDS];
    for (int i = 0; i < n; i++)
        w[i] = v[i];
    return gkx_median(w, n);
}

static int wanted(const char *ops, bench_op op)
{
    if (ops == NULL)
        return 1;
    size_t len = strlen(bench_op_name(op));
    for (const char *p = ops; *p != '\0';) {
        const char *e = strchr(p, ',');
        size_t l = e != NULL ? (size_t)(e - p) : strlen(p);
        if (l == len && strncmp(p, bench_op_name(op), l) == 0)
            return 1;
        p += l + (e != NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *spec[2] = {NULL, NULL}, *ops = NULL, *sizes = "quick";
    int rounds = 21, count_calls = 0;
    double batch_s = 0.010, gap_s = 0.020;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--rounds") == 0 && v != NULL)
            rounds = atoi(v), i++;
        else if (strcmp(a, "--op") == 0 && v != NULL)
            ops = v, i++;
        else if (strcmp(a, "--batch-ms") == 0 && v != NULL)
            batch_s = atof(v) * 1e-3, i++;
        else if (strcmp(a, "--gap-ms") == 0 && v != NULL)
            gap_s = atof(v) * 1e-3, i++;
        else if (strcmp(a, "--sizes") == 0 && v != NULL)
            sizes = v, i++;
        else if (strcmp(a, "--calls") == 0 && v != NULL)
            count_calls = atoi(v), i++;
        else if (a[0] != '-' && spec[0] == NULL)
            spec[0] = a;
        else if (a[0] != '-' && spec[1] == NULL)
            spec[1] = a;
        else {
            fputs(usage, stderr);
            return 2;
        }
    }
    if (spec[0] == NULL || spec[1] == NULL || rounds < 1 || rounds > MAX_ROUNDS || batch_s <= 0 ||
        gap_s < 0) {
        fputs(usage, stderr);
        return 2;
    }
    static side sd[2];
    for (int k = 0; k < 2; k++) {
        sd[k].spec = spec[k];
        open_side(&sd[k]);
    }
    size_t ncases;
    const bench_case *cases = bench_cases(strcmp(sizes, "full") != 0, &ncases);
    if (count_calls > 0) {
        for (size_t ci = 0; ci < ncases; ci++) {
            const bench_case *c = &cases[ci];
            if (!(c->where & GKX_CPU) || !wanted(ops, c->op))
                continue;
            alloc_sets(&sd[1], c);
            batch(&sd[1], c, count_calls, NULL);
            free_sets(&sd[1]);
        }
        return 0;
    }
    printf("# A = %s (%d threads asked), B = %s (%d threads asked); %d rounds of one batch "
           "(>= %.0f ms) each, alternating, %.0f ms apart\n",
           sd[0].path, sd[0].threads, sd[1].path, sd[1].threads, rounds, batch_s * 1e3,
           gap_s * 1e3);
    printf("%-12s %-8s %-16s %11s %11s %7s %7s %7s %7s\n", "op", "dtype", "size", "A ms", "B ms",
           "B/A", "q1", "q3", "threads");
    for (size_t ci = 0; ci < ncases; ci++) {
        const bench_case *c = &cases[ci];
        if (!(c->where & GKX_CPU) || !wanted(ops, c->op))
            continue;
        for (int k = 0; k < 2; k++)
            alloc_sets(&sd[k], c);
        /* Warm-up on both, then calls per batch from B's fastest warm call (both the same). */
        double t = INFINITY;
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 2; k++) {
                double v = batch(&sd[k], c, 1, NULL);
                if (k == 1 && i > 0)
                    t = fmin(t, v);
            }
        int calls = (int)fmin(1 << 20, fmax(1.0, ceil(batch_s / t)));
        double ratio[MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            for (int j = 0; j < 2; j++) {
                int k = (r & 1) ? 1 - j : j;
                pause_s(gap_s);
                sd[k].t[r] = batch(&sd[k], c, calls, &sd[k].ran[r]);
            }
            ratio[r] = sd[1].t[r] / sd[0].t[r];
        }
        char size[64];
        bench_case_size(c, size, sizeof size);
        printf("%-12s %-8s %-16s %11.5g %11.5g %7.3f %7.3f %7.3f %3.0f/%.0f\n",
               bench_op_name(c->op), c->dtype == GK_FLOAT64 ? "float64" : "float32", size,
               quartile(sd[0].t, rounds, 0.5) * 1e3, quartile(sd[1].t, rounds, 0.5) * 1e3,
               quartile(ratio, rounds, 0.5), quartile(ratio, rounds, 0.25),
               quartile(ratio, rounds, 0.75), median_int(sd[0].ran, rounds),
               median_int(sd[1].ran, rounds));
        fflush(stdout);
        for (int k = 0; k < 2; k++)
            free_sets(&sd[k]);
    }
    return 0;
}
