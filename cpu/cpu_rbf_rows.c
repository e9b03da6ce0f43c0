/* SPDX-License-Identifier: MIT */
/* cpu_rbf_rows.c - k[i] = exp(-gamma * ||a_i - b_i||^2) for paired rows of a and b. */
#include <math.h>

#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "cpu_vexp.h"
#include "rbf/plan.h"

/* Rows whose distances are gathered before one vectorized pass of exp over them. */
#define GK_RBF_ROWS_BLOCK ((size_t)256)

/* Each pair is read once, so the op is bound by memory bandwidth: the distance is summed in
 * double for float32 as well (differences of floats are exact in double), which costs
 * nothing here and leaves the exp as the only rounding that matters. */
GK_CPU_CLONES
static void cpu_rbf_rows_f32(size_t r0, size_t r1, size_t d, double gamma, double gz,
                             const float *a, const float *b, float *k)
{
    double dist[GK_RBF_ROWS_BLOCK];
    for (size_t r = r0; r < r1; r++) {
        const float *ar = a + r * d, *br = b + r * d;
        double s = 0.0;
#pragma omp simd reduction(+ : s)
        for (size_t f = 0; f < d; f++) {
            double t = (double)ar[f] - (double)br[f];
            s += t * t;
        }
        dist[r - r0] = s;
    }
    for (size_t r = r0; r < r1; r++)
        k[r] = (float)gk__vexp_f64(-gk__rbf_exponent_f64(gamma, gz, dist[r - r0]));
}

GK_CPU_CLONES
static void cpu_rbf_rows_f64(size_t r0, size_t r1, size_t d, double gamma, double gz,
                             const double *a, const double *b, double *k)
{
    double dist[GK_RBF_ROWS_BLOCK];
    for (size_t r = r0; r < r1; r++) {
        const double *ar = a + r * d, *br = b + r * d;
        double s = 0.0;
#pragma omp simd reduction(+ : s)
        for (size_t f = 0; f < d; f++) {
            double t = ar[f] - br[f];
            s += t * t;
        }
        dist[r - r0] = s;
    }
    for (size_t r = r0; r < r1; r++)
        k[r] = gk__vexp_f64(-gk__rbf_exponent_f64(gamma, gz, dist[r - r0]));
}

gk_status gk__cpu_rbf_rows(void *st, gk_dtype t, size_t n, size_t d, double gamma, const void *a,
                           const void *b, void *k)
{
    if (t != GK_FLOAT32 && t != GK_FLOAT64)
        return gk__cpu_bad_dtype(t);
    gk_cpu_rbf_plan p;
    gk__cpu_rbf_plan(st, GK_CPU_RBF_ROWS_OP, t, n, n, d, gamma, &p);
    gk__cpu_rbf_plan_log(st, &p);
    int nt = gk__cpu_team(st, n * d, GK_CPU_PAR_MIN_STREAM);
    double gz = gk__rbf_zero_exponent(gamma);
    a = gk__cpu_rbf_rows_of(a);
    b = gk__cpu_rbf_rows_of(b);
    size_t blocks = (n + GK_RBF_ROWS_BLOCK - 1) / GK_RBF_ROWS_BLOCK;
    GK_CPU_PARALLEL_IF(
        nt > 1, "omp parallel for num_threads(nt) schedule(static)",
        for (size_t blk = 0; blk < blocks; blk++) {
            size_t r0 = blk * GK_RBF_ROWS_BLOCK;
            size_t r1 = n - r0 < GK_RBF_ROWS_BLOCK ? n : r0 + GK_RBF_ROWS_BLOCK;
            if (t == GK_FLOAT32)
                cpu_rbf_rows_f32(r0, r1, d, gamma, gz, a, b, k);
            else
                cpu_rbf_rows_f64(r0, r1, d, gamma, gz, a, b, k);
        });
    return GK_OK;
}
