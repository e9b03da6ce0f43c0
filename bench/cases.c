/* SPDX-License-Identifier: MIT */
/* cases.c - gkbench's workload lists and, per op, its operands, one call and the work it does. */
#include "cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *const op_names[OP_COUNT] = {
    "fill",        "copy",          "add",
    "sub",         "mul",           "axpy",
    "scale",       "exp",           "sum",
    "dot",         "nrm2",          "gemm",
    "rbf_rows",    "rbf_matrix",    "rbf_matvec",
    "rng_uniform", "rng_normal",    "tiny_add",
    "seed004",     "kernel_matrix", "distance_matrix",
    "knn",         "kernel_matmul",
};

const char *bench_op_name(bench_op op)
{
    return op < OP_COUNT ? op_names[op] : "?";
}

int bench_op_lookup(const char *name, bench_op *op)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(name, op_names[i]) == 0) {
            *op = (bench_op)i;
            return 1;
        }
    return 0;
}

#define MAX_CASES 96
static bench_case list[MAX_CASES];
static size_t list_len;

static void add(bench_op op, gk_dtype t, size_t m, size_t n, size_t k, unsigned where)
{
    if (list_len < MAX_CASES)
        list[list_len++] = (bench_case){op, t, m, n, k, where};
}

/* Every streaming op once at one size: element-wise, reductions and rng. */
static void streaming_ops(gk_dtype t, size_t n, unsigned where)
{
    for (int op = OP_FILL; op <= OP_NRM2; op++)
        add((bench_op)op, t, 0, n, 0, where);
    add(OP_RNG_UNIFORM, t, 0, n, 0, where);
    add(OP_RNG_NORMAL, t, 0, n, 0, where);
}

/* Seconds on a 2-core CPU: every op once, at sizes where a call takes micro- to milliseconds. */
static void quick_list(void)
{
    streaming_ops(GK_FLOAT32, 1000000, GKX_ALL);
    add(OP_ADD, GK_FLOAT64, 0, 1000000, 0, GKX_ALL);
    add(OP_TINY_ADD, GK_FLOAT32, 0, 1000, 0, GKX_ALL);
    add(OP_GEMM, GK_FLOAT32, 512, 512, 512, GKX_ALL);
    add(OP_GEMM, GK_FLOAT64, 512, 512, 512, GKX_ALL);
    add(OP_RBF_ROWS, GK_FLOAT32, 0, 1000, 20, GKX_ALL); /* seed 000's size */
    add(OP_RBF_ROWS, GK_FLOAT32, 0, 100000, 20, GKX_ALL);
    add(OP_RBF_MATRIX, GK_FLOAT32, 1024, 1024, 20, GKX_ALL);
    add(OP_RBF_MATVEC, GK_FLOAT32, 4096, 4096, 3, GKX_ALL);
    add(OP_SEED004, GK_FLOAT64, 5, 500, 0, GKX_ALL);
    add(OP_KERNEL_MATRIX, GK_FLOAT32, 1024, 1024, 64, GKX_ALL);
    add(OP_DISTANCE_MATRIX, GK_FLOAT32, 1024, 1024, 64, GKX_ALL);
    add(OP_KNN, GK_FLOAT32, 1000, 10000, 64, GKX_ALL);
    add(OP_KERNEL_MATMUL, GK_FLOAT32, 4096, 4096, 64, GKX_ALL);
}

/* DESIGN.md's performance table (CUDA workloads, CPU rows), plus every op over sizes from
 * cache-resident to memory-resident on both backends. */
static void full_list(void)
{
    static const size_t sweep[] = {10000, 1000000, 100000000};
    for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++)
        streaming_ops(GK_FLOAT32, sweep[i], GKX_ALL);
    streaming_ops(GK_FLOAT64, 10000000, GKX_ALL);
    add(OP_ADD, GK_FLOAT32, 0, 250000000, 0, GKX_ALL);
    add(OP_TINY_ADD, GK_FLOAT32, 0, 1000, 0, GKX_ALL);
    add(OP_RBF_ROWS, GK_FLOAT32, 0, 1000, 20, GKX_ALL);
    add(OP_RBF_ROWS, GK_FLOAT32, 0, 1000000, 20, GKX_ALL);
    add(OP_RBF_ROWS, GK_FLOAT32, 0, 10000000, 32, GKX_ALL);
    add(OP_RBF_MATRIX, GK_FLOAT32, 4096, 4096, 20, GKX_ALL);
    add(OP_RBF_MATRIX, GK_FLOAT32, 16384, 16384, 20, GKX_CUDA);
    add(OP_RBF_MATRIX, GK_FLOAT32, 16384, 16384, 256, GKX_CUDA);
    add(OP_RBF_MATVEC, GK_FLOAT32, 100000, 100000, 3, GKX_ALL);
    add(OP_RBF_MATVEC, GK_FLOAT32, 1000000, 1000000, 3, GKX_CUDA);
    add(OP_GEMM, GK_FLOAT32, 4096, 4096, 4096, GKX_ALL);
    add(OP_GEMM, GK_FLOAT64, 4096, 4096, 4096, GKX_ALL);
    add(OP_GEMM, GK_FLOAT32, 8192, 8192, 8192, GKX_CUDA);
    add(OP_GEMM, GK_FLOAT64, 8192, 8192, 8192, GKX_CUDA);
    add(OP_SEED004, GK_FLOAT64, 5, 5000, 0, GKX_ALL);
    /* Issue 34's rows: the GPU sizes, and the CPU's where a call takes under a few seconds. */
    add(OP_KERNEL_MATRIX, GK_FLOAT32, 4096, 4096, 64, GKX_ALL);
    add(OP_KERNEL_MATRIX, GK_FLOAT32, 16384, 16384, 64, GKX_CUDA);
    add(OP_DISTANCE_MATRIX, GK_FLOAT32, 4096, 4096, 64, GKX_ALL);
    add(OP_DISTANCE_MATRIX, GK_FLOAT32, 16384, 16384, 64, GKX_CUDA);
    add(OP_KNN, GK_FLOAT32, 10000, 100000, 64, GKX_ALL);
    add(OP_KNN, GK_FLOAT32, 100000, 1000000, 64, GKX_CUDA);
    add(OP_KERNEL_MATMUL, GK_FLOAT32, 20000, 20000, 64, GKX_ALL);
    add(OP_KERNEL_MATMUL, GK_FLOAT32, 200000, 200000, 64, GKX_CUDA);
}

const bench_case *bench_cases(int quick, size_t *count)
{
    list_len = 0;
    if (quick)
        quick_list();
    else
        full_list();
    *count = list_len;
    return list;
}

/* 1000000 -> "1e6", 250000000 -> "2.5e8", 16384 -> "16384": how the sizes are usually said. */
static void count_str(size_t n, char *buf, size_t len)
{
    char g[16];
    snprintf(g, sizeof g, "%.4g", (double)n);
    char *e = strchr(g, 'e');
    if (n < 100000 || e == NULL || strtod(g, NULL) != (double)n) {
        snprintf(buf, len, "%zu", n);
        return;
    }
    *e = '\0';
    snprintf(buf, len, "%se%d", g, atoi(e + 1));
}

void bench_case_size(const bench_case *c, char *buf, size_t len)
{
    char m[32], n[32];
    count_str(c->m, m, sizeof m);
    count_str(c->n, n, sizeof n);
    switch (c->op) {
    case OP_GEMM:
        snprintf(buf, len, "%sx%sx%zu", m, n, c->k);
        break;
    case OP_RBF_ROWS:
        snprintf(buf, len, "%sx%zu", n, c->k);
        break;
    case OP_RBF_MATRIX:
    case OP_RBF_MATVEC:
    case OP_KERNEL_MATRIX:
    case OP_DISTANCE_MATRIX:
    case OP_KNN:
    case OP_KERNEL_MATMUL:
        snprintf(buf, len, "%sx%sx%zu", m, n, c->k);
        break;
    case OP_SEED004:
        snprintf(buf, len, "%zux%s^2", c->m, n);
        break;
    default:
        snprintf(buf, len, "%s", n);
    }
}

int bench_case_operands(const bench_case *c, size_t counts[BENCH_MAX_OPERANDS])
{
    size_t m = c->m, n = c->n, k = c->k;
    switch (c->op) {
    case OP_FILL:
    case OP_SCALE:
    case OP_SUM:
    case OP_NRM2:
    case OP_RNG_UNIFORM:
    case OP_RNG_NORMAL:
        counts[0] = n;
        return 1;
    case OP_COPY:
    case OP_AXPY:
    case OP_EXP:
    case OP_DOT:
        counts[0] = counts[1] = n;
        return 2;
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_TINY_ADD:
        counts[0] = counts[1] = counts[2] = n;
        return 3;
    case OP_GEMM:
        counts[0] = m * k, counts[1] = k * n, counts[2] = m * n;
        return 3;
    case OP_RBF_ROWS:
        counts[0] = counts[1] = n * k, counts[2] = n;
        return 3;
    case OP_RBF_MATRIX:
    case OP_KERNEL_MATRIX:
    case OP_DISTANCE_MATRIX:
        counts[0] = m * k, counts[1] = n * k, counts[2] = m * n;
        return 3;
    case OP_KNN:
        counts[0] = m * k, counts[1] = n * k, counts[2] = counts[3] = m * BENCH_KNN_K;
        return 4;
    case OP_KERNEL_MATMUL:
        counts[0] = m * k, counts[1] = n * k, counts[2] = n * BENCH_MATMUL_R;
        counts[3] = m * BENCH_MATMUL_R;
        return 4;
    case OP_RBF_MATVEC:
        counts[0] = m * k, counts[1] = n * k, counts[2] = n, counts[3] = m;
        return 4;
    case OP_SEED004:
        counts[0] = counts[1] = n * n;
        return 2;
    case OP_COUNT:
        break;
    }
    return 0;
}

gk_dtype bench_case_operand_dtype(const bench_case *c, int j)
{
    return c->op == OP_KNN && j == 3 ? GK_INT64 : c->dtype;
}

int bench_case_rotates(const bench_case *c)
{
    return c->op <= OP_NRM2 || c->op == OP_RBF_ROWS || c->op == OP_RNG_UNIFORM ||
           c->op == OP_RNG_NORMAL;
}

double bench_case_bytes(const bench_case *c)
{
    double s = c->dtype == GK_FLOAT64 ? 8.0 : 4.0, n = (double)c->n;
    double m = (double)c->m, k = (double)c->k;
    switch (c->op) {
    case OP_FILL:
    case OP_SUM:
    case OP_NRM2:
    case OP_RNG_UNIFORM:
    case OP_RNG_NORMAL:
        return n * s;
    case OP_COPY:
    case OP_SCALE:
    case OP_EXP:
    case OP_DOT:
        return 2 * n * s;
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_AXPY:
        return 3 * n * s;
    case OP_RBF_ROWS:
        return (2 * n * k + n) * s;
    case OP_RBF_MATRIX: /* the least traffic possible: both inputs once, the output once */
    case OP_KERNEL_MATRIX:
    case OP_DISTANCE_MATRIX:
        return (m * n + (m + n) * k) * s;
    default:
        return 0;
    }
}

double bench_case_flops(const bench_case *c)
{
    double m = (double)c->m, n = (double)c->n, k = (double)c->k;
    switch (c->op) {
    case OP_GEMM:
        return 2 * m * n * k;
    case OP_RBF_MATRIX: /* subtract, square, accumulate per feature; exp not counted */
        return 3 * m * n * k;
    case OP_RBF_MATVEC: /* as rbf_matrix, plus the multiply-add with w */
        return 3 * m * n * k + 2 * m * n;
    case OP_KERNEL_MATRIX:   /* subtract, absolute value, accumulate per feature */
    case OP_DISTANCE_MATRIX: /* as rbf_matrix; the square root not counted */
    case OP_KNN:             /* the distances; the selection not counted */
        return 3 * m * n * k;
    case OP_KERNEL_MATMUL: /* as rbf_matrix, plus a multiply-add per column */
        return 3 * m * n * k + 2 * m * n * BENCH_MATMUL_R;
    case OP_SEED004:
        return m * 2 * n * n * n;
    default:
        return 0;
    }
}

gk_status bench_case_run(gk_context *ctx, const bench_case *c, gk_buffer *const *b, uint64_t iter)
{
    /* Alternating signs keep repeated in-place updates bounded; exact powers of two keep
     * scale from being a multiply by 1 that a library might skip. */
    double sign = (iter & 1) ? -1.0 : 1.0, r;
    double gamma = c->k ? 1.0 / (double)c->k : 1.0; /* exp(-1/6) on average: no underflow */
    switch (c->op) {
    case OP_FILL:
        return gk_fill(ctx, 0.5 * sign, b[0]);
    case OP_COPY:
        return gk_copy(ctx, b[0], b[1]);
    case OP_ADD:
    case OP_TINY_ADD:
        return gk_add(ctx, b[0], b[1], b[2]);
    case OP_SUB:
        return gk_sub(ctx, b[0], b[1], b[2]);
    case OP_MUL:
        return gk_mul(ctx, b[0], b[1], b[2]);
    case OP_AXPY:
        return gk_axpy(ctx, 0.5 * sign, b[0], b[1]);
    case OP_SCALE:
        return gk_scale(ctx, (iter & 1) ? 0.5 : 2.0, b[0]);
    case OP_EXP:
        return gk_exp(ctx, b[0], b[1]);
    case OP_SUM:
        return gk_sum(ctx, b[0], &r);
    case OP_DOT:
        return gk_dot(ctx, b[0], b[1], &r);
    case OP_NRM2:
        return gk_nrm2(ctx, b[0], &r);
    case OP_GEMM:
        return gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, c->m, c->n, c->k, 1.0, b[0], c->k, b[1], c->n,
                       0.0, b[2], c->n);
    case OP_RBF_ROWS:
        return gk_rbf_rows(ctx, c->n, c->k, gamma, b[0], b[1], b[2]);
    case OP_RBF_MATRIX:
        return gk_rbf_matrix(ctx, c->m, c->n, c->k, gamma, b[0], b[1], b[2]);
    case OP_RBF_MATVEC:
        return gk_rbf_matvec(ctx, c->m, c->n, c->k, gamma, b[0], b[1], b[2], b[3]);
    case OP_RNG_UNIFORM:
        return gk_rng_uniform(ctx, 7, iter * c->n, b[0]);
    case OP_RNG_NORMAL:
        return gk_rng_normal(ctx, 7, iter * c->n, 0.0, 1.0, b[0]);
    case OP_SEED004:
        for (size_t i = 0; i < c->m; i++) {
            gk_status st = gk_rng_uniform(ctx, iter * c->m + i, 0, b[0]);
            if (st == GK_OK)
                st = gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, c->n, c->n, c->n, 1.0, b[0], c->n, b[0],
                             c->n, 0.0, b[1], c->n);
            if (st != GK_OK)
                return st;
        }
        return GK_OK;
    case OP_KERNEL_MATRIX: {
        gk_kernel kern;
        gk_kernel_init(&kern, GK_KERNEL_LAPLACIAN);
        kern.gamma = gamma;
        return gk_kernel_matrix(ctx, &kern, c->m, c->n, c->k, b[0], b[1], b[2]);
    }
    case OP_DISTANCE_MATRIX:
        return gk_distance_matrix(ctx, GK_METRIC_EUCLIDEAN, c->m, c->n, c->k, b[0], b[1], b[2]);
    case OP_KNN:
        return gk_knn(ctx, GK_METRIC_EUCLIDEAN, c->m, c->n, c->k, BENCH_KNN_K, b[0], b[1], b[2],
                      b[3]);
    case OP_KERNEL_MATMUL: {
        gk_kernel kern;
        gk_kernel_init(&kern, GK_KERNEL_RBF);
        kern.gamma = gamma;
        return gk_kernel_matmul(ctx, &kern, c->m, c->n, c->k, BENCH_MATMUL_R, b[0], b[1], b[2],
                                b[3]);
    }
    case OP_COUNT:
        break;
    }
    return GK_E_INVALID_ARGUMENT;
}
