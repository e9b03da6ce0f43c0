/* SPDX-License-Identifier: MIT */
/* cpu_rbf.h - the blocked kernels that the CPU's rbf drivers share. */
#ifndef GK_CPU_RBF_H
#define GK_CPU_RBF_H

#include <stddef.h>

#include "backend.h"
#include "backend_math.h"

/* The exponent rule and its vectorizable form, gk__rbf_exponent_f32/f64, are in
 * src/backend_math.h, which the CUDA backend compiles too. */

/* Columns the row kernel keeps in registers at once; packed blocks are padded to a multiple.
 * 32 gives 8 independent accumulators with SSE2 (16 would leave the adds latency-bound), 4 with
 * AVX2, 2 with AVX-512; on a 16-core Xeon 32 ran 4096^2 x 20 float32 in 4.4 ms, 16 in 16 ms. */
#define GK_RBF_COLS ((size_t)32)

/* Rows of x per task of rbf_matrix and rbf_matvec: the packed y block is reused this many
 * times, so packing costs 1/64 of the distance work; tasks also split over column blocks, so a
 * short x still fills the team. */
#define GK_RBF_TILE_ROWS ((size_t)64)

/* Rows this wide are not packed: a packed block holds at least GK_RBF_COLS rows of y, and for
 * d above GK_RBF_PACK_MAX_BYTES / (GK_RBF_COLS * elem_size) features (4096 float32, 2048
 * float64) that would be scratch growing with d (2 GiB a thread at d = 2^24). Such rows are
 * long enough to be read straight from x and y, a pair at a time (the `pair` kernel), with
 * no scratch at all. */
#define GK_RBF_PACK_MAX_BYTES ((size_t)512 * 1024)

static inline int gk__cpu_rbf_packs(size_t d, size_t elem_size)
{
    return d <= GK_RBF_PACK_MAX_BYTES / (GK_RBF_COLS * elem_size);
}

/* How many columns of y to pack per block: the packed block (d x cols) stays in L2 while a
 * tile of x rows streams past it; at least one register block, a multiple of GK_RBF_COLS, and
 * no wider than n needs. */
size_t gk__cpu_rbf_block_cols(size_t n, size_t d, size_t elem_size);

/* The dtype-specific pieces the (dtype-generic) rbf_matrix and rbf_matvec drivers call; each
 * call does a block's worth of work, so the indirection costs nothing measurable. */
typedef struct gk_cpu_rbf_kernels {
    size_t elem_size;
    /* Copies rows j < nb of y (row-major, d features) to yt[f * ld + j], feature-major, so the
     * row kernel reads consecutive columns; columns nb..ld-1 are zeroed (ld: a multiple of
     * GK_RBF_COLS). */
    void (*pack)(size_t d, size_t nb, size_t ld, const void *y, void *yt);
    /* out[j] = exp(-gamma * ||xi - y_j||^2) under the rule above, for j < nb, with y_j packed
     * in yt; gz is the exponent used at distance 0. gamma and gz hold values of the dtype. */
    void (*row)(size_t d, size_t nb, size_t ld, double gamma, double gz, const void *xi,
                const void *yt, void *out);
    /* exp(-gamma * ||x - y||^2) under the rule above for one pair of rows of d features, read
     * in place; the value of the dtype, as a double. */
    double (*pair)(size_t d, double gamma, double gz, const void *x, const void *y);
    /* sum_j kt[j] * w[j] for j < nb, accumulated in double. */
    double (*wdot)(size_t nb, const void *kt, const void *w);
} gk_cpu_rbf_kernels;

extern const gk_cpu_rbf_kernels gk__cpu_rbf_f32;
extern const gk_cpu_rbf_kernels gk__cpu_rbf_f64;

/* cpu_rbf_gemm.c: rbf_matrix in the inner-product form, through OpenBLAS GEMM, where its rounding
 * bound allows and it pays; 1 when it ran (*r: the status), 0 when the caller should compute
 * differences instead. */
int gk__cpu_rbf_matrix_gemm(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                            const void *x, const void *y, void *k, gk_status *r);
/* The same for rbf_matvec, a tile at a time (out is written only when it ran). */
int gk__cpu_rbf_matvec_gemm(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                            const void *x, const void *y, const void *w, void *out, gk_status *r);

/* Rows of d = 0 features address no element, so the core passes such operands as NULL; the
 * kernels still form row addresses p + i * d, which C defines only for a pointer to an object.
 * This gives them one (nothing is read from it). */
static inline const void *gk__cpu_rbf_rows_of(const void *p)
{
    static const double nothing[1];
    return p != NULL ? p : nothing;
}

#endif /* GK_CPU_RBF_H */
