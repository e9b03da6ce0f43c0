/* SPDX-License-Identifier: MIT */
/* cpu_rbf_gemm.c - rbf_matrix for wide rows as ||x||^2 + ||y||^2 - 2 x.y, through OpenBLAS GEMM. */
#include <math.h>
#include <stdint.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "cpu_vexp.h"
#include "error.h"

/* The difference form costs a subtraction and a multiply-add per pair and feature and cannot
 * reach GEMM's efficiency; scikit-learn's rbf_kernel (a GEMM, then exp) is 6.5x slower only
 * because it is single-pass. Here the distances come from one GEMM of rows centered on c, the
 * mean of all rows of x and y: D = nx_i + ny_j - 2 xc_i.yc_j, with xc = fl(x - c) in the
 * dtype and the norms nx, ny of the rounded xc, yc summed in double. Centering makes the
 * cancellation as large as the data's spread around c, not around the origin (data offset by
 * 1e3 stays accurate).
 *
 * Rounding bound (u: the dtype's unit roundoff, v = 2^-53, g_d(u) = d u / (1 - d u)), with
 * s = nx_i + ny_j:
 *  - rounding the centered values moves ||x - y|| by at most u (||a|| + ||b||) for a = x - c,
 *    b = y - c, so D moves by at most 4 u (1 + u) / (1 - u)^2 s;
 *  - the GEMM's dot product: |fl(xc.yc) - xc.yc| <= g_d(u) ||xc|| ||yc|| <= g_d(u) s / 2, in
 *    any summation order, so -2 x.y errs by at most g_d(u) s;
 *  - the norms in double: g_d(v) s; the two sums in double: 4 v s.
 * So |t - D| <= E = beta s, beta = g_d(u) + 4 u (1 + u) / (1 - u)^2 + g_d(v) + 4 v, and the
 * entry exp(-gamma t) is off by at most gamma E exp(-gamma min(t, D)) <= gamma E K exp(gamma E)
 * (K = exp(-gamma t)). An entry is kept where that, with exp(gamma E) <= 1.01 (gamma E <= 1e-2)
 * and K's own rounding, is within GK_RBF_GEMM_ERR_* (half the contract: the exp and the
 * final rounding have the rest); every other entry, and every entry with t <= E (identical
 * rows among them, which must give exactly 1), is computed again from differences. */
#define GK_RBF_GEMM_ERR_F32 5e-6
#define GK_RBF_GEMM_ERR_F64 5e-13

/* Where the GEMM form pays (measured: see bench/RESULTS.md, 2026-12-01, issue 15): from this
 * many features, and for at least this many entries. */
#define GK_RBF_GEMM_MIN_D ((size_t)64)
#define GK_RBF_GEMM_MIN_ENTRIES ((size_t)1 << 16)

/* The centered copies are as large as the inputs; the form is used only where they are no
 * larger than the output (m n >= (m + n) d), so scratch never exceeds what the call writes. */

static double gk_gamma_d(size_t d, double u)
{
    return (double)d * u / (1.0 - (double)d * u);
}

static double cpu_rbf_beta(size_t d, double u)
{
    const double v = 0x1p-53;
    return (gk_gamma_d(d, u) + 4.0 * u * (1.0 + u) / ((1.0 - u) * (1.0 - u)) + gk_gamma_d(d, v) +
            4.0 * v) *
           (1.0 + 4.0 * v); /* the bound's own evaluation in double */
}

/* The dtype's pieces, written once (as cpu_gemm.c's). center: c = mean of x's and y's rows,
 * rounded to T; xc = fl(x - c) row by row with its norm in double (0 if a row is not finite:
 * then *bad is set and the caller falls back). epilogue: row i of k holds G = xc.yc^T on entry
 * and K on return, entries needing differences marked NaN (finite data and gamma > 0 never
 * give a NaN entry) and recomputed by the caller. */
#define GK_CPU_RBF_GEMM_KERNELS(SUFFIX, T, EXP, U)                                                 \
    static void cpu_center_sum_##SUFFIX(size_t rows, size_t d, size_t f0, size_t f1, const T *x,   \
                                        double *c)                                                 \
    {                                                                                              \
        for (size_t i = 0; i < rows; i++)                                                          \
            for (size_t f = f0; f < f1; f++)                                                       \
                c[f] += (double)x[i * d + f];                                                      \
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
    static void cpu_epilogue_##SUFFIX(size_t n, double gamma, double beta, double tol, double nxi, \
                                      const double *ny, T *k)                                      \
    {                                                                                              \
        _Pragma("omp simd") for (size_t j = 0; j < n; j++)                                         \
        {                                                                                          \
            double s = nxi + ny[j], e = beta * s, t = s - 2.0 * (double)k[j];                      \
            t = t > 0.0 ? t : 0.0;                                                                 \
            T kv = EXP((T)(-gamma * t));                                                           \
            double err = gamma * e * (double)kv * (1.01 * (1.0 + 4.0 * (U)));                      \
            int redo = (t <= e) | (gamma * e > 1e-2) | (err > tol);                                \
            k[j] = redo ? (T)NAN : kv;                                                             \
        }                                                                                          \
    }

GK_CPU_RBF_GEMM_KERNELS(f32, float, gk__vexp_f32, 0x1p-24)
GK_CPU_RBF_GEMM_KERNELS(f64, double, gk__vexp_f64, 0x1p-53)

int gk__cpu_rbf_matrix_gemm(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                            const void *x, const void *y, void *k, gk_status *r)
{
    size_t es = t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
    double u = t == GK_FLOAT32 ? 0x1p-24 : 0x1p-53;
    if (d < GK_RBF_GEMM_MIN_D || !(gamma > 0.0) || !isfinite(gamma) ||
        m * n < GK_RBF_GEMM_MIN_ENTRIES || (m + n) > m * n / d || (double)d * u > 1e-3)
        return 0;
    double beta = cpu_rbf_beta(d, u),
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
    const size_t fb = 64; /* features per task of the mean */
    size_t fblocks = (d + fb - 1) / fb;
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (size_t b = 0; b < fblocks; b++) {
        size_t f0 = b * fb, f1 = d - f0 < fb ? d : f0 + fb;
        for (size_t f = f0; f < f1; f++)
            cd[f] = 0.0;
        if (t == GK_FLOAT32) {
            cpu_center_sum_f32(m, d, f0, f1, x, cd);
            cpu_center_sum_f32(n, d, f0, f1, y, cd);
            for (size_t f = f0; f < f1; f++)
                ((float *)c)[f] = (float)(cd[f] / (double)(m + n));
        } else {
            cpu_center_sum_f64(m, d, f0, f1, x, cd);
            cpu_center_sum_f64(n, d, f0, f1, y, cd);
            for (size_t f = f0; f < f1; f++)
                ((double *)c)[f] = cd[f] / (double)(m + n);
        }
    }
    int finite = 1;
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static) reduction(& : finite)
    for (size_t i = 0; i < m + n; i++) {
        const char *src = i < m ? (const char *)x + i * d * es : (const char *)y + (i - m) * d * es;
        double s = t == GK_FLOAT32
                       ? cpu_center_row_f32(d, (const float *)src, c, (float *)(xc + i * d * es))
                       : cpu_center_row_f64(d, (const double *)src, c, (double *)(xc + i * d * es));
        nx[i] = s; /* ny = nx + m: y's rows follow x's */
        finite &= isfinite(s) != 0;
    }
    /* Infinities and NaNs follow the rule of cpu_rbf.h: the difference form. So does data
     * whose typical entry would fail the bound (s = the mean nx + the mean ny, distance s):
     * recomputing most entries afterwards would cost more than differences from the start. */
    double sx = 0.0, sy = 0.0;
    for (size_t i = 0; i < m; i++)
        sx += nx[i];
    for (size_t j = 0; j < n; j++)
        sy += ny[j];
    double sbar = sx / (double)m + sy / (double)n;
    if (!finite || gamma * beta * sbar * exp(-gamma * sbar) > tol) {
        gk__free(scratch);
        return 0;
    }
    *r = gk__cpu_gemm(st, t, GK_NO_TRANS, GK_TRANS, m, n, d, 1.0, xc, d, yc, d, 0.0, k, n);
    if (*r != GK_OK) {
        gk__free(scratch);
        return 1;
    }
    const gk_cpu_rbf_kernels *kr = t == GK_FLOAT32 ? &gk__cpu_rbf_f32 : &gk__cpu_rbf_f64;
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
    for (size_t i = 0; i < m; i++) {
        const char *xi = (const char *)x + i * d * es;
        if (t == GK_FLOAT32) {
            float *ki = (float *)k + i * n;
            cpu_epilogue_f32(n, gamma, beta, tol, nx[i], ny, ki);
            for (size_t j = 0; j < n; j++)
                if (isnan(ki[j]))
                    ki[j] = (float)kr->pair(d, gamma, 0.0, xi, (const float *)y + j * d);
        } else {
            double *ki = (double *)k + i * n;
            cpu_epilogue_f64(n, gamma, beta, tol, nx[i], ny, ki);
            for (size_t j = 0; j < n; j++)
                if (isnan(ki[j]))
                    ki[j] = kr->pair(d, gamma, 0.0, xi, (const double *)y + j * d);
        }
    }
    gk__free(scratch);
    return 1;
}
