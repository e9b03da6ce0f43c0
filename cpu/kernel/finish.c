/* SPDX-License-Identifier: MIT */
/* finish.c - the epilogue of each kernel and metric on a row of the pass's values, in double. */
#include <math.h>

#include "cpu_internal.h"
#include "cpu_vexp.h"
#include "kernel/kernel.h"

/* tanh(a) = (1 - e) / (1 + e) with e = exp(-2|a|), sign of a: the vectorizable exp; its absolute
 * error stays within a few units of 2^-53 (the relative error near 0 does not matter: the
 * contract is absolute). */
static inline double sigmoid_value(double a)
{
    double e = gk__vexp_f64(-2.0 * fabs(a));
    return copysign((1.0 - e) / (1.0 + e), a);
}

/* The polynomial's power by squaring, one bit of the degree per pass over the row, so that the
 * loops vectorize; the value of pow for integer degrees up to a few units of 2^-53. */
#define GK_KERNEL_POLY_CHUNK 256
GK_CPU_CLONES
static void poly_row(size_t nb, double gamma, double coef0, int degree, double *v)
{
    for (size_t j0 = 0; j0 < nb; j0 += GK_KERNEL_POLY_CHUNK) {
        size_t cnt = nb - j0 < GK_KERNEL_POLY_CHUNK ? nb - j0 : GK_KERNEL_POLY_CHUNK;
        double p[GK_KERNEL_POLY_CHUNK], *r = v + j0;
        for (size_t c = 0; c < cnt; c++) {
            p[c] = gamma * r[c] + coef0;
            r[c] = 1.0;
        }
        for (int b = degree; b != 0; b >>= 1) {
            if (b & 1)
                for (size_t c = 0; c < cnt; c++)
                    r[c] *= p[c];
            if (b > 1)
                for (size_t c = 0; c < cnt; c++)
                    p[c] *= p[c];
        }
    }
}

GK_CPU_CLONES
static void matern_row(size_t nb, double gamma, double nu, double *v)
{
    const double s3 = 1.7320508075688772, s5 = 2.23606797749979;
    if (nu == 0.5) {
        for (size_t jj = 0; jj < nb; jj++)
            v[jj] = gk__vexp_neg_f64(sqrt(gamma * v[jj]));
    } else if (nu == 1.5) {
        for (size_t jj = 0; jj < nb; jj++) {
            double a = s3 * sqrt(gamma * v[jj]);
            v[jj] = (1.0 + a) * gk__vexp_neg_f64(a);
        }
    } else {
        for (size_t jj = 0; jj < nb; jj++) {
            double a = s5 * sqrt(gamma * v[jj]);
            v[jj] = (1.0 + a + a * a / 3.0) * gk__vexp_neg_f64(a);
        }
    }
}

/* v / (|x| |y|) as v (1 / |x|) (1 / |y|): two more roundings, no division per entry. */
GK_CPU_CLONES
static void cosine_row(size_t nb, double nxi, const double *ny, const double *iny, int distance,
                       double *v)
{
    const double ix = nxi != 0.0 ? 1.0 / nxi : 0.0;
    for (size_t jj = 0; jj < nb; jj++) {
        int zero = nxi == 0.0 || ny[jj] == 0.0;
        double s = zero ? 0.0 : v[jj] * ix * iny[jj];
        if (distance) {
            double dv = 1.0 - s;
            v[jj] = dv < 0.0 ? 0.0 : dv > 2.0 ? 2.0 : dv;
        } else {
            v[jj] = s;
        }
    }
}

GK_CPU_CLONES
static void exp_row(size_t nb, double gamma, double *v)
{
    for (size_t jj = 0; jj < nb; jj++)
        v[jj] = gk__vexp_neg_f64(gamma * v[jj]);
}

GK_CPU_CLONES
static void sigmoid_row(size_t nb, double gamma, double coef0, double *v)
{
    for (size_t jj = 0; jj < nb; jj++)
        v[jj] = sigmoid_value(gamma * v[jj] + coef0);
}

/* The bounded kernels of a float32 call end in float arithmetic, twice the lanes and a cheaper
 * division: the argument, exact in double, is rounded once, which moves exp(-a) by at most
 * a e^-a 2^-24 <= 2.2e-8, and the float exp and tanh add a few units of 2^-24, far inside the
 * contract's absolute 1e-5. */
static inline float sigmoid_value_f32(float a)
{
    float e = gk__vexp_f32(-2.0f * fabsf(a));
    return copysignf((1.0f - e) / (1.0f + e), a);
}

GK_CPU_CLONES
static void exp_row_f32(size_t nb, double gamma, double *v)
{
    for (size_t jj = 0; jj < nb; jj++)
        v[jj] = (double)gk__vexp_neg_f32((float)(gamma * v[jj]));
}

GK_CPU_CLONES
static void sigmoid_row_f32(size_t nb, double gamma, double coef0, double *v)
{
    for (size_t jj = 0; jj < nb; jj++)
        v[jj] = (double)sigmoid_value_f32((float)(gamma * v[jj] + coef0));
}

GK_CPU_CLONES
static void matern_row_f32(size_t nb, double gamma, double nu, double *v)
{
    if (nu == 0.5) {
        for (size_t jj = 0; jj < nb; jj++)
            v[jj] = (double)gk__vexp_neg_f32((float)sqrt(gamma * v[jj]));
    } else if (nu == 1.5) {
        for (size_t jj = 0; jj < nb; jj++) {
            float a = 1.7320508f * (float)sqrt(gamma * v[jj]);
            v[jj] = (double)((1.0f + a) * gk__vexp_neg_f32(a));
        }
    } else {
        for (size_t jj = 0; jj < nb; jj++) {
            float a = 2.2360680f * (float)sqrt(gamma * v[jj]);
            v[jj] = (double)((1.0f + a + a * a / 3.0f) * gk__vexp_neg_f32(a));
        }
    }
}

GK_CPU_CLONES
static void sqrt_row(size_t nb, double *v)
{
    for (size_t jj = 0; jj < nb; jj++)
        v[jj] = sqrt(v[jj]);
}

/* A float32 call's distances by float square roots (twice the lanes of double's, which took a
 * third of euclidean's time): v rounded to float errs by 2^-24 relative, the root halves that
 * and adds its own rounding, far inside the 1e-5. Squares outside float's normal range are
 * scaled by 2^-128 or 2^128 first (exactly, a power of 4), their roots then by 2^64 or 2^-64. */
GK_CPU_CLONES
static void sqrt_row_f32(size_t nb, double *v)
{
    for (size_t jj = 0; jj < nb; jj++) {
        double big = v[jj] > 0x1p120 ? 0x1p-128 : 1.0, small = v[jj] < 0x1p-120 ? 0x1p128 : 1.0;
        double back = v[jj] > 0x1p120 ? 0x1p64 : v[jj] < 0x1p-120 ? 0x1p-64 : 1.0;
        v[jj] = (double)sqrtf((float)(v[jj] * big * small)) * back;
    }
}

void gk__cpu_finish_row(const gk_cpu_job *j, size_t nb, size_t r, size_t c0, double *v)
{
    switch (j->finish) {
    case GK_CPU_FINISH_NONE:
        return;
    case GK_CPU_FINISH_SQRT:
        if (j->t == GK_FLOAT32)
            sqrt_row_f32(nb, v);
        else
            sqrt_row(nb, v);
        return;
    case GK_CPU_FINISH_EXP:
        if (j->t == GK_FLOAT32)
            exp_row_f32(nb, j->gamma, v);
        else
            exp_row(nb, j->gamma, v);
        return;
    case GK_CPU_FINISH_MATERN:
        if (j->t == GK_FLOAT32)
            matern_row_f32(nb, j->gamma, j->nu, v);
        else
            matern_row(nb, j->gamma, j->nu, v);
        return;
    case GK_CPU_FINISH_POLY:
        poly_row(nb, j->gamma, j->coef0, j->degree, v);
        return;
    case GK_CPU_FINISH_SIGMOID:
        if (j->t == GK_FLOAT32)
            sigmoid_row_f32(nb, j->gamma, j->coef0, v);
        else
            sigmoid_row(nb, j->gamma, j->coef0, v);
        return;
    case GK_CPU_FINISH_COS_SIM:
    case GK_CPU_FINISH_COS_DIST:
        cosine_row(nb, j->nx[r], j->ny + c0, j->iny + c0, j->finish == GK_CPU_FINISH_COS_DIST, v);
        return;
    }
}
