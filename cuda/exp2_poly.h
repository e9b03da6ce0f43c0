/* SPDX-License-Identifier: MIT */
/* exp2_poly.h - 2^t in float32 on the FMA pipe, for the CUDA factorized rbf_matvec. */
#ifndef GK_EXP2_POLY_H
#define GK_EXP2_POLY_H

/* cuda/cuda_rbf_matvec_fact.cuh takes some of its exponentials here instead of on the
 * special-function unit (16 a clock per SM, the kernel's limit). t = j + f with j = round(t)
 * (ties to even) and |f| <= 1/2 by the magic constant 1.5 * 2^23: r = t + 1.5 * 2^23 is exact
 * in its integer part for |t| < 2^22, so j = r - 1.5 * 2^23 is exact and f = t - j is exact
 * (Sterbenz); 2^f is a degree-5 polynomial (Horner, five fmas); 2^j enters by adding j * 2^23
 * to the bits of the polynomial's value p: r's low bits hold j in two's complement, and r's
 * bits shifted left by 23 are j * 2^23 modulo 2^32 (its upper bits shift out). p lies in
 * [0.707, 1.415], biased exponent 126 or 127, so the sum is the float p * 2^j exactly while
 * -125 <= j <= 126: for |t| <= 125. The only error is the polynomial's: tests/test_exp2_poly.c
 * evaluates this code on the host for every float f of [-1/2, 1/2] against double exp2 and
 * bounds the relative error by GK_EXP2_POLY_MAX_REL (largest found 2.18e-7, 3.65 u with
 * u = 2^-24), and checks the composition for t across [-125, 125].
 *
 * The same code compiles for the host and the device: the additions are spelled out as
 * round-to-nearest operations (nvcc fuses nothing here, and the host test builds with
 * -ffp-contract=off) and fmaf is the only fused operation, so both compute the same bits. */
#define GK_EXP2_POLY_MAX_REL 2.2e-7

#include <stdint.h>

#if defined(__CUDA_ARCH__)
static __device__ __forceinline__ float gk_exp2_poly(float t)
{
    const float magic = 0x1.8p23f;
    const float r = __fadd_rn(t, magic);
    const float f = __fsub_rn(t, __fsub_rn(r, magic));
    float p = fmaf(0x1.5f0890p-10f, f, 0x1.3d1070p-7f);
    p = fmaf(p, f, 0x1.c6af6cp-5f);
    p = fmaf(p, f, 0x1.ebf906p-3f);
    p = fmaf(p, f, 0x1.62e430p-1f);
    p = fmaf(p, f, 0x1.000002p+0f);
    return __int_as_float(__float_as_int(p) + (__float_as_int(r) << 23));
}
#else
#include <math.h>
#include <string.h>
static inline float gk_exp2_poly(float t)
{
    const float magic = 0x1.8p23f;
    const float r = t + magic;
    const float f = t - (r - magic);
    float p = fmaf(0x1.5f0890p-10f, f, 0x1.3d1070p-7f);
    p = fmaf(p, f, 0x1.c6af6cp-5f);
    p = fmaf(p, f, 0x1.ebf906p-3f);
    p = fmaf(p, f, 0x1.62e430p-1f);
    p = fmaf(p, f, 0x1.000002p+0f);
    uint32_t pb, rb;
    memcpy(&pb, &p, sizeof pb);
    memcpy(&rb, &r, sizeof rb);
    pb += rb << 23;
    memcpy(&p, &pb, sizeof p);
    return p;
}
#endif

#endif /* GK_EXP2_POLY_H */
