/* SPDX-License-Identifier: MIT */
/* kernel_ref.c - long double references of the kernel family and the distances. */
#include "kernel_ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gk_test.h"

long double gk_ref_tol(gk_dtype t)
{
    return t == GK_FLOAT32 ? 1e-5L : 1e-12L;
}

gk_ref_sums gk_ref_sums_of(gk_dtype t, const void *x, size_t i, const void *y, size_t j, size_t d)
{
    gk_ref_sums s = {0, 0, 0, 0, 0, 0};
    for (size_t f = 0; f < d; f++) {
        long double a = gk_test_get(t, x, i * d + f), b = gk_test_get(t, y, j * d + f);
        s.ip += a * b;
        s.aip += fabsl(a) * fabsl(b);
        s.sq += (a - b) * (a - b);
        s.l1 += fabsl(a - b);
        s.nx += a * a;
        s.ny += b * b;
    }
    return s;
}

static long double cosine_similarity(const gk_ref_sums *s)
{
    return s->nx == 0 || s->ny == 0 ? 0.0L : s->ip / (sqrtl(s->nx) * sqrtl(s->ny));
}

long double gk_ref_kernel(const gk_kernel *k, gk_dtype t, const gk_ref_sums *s, long double *scale)
{
    long double g = gk_test_round(t, k->gamma), c0 = gk_test_round(t, k->coef0);
    *scale = 1.0L;
    switch (k->kind) {
    case GK_KERNEL_RBF:
        return gk_test_exp_ref(-g * s->sq);
    case GK_KERNEL_LAPLACIAN:
        return gk_test_exp_ref(-g * s->l1);
    case GK_KERNEL_POLYNOMIAL:
        *scale = powl(g * s->aip + fabsl(c0), k->degree);
        return powl(g * s->ip + c0, k->degree);
    case GK_KERNEL_SIGMOID:
        return tanhl(g * s->ip + c0);
    case GK_KERNEL_LINEAR:
        *scale = s->aip;
        return s->ip;
    case GK_KERNEL_COSINE:
        return cosine_similarity(s);
    default: {
        long double r = sqrtl(g * s->sq);
        if (k->nu == 0.5)
            return gk_test_exp_ref(-r);
        if (k->nu == 1.5)
            return (1 + sqrtl(3.0L) * r) * gk_test_exp_ref(-sqrtl(3.0L) * r);
        return (1 + sqrtl(5.0L) * r + 5.0L * r * r / 3) * gk_test_exp_ref(-sqrtl(5.0L) * r);
    }
    }
}

long double gk_ref_distance_scale(gk_metric metric, long double distance)
{
    return metric == GK_METRIC_COSINE ? 0.1L : distance;
}

long double gk_ref_distance(gk_metric metric, const gk_ref_sums *s, long double *scale)
{
    long double v = metric == GK_METRIC_SQEUCLIDEAN ? s->sq
                    : metric == GK_METRIC_EUCLIDEAN ? sqrtl(s->sq)
                    : metric == GK_METRIC_MANHATTAN ? s->l1
                    : s->nx == 0 || s->ny == 0      ? 1.0L
                                                    : 1.0L - cosine_similarity(s);
    *scale = gk_ref_distance_scale(metric, v);
    return v;
}

int gk_ref_rows_equal(gk_dtype t, const void *x, size_t i, const void *y, size_t j, size_t d)
{
    size_t es = gk_test_esize(t);
    return memcmp((const char *)x + i * d * es, (const char *)y + j * d * es, d * es) == 0;
}

void gk_ref_check(gk_dtype t, const char *what, size_t i, size_t j, double got, long double ref,
                  long double tol)
{
    long double top = t == GK_FLOAT32 ? FLT_MAX : DBL_MAX;
    if (isnan(ref)         ? isnan(got)
        : fabsl(ref) > top ? isinf(got) && !signbit(got) == !signbit(ref)
                           : fabsl((long double)got - ref) <= tol)
        return;
    GK_FAIL("%s: entry (%zu,%zu) is %.17g, reference %.17Lg (error %.3Lg > %.3Lg)", what, i, j, got,
            ref, fabsl((long double)got - ref), tol);
}

void gk_ref_check_rbf(gk_dtype t, double got, long double ref, long double tol, int identical,
                      const char *what, size_t i, size_t j)
{
    char label[256];
    snprintf(label, sizeof label, "%s %s", what, gk_test_dtype_name(t));
    if (identical && !isnan(ref) && got != 1.0)
        GK_FAIL("%s: entry (%zu,%zu) of identical rows is %.17g, not exactly 1", label, i, j, got);
    gk_ref_check(t, label, i, j, got, ref, tol);
}
