/* SPDX-License-Identifier: MIT */
/* auto_percall.c - what an AUTO context's call costs over a CPU context's, per op and size. */
/*
 *     auto_percall [--reps N] [--no-calibrate] [--cuda] [--each] op:size ...   (op: add, rbf_rows,
 *                                                        rbf_matrix, gemm, rng_uniform; float32)
 *
 * Sizes as gkbench --sweep names them (add and rng n elements, rbf_rows n*d with d = 20,
 * rbf_matrix n*n with d = 20, gemm n). Two CPU contexts and an AUTO one on the same host arrays
 * (AUTO calibrated first, unless --no-calibrate: then GK_CALIBRATION or its cache decides),
 * timed in batches of at least 2 ms (a shorter one sizes the next) interleaved in every order,
 * each after a few untimed calls, as the sweep times them; with --cuda a CUDA context's batches
 * too, between them as in the sweep (its time is not reported); with --each every timed batch
 * also, after the context whose batch came before it. Prints the median per call of each,
 * AUTO's excess over the first CPU context in nanoseconds and as a ratio, the second CPU
 * context's ratio (what two identical contexts differ by here: the noise floor), and where
 * AUTO's timed calls ran. Where every AUTO call runs on the CPU, the excess is AUTO's own cost.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "common.h"

enum { CPU, CPU2, AUTO, CUDA, NCTX };
#define MAX_REPS 63
#define MIN_BATCH_S 2e-3

static int parse_case(const char *spec, bench_case *c)
{
    char op[32];
    double size;
    if (sscanf(spec, "%31[a-z_]:%lf", op, &size) != 2 || !(size >= 1))
        return 0;
    memset(c, 0, sizeof *c);
    c->dtype = GK_FLOAT32;
    c->where = GKX_ALL;
    if (!bench_op_lookup(op, &c->op))
        return 0;
    switch (c->op) {
    case OP_ADD:
    case OP_RNG_UNIFORM:
        c->n = (size_t)size;
        return 1;
    case OP_RBF_ROWS:
        c->n = (size_t)(size / 20 + 0.5);
        c->k = 20;
        return c->n > 0;
    case OP_RBF_MATRIX:
        c->m = c->n = (size_t)(sqrt(size) + 0.5);
        c->k = 20;
        return 1;
    case OP_GEMM:
        c->m = c->n = c->k = (size_t)size;
        return 1;
    default:
        return 0;
    }
}

static double batch(gk_context *ctx, const bench_case *c, gk_buffer *const *b, int calls,
                    uint64_t *iter, int *on)
{
    double t0 = gkx_now();
    for (int i = 0; i < calls; i++) {
        GKX_CHECK(bench_case_run(ctx, c, b, (*iter)++));
        if (on != NULL)
            on[gk_context_last_backend(ctx) % 3]++;
    }
    GKX_CHECK(gk_context_synchronize(ctx));
    return (gkx_now() - t0) / calls;
}

static void run(gk_context *const *ctx, int nctx, const bench_case *c, int reps, int each)
{
    size_t counts[BENCH_MAX_OPERANDS];
    int nbuf = bench_case_operands(c, counts);
    float *host[BENCH_MAX_OPERANDS];
    gk_buffer *b[NCTX][BENCH_MAX_OPERANDS];
    for (int j = 0; j < nbuf; j++) {
        host[j] = gkx_malloc(counts[j] * sizeof(float));
        for (int k = 0; k < nctx; k++)
            GKX_CHECK(gk_buffer_wrap_host(ctx[k], GK_FLOAT32, counts[j], host[j], &b[k][j]));
        GKX_CHECK(gk_rng_uniform(ctx[CPU], 1000 + (uint64_t)j, 0, b[CPU][j]));
    }
    uint64_t iter = 0;
    int calls[NCTX], on[3] = {0};
    for (int k = 0; k < nctx; k++) {
        double est = batch(ctx[k], c, b[k], 1, &iter, NULL);
        for (int i = 0; i < 3; i++) {
            double t = batch(ctx[k], c, b[k], 1, &iter, NULL);
            est = t < est ? t : est;
        }
        calls[k] = (int)(MIN_BATCH_S / (est > 1e-9 ? est : 1e-9)) + 1;
    }
    /* Every order of the contexts in turn (Heap's permutations), so each follows each other
     * one equally often over a full cycle. */
    int orders[24][NCTX], norders = 0, perm[NCTX] = {0}, cnt[NCTX] = {0};
    for (int k = 0; k < nctx; k++)
        perm[k] = k;
    memcpy(orders[norders++], perm, sizeof perm);
    for (int i = 1; i < nctx;) {
        if (cnt[i] < i) {
            int j = i % 2 ? cnt[i] : 0, tmp = perm[j];
            perm[j] = perm[i];
            perm[i] = tmp;
            memcpy(orders[norders++], perm, sizeof perm);
            cnt[i]++;
            i = 1;
        } else {
            cnt[i++] = 0;
        }
    }
    static const char *const names[NCTX] = {"cpu", "cpu2", "auto", "cuda"};
    double v[NCTX][MAX_REPS];
    int prev = AUTO; /* the last to warm up */
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < nctx; j++) {
            int k = orders[r % norders][j];
            batch(ctx[k], c, b[k], calls[k] / 8 + 1, &iter, NULL);
            v[k][r] = batch(ctx[k], c, b[k], calls[k], &iter, k == AUTO ? on : NULL);
            if (each)
                printf("  rep %2d %-4s after %-4s %d calls %10.4g us a call\n", r, names[k],
                       names[prev], calls[k], v[k][r] * 1e6);
            prev = k;
            if (calls[k] * v[k][r] < MIN_BATCH_S)
                calls[k] = (int)(MIN_BATCH_S / (v[k][r] > 1e-9 ? v[k][r] : 1e-9)) + 1;
        }
    double t[NCTX];
    for (int k = 0; k < nctx; k++)
        t[k] = gkx_median(v[k], reps);
    char size[64];
    bench_case_size(c, size, sizeof size);
    printf("%-11s %-16s cpu %10.4g us  cpu2 %10.4g us  auto %10.4g us  auto-cpu %+9.1f ns  "
           "auto/cpu %.3f  cpu2/cpu %.3f  auto ran: %d cpu, %d cuda\n",
           bench_op_name(c->op), size, t[CPU] * 1e6, t[CPU2] * 1e6, t[AUTO] * 1e6,
           (t[AUTO] - t[CPU]) * 1e9, t[AUTO] / t[CPU], t[CPU2] / t[CPU], on[GK_BACKEND_CPU],
           on[GK_BACKEND_CUDA]);
    fflush(stdout);
    for (int k = 0; k < nctx; k++)
        for (int j = 0; j < nbuf; j++)
            gk_buffer_destroy(b[k][j]);
    for (int j = 0; j < nbuf; j++)
        free(host[j]);
}

int main(int argc, char **argv)
{
    int reps = 31, calibrate = 1, nctx = CUDA, each = 0, first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--reps") == 0 && first + 1 < argc)
            reps = atoi(argv[++first]);
        else if (strcmp(argv[first], "--no-calibrate") == 0)
            calibrate = 0;
        else if (strcmp(argv[first], "--cuda") == 0)
            nctx = NCTX;
        else if (strcmp(argv[first], "--each") == 0)
            each = 1;
        else
            break;
    }
    if (first >= argc || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "usage: %s [--reps 1..%d] [--no-calibrate] [--cuda] [--each] op:size ...\n",
                argv[0], MAX_REPS);
        return EXIT_FAILURE;
    }
    gk_context *ctx[NCTX];
    GKX_CHECK(gkx_open(GK_BACKEND_CPU, 0, 0, &ctx[CPU]));
    GKX_CHECK(gkx_open(GK_BACKEND_CPU, 0, 0, &ctx[CPU2]));
    GKX_CHECK(gkx_open(GK_BACKEND_AUTO, 0, 0, &ctx[AUTO]));
    if (nctx == NCTX)
        GKX_CHECK(gkx_open(GK_BACKEND_CUDA, 0, 0, &ctx[CUDA]));
    if (calibrate)
        GKX_CHECK(gk_context_calibrate(ctx[AUTO], 0));
    printf("# cpu, cpu2: %s; auto: %s; median of %d batches of >= 2 ms each\n",
           gk_context_device_name(ctx[CPU]), gk_context_device_name(ctx[AUTO]), reps);
    fflush(stdout);
    for (int i = first; i < argc; i++) {
        bench_case c;
        if (!parse_case(argv[i], &c)) {
            fprintf(stderr, "%s: not op:size (add, rbf_rows, rbf_matrix, gemm, rng_uniform)\n",
                    argv[i]);
            return EXIT_FAILURE;
        }
        run(ctx, nctx, &c, reps, each);
    }
    for (int k = 0; k < nctx; k++)
        gk_context_destroy(ctx[k]);
    return EXIT_SUCCESS;
}
