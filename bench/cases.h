/* SPDX-License-Identifier: MIT */
/* cases.h - gkbench's workloads: which op at which sizes, its operands, one call, its work. */
#ifndef GKBENCH_CASES_H
#define GKBENCH_CASES_H

#include <stddef.h>
#include <stdint.h>

#include <gpukern.h>

typedef enum bench_op {
    OP_FILL,
    OP_COPY,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_AXPY,
    OP_SCALE,
    OP_EXP,
    OP_SUM,
    OP_DOT,
    OP_NRM2,
    OP_GEMM,
    OP_RBF_ROWS,
    OP_RBF_MATRIX,
    OP_RBF_MATVEC,
    OP_RNG_UNIFORM,
    OP_RNG_NORMAL,
    OP_TINY_ADD,        /* add on 1000 elements: the per-call cost of the C API */
    OP_SEED004,         /* seed article 004: rounds x (rng uniform n^2 float64; x @ x) */
    OP_KERNEL_MATRIX,   /* gk_kernel_matrix, the Laplacian kernel (gamma 1/k) */
    OP_DISTANCE_MATRIX, /* gk_distance_matrix, euclidean */
    OP_KNN,             /* gk_knn, euclidean, BENCH_KNN_K nearest of n points for m queries */
    OP_KERNEL_MATMUL,   /* gk_kernel_matmul, rbf (gamma 1/k), BENCH_MATMUL_R columns */
    OP_COUNT
} bench_op;

#define BENCH_MAX_OPERANDS 4
#define BENCH_KNN_K 10    /* neighbours per query of OP_KNN (issue 34's workload) */
#define BENCH_MATMUL_R 16 /* right-hand sides of OP_KERNEL_MATMUL (issue 34's workload) */

/* Sizes by op: element-wise, reductions, rng, tiny: n elements. gemm: m x n x k. rbf_rows:
 * n rows of k features. rbf_matrix, rbf_matvec, kernel_matrix, distance_matrix,
 * kernel_matmul: m x n, k features. knn: m queries, n points, k features. seed004: m rounds
 * of order n. */
typedef struct bench_case {
    bench_op op;
    gk_dtype dtype;
    size_t m, n, k;
    unsigned where; /* GKX_CPU | GKX_CUDA: where the workload is meant to run */
} bench_case;

const char *bench_op_name(bench_op op);
/* The op called name; 0 if none. */
int bench_op_lookup(const char *name, bench_op *op);

/* The workload list, quick (seconds on a small CPU) or full (DESIGN.md's table). */
const bench_case *bench_cases(int quick, size_t *count);

/* "1e6", "4096x4096x4096", ...: the size column. */
void bench_case_size(const bench_case *c, char *buf, size_t len);

/* Element counts of the operands, inputs first; returns how many. */
int bench_case_operands(const bench_case *c, size_t counts[BENCH_MAX_OPERANDS]);
/* The dtype of operand j: the case's, but GK_INT64 for knn's index output (not filled). */
gk_dtype bench_case_operand_dtype(const bench_case *c, int j);

/* 1 if the op streams memory, so small inputs must rotate through sets larger than the caches
 * to measure memory and not cache bandwidth. */
int bench_case_rotates(const bench_case *c);

/* Bytes moved and flops done by one call; 0 where the figure means nothing for the op. */
double bench_case_bytes(const bench_case *c);
double bench_case_flops(const bench_case *c);

/* One call on operand set b; iter varies scalars and seeds so no call repeats the previous. */
gk_status bench_case_run(gk_context *ctx, const bench_case *c, gk_buffer *const *b, uint64_t iter);

#endif /* GKBENCH_CASES_H */
