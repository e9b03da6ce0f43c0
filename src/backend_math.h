/* SPDX-License-Identifier: MIT */
/* backend_math.h - the math on which the CPU and CUDA backends must agree, for host and device. */
#ifndef GK_BACKEND_MATH_H
#define GK_BACKEND_MATH_H

/* Included by C (cpu/) and by nvcc (cuda/), as philox.h is: everything is static inline and
 * free of libc except <math.h> and memcpy. */

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define GK_HD static __host__ __device__ __forceinline__
#else
#define GK_HD static inline
#endif

/* ------------------------------------------------------------------------------------------
 * The exponent rule of the rbf ops, so both backends give the same special values:
 *     entry = exp(-(dist == 0 ? gz : gamma * dist)),  gz = gk__rbf_zero_exponent(gamma).
 * So identical rows give exactly 1 for every gamma but NaN, including gamma = +inf, where IEEE
 * would make inf * 0 a NaN; a NaN gamma or a NaN in the data still propagates. Everything else
 * is plain IEEE: gamma = 0 gives 1 for every finite distance.
 * ---------------------------------------------------------------------------------------- */

/* The exponent at distance 0: 0, or NaN for a NaN gamma. */
GK_HD double gk__rbf_zero_exponent(double gamma)
{
    return isnan(gamma) ? gamma : 0.0;
}

/* gamma * dist, or the exponent at distance 0, per the rule above: the plain form. */
GK_HD double gk__rbf_exponent(double gamma, double dist)
{
    return dist == 0.0 ? gk__rbf_zero_exponent(gamma) : gamma * dist;
}

/* The same for loops that must vectorize, given gz = gk__rbf_zero_exponent(gamma). Blended through
 * an integer mask on the bits (a sum of squares is never -0): with a plain select GCC sinks the
 * multiply into one arm, and then will not if-convert it, since it may trap, nor vectorize the
 * loop. */
GK_HD float gk__rbf_exponent_f32(float gamma, float gz, float dist)
{
    float s = gamma * dist;
    uint32_t db, sb, zb;
    memcpy(&db, &dist, sizeof db);
    memcpy(&sb, &s, sizeof sb);
    memcpy(&zb, &gz, sizeof zb);
    uint32_t zero = 0u - (uint32_t)(db == 0);
    sb = (sb & ~zero) | (zb & zero);
    memcpy(&s, &sb, sizeof s);
    return s;
}

GK_HD double gk__rbf_exponent_f64(double gamma, double gz, double dist)
{
    double s = gamma * dist;
    uint64_t db, sb, zb;
    memcpy(&db, &dist, sizeof db);
    memcpy(&sb, &s, sizeof sb);
    memcpy(&zb, &gz, sizeof zb);
    uint64_t zero = ((db | (0u - db)) >> 63) - 1u; /* SSE2 has no 64-bit compare */
    sb = (sb & ~zero) | (zb & zero);
    memcpy(&s, &sb, sizeof s);
    return s;
}

/* Kernels that fold gamma into a constant c and form dist * c (c = -gamma, or -gamma log2(e)
 * for an exp2) follow the rule without testing dist == 0 wherever 0 * c is +-0, whose exp is
 * exactly 1: only an infinite c (gamma infinite, or so large that c overflows) needs the test.
 * A NaN c must give NaN everywhere, as the rule does. */
GK_HD int gk__rbf_needs_zero_test(double c)
{
    return isinf(c) != 0;
}

/* ------------------------------------------------------------------------------------------
 * float64 nrm2 by Blue's algorithm with the constants of LAPACK 3.10's dnrm2: squares of
 * magnitudes above TBIG are accumulated scaled down by SBIG, below TSML scaled up by SSML, the
 * rest as they are; none of the three sums can overflow or lose everything to underflow.
 * ---------------------------------------------------------------------------------------- */
#define GK_NRM2_TSML 0x1p-511
#define GK_NRM2_TBIG 0x1p486
#define GK_NRM2_SSML 0x1p537
#define GK_NRM2_SBIG 0x1p-538

/* LAPACK 3.10's way of joining the small, medium and big sums into the norm without overflow,
 * underflow or a lost NaN (a NaN lands in the medium sum: amed != amed). */
GK_HD double gk__nrm2_join(double asml, double amed, double abig)
{
    if (abig > 0.0) {
        if (amed > 0.0 || amed != amed)
            abig += (amed * GK_NRM2_SBIG) * GK_NRM2_SBIG;
        return sqrt(abig) / GK_NRM2_SBIG;
    }
    if (asml > 0.0) {
        if (amed > 0.0 || amed != amed) {
            double ym = sqrt(amed), ys = sqrt(asml) / GK_NRM2_SSML;
            double ymin = ys > ym ? ym : ys, ymax = ys > ym ? ys : ym;
            double q = ymin / ymax;
            return sqrt(ymax * ymax * (1.0 + q * q));
        }
        return sqrt(asml) / GK_NRM2_SSML;
    }
    return sqrt(amed);
}

#endif /* GK_BACKEND_MATH_H */
