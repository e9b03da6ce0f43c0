/* SPDX-License-Identifier: MIT */
/* cpu_vmath.h - the vector math table (exp, Box-Muller normals) picked for this CPU at run time. */
#ifndef GK_CPU_VMATH_H
#define GK_CPU_VMATH_H

#include <stddef.h>
#include <stdint.h>

/* Loops of exp, log and sincos are what the CPU backend cannot leave to libm: glibc evaluates
 * them one element at a time. With SLEEF (the vector math PyTorch's CPU kernels use) each ISA
 * gets its own implementation: the table's entries come from cpu/vmath/cpu_vmath_<isa>.c, each
 * compiled for its ISA, and gk__cpu_vmath() picks the widest the CPU runs (AVX-512, AVX2, SSE2).
 * Without SLEEF the table holds plain C loops: exp from cpu_vexp.h (vectorized by the compiler),
 * Box-Muller through libm. Every entry computes lane-wise, so results do not depend on how a
 * range is split into calls or threads. */
typedef struct gk_cpu_vmath {
    const char *isa; /* "avx512", "avx2", "sse2" (SLEEF) or "c" */
    /* y[i] = exp(x[i]) for i < n, within 1.01 ulp (SLEEF's u10 functions; our own for float32
     * on AVX2 and AVX-512 and for float64 on AVX-512, cpu/vmath/); y may be x. stream: y's whole
     * vectors are written past the cache (non-temporal stores, fenced before returning); the same
     * values. */
    void (*exp_f32)(size_t n, const float *x, float *y, int stream);
    void (*exp_f64)(size_t n, const double *x, double *y, int stream);
    /* The normal stream's elements of `blocks` whole Philox blocks from block b0 on: float32
     * x[4 i + k] is element 4 (b0 + i) + k, float64 x[2 i + k] is element 2 (b0 + i) + k.
     * Box-Muller is evaluated in double as src/philox.h defines it, with SLEEF's log and sincos
     * (u10: within 1 ulp) in place of libm's; mean + stddev * z in double, rounded once. */
    void (*normal_f32)(uint64_t seed, uint64_t b0, size_t blocks, double mean, double stddev,
                       float *x);
    void (*normal_f64)(uint64_t seed, uint64_t b0, size_t blocks, double mean, double stddev,
                       double *x);
} gk_cpu_vmath;

/* The table for this CPU; the choice is made once. */
const gk_cpu_vmath *gk__cpu_vmath(void);

#ifdef GK_HAVE_SLEEF
extern const gk_cpu_vmath gk__cpu_vmath_avx512;
extern const gk_cpu_vmath gk__cpu_vmath_avx2;
extern const gk_cpu_vmath gk__cpu_vmath_sse2;
#endif

/* Philox blocks the vmath loops handle at a time: their words and Box-Muller inputs stay in
 * L1 between the passes. */
#define GK_VMATH_BLOCKS 64

#endif /* GK_CPU_VMATH_H */
