/* SPDX-License-Identifier: MIT */
/* cpu_rbf_gemm.c - rbf_matrix and rbf_matvec as ||x||^2 + ||y||^2 - 2 x.y through OpenBLAS GEMM. */
#include <math.h>
#include <omp.h>
#include <stdint.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "cpu_vexp.h"
#include "error.h"

/* The difference form costs a subtraction and a multiply-add per pair and feature and is
 * compute-bound at large d (4096^2 x 256 float32 on 16 cores: 6.5x scikit-learn's rbf_kernel,
 * a GEMM then exp, where the issue asks 20x), while a GEMM runs at the FMA units' peak. Here
 * the distances come from one GEMM of rows centered on c, about the
 * mean of the rows of x and y (gk__cpu_rbf_mean): D = nx_i + ny_j - 2 xc_i.yc_j, with xc = fl(x -
 * c) in the dtype and the norms nx, ny of the rounded xc, yc summed in double. Centering makes the
 * cancellation as large as the data's spread around c, not around the origin (data offset by
 * 1e3 stays accurate).
 *
 * Rounding bound (u: the dtype's unit roundoff, v = 2^-53, g_d(u) = d u / (1 - d u)), with
 * s = nx_i + ny_j:
 *  - rounding the centered values moves ||x - y|| by at most u (||a|| + ||b||) for a = x - c,
 *    b = y - c, so D moves by at most 4 u (1 + u) / (1 - u)^2 s;
 *  - the GEMM's dot product: |fl(xc.yc) - xc.yc| <= g_d(u) ||xc|| ||yc|| <= g_d(u) s / 2, in
 *    any summation order, so -2 x.y errs by at most g_d(u) s;
 *  - the norms in double: g_{d+1}(v) s; the two sums in double: 4 v s.
 * So |t - D| <= E = beta s, beta = g_d(u) + 4 u (1 + u) / (1 - u)^2 + g_{d+1}(v) + 4 v, and the
 * entry exp(-gamma t) is off by at most gamma E exp(-gamma min(t, D)) <= gamma E K exp(gamma E)
 * (K = exp(-gamma t)). K is known only as computed, exp of -gamma t rounded to the dtype, which
 * is at least K (1 - 4u) exp(-u gamma t), and exp(u gamma t) <= 1 + 7e-6 where the computed
 * value is not 0 (gamma t <= 104 float32, 746 float64). An entry is kept where the bound, with
 * exp(gamma E) <= 1.01005 (gamma E <= 1e-2) and those factors (1.0101 (1 + 4u) in all), is
 * within GK_RBF_GEMM_ERR_* (half the contract: the exp and the final rounding have the rest); every
 * other entry, and every entry with t <= E (identical rows among them, which must give exactly 1),
 * is computed again from differences, except entries so far apart that gamma (t - E) >=
 * gk__cpu_rbf_far(tol): both the true value and the computed one are below tol there. */

/* Where the form pays and what it needs (d u small for the bound, sizes within 32-bit BLAS's
 * reach, centred copies no larger than the output) is the planner's (cpu/rbf/plan.c). */

static double gk_gamma_d(size_t d, double u)
{
    return (double)d * u / (1.0 - (double)d * u);
}

double gk__cpu_rbf_far(double tol)
{
    return log(1.0 / tol) + 0.01;
}

double gk__cpu_rbf_beta(size_t d, double u, double dot_err)
{
    const double v = 0x1p-53;
    return (dot_err + 4.0 * u * (1.0 + u) / ((1.0 - u) * (1.0 - u)) + gk_gamma_d(d + 1, v) +
            4.0 * v) *
           (1.0 + 4.0 * v); /* the bound's own evaluation in double */
}

/* The dtype's pieces, written once (as cpu_gemm.c's). center: weighted sums of rows for c (about
 * the mean of x's and y's rows), and xc = fl(x - c) row by row with its squared norm in double (not
 * finite where the row is not: the caller then falls back). epilogue: row i of k holds G = xc.yc^T
 * on entry and K on return, entries needing differences marked NaN (finite data and gamma > 0 never
 * give a NaN entry) and counted, so a row without any is not scanned again. It is bound by
 * memory (the row comes from the GEMM's output: its first load takes a quarter of its time), and
 * a float32-arithmetic version of it measured no faster. Exponents below CUT give 0 without
 * calling EXP (within 1.7e-38 float32, 5e-283 float64, of the value): a subnormal result costs a
 * microcode assist per element (clustered data at gamma 0.5 ran five times slower), and
 * gamma e K stays a normal number. */
#define GK_CPU_RBF_GEMM_KERNELS(SUFFIX, T, EXP, U, CUT)                                            \
    static void cpu_center_sum_##SUFFIX(size_t rows, size_t step, size_t d, double w, const T *x,  \
                                        double *c)                                                 \
    {                                                                                              \
        for (size_t i = 0; i < rows; i += step)                                                    \
            for (size_t f = 0; f < d; f++)                                                         \
                c[f] += w * (double)x[i * d + f];                                                  \
    }                                                                                              \
                                                                                                   \
    GK_CPU_CLONES                                                                                  \
    static double cpu_center_row_##SUFFIX(size_t d, const T *x, const T *c, T *xc)                 \
    {                                                                                              \
        double s = 0.0;                                                                            \
        _Pragma("omp simd reduction(+ : s)") for (size_t f = 0; f < d; f++)                        \
        {                                                                                          \
            T v = x[f] - c[f];                                                                     \
            xc[f] = v;                                                                             \
            s += (double)v * (double)v;                                                            \
        }                                                                                          \
        return s;                                                                                  \
    }                                                                                              \
                                                                                                   \
    GK_CPU_CLONES                                                                                  \
    static size_t cpu_epilogue_##SUFFIX(size_t n, double gamma, double beta, double tol,           \
                                        double far, double nxi, const double *ny, T *k)            \
    {                                                                                              \
        size_t redo_count = 0;                                                                     \
        _Pragma("omp simd reduction(+ : redo_count)") for (size_t j = 0; j < n; j++)               \
        {                                                                                          \
            double s = nxi + ny[j], e = beta * s, t = s - 2.0 * (double)k[j];                      \
            t = t > 0.0 ? t : 0.0;                                                                 \
            T arg = (T)(-gamma * t);                                                               \
            T kv = !(arg < (CUT)) ? EXP(arg > (CUT) ? arg : (CUT)) : (T)0;                         \
            double err = gamma * e * (double)kv * (1.0101 * (1.0 + 4.0 * (U)));                    \
            int loose = ((gamma * e > 1e-2) | (err > tol)) & !(gamma * (t - e) >= far);            \
            int redo = (t <= e) | loose | (t == (double)INFINITY);                                 \
            k[j] = redo ? (T)NAN : kv;                                                             \
            redo_count += (size_t)redo;                                                            \
        }                                                                                          \
        return redo_count;                                                                         \
    }

GK_CPU_RBF_GEMM_KERNELS(f32, float, gk__vexp_f32, 0x1p-24, -87.0f)
GK_CPU_RBF_GEMM_KERNELS(f64, double, gk__vexp_f64, 0x1p-53, -650.0)

/* Rows of x and of y that the centre is estimated from. The bound holds for any c; c only sets
 * how large s = ||x - c||^2 + ||y - c||^2 is, and evenly spaced rows estimate the mean well
 * enough for that, in one short pass (the mean of all rows took 8% of rbf_matrix
 * 2048^2 x 256 on one thread: column blocks read x and y once per block, from memory). */
#define GK_RBF_CENTER_ROWS ((size_t)256)

/* c = the mean of up to GK_RBF_CENTER_ROWS evenly spaced rows of x and as many of y, weighted by
 * m and n, rounded to the dtype (cd: d doubles of scratch). */
void gk__cpu_rbf_mean(gk_dtype t, size_t m, size_t n, size_t d, const void *x, const void *y,
                      double *cd, void *c)
{
    size_t sx = (m + GK_RBF_CENTER_ROWS - 1) / GK_RBF_CENTER_ROWS;
    size_t sy = (n + GK_RBF_CENTER_ROWS - 1) / GK_RBF_CENTER_ROWS;
    size_t cx = (m + sx - 1) / sx, cy = (n + sy - 1) / sy; /* rows taken */
    double wx = (double)m / ((double)(m + n) * (double)cx);
    double wy = (double)n / ((double)(m + n) * (double)cy);
    for (size_t f = 0; f < d; f++)
        cd[f] = 0.0;
    if (t == GK_FLOAT32) {
        cpu_center_sum_f32(m, sx, d, wx, x, cd);
        cpu_center_sum_f32(n, sy, d, wy, y, cd);
        for (size_t f = 0; f < d; f++)
            ((float *)c)[f] = (float)cd[f];
    } else {
        cpu_center_sum_f64(m, sx, d, wx, x, cd);
        cpu_center_sum_f64(n, sy, d, wy, y, cd);
        for (size_t f = 0; f < d; f++)
            ((double *)c)[f] = cd[f];
    }
}

/* dst = fl(src - c) for `rows` rows, norms[i] their squared norms in double; 0 when a row is
 * not finite. */
static int cpu_rbf_center_rows(int nt, gk_dtype t, size_t rows, size_t d, const void *src,
                               const void *c, void *dst, double *norms)
{
    size_t es = t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
    int finite = 1;
#pragma omp parallel for num_threads(nt) if (nt > 1 && rows > 16) schedule(static)              \
    reduction(& : finite)
    for (size_t i = 0; i < rows; i++) {
        const char *s = (const char *)src + i * d * es;
        char *o = (char *)dst + i * d * es;
        double v = t == GK_FLOAT32 ? cpu_center_row_f32(d, (const float *)s, c, (float *)o)
                                   : cpu_center_row_f64(d, (const double *)s, c, (double *)o);
        norms[i] = v;
        finite &= isfinite(v) != 0;
    }
    return finite;
}

/* Whether the typical entry of rows with these norms passes the bound (distance taken as the
 * mean nx + the mean ny): data that would mostly fail it takes differences from the start,
 * which costs less than recomputing most entries afterwards. */
int gk__cpu_rbf_typical_passes(double gamma, double beta, double tol, const double *nx, size_t m,
                               const double *ny, size_t n)
{
    double sx = 0.0, sy = 0.0;
    for (size_t i = 0; i < m; i++)
        sx += nx[i];
    for (size_t j = 0; j < n; j++)
        sy += ny[j];
    double sbar = sx / (double)m + sy / (double)n;
    return gamma * beta * sbar * exp(-gamma * sbar) <= tol;
}

/* The sample of gk__cpu_rbf_sample_passes: pairs tested, and how many may fail. One failing
 * pair in 100 already sends a third of the fused form's register tiles (8 x 14 entries with
 * AVX-512) to the recompute (clustered data: pairs within a cluster fail the bound about the
 * global centre). */
#define GK_RBF_SAMPLE_PAIRS 256
#define GK_RBF_SAMPLE_MAX_FAILS 2

/* Double-precision row helpers for the sample: ||a - b||^2 over d features of dtype t. */
static double sq_dist(gk_dtype t, size_t d, const void *a, size_t i, const void *b, size_t j)
{
    double s = 0.0;
    for (size_t f = 0; f < d; f++) {
        double v =
            t == GK_FLOAT32
                ? (double)((const float *)a)[i * d + f] - (double)((const float *)b)[j * d + f]
                : ((const double *)a)[i * d + f] - ((const double *)b)[j * d + f];
        s += v * v;
    }
    return s;
}

int gk__cpu_rbf_sample_passes(gk_dtype t, size_t m, size_t n, size_t d, double gamma, double beta,
                              double tol, const void *x, const void *y, const void *c)
{
    int fails = 0;
    for (size_t q = 0; q < GK_RBF_SAMPLE_PAIRS; q++) {
        /* pairs spread by multiplicative hashing; a row with itself (x == y) is no sample */
        size_t i = (size_t)((q * 2654435761u + 12345u) % m), j = (size_t)((q * 40503u + 7u) % n);
        if (x == y && i == j)
            j = (j + 1) % n;
        double dist = sq_dist(t, d, x, i, y, j);
        double s = sq_dist(t, d, x, i, c, 0) + sq_dist(t, d, y, j, c, 0);
        if (!(dist > beta * s) || gamma * beta * s * exp(-gamma * dist) > tol)
            fails++;
    }
    return fails <= GK_RBF_SAMPLE_MAX_FAILS;
}

/* Row i of the kernel from row i of G = xc.yc^T (in place, n entries): the epilogue, then the
 * entries it marked computed again from x_i and the rows of y; how many those were. */
static size_t cpu_rbf_finish_row(gk_dtype t, size_t n, size_t d, double gamma, double beta,
                                 double tol, double nxi, const double *ny, const void *xi,
                                 const void *y, void *krow)
{
    const gk_cpu_rbf_kernels *kr = t == GK_FLOAT32 ? &gk__cpu_rbf_f32 : &gk__cpu_rbf_f64;
    double far = gk__cpu_rbf_far(tol);
    size_t redo;
    if (t == GK_FLOAT32) {
        float *ki = krow;
        redo = cpu_epilogue_f32(n, gamma, beta, tol, far, nxi, ny, ki);
        if (redo)
            for (size_t j = 0; j < n; j++)
                if (isnan(ki[j]))
                    ki[j] = (float)kr->pair(d, gamma, 0.0, xi, (const float *)y + j * d);
    } else {
        double *ki = krow;
        redo = cpu_epilogue_f64(n, gamma, beta, tol, far, nxi, ny, ki);
        if (redo)
            for (size_t j = 0; j < n; j++)
                if (isnan(ki[j]))
                    ki[j] = kr->pair(d, gamma, 0.0, xi, (const double *)y + j * d);
    }
    return redo;
}

/* rbf_matrix's tiles: a one-thread gemm of 256 rows keeps OpenBLAS's packing of the 1024
 * columns to 1/256 of its work; 256 x 1024 doubles (2 MiB) stay in cache for the epilogue. */
#define GK_RBF_GEMM_TILE_ROWS ((size_t)256)
#define GK_RBF_GEMM_TILE_COLS ((size_t)1024)

int gk__cpu_rbf_matrix_gemm(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                            const void *x, const void *y, void *k, gk_status *r, size_t *redone,
                            const char **declined)
{
    size_t es = t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
    double u = t == GK_FLOAT32 ? 0x1p-24 : 0x1p-53;
    double beta = gk__cpu_rbf_beta(d, u, gk_gamma_d(d, u)),
           tol = t == GK_FLOAT32 ? GK_RBF_GEMM_ERR_F32 : GK_RBF_GEMM_ERR_F64;
    /* Sizes fit: (m + n) d <= m n elements exist as k already. */
    size_t cbytes = (d * sizeof(double) + 63) / 64 * 64, tc = (d * es + 63) / 64 * 64;
    size_t bytes = cbytes + tc + (m + n) * d * es + (m + n) * sizeof(double);
    void *scratch = NULL;
    if (gk__aligned_alloc(&scratch, 64, bytes) != 0) {
        *r = gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %zu bytes of scratch", bytes);
        return 1;
    }
    double *cd = scratch, *nx = (double *)((char *)scratch + cbytes + tc), *ny = nx + m;
    void *c = (char *)scratch + cbytes;
    char *xc = (char *)(ny + n), *yc = xc + m * d * es;
    int nt = gk__cpu_threads(st);
    gk__cpu_rbf_mean(t, m, n, d, x, y, cd, c);
    /* Infinities and NaNs follow the rule of cpu_rbf.h: the difference form. */
    int finite = cpu_rbf_center_rows(nt, t, m, d, x, c, xc, nx);
    finite = finite && cpu_rbf_center_rows(nt, t, n, d, y, c, yc, ny);
    if (!finite || !gk__cpu_rbf_typical_passes(gamma, beta, tol, nx, m, ny, n)) {
        *declined = !finite ? "rows not finite" : "the typical entry fails the rounding bound";
        gk__free(scratch);
        return 0;
    }
    /* Tiles of the output, each a one-thread gemm of its rows and columns into k, then finished
     * there while in cache, on the team's threads: a multithreaded gemm then the team's pass
     * over k left OpenBLAS's threads spinning beside the team (cpu_rbf_fused.c). */
    size_t row_tiles = (m + GK_RBF_GEMM_TILE_ROWS - 1) / GK_RBF_GEMM_TILE_ROWS;
    size_t col_tiles = (n + GK_RBF_GEMM_TILE_COLS - 1) / GK_RBF_GEMM_TILE_COLS;
    size_t tasks = row_tiles * col_tiles;
    int team = gk__cpu_region(nt, tasks);
    size_t again = 0;
    gk__cpu_blas_serial_enter();
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static) reduction(+ : again)
    for (size_t task = 0; task < tasks; task++) {
        size_t i0 = task / col_tiles * GK_RBF_GEMM_TILE_ROWS;
        size_t j0 = task % col_tiles * GK_RBF_GEMM_TILE_COLS;
        size_t mb = m - i0 < GK_RBF_GEMM_TILE_ROWS ? m - i0 : GK_RBF_GEMM_TILE_ROWS;
        size_t nb = n - j0 < GK_RBF_GEMM_TILE_COLS ? n - j0 : GK_RBF_GEMM_TILE_COLS;
        char *kt = (char *)k + (i0 * n + j0) * es;
        gk__cpu_gemm_serial(t, GK_NO_TRANS, GK_TRANS, mb, nb, d, 1.0, xc + i0 * d * es, d,
                            yc + j0 * d * es, d, 0.0, kt, n);
        for (size_t i = i0; i < i0 + mb; i++)
            again += cpu_rbf_finish_row(t, nb, d, gamma, beta, tol, nx[i], ny + j0,
                                        (const char *)x + i * d * es, (const char *)y + j0 * d * es,
                                        kt + (i - i0) * n * es);
    }
    gk__cpu_blas_serial_leave();
    *redone = again;
    *r = GK_OK;
    gk__free(scratch);
    return 1;
}

/* rbf_matvec: each thread of the team takes panels of GK_RBF_GEMM_PANEL rows of x of its own
 * and goes along y in blocks of at most GK_RBF_GEMM_BLOCK rows (fewer for large d, so that a
 * block holds at most GK_RBF_GEMM_BLOCK_ELEMS values), each centred when its tile is computed
 * (the centring costs 1 / (2 x panel) of the gemm): a one-thread gemm of the tile, the
 * epilogue, the products with w into the rows' sums. A multithreaded gemm per tile between the
 * team's epilogues left OpenBLAS's threads and the team's spinning beside each other at every
 * tile (cpu_rbf_fused.c). A row's sum adds the blocks in order, whichever thread has it, so the
 * result does not depend on the team. Scratch is a tile a thread: at most 256 x 4096 + 2^19 +
 * 256 x 2048 values (the planner keeps d <= 4096). */
#define GK_RBF_GEMM_PANEL ((size_t)256)
#define GK_RBF_GEMM_BLOCK ((size_t)2048)
#define GK_RBF_GEMM_BLOCK_ELEMS ((size_t)1 << 19)

int gk__cpu_rbf_matvec_gemm(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                            const void *x, const void *y, const void *w, void *out, gk_status *r,
                            const char **declined)
{
    size_t es = t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
    double u = t == GK_FLOAT32 ? 0x1p-24 : 0x1p-53;
    double beta = gk__cpu_rbf_beta(d, u, gk_gamma_d(d, u)),
           tol = t == GK_FLOAT32 ? GK_RBF_GEMM_ERR_F32 : GK_RBF_GEMM_ERR_F64;
    const gk_cpu_rbf_kernels *kr = t == GK_FLOAT32 ? &gk__cpu_rbf_f32 : &gk__cpu_rbf_f64;
    size_t block = GK_RBF_GEMM_BLOCK_ELEMS / d;
    block = block < 32 ? 32 : block > GK_RBF_GEMM_BLOCK ? GK_RBF_GEMM_BLOCK : block;
    size_t pm = m < GK_RBF_GEMM_PANEL ? m : GK_RBF_GEMM_PANEL;
    size_t bn = n < block ? n : block;
    size_t panels = (m + pm - 1) / pm;
    int nt = gk__cpu_threads(st), team = gk__cpu_region(nt, panels);
    /* per thread: the panel's and the block's norms, centred rows and tile, in whole lines */
    size_t per = ((pm + bn) * sizeof(double) + ((pm + bn) * d + pm * bn) * es + 63) / 64 * 64;
    size_t cbytes = (d * sizeof(double) + 63) / 64 * 64, tc = (d * es + 63) / 64 * 64;
    size_t bytes = cbytes + tc + m * sizeof(double) + (size_t)team * per;
    void *scratch = NULL;
    if (gk__aligned_alloc(&scratch, 64, bytes) != 0) {
        *r = gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %zu bytes of scratch", bytes);
        return 1;
    }
    double *cd = scratch, *acc = (double *)((char *)scratch + cbytes + tc);
    void *c = (char *)scratch + cbytes;
    char *tiles = (char *)(acc + m);
    gk__cpu_rbf_mean(t, m, n, d, x, y, cd, c);
    /* Infinities and NaNs follow the rule of cpu_rbf.h (the difference form), as does data whose
     * typical entry fails the bound, judged on the first tile. */
    int ok;
    {
        double *nx = (double *)tiles, *ny = nx + pm;
        char *xc = (char *)(ny + bn), *yc = xc + pm * d * es;
        ok = cpu_rbf_center_rows(1, t, pm, d, x, c, xc, nx) &&
             cpu_rbf_center_rows(1, t, bn, d, y, c, yc, ny) &&
             gk__cpu_rbf_typical_passes(gamma, beta, tol, nx, pm, ny, bn);
    }
    if (ok) {
        gk__cpu_blas_serial_enter();
#pragma omp parallel num_threads(team) if (team > 1) reduction(& : ok)
        {
            char *mine = tiles + (size_t)omp_get_thread_num() * per;
            double *nx = (double *)mine, *ny = nx + pm;
            char *xc = (char *)(ny + bn), *yc = xc + pm * d * es, *g = yc + bn * d * es;
#pragma omp for schedule(dynamic, 1)
            for (size_t p = 0; p < panels; p++) {
                size_t i0 = p * pm, mb = m - i0 < pm ? m - i0 : pm;
                const char *xp = (const char *)x + i0 * d * es;
                int fine = cpu_rbf_center_rows(1, t, mb, d, xp, c, xc, nx);
                for (size_t i = 0; i < mb; i++)
                    acc[i0 + i] = 0.0;
                for (size_t j0 = 0; fine && j0 < n; j0 += bn) {
                    size_t nb = n - j0 < bn ? n - j0 : bn;
                    const char *yb = (const char *)y + j0 * d * es;
                    fine = cpu_rbf_center_rows(1, t, nb, d, yb, c, yc, ny);
                    if (!fine)
                        break;
                    gk__cpu_gemm_serial(t, GK_NO_TRANS, GK_TRANS, mb, nb, d, 1.0, xc, d, yc, d, 0.0,
                                        g, nb);
                    for (size_t i = 0; i < mb; i++) {
                        char *gi = g + i * nb * es;
                        cpu_rbf_finish_row(t, nb, d, gamma, beta, tol, nx[i], ny, xp + i * d * es,
                                           yb, gi);
                        acc[i0 + i] += kr->wdot(nb, gi, (const char *)w + j0 * es);
                    }
                }
                ok &= fine;
            }
        }
        gk__cpu_blas_serial_leave();
    }
    if (ok) {
        for (size_t i = 0; i < m; i++) {
            if (t == GK_FLOAT32)
                ((float *)out)[i] = (float)acc[i];
            else
                ((double *)out)[i] = acc[i];
        }
    }
    gk__free(scratch);
    *r = GK_OK;
    if (!ok)
        *declined = "rows not finite, or the typical entry fails the rounding bound";
    return ok; /* 0: nothing written: differences */
}
