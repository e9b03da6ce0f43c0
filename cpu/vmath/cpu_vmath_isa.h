/* SPDX-License-Identifier: MIT */
/* cpu_vmath_isa.h - the body of one ISA's vector math table, over that ISA's SLEEF functions. */

/* Included once by each cpu_vmath_<isa>.c, which is compiled for its ISA and defines first:
 * VM_NAME (the table), VM_ISA (its name), VF / VD (float and double vector types), VF_N / VD_N
 * (lanes), VF_LOAD/VF_STORE/VD_LOAD/VD_STORE (unaligned), VF_STREAM/VD_STREAM (non-temporal,
 * aligned), VD_SQRT (IEEE, as libm's sqrt; a
 * call of sqrt would not vectorize while it may set errno), and the SLEEF functions VF_EXP,
 * VD_EXP, VD_LOG, VD_SINCOS (returning VD_SC: .x = sin, .y = cos); and, where VD_EXP is SLEEF's,
 * VD_GT_MASK(v, c) (the lanes of v above the constant c as bits of an int). */
#include <math.h>
#include <string.h>

#include "cpu_vmath.h"
#include "philox.h"

/* Streaming: with stream set, the whole vectors of y are written by non-temporal stores
 * (VF_STREAM, VD_STREAM, aligned: the elements before y's first aligned vector go through the
 * partial path), which write y's lines without first reading them into the cache; the caller
 * sets it for outputs much larger than the caches (cpu_elementwise.c), and x is then also
 * prefetched VM_PREFETCH bytes ahead, which cut one core's streamed exp by 10 % (float32) to
 * 25 % (float64). The values are the same either way. */
#include <stdint.h>
#include <xmmintrin.h>

#define VM_PREFETCH 2048

/* The n < VF_N elements from x on, through a full vector, so they get the same function. */
static void vm_exp_f32_part(size_t n, const float *x, float *y)
{
    if (n == 0)
        return;
    float t[VF_N] = {0};
    memcpy(t, x, n * sizeof *t);
    VF_STORE(t, VF_EXP(VF_LOAD(t)));
    memcpy(y, t, n * sizeof *t);
}

static void vm_exp_f32(size_t n, const float *x, float *y, int stream)
{
    size_t i = 0;
    if (stream && (uintptr_t)y % sizeof *y == 0) {
        size_t head = (sizeof(VF) - (uintptr_t)y % sizeof(VF)) % sizeof(VF) / sizeof *y;
        i = head < n ? head : n;
        vm_exp_f32_part(i, x, y);
        for (; i + VF_N <= n; i += VF_N) {
            _mm_prefetch((const char *)(x + i) + VM_PREFETCH, _MM_HINT_T0);
            VF_STREAM(y + i, VF_EXP(VF_LOAD(x + i)));
        }
        _mm_sfence(); /* streamed stores are weakly ordered: done before the team's barrier */
    } else {
        for (; i + VF_N <= n; i += VF_N)
            VF_STORE(y + i, VF_EXP(VF_LOAD(x + i)));
    }
    vm_exp_f32_part(n - i, x + i, y + i);
}

#ifdef VD_GT_MASK
/* SLEEF 3.5's exp for float64 gives +inf from x = 709.78271115 on, short of ln(DBL_MAX) =
 * 709.78271289, so for 1.5e7 arguments with a finite exp (measured: tests/test_elementwise.c's
 * test_exp_every_exponent found it). Lanes above 709.78 are therefore evaluated again as
 * exp(x - c) 2^1022 (1 + e), c = fl(1022 ln 2), e = c - 1022 ln 2 (|e| < 2^-44, so exp(e) is
 * 1 + e to far below an ulp): x - c is exact (Sterbenz: x and c are within a factor 2), and
 * exp(x - c) lies near the top of its binade as exp(x) does of its own, so SLEEF's 1 ulp stays
 * 1 ulp; one FMA applies 1 + e (0.5 ulp) and 2^1022 is exact, or overflows where exp does
 * (x is first cut to 710, past which exp overflows anyway: exp(x - c) stays finite).
 * Measured: at most 0.98 ulp over the last 10^7 doubles below ln(DBL_MAX) and 10^7 random ones
 * in (709.78, 709.79), AVX2 and SSE2 alike. The common path costs one compare a vector. */
static VD vm_exp_top(VD x, VD y)
{
    const double c = 0x1.6232bdd7abcd2p+9, e = -0x1.eef3fec1be37fp-46;
    if (!VD_GT_MASK(x, 709.78))
        return y;
    double xs[VD_N], ys[VD_N], t[VD_N];
    VD_STORE(xs, x);
    VD_STORE(ys, y);
    for (int k = 0; k < VD_N; k++)
        t[k] = xs[k] > 709.78 ? (xs[k] < 710.0 ? xs[k] : 710.0) - c : 0.0;
    VD_STORE(t, VD_EXP(VD_LOAD(t)));
    for (int k = 0; k < VD_N; k++)
        if (xs[k] > 709.78)
            ys[k] = fma(t[k], e, t[k]) * 0x1p1022;
    return VD_LOAD(ys);
}
#define VD_EXP_FULL(v) vm_exp_top(v, VD_EXP(v))
#else
#define VD_EXP_FULL(v) VD_EXP(v)
#endif

static void vm_exp_f64_part(size_t n, const double *x, double *y)
{
    if (n == 0)
        return;
    double t[VD_N] = {0};
    memcpy(t, x, n * sizeof *t);
    VD v = VD_LOAD(t);
    VD_STORE(t, VD_EXP_FULL(v));
    memcpy(y, t, n * sizeof *t);
}

static void vm_exp_f64(size_t n, const double *x, double *y, int stream)
{
    size_t i = 0;
    if (stream && (uintptr_t)y % sizeof *y == 0) {
        size_t head = (sizeof(VD) - (uintptr_t)y % sizeof(VD)) % sizeof(VD) / sizeof *y;
        i = head < n ? head : n;
        vm_exp_f64_part(i, x, y);
        for (; i + VD_N <= n; i += VD_N) {
            _mm_prefetch((const char *)(x + i) + VM_PREFETCH, _MM_HINT_T0);
            VD v = VD_LOAD(x + i);
            VD_STREAM(y + i, VD_EXP_FULL(v));
        }
        _mm_sfence();
    } else {
        for (; i + VD_N <= n; i += VD_N) {
            VD v = VD_LOAD(x + i);
            VD_STORE(y + i, VD_EXP_FULL(v));
        }
    }
    vm_exp_f64_part(n - i, x + i, y + i);
}

/* The words of blocks b0 .. b0 + cnt - 1, word k of block i at w[k][i]: the loop over blocks
 * vectorizes (Philox is 32-bit multiplies, adds and xors, one block per lane). */
static void vm_philox(uint64_t seed, uint64_t b0, size_t cnt, uint32_t w[4][GK_VMATH_BLOCKS])
{
#pragma omp simd
    for (size_t i = 0; i < cnt; i++) {
        gk_philox_words b = gk__philox4x32_10(seed, b0 + i);
        w[0][i] = b.x[0];
        w[1][i] = b.x[1];
        w[2][i] = b.x[2];
        w[3][i] = b.x[3];
    }
}

/* z pairs (r cos t, r sin t) for p < pairs from u1, u2 in (0, 1], [0, 1): src/philox.h's
 * gk__box_muller, vector by vector; pairs is a multiple of VD_N. */
static void vm_box_muller(size_t pairs, const double *u1, const double *u2, double *zc, double *zs)
{
    for (size_t p = 0; p < pairs; p += VD_N) {
        double r[VD_N], s[VD_N], c[VD_N], th[VD_N];
        VD_STORE(r, VD_LOG(VD_LOAD(u1 + p)));
        for (int k = 0; k < VD_N; k++) {
            r[k] = -2.0 * r[k];
            th[k] = 6.283185307179586476925286766559 * u2[p + k];
        }
        VD_STORE(r, VD_SQRT(VD_LOAD(r)));
        VD_SC sc = VD_SINCOS(VD_LOAD(th));
        VD_STORE(s, sc.x);
        VD_STORE(c, sc.y);
        for (int k = 0; k < VD_N; k++) {
            zc[p + k] = r[k] * c[k];
            zs[p + k] = r[k] * s[k];
        }
    }
}

static void vm_normal_f32(uint64_t seed, uint64_t b0, size_t blocks, double mean, double stddev,
                          float *x)
{
    uint32_t w[4][GK_VMATH_BLOCKS];
    double u1[2 * GK_VMATH_BLOCKS], u2[2 * GK_VMATH_BLOCKS];
    double zc[2 * GK_VMATH_BLOCKS], zs[2 * GK_VMATH_BLOCKS];
    for (size_t i0 = 0; i0 < blocks; i0 += GK_VMATH_BLOCKS) {
        size_t cnt = blocks - i0 < GK_VMATH_BLOCKS ? blocks - i0 : GK_VMATH_BLOCKS;
        vm_philox(seed, b0 + i0, cnt, w);
        /* Pair p = 2 i + j of block i: words 2j, 2j + 1, elements 4 i + 2 j (cos) and + 1 (sin);
         * the pairs past cnt blocks are computed from zeros and not stored. */
        size_t pairs = (2 * cnt + VD_N - 1) / VD_N * VD_N;
        for (size_t p = 0; p < pairs; p++) {
            size_t i = p / 2, j = p % 2;
            uint32_t a = i < cnt ? w[2 * j][i] : 0, b = i < cnt ? w[2 * j + 1][i] : 0;
            u1[p] = ((double)(a >> 8) + 1.0) * 0x1p-24;
            u2[p] = (double)(b >> 8) * 0x1p-24;
        }
        vm_box_muller(pairs, u1, u2, zc, zs);
        float *o = x + 4 * i0;
        for (size_t p = 0; p < 2 * cnt; p++) {
            o[2 * p] = (float)(mean + stddev * zc[p]);
            o[2 * p + 1] = (float)(mean + stddev * zs[p]);
        }
    }
}

static void vm_normal_f64(uint64_t seed, uint64_t b0, size_t blocks, double mean, double stddev,
                          double *x)
{
    uint32_t w[4][GK_VMATH_BLOCKS];
    double u1[GK_VMATH_BLOCKS], u2[GK_VMATH_BLOCKS], zc[GK_VMATH_BLOCKS], zs[GK_VMATH_BLOCKS];
    for (size_t i0 = 0; i0 < blocks; i0 += GK_VMATH_BLOCKS) {
        size_t cnt = blocks - i0 < GK_VMATH_BLOCKS ? blocks - i0 : GK_VMATH_BLOCKS;
        vm_philox(seed, b0 + i0, cnt, w);
        size_t pairs = (cnt + VD_N - 1) / VD_N * VD_N;
        for (size_t i = 0; i < pairs; i++) {
            int live = i < cnt;
            u1[i] = gk__u53_to_double(live ? w[0][i] : 0, live ? w[1][i] : 0) + 0x1p-53;
            u2[i] = gk__u53_to_double(live ? w[2][i] : 0, live ? w[3][i] : 0);
        }
        vm_box_muller(pairs, u1, u2, zc, zs);
        double *o = x + 2 * i0;
        for (size_t i = 0; i < cnt; i++) {
            o[2 * i] = mean + stddev * zc[i];
            o[2 * i + 1] = mean + stddev * zs[i];
        }
    }
}

const gk_cpu_vmath VM_NAME = {VM_ISA, vm_exp_f32, vm_exp_f64, vm_normal_f32, vm_normal_f64};
