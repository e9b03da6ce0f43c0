/* SPDX-License-Identifier: MIT */
/* cpu_vmath_avx512.c - the vector math table over SLEEF's AVX-512 functions (built -mavx512f). */
#include <immintrin.h>
#include <sleef.h>

#define VM_NAME gk__cpu_vmath_avx512
#define VM_ISA "avx512"
#define VF_N 16
#define VF __m512
#define VD_N 8
#define VD __m512d
#define VD_SC Sleef___m512d_2
#define VF_LOAD _mm512_loadu_ps
#define VF_STREAM _mm512_stream_ps
#define VF_STORE _mm512_storeu_ps
#define VD_LOAD _mm512_loadu_pd
#define VD_SQRT _mm512_sqrt_pd
#define VD_STREAM _mm512_stream_pd
#define VD_STORE _mm512_storeu_pd
#define VF_EXP vm_expf16
#define VD_EXP vm_expd8
#define VD_LOG Sleef_logd8_u10avx512f
#define VD_SINCOS Sleef_sincosd8_u10avx512f

/* exp for float32, not SLEEF's: its expf16 is 28 instructions a vector, and NumPy's own
 * AVX-512 exp was some 25 % faster per core. This one is 13, all on the FMA ports:
 * k = round(x / ln 2) by the 1.5 * 2^23 shift, r = x - k ln 2 in two FMAs (the first exact:
 * k ln2_hi and x share their last bits' range), exp(r) on |r| <= 0.3467 by a degree-6
 * polynomial (Horner; coefficients fitted for relative error, 5.4e-9 with them rounded to
 * float), and 2^k applied by vscalefps, which rounds a subnormal result once and gives +inf past
 * the overflow threshold. x is first clamped to [-104, 89], where exp is already 0 or +inf in
 * float; NaN passes the clamp and propagates. Measured over every float32 input with a scalar
 * model of these operations (fmaf, ldexpf in place of vscalefps): at most 0.92 ulp against
 * double exp, NaN, +-inf, overflow and subnormal results as IEEE asks; cpu_vmath_avx2.c's
 * version gave the model's bits for every input; tests/test_elementwise.c's
 * test_exp_every_exponent checks the kernels themselves. */
static __m512 vm_expf16(__m512 x)
{
    const __m512 shift = _mm512_set1_ps(0x1.8p23f);
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(89.0f), x));
    __m512 kf = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), shift), shift);
    __m512 r = _mm512_fmadd_ps(kf, _mm512_set1_ps(-0x1.62e43p-1f), x); /* ln2 hi */
    r = _mm512_fmadd_ps(kf, _mm512_set1_ps(0x1.05c61p-29f), r);        /* and lo */
    __m512 p = _mm512_set1_ps(0x1.6bd8f6p-10f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.1239e8p-7f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.555682p-5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.555492p-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.fffffep-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, kf);
}

/* exp for float64, not SLEEF's: its expd8 measured 1.25x slower than NumPy's own AVX-512 exp
 * on one core (1e5 doubles in L2), this one faster than both. Tang's method:
 * k = round(32 x / ln 2), r = x - k ln2 / 32 in two FMAs (|r| <= ln2 / 64), exp(r) - 1 by
 * Taylor to degree 6 (remainder below 2^-57 relative), 2^(j/32) (j = k mod 32) from a 32-entry
 * table held in four registers, and 2^((k - j) / 32) applied by vscalefpd, which also gives
 * +inf on overflow and rounds subnormal results. x is first clamped to [-746, 710], where exp
 * is already 0 or +inf; NaN passes the clamp (min and max return their second operand when one
 * is NaN) and propagates. Within 1.5 ulp: the table entries and the final FMA round once each
 * (measured: at most 1.01 ulp against long double over 10^7 arguments in [-760, 712],
 * subnormal results included). */
static const double vm_exp2_32[32] = {0x1p+0,
                                      0x1.059b0d3158574p+0,
                                      0x1.0b5586cf9890fp+0,
                                      0x1.11301d0125b51p+0,
                                      0x1.172b83c7d517bp+0,
                                      0x1.1d4873168b9aap+0,
                                      0x1.2387a6e756238p+0,
                                      0x1.29e9df51fdee1p+0,
                                      0x1.306fe0a31b715p+0,
                                      0x1.371a7373aa9cbp+0,
                                      0x1.3dea64c123422p+0,
                                      0x1.44e086061892dp+0,
                                      0x1.4bfdad5362a27p+0,
                                      0x1.5342b569d4f82p+0,
                                      0x1.5ab07dd485429p+0,
                                      0x1.6247eb03a5585p+0,
                                      0x1.6a09e667f3bcdp+0,
                                      0x1.71f75e8ec5f74p+0,
                                      0x1.7a11473eb0187p+0,
                                      0x1.82589994cce13p+0,
                                      0x1.8ace5422aa0dbp+0,
                                      0x1.93737b0cdc5e5p+0,
                                      0x1.9c49182a3f09p+0,
                                      0x1.a5503b23e255dp+0,
                                      0x1.ae89f995ad3adp+0,
                                      0x1.b7f76f2fb5e47p+0,
                                      0x1.c199bdd85529cp+0,
                                      0x1.cb720dcef9069p+0,
                                      0x1.d5818dcfba487p+0,
                                      0x1.dfc97337b9b5fp+0,
                                      0x1.ea4afa2a490dap+0,
                                      0x1.f50765b6e454p+0};

static __m512d vm_expd8(__m512d x)
{
    const __m512d t0 = _mm512_loadu_pd(vm_exp2_32), t1 = _mm512_loadu_pd(vm_exp2_32 + 8);
    const __m512d t2 = _mm512_loadu_pd(vm_exp2_32 + 16), t3 = _mm512_loadu_pd(vm_exp2_32 + 24);
    const __m512d shift = _mm512_set1_pd(0x1.8p52);
    x = _mm512_max_pd(_mm512_set1_pd(-746.0), _mm512_min_pd(_mm512_set1_pd(710.0), x));
    __m512d kd = _mm512_fmadd_pd(x, _mm512_set1_pd(46.166241308446828384), shift); /* 32/ln2 */
    __m512i j = _mm512_castpd_si512(kd); /* k + 2^51 + 2^52 in the low bits */
    __m512d kf = _mm512_sub_pd(kd, shift);
    __m512d r = _mm512_fnmadd_pd(kf, _mm512_set1_pd(0x1.62e42fefa39efp-6), x); /* ln2/32 hi */
    r = _mm512_fnmadd_pd(kf, _mm512_set1_pd(0x1.abc9e3b39803fp-61), r);        /* and lo */
    __m512d p = _mm512_set1_pd(1.0 / 720.0);
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 120.0));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 24.0));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(1.0 / 6.0));
    p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(0.5));
    p = _mm512_fmadd_pd(p, _mm512_mul_pd(r, r), r); /* exp(r) - 1 */
    __m512d lo = _mm512_permutex2var_pd(t0, j, t1), hi = _mm512_permutex2var_pd(t2, j, t3);
    __mmask8 upper = _mm512_test_epi64_mask(j, _mm512_set1_epi64(16));
    __m512d t = _mm512_mask_blend_pd(upper, lo, hi);
    __m512d jd =
        _mm512_cvtepi32_pd(_mm512_cvtepi64_epi32(_mm512_and_si512(j, _mm512_set1_epi64(31))));
    __m512d e = _mm512_mul_pd(_mm512_sub_pd(kf, jd), _mm512_set1_pd(1.0 / 32.0));
    return _mm512_scalef_pd(_mm512_fmadd_pd(t, p, t), e);
}

#include "cpu_vmath_isa.h"
