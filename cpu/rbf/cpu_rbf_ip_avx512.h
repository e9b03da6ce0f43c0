/* SPDX-License-Identifier: MIT */
/* cpu_rbf_ip_avx512.h - the fused inner-product form's epilogue for AVX-512 (cpu_rbf_avx512.c). */
#ifndef GK_CPU_RBF_IP_AVX512_H
#define GK_CPU_RBF_IP_AVX512_H

/* Included by kernels compiled for AVX-512F. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu_rbf.h"
#include "cpu_rbf_ip_pack.h"

/* 2^z for z = -gamma t log2(e), the fused form's kernel values: Cephes' exp2f polynomial
 * (relative error below 2e-7 on [-1/2, 1/2]), 2^round(z) by vscalefps. z carries the roundings of
 * gamma log2(e) and of the product, 2u |z| in all, which moves 2^z by a factor
 * exp(+-2u |z| ln 2): at most 1.2e-5 relative for |z| <= 100 and at most 2u / e = 4.4e-8 in
 * absolute terms, K <= 1 being 2^z. Below z = -100 the value is 0 (2^-100 = 7.9e-31 off at
 * most): no lane is ever subnormal, which costs a microcode assist per lane (clustered data,
 * whose entries are mostly tiny, ran three times slower), and gamma e K,
 * the bound's test, is a normal float too (gamma e >= 35 beta there). So an entry is within
 * 2e-7 + 4.4e-8 of exp(-gamma t), inside the half of the contract the exp and the final rounding
 * have; cpu_rbf_fused.c's coef allows for the 1.2e-5 where the test uses the value. NaN stays
 * NaN. */
static inline __m512 vexp2_kernel(__m512 z)
{
    __mmask16 keep = _mm512_cmp_ps_mask(z, _mm512_set1_ps(-100.0f), _CMP_NLT_UQ);
    z = _mm512_max_ps(_mm512_set1_ps(-100.0f), z);
    __m512 k = _mm512_roundscale_ps(z, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 f = _mm512_sub_ps(z, k);
    __m512 p = _mm512_set1_ps(1.535336188319500e-4f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.339887440266574e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.618437357674640e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550332471162809e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402264791363012e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931472028550421e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(keep, p, k);
}

/* Lanes l of a vector of columns j .. j + 15 with 0 <= j + l < n. */
static inline __mmask16 cols_mask(ptrdiff_t j, size_t n)
{
    ptrdiff_t lo = j < 0 ? -j : 0, hi = (ptrdiff_t)n - j;
    hi = hi > 16 ? 16 : hi;
    if (hi <= lo)
        return 0;
    return (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* ||x - y||^2 for one pair of rows read in place, by the difference form's rule (cpu_rbf.h: float
 * sums of up to GK_RBF_F32_CHUNK squared differences, chunk sums in double; here 16 lanes over
 * the features, then a tree of 4 additions, at most 8 roundings on each term). The rows passed
 * ip_pack, so their squared distance is below 2^62 and no float sum overflows. */
static double ip_dist(size_t d, const float *x, const float *y)
{
    double dist = 0.0;
    for (size_t f0 = 0; f0 < d; f0 += GK_RBF_F32_CHUNK) {
        size_t f1 = d - f0 > GK_RBF_F32_CHUNK ? f0 + GK_RBF_F32_CHUNK : d, f = f0;
        __m512 acc = _mm512_setzero_ps();
        for (; f + 16 <= f1; f += 16) {
            __m512 t = _mm512_sub_ps(_mm512_loadu_ps(x + f), _mm512_loadu_ps(y + f));
            acc = _mm512_fmadd_ps(t, t, acc);
        }
        if (f < f1) {
            __mmask16 m = (__mmask16)((1u << (f1 - f)) - 1u);
            __m512 t =
                _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + f), _mm512_maskz_loadu_ps(m, y + f));
            acc = _mm512_fmadd_ps(t, t, acc);
        }
        dist += (double)_mm512_reduce_add_ps(acc);
    }
    return dist;
}

/* Entries of one vector that the tile's test sent back (redo, a lane mask) from differences: the
 * distances one pair at a time, then one vexp2_kernel over the vector, z = -gamma dist log2(e)
 * rounded once to float (within its allowance); distance 0 gives exactly 1. */
static void ip_redo(const gk_cpu_rbf_ip_f32 *a, size_t i, ptrdiff_t j, __mmask16 redo, float *v)
{
    float z[16] __attribute__((aligned(64)));
    const double scale = -(double)a->gamma * 1.4426950408889634;
    for (__mmask16 left = redo; left; left &= (__mmask16)(left - 1u)) {
        unsigned l = (unsigned)__builtin_ctz(left);
        z[l] = (float)(scale * ip_dist(a->d, a->x + i * a->d, a->y + ((size_t)j + l) * a->d));
    }
    __m512 kv = vexp2_kernel(_mm512_maskz_load_ps(redo, z));
    _mm512_store_ps(v, _mm512_mask_blend_ps(redo, _mm512_load_ps(v), kv));
}

/* One row of a tile, 32 columns from column j0 (a->sh aligns them with the output's cache lines,
 * so whole vectors can be streamed past the cache: the output is written once and not read, and
 * a store that misses would first read its line), given its dot products g[0], g[1] and the
 * tile's ny and largest ny. The bound's test per entry is t <= e (too close to tell),
 * gamma e > 1e-2 or gamma e K coef > tol, the last two not for entries far apart (zscale (t - e)
 * <= zfar: true and computed values both below tol); for the row it is first tried with e at its
 * largest in the tile, e_row = beta (nx_i + max ny) (bounds taken in double): where that passes the
 * last two for the whole row, only t <= e_row is tested per entry (it sends back a few more
 * entries, those closer than e_row). keep, if not NULL: the row's 32 values go there too (64-byte
 * aligned). A vector with entries the test sent back is not stored: its values go to pend (32
 * floats, 64-byte aligned) and the lanes to redo are returned (bits 16 v + l), for ip_pending
 * to finish once the tile's dot products are no longer held in registers (a call here would
 * make the compiler save and restore them around it). */
static inline __attribute__((always_inline)) uint32_t
ip_row(const gk_cpu_rbf_ip_f32 *a, size_t i, ptrdiff_t j0, const __mmask16 valid[2],
       const __m512 ny[2], double nymax, const __m512 g[2], float *keep, float *pend)
{
    uint32_t pending = 0;
    const __m512 cg = _mm512_set1_ps(a->zscale), m2 = _mm512_set1_ps(-2.0f);
    const __m512 zero = _mm512_setzero_ps();
    float nxr = a->nx[i];
    double erow = a->beta_d * ((double)nxr + nymax);
    double ge = (double)a->gamma * erow;
    int fast = ge <= 1e-2 && a->coef_d * ge <= a->tol_d;
    /* erow rounded to a float no smaller, without a call: (1 + 2^-22) lifts it past any rounding
     * down to nearest, 2^-149 past one among subnormals */
    float eup = (float)(erow * (1.0 + 0x1p-22) + 0x1p-149);
    __m512 nx = _mm512_set1_ps(nxr), ef = _mm512_set1_ps(eup);
    float *out = a->k + (ptrdiff_t)(i * a->n) + j0;
#pragma GCC unroll 2
    for (int v = 0; v < 2; v++) {
        __m512 s = _mm512_add_ps(nx, ny[v]);
        __m512 t = _mm512_max_ps(zero, _mm512_fmadd_ps(m2, g[v], s));
        __m512 kv = vexp2_kernel(_mm512_mul_ps(cg, t));
        __mmask16 redo;
        if (fast) {
            redo = _mm512_cmp_ps_mask(t, ef, _CMP_LE_OQ);
        } else {
            __m512 e = _mm512_mul_ps(_mm512_set1_ps(a->beta), s);
            __m512 gev = _mm512_mul_ps(_mm512_set1_ps(a->gamma), e);
            __m512 err = _mm512_mul_ps(_mm512_mul_ps(gev, kv), _mm512_set1_ps(a->coef));
            __mmask16 far = _mm512_cmp_ps_mask(_mm512_mul_ps(cg, _mm512_sub_ps(t, e)),
                                               _mm512_set1_ps(a->zfar), _CMP_LE_OQ);
            redo = _mm512_cmp_ps_mask(t, e, _CMP_LE_OQ) |
                   ((_mm512_cmp_ps_mask(gev, _mm512_set1_ps(1e-2f), _CMP_GT_OQ) |
                     _mm512_cmp_ps_mask(err, _mm512_set1_ps(a->tol), _CMP_GT_OQ)) &
                    (__mmask16)~far);
        }
        redo &= valid[v];
        if (redo) {
            _mm512_store_ps(pend + 16 * v, kv);
            pending |= (uint32_t)redo << (16 * v);
            continue;
        }
        if (keep != NULL)
            _mm512_store_ps(keep + 16 * v, kv);
        if (a->stream && valid[v] == 0xffff)
            _mm512_stream_ps(out + 16 * v, kv);
        else
            _mm512_mask_storeu_ps(out + 16 * v, valid[v], kv);
    }
    return pending;
}

/* The vectors of row i that ip_row left pending: their lanes to redo (pending) from differences,
 * then stored as ip_row stores the others. */
static void ip_pending(const gk_cpu_rbf_ip_f32 *a, size_t i, ptrdiff_t j0, const __mmask16 valid[2],
                       uint32_t pending, float *pend, float *keep)
{
    float *out = a->k + (ptrdiff_t)(i * a->n) + j0;
    for (int v = 0; v < 2; v++) {
        __mmask16 redo = (__mmask16)(pending >> (16 * v));
        if (!redo)
            continue;
        ip_redo(a, i, j0 + 16 * v, redo, pend + 16 * v);
        __m512 kv = _mm512_load_ps(pend + 16 * v);
        if (keep != NULL)
            _mm512_store_ps(keep + 16 * v, kv);
        if (a->stream && valid[v] == 0xffff)
            _mm512_stream_ps(out + 16 * v, kv);
        else
            _mm512_mask_storeu_ps(out + 16 * v, valid[v], kv);
    }
}

/* ip_pending for `rows` rows from i0 (their pending lanes, pend and keep rows of 32 floats, keep
 * NULL: none); the number of entries computed again, which GK_LOG reports. */
static inline size_t ip_finish(const gk_cpu_rbf_ip_f32 *a, size_t i0, size_t rows, ptrdiff_t j0,
                               const __mmask16 valid[2], const uint32_t *pending, float (*pend)[32],
                               float (*keep)[32])
{
    size_t redone = 0;
    for (size_t r = 0; r < rows; r++)
        if (pending[r]) {
            ip_pending(a, i0 + r, j0, valid, pending[r], pend[r], keep ? keep[r] : NULL);
            redone += (size_t)__builtin_popcount(pending[r]);
        }
    return redone;
}

#endif /* GK_CPU_RBF_IP_AVX512_H */
