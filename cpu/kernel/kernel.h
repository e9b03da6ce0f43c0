/* SPDX-License-Identifier: MIT */
/* kernel.h - the CPU's kernel family: one tiled pass (inner products, squared distances or L1
 * sums) and one epilogue per kernel or metric, shared by kernel_matrix, distance_matrix,
 * kernel_matmul and knn. */
#ifndef GK_CPU_KERNEL_H
#define GK_CPU_KERNEL_H

#include <stddef.h>

#include "backend.h"

/* What a tile holds after the pass. Every pass works in double: float32 rows are widened (a
 * product of two floats is exact in double), so the only rounding is double's. */
typedef enum gk_cpu_pass {
    GK_CPU_PASS_IP,     /* <x_i, y_j>, one dgemm per tile */
    GK_CPU_PASS_SQDIST, /* |x_i - y_j|^2, expanded from a dgemm with a per-entry bound */
    GK_CPU_PASS_L1      /* sum_f |x_if - y_jf|, a direct loop */
} gk_cpu_pass;

/* What the epilogue makes of a tile's value v. */
typedef enum gk_cpu_finish {
    GK_CPU_FINISH_NONE,    /* v: linear, sqeuclidean, manhattan */
    GK_CPU_FINISH_SQRT,    /* euclidean */
    GK_CPU_FINISH_EXP,     /* exp(-gamma v): rbf, laplacian */
    GK_CPU_FINISH_MATERN,  /* r = sqrt(gamma v), nu 0.5, 1.5 or 2.5 */
    GK_CPU_FINISH_POLY,    /* (gamma v + coef0)^degree */
    GK_CPU_FINISH_SIGMOID, /* tanh(gamma v + coef0) */
    GK_CPU_FINISH_COS_SIM, /* v / (|x_i| |y_j|), 0 where a norm is 0 */
    GK_CPU_FINISH_COS_DIST /* 1 - the similarity in [0, 2], 1 where a norm is 0 */
} gk_cpu_finish;

/* One call: its operands, its pass and epilogue, and the scratch of the team's tiles. */
typedef struct gk_cpu_job {
    gk_dtype t;
    size_t m, n, d;
    const void *x, *y;
    gk_cpu_pass pass;
    gk_cpu_finish finish;
    double gamma, coef0, nu;
    int degree;
    int norms; /* IP: nx and ny hold the rows' Euclidean norms (cosine) */
    /* IP on float32 rows whose products the contract lets sgemm sum: the tile comes from an
     * sgemm of the rows as given into vf (mb x nb floats), widened row by row */
    int sgemm;
    float *vf;
    int direct; /* set before gk__cpu_job_begin: kernel_matrix, whose sgemm form writes out */
    /* SQDIST: an entry is kept where beta (|x_i - c|^2 + |y_j - c|^2) <= tol |x_i - y_j|^2 */
    double beta, tol;
    /* Tile sizes and scratch: rows of x (mb x d, prepared), rows of y (nb x d; L1: d x nb),
     * their norms, the tile (mb x nb), the centre c (d). */
    size_t mb, nb;
    double *xs, *ys, *nx, *ny, *v, *c;
    double *iny;       /* cosine: 1 / ny (0 where ny is 0 or inf), so the epilogue multiplies */
    size_t tile_elems; /* doubles of one tile's scratch */
    size_t ys_from;    /* a member's job: the first row of y prepared in ys (SIZE_MAX: none) */
    void *mem;
    int threads;
    /* kernel_matrix, distance_matrix: the context's ISA kernels (NULL: none), whose store_f32
     * writes float32 rows */
    const struct gk_cpu_rbf_isa *isa;
} gk_cpu_job;

/* The pass and epilogue of a kernel (validated by the core), or of a metric. */
void gk__cpu_job_kernel(gk_cpu_job *j, const gk_kernel *k);
void gk__cpu_job_metric(gk_cpu_job *j, gk_metric metric);

/* Sets the operands, allocates the scratch for the team's tiles (one a thread: each member
 * computes tiles of its own, gk__cpu_job_member) of at most mb_max rows of x, and the centre of
 * a distance pass; GK_E_OUT_OF_MEMORY (nothing to free) on failure. */
gk_status gk__cpu_job_begin(void *st, gk_cpu_job *j, gk_dtype t, size_t m, size_t n, size_t d,
                            const void *x, const void *y, size_t mb_max);
void gk__cpu_job_end(gk_cpu_job *j);
/* Member `member` of the team's copy of j: its own tile scratch, one thread. */
void gk__cpu_job_member(const gk_cpu_job *j, int member, gk_cpu_job *mj);
/* Rows of x per task: the job's mb, or fewer (down to GK_CPU_JOB_MIN_ROWS) where m rows in
 * tasks of mb would leave some of `want` tasks without rows (the team idle). */
#define GK_CPU_JOB_MIN_ROWS ((size_t)8)
size_t gk__cpu_job_task_rows(const gk_cpu_job *j, size_t m, size_t want);
/* 64-byte aligned scratch of per bytes for each of nt members (member i's at i * per) into *mem;
 * on failure the job is ended and GK_E_OUT_OF_MEMORY returned. */
gk_status gk__cpu_job_team_scratch(gk_cpu_job *j, int nt, size_t per, void **mem);

/* Called once per row r < mb of a computed tile, on the member's thread, with the row's nb
 * values (the pass's, before the epilogue): row r of x is row i0 + r. */
typedef void (*gk_cpu_row_fn)(void *arg, const gk_cpu_job *j, size_t r, double *v);

/* The tile of rows i0 .. i0 + mb - 1 of x against rows j0 .. j0 + nb - 1 of y on the calling
 * thread alone, with a member's job (gk__cpu_job_member): the rows prepared (y's unless the
 * member's previous tile had the same), a one-thread gemm, then row(arg, j, r, v + r nb) for
 * each row. */
void gk__cpu_job_tile_member(gk_cpu_job *j, size_t i0, size_t mb, size_t j0, size_t nb,
                             gk_cpu_row_fn row, void *arg);
/* The same for a float32 kernel_matrix in the sgemm form: the inner products go straight into c
 * (row length ldc, the output), each row then finished in place; no tile of doubles. */
void gk__cpu_job_tile_f32_member(gk_cpu_job *j, size_t i0, size_t mb, size_t j0, size_t nb,
                                 float *c, size_t ldc);

/* |x_i - y_j|^2 for rows of d features, in double from the given values (differences of floats
 * are exact in double): the difference form, for entries the expanded one cannot give. */
double gk__cpu_sqdist_direct(gk_dtype t, size_t d, const void *x, size_t i, const void *y,
                             size_t j);

/* The epilogue in place on nb values of row r of the tile, from its column c0 on. */
void gk__cpu_finish_row(const gk_cpu_job *j, size_t nb, size_t r, size_t c0, double *v);

#endif /* GK_CPU_KERNEL_H */
