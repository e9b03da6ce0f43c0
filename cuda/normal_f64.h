/* SPDX-License-Identifier: MIT */
/* normal_f64.h - the float64 normal stream without libm: its own log, sqrt and sincos. */
#ifndef GK_NORMAL_F64_H
#define GK_NORMAL_F64_H

/* The float64 normal stream (philox.h: r = sqrt(-2 ln u1), theta = fl(2 pi u2), mean + stddev r
 * cos/sin theta) evaluated by the CUDA backend with these functions instead of CUDA's log, sqrt
 * and sincos, whose special cases (zero, negative, subnormal, infinite and huge arguments,
 * Payne-Hanek reduction) never occur here, and whose 64-bit constants the compiler moves into
 * registers one word at a time: 149 instructions per Philox block of two values instead of 251
 * (two blocks per loop iteration). The inputs are integers: u1 = m 2^-53 with m
 * in [1, 2^53] and u2 = k 2^-53 with k in [0, 2^53).
 *   - ln: m = 2^e f with f in [0.75 - 2^-10, 1.5 - 2^-9); f's bucket j (256 of them) gives r_j,
 *     1 for the bucket around 1 and otherwise 1/f rounded to a multiple of 2^-8 or 2^-9, so that
 *     T = 2 - 2 r_j f is exact (|T| < 2^-7.4) and -2 ln u1 = (e - 53)(-2 ln 2) + 2 ln r_j + T +
 *     T^2 Q(T), summed into hi + lo with the parts' rounding errors carried (2 ln r_j from the
 *     table as a double and 21 more bits; -2 ln 2 split so that (e - 53) times its high part is
 *     exact). Near u1 = 1 (the bucket around 1) there is no cancellation: r_j = 1.
 *   - sqrt: a seed y ~ 1/sqrt(hi), one Goldschmidt step, then one Newton correction that takes
 *     lo in: r = g + (hi - g^2 + lo) h.
 *   - theta = fl(2 pi u2) exactly as defined (one product; k times fl(2 pi) 2^-53, exact scaling),
 *     then theta = q pi/2 + phi with q from k's bits (an integer rounding of 4 u2) by a
 *     three-part Cody-Waite reduction (q in 0..4, the first step exact), carried as ph + pl;
 *     sin phi and cos phi by polynomials on |phi| <= pi/4, cos with 1 - w/2 compensated.
 * The constants below come from scripts/normal_f64_tables.py (mpmath), which also checks that
 * every bucket's T is exact and prints the polynomials' errors: Q below 0.06 u of -2 ln u1, S
 * and C below 0.06 u of sin and cos (u = 2^-53); the table block is its output, clang-formatted.
 * tests/test_normal_f64.c measures the whole value against the definition in long double (random
 * words, and u1 and u2 near the places where the reductions are tight: within 2.9 u |z|) and
 * counts the values that differ from the definition with the host's libm.
 *
 * The same code compiles for the host (tests) and the device: GK_DMUL/GK_DADD never fuse, fma
 * is the only fused operation, except for the square root's seed (GK_RSQRT64: the device's
 * rsqrt.approx, or the host's 1/sqrt), whose error the two steps square away twice. */

#include <stdint.h>
#include <string.h>

#include "philox.h"

#if defined(__CUDA_ARCH__)
#define GK_DMUL(a, b) __dmul_rn(a, b)
#define GK_DADD(a, b) __dadd_rn(a, b)
#define GK_DSUB(a, b) __dsub_rn(a, b)
#define GK_RSQRT64(x) gk__rsqrt64_approx(x)
static __device__ __forceinline__ double gk__rsqrt64_approx(double x)
{
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    return y;
}
#else
#define GK_DMUL(a, b) ((a) * (b))
#define GK_DADD(a, b) ((a) + (b))
#define GK_DSUB(a, b) ((a) - (b))
#define GK_RSQRT64(x) (1.0 / sqrt(x))
#endif

/* Bucket j of ln's table: 2 ln r_j as a_hi + a_lo, with r_j and a_lo as the high words of
 * doubles whose low words are 0 (r_j has at most 9 significant bits; a_lo is kept to 21 bits,
 * within 2^-75). One 16-byte entry, one load. */
typedef struct gk_log_entry {
    double a_hi;
    uint32_t r_hw, a_lo_hw;
} gk_log_entry;

/* max |t| over the buckets: 2^-8.415 */
#define GK_LOG_TABLE                                                                               \
    {0x1.2596010df763ap-1, 0x3ff55000u, 0xbc60f76cu},                                              \
        {0x1.22941fbcf7966p-1, 0x3ff54000u, 0xbc876f5fu},                                          \
        {0x1.22941fbcf7966p-1, 0x3ff54000u, 0xbc876f5fu},                                          \
        {0x1.1f8ff9e48a2f3p-1, 0x3ff53000u, 0xbc8c9fe0u},                                          \
        {0x1.1c898c16999fbp-1, 0x3ff52000u, 0xbc40e5c6u},                                          \
        {0x1.1980d2dd4236fp-1, 0x3ff51000u, 0x3c89d3d2u},                                          \
        {0x1.1675cababa60ep-1, 0x3ff50000u, 0x3c3ce63fu},                                          \
        {0x1.136870293a8b0p-1, 0x3ff4f000u, 0x3c87b663u},                                          \
        {0x1.1058bf9ae4ad5p-1, 0x3ff4e000u, 0x3c689fa1u},                                          \
        {0x1.1058bf9ae4ad5p-1, 0x3ff4e000u, 0x3c689fa1u},                                          \
        {0x1.0d46b579ab74bp-1, 0x3ff4d000u, 0x3c703ec8u},                                          \
        {0x1.0a324e27390e3p-1, 0x3ff4c000u, 0x3c87dcfeu},                                          \
        {0x1.071b85fcd590dp-1, 0x3ff4b000u, 0x3c6d1708u},                                          \
        {0x1.0402594b4d041p-1, 0x3ff4a000u, 0xbc728ec2u},                                          \
        {0x1.00e6c45ad501dp-1, 0x3ff49000u, 0xbc7cb957u},                                          \
        {0x1.00e6c45ad501dp-1, 0x3ff49000u, 0xbc7cb957u},                                          \
        {0x1.fb9186d5e3e2bp-2, 0x3ff48000u, 0xbc7caaaeu},                                          \
        {0x1.f550a564b7b37p-2, 0x3ff47000u, 0x3c3c5f6eu},                                          \
        {0x1.ef0adcbdc5936p-2, 0x3ff46000u, 0x3c748638u},                                          \
        {0x1.e8c0252aa5a60p-2, 0x3ff45000u, 0xbc56e03au},                                          \
        {0x1.e27076e2af2e6p-2, 0x3ff44000u, 0xbc561578u},                                          \
        {0x1.e27076e2af2e6p-2, 0x3ff44000u, 0xbc561578u},                                          \
        {0x1.dc1bca0abec7dp-2, 0x3ff43000u, 0x3c7834c5u},                                          \
        {0x1.d5c216b4fbb91p-2, 0x3ff42000u, 0x3c76e443u},                                          \
        {0x1.cf6354e09c5dcp-2, 0x3ff41000u, 0x3c7239a0u},                                          \
        {0x1.c8ff7c79a9a22p-2, 0x3ff40000u, 0xbc74f68au},                                          \
        {0x1.c8ff7c79a9a22p-2, 0x3ff40000u, 0xbc74f68au},                                          \
        {0x1.c2968558c18c1p-2, 0x3ff3f000u, 0xbc773deeu},                                          \
        {0x1.bc286742d8cd6p-2, 0x3ff3e000u, 0x3c64fce7u},                                          \
        {0x1.b5b519e8fb5a4p-2, 0x3ff3d000u, 0x3c7ba280u},                                          \
        {0x1.b5b519e8fb5a4p-2, 0x3ff3d000u, 0x3c7ba280u},                                          \
        {0x1.af3c94e80bff3p-2, 0x3ff3c000u, 0xbc6398d0u},                                          \
        {0x1.a8becfc882f19p-2, 0x3ff3b000u, 0xbc6e8c38u},                                          \
        {0x1.a23bc1fe2b563p-2, 0x3ff3a000u, 0x3c593712u},                                          \
        {0x1.a23bc1fe2b563p-2, 0x3ff3a000u, 0x3c593712u},                                          \
        {0x1.9bb362e7dfb83p-2, 0x3ff39000u, 0x3c7575e3u},                                          \
        {0x1.9525a9cf456b4p-2, 0x3ff38000u, 0x3c7d904cu},                                          \
        {0x1.8e928de886d41p-2, 0x3ff37000u, 0xbc7569d8u},                                          \
        {0x1.8e928de886d41p-2, 0x3ff37000u, 0xbc7569d8u},                                          \
        {0x1.87fa06520c911p-2, 0x3ff36000u, 0xbc7bf7feu},                                          \
        {0x1.815c0a14357ebp-2, 0x3ff35000u, 0xbc64be48u},                                          \
        {0x1.7ab890210d909p-2, 0x3ff34000u, 0x3c5be36bu},                                          \
        {0x1.7ab890210d909p-2, 0x3ff34000u, 0x3c5be36bu},                                          \
        {0x1.740f8f54037a5p-2, 0x3ff33000u, 0xbc6b2640u},                                          \
        {0x1.6d60fe719d21dp-2, 0x3ff32000u, 0xbc7caae2u},                                          \
        {0x1.6d60fe719d21dp-2, 0x3ff32000u, 0xbc7caae2u},                                          \
        {0x1.66acd4272ad51p-2, 0x3ff31000u, 0xbc60900eu},                                          \
        {0x1.5ff3070a793d4p-2, 0x3ff30000u, 0xbc6bc60fu},                                          \
        {0x1.59338d9982086p-2, 0x3ff2f000u, 0xbc665d23u},                                          \
        {0x1.59338d9982086p-2, 0x3ff2f000u, 0xbc665d23u},                                          \
        {0x1.526e5e3a1b438p-2, 0x3ff2e000u, 0xbc774700u},                                          \
        {0x1.4ba36f39a55e5p-2, 0x3ff2d000u, 0x3c768982u},                                          \
        {0x1.4ba36f39a55e5p-2, 0x3ff2d000u, 0x3c768982u},                                          \
        {0x1.44d2b6ccb7d1ep-2, 0x3ff2c000u, 0x3c79f4f6u},                                          \
        {0x1.3dfc2b0ecc62ap-2, 0x3ff2b000u, 0xbc6ab3a9u},                                          \
        {0x1.3dfc2b0ecc62ap-2, 0x3ff2b000u, 0xbc6ab3a9u},                                          \
        {0x1.371fc201e8f74p-2, 0x3ff2a000u, 0x3c6de6cbu},                                          \
        {0x1.303d718e47fd3p-2, 0x3ff29000u, 0xbc16b9c8u},                                          \
        {0x1.303d718e47fd3p-2, 0x3ff29000u, 0xbc16b9c8u},                                          \
        {0x1.29552f81ff523p-2, 0x3ff28000u, 0x3c730177u},                                          \
        {0x1.2266f190a5acbp-2, 0x3ff27000u, 0x3c7f547cu},                                          \
        {0x1.2266f190a5acbp-2, 0x3ff27000u, 0x3c7f547cu},                                          \
        {0x1.1b72ad52f67a0p-2, 0x3ff26000u, 0x3c648302u},                                          \
        {0x1.14785846742acp-2, 0x3ff25000u, 0x3c7a2881u},                                          \
        {0x1.14785846742acp-2, 0x3ff25000u, 0x3c7a2881u},                                          \
        {0x1.0d77e7cd08e59p-2, 0x3ff24000u, 0x3c79a5dcu},                                          \
        {0x1.0671512ca596ep-2, 0x3ff23000u, 0x3c650c64u},                                          \
        {0x1.0671512ca596ep-2, 0x3ff23000u, 0x3c650c64u},                                          \
        {0x1.fec9131dbeabbp-3, 0x3ff22000u, 0xbc65746cu},                                          \
        {0x1.f0a30c01162a6p-3, 0x3ff21000u, 0x3c685f32u},                                          \
        {0x1.f0a30c01162a6p-3, 0x3ff21000u, 0x3c685f32u},                                          \
        {0x1.e27076e2af2e6p-3, 0x3ff20000u, 0xbc461578u},                                          \
        {0x1.d4313d66cb35dp-3, 0x3ff1f000u, 0x3c6790deu},                                          \
        {0x1.d4313d66cb35dp-3, 0x3ff1f000u, 0x3c6790deu},                                          \
        {0x1.c5e548f5bc743p-3, 0x3ff1e000u, 0x3c45d618u},                                          \
        {0x1.c5e548f5bc743p-3, 0x3ff1e000u, 0x3c45d618u},                                          \
        {0x1.b78c82bb0eda1p-3, 0x3ff1d000u, 0x3c30878du},                                          \
        {0x1.a926d3a4ad563p-3, 0x3ff1c000u, 0x3c6942f5u},                                          \
        {0x1.a926d3a4ad563p-3, 0x3ff1c000u, 0x3c6942f5u},                                          \
        {0x1.9ab42462033adp-3, 0x3ff1b000u, 0xbc52099eu},                                          \
        {0x1.8c345d6319b21p-3, 0x3ff1a000u, 0xbc34a698u},                                          \
        {0x1.8c345d6319b21p-3, 0x3ff1a000u, 0xbc34a698u},                                          \
        {0x1.7da766d7b12cdp-3, 0x3ff19000u, 0xbc6eeee0u},                                          \
        {0x1.7da766d7b12cdp-3, 0x3ff19000u, 0xbc6eeee0u},                                          \
        {0x1.6f0d28ae56b4cp-3, 0x3ff18000u, 0xbc6906dau},                                          \
        {0x1.60658a93750c4p-3, 0x3ff17000u, 0xbc638846u},                                          \
        {0x1.60658a93750c4p-3, 0x3ff17000u, 0xbc638846u},                                          \
        {0x1.51b073f06183fp-3, 0x3ff16000u, 0x3c6a49e4u},                                          \
        {0x1.51b073f06183fp-3, 0x3ff16000u, 0x3c6a49e4u},                                          \
        {0x1.42edcbea646f0p-3, 0x3ff15000u, 0x3c5ddd50u},                                          \
        {0x1.42edcbea646f0p-3, 0x3ff15000u, 0x3c5ddd50u},                                          \
        {0x1.341d7961bd1d1p-3, 0x3ff14000u, 0xbc6b599fu},                                          \
        {0x1.253f62f0a1417p-3, 0x3ff13000u, 0xbc2c1259u},                                          \
        {0x1.253f62f0a1417p-3, 0x3ff13000u, 0xbc2c1259u},                                          \
        {0x1.16536eea37ae1p-3, 0x3ff12000u, 0xbc479da4u},                                          \
        {0x1.16536eea37ae1p-3, 0x3ff12000u, 0xbc479da4u},                                          \
        {0x1.075983598e471p-3, 0x3ff11000u, 0x3c580da5u},                                          \
        {0x1.f0a30c01162a6p-4, 0x3ff10000u, 0x3c585f32u},                                          \
        {0x1.f0a30c01162a6p-4, 0x3ff10000u, 0x3c585f32u},                                          \
        {0x1.d276b8adb0b52p-4, 0x3ff0f000u, 0x3c31e3c5u},                                          \
        {0x1.d276b8adb0b52p-4, 0x3ff0f000u, 0x3c31e3c5u},                                          \
        {0x1.b42dd711971bfp-4, 0x3ff0e000u, 0xbc4eb976u},                                          \
        {0x1.b42dd711971bfp-4, 0x3ff0e000u, 0xbc4eb976u},                                          \
        {0x1.95c830ec8e3ebp-4, 0x3ff0d000u, 0x3c5f5a0fu},                                          \
        {0x1.95c830ec8e3ebp-4, 0x3ff0d000u, 0x3c5f5a0fu},                                          \
        {0x1.77458f632dcfcp-4, 0x3ff0c000u, 0x3c518d3du},                                          \
        {0x1.58a5bafc8e4d5p-4, 0x3ff0b000u, 0xbc5ce55cu},                                          \
        {0x1.58a5bafc8e4d5p-4, 0x3ff0b000u, 0xbc5ce55cu},                                          \
        {0x1.39e87b9febd60p-4, 0x3ff0a000u, 0xbc55bfa9u},                                          \
        {0x1.39e87b9febd60p-4, 0x3ff0a000u, 0xbc55bfa9u},                                          \
        {0x1.1b0d98923d980p-4, 0x3ff09000u, 0xbc4e9ae9u},                                          \
        {0x1.1b0d98923d980p-4, 0x3ff09000u, 0xbc4e9ae9u},                                          \
        {0x1.f829b0e783300p-5, 0x3ff08000u, 0x3c433e3fu},                                          \
        {0x1.f829b0e783300p-5, 0x3ff08000u, 0x3c433e3fu},                                          \
        {0x1.b9fc027af9198p-5, 0x3ff07000u, 0xbc00ae69u},                                          \
        {0x1.b9fc027af9198p-5, 0x3ff07000u, 0xbc00ae69u},                                          \
        {0x1.7b91b07d5b11bp-5, 0x3ff06000u, 0xbc45b603u},                                          \
        {0x1.7b91b07d5b11bp-5, 0x3ff06000u, 0xbc45b603u},                                          \
        {0x1.3cea44346a575p-5, 0x3ff05000u, 0xbc20cb5bu},                                          \
        {0x1.3cea44346a575p-5, 0x3ff05000u, 0xbc20cb5bu},                                          \
        {0x1.fc0a8b0fc03e4p-6, 0x3ff04000u, 0xbc283093u},                                          \
        {0x1.fc0a8b0fc03e4p-6, 0x3ff04000u, 0xbc283093u},                                          \
        {0x1.7dc475f810a77p-6, 0x3ff03000u, 0xbc216d77u},                                          \
        {0x1.7dc475f810a77p-6, 0x3ff03000u, 0xbc216d77u},                                          \
        {0x1.fe02a6b106789p-7, 0x3ff02000u, 0xbbde44b8u},                                          \
        {0x1.fe02a6b106789p-7, 0x3ff02000u, 0xbbde44b8u},                                          \
        {0x1.ff00aa2b10bc0p-8, 0x3ff01000u, 0x3c12821bu}, {0x0.0p+0, 0x3ff00000u, 0x00000000u},    \
        {0x0.0p+0, 0x3ff00000u, 0x00000000u}, {-0x1.0080559588b35p-7, 0x3fefe000u, 0xbc2f9664u},   \
        {-0x1.010157588de71p-6, 0x3fefc000u, 0xbc246663u},                                         \
        {-0x1.82448a388a2aap-6, 0x3fefa000u, 0xbc204b16u},                                         \
        {-0x1.0205658935847p-5, 0x3fef8000u, 0xbc427c8fu},                                         \
        {-0x1.432a925980cc1p-5, 0x3fef6000u, 0x3c48cdafu},                                         \
        {-0x1.8492528c8cabfp-5, 0x3fef4000u, 0x3c4d192du},                                         \
        {-0x1.c63d2ec14aaf2p-5, 0x3fef2000u, 0x3c4ce031u},                                         \
        {-0x1.0415d89e74444p-4, 0x3fef0000u, 0xbc5c05cfu},                                         \
        {-0x1.149e3e4005a8dp-4, 0x3feef000u, 0x3c353483u},                                         \
        {-0x1.35c8bfaa1306bp-4, 0x3feed000u, 0x3c150831u},                                         \
        {-0x1.5715c4c03ceefp-4, 0x3feeb000u, 0x3c3bbf89u},                                         \
        {-0x1.788595a3577bap-4, 0x3fee9000u, 0xbc5e5ef9u},                                         \
        {-0x1.9a187b573de7cp-4, 0x3fee7000u, 0x3c572762u},                                         \
        {-0x1.bbcebfc68f420p-4, 0x3fee5000u, 0xbc4e5cf4u},                                         \
        {-0x1.ccb73cdddb2ccp-4, 0x3fee4000u, 0x3c5e48fbu},                                         \
        {-0x1.eea31c006b87cp-4, 0x3fee2000u, 0x3c53e4fdu},                                         \
        {-0x1.08598b59e3a07p-3, 0x3fee0000u, 0x3c6dd701u},                                         \
        {-0x1.1973bd1465567p-3, 0x3fede000u, 0x3c575583u},                                         \
        {-0x1.2207b5c78549ep-3, 0x3fedd000u, 0x3c6cc0fcu},                                         \
        {-0x1.333d7f8183f4bp-3, 0x3fedb000u, 0xbc6a92b0u},                                         \
        {-0x1.4485e03dbdfadp-3, 0x3fed9000u, 0xbc61ba35u},                                         \
        {-0x1.55e10050e0384p-3, 0x3fed7000u, 0x3c645f9du},                                         \
        {-0x1.5e95a4d9791cbp-3, 0x3fed6000u, 0xbc6f3874u},                                         \
        {-0x1.700d30aeac0e1p-3, 0x3fed4000u, 0x3c372566u},                                         \
        {-0x1.8197e2f40e3f0p-3, 0x3fed2000u, 0xbc4b9f2eu},                                         \
        {-0x1.8a6477a91dc29p-3, 0x3fed1000u, 0x3c5fa832u},                                         \
        {-0x1.9c0c32d4d2548p-3, 0x3fecf000u, 0xbc5fb0beu},                                         \
        {-0x1.a4e7640b1bc38p-3, 0x3fece000u, 0x3c65b5cau},                                         \
        {-0x1.b6ac88dad5b1cp-3, 0x3fecc000u, 0x3c50057fu},                                         \
        {-0x1.c885801bc4b23p-3, 0x3feca000u, 0xbc6a38cbu},                                         \
        {-0x1.d179788219364p-3, 0x3fec9000u, 0xbc59daf8u},                                         \
        {-0x1.e3707ee30487bp-3, 0x3fec7000u, 0xbc609ccfu},                                         \
        {-0x1.ec739830a1120p-3, 0x3fec6000u, 0x3c5a2bfau},                                         \
        {-0x1.fe89139dbd566p-3, 0x3fec4000u, 0x3c6ac9f4u},                                         \
        {-0x1.08598b59e3a07p-2, 0x3fec2000u, 0x3c7dd701u},                                         \
        {-0x1.0ce7ecdccc28dp-2, 0x3fec1000u, 0x3c7692a0u},                                         \
        {-0x1.160c8024b27b1p-2, 0x3febf000u, 0x3c72d570u},                                         \
        {-0x1.1aa2b7e23f72ap-2, 0x3febe000u, 0x3c5c6ef2u},                                         \
        {-0x1.23d712a49c202p-2, 0x3febc000u, 0x3c76e381u},                                         \
        {-0x1.28753bc11aba5p-2, 0x3febb000u, 0x3c76394eu},                                         \
        {-0x1.31b994d3a4f85p-2, 0x3feb9000u, 0x3c6c4717u},                                         \
        {-0x1.365fcb0159016p-2, 0x3feb8000u, 0xbc67d412u},                                         \
        {-0x1.3fb45a59928ccp-2, 0x3feb6000u, 0x3c7d87e7u},                                         \
        {-0x1.4462b9dc9b3dcp-2, 0x3feb5000u, 0x3c6629c4u},                                         \
        {-0x1.4dc7b897bc1c8p-2, 0x3feb3000u, 0x3c7927d4u},                                         \
        {-0x1.527e5e4a1b58dp-2, 0x3feb2000u, 0x3c371a97u},                                         \
        {-0x1.5737cc9018cddp-2, 0x3feb1000u, 0xbc74f4d7u},                                         \
        {-0x1.60b3100b09476p-2, 0x3feaf000u, 0x3c65b262u},                                         \
        {-0x1.6574ebe8c133ap-2, 0x3feae000u, 0x3c4d34f1u},                                         \
        {-0x1.6f0128b756abcp-2, 0x3feac000u, 0x3c78de5au},                                         \
        {-0x1.73cb9074fd14dp-2, 0x3feab000u, 0x3c7521a0u},                                         \
        {-0x1.7898d85444c73p-2, 0x3feaa000u, 0xbc6ef8f7u},                                         \
        {-0x1.823c16551a3c2p-2, 0x3fea8000u, 0x3c71232du},                                         \
        {-0x1.871213750e994p-2, 0x3fea7000u, 0xbc7d685fu},                                         \
        {-0x1.90c6db9fcbcd9p-2, 0x3fea5000u, 0xbc705447u},                                         \
        {-0x1.95a5adcf7017fp-2, 0x3fea4000u, 0xbc6142c5u},                                         \
        {-0x1.9a8778debaa38p-2, 0x3fea3000u, 0xbc7f47e0u},                                         \
        {-0x1.a454082e6ab05p-2, 0x3fea1000u, 0xbc6df208u},                                         \
        {-0x1.a93ed3c8ad9e3p-2, 0x3fea0000u, 0xbc7bcafbu},                                         \
        {-0x1.ae2ca6f672bd4p-2, 0x3fe9f000u, 0xbc7ab5cbu},                                         \
        {-0x1.b811730b823d2p-2, 0x3fe9d000u, 0xbc4a0ee7u},                                         \
        {-0x1.bd087383bd8adp-2, 0x3fe9c000u, 0xbc4dd356u},                                         \
        {-0x1.c2028ab17f9b4p-2, 0x3fe9b000u, 0xbc7f11aau},                                         \
        {-0x1.c6ffbc6f00f71p-2, 0x3fe9a000u, 0x3c78e58bu},                                         \
        {-0x1.d1037f2655e7bp-2, 0x3fe98000u, 0xbc760629u},                                         \
        {-0x1.d60a17f903515p-2, 0x3fe97000u, 0x3c7c0df8u},                                         \
        {-0x1.db13db0d48940p-2, 0x3fe96000u, 0xbc6aa11du},                                         \
        {-0x1.e020cc6235ab5p-2, 0x3fe95000u, 0xbc6fea49u},                                         \
        {-0x1.ea4449f04aaf5p-2, 0x3fe93000u, 0x3c7d3392u},                                         \
        {-0x1.ef5ade4dcffe6p-2, 0x3fe92000u, 0x3c608ab3u},                                         \
        {-0x1.f474b134df229p-2, 0x3fe91000u, 0x3c627c78u},                                         \
        {-0x1.f991c6cb3b379p-2, 0x3fe90000u, 0xbc7f6650u},                                         \
        {-0x1.01eae5626c691p-1, 0x3fe8e000u, 0x3c518291u},                                         \
        {-0x1.047e60cde83b8p-1, 0x3fe8d000u, 0x3c807796u},                                         \
        {-0x1.07138604d5862p-1, 0x3fe8c000u, 0xbc8cdb17u},                                         \
        {-0x1.09aa572e6c6d4p-1, 0x3fe8b000u, 0xbc743c2eu},                                         \
        {-0x1.0c42d676162e3p-1, 0x3fe8a000u, 0xbc6162c8u},                                         \
        {-0x1.1178e8227e47cp-1, 0x3fe88000u, 0x3c70e63au},                                         \
        {-0x1.14167ef367783p-1, 0x3fe87000u, 0xbc2e0937u},                                         \
        {-0x1.16b5ccbacfb73p-1, 0x3fe86000u, 0xbc866fbdu},                                         \
        {-0x1.1956d3b9bc2fap-1, 0x3fe85000u, 0xbc87b9d7u},                                         \
        {-0x1.1bf99635a6b95p-1, 0x3fe84000u, 0x3c712aecu},                                         \
        {-0x1.1e9e1678899f4p-1, 0x3fe83000u, 0xbc8512c3u},                                         \
        {-0x1.214456d0eb8d4p-1, 0x3fe82000u, 0xbc7f7ae9u},                                         \
        {-0x1.269621134db92p-1, 0x3fe80000u, 0xbc8e0efbu},                                         \
        {-0x1.2941afb186b7cp-1, 0x3fe7f000u, 0x3c7856e6u},                                         \
        {-0x1.2bef07cdc9354p-1, 0x3fe7e000u, 0x3c882dadu},                                         \
        {-0x1.2e9e2bce12286p-1, 0x3fe7d000u, 0xbc28251au},                                         \
        {-0x1.314f1e1d35ce4p-1, 0x3fe7c000u, 0x3c83d699u},                                         \
        {-0x1.3401e12aecba1p-1, 0x3fe7b000u, 0x3c6cd55cu},                                         \
        {-0x1.36b6776be1117p-1, 0x3fe7a000u, 0x3c6324f1u},                                         \
        {-0x1.396ce359bbf54p-1, 0x3fe79000u, 0x3c6ce2b3u},                                         \
        {-0x1.3c25277333184p-1, 0x3fe78000u, 0x3c82ad28u},                                         \
        {-0x1.419b423d5e8c7p-1, 0x3fe76000u, 0xbc70dbb2u},                                         \
        {-0x1.44591e0539f49p-1, 0x3fe75000u, 0x3c82b125u},                                         \
        {-0x1.4718dc271c41bp-1, 0x3fe74000u, 0xbc48fb4cu},                                         \
        {-0x1.49da7f3bcc41fp-1, 0x3fe73000u, 0x3c79964au},                                         \
        {-0x1.4c9e09e172c3cp-1, 0x3fe72000u, 0x3c612361u},                                         \
        {-0x1.4f637ebba9810p-1, 0x3fe71000u, 0x3c858cb3u},                                         \
        {-0x1.522ae0738a3d8p-1, 0x3fe70000u, 0x3c78f7eau},                                         \
        {-0x1.54f431b7be1a9p-1, 0x3fe6f000u, 0x3c8aacfeu},                                         \
        {-0x1.57bf753c8d1fbp-1, 0x3fe6e000u, 0x3c70908du},                                         \
        {-0x1.5a8cadbbedfa1p-1, 0x3fe6d000u, 0x3c6e6c2cu},                                         \
        {-0x1.5d5bddf595f30p-1, 0x3fe6c000u, 0x3c865411u},                                         \
        {-0x1.602d08af091ecp-1, 0x3fe6b000u, 0x3c66e892u},                                         \
        {-0x1.630030b3aac49p-1, 0x3fe6a000u, 0xbc7dc18du},                                         \
        {-0x1.65d558d4ce00bp-1, 0x3fe69000u, 0x3c87605au},                                         \
        {-0x1.68ac83e9c6a14p-1, 0x3fe68000u, 0xbc6a64ebu},                                         \
        {-0x1.6b85b4cffa3fdp-1, 0x3fe67000u, 0x3c78af2du},                                         \
        {-0x1.6e60ee6af1972p-1, 0x3fe66000u, 0xbc6657c2u},                                         \
        {-0x1.713e33a46a17cp-1, 0x3fe65000u, 0x3c89367au},                                         \
        {-0x1.741d876c67bb1p-1, 0x3fe64000u, 0xbc884a4fu},                                         \
        {-0x1.76feecb947175p-1, 0x3fe63000u, 0x3c8118dau},                                         \
        {-0x1.79e26687cfb3ep-1, 0x3fe62000u, 0x3c8c1688u},                                         \
        {-0x1.7cc7f7db46a0ep-1, 0x3fe61000u, 0x3c884380u},                                         \
        {-0x1.7fafa3bd8151cp-1, 0x3fe60000u, 0x3c621902u},                                         \
        {-0x1.82996d3ef8bcbp-1, 0x3fe5f000u, 0x3c82aa30u},                                         \
        {-0x1.85855776dcbfbp-1, 0x3fe5e000u, 0x3c848666u},                                         \
        {-0x1.85855776dcbfbp-1, 0x3fe5e000u, 0x3c848666u},                                         \
        {-0x1.8873658327ccfp-1, 0x3fe5d000u, 0x3c6c43f0u},                                         \
        {-0x1.8b639a88b2df5p-1, 0x3fe5c000u, 0x3c870f2fu},                                         \
        {-0x1.8e55f9b349b83p-1, 0x3fe5b000u, 0xbc8e2763u},                                         \
        {-0x1.914a8635bf68ap-1, 0x3fe5a000u, 0x3c8ad4bcu},                                         \
        {-0x1.9441434a03259p-1, 0x3fe59000u, 0xbc8c0e4bu},                                         \
        {-0x1.973a3431356aep-1, 0x3fe58000u, 0x3c789d28u},                                         \
        {-0x1.9a355c33bd6bap-1, 0x3fe57000u, 0x3c795958u},                                         \
    {                                                                                              \
        -0x1.9d32bea15ed3bp-1, 0x3fe56000u, 0xbc587bccu                                            \
    }

/* GK_LOG_Q: 5 coefficients, weighted error 0.051 u */
#define GK_LOG_Q                                                                                   \
    0x1.55560955a6558p-8, 0x1.999a6750cf077p-7, 0x1.ffffffffe6affp-6, 0x1.5555555546de7p-4,        \
        0x1.0000000000000p-2
/* GK_SIN_S: 7 coefficients, weighted error 0.0512 u */
#define GK_SIN_S                                                                                   \
    -0x1.ab17d3ce9d15bp-41, 0x1.61217f0b24037p-33, -0x1.ae645412c4ecap-26, 0x1.71de3a5460957p-19,  \
        -0x1.a01a01a019938p-13, 0x1.1111111111110p-7, -0x1.5555555555555p-3
/* GK_COS_C: 6 coefficients, weighted error 0.0113 u */
#define GK_COS_C                                                                                   \
    -0x1.907da33638fbcp-37, 0x1.1eeb68e8f6cdfp-29, -0x1.27e4fa17d9c81p-22, 0x1.a01a019f4eafdp-16,  \
        -0x1.6c16c16c16967p-10, 0x1.5555555555555p-5

/* Every 64-bit constant of the evaluation: the polynomials (highest degree first), -2 ln 2 in
 * two parts (2 ln 2 itself: -2 times it), fl(2 pi) 2^-53 and pi/2 in three parts. On the device a
 * __constant__ array that is not const, so that nvcc cannot fold its values into immediates: a
 * 64-bit immediate does not fit an instruction, and nvcc builds each in registers (two moves per
 * constant, per use in the loop); from the constant bank, an fma reads it as an operand. */
#define GK_BM64_CONSTANTS                                                                          \
    GK_LOG_Q, GK_SIN_S, GK_COS_C, -0x1.62e42fefa3a00p+0, 0x1.0ca86c3898d00p-48,                    \
        0x1.921fb54442d18p-51, 0x1.921fb54442d18p+0, 0x1.1a62633145c00p-54, 0x1.b839a252049c1p-104
enum {
    GK_BM64_Q = 0,  /* 5 coefficients */
    GK_BM64_S = 5,  /* 7 */
    GK_BM64_C = 12, /* 6 */
    GK_BM64_LN2_HI = 18,
    GK_BM64_LN2_LO,
    GK_BM64_TWO_PI,
    GK_BM64_PI2_1,
    GK_BM64_PI2_2,
    GK_BM64_PI2_3
};
#if defined(__CUDACC__)
static __constant__ double gk__bm64_dev[] = {GK_BM64_CONSTANTS};
#endif
static const double gk__bm64_host[] = {GK_BM64_CONSTANTS};
#if defined(__CUDA_ARCH__)
#define GK_BM64(i) gk__bm64_dev[i]
#define GK_BM64_UNROLL _Pragma("unroll")
#else
#define GK_BM64(i) gk__bm64_host[i]
#define GK_BM64_UNROLL
#endif

/* Horner on the n coefficients from GK_BM64(first); n is a constant wherever it is called. */
#define GK_BM64_POLY(x, first, n, p)                                                               \
    do {                                                                                           \
        p = GK_BM64(first);                                                                        \
        GK_BM64_UNROLL                                                                             \
        for (int i_ = 1; i_ < (n); i_++)                                                           \
            p = fma(p, x, GK_BM64((first) + i_));                                                  \
    } while (0)

GK_HD uint32_t gk__f64_hi(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (uint32_t)(b >> 32);
}

GK_HD uint32_t gk__f64_lo(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (uint32_t)b;
}

GK_HD double gk__f64_from(uint32_t hi, uint32_t lo)
{
    uint64_t b = (uint64_t)hi << 32 | lo;
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* -2 ln(m 2^-53) for m in [1, 2^53] (an integer-valued double) as hi + lo, |lo| <= ulp(hi). */
GK_HD void gk__neg2ln_u53(double m, const gk_log_entry *tab, double *hi, double *lo)
{
    const double c_hi = GK_BM64(GK_BM64_LN2_HI), c_lo = GK_BM64(GK_BM64_LN2_LO);
    uint32_t mh = gk__f64_hi(m), ix = mh - 0x3fe80000u + 0x800u;
    int32_t e = (int32_t)ix >> 20;
    gk_log_entry b = tab[(ix >> 12) & 255u];
    double f = gk__f64_from(mh - ((uint32_t)e << 20), gk__f64_lo(m));
    /* 2 r_j: the exponent one higher; T = 2 - 2 r_j f, exact (the script checks |t| < 2^-8) */
    double t = fma(-gk__f64_from(b.r_hw + 0x00100000u, 0), f, 2.0);
    double ed = (double)(e - 53);
    double s1 = fma(ed, c_hi, b.a_hi); /* (e - 53) c_hi is exact; s1 its sum rounded */
    double e1 = GK_DADD(b.a_hi, fma(ed, c_hi, -s1));
    double rest = GK_DADD(fma(ed, c_lo, gk__f64_from(b.a_lo_hw, 0)), e1);
    double q;
    GK_BM64_POLY(t, GK_BM64_Q, 5, q);
    double mt = GK_DADD(t, fma(GK_DMUL(t, t), q, rest));
    *hi = GK_DADD(s1, mt);
    *lo = GK_DSUB(mt, GK_DSUB(*hi, s1));
}

/* r = sqrt(hi + lo), hi in [0, 75]: the seed on hi with its high word raised to at least
 * 2^-1000's (an integer max; hi >= 0), so that hi = 0 gives a finite seed and r = 0. */
GK_HD double gk__bm_radius_f64(double hi, double lo)
{
    uint32_t hw = gk__f64_hi(hi);
    double y = GK_RSQRT64(gk__f64_from(hw > 0x01700000u ? hw : 0x01700000u, 0));
    double h = GK_DMUL(0.5, y), g = GK_DMUL(hi, y);
    double d = fma(-g, h, 0.5);
    g = fma(g, d, g);
    h = fma(h, d, h);
    d = GK_DADD(fma(-g, g, hi), lo);
    return fma(d, h, g);
}

/* cos phi and sin phi with theta = fl(fl(2 pi) k 2^-53) = q pi/2 + phi, for the quadrant q of
 * k (below). */
GK_HD void gk__bm_cossin_phi_f64(double k, uint32_t q, double *c, double *s)
{
    double theta = GK_DMUL(k, GK_BM64(GK_BM64_TWO_PI));
    double qf = (double)q;
    /* phi = ph + pl: theta - q p1 is exact (q <= 4), so is its difference with ph = its sum
     * with -q p2 (p2 has 43 bits), whose rounding error e is then exact too. */
    double p1 = fma(-qf, GK_BM64(GK_BM64_PI2_1), theta);
    double ph = fma(-qf, GK_BM64(GK_BM64_PI2_2), p1);
    double e = fma(-qf, GK_BM64(GK_BM64_PI2_2), GK_DSUB(p1, ph));
    double pl = fma(-qf, GK_BM64(GK_BM64_PI2_3), e);
    double w = GK_DMUL(ph, ph);
    double ps, pc;
    GK_BM64_POLY(w, GK_BM64_S, 7, ps);
    GK_BM64_POLY(w, GK_BM64_C, 6, pc);
    double hz = GK_DMUL(0.5, w), hh = GK_DSUB(1.0, hz);
    double err = GK_DSUB(GK_DSUB(1.0, hh), hz); /* 1 - hz = hh + err exactly */
    /* sin(ph + pl) = sin ph + pl cos ph, cos(ph + pl) = cos ph - pl sin ph, to first order */
    *s = GK_DADD(ph, fma(GK_DMUL(ph, w), ps, GK_DMUL(pl, hh)));
    *c = GK_DADD(hh, fma(w, GK_DMUL(w, pc), fma(-ph, pl, err)));
}

/* q = k / 2^51 rounded (half up) from k's top word alone (k = (x2 >> 5) 2^26 + (x3 >> 6)), in
 * 0..4: theta differs from 2 pi k 2^-53 by its rounding only, so |theta - q pi/2| stays within
 * pi/4 (1 + 2^-51), inside the polynomials' range. */
GK_HD uint32_t gk__bm_quadrant_f64(uint32_t x2)
{
    return ((x2 >> 29) + 1u) >> 1;
}

/* Both elements of a float64 normal Philox block from its words: z for cos and for sin theta
 * (the quadrant by swapping cos phi and sin phi and by flipping z's sign bit), then
 * mean + stddev z as one fma (closer to the exact value, and to the CPU backend's, than two
 * roundings: 3 ulp apart at most where two roundings gave 4, on 4e6 values of mean -1.3,
 * stddev 1.5), or, with fused = 0, rounded as the definition rounds it (product, then sum), for
 * a stddev so large that stddev z can overflow where mean + stddev z does not (|stddev| >
 * 2^1020, as |z| < 8.6): the definition's infinity there, not a finite value. */
GK_HD void gk__normal_pair_f64(const uint32_t x[4], double mean, double stddev,
                               const gk_log_entry *tab, int fused, double *even, double *odd)
{
    double m = fma((double)(x[0] >> 5), 0x1p26, (double)((x[1] >> 6) + 1u));
    double k = fma((double)(x[2] >> 5), 0x1p26, (double)(x[3] >> 6));
    double xh, xl, cp, sp;
    gk__neg2ln_u53(m, tab, &xh, &xl);
    double r = gk__bm_radius_f64(xh, xl);
    uint32_t qb = gk__bm_quadrant_f64(x[2]);
    gk__bm_cossin_phi_f64(k, qb, &cp, &sp);
    uint32_t nc = ((qb << 30) + 0x40000000u) & 0x80000000u, ns = (qb << 30) & 0x80000000u;
    uint32_t swap = qb & 1u;
    double zc = GK_DMUL(r, swap ? sp : cp), zs = GK_DMUL(r, swap ? cp : sp);
    zc = gk__f64_from(gk__f64_hi(zc) ^ nc, gk__f64_lo(zc));
    zs = gk__f64_from(gk__f64_hi(zs) ^ ns, gk__f64_lo(zs));
    *even = fused ? fma(stddev, zc, mean) : GK_DADD(mean, GK_DMUL(stddev, zc));
    *odd = fused ? fma(stddev, zs, mean) : GK_DADD(mean, GK_DMUL(stddev, zs));
}

#endif /* GK_NORMAL_F64_H */
