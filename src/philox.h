/* SPDX-License-Identifier: MIT */
/* philox.h - Philox4x32-10 and the mapping of its words to values, shared by every backend. */
#ifndef GK_PHILOX_H
#define GK_PHILOX_H

/* Hand-written rather than taken from cuRAND or Random123: the random stream is part of the
 * API, so the CPU and CUDA backends must compile this very code, and cuRAND's host and device
 * generators do not promise the same stream across versions. Included by C (cpu/) and by nvcc
 * (cuda/); everything is static inline and free of libc except <math.h>. */

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define GK_HD static __host__ __device__ __forceinline__
#else
#define GK_HD static inline
#endif

#define GK_PHILOX_M0 0xD2511F53u
#define GK_PHILOX_M1 0xCD9E8D57u
#define GK_PHILOX_W0 0x9E3779B9u
#define GK_PHILOX_W1 0xBB67AE85u

typedef struct gk_philox_words {
    uint32_t x[4];
} gk_philox_words;

GK_HD uint32_t gk__mulhilo32(uint32_t a, uint32_t b, uint32_t *hi)
{
#if defined(__CUDA_ARCH__)
    /* The same two words, but nvcc otherwise carries the 64-bit product and the whole round
     * through 64-bit operations, two instructions each. */
    *hi = __umulhi(a, b);
    return a * b;
#else
    uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
#endif
}

/* One round on counter c under round key (k0, k1). */
GK_HD void gk__philox_round(uint32_t c[4], uint32_t k0, uint32_t k1)
{
    uint32_t hi0, hi1;
    uint32_t lo0 = gk__mulhilo32(GK_PHILOX_M0, c[0], &hi0);
    uint32_t lo1 = gk__mulhilo32(GK_PHILOX_M1, c[2], &hi1);
    c[0] = hi1 ^ c[1] ^ k0;
    c[1] = lo1;
    c[2] = hi0 ^ c[3] ^ k1;
    c[3] = lo0;
}

/* The four words of block `block` under key `seed` (Salmon et al., SC'11): key
 * (seed lo, seed hi), counter (block lo, block hi, 0, 0), ten rounds. */
GK_HD gk_philox_words gk__philox4x32_10(uint64_t seed, uint64_t block)
{
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    gk_philox_words w = {{(uint32_t)block, (uint32_t)(block >> 32), 0, 0}};
    for (int round = 0; round < 10; round++) {
        gk__philox_round(w.x, k0, k1);
        k0 += GK_PHILOX_W0;
        k1 += GK_PHILOX_W1;
    }
    return w;
}

/* The round keys of gk__philox4x32_10 for `seed`, computed once: a kernel passes them in its
 * parameters, so that each round's xor takes its key from there (no register, no addition). */
typedef struct gk_philox_key {
    uint32_t k0[10], k1[10];
} gk_philox_key;

GK_HD gk_philox_key gk__philox_key(uint64_t seed)
{
    gk_philox_key k;
    for (int round = 0; round < 10; round++) {
        k.k0[round] = (uint32_t)seed + (uint32_t)round * GK_PHILOX_W0;
        k.k1[round] = (uint32_t)(seed >> 32) + (uint32_t)round * GK_PHILOX_W1;
    }
    return k;
}

/* gk__philox4x32_10 with the round keys given. */
GK_HD gk_philox_words gk__philox4x32_10_keyed(const gk_philox_key *k, uint64_t block)
{
    gk_philox_words w = {{(uint32_t)block, (uint32_t)(block >> 32), 0, 0}};
    for (int round = 0; round < 10; round++)
        gk__philox_round(w.x, k->k0[round], k->k1[round]);
    return w;
}

/* Uniform float32 in [0, 1) from the top 24 bits of a word: exact, never 1. */
GK_HD float gk__u24_to_float(uint32_t x)
{
    return (float)(x >> 8) * 0x1p-24f;
}

/* Uniform double in [0, 1) from 27 + 26 bits of two words: exact, never 1. */
GK_HD double gk__u53_to_double(uint32_t p, uint32_t q)
{
    return ((double)(p >> 5) * 67108864.0 + (double)(q >> 6)) * 0x1p-53;
}

/* Element e of the float32 uniform stream. */
GK_HD float gk__philox_uniform_f32(uint64_t seed, uint64_t e)
{
    gk_philox_words w = gk__philox4x32_10(seed, e >> 2);
    return gk__u24_to_float(w.x[e & 3]);
}

/* Element e of the float64 uniform stream. */
GK_HD double gk__philox_uniform_f64(uint64_t seed, uint64_t e)
{
    gk_philox_words w = gk__philox4x32_10(seed, e >> 1);
    unsigned j = (unsigned)(e & 1);
    return gk__u53_to_double(w.x[2 * j], w.x[2 * j + 1]);
}

/* Box-Muller on (u1 in (0, 1], u2 in [0, 1)); even elements take the cosine, odd the sine.
 * Evaluated in double for both dtypes, so the float32 stream rounds once and agrees across
 * backends far within the contract's 4 ulp. */
GK_HD double gk__box_muller(double u1, double u2, int odd)
{
    double r = sqrt(-2.0 * log(u1));
    double theta = 6.283185307179586476925286766559 * u2;
    return odd ? r * sin(theta) : r * cos(theta);
}

/* Element e of the float32 standard normal stream. */
GK_HD double gk__philox_normal_f32(uint64_t seed, uint64_t e)
{
    gk_philox_words w = gk__philox4x32_10(seed, e >> 2);
    unsigned j = (unsigned)((e & 3) >> 1);
    double u1 = ((double)(w.x[2 * j] >> 8) + 1.0) * 0x1p-24;
    double u2 = (double)(w.x[2 * j + 1] >> 8) * 0x1p-24;
    return gk__box_muller(u1, u2, (int)(e & 1));
}

/* Element e of the float64 standard normal stream. */
GK_HD double gk__philox_normal_f64(uint64_t seed, uint64_t e)
{
    gk_philox_words w = gk__philox4x32_10(seed, e >> 1);
    double u1 = gk__u53_to_double(w.x[0], w.x[1]) + 0x1p-53;
    double u2 = gk__u53_to_double(w.x[2], w.x[3]);
    return gk__box_muller(u1, u2, (int)(e & 1));
}

#endif /* GK_PHILOX_H */
