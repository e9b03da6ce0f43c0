/* SPDX-License-Identifier: MIT */
/* cpu_elementwise.c - fill, copy, add, sub, mul, div, axpy, scale and exp on host memory. */
#include "cpu_internal.h"
#include "cpu_vmath.h"

/* The operands may be the very same array (z == x is allowed), so the pointers cannot be
 * restrict; `omp simd` tells the compiler what it needs instead: element i is read and written
 * by iteration i alone, so the loop vectorizes without the runtime overlap check that would
 * send exactly aliased operands to the scalar path. Each body is a single IEEE operation, which
 * is what makes add, sub, mul, div, fill, scale and copy bit-identical to the CUDA backend (div
 * stays a true division: without -ffast-math the compiler never uses a reciprocal estimate). */
#define GK_CPU_STREAM_LOOP(stmt)                                                                   \
    do {                                                                                           \
        if (nt > 1) {                                                                              \
            _Pragma("omp parallel for simd num_threads(nt)") for (size_t i = 0; i < n; i++) stmt;  \
        } else {                                                                                   \
            _Pragma("omp simd") for (size_t i = 0; i < n; i++) stmt;                               \
        }                                                                                          \
    } while (0)

/* exp: chunks of this many elements go to the vector math table, one per task. */
#define GK_CPU_EXP_CHUNK ((size_t)4096)
/* exp: outputs of at least this many bytes are written past the cache (cpu_vmath.h's stream),
 * four times a server core's L2. Non-temporal stores nearly halved one core's copy of 1e7 floats
 * (a plain store first reads its line) and cut exp f32 1e7 by a fifth; at 1e6 floats the two
 * were alike. */
#define GK_CPU_EXP_STREAM_MIN ((size_t)8 << 20)

static void cpu_fill_f32(int nt, size_t n, float v, float *x)
{
    GK_CPU_STREAM_LOOP(x[i] = v);
}

static void cpu_fill_f64(int nt, size_t n, double v, double *x)
{
    GK_CPU_STREAM_LOOP(x[i] = v);
}

/* add, sub, mul and div: the same loops and dispatch for both dtypes, one operator apart. */
#define GK_CPU_BINARY(op, OPERATOR)                                                                \
    static void cpu_##op##_f32(int nt, size_t n, const float *x, const float *y, float *z)         \
    {                                                                                              \
        GK_CPU_STREAM_LOOP(z[i] = x[i] OPERATOR y[i]);                                             \
    }                                                                                              \
    static void cpu_##op##_f64(int nt, size_t n, const double *x, const double *y, double *z)      \
    {                                                                                              \
        GK_CPU_STREAM_LOOP(z[i] = x[i] OPERATOR y[i]);                                             \
    }                                                                                              \
    gk_status gk__cpu_##op(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z)  \
    {                                                                                              \
        int nt = gk__cpu_team(st, n, GK_CPU_PAR_MIN_STREAM);                                       \
        switch (t) {                                                                               \
        case GK_FLOAT32:                                                                           \
            cpu_##op##_f32(nt, n, x, y, z);                                                        \
            return GK_OK;                                                                          \
        case GK_FLOAT64:                                                                           \
            cpu_##op##_f64(nt, n, x, y, z);                                                        \
            return GK_OK;                                                                          \
        }                                                                                          \
        return gk__cpu_bad_dtype(t);                                                               \
    }

GK_CPU_BINARY(add, +)
GK_CPU_BINARY(sub, -)
GK_CPU_BINARY(mul, *)
GK_CPU_BINARY(div, /)

/* A multiply then an add (ISO C mode does not contract them into an fma); either is within
 * the contract's 1 ulp of |alpha x| + |y|. */
static void cpu_axpy_f32(int nt, size_t n, float a, const float *x, float *y)
{
    GK_CPU_STREAM_LOOP(y[i] = a * x[i] + y[i]);
}

static void cpu_axpy_f64(int nt, size_t n, double a, const double *x, double *y)
{
    GK_CPU_STREAM_LOOP(y[i] = a * x[i] + y[i]);
}

static void cpu_scale_f32(int nt, size_t n, float a, float *x)
{
    GK_CPU_STREAM_LOOP(x[i] = a * x[i]);
}

static void cpu_scale_f64(int nt, size_t n, double a, double *x)
{
    GK_CPU_STREAM_LOOP(x[i] = a * x[i]);
}

/* exp through the vector math table (cpu_vmath.h: SLEEF's, and on AVX-512 our own for float64),
 * within 1.01 ulp measured, inside the contract's 2 ulp; +inf on overflow, subnormal results
 * rounded, NaN propagated, as IEEE asks. glibc's expf and exp are scalar calls: 4x (float) and
 * 2.8x (double) slower on one AVX-512 core than SLEEF's, measured on 1e7 elements. */
static void cpu_exp(int nt, size_t n, size_t es, const void *x, void *y)
{
    const gk_cpu_vmath *vm = gk__cpu_vmath();
    size_t chunks = (n + GK_CPU_EXP_CHUNK - 1) / GK_CPU_EXP_CHUNK;
    int stream = n * es >= GK_CPU_EXP_STREAM_MIN;
    GK_CPU_PARALLEL_IF(
        nt > 1, "omp parallel for num_threads(nt) schedule(static)",
        for (size_t c = 0; c < chunks; c++) {
            size_t i0 = c * GK_CPU_EXP_CHUNK,
                   cnt = n - i0 < GK_CPU_EXP_CHUNK ? n - i0 : GK_CPU_EXP_CHUNK;
            if (es == sizeof(float))
                vm->exp_f32(cnt, (const float *)x + i0, (float *)y + i0, stream);
            else
                vm->exp_f64(cnt, (const double *)x + i0, (double *)y + i0, stream);
        });
}

gk_status gk__cpu_fill(void *st, gk_dtype t, size_t n, double value, void *x)
{
    int nt = gk__cpu_team(st, n, GK_CPU_PAR_MIN_STREAM);
    switch (t) {
    case GK_FLOAT32:
        cpu_fill_f32(nt, n, (float)value, x);
        return GK_OK;
    case GK_FLOAT64:
        cpu_fill_f64(nt, n, value, x);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}

gk_status gk__cpu_copy(void *st, gk_dtype t, size_t n, const void *x, void *y)
{
    switch (t) {
    case GK_FLOAT32:
        gk__cpu_memcpy(gk__cpu_threads(st), y, x, n * sizeof(float));
        return GK_OK;
    case GK_FLOAT64:
        gk__cpu_memcpy(gk__cpu_threads(st), y, x, n * sizeof(double));
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}

gk_status gk__cpu_axpy(void *st, gk_dtype t, size_t n, double alpha, const void *x, void *y)
{
    int nt = gk__cpu_team(st, n, GK_CPU_PAR_MIN_STREAM);
    switch (t) {
    case GK_FLOAT32:
        cpu_axpy_f32(nt, n, (float)alpha, x, y);
        return GK_OK;
    case GK_FLOAT64:
        cpu_axpy_f64(nt, n, alpha, x, y);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}

gk_status gk__cpu_scale(void *st, gk_dtype t, size_t n, double alpha, void *x)
{
    int nt = gk__cpu_team(st, n, GK_CPU_PAR_MIN_STREAM);
    switch (t) {
    case GK_FLOAT32:
        cpu_scale_f32(nt, n, (float)alpha, x);
        return GK_OK;
    case GK_FLOAT64:
        cpu_scale_f64(nt, n, alpha, x);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}

gk_status gk__cpu_exp(void *st, gk_dtype t, size_t n, const void *x, void *y)
{
    int nt = gk__cpu_team(st, n, GK_CPU_PAR_MIN_STREAM);
    switch (t) {
    case GK_FLOAT32:
        cpu_exp(nt, n, sizeof(float), x, y);
        return GK_OK;
    case GK_FLOAT64:
        cpu_exp(nt, n, sizeof(double), x, y);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}
