/* SPDX-License-Identifier: MIT */
/* calibrate.c - measures an AUTO context's cost model and keeps it in a per-device cache file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cache_file.h"
#include "check.h"
#include "dispatch.h"
#include "env.h"

/* Sizes of the calibration runs: large enough to show each device's full rate (the model is
 * linear, so a rate taken where fixed costs still dominate misplaces large calls), small
 * enough that the whole calibration takes a few seconds on a laptop CPU. The GPU runs the
 * matrix-shaped work CAL_GPU_SCALE times larger in each dimension for the same reason. */
#define CAL_STREAM_N (4u << 20)
#define CAL_GEMM_N 1024u
#define CAL_RBF_ROWS_N (1u << 18)
#define CAL_RBF_ROWS_D 16u
#define CAL_PAIRS_N 1024u
#define CAL_PAIRS_D 20u
#define CAL_GPU_SCALE 4u
#define CAL_TRANSFER_BYTES (32u << 20)
#define CAL_REPEATS 3

/* The cache file for this context's device and this host (cache_file.h): GK_CACHE_INVALID (a
 * GK_CALIBRATION refused) is GK_E_INVALID_ARGUMENT, recorded; an unusable default path is logged,
 * as no cache file. */
static gk_status cache_path(const char *fn, const gk_context *ctx, char *path, size_t size,
                            gk_cache_where *where)
{
    char host[128] = "host", why[256];
    gethostname(host, sizeof host - 1);
    *where = gk__cache_file_path(gk__env("GK_CALIBRATION"), gk__env("XDG_CACHE_HOME"),
                                 gk__env("HOME"), ctx->primary.ops->device_name(ctx->primary.state),
                                 host, path, size, why, sizeof why);
    if (*where == GK_CACHE_INVALID)
        return gk__error(GK_E_INVALID_ARGUMENT, "%s: %s", fn, why);
    if (*where == GK_CACHE_UNUSABLE)
        gk__log("AUTO cost model: no cache file: %s", why);
    return GK_OK;
}

gk_status gk__load_cost_model(const char *fn, gk_context *ctx)
{
    gk__cost_model_defaults(&ctx->model);
    char path[GK_CACHE_PATH_MAX], why[256];
    gk_cache_where where;
    GK_FORWARD(cache_path(fn, ctx, path, sizeof path, &where));
    if (where <= GK_CACHE_NONE)
        gk__log("AUTO cost model: built-in defaults (no cache file)");
    else if (gk__cost_model_load(&ctx->model, path, why, sizeof why))
        gk__log("AUTO cost model loaded from %s", path);
    else
        gk__log("AUTO cost model: built-in defaults, %s not used: %s", path, why);
    return GK_OK;
}

/* Scratch of one calibration: host arrays for the CPU's runs, device arrays for the GPU's. */
typedef struct cal_buffers {
    void *host[3];
    void *dev[3];
} cal_buffers;

/* Bytes of each array: the largest operand of any run, in float64. */
#define CAL_HOST_BYTES ((size_t)CAL_STREAM_N * 8u)
#define CAL_DEV_BYTES ((size_t)CAL_GEMM_N * CAL_GPU_SCALE * CAL_GEMM_N * CAL_GPU_SCALE * 8u)

/* Runs the calibration op of class cls at size n on the call's engine: n elements for the
 * streaming classes, n rows for rbf_rows, n x n matrices for gemm and the pairwise kernels. */
static gk_status run_class(const gk_call *call, gk_work_class cls, gk_dtype t, void *const *p,
                           size_t n)
{
    switch (cls) {
    case GK_WORK_STREAM:
        return GK_CALL(call, add, t, n, p[0], p[1], p[2]);
    case GK_WORK_EXP:
        return GK_CALL(call, exp, t, n, p[0], p[1]);
    case GK_WORK_GEMM:
        return GK_CALL(call, gemm, t, GK_NO_TRANS, GK_NO_TRANS, n, n, n, 1.0, p[0], n, p[1], n, 0.0,
                       p[2], n);
    case GK_WORK_RBF_ROWS:
        return GK_CALL(call, rbf_rows, t, n, CAL_RBF_ROWS_D, 0.5, p[0], p[1], p[2]);
    case GK_WORK_RBF_PAIRS:
        return GK_CALL(call, rbf_matrix, t, n, n, CAL_PAIRS_D, 0.5, p[0], p[1], p[2]);
    case GK_WORK_RNG_UNIFORM:
        return GK_CALL(call, rng_uniform, t, n, 1, 0, p[2]);
    case GK_WORK_RNG_NORMAL:
        return GK_CALL(call, rng_normal, t, n, 1, 0, 0.0, 1.0, p[2]);
    case GK_WORK_CLASSES:
        break;
    }
    return gk__error(GK_E_INTERNAL, "%s: no calibration run for work class %d", call->fn, (int)cls);
}

/* Best of a few runs on the call's engine (after one warm-up), waiting for the device. */
static gk_status time_class(const gk_call *call, gk_work_class cls, gk_dtype t, void *const *p,
                            size_t n, double *best)
{
    const gk_engine *e = call->engine;
    *best = 1e30;
    for (int r = 0; r <= CAL_REPEATS; r++) {
        double start = gk__now();
        GK_FORWARD(run_class(call, cls, t, p, n));
        GK_FORWARD(e->ops->synchronize(e->state));
        double elapsed = gk__now() - start;
        if (r > 0 && elapsed < *best)
            *best = elapsed;
    }
    return GK_OK;
}

/* The calibration run of each class: its size on the CPU and on the GPU. */
static const struct {
    gk_work_class cls;
    size_t cpu_n, gpu_n;
} classes[] = {{GK_WORK_STREAM, CAL_STREAM_N, CAL_STREAM_N},
               {GK_WORK_EXP, CAL_STREAM_N, CAL_STREAM_N},
               {GK_WORK_GEMM, CAL_GEMM_N, (CAL_GEMM_N * CAL_GPU_SCALE)},
               {GK_WORK_RBF_ROWS, CAL_RBF_ROWS_N, CAL_RBF_ROWS_N},
               {GK_WORK_RBF_PAIRS, CAL_PAIRS_N, (CAL_PAIRS_N * CAL_GPU_SCALE)},
               {GK_WORK_RNG_UNIFORM, CAL_STREAM_N, CAL_STREAM_N},
               {GK_WORK_RNG_NORMAL, CAL_STREAM_N, CAL_STREAM_N}};
#define CAL_CLASSES (sizeof classes / sizeof classes[0])

/* Runs every class once at size 1 on both engines, so that a backend lacking one of the ops
 * fails before seconds of measuring, and every kernel is loaded before it is timed. */
static gk_status probe(const gk_call *cpu, const gk_call *gpu, cal_buffers *b)
{
    for (int f64 = 0; f64 < 2; f64++)
        for (size_t i = 0; i < CAL_CLASSES; i++) {
            gk_dtype t = f64 ? GK_FLOAT64 : GK_FLOAT32;
            GK_FORWARD(run_class(cpu, classes[i].cls, t, b->host, 1));
            GK_FORWARD(run_class(gpu, classes[i].cls, t, b->dev, 1));
        }
    return GK_OK;
}

/* The work of class cls's calibration run on the CPU, in the class's units. */
static double cal_work(gk_work_class cls, int f64)
{
    double size = f64 ? 8.0 : 4.0;
    switch (cls) {
    case GK_WORK_STREAM:
        return 3.0 * CAL_STREAM_N * size;
    case GK_WORK_EXP:
        return 2.0 * CAL_STREAM_N * size;
    case GK_WORK_GEMM:
        return 2.0 * CAL_GEMM_N * CAL_GEMM_N * (double)CAL_GEMM_N;
    case GK_WORK_RBF_ROWS:
        return 2.0 * CAL_RBF_ROWS_N * CAL_RBF_ROWS_D * size;
    case GK_WORK_RBF_PAIRS:
        return (double)CAL_PAIRS_N * CAL_PAIRS_N * CAL_PAIRS_D;
    case GK_WORK_RNG_UNIFORM:
    case GK_WORK_RNG_NORMAL:
        return CAL_STREAM_N * size;
    case GK_WORK_CLASSES:
        break;
    }
    return 0.0;
}

/* How much more work the GPU's run of class cls does than the CPU's: CAL_GPU_SCALE in each
 * dimension of the matrix-shaped ones. */
static double cal_gpu_factor(gk_work_class cls)
{
    double g = CAL_GPU_SCALE;
    return cls == GK_WORK_GEMM ? g * g * g : cls == GK_WORK_RBF_PAIRS ? g * g : 1.0;
}

/* Measures the rate of each work class and dtype on the call's engine, the CPU's (on_gpu 0: the
 * host arrays, the CPU's sizes) or the GPU's, into rate[class][f64]; with keep_faster, a class
 * keeps the rate it has when that is the faster (see gk_context_calibrate's second CPU pass). */
static gk_status measure_rates(const gk_call *call, int on_gpu, cal_buffers *b, double (*rate)[2],
                               int keep_faster)
{
    for (int f64 = 0; f64 < 2; f64++)
        for (size_t i = 0; i < CAL_CLASSES; i++) {
            gk_work_class cls = classes[i].cls;
            double seconds;
            GK_FORWARD(time_class(call, cls, f64 ? GK_FLOAT64 : GK_FLOAT32,
                                  on_gpu ? b->dev : b->host,
                                  on_gpu ? classes[i].gpu_n : classes[i].cpu_n, &seconds));
            double r = cal_work(cls, f64) * (on_gpu ? cal_gpu_factor(cls) : 1.0) / seconds;
            if (!keep_faster || r > rate[cls][f64])
                rate[cls][f64] = r;
        }
    return GK_OK;
}

/* Transfer rates and the fixed cost of a staged device call and of a CPU call. */
static gk_status measure_overheads(const gk_call *cpu, const gk_call *gpu, cal_buffers *b,
                                   gk_cost_model *m)
{
    const gk_engine *g = gpu->engine;
    double best_in = 1e30, best_out = 1e30, best_call = 1e30, best_cpu = 1e30;
    for (int r = 0; r <= CAL_REPEATS; r++) {
        double t0 = gk__now();
        GK_FORWARD(g->ops->mem_write(g->state, b->dev[0], b->host[0], CAL_TRANSFER_BYTES));
        double t1 = gk__now();
        GK_FORWARD(g->ops->mem_read(g->state, b->host[0], b->dev[0], CAL_TRANSFER_BYTES));
        double t2 = gk__now();
        /* What gk__call_begin and gk__call_end do for a one-element call on host data. */
        void *tmp = NULL;
        GK_FORWARD(g->ops->mem_alloc(g->state, 4, &tmp));
        gk_status st = g->ops->mem_write(g->state, tmp, b->host[1], 4);
        if (st == GK_OK)
            st = GK_CALL(gpu, add, GK_FLOAT32, 1, tmp, tmp, tmp);
        if (st == GK_OK)
            st = g->ops->mem_read(g->state, b->host[2], tmp, 4);
        g->ops->mem_free(g->state, tmp, 4);
        GK_FORWARD(st);
        double t3 = gk__now();
        GK_FORWARD(GK_CALL(cpu, add, GK_FLOAT32, 1, b->host[0], b->host[1], b->host[2]));
        double t4 = gk__now();
        if (r == 0)
            continue;
        best_in = t1 - t0 < best_in ? t1 - t0 : best_in;
        best_out = t2 - t1 < best_out ? t2 - t1 : best_out;
        best_call = t3 - t2 < best_call ? t3 - t2 : best_call;
        best_cpu = t4 - t3 < best_cpu ? t4 - t3 : best_cpu;
    }
    m->h2d_bytes_per_s = CAL_TRANSFER_BYTES / best_in;
    m->d2h_bytes_per_s = CAL_TRANSFER_BYTES / best_out;
    m->gpu_call_s = best_call;
    m->cpu_call_s = best_cpu;
    return GK_OK;
}

static void free_buffers(gk_context *ctx, cal_buffers *b)
{
    for (int i = 0; i < 3; i++) {
        gk__free(b->host[i]);
        if (b->dev[i] != NULL)
            ctx->primary.ops->mem_free(ctx->primary.state, b->dev[i], CAL_DEV_BYTES);
    }
}

/* Three host and three device arrays large enough for every calibration run, all zeros so
 * exp and the kernels see ordinary numbers. The CPU writes its zeros itself: pages of fresh
 * memory that are only read map the kernel's one zero page, which stays in cache, so the CPU's
 * runs on calloc'd inputs would time reads that cost nothing and overstate its rates. */
static gk_status alloc_buffers(const gk_call *cpu, const gk_call *gpu, cal_buffers *b)
{
    const gk_engine *g = gpu->engine;
    for (int i = 0; i < 3; i++) {
        b->host[i] = gk__malloc(CAL_HOST_BYTES);
        GK_CHECK(b->host[i] != NULL, GK_E_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", gpu->fn,
                 CAL_HOST_BYTES);
        GK_FORWARD(GK_CALL(cpu, fill, GK_FLOAT64, CAL_HOST_BYTES / 8u, 0.0, b->host[i]));
        GK_FORWARD(g->ops->mem_alloc(g->state, CAL_DEV_BYTES, &b->dev[i]));
        GK_FORWARD(GK_CALL(gpu, fill, GK_FLOAT64, CAL_DEV_BYTES / 8u, 0.0, b->dev[i]));
    }
    return GK_OK;
}

static void save(const char *path, gk_cache_where where, const gk_cost_model *m)
{
    char why[256];
    if (where <= GK_CACHE_NONE)
        return;
    if (gk__cost_model_save(m, path, where == GK_CACHE_DEFAULT, why, sizeof why))
        gk__log("AUTO cost model saved to %s", path);
    else
        gk__log("AUTO cost model: not saved to %s: %s", path, why);
}

GK_API gk_status gk_context_calibrate(gk_context *ctx, uint32_t flags)
{
    static const char fn[] = "gk_context_calibrate";
    GK_FORWARD(gk__check_context(fn, ctx));
    GK_CHECK(flags == 0, GK_E_INVALID_ARGUMENT, "%s: flags (0x%x) has unknown bits", fn, flags);
    if (!ctx->hybrid)
        return GK_OK;
    char path[GK_CACHE_PATH_MAX];
    gk_cache_where where;
    GK_FORWARD(cache_path(fn, ctx, path, sizeof path, &where));
    cal_buffers b;
    memset(&b, 0, sizeof b);
    gk_cost_model m = ctx->model;
    gk_call cpu = gk__call_on(fn, &ctx->secondary), gpu = gk__call_on(fn, &ctx->primary);
    gk_status st = alloc_buffers(&cpu, &gpu, &b);
    if (st == GK_OK)
        st = probe(&cpu, &gpu, &b);
    if (st == GK_OK)
        st = measure_overheads(&cpu, &gpu, &b, &m);
    if (st == GK_OK)
        st = measure_rates(&cpu, 0, &b, m.cpu_rate, 0);
    if (st == GK_OK)
        st = measure_rates(&gpu, 1, &b, m.gpu_rate, 0);
    /* The CPU's runs once more, each class keeping the faster of its two rates. Why: the CPU
     * backend sizes its team by the cores that other processes left idle over the last 100 ms
     * (cpu_team.c; at a process's start, by /proc/loadavg's runnable tasks), so a pass in a
     * busy moment can measure a smaller team than the context's, and the rate is kept in the
     * cache file for every later process (a calibration right after a build once stored a
     * thirty-fifth of the CPU's usual stream rate). The GPU's runs between take some 0.3 s,
     * past several of those windows. */
    if (st == GK_OK)
        st = measure_rates(&cpu, 0, &b, m.cpu_rate, 1);
    free_buffers(ctx, &b);
    if (st != GK_OK)
        return gk__error_in(st, fn);
    ctx->model = m;
    /* Measurements were against the old model's predictions. */
    memset(ctx->history, 0, sizeof *ctx->history);
    save(path, where, &m);
    return GK_OK;
}
