/* SPDX-License-Identifier: MIT */
/* cpu_vmath.c - picks the vector math table for this CPU; the plain C table used without SLEEF. */
#include <math.h>
#include <pthread.h>

#include "cpu_internal.h"
#include "cpu_vexp.h"
#include "cpu_vmath.h"
#include "philox.h"

/* Without SLEEF: exp from cpu_vexp.h, which the compiler vectorizes in each clone (within
 * 2 ulp for float32, 1 for float64; 4x glibc's scalar expf on one AVX-512 core, measured). */
GK_CPU_CLONES
static void c_exp_f32(size_t n, const float *x, float *y, int stream)
{
    (void)stream; /* the compiler's stores */
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        y[i] = gk__vexp_f32(x[i]);
}

GK_CPU_CLONES
static void c_exp_f64(size_t n, const double *x, double *y, int stream)
{
    (void)stream;
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        y[i] = gk__vexp_f64(x[i]);
}

/* Box-Muller through libm, as src/philox.h writes it, but once per pair rather than per
 * element: the same values as gk__philox_normal_* with half the log and sqrt calls. */
static void c_pair(double u1, double u2, double mean, double stddev, double *zc, double *zs)
{
    double r = sqrt(-2.0 * log(u1)), theta = 6.283185307179586476925286766559 * u2;
    *zc = mean + stddev * (r * cos(theta));
    *zs = mean + stddev * (r * sin(theta));
}

static void c_normal_f32(uint64_t seed, uint64_t b0, size_t blocks, double mean, double stddev,
                         float *x)
{
    for (size_t i = 0; i < blocks; i++) {
        gk_philox_words w = gk__philox4x32_10(seed, b0 + i);
        for (unsigned j = 0; j < 2; j++) {
            double c, s;
            c_pair(((double)(w.x[2 * j] >> 8) + 1.0) * 0x1p-24,
                   (double)(w.x[2 * j + 1] >> 8) * 0x1p-24, mean, stddev, &c, &s);
            x[4 * i + 2 * j] = (float)c;
            x[4 * i + 2 * j + 1] = (float)s;
        }
    }
}

static void c_normal_f64(uint64_t seed, uint64_t b0, size_t blocks, double mean, double stddev,
                         double *x)
{
    for (size_t i = 0; i < blocks; i++) {
        gk_philox_words w = gk__philox4x32_10(seed, b0 + i);
        c_pair(gk__u53_to_double(w.x[0], w.x[1]) + 0x1p-53, gk__u53_to_double(w.x[2], w.x[3]), mean,
               stddev, &x[2 * i], &x[2 * i + 1]);
    }
}

static const gk_cpu_vmath c_table = {"c", c_exp_f32, c_exp_f64, c_normal_f32, c_normal_f64};

static const gk_cpu_vmath *chosen = &c_table;
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
#ifdef GK_HAVE_SLEEF
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        chosen = &gk__cpu_vmath_avx512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        chosen = &gk__cpu_vmath_avx2;
    else
        chosen = &gk__cpu_vmath_sse2;
#endif
}

const gk_cpu_vmath *gk__cpu_vmath(void)
{
    pthread_once(&choose_once, choose);
    return chosen;
}
