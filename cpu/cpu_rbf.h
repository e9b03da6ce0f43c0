/* SPDX-License-Identifier: MIT */
/* cpu_rbf.h - the blocked kernels that the CPU's rbf drivers share. */
#ifndef GK_CPU_RBF_H
#define GK_CPU_RBF_H

#include <math.h>
#include <stddef.h>

#include "backend.h"
#include "backend_math.h"

/* The exponent rule and its vectorizable form, gk__rbf_exponent_f32/f64, are in
 * src/backend_math.h, which the CUDA backend compiles too. */

/* Columns the row kernel keeps in registers at once; packed blocks are padded to a multiple.
 * 32 gives 8 independent accumulators with SSE2 (16 would leave the adds latency-bound), 4 with
 * AVX2, 2 with AVX-512 (16 columns measured four times slower at 4096^2 x 20 float32). */
#define GK_RBF_COLS ((size_t)32)

/* Distances come from differences, never from |x|^2 + |y|^2 - 2 x.y: that form cancels
 * catastrophically for data far from the origin and misses 0 for identical rows.
 * float32: up to GK_RBF_F32_CHUNK squared differences are summed in float (a relative error of
 * at most ~64 * 2^-24 = 4e-6 on the distance, which moves exp(-t) by at most 4e-6 / e), and
 * chunk sums are carried in double, so the error does not grow with d. */
#define GK_RBF_F32_CHUNK ((size_t)64)

/* The float32 difference form's float sums overflow where ||x - y||^2 > FLT_MAX although
 * gamma ||x - y||^2 may be small (x = 1.9e19, y = 0, gamma = 1e-38 is exp(-3.61)): an entry
 * whose float distance came out +inf is computed again from this distance in double (the
 * differences of floats are exact in double, and no sum of squares of floats overflows it), for
 * row xi against column ytj of a block packed with row length ld. */
static inline double gk__cpu_rbf_dist_f64(size_t d, size_t ld, const float *xi, const float *ytj)
{
    double s = 0.0;
    for (size_t f = 0; f < d; f++) {
        double t = (double)xi[f] - (double)ytj[f * ld];
        s += t * t;
    }
    return s;
}

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
    /* Copies rows j < nb of y (row-major, d features) to yt[f * ld + lead + j], feature-major,
     * so the row kernel reads consecutive columns; the other columns of yt are zeroed (ld: a
     * multiple of GK_RBF_COLS, lead + nb <= ld). */
    void (*pack)(size_t d, size_t nb, size_t ld, size_t lead, const void *y, void *yt);
    /* out[j] = exp(-gamma * ||xi - y_j||^2) under the rule above, for j < nb, with y_j packed
     * in yt; gz is the exponent used at distance 0. gamma and gz hold values of the dtype. */
    void (*row)(size_t d, size_t nb, size_t ld, double gamma, double gz, const void *xi,
                const void *yt, void *out);
    /* The same for `rows` consecutive rows of x: row r's values go to out + r * ldo (the
     * portable kernels; rbf_matrix hands float32 to the context's ISA kernel where it has one). */
    void (*rows)(size_t d, size_t rows, size_t nb, size_t ld, double gamma, double gz,
                 const void *x, const void *yt, void *out, size_t ldo);
    /* exp(-gamma * ||x - y||^2) under the rule above for one pair of rows of d features, read
     * in place; the value of the dtype, as a double. */
    double (*pair)(size_t d, double gamma, double gz, const void *x, const void *y);
    /* sum_j kt[j] * w[j] for j < nb, accumulated in double. */
    double (*wdot)(size_t nb, const void *kt, const void *w);
} gk_cpu_rbf_kernels;

extern const gk_cpu_rbf_kernels gk__cpu_rbf_f32;
extern const gk_cpu_rbf_kernels gk__cpu_rbf_f64;

/* What the fused inner-product kernels of an ISA need for a float32 rbf_matrix
 * (cpu_rbf_fused.c says why and derives the constants): the centered rows packed in panels,
 * their squared norms rounded to float, the bound's constants, the rows as given for entries
 * computed again from differences. */
typedef struct gk_cpu_rbf_ip_f32 {
    size_t m, n, d;
    /* The packed panels (64-byte aligned, in the ISA's layout, ip_panel_bytes each): panel p of x
     * holds rows p mr .. p mr + mr - 1, panel q of y rows q nr - sh .. q nr - sh + nr - 1; rows
     * outside x and y are zero. */
    const void *xp, *yp;
    size_t xbytes, ybytes; /* bytes of one panel */
    size_t sh;             /* 0 <= sh < nr */
    const float *nx, *ny;  /* squared norms, indexed as the panels' rows; ny 64-byte aligned */
    const float *nymax;    /* the largest ny of each panel of y */
    float gamma;           /* as the dtype rounds it */
    float zscale;          /* -gamma log2(e) in float: K = 2^(zscale t) */
    float beta, coef, tol; /* the bound evaluated in float (per entry) */
    /* zscale (t - e) at or below this: the entry is far (gk__cpu_rbf_far), kept */
    float zfar;
    double beta_d, coef_d, tol_d; /* the same evaluated in double (per row of a tile) */
    const float *x, *y;           /* the rows as given */
    float *k;                     /* the output, m x n */
    /* n % 16 = 0 and k + (16 l - sh) starts a cache line: rows are written a line at a time */
    int stream;
    /* x and y are the same rows: tiles wholly below the diagonal (every column j < every row i)
     * are skipped (gk__cpu_rbf_ip_below), their entries mirrored from above (ip_mirrors) */
    int upper;
} gk_cpu_rbf_ip_f32;

/* Whether tile (p, q) lies wholly below the diagonal: its last column before its first row. */
static inline int gk__cpu_rbf_ip_below(const gk_cpu_rbf_ip_f32 *a, size_t mr, size_t nr, size_t p,
                                       size_t q)
{
    return (ptrdiff_t)(q * nr + nr - 1) - (ptrdiff_t)a->sh < (ptrdiff_t)(p * mr);
}

/* v rounded to a float no smaller than v. */
static inline float gk__cpu_rbf_round_up_f32(double v)
{
    float f = (float)v;
    return (double)f < v ? nextafterf(f, INFINITY) : f;
}

/* Kernels written for one ISA (cpu/rbf/cpu_rbf_<isa>.c, each compiled for its ISA), which the
 * generic ones in cpu_rbf_kernel.c hand their work to where the CPU runs that ISA. */
typedef struct gk_cpu_rbf_isa {
    const char *name;
    /* The float32 difference form for `rows` consecutive rows of x (d features each) against nb
     * columns packed by pack after `lead` zero columns (ld: the packed row length): out[r * ldo
     * + j] for r < rows, j < nb; the values of the generic row kernel's AVX-512 clone. stream:
     * whole vectors that start a cache line of out go past the cache (rbf_matrix's output,
     * written once and not read here; the lead puts the columns on the output's lines), then
     * an sfence. */
    void (*rows_f32)(size_t d, size_t rows, size_t nb, size_t ld, size_t lead, int stream,
                     float gamma, float gz, const float *x, const float *yt, float *out,
                     size_t ldo);
    /* The fused inner-product form (ip_f32 NULL: none), panels of mr rows of x and nr of y. */
    size_t mr, nr;
    /* Bytes of one packed panel of x (side 0) or y (side 1) of d features. */
    size_t (*ip_panel_bytes)(int side, size_t d);
    /* Packs panel p: rows p per - sh + r (per = mr or nr) of src, centered on c, into the panel
     * array dst; norms[p per + r] their squared norms rounded to float, *nmax the largest. The sum
     * of the norms in double, or -1 where the kernel cannot take the rows (not finite, or so
     * large that dot products could overflow float). */
    double (*ip_pack)(int side, size_t rows, size_t d, size_t sh, size_t p, const float *src,
                      const float *c, void *dst, float *norms, float *nmax);
    /* |computed x.y - x.y| <= ip_dot_err(d) sum_f |x_f y_f| for packed rows x, y. */
    double (*ip_dot_err)(size_t d);
    /* The tiles of panels p0 <= p < p1 of x and q0 <= q < q1 of y, written to a->k (the part
     * inside m x n); for a->upper, also the entries below the diagonal, as mirror images of
     * those it computes above. Returns how many entries it computed again from differences. */
    size_t (*ip_f32)(const gk_cpu_rbf_ip_f32 *a, size_t p0, size_t p1, size_t q0, size_t q1);
    /* out[j] = (float)v[j] for j < nb, the vectors that start a cache line of out streamed past
     * the cache (an output written once and not read again: the kernel family's), then an
     * sfence. */
    void (*store_f32)(size_t nb, const double *v, float *out);
} gk_cpu_rbf_isa;

#if defined(__x86_64__) && defined(GK_HAVE_RBF_AVX512)
extern const gk_cpu_rbf_isa gk__cpu_rbf_avx512;
#endif

/* The ISA kernels a context runs (cpu_rbf_isa.c), from GK_RBF_ISA (isa, a gk_isa): auto, the
 * widest this CPU runs; generic, none (NULL: the portable kernels do all the work). Kernels this
 * CPU or build cannot run are GK_E_UNSUPPORTED naming the variable. */
gk_status gk__cpu_rbf_isa_choose(int isa, const gk_cpu_rbf_isa **out);

/* cpu_rbf_gemm.c: rbf_matrix in the inner-product form, through OpenBLAS GEMM, for a call the
 * planner gave it (cpu/rbf/plan.c); 1 when it ran (*r: the status, *redone: how many entries
 * failed the bound and were computed from differences), 0 when the data does not suit it
 * (*declined: why) and the caller should compute differences instead. */
int gk__cpu_rbf_matrix_gemm(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                            const void *x, const void *y, void *k, gk_status *r, size_t *redone,
                            const char **declined);
/* The same for rbf_matvec, a tile at a time (out is written only when it ran). */
int gk__cpu_rbf_matvec_gemm(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                            const void *x, const void *y, const void *w, void *out, gk_status *r,
                            const char **declined);

/* cpu_rbf_gemm.c's pieces that cpu_rbf_fused.c shares. Half the contract's error per entry is
 * the inner-product form's to spend (the exp and the final rounding have the rest). */
#define GK_RBF_GEMM_ERR_F32 5e-6
#define GK_RBF_GEMM_ERR_F64 5e-13
/* Entries far apart: where gamma (t - E) >= gk__cpu_rbf_far(tol) = ln(1 / tol) + 0.01, the true
 * kernel value and the computed one (within 2e-5 of exp(-gamma t), t >= t - E) both lie in
 * [0, 0.991 tol], so the entry is within tol whatever gamma E is. Such an entry is kept where the
 * bound's linear test (gamma E <= 1e-2) would send it back: data of large norms about the centre
 * (raw, unscaled features) at a gamma that makes most entries tiny. */
double gk__cpu_rbf_far(double tol);
/* beta: |t - D| <= beta (||x - c||^2 + ||y - c||^2) for the dtype's unit roundoff u and d
 * features (the bound in cpu_rbf_gemm.c), for dot products within dot_err sum |x_f y_f| (g_d(u)
 * for GEMM). */
double gk__cpu_rbf_beta(size_t d, double u, double dot_err);
/* c, the centre: about the mean of x's and y's rows, rounded to the dtype (cd: d doubles of
 * scratch); the same for the same inputs, whatever the team. */
void gk__cpu_rbf_mean(gk_dtype t, size_t m, size_t n, size_t d, const void *x, const void *y,
                      double *cd, void *c);
/* Whether the typical entry of rows with these squared norms passes the bound. */
int gk__cpu_rbf_typical_passes(double gamma, double beta, double tol, const double *nx, size_t m,
                               const double *ny, size_t n);
/* Whether all but a few of a sample of entries pass the bound (distances exact, norms about the
 * centre c, a row of dtype t): where many fail (clustered data), differences cost less. */
int gk__cpu_rbf_sample_passes(gk_dtype t, size_t m, size_t n, size_t d, double gamma, double beta,
                              double tol, const void *x, const void *y, const void *c);

/* cpu/rbf/fgt.c: rbf_matvec (r = 1) or the Gaussian kernel's kernel_matmul (w n x r, out m x r,
 * row-major) at 1 <= d <= 4 by the fast Gauss transform, for a call the planner gave it (op:
 * the call's name, for its messages); 1 when it ran (*rc: the status; why: its box side,
 * degree, boxes and estimated cost), 0 when it declines the data (why: the reason) and the
 * caller should sum directly: NaN or infinity anywhere, no grid that fits, or, unless forced,
 * an estimated cost above direct summation's of r columns. */
int gk__cpu_rbf_matvec_fgt(void *st, gk_dtype t, size_t m, size_t n, size_t d, size_t r,
                           double gamma, int forced, const char *op, const void *x, const void *y,
                           const void *w, void *out, gk_status *rc, char *why, size_t why_size);

/* cpu_rbf_fused.c: float32 rbf_matrix in the inner-product form through the context's ISA
 * kernel, for a call the planner gave it; 1 when it ran (*r: the status, *redone: how many
 * entries failed the bound and were computed from differences), 0 when the data does not suit it
 * (*declined: why); sample (the planner's): decline where sampled entries fail the bound. */
int gk__cpu_rbf_matrix_fused(void *st, size_t m, size_t n, size_t d, double gamma, int sample,
                             const float *x, const float *y, float *k, gk_status *r, size_t *redone,
                             const char **declined);

/* Rows of d = 0 features address no element, so the core passes such operands as NULL; the
 * kernels still form row addresses p + i * d, which C defines only for a pointer to an object.
 * This gives them one (nothing is read from it). */
static inline const void *gk__cpu_rbf_rows_of(const void *p)
{
    static const double nothing[1];
    return p != NULL ? p : nothing;
}

#endif /* GK_CPU_RBF_H */
