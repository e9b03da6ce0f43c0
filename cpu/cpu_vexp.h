/* SPDX-License-Identifier: MIT */
/* cpu_vexp.h - exp written as straight-line arithmetic, so that loops calling it vectorize. */
#ifndef GK_CPU_VEXP_H
#define GK_CPU_VEXP_H

#include <stdint.h>
#include <string.h>

/* The rbf kernels evaluate one exp per output; libm's exp is an opaque scalar call that keeps
 * those loops from vectorizing and would cost more than the distances. These are the textbook
 * method: k = round(x / ln 2) by the 1.5 * 2^p trick, r = x - k ln 2 in two parts (Cody-Waite),
 * a polynomial for exp(r) on |r| <= ln2 / 2, and 2^k built in the exponent field. 2^k is
 * applied as two factors 2^(k/2) * 2^(k - k/2), both normal, so results that overflow give
 * +inf, results in the subnormal range round once, and x is clamped only where the result is
 * already +inf or 0. NaN propagates; exp(-0) and exp(0) are exactly 1. Measured against a long
 * double reference: within 2 ulp (float) and 1 ulp (double) over the whole range. */

static inline float gk__vexp_f32(float x)
{
    /* |x| is clamped to 104 on the bits, where a clamp is an integer min (a floating select
     * would let GCC branch around the arithmetic, which it then may not if-convert because
     * floating operations may trap). exp(-104) rounds to 0 and exp(104) overflows to +inf, as
     * the exact values do. NaN keeps its bits. */
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t mag = u & 0x7fffffffu, lim = 0x42d00000u; /* 104.0f */
    uint32_t c = mag < lim ? mag : lim;
    c = mag > 0x7f800000u ? mag : c;
    u = (u & 0x80000000u) | c;
    memcpy(&x, &u, sizeof x);

    float kf = x * 1.44269504088896341f + 0x1.8p23f;
    kf -= 0x1.8p23f;
    float r = x - kf * 0.693359375f; /* ln 2 in 9 bits: the product is exact */
    r = r + kf * 2.12194440e-4f;     /* the rest of ln 2 */
    float p = 1.9875691500e-4f;      /* Cephes' minimax polynomial for exp(r) - 1 - r */
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;

    float k1 = (kf * 0.5f + 0x1.8p23f) - 0x1.8p23f, k2 = kf - k1;
    float e1 = k1 + (127.0f + 0x1p23f), e2 = k2 + (127.0f + 0x1p23f);
    uint32_t b1, b2;
    memcpy(&b1, &e1, sizeof b1);
    memcpy(&b2, &e2, sizeof b2);
    b1 <<= 23; /* the low bits of 2^23 + 127 + k are the biased exponent of 2^k */
    b2 <<= 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    return p * s1 * s2;
}

static inline double gk__vexp_f64(double x)
{
    /* As in gk__vexp_f32, with |x| clamped to 746 (exp(-746) rounds to 0, exp(746) is +inf).
     * SSE2 has no 64-bit compare, so "a < b" is the borrow of a - b, made a mask by negation. */
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    uint64_t mag = u & UINT64_C(0x7fffffffffffffff), lim = UINT64_C(0x4087500000000000);
    uint64_t below = 0 - ((mag - lim) >> 63);                        /* |x| < 746 */
    uint64_t nan = 0 - ((UINT64_C(0x7ff0000000000000) - mag) >> 63); /* x is NaN */
    uint64_t keep = below | nan;
    u = (u & ~UINT64_C(0x7fffffffffffffff)) | (mag & keep) | (lim & ~keep);
    memcpy(&x, &u, sizeof x);

    double kf = x * 1.4426950408889634074 + 0x1.8p52;
    kf -= 0x1.8p52;
    double r = x - kf * 0x1.62e42fee00000p-1; /* ln 2 in 32 bits: the product is exact */
    r = r - kf * 0x1.a39ef35793c76p-33;       /* the rest of ln 2 */
    /* Taylor to degree 13: the remainder is below 2^-60 relative on |r| <= ln2 / 2. */
    double p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * (r * r) + r + 1.0;

    double k1 = (kf * 0.5 + 0x1.8p52) - 0x1.8p52, k2 = kf - k1;
    double e1 = k1 + (1023.0 + 0x1p52), e2 = k2 + (1023.0 + 0x1p52);
    uint64_t b1, b2;
    memcpy(&b1, &e1, sizeof b1);
    memcpy(&b2, &e2, sizeof b2);
    b1 <<= 52;
    b2 <<= 52;
    double s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    return p * s1 * s2;
}

/* exp(-a) for a >= 0, with 0 where a is finite and above 87 (float) or 650 (double), below
 * which the value would be subnormal or near it (from 87.3 and 708.4): each subnormal result
 * costs a microcode assist, and entries of rows far apart (raw, unscaled features) are mostly
 * there; the Matérn kernel on such data ran 3.5 times as long. e^-87 = 1.6e-38 and
 * e^-650 = 5e-283, times any polynomial of a kernel of the family (below 2600 there), are far
 * inside every contract. NaN and +inf give exp(-a) as above (NaN, 0). The cut is taken on the
 * bits with integer masks: a floating select would keep GCC from if-converting the loop
 * (floating operations may trap), which then would not vectorize. */
static inline float gk__vexp_neg_f32(float a)
{
    uint32_t u;
    memcpy(&u, &a, sizeof u);
    uint32_t cut = 0u - (uint32_t)((u > 0x42ae0000u) & (u < 0x7f800000u)); /* 87 < a < inf */
    u &= ~cut;
    memcpy(&a, &u, sizeof a);
    float e = gk__vexp_f32(-a);
    memcpy(&u, &e, sizeof u);
    u &= ~cut;
    memcpy(&e, &u, sizeof e);
    return e;
}

static inline double gk__vexp_neg_f64(double a)
{
    uint64_t u;
    memcpy(&u, &a, sizeof u);
    uint64_t cut = UINT64_C(0) - (uint64_t)((u > UINT64_C(0x4084500000000000)) & /* 650 < a */
                                            (u < UINT64_C(0x7ff0000000000000)));
    u &= ~cut;
    memcpy(&a, &u, sizeof a);
    double e = gk__vexp_f64(-a);
    memcpy(&u, &e, sizeof u);
    u &= ~cut;
    memcpy(&e, &u, sizeof e);
    return e;
}

#endif /* GK_CPU_VEXP_H */
