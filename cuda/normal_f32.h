/* SPDX-License-Identifier: MIT */
/* normal_f32.h - the float32 normal stream in float32 arithmetic, near its double definition. */
#ifndef GK_NORMAL_F32_H
#define GK_NORMAL_F32_H

/* The float32 normal stream is defined in double (philox.h: r = sqrt(-2 ln u1), theta = 2 pi u2,
 * mean + stddev * r cos/sin theta, rounded once). The CUDA backend evaluates it in float32
 * instead (a double operation issues at half the float rate, and its log, sin and cos take more
 * operations), and must stay within 4 ulp of |mean| + |stddev z| (DESIGN.md). Rounding r,
 * cos theta, their product and the result to float would each cost up to half an ulp, i.e. up
 * to 2^-24 relative, and a library logf or sincospif up to 2^-23 more: more than the contract
 * allows across backends. So:
 *   - u1 = m 2^-24 (m in [1, 2^24]) and u2 = k 2^-24 (k in [0, 2^24)) are exact in float, and
 *     each takes only 2^24 values: tests/test_normal_f32.c evaluates every one of them on the
 *     host with this very code and bounds the relative error of r and of cos/sin theta against
 *     the double definition (the bounds quoted below are what that test enforces);
 *   - ln u1, r, cos theta and sin theta are carried as unevaluated sums hi + lo (float-float),
 *     with error-free products (fma) and sums (Dekker's fast two-sum) where the error matters
 *     (sin's lo is left up to 1/10 of its hi, which costs less than normalizing it);
 *   - theta is reduced exactly: 4 u2 = q + nu with integer q and |nu| <= 1/2 exact in float, so
 *     no multiple of pi is ever subtracted in rounded arithmetic;
 *   - z = r cos/sin theta is summed from the float-float parts into one float, and
 *     mean + stddev z is one fma.
 * With u = 2^-24, rho_r <= 0.34375 u and rho_t <= 0.34375 u the relative errors of r and of
 * cos/sin theta, and |lo/hi| <= g = 13/128 for cos/sin (all enforced by that test; for r, |lo/hi|
 * is below 2^-20.5 with the device's seed and enters only multiplied by u): z~ = fl(rh th + c),
 * c = fl(rh tl + fl(rl fl(th + tl))), so |z~ - r t| <= u |z~| + u |c| + (u^2 terms) with
 * |c| <= (g + 2^-20.5) |rh th| <= (g + 2^-20.5) |r t| / ((1 - g)(1 - 2^-20.5)) (rl multiplies
 * th + tl, so nothing is dropped); the fma rounds by at most u |value| <= u (|mean| +
 * |stddev z~|). So the value is within (2 + g / (1 - g)) u + rho_r + rho_t <= 2.801 u of
 * |stddev z| plus u |mean| (u^2 terms included below 2.8125) of mean + stddev z_definition:
 * within 2.8125 u |stddev z| + u |mean|, below 4 ulp of |mean| + |stddev z| (an ulp of v is at
 * least u v) with 1.18 u to spare, of which the other backend takes u: a CPU backend evaluating
 * in double and rounding once stays within u.
 *
 * The same code compiles for the host (tests) and the device. Every rounding is spelled out:
 * GK_FMUL/GK_FADD never fuse (nvcc contracts a * b + c into one fma otherwise) and fmaf is the
 * only fused operation, so host and device compute the same bits, except for the seed of the
 * square root (GK_RSQRT: the device's rsqrt.approx, 2 ulp, or the host's 1/sqrtf), whose error the
 * Newton step below squares away (2^-40 relative): the test's r is the device's to that. */

#include <stdint.h>
#include <string.h>

#include "philox.h"

#if defined(__CUDA_ARCH__)
#define GK_FMUL(a, b) __fmul_rn(a, b)
#define GK_FADD(a, b) __fadd_rn(a, b)
#define GK_FSUB(a, b) __fsub_rn(a, b)
#define GK_RSQRT(x) gk__rsqrt_approx(x)
/* MUFU.RSQ alone: rsqrtf adds a rescaling for subnormal arguments, which never occur here. */
static __device__ __forceinline__ float gk__rsqrt_approx(float x)
{
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
#else
#define GK_FMUL(a, b) ((a) * (b))
#define GK_FADD(a, b) ((a) + (b))
#define GK_FSUB(a, b) ((a) - (b))
#define GK_RSQRT(x) (1.0f / sqrtf(x))
#endif

/* An unevaluated sum hi + lo. */
typedef struct gk_ff {
    float hi, lo;
} gk_ff;

GK_HD uint32_t gk__f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

GK_HD float gk__f32_from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* hi + lo = a + b exactly, for |a| >= |b| or a == 0 (Dekker). */
GK_HD gk_ff gk__fast_two_sum(float a, float b)
{
    gk_ff s;
    s.hi = GK_FADD(a, b);
    s.lo = GK_FSUB(b, GK_FSUB(s.hi, a));
    return s;
}

/* x = -2 ln(m 2^-24) for m in [1, 2^24], as an unnormalized sum hi + lo with |lo| <= hi / 6:
 * m = 2^j f with f in [2/3, 4/3), t = f - 1, ln = (j - 24) ln 2 + t + t^2 P(t), P a degree-8 fit
 * of (log1p(t) - t) / t^2 on [-1/3, 1/3] (error 3.5e-8, i.e. below 2^-26.6 relative to ln
 * after the factor t^2 / ln <= 1/3). The factor -2 is folded in where it is exact: b = -2 t =
 * 2 - 2 f (exact, Sterbenz; 2 f from f's bits with the exponent one higher), and P's
 * coefficients scaled by powers of two so that Horner in b gives exactly -1/2 P(t). ln 2 is
 * split so that (j - 24) ln2_hi is exact (j - 24 as a float by the 1.5 2^23 magic rather than an
 * integer conversion, whose pipe the other conversions and the square root's seed share); hi =
 * fl((j - 24) (-2 ln2_hi) + b) and lo = its exact rounding error (Dekker) + the rounded parts (P,
 * t^2, ln2_lo), which all sit below it. */
GK_HD gk_ff gk__neg2ln_u24(uint32_t m)
{
    const float c_hi = -2.0f * 0.693145751953125f, c_lo = -2.0f * 1.428606765330187e-06f;
    float fm = (float)m;
    uint32_t ix = gk__f32_bits(fm) - 0x3f2aaaabu;
    float e = GK_FSUB(gk__f32_from_bits((ix >> 23) + (0x4b400000u - 24u)), 0x1.8p23f);
    float b = GK_FSUB(2.0f, gk__f32_from_bits((ix & 0x7fffffu) + 0x3faaaaabu));
    float p = -0x1p-9f * -0.12422200292348862f;
    p = fmaf(p, b, 0x1p-8f * 0.13748309016227722f);
    p = fmaf(p, b, -0x1p-7f * -0.12288721650838852f);
    p = fmaf(p, b, 0x1p-6f * 0.140558123588562f);
    p = fmaf(p, b, -0x1p-5f * -0.16673316061496735f);
    p = fmaf(p, b, 0x1p-4f * 0.20007233321666718f);
    p = fmaf(p, b, -0x1p-3f * -0.24999944865703583f);
    p = fmaf(p, b, 0x1p-2f * 0.33333271741867065f);
    p = fmaf(p, b, -0x1p-1f * -0.5f);
    float tail = GK_FMUL(GK_FMUL(b, b), p);
    gk_ff s = gk__fast_two_sum(GK_FMUL(e, c_hi), b);
    s.lo = GK_FADD(fmaf(e, c_lo, tail), s.lo);
    return s;
}

/* r = sqrt(x) for x = hi + lo >= 0 (|lo| <= hi / 6): the seed y ~ 1/sqrt(xs) for xs = fl(hi +
 * lo) (relative error d <= 2^-21), rh = xs y, then one Newton step rl = (x - rh^2) / (2 rh) ~
 * ((hi - rh^2) + lo) y / 2, whose error is O(d^2); hi - rh^2, about lo, is rounded once, which
 * costs up to u |lo| / (2 x) <= u / 10 relative to r. Without a branch: x is 0 only for u1 = 1,
 * and at least 1.19e-7 otherwise, so the seed's argument is kept above 0 (y finite) and x = 0
 * gives rh = rl = 0. */
GK_HD gk_ff gk__bm_radius(gk_ff x)
{
    float xs = GK_FADD(x.hi, x.lo);
    float y = GK_RSQRT(fmaxf(xs, 0x1p-100f));
    gk_ff r;
    r.hi = GK_FMUL(xs, y);
    float res = GK_FADD(fmaf(-r.hi, r.hi, x.hi), x.lo);
    /* y / 2 by the exponent (y is normal: at most 2^50, at least 2^-4), an integer operation
     * instead of one more on the float pipe */
    r.lo = GK_FMUL(res, gk__f32_from_bits(gk__f32_bits(y) - 0x00800000u));
    return r;
}

/* cos phi and sin phi for theta = 2 pi k 2^-24 = q pi/2 + phi, k in [0, 2^24): with kf = k
 * (exact), q = kf 2^-22 rounded to an integer (to nearest, ties to even, by adding 1.5 2^23:
 * qm, whose low bits are q) and nu = kf 2^-22 - q (exact, |nu| <= 1/2), phi = nu pi/2. With
 * w = nu^2 (wh + wl exactly, by fma): sin phi = nu (A1 + R(w)), R = A1_lo + w S(w), returned
 * unnormalized as hi = fl(A1_hi nu), lo = its exact rounding error + nu R (|lo / hi| < 0.1);
 * cos phi = 1 + B2 w + w^2 C(w) as hi = fl(1 + B2_hi wh), lo = its rounding error (1 - hi is
 * exact, Sterbenz) + B2_hi wl + wh (B2_lo + wh C(wh)). A1 = pi/2 and B2 = -pi^2/8 as
 * float-float, S and C fits (relative errors below 2^-36 and 2^-30). Where theta is a multiple
 * of pi/2 (nu = 0, q != 0) the definition's phi is not 0 but fl(2 pi) q / 4 (exact in double)
 * minus q pi/2, which is -q (pi/2 - fl(pi/2)): there nu is k KH (exact, KH has 20 bits) and lo
 * gains k K2, together -q (pi/2 - fl(pi/2)) within 2^-47 relative; elsewhere k KH is below half
 * an ulp of nu, so nu stays exact, and k K2 is below 2^-52 of sin phi. Returns qm's bits. */
GK_HD uint32_t gk__bm_cossin_phi(uint32_t k, gk_ff *c, gk_ff *s)
{
    const float a1_hi = 1.5707963705062866f, a1_lo = -4.371138828673793e-08f;
    const float b2_hi = -1.2337005138397217f, b2_lo = -3.629644851343983e-08f;
    const float kh = -0x1.678bp-77f, k2 = 0x1.00f348p-98f;
    float kf = (float)k;
    float qm = fmaf(kf, 0x1p-22f, 0x1.8p23f);
    float nu = fmaf(kf, kh, fmaf(kf, 0x1p-22f, GK_FSUB(0x1.8p23f, qm)));
    float wh = GK_FMUL(nu, nu), wl = fmaf(nu, nu, -wh);

    float rs = fmaf(fmaf(fmaf(fmaf(0.00015865151362959296f, wh, -0.0046814749948680401f), wh,
                              0.07969260960817337f),
                         wh, -0.64596408605575562f),
                    wh, a1_lo);
    s->hi = GK_FMUL(a1_hi, nu);
    s->lo = fmaf(kf, k2, fmaf(nu, rs, fmaf(a1_hi, nu, -s->hi)));

    float rc = fmaf(
        fmaf(fmaf(0.00090985902352258563f, wh, -0.020862599834799767f), wh, 0.25366950035095215f),
        wh, b2_lo);
    c->hi = fmaf(b2_hi, wh, 1.0f);
    c->lo = fmaf(wh, rc, fmaf(b2_hi, wl, fmaf(b2_hi, wh, GK_FSUB(1.0f, c->hi))));
    return gk__f32_bits(qm);
}

/* The quadrant from qm's bits (q mod 4 in bits 1..0): rotating (cos phi, sin phi) by q quarter
 * turns swaps them for odd q (bit 0, returned) and negates cos for q = 1, 2 (bit 1 of q + 1)
 * and sin for q = 2, 3 (bit 1 of q), as sign masks (bit 31) that the caller applies to stddev
 * (an exact negation, one logic operation per element). */
GK_HD uint32_t gk__bm_quadrant(uint32_t qbits, uint32_t *neg_c, uint32_t *neg_s)
{
    *neg_c = ((qbits << 30) + 0x40000000u) & 0x80000000u;
    *neg_s = (qbits << 30) & 0x80000000u;
    return qbits & 1u;
}

/* cos theta and sin theta, signs applied (the exhaustive test's view of the two functions above).
 */
GK_HD void gk__bm_sincos(uint32_t k, gk_ff *c, gk_ff *s)
{
    gk_ff cp, sp;
    uint32_t nc, ns;
    uint32_t swap = gk__bm_quadrant(gk__bm_cossin_phi(k, &cp, &sp), &nc, &ns);
    *c = swap ? sp : cp;
    *s = swap ? cp : sp;
    c->hi = gk__f32_from_bits(gk__f32_bits(c->hi) ^ nc);
    c->lo = gk__f32_from_bits(gk__f32_bits(c->lo) ^ nc);
    s->hi = gk__f32_from_bits(gk__f32_bits(s->hi) ^ ns);
    s->lo = gk__f32_from_bits(gk__f32_bits(s->lo) ^ ns);
}

/* z = r t rounded to float: rh th + (rh tl + rl (th + tl)), rounded three times (rl multiplies
 * th + tl rounded, not th alone, so that the product rl tl, up to 2^-20.5 |tl / th| |z| with
 * the device's square root seed, is not dropped). */
GK_HD float gk__bm_z(gk_ff r, gk_ff t)
{
    return fmaf(r.hi, t.hi, fmaf(r.hi, t.lo, GK_FMUL(r.lo, GK_FADD(t.hi, t.lo))));
}

/* Elements 2i and 2i + 1 of the float32 normal stream from words (x_{2j}, x_{2j+1}): z for
 * cos phi and for sin phi, swapped and signed for the quadrant, then mean + stddev z, one fma. */
GK_HD void gk__normal_pair_f32(uint32_t a, uint32_t b, float mean, float stddev, float *even,
                               float *odd)
{
    gk_ff r = gk__bm_radius(gk__neg2ln_u24((a >> 8) + 1u));
    gk_ff cp, sp;
    uint32_t nc, ns, sd = gk__f32_bits(stddev);
    uint32_t swap = gk__bm_quadrant(gk__bm_cossin_phi(b >> 8, &cp, &sp), &nc, &ns);
    float zc = gk__bm_z(r, cp), zs = gk__bm_z(r, sp);
    *even = fmaf(gk__f32_from_bits(sd ^ nc), swap ? zs : zc, mean);
    *odd = fmaf(gk__f32_from_bits(sd ^ ns), swap ? zc : zs, mean);
}

#endif /* GK_NORMAL_F32_H */
