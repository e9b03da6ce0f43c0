/* SPDX-License-Identifier: MIT */
/* cpu_rbf_kernel.c - packing of y blocks and the register-blocked distance-and-exp row kernel. */
#include <string.h>

#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "cpu_vexp.h"

/* A packed block of about this many bytes fits in L2 next to the output being written. */
#define GK_RBF_BLOCK_BYTES ((size_t)128 * 1024)
#define GK_RBF_MAX_COLS ((size_t)2048)

size_t gk__cpu_rbf_block_cols(size_t n, size_t d, size_t elem_size)
{
    size_t per_col = (d == 0 ? 1 : d) * elem_size;
    size_t cols = GK_RBF_BLOCK_BYTES / per_col / GK_RBF_COLS * GK_RBF_COLS;
    size_t need = (n + GK_RBF_COLS - 1) / GK_RBF_COLS * GK_RBF_COLS;
    if (cols < GK_RBF_COLS)
        cols = GK_RBF_COLS;
    if (cols > GK_RBF_MAX_COLS)
        cols = GK_RBF_MAX_COLS;
    return cols < need ? cols : need;
}

static void cpu_rbf_pack_f32(size_t d, size_t nb, size_t ld, size_t lead, const void *yv, void *ytv)
{
    const float *y = yv;
    float *yt = ytv;
    for (size_t f = 0; f < d; f++)
        for (size_t j = 0; j < lead; j++)
            yt[f * ld + j] = 0.0f;
    for (size_t j = 0; j < nb; j++)
        for (size_t f = 0; f < d; f++)
            yt[f * ld + lead + j] = y[j * d + f];
    for (size_t f = 0; f < d; f++)
        for (size_t j = lead + nb; j < ld; j++)
            yt[f * ld + j] = 0.0f;
}

static void cpu_rbf_pack_f64(size_t d, size_t nb, size_t ld, size_t lead, const void *yv, void *ytv)
{
    const double *y = yv;
    double *yt = ytv;
    for (size_t f = 0; f < d; f++)
        for (size_t j = 0; j < lead; j++)
            yt[f * ld + j] = 0.0;
    for (size_t j = 0; j < nb; j++)
        for (size_t f = 0; f < d; f++)
            yt[f * ld + lead + j] = y[j * d + f];
    for (size_t f = 0; f < d; f++)
        for (size_t j = lead + nb; j < ld; j++)
            yt[f * ld + j] = 0.0;
}

/* acc[j] += sum over features f0..f1-1 of (xi[f] - y_j[f])^2 for GK_RBF_COLS columns: the
 * accumulators stay in vector registers across the feature loop, and each packed value is
 * loaded once per row of x. */
static inline void rbf_cols_f32(size_t f0, size_t f1, size_t ld, const float *xi, const float *yt,
                                float acc[GK_RBF_COLS])
{
    for (size_t f = f0; f < f1; f++) {
        float xf = xi[f];
        const float *yr = yt + f * ld;
#pragma omp simd
        for (size_t j = 0; j < GK_RBF_COLS; j++) {
            float t = xf - yr[j];
            acc[j] += t * t;
        }
    }
}

GK_CPU_CLONES
static void cpu_rbf_row_f32(size_t d, size_t nb, size_t ld, double gamma_d, double gz_d,
                            const void *xiv, const void *ytv, void *outv)
{
    const float *xi = xiv, *yt = ytv;
    float *out = outv, gamma = (float)gamma_d, gz = (float)gz_d;
    float tail[GK_RBF_COLS];
    for (size_t j0 = 0; j0 < nb; j0 += GK_RBF_COLS) {
        /* Whole register blocks are stored straight to out as vectors; the last, partial
         * one goes through tail, since out has no room for the padding columns. */
        float *e = nb - j0 >= GK_RBF_COLS ? out + j0 : tail;
        if (d <= GK_RBF_F32_CHUNK) {
            float acc[GK_RBF_COLS] = {0};
            rbf_cols_f32(0, d, ld, xi, yt + j0, acc);
            for (size_t j = 0; j < GK_RBF_COLS; j++)
                e[j] = gk__vexp_neg_f32(gk__rbf_exponent_f32(gamma, gz, acc[j]));
            for (size_t j = 0; j < GK_RBF_COLS; j++)
                if (acc[j] == INFINITY)
                    e[j] = gk__vexp_neg_f32((float)gk__rbf_exponent_f64(
                        gamma, gz, gk__cpu_rbf_dist_f64(d, ld, xi, yt + j0 + j)));
        } else {
            double accd[GK_RBF_COLS] = {0};
            for (size_t f0 = 0; f0 < d; f0 += GK_RBF_F32_CHUNK) {
                size_t f1 = d - f0 > GK_RBF_F32_CHUNK ? f0 + GK_RBF_F32_CHUNK : d;
                float acc[GK_RBF_COLS] = {0};
                rbf_cols_f32(f0, f1, ld, xi, yt + j0, acc);
                for (size_t j = 0; j < GK_RBF_COLS; j++)
                    accd[j] += (double)acc[j];
            }
            for (size_t j = 0; j < GK_RBF_COLS; j++) {
                double dist =
                    accd[j] == INFINITY ? gk__cpu_rbf_dist_f64(d, ld, xi, yt + j0 + j) : accd[j];
                e[j] = gk__vexp_neg_f32((float)gk__rbf_exponent_f64(gamma, gz, dist));
            }
        }
        if (e == tail)
            memcpy(out + j0, tail, (nb - j0) * sizeof *tail);
    }
}

GK_CPU_CLONES
static void cpu_rbf_row_f64(size_t d, size_t nb, size_t ld, double gamma, double gz,
                            const void *xiv, const void *ytv, void *outv)
{
    const double *xi = xiv, *yt = ytv;
    double *out = outv;
    double tail[GK_RBF_COLS];
    for (size_t j0 = 0; j0 < nb; j0 += GK_RBF_COLS) {
        double acc[GK_RBF_COLS] = {0}, *e = nb - j0 >= GK_RBF_COLS ? out + j0 : tail;
        for (size_t f = 0; f < d; f++) {
            double xf = xi[f];
            const double *yr = yt + f * ld + j0;
#pragma omp simd
            for (size_t j = 0; j < GK_RBF_COLS; j++) {
                double t = xf - yr[j];
                acc[j] += t * t;
            }
        }
        for (size_t j = 0; j < GK_RBF_COLS; j++)
            e[j] = gk__vexp_neg_f64(gk__rbf_exponent_f64(gamma, gz, acc[j]));
        if (e == tail)
            memcpy(out + j0, tail, (nb - j0) * sizeof *tail);
    }
}

static void cpu_rbf_rows_f32(size_t d, size_t rows, size_t nb, size_t ld, double gamma, double gz,
                             const void *xv, const void *ytv, void *outv, size_t ldo)
{
    const float *x = xv;
    float *out = outv;
    for (size_t r = 0; r < rows; r++)
        cpu_rbf_row_f32(d, nb, ld, gamma, gz, x + r * d, ytv, out + r * ldo);
}

static void cpu_rbf_rows_f64(size_t d, size_t rows, size_t nb, size_t ld, double gamma, double gz,
                             const void *xv, const void *ytv, void *outv, size_t ldo)
{
    const double *x = xv;
    double *out = outv;
    for (size_t r = 0; r < rows; r++)
        cpu_rbf_row_f64(d, nb, ld, gamma, gz, x + r * d, ytv, out + r * ldo);
}

/* One pair of rows in place (rows too wide to pack): differences of floats are exact in
 * double, so the sum of squares is carried in double, vectorized across features. */
GK_CPU_CLONES
static double cpu_rbf_pair_f32(size_t d, double gamma, double gz, const void *xv, const void *yv)
{
    const float *x = xv, *y = yv;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (size_t f = 0; f < d; f++) {
        double t = (double)x[f] - (double)y[f];
        s += t * t;
    }
    return (double)gk__vexp_neg_f32((float)gk__rbf_exponent_f64((float)gamma, (float)gz, s));
}

GK_CPU_CLONES
static double cpu_rbf_pair_f64(size_t d, double gamma, double gz, const void *xv, const void *yv)
{
    const double *x = xv, *y = yv;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (size_t f = 0; f < d; f++) {
        double t = x[f] - y[f];
        s += t * t;
    }
    return gk__vexp_neg_f64(gk__rbf_exponent_f64(gamma, gz, s));
}

/* float values and products are exact in double; the double sum is what the contract's
 * 1e-5 * sum|w| leaves room for, whatever n is. */
static double cpu_rbf_wdot_f32(size_t nb, const void *ktv, const void *wv)
{
    const float *kt = ktv, *w = wv;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (size_t j = 0; j < nb; j++)
        s += (double)kt[j] * (double)w[j];
    return s;
}

static double cpu_rbf_wdot_f64(size_t nb, const void *ktv, const void *wv)
{
    const double *kt = ktv, *w = wv;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (size_t j = 0; j < nb; j++)
        s += kt[j] * w[j];
    return s;
}

const gk_cpu_rbf_kernels gk__cpu_rbf_f32 = {sizeof(float),    cpu_rbf_pack_f32, cpu_rbf_row_f32,
                                            cpu_rbf_rows_f32, cpu_rbf_pair_f32, cpu_rbf_wdot_f32};
const gk_cpu_rbf_kernels gk__cpu_rbf_f64 = {sizeof(double),   cpu_rbf_pack_f64, cpu_rbf_row_f64,
                                            cpu_rbf_rows_f64, cpu_rbf_pair_f64, cpu_rbf_wdot_f64};
