/* SPDX-License-Identifier: MIT */
/* sweep.c - gkbench --sweep: times CPU, CUDA and AUTO contexts on host data from 1e2 to 1e8. */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "common.h"

#ifndef GKBENCH_SOURCE_DIR
#define GKBENCH_SOURCE_DIR "."
#endif
#ifndef GKBENCH_DATA_DIR
#define GKBENCH_DATA_DIR "."
#endif

enum { CPU, CUDA, AUTO, NCTX };
static const char *const ctx_names[NCTX] = {"cpu", "cuda", "auto"};

#define D 20               /* features of the rbf ops, as in seed article 000 */
#define POINT_BUDGET_S 0.3 /* timed repetitions of one size, all contexts together */
/* A timed batch lasts this long at least: microsecond calls are then not at the mercy of the
 * clock's resolution and of one interrupt. */
#define MIN_BATCH_S 2e-3
/* Even (see measure()'s orders). The median of 6 single calls of 16 ms (add 1e8 on host data)
 * put two contexts running the same CPU code 13 % apart on a 16-core host: the 1.1x criterion
 * needs a finer median than that at the largest sizes. 10 were not enough either: rng_uniform
 * 1e8's single CPU calls there spread by 3-21 % (coefficient of variation) within a size, and
 * AUTO's retry of the GPU, one call of its first repetition, is a tenth of 10. */
#define MIN_REPS 16
#define MAX_REPS 62
#define MAX_POINTS 96

typedef struct point {
    bench_case c;
    double size;    /* the plotted size: elements, or n for gemm */
    double t[NCTX]; /* median seconds per call; NAN where not measured */
    double paired;  /* AUTO over the faster backend, repetition by repetition (see measure()) */
    int auto_on[3]; /* timed AUTO calls by the gk_backend that ran them */
    int reps;
    int failed; /* a call failed for another reason than memory: exit nonzero */
    char note[200];
} point;

static const char *size_unit(bench_op op)
{
    switch (op) {
    case OP_GEMM:
        return "n (n x n x n)";
    case OP_RBF_ROWS:
        return "n*d (d=20)";
    case OP_RBF_MATRIX:
        return "m*n (m=n; d=20)";
    default:
        return "elements";
    }
}

static int add_point(point *p, size_t *np, bench_op op, size_t m, size_t n, size_t k, double size)
{
    if (*np >= MAX_POINTS)
        return 0;
    memset(&p[*np], 0, sizeof p[*np]);
    p[*np].c = (bench_case){op, GK_FLOAT32, m, n, k, GKX_ALL};
    p[*np].size = size;
    for (int i = 0; i < NCTX; i++)
        p[*np].t[i] = NAN;
    p[*np].paired = NAN;
    ++*np;
    return 1;
}

/* Two sizes a decade (10^(i/2)) from 1e2 elements to 1e8 (quick: 1e6); gemm by powers of two
 * of its order, which is 1.7 sizes a decade of its n^2 elements. */
static size_t make_points(int quick, unsigned long ops, point *p)
{
    static const bench_op sweep_ops[] = {OP_ADD, OP_RBF_ROWS, OP_RBF_MATRIX, OP_GEMM,
                                         OP_RNG_UNIFORM};
    int top = quick ? 8 : 12; /* exponent index: 10^(2 + top/2) elements */
    size_t np = 0;
    for (size_t o = 0; o < sizeof sweep_ops / sizeof sweep_ops[0]; o++) {
        bench_op op = sweep_ops[o];
        if (!(ops >> op & 1))
            continue;
        if (op == OP_GEMM) {
            for (size_t n = 16; n <= (quick ? 1024u : 4096u); n *= 2)
                add_point(p, &np, op, n, n, n, (double)n);
            continue;
        }
        for (int i = 0; i <= top; i++) {
            double s = pow(10.0, 2.0 + i / 2.0);
            if (op == OP_RBF_ROWS) {
                size_t n = (size_t)llround(s / D);
                add_point(p, &np, op, 0, n, D, (double)(n * D));
            } else if (op == OP_RBF_MATRIX) {
                size_t n = (size_t)llround(sqrt(s));
                add_point(p, &np, op, n, n, D, (double)(n * n));
            } else {
                size_t n = (size_t)llround(s);
                add_point(p, &np, op, 0, n, 0, (double)n);
            }
        }
    }
    return np;
}

static gk_context *open_context(gk_backend be, const sweep_opts *o, gk_status *st)
{
    gk_context *ctx;
    *st = gkx_open(be, o->cpu_threads, o->tf32, &ctx);
    return *st == GK_OK ? ctx : NULL;
}

/* Seconds per call of `calls` calls and a synchronize (CUDA queues work; the clock must see it
 * done). Counts which backend ran each call unless on is NULL: gk_context_last_backend is a
 * call and a field read, a few nanoseconds, but the smallest sizes take 150 ns, so every
 * context's timed batch pays it, not AUTO's alone. */
static gk_status batch(gk_context *ctx, const bench_case *c, gk_buffer *const *b, int calls,
                       uint64_t *iter, int *on, double *per_call)
{
    double t0 = gkx_now();
    for (int i = 0; i < calls; i++) {
        gk_status st = bench_case_run(ctx, c, b, (*iter)++);
        if (st != GK_OK)
            return st;
        if (on != NULL)
            on[gk_context_last_backend(ctx) % 3]++;
    }
    gk_status st = gk_context_synchronize(ctx);
    *per_call = (gkx_now() - t0) / calls;
    return st;
}

/* Records a failure at this size; out of memory is a limit of the machine, anything else a bug. */
static void fail(point *p, const char *who, gk_status st)
{
    size_t len = strlen(p->note);
    snprintf(p->note + len, sizeof p->note - len, "%s%s: %s", len ? "; " : "", who,
             st == GK_E_OUT_OF_MEMORY ? "out of memory" : gk_last_error());
    p->failed |= st != GK_E_OUT_OF_MEMORY;
}

/* The faster backend's column: the lower median, CPU where CUDA was not measured and CUDA where
 * only it was (a NAN never compares lower). */
static int best_context(const point *p)
{
    return isnan(p->t[CUDA]) || p->t[CPU] <= p->t[CUDA] ? CPU : CUDA;
}

static double best(const point *p)
{
    return p->t[best_context(p)];
}

/* AUTO's batch over the faster backend's (the lower median) in the same repetition, a few
 * milliseconds apart, averaged over the repetitions as a geometric mean of the ratios without
 * the highest and lowest tenth. Why each part, from kept sweeps of a GPU host:
 * - In pairs: a slow stretch of the host that spans a repetition slows both batches, where the
 *   ratio of the columns' medians compares batches from different moments. Every context there
 *   slowed from 1.4 to 2.0 us a call halfway through rbf_matrix 32^2 x 20, one repetition
 *   earlier in AUTO's column than in the CPU's, and the medians put AUTO at 1.16x the CPU with
 *   every call of its on the CPU (the pairs' median: 1.004).
 * - A mean, not the pairs' median: AUTO on the slower backend for a third of a size's
 *   repetitions (gemm 256^3 on the GPU at 1.2x the CPU's time) is a third of its cost, which a
 *   median does not see at all (1.032 there; this mean 1.06).
 * - Geometric: single calls of 5-18 ms on the CPU spread by up to 2x from batch to batch, and
 *   the arithmetic mean of such ratios lies above 1 (1.11-1.14 at sizes where AUTO ran the
 *   CPU's code on every call).
 * - Trimmed: one preempted batch must not decide a size.
 * NAN unless AUTO and a backend were both measured. */
static double paired_ratio(const point *p, double (*v)[MAX_REPS], int reps)
{
    int k = best_context(p);
    if (isnan(p->t[AUTO]) || isnan(p->t[k]))
        return NAN;
    double logs[MAX_REPS], sum = 0;
    for (int r = 0; r < reps; r++)
        logs[r] = log(v[AUTO][r] / v[k][r]);
    qsort(logs, (size_t)reps, sizeof logs[0], gkx_cmp_double);
    int trim = reps / 10;
    for (int r = trim; r < reps - trim; r++)
        sum += logs[r];
    return exp(sum / (reps - 2 * trim));
}

/* Times one size in every live context on the same host arrays. Warm-up first (it pays for
 * staging allocations, page faults, lazy module loading), then the fastest of a few single
 * calls sizes each context's batch (a batch that still took less than MIN_BATCH_S sizes the
 * next), then repetitions interleaved across the contexts in changing orders, so a change of
 * load or clock during the point hits every column alike; each timed batch follows a few
 * untimed calls in the same context. */
static void measure(point *p, gk_context *const *ctx, gk_buffer *(*b)[BENCH_MAX_OPERANDS],
                    FILE *reps_csv)
{
    int live[NCTX], nlive = 0, calls[NCTX] = {0};
    double est[NCTX], v[NCTX][MAX_REPS], sum = 0;
    uint64_t iter = 0;
    for (int k = 0; k < NCTX; k++) {
        if (ctx[k] == NULL)
            continue;
        gk_status st = batch(ctx[k], &p->c, b[k], 1, &iter, NULL, &est[k]);
        /* The warm-up call's time stands only if it was slow enough to skip the others. */
        double t = INFINITY, fastest = INFINITY;
        for (int i = 0; i < 3 && st == GK_OK && est[k] < POINT_BUDGET_S / 4; i++) {
            st = batch(ctx[k], &p->c, b[k], 1, &iter, NULL, &t);
            fastest = fmin(fastest, t);
        }
        if (fastest < INFINITY)
            est[k] = fastest;
        if (st != GK_OK) {
            fail(p, ctx_names[k], st);
            continue;
        }
        calls[k] = (int)fmax(1.0, ceil(MIN_BATCH_S / fmax(est[k], 1e-9)));
        sum += calls[k] * est[k];
        live[nlive++] = k;
    }
    if (nlive == 0)
        return;
    /* Each context's batches come right after each other context's equally often: the two
     * orders in turn give 0 2 1 0 1 2 ..., in which every context follows each of the others
     * once per two repetitions (the first follows the last context's warm-up as if the pair
     * had come round before), over an even number of repetitions. The six orders in turn did
     * not: AUTO's batches came after the CUDA context's in three of six, the CPU context's in
     * two, and a CPU batch right after a CUDA one could take 10-50 % longer (rbf_matrix
     * 3162^2 x 20, for either CPU context and for AUTO alike), so the sweeps read AUTO at
     * 1.07-1.11x the CPU context with every call of its on the CPU (bench/results/). */
    static const int orders[2][NCTX] = {{0, 2, 1}, {0, 1, 2}};
    int reps = (int)fmin(MAX_REPS, fmax(MIN_REPS, floor(POINT_BUDGET_S / sum)));
    reps += reps % 2;
    int before = live[nlive - 1]; /* the context whose batches came last: its warm-up */
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < NCTX; j++) {
            if (orders[r % 2][j] >= nlive)
                continue;
            int k = live[orders[r % 2][j]];
            if (calls[k] == 0)
                continue; /* failed earlier in this point */
            /* An untimed eighth of a batch first: the context before this one leaves the
             * host in its own state (the CUDA driver's threads busy, OpenMP's asleep), which
             * is not this context's cost. */
            double unused;
            int ran_on[3] = {0}; /* this batch's calls by the gk_backend that ran them */
            gk_status st = batch(ctx[k], &p->c, b[k], calls[k] / 8 + 1, &iter, NULL, &unused);
            if (st == GK_OK)
                st = batch(ctx[k], &p->c, b[k], calls[k], &iter, ran_on, &v[k][r]);
            if (k == AUTO)
                for (int i = 0; i < 3; i++)
                    p->auto_on[i] += ran_on[i];
            if (st == GK_OK && reps_csv != NULL)
                fprintf(reps_csv, "%s,%zu,%zu,%zu,%d,%s,%s,%d,%d,%d,%.6g\n", bench_op_name(p->c.op),
                        p->c.m, p->c.n, p->c.k, r, ctx_names[k], ctx_names[before], calls[k],
                        ran_on[GK_BACKEND_CPU], ran_on[GK_BACKEND_CUDA], v[k][r] * 1e3);
            before = k;
            if (st != GK_OK) {
                fail(p, ctx_names[k], st);
                calls[k] = 0;
            } else if (calls[k] * v[k][r] < MIN_BATCH_S) {
                /* Sized from a single call that was not typical: AUTO's first calls at a size
                 * retry the other backend, so the fastest of them can be a GPU call 4x its
                 * later CPU calls. Its batches were then one 1 ms call, which the first calls
                 * after another context's batch (cores idle through a 4 ms CUDA call) slowed
                 * by 20-80 % (rbf_matrix 3162^2 x 20, add 1e7), while the CPU
                 * context's 3-call batches diluted it. */
                calls[k] = (int)ceil(MIN_BATCH_S / fmax(v[k][r], 1e-9));
            }
        }
    p->reps = reps;
    for (int j = 0; j < nlive; j++)
        if (calls[live[j]] > 0) {
            double sorted[MAX_REPS]; /* gkx_median sorts; paired_ratio needs v in order */
            memcpy(sorted, v[live[j]], (size_t)reps * sizeof sorted[0]);
            p->t[live[j]] = gkx_median(sorted, reps);
        }
    p->paired = paired_ratio(p, v, reps);
}

/* Allocates the host arrays of one size, wraps them in every context, fills them with uniform
 * random numbers (real data, and every page touched before the clock runs) and times them. */
static void run_point(point *p, gk_context *const *ctx, FILE *reps_csv)
{
    size_t counts[BENCH_MAX_OPERANDS];
    int nbuf = bench_case_operands(&p->c, counts);
    float *host[BENCH_MAX_OPERANDS] = {NULL};
    gk_buffer *b[NCTX][BENCH_MAX_OPERANDS];
    memset(b, 0, sizeof b);
    gk_status st = GK_OK;
    for (int j = 0; j < nbuf && st == GK_OK; j++) {
        host[j] = malloc(counts[j] * sizeof(float) + 1);
        if (host[j] == NULL)
            st = GK_E_OUT_OF_MEMORY;
        for (int k = 0; k < NCTX && st == GK_OK; k++)
            if (ctx[k] != NULL)
                st = gk_buffer_wrap_host(ctx[k], GK_FLOAT32, counts[j], host[j], &b[k][j]);
        if (st == GK_OK)
            st = gk_rng_uniform(ctx[CPU], 1000 + (uint64_t)j, 0, b[CPU][j]);
    }
    if (st == GK_OK)
        measure(p, ctx, b, reps_csv);
    else
        fail(p, "host arrays", st);
    for (int k = 0; k < NCTX; k++)
        for (int j = 0; j < nbuf; j++)
            gk_buffer_destroy(b[k][j]);
    for (int j = 0; j < nbuf; j++)
        free(host[j]);
}

/* What AUTO ran at this size: one backend, or "mixed" when its choice changed between calls
 * (the cost model is deterministic, so that would be worth a look). */
static const char *auto_choice(const point *p)
{
    int cpu = p->auto_on[GK_BACKEND_CPU], cuda = p->auto_on[GK_BACKEND_CUDA];
    if (isnan(p->t[AUTO]))
        return "-";
    return cpu && cuda ? "mixed" : cuda ? "cuda" : "cpu";
}

static void ms_str(double s, char *buf, size_t len)
{
    if (isnan(s))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.4g", s * 1e3);
}

static void print_row(const point *p)
{
    char size[64], t[NCTX][32], ratio[16] = "-", rmed[16] = "-", rcpu[16] = "-";
    bench_case_size(&p->c, size, sizeof size);
    for (int k = 0; k < NCTX; k++)
        ms_str(p->t[k], t[k], sizeof t[k]);
    double r = p->paired, rm = p->t[AUTO] / best(p), rc = p->t[AUTO] / p->t[CPU];
    if (!isnan(r))
        snprintf(ratio, sizeof ratio, "%.3f", r);
    if (!isnan(rm))
        snprintf(rmed, sizeof rmed, "%.3f", rm);
    if (!isnan(rc))
        snprintf(rcpu, sizeof rcpu, "%.3f", rc);
    printf("%-11s %-16s %11s %11s %11s  %-5s %9s %-4s %9s %9s  %s\n", bench_op_name(p->c.op), size,
           t[CPU], t[CUDA], t[AUTO], auto_choice(p), ratio,
           isnan(r)   ? ""
           : r <= 1.1 ? "ok"
                      : "SLOW",
           rmed, rcpu, p->note);
    fflush(stdout);
}

/* A CSV field: empty for a missing time. */
static void csv_ms(FILE *f, double s)
{
    if (!isnan(s))
        fprintf(f, "%.6g", s * 1e3);
    fputc(',', f);
}

static int write_csv(const char *path, const char *header, const point *p, size_t np)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return 0;
    }
    fputs(header, f);
    fprintf(f,
            "op,size,size_unit,m,n,d,cpu_ms,cuda_ms,auto_ms,auto_choice,auto_cpu_calls,"
            "auto_cuda_calls,auto_over_best,auto_over_cpu,auto_over_best_medians,ok,reps,note\n");
    for (size_t i = 0; i < np; i++) {
        const point *q = &p[i];
        size_t m = q->c.op == OP_GEMM || q->c.op == OP_RBF_MATRIX ? q->c.m : 0;
        fprintf(f, "%s,%.0f,%s,%zu,%zu,%zu,", bench_op_name(q->c.op), q->size, size_unit(q->c.op),
                m, q->c.n, q->c.op == OP_GEMM ? 0 : q->c.k);
        for (int k = 0; k < NCTX; k++)
            csv_ms(f, q->t[k]);
        double r = q->paired, rm = q->t[AUTO] / best(q), rc = q->t[AUTO] / q->t[CPU];
        fprintf(f, "%s,%d,%d,", auto_choice(q), q->auto_on[GK_BACKEND_CPU],
                q->auto_on[GK_BACKEND_CUDA]);
        if (!isnan(r))
            fprintf(f, "%.4f", r);
        fputc(',', f);
        if (!isnan(rc))
            fprintf(f, "%.4f", rc);
        fputc(',', f);
        if (!isnan(rm))
            fprintf(f, "%.4f", rm);
        fprintf(f, ",%s,%d,\"", isnan(r) ? "" : r <= 1.1 ? "1" : "0", q->reps);
        for (const char *s = q->note; *s; s++) /* CSV quoting: a quote is doubled */
            fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
        fprintf(f, "\"\n");
    }
    if (fclose(f) != 0) {
        perror(path);
        return 0;
    }
    return 1;
}

/* Per op: where CUDA first beats the CPU, where AUTO first picks CUDA, and how close AUTO
 * stays to the faster backend; without CUDA, how close AUTO (the CPU backend) is to the CPU. */
static void print_summary(const point *p, size_t np, int have_cuda)
{
    printf("\n");
    for (size_t i = 0; i < np;) {
        size_t j = i;
        char cross[64] = "never in range", sw[64] = "never", worst_at[64] = "-", size[64];
        int n = 0, ok = 0, close = 0;
        double worst = 1;
        for (; j < np && p[j].c.op == p[i].c.op; j++) {
            bench_case_size(&p[j].c, size, sizeof size);
            if (strcmp(cross, "never in range") == 0 && p[j].t[CUDA] < p[j].t[CPU])
                snprintf(cross, sizeof cross, "%s", size);
            if (strcmp(sw, "never") == 0 && p[j].auto_on[GK_BACKEND_CUDA] > 0)
                snprintf(sw, sizeof sw, "%s", size);
            double r = p[j].paired;
            if (isnan(r))
                continue;
            n++;
            ok += r <= 1.1;
            close += fabs(r - 1) <= 0.02;
            /* With CUDA the worst is the slowest AUTO; without, the farthest from the CPU. */
            if (have_cuda ? r > worst : fabs(r - 1) > fabs(worst - 1)) {
                worst = r;
                snprintf(worst_at, sizeof worst_at, "%s", size);
            }
        }
        const char *op = bench_op_name(p[i].c.op);
        if (have_cuda)
            printf("%-11s CUDA beats CPU from %s; AUTO picks CUDA from %s; AUTO within 1.1x of "
                   "the faster at %d/%d sizes, worst %.3f at %s\n",
                   op, cross, sw, ok, n, worst, worst_at);
        else
            printf("%-11s AUTO/CPU within 2%% at %d/%d sizes, worst %.3f at %s\n", op, close, n,
                   worst, worst_at);
        i = j;
    }
}

/* sweep_plot.py next to gkbench's sources (a build tree), else where `cmake --install` put it. */
static int find_plot_script(char *path, size_t len)
{
    const char *dirs[] = {GKBENCH_SOURCE_DIR, GKBENCH_DATA_DIR};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, len, "%s/sweep_plot.py", dirs[i]);
        if (access(path, R_OK) == 0)
            return 1;
    }
    return 0;
}

/* Runs sweep_plot.py CSV PNG without a shell, so no path needs quoting, with $GK_PYTHON or else
 * the python3 on PATH: an activated virtualenv's, where gpukern and matplotlib may live. */
static int plot(const char *csv, const char *png)
{
    const char *python = getenv("GK_PYTHON");
    if (python == NULL || python[0] == '\0')
        python = "python3";
    char script[4096];
    if (!find_plot_script(script, sizeof script)) {
        fprintf(stderr, "gkbench: sweep_plot.py is in neither %s nor %s\n", GKBENCH_SOURCE_DIR,
                GKBENCH_DATA_DIR);
        return 0;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execlp(python, python, script, csv, png, (char *)NULL);
        fprintf(stderr, "gkbench: cannot run %s (%s): set GK_PYTHON to a Python with matplotlib\n",
                python, strerror(errno));
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "gkbench: %s %s %s %s failed\n", python, script, csv, png);
        return 0;
    }
    printf("plot written to %s\n", png);
    return 1;
}

int sweep_main(const sweep_opts *o)
{
    static point pts[MAX_POINTS];
    size_t np = make_points(o->quick, o->ops, pts);
    gk_context *ctx[NCTX] = {NULL};
    char cuda_why[512] = "", header[2048], date[32], host[256] = "unknown";
    int failed = 0;
    gk_status st;

    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    gethostname(host, sizeof host - 1);

    ctx[CPU] = open_context(GK_BACKEND_CPU, o, &st);
    GKX_CHECK(st);
    if (!gk_backend_available(GK_BACKEND_CUDA))
        snprintf(cuda_why, sizeof cuda_why, "%s", gk_last_error());
    else if ((ctx[CUDA] = open_context(GK_BACKEND_CUDA, o, &st)) == NULL)
        snprintf(cuda_why, sizeof cuda_why, "CUDA context failed: %s", gk_last_error());
    for (char *c = cuda_why; *c; c++) /* one line per path tried: a CSV comment is one line */
        if (*c == '\n')
            *c = ' ';
    ctx[AUTO] = open_context(GK_BACKEND_AUTO, o, &st);
    GKX_CHECK(st);
    if (getenv("GK_BACKEND") != NULL)
        printf("note: GK_BACKEND=%s decides what the AUTO context runs on\n", getenv("GK_BACKEND"));

    double t0 = gkx_now();
    st = gk_context_calibrate(ctx[AUTO], 0);
    double cal_s = gkx_now() - t0;
    if (st != GK_OK) {
        fprintf(stderr, "gkbench: gk_context_calibrate failed: %s\n", gk_last_error());
        failed = 1;
    }
    int n = snprintf(header, sizeof header,
                     "# gkbench --sweep, libgpukern %s, %s, host %s, %s, load average %s, "
                     "float32 on host data\n# cpu: %s\n",
                     gk_version_string(), date, host, o->quick ? "quick" : "full", o->loadavg,
                     gk_context_device_name(ctx[CPU]));
    if (ctx[CUDA] != NULL)
        n += snprintf(header + n, sizeof header - (size_t)n,
                      "# cuda: %s (times include "
                      "staging to and from the device)\n",
                      gk_context_device_name(ctx[CUDA]));
    else
        n += snprintf(header + n, sizeof header - (size_t)n, "# cuda: none -- %s\n", cuda_why);
    snprintf(header + n, sizeof header - (size_t)n,
             "# auto: %s, runs on %s, gk_context_calibrate took %.2f s\n",
             gk_context_device_name(ctx[AUTO]), gkx_backend_name(gk_context_backend(ctx[AUTO])),
             cal_s);
    fputs(header, stdout);
    FILE *reps_csv = NULL;
    if (o->reps_csv != NULL) {
        if ((reps_csv = fopen(o->reps_csv, "w")) == NULL) {
            perror(o->reps_csv);
            return EXIT_FAILURE;
        }
        fputs(header, reps_csv);
        fputs("op,m,n,d,rep,context,after,calls,cpu_calls,cuda_calls,ms_per_call\n", reps_csv);
    }
    if (ctx[CUDA] == NULL)
        printf("note: no CUDA, so the AUTO context is the CPU backend and its column should "
               "match the CPU column (auto/cpu within 2%%)\n");

    printf("\n%-11s %-16s %11s %11s %11s  %-5s %9s %-4s %9s %9s  %s\n", "op", "size", "cpu ms",
           "cuda ms", "auto ms", "auto", "auto/best", "", "medians", "auto/cpu", "note");
    printf("(auto/best: AUTO's batch over the faster backend's in the same repetition, a geometric "
           "mean over the repetitions without the highest and lowest tenth; medians: the ratio of "
           "the columns' medians)\n");
    size_t done = 0;
    for (; done < np && !*o->stop; done++) {
        run_point(&pts[done], ctx, reps_csv);
        print_row(&pts[done]);
        failed |= pts[done].failed;
    }
    print_summary(pts, done, ctx[CUDA] != NULL);
    printf("%zu sizes in %.1f s%s\n", done, gkx_now() - t0,
           *o->stop ? " (interrupted: the remaining sizes did not run)" : "");
    for (int k = 0; k < NCTX; k++)
        gk_context_destroy(ctx[k]);
    if (reps_csv != NULL && fclose(reps_csv) != 0) {
        perror(o->reps_csv);
        return EXIT_FAILURE;
    }

    if (!write_csv(o->csv, header, pts, done))
        return EXIT_FAILURE;
    printf("CSV written to %s\n", o->csv);
    if (o->png != NULL && !plot(o->csv, o->png))
        return EXIT_FAILURE;
    if (failed)
        fprintf(stderr, "gkbench: some calls failed (see the note column)\n");
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
