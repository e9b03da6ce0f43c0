/* SPDX-License-Identifier: MIT */
/* cpu_rng.c - Philox4x32-10 uniform and normal streams, element e = offset + i of each. */
#include "cpu_internal.h"
#include "philox.h"

/* Every value comes from philox.h, the code the CUDA backend compiles too, so the streams agree
 * bit for bit, and element e's value depends on (seed, e) alone, so any split of a range into
 * calls, and any thread count, gives the same numbers. Uniforms: one Philox block yields 4
 * float32 or 2 float64 values, so the elements in whole blocks are made a block at a time, in a
 * loop over blocks that vectorizes (Philox is 32-bit multiplies and xors); the few elements
 * before the first and after the last whole block take the per-element functions. Normals call
 * gk__philox_normal_* per element, keeping the word-to-value mapping in that one header:
 * Box-Muller's log, sqrt and sin/cos cost more than the repeated Philox rounds. */

/* Whole blocks per task of the parallel loop. */
#define GK_RNG_CHUNK ((size_t)1024)

GK_CPU_CLONES
static void cpu_rng_blocks_f32(uint64_t seed, uint64_t b0, size_t blocks, float *x)
{
#pragma omp simd
    for (size_t i = 0; i < blocks; i++) {
        gk_philox_words w = gk__philox4x32_10(seed, b0 + i);
        for (unsigned j = 0; j < 4; j++)
            x[4 * i + j] = gk__u24_to_float(w.x[j]);
    }
}

GK_CPU_CLONES
static void cpu_rng_blocks_f64(uint64_t seed, uint64_t b0, size_t blocks, double *x)
{
#pragma omp simd
    for (size_t i = 0; i < blocks; i++) {
        gk_philox_words w = gk__philox4x32_10(seed, b0 + i);
        x[2 * i] = gk__u53_to_double(w.x[0], w.x[1]);
        x[2 * i + 1] = gk__u53_to_double(w.x[2], w.x[3]);
    }
}

/* per = elements per block (4 or 2); x[i] is element offset + i. */
static void cpu_rng_uniform(int nt, size_t n, uint64_t seed, uint64_t offset, void *x, size_t per)
{
    size_t head = (size_t)((per - offset % per) % per);
    head = head < n ? head : n;
    size_t blocks = (n - head) / per, chunks = (blocks + GK_RNG_CHUNK - 1) / GK_RNG_CHUNK;
    uint64_t b0 = (offset + head) / per;
    for (size_t i = 0; i < head; i++) {
        if (per == 4)
            ((float *)x)[i] = gk__philox_uniform_f32(seed, offset + i);
        else
            ((double *)x)[i] = gk__philox_uniform_f64(seed, offset + i);
    }
#pragma omp parallel for num_threads(nt) if (n > GK_CPU_PAR_MIN_MATH) schedule(static)
    for (size_t c = 0; c < chunks; c++) {
        size_t i0 = c * GK_RNG_CHUNK, cnt = blocks - i0 < GK_RNG_CHUNK ? blocks - i0 : GK_RNG_CHUNK;
        if (per == 4)
            cpu_rng_blocks_f32(seed, b0 + i0, cnt, (float *)x + head + 4 * i0);
        else
            cpu_rng_blocks_f64(seed, b0 + i0, cnt, (double *)x + head + 2 * i0);
    }
    for (size_t i = head + blocks * per; i < n; i++) {
        if (per == 4)
            ((float *)x)[i] = gk__philox_uniform_f32(seed, offset + i);
        else
            ((double *)x)[i] = gk__philox_uniform_f64(seed, offset + i);
    }
}

/* mean + stddev * z in double, rounded once to float: what the CUDA backend computes too. */
static void cpu_rng_normal_f32(int nt, size_t n, uint64_t seed, uint64_t offset, double mean,
                               double stddev, float *x)
{
#pragma omp parallel for num_threads(nt) if (n > GK_CPU_PAR_MIN_MATH) schedule(static)
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(mean + stddev * gk__philox_normal_f32(seed, offset + i));
}

static void cpu_rng_normal_f64(int nt, size_t n, uint64_t seed, uint64_t offset, double mean,
                               double stddev, double *x)
{
#pragma omp parallel for num_threads(nt) if (n > GK_CPU_PAR_MIN_MATH) schedule(static)
    for (size_t i = 0; i < n; i++)
        x[i] = mean + stddev * gk__philox_normal_f64(seed, offset + i);
}

gk_status gk__cpu_rng_uniform(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                              void *x)
{
    switch (t) {
    case GK_FLOAT32:
        cpu_rng_uniform(gk__cpu_threads(st), n, seed, offset, x, 4);
        return GK_OK;
    case GK_FLOAT64:
        cpu_rng_uniform(gk__cpu_threads(st), n, seed, offset, x, 2);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}

gk_status gk__cpu_rng_normal(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                             double mean, double stddev, void *x)
{
    int nt = gk__cpu_threads(st);
    switch (t) {
    case GK_FLOAT32:
        cpu_rng_normal_f32(nt, n, seed, offset, mean, stddev, x);
        return GK_OK;
    case GK_FLOAT64:
        cpu_rng_normal_f64(nt, n, seed, offset, mean, stddev, x);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}
