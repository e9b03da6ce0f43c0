/* SPDX-License-Identifier: MIT */
/* cpu_reduce.c - sum, dot and nrm2: blocked pairwise summation in double, split over threads. */
#include <math.h>

#include "backend_math.h"
#include "cpu_internal.h"

/* Accuracy: a block of GK_CPU_RED_BLOCK elements is summed in 8 interleaved lanes (32 terms
 * each, and the lanes are what the loop vectorizes into), blocks are combined pairwise. The
 * worst-case error is then about (32 + 3 + log2(n / 256)) ulp of sum|terms|, some 6e-15 for
 * n = 1e8, far inside the contract's 1e-13 for float64 (a plain loop would reach n ulp, 1e-8).
 * Determinism: the range is cut into at most GK_CPU_RED_CHUNKS chunks whose size depends on n
 * alone, and the chunks' partial results are combined pairwise in a fixed order, so a result
 * is the same for every thread count. */
#define GK_CPU_RED_BLOCK ((size_t)256)
#define GK_CPU_RED_CHUNKS ((size_t)256)
#define GK_CPU_RED_MIN_CHUNK ((size_t)1 << 14)

/* acc[0]: sum or dot; nrm2: acc[0] small, acc[1] medium, acc[2] big squares. */
typedef void (*cpu_block_fn)(const void *x, const void *y, size_t lo, size_t hi, double acc[3]);

static double cpu_lanes(const double l[8])
{
    return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* Adds TERM(k) for k in [0, n) into the eight lanes l, so each block's loop vectorizes and the
 * lanes are folded once by cpu_lanes; the blocks below differ only in their term. */
#define CPU_LANES_ADD(l, n, TERM)                                                                  \
    do {                                                                                           \
        size_t k_ = 0;                                                                             \
        for (; k_ + 8 <= (n); k_ += 8)                                                             \
            for (size_t j_ = 0; j_ < 8; j_++)                                                      \
                (l)[j_] += TERM(k_ + j_);                                                          \
        for (; k_ < (n); k_++)                                                                     \
            (l)[k_ & 7] += TERM(k_);                                                               \
    } while (0)

static void cpu_sum_block_f32(const void *xv, const void *yv, size_t lo, size_t hi, double acc[3])
{
    const float *x = (const float *)xv + lo;
    double l[8] = {0};
    (void)yv;
#define TERM(k) ((double)x[k])
    CPU_LANES_ADD(l, hi - lo, TERM);
#undef TERM
    acc[0] = cpu_lanes(l);
}

static void cpu_sum_block_f64(const void *xv, const void *yv, size_t lo, size_t hi, double acc[3])
{
    const double *x = (const double *)xv + lo;
    double l[8] = {0};
    (void)yv;
#define TERM(k) (x[k])
    CPU_LANES_ADD(l, hi - lo, TERM);
#undef TERM
    acc[0] = cpu_lanes(l);
}

/* float products are exact in double (24 + 24 < 53 bits), so only the sum rounds. */
static void cpu_dot_block_f32(const void *xv, const void *yv, size_t lo, size_t hi, double acc[3])
{
    const float *x = (const float *)xv + lo, *y = (const float *)yv + lo;
    double l[8] = {0};
#define TERM(k) ((double)x[k] * (double)y[k])
    CPU_LANES_ADD(l, hi - lo, TERM);
#undef TERM
    acc[0] = cpu_lanes(l);
}

static void cpu_dot_block_f64(const void *xv, const void *yv, size_t lo, size_t hi, double acc[3])
{
    const double *x = (const double *)xv + lo, *y = (const double *)yv + lo;
    double l[8] = {0};
#define TERM(k) (x[k] * y[k])
    CPU_LANES_ADD(l, hi - lo, TERM);
#undef TERM
    acc[0] = cpu_lanes(l);
}

/* Squares of floats neither overflow nor underflow in double (at most 2^256, at least 2^-298),
 * and n of them stay far below DBL_MAX, so float32 needs no scaling: everything is "medium". */
static void cpu_nrm2_block_f32(const void *xv, const void *yv, size_t lo, size_t hi, double acc[3])
{
    const float *x = (const float *)xv + lo;
    double l[8] = {0};
    (void)yv;
#define TERM(k) ((double)x[k] * (double)x[k])
    CPU_LANES_ADD(l, hi - lo, TERM);
#undef TERM
    acc[0] = 0.0;
    acc[1] = cpu_lanes(l);
    acc[2] = 0.0;
}

/* The plain sum of squares vectorizes; it is exact enough whenever it lands in [2^-900, 2^900]:
 * no square overflowed (the sum would be larger), squares that underflowed are below 2^-1022
 * and weigh nothing against a block sum above 2^-900, and 2^64 such blocks still sum below
 * DBL_MAX. Any other block (huge or tiny values, inf, NaN, all zeros) is summed again with
 * Blue's three scaled sums (src/backend_math.h); a NaN fails both range tests and lands in the
 * medium sum, from where it propagates to the result. (Blue's selects do not vectorize: under
 * -ftrapping-math GCC will not if-convert the comparisons.) */
static void cpu_nrm2_block_f64(const void *xv, const void *yv, size_t lo, size_t hi, double acc[3])
{
    const double *x = (const double *)xv + lo;
    size_t n = hi - lo;
    double l[8] = {0};
    (void)yv;
#define TERM(k) (x[k] * x[k])
    CPU_LANES_ADD(l, n, TERM);
#undef TERM
    double s = cpu_lanes(l);
    acc[0] = acc[1] = acc[2] = 0.0;
    if (s >= 0x1p-900 && s <= 0x1p900) {
        acc[1] = s;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double ax = fabs(x[i]);
        if (ax > GK_NRM2_TBIG)
            acc[2] += (ax * GK_NRM2_SBIG) * (ax * GK_NRM2_SBIG);
        else if (ax < GK_NRM2_TSML)
            acc[0] += (ax * GK_NRM2_SSML) * (ax * GK_NRM2_SSML);
        else
            acc[1] += ax * ax;
    }
}

static void cpu_pairwise(cpu_block_fn f, const void *x, const void *y, size_t lo, size_t hi,
                         double acc[3])
{
    size_t blocks = (hi - lo + GK_CPU_RED_BLOCK - 1) / GK_CPU_RED_BLOCK;
    if (blocks <= 1) {
        f(x, y, lo, hi, acc);
        return;
    }
    size_t mid = lo + blocks / 2 * GK_CPU_RED_BLOCK;
    double r[3];
    cpu_pairwise(f, x, y, lo, mid, acc);
    cpu_pairwise(f, x, y, mid, hi, r);
    for (int j = 0; j < 3; j++)
        acc[j] += r[j];
}

static void cpu_combine(double (*part)[3], size_t lo, size_t hi, double acc[3])
{
    if (hi - lo == 1) {
        for (int j = 0; j < 3; j++)
            acc[j] = part[lo][j];
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    double r[3];
    cpu_combine(part, lo, mid, acc);
    cpu_combine(part, mid, hi, r);
    for (int j = 0; j < 3; j++)
        acc[j] += r[j];
}

static void cpu_reduce(int nt, cpu_block_fn f, size_t n, const void *x, const void *y,
                       double acc[3])
{
    double part[GK_CPU_RED_CHUNKS][3];
    size_t chunk = (n + GK_CPU_RED_CHUNKS - 1) / GK_CPU_RED_CHUNKS;
    chunk = (chunk + GK_CPU_RED_BLOCK - 1) / GK_CPU_RED_BLOCK * GK_CPU_RED_BLOCK;
    if (chunk < GK_CPU_RED_MIN_CHUNK)
        chunk = GK_CPU_RED_MIN_CHUNK;
    size_t chunks = (n + chunk - 1) / chunk;
    GK_CPU_PARALLEL_IF(
        nt > 1 && chunks > 1, "omp parallel for num_threads(nt) schedule(static)",
        for (size_t c = 0; c < chunks; c++) {
            size_t hi = n - c * chunk > chunk ? (c + 1) * chunk : n;
            cpu_pairwise(f, x, y, c * chunk, hi, part[c]);
        });
    cpu_combine(part, 0, chunks, acc);
}

/* Reduces with the block function of dtype t into acc; the dtype is the only thing that
 * differs between the public reductions' dispatch. */
static gk_status cpu_reduce_dtype(void *st, gk_dtype t, cpu_block_fn f32, cpu_block_fn f64,
                                  size_t n, const void *x, const void *y, double acc[3])
{
    switch (t) {
    case GK_FLOAT32:
        cpu_reduce(gk__cpu_threads(st), f32, n, x, y, acc);
        return GK_OK;
    case GK_FLOAT64:
        cpu_reduce(gk__cpu_threads(st), f64, n, x, y, acc);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}

gk_status gk__cpu_sum(void *st, gk_dtype t, size_t n, const void *x, double *result)
{
    double acc[3];
    gk_status r = cpu_reduce_dtype(st, t, cpu_sum_block_f32, cpu_sum_block_f64, n, x, x, acc);
    if (r == GK_OK)
        *result = acc[0];
    return r;
}

gk_status gk__cpu_dot(void *st, gk_dtype t, size_t n, const void *x, const void *y, double *result)
{
    double acc[3];
    gk_status r = cpu_reduce_dtype(st, t, cpu_dot_block_f32, cpu_dot_block_f64, n, x, y, acc);
    if (r == GK_OK)
        *result = acc[0];
    return r;
}

gk_status gk__cpu_nrm2(void *st, gk_dtype t, size_t n, const void *x, double *result)
{
    double acc[3];
    gk_status r = cpu_reduce_dtype(st, t, cpu_nrm2_block_f32, cpu_nrm2_block_f64, n, x, x, acc);
    if (r == GK_OK)
        *result = gk__nrm2_join(acc[0], acc[1], acc[2]);
    return r;
}
