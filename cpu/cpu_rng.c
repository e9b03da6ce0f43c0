/* SPDX-License-Identifier: MIT */
/* cpu_rng.c - Philox4x32-10 uniform and normal streams, element e = offset + i of each. */
#include "cpu_internal.h"
#include "cpu_vmath.h"
#include "philox.h"

/* Philox's words come from philox.h, the code the CUDA backend compiles too, so the uniform
 * streams agree bit for bit (normals: within the contract's 4 ulp, as the math libraries differ
 * in the last bits), and element e's value depends on (seed, e) alone, so any split of a range into
 * calls, and any thread count, gives the same numbers. Uniforms: one Philox block yields 4
 * float32 or 2 float64 values, so the elements in whole blocks are made a block at a time, in a
 * loop over blocks that vectorizes (Philox is 32-bit multiplies and xors); the few elements
 * before the first and after the last whole block take the per-element functions. Normals are
 * made a block at a time too (below). */

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

/* How n elements from element offset fall on Philox blocks of per (4 or 2) elements: head
 * elements before the first whole block, then whole blocks b0, b0 + 1, ... in chunks of
 * GK_RNG_CHUNK (one task each), then the tail. The uniform and normal streams split alike. */
typedef struct {
    size_t head, blocks, chunks;
    uint64_t b0;
} cpu_rng_span;

static cpu_rng_span cpu_rng_span_of(size_t n, uint64_t offset, size_t per)
{
    size_t head = (size_t)((per - offset % per) % per);
    head = head < n ? head : n;
    size_t blocks = (n - head) / per;
    return (cpu_rng_span){head, blocks, (blocks + GK_RNG_CHUNK - 1) / GK_RNG_CHUNK,
                          (offset + head) / per};
}

/* The whole blocks of the chunk that starts at block i0 of blocks. */
static size_t cpu_rng_chunk_blocks(size_t blocks, size_t i0)
{
    return blocks - i0 < GK_RNG_CHUNK ? blocks - i0 : GK_RNG_CHUNK;
}

/* per = elements per block (4 or 2); x[i] is element offset + i. */
static void cpu_rng_uniform(int nt, size_t n, uint64_t seed, uint64_t offset, void *x, size_t per)
{
    const cpu_rng_span sp = cpu_rng_span_of(n, offset, per);
    const size_t head = sp.head, blocks = sp.blocks, chunks = sp.chunks;
    const uint64_t b0 = sp.b0;
    for (size_t i = 0; i < head; i++) {
        if (per == 4)
            ((float *)x)[i] = gk__philox_uniform_f32(seed, offset + i);
        else
            ((double *)x)[i] = gk__philox_uniform_f64(seed, offset + i);
    }
    GK_CPU_PARALLEL_IF(
        nt > 1, "omp parallel for num_threads(nt) schedule(static)",
        for (size_t c = 0; c < chunks; c++) {
            size_t i0 = c * GK_RNG_CHUNK, cnt = cpu_rng_chunk_blocks(blocks, i0);
            if (per == 4)
                cpu_rng_blocks_f32(seed, b0 + i0, cnt, (float *)x + head + 4 * i0);
            else
                cpu_rng_blocks_f64(seed, b0 + i0, cnt, (double *)x + head + 2 * i0);
        });
    for (size_t i = head + blocks * per; i < n; i++) {
        if (per == 4)
            ((float *)x)[i] = gk__philox_uniform_f32(seed, offset + i);
        else
            ((double *)x)[i] = gk__philox_uniform_f64(seed, offset + i);
    }
}

/* Normals, a Philox block at a time through the vector math table (cpu_vmath.h): each block's
 * words are made once for its 4 (float32) or 2 (float64) values, and Box-Muller runs in double
 * with SLEEF's log and sincos, a vector of pairs at a time; mean + stddev * z in double, rounded
 * once to the dtype, as the CUDA backend does for float64 (its float32 normals are evaluated in
 * float32 within 2.8125 u |stddev z| + u |mean|, src/normal_f32.h, which leaves this backend
 * its u of the 4 ulp across backends). The partial blocks at either end are made whole
 * and the elements asked for copied out, so every element has one value however a range is
 * split into calls. */
static void cpu_normal_block(const gk_cpu_vmath *vm, uint64_t seed, uint64_t b, double mean,
                             double stddev, size_t per, double out[4])
{
    if (per == 4) {
        float v[4];
        vm->normal_f32(seed, b, 1, mean, stddev, v);
        for (int k = 0; k < 4; k++)
            out[k] = v[k];
    } else {
        vm->normal_f64(seed, b, 1, mean, stddev, out);
    }
}

/* Elements [i0, i1) of x (x[i] is element offset + i), all inside one Philox block. */
static void cpu_normal_part(const gk_cpu_vmath *vm, uint64_t seed, uint64_t offset, double mean,
                            double stddev, size_t per, size_t i0, size_t i1, void *x)
{
    if (i0 >= i1)
        return;
    double v[4];
    cpu_normal_block(vm, seed, (offset + i0) / per, mean, stddev, per, v);
    for (size_t i = i0; i < i1; i++) {
        size_t k = (size_t)((offset + i) % per);
        if (per == 4)
            ((float *)x)[i] = (float)v[k];
        else
            ((double *)x)[i] = v[k];
    }
}

static void cpu_rng_normal(int nt, size_t n, uint64_t seed, uint64_t offset, double mean,
                           double stddev, void *x, size_t per)
{
    const gk_cpu_vmath *vm = gk__cpu_vmath();
    const cpu_rng_span sp = cpu_rng_span_of(n, offset, per);
    const size_t head = sp.head, blocks = sp.blocks, chunks = sp.chunks;
    const uint64_t b0 = sp.b0;
    cpu_normal_part(vm, seed, offset, mean, stddev, per, 0, head, x);
    cpu_normal_part(vm, seed, offset, mean, stddev, per, head + blocks * per, n, x);
    GK_CPU_PARALLEL_IF(
        nt > 1, "omp parallel for num_threads(nt) schedule(static)",
        for (size_t c = 0; c < chunks; c++) {
            size_t i0 = c * GK_RNG_CHUNK, cnt = cpu_rng_chunk_blocks(blocks, i0);
            if (per == 4)
                vm->normal_f32(seed, b0 + i0, cnt, mean, stddev, (float *)x + head + 4 * i0);
            else
                vm->normal_f64(seed, b0 + i0, cnt, mean, stddev, (double *)x + head + 2 * i0);
        });
}

gk_status gk__cpu_rng_uniform(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                              void *x)
{
    switch (t) {
    case GK_FLOAT32:
        cpu_rng_uniform(gk__cpu_team(st, n, GK_CPU_PAR_MIN_MATH), n, seed, offset, x, 4);
        return GK_OK;
    case GK_FLOAT64:
        cpu_rng_uniform(gk__cpu_team(st, n, GK_CPU_PAR_MIN_MATH), n, seed, offset, x, 2);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}

gk_status gk__cpu_rng_normal(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                             double mean, double stddev, void *x)
{
    int nt = gk__cpu_team(st, n, GK_CPU_PAR_MIN_MATH);
    switch (t) {
    case GK_FLOAT32:
        cpu_rng_normal(nt, n, seed, offset, mean, stddev, x, 4);
        return GK_OK;
    case GK_FLOAT64:
        cpu_rng_normal(nt, n, seed, offset, mean, stddev, x, 2);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}
