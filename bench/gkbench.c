/* SPDX-License-Identifier: MIT */
/* gkbench.c - times every libgpukern op per backend over sizes; prints a table, CSV and JSON. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cases.h"
#include "common.h"
#include "report.h"
#include "sweep.h"

/* Streaming ops whose operands are smaller than this rotate through several operand sets, so
 * repeated calls read memory and not a cache (a data-centre GPU's L2 or a server's L3 is
 * tens of MiB). */
#define ROTATE_BYTES (256.0 * 1024 * 1024)
#define MAX_SETS 64
#define MAX_CALLS (1 << 20)
/* Host memory a CPU case may take: the CPU backend's pages are touched at once, and running
 * into the OOM killer would lose the whole run. */
#define HOST_FRACTION 0.7

#define FORWARD(call)                                                                              \
    do {                                                                                           \
        gk_status st_ = (call);                                                                    \
        if (st_ != GK_OK)                                                                          \
            return st_;                                                                            \
    } while (0)

typedef struct bench_opts {
    int quick, tf32, cpu_threads, reps, list, sweep;
    unsigned backends;
    const char *ops, *csv, *json, *png, *reps_csv;
    double min_rep_s;  /* a timed repetition lasts at least this long (many calls if need be) */
    double max_case_s; /* fewer repetitions for ops whose single call is this slow */
} bench_opts;

typedef struct operand_sets {
    int sets, nbuf;
    gk_buffer *b[MAX_SETS][BENCH_MAX_OPERANDS];
} operand_sets;

/* Set by SIGINT/SIGTERM: the run stops after the case in progress and still writes what it
 * measured, so a long run cut short by Ctrl-C or a time limit is not lost. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* MemAvailable from /proc/meminfo (page cache counts as available); 0 if unknown. */
static double host_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb * 1024;
}

/* The 1, 5 and 15 minute load averages: a benchmark on a busy host says so. */
static void load_average(char *buf, size_t len)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double a[3];
    if (f != NULL && fscanf(f, "%lf %lf %lf", &a[0], &a[1], &a[2]) == 3)
        snprintf(buf, len, "%.2f %.2f %.2f", a[0], a[1], a[2]);
    else
        snprintf(buf, len, "unknown");
    if (f != NULL)
        fclose(f);
}

static void free_sets(operand_sets *s)
{
    for (int i = 0; i < s->sets; i++)
        for (int j = 0; j < s->nbuf; j++)
            gk_buffer_destroy(s->b[i][j]);
}

/* Allocates the sets and fills every operand with uniform random numbers: real data, so no
 * kernel runs on denormals or a constant that lets it take a shortcut. Sets after the first
 * are copies (a copy is cheaper than generating 256 MiB of random numbers on a small CPU). */
static gk_status alloc_sets(gk_context *ctx, const bench_case *c, const size_t *counts,
                            operand_sets *s)
{
    for (int i = 0; i < s->sets; i++)
        for (int j = 0; j < s->nbuf; j++) {
            gk_dtype t = bench_case_operand_dtype(c, j);
            FORWARD(gk_buffer_create(ctx, t, counts[j], &s->b[i][j]));
            if (t == GK_INT64) /* an index output (knn): written by the call, never read */
                continue;
            FORWARD(i == 0 ? gk_rng_uniform(ctx, (uint64_t)j, 0, s->b[0][j])
                           : gk_copy(ctx, s->b[0][j], s->b[i][j]));
        }
    return gk_context_synchronize(ctx);
}

/* Seconds per call of a batch of calls over the rotating sets, then a synchronize: CUDA events
 * are not part of the C API, and the synchronize makes the clock see the queued work. */
static gk_status time_batch(gk_context *ctx, const bench_case *c, const operand_sets *s, int calls,
                            uint64_t *iter, double *per_call)
{
    double t0 = gkx_now();
    for (int i = 0; i < calls; i++, ++*iter) {
        gk_status st = bench_case_run(ctx, c, s->b[*iter % (uint64_t)s->sets], *iter);
        if (st != GK_OK)
            return st;
    }
    gk_status st = gk_context_synchronize(ctx);
    *per_call = (gkx_now() - t0) / calls;
    return st;
}

static void note(bench_result *r, bench_status st, const char *fmt, double a, double b)
{
    r->status = st;
    snprintf(r->note, sizeof r->note, fmt, a, b);
}

/* Warm-up, calibration of the calls per repetition, then the repetitions. */
static gk_status measure(gk_context *ctx, const bench_case *c, const operand_sets *s,
                         const bench_opts *o, bench_result *r)
{
    uint64_t iter = 0;
    double t = INFINITY, v[64];
    /* The first call pays for start-up; the fastest of the next ones (one preempted call must
     * not set the batch size) estimates a call. */
    FORWARD(time_batch(ctx, c, s, 1, &iter, &v[0]));
    for (int i = 0; i < 3; i++) {
        FORWARD(time_batch(ctx, c, s, 1, &iter, &v[0]));
        t = fmin(t, v[0]);
        if (t > o->max_case_s / 8)
            break;
    }
    int calls = 1;
    while (t * calls < o->min_rep_s / 8 && calls < MAX_CALLS / 8) {
        calls *= 8;
        FORWARD(time_batch(ctx, c, s, calls, &iter, &t));
    }
    double want = ceil(o->min_rep_s / t);
    calls = want < 1 ? 1 : want > MAX_CALLS ? MAX_CALLS : (int)want;
    int reps = o->reps < 64 ? o->reps : 64;
    if (t * calls * reps > o->max_case_s)
        reps = (int)fmax(1.0, floor(o->max_case_s / (t * calls)));
    for (int i = 0; i < reps; i++)
        FORWARD(time_batch(ctx, c, s, calls, &iter, &v[i]));
    r->calls = calls;
    r->reps = reps;
    r->min_s = v[0];
    for (int i = 1; i < reps; i++)
        r->min_s = fmin(r->min_s, v[i]);
    r->median_s = gkx_median(v, reps);
    return GK_OK;
}

static void run_case(gk_context *ctx, gk_backend be, const bench_case *c, const bench_opts *o,
                     bench_result *r)
{
    memset(r, 0, sizeof *r);
    r->c = *c;
    r->backend = be;
    size_t counts[BENCH_MAX_OPERANDS];
    operand_sets s = {.sets = 1, .nbuf = bench_case_operands(c, counts)};
    double set_bytes = 0;
    for (int j = 0; j < s.nbuf; j++)
        set_bytes += (double)counts[j] * (bench_case_operand_dtype(c, j) == GK_FLOAT32 ? 4 : 8);
    if (bench_case_rotates(c) && set_bytes < ROTATE_BYTES)
        s.sets = (int)fmin(MAX_SETS, ceil(ROTATE_BYTES / set_bytes));
    if (be == GK_BACKEND_CPU) {
        double avail = HOST_FRACTION * host_available_bytes();
        while (avail > 0 && s.sets > 1 && s.sets * set_bytes > avail)
            s.sets /= 2;
        if (avail > 0 && set_bytes > avail) {
            note(r, RESULT_SKIPPED, "needs %.1f GiB, %.1f GiB of host memory free",
                 set_bytes / 1073741824.0, avail / HOST_FRACTION / 1073741824.0);
            return;
        }
    }
    r->sets = s.sets;
    memset(s.b, 0, sizeof s.b);
    gk_status st = alloc_sets(ctx, c, counts, &s);
    if (st == GK_OK)
        st = measure(ctx, c, &s, o, r);
    free_sets(&s);
    if (st == GK_E_OUT_OF_MEMORY)
        note(r, RESULT_SKIPPED, "does not fit in memory (%.1f GiB x %.0f sets)",
             set_bytes / 1073741824.0, (double)s.sets);
    else if (st != GK_OK) {
        r->status = st == GK_E_UNSUPPORTED ? RESULT_UNSUPPORTED : RESULT_ERROR;
        snprintf(r->note, sizeof r->note, "%s", gk_last_error());
    }
}

/* Ops named in a comma-separated list, as a bit mask over bench_op. */
static unsigned long parse_ops(const char *list)
{
    if (list == NULL)
        return ~0ul;
    unsigned long mask = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        bench_op op;
        if (!bench_op_lookup(tok, &op)) {
            fprintf(stderr, "gkbench: unknown op '%s'; ops:", tok);
            for (int i = 0; i < OP_COUNT; i++)
                fprintf(stderr, " %s", bench_op_name((bench_op)i));
            fprintf(stderr, "\n");
            exit(2);
        }
        mask |= 1ul << op;
    }
    return mask;
}

static void write_file(const char *path, const bench_meta *meta, const bench_result *r, size_t n,
                       int json)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(EXIT_FAILURE);
    }
    if (json)
        report_json(f, meta, r, n);
    else
        report_csv(f, r, n);
    if (fclose(f) != 0) {
        perror(path);
        exit(EXIT_FAILURE);
    }
}

int main(int argc, char **argv)
{
    bench_opts o = {.backends = GKX_ALL, .reps = 0};
    const gkx_flag flags[] = {
        {"--quick", GKX_SWITCH, &o.quick, "small sizes, few repetitions (< 60 s on 2 cores)"},
        {"--backend", GKX_BACKENDS, &o.backends, "cpu | cuda | all (default all available)"},
        {"--op", GKX_STRING, &o.ops, "only these ops, comma-separated (see --list)"},
        {"--csv", GKX_STRING, &o.csv, "also write the results as CSV to this file"},
        {"--json", GKX_STRING, &o.json, "also write the results as JSON to this file"},
        {"--reps", GKX_INT, &o.reps, "timed repetitions per case, median reported (7; quick 3)"},
        {"--threads", GKX_INT, &o.cpu_threads, "CPU backend threads (default: OpenMP's)"},
        {"--tf32", GKX_SWITCH, &o.tf32, "let float32 gemm use TF32 tensor cores"},
        {"--list", GKX_SWITCH, &o.list, "list the workloads and exit"},
        {"--sweep", GKX_SWITCH, &o.sweep,
         "instead: cpu, cuda and auto on host data over sizes, 1e2..1e8 (quick: ..1e6);\n"
         "                   CSV to --csv (default sweep.csv); honours --op, --threads, --tf32"},
        {"--png", GKX_STRING, &o.png, "with --sweep: also plot the sweep into this PNG"},
        {"--reps-csv", GKX_STRING, &o.reps_csv,
         "with --sweep: every timed batch to this CSV, with the context it followed"},
    };
    gkx_parse_flags(argc, argv,
                    "Times libgpukern's ops per backend: median seconds per call after warm-up,\n"
                    "with GB/s (bytes a call must move) or GFLOP/s. Workloads marked cuda in\n"
                    "--list are too slow for a CPU and run on CUDA only.",
                    flags, (int)(sizeof flags / sizeof flags[0]));
    o.min_rep_s = o.quick ? 0.01 : 0.05;
    o.max_case_s = o.quick ? 2.0 : 30.0;
    if (o.reps <= 0)
        o.reps = o.quick ? 3 : 7;
    unsigned long ops = parse_ops(o.ops);
    if (o.sweep) {
        char load[64];
        load_average(load, sizeof load);
        catch_signals();
        sweep_opts so = {.quick = o.quick,
                         .cpu_threads = o.cpu_threads,
                         .tf32 = o.tf32,
                         .ops = ops,
                         .csv = o.csv ? o.csv : "sweep.csv",
                         .png = o.png,
                         .reps_csv = o.reps_csv,
                         .loadavg = load,
                         .stop = &interrupted};
        return sweep_main(&so);
    }

    size_t ncases;
    const bench_case *cases = bench_cases(o.quick, &ncases);
    if (o.list) {
        for (size_t i = 0; i < ncases; i++) {
            char size[64];
            bench_case_size(&cases[i], size, sizeof size);
            printf("%-12s %-7s %-18s %s\n", bench_op_name(cases[i].op),
                   cases[i].dtype == GK_FLOAT64 ? "float64" : "float32", size,
                   cases[i].where == GKX_ALL    ? "cpu,cuda"
                   : cases[i].where == GKX_CUDA ? "cuda"
                                                : "cpu");
        }
        return EXIT_SUCCESS;
    }

    char date[32], host[256] = "unknown", load[64];
    load_average(load, sizeof load);
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    gethostname(host, sizeof host - 1);
    bench_meta meta = {.version = gk_version_string(),
                       .date = date,
                       .host = host,
                       .loadavg = load,
                       .quick = o.quick,
                       .tf32 = o.tf32,
                       .cpu_threads = o.cpu_threads,
                       .min_rep_s = o.min_rep_s};
    printf("gkbench, libgpukern %s, %s, %s%s, load average %s\n", meta.version, date,
           o.quick ? "quick" : "full", o.tf32 ? ", TF32 allowed" : "", load);

    gk_backend be[2];
    int nb = gkx_backends(o.backends, be);
    bench_result *res = gkx_malloc(2 * ncases * sizeof *res);
    char *device_names[3] = {NULL, NULL, NULL};
    size_t nres = 0;
    int failed = 0;
    double t0 = gkx_now();
    catch_signals();
    for (int b = 0; b < nb && !interrupted; b++) {
        gk_context *ctx = NULL;
        GKX_CHECK(gkx_open(be[b], o.cpu_threads, o.tf32, &ctx));
        const char *dev = gk_context_device_name(ctx);
        device_names[be[b]] = gkx_malloc(strlen(dev) + 1);
        strcpy(device_names[be[b]], dev);
        meta.device[be[b]] = device_names[be[b]];
        printf("\n[%s] %s\n", gkx_backend_name(be[b]), dev);
        report_table_header(stdout);
        unsigned bit = be[b] == GK_BACKEND_CUDA ? GKX_CUDA : GKX_CPU;
        for (size_t i = 0; i < ncases && !interrupted; i++) {
            if (!(cases[i].where & bit) || !(ops >> cases[i].op & 1))
                continue;
            run_case(ctx, be[b], &cases[i], &o, &res[nres]);
            report_table_row(stdout, &res[nres]);
            failed |= res[nres].status == RESULT_ERROR;
            nres++;
        }
        gk_context_destroy(ctx);
    }
    printf("\n%zu results in %.1f s%s\n", nres, gkx_now() - t0,
           interrupted ? " (interrupted: the remaining cases did not run)" : "");
    if (o.csv != NULL)
        write_file(o.csv, &meta, res, nres, 0);
    if (o.json != NULL)
        write_file(o.json, &meta, res, nres, 1);
    for (int i = 0; i < 3; i++)
        free(device_names[i]);
    free(res);
    if (failed)
        fprintf(stderr, "gkbench: some calls failed (status error above)\n");
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
