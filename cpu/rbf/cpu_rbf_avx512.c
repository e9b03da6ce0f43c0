/* SPDX-License-Identifier: MIT */
/* cpu_rbf_avx512.c - the float32 rbf kernels register-blocked for AVX-512 (built -mavx512f). */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_rbf.h"
#include "cpu_rbf_ip_avx512.h"
#include "cpu_vexp.h"

/* Why kernels of their own: the generic row kernel (cpu_rbf_kernel.c) keeps GK_RBF_COLS = 32
 * columns of one row of x in registers, two AVX-512 vectors, so its two chains of dependent
 * multiply-adds (4 cycles each) use a quarter of the two FMA ports. Here MR = 12 rows of x share
 * each pair of loaded y vectors: 24 independent accumulators, 2 loads per 24 multiply-adds,
 * which keeps both ports busy. The difference form sums each entry over the features in the
 * generic kernel's order, with one rounding per term (an FMA) where the generic kernel has two,
 * so values may differ from its in the last bits, well within the contract. */
#define MR 12
#define NV 2 /* vectors of 16 columns per block: GK_RBF_COLS */

_Static_assert(NV * 16 == GK_RBF_COLS, "a block is GK_RBF_COLS columns");

/* exp(x) lane by lane: Cephes' polynomial as in cpu_vexp.h (k = round(x / ln 2), r = x - k ln 2
 * in two parts, exp(r) to degree 7), with FMAs, and 2^k applied by vscalefps, which gives +inf on
 * overflow; x is clamped to [-87, 104] first (max and min return their second operand for a
 * NaN, so NaN propagates), and below -87 the value is 0, within 1.7e-38 of exp(x): no lane is
 * subnormal, each of which cost a microcode assist (cpu_rbf_ip_avx512.h's vexp2_kernel says how
 * much). About half the instructions of gk__vexp_f32's portable form; within 2 ulp likewise. */
static inline __m512 vexp(__m512 x)
{
    __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_NLT_UQ);
    x = _mm512_max_ps(_mm512_set1_ps(-87.0f), x);
    x = _mm512_min_ps(_mm512_set1_ps(104.0f), x);
    __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
    p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(keep, p, k);
}

/* exp(-exponent): the exponent rule of src/backend_math.h, gz where dist is 0. */
static inline __m512 vkernel(__m512 gamma, __m512 gz, __m512 dist)
{
    __mmask16 zero = _mm512_cmp_ps_mask(dist, _mm512_setzero_ps(), _CMP_EQ_OQ);
    __m512 e = _mm512_mask_blend_ps(zero, _mm512_mul_ps(gamma, dist), gz);
    return vexp(_mm512_sub_ps(_mm512_setzero_ps(), e));
}

/* acc[r][v] += sum over features f0..f1-1 of (x_r[f] - yt[f][16 v ..])^2, for R rows of x. */
static inline __attribute__((always_inline)) void diff_acc(const int R, size_t f0, size_t f1,
                                                           size_t d, size_t ld, const float *x,
                                                           const float *yt, __m512 acc[MR][NV])
{
    for (size_t f = f0; f < f1; f++) {
        __m512 y0 = _mm512_loadu_ps(yt + f * ld), y1 = _mm512_loadu_ps(yt + f * ld + 16);
#pragma GCC unroll 12
        for (int r = 0; r < R; r++) {
            __m512 xr = _mm512_set1_ps(x[(size_t)r * d + f]);
            __m512 t0 = _mm512_sub_ps(y0, xr), t1 = _mm512_sub_ps(y1, xr);
            acc[r][0] = _mm512_fmadd_ps(t0, t0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(t1, t1, acc[r][1]);
        }
    }
}

/* Lanes l of the vector at lane L of a block that hold columns: lead <= L + l < end. */
static inline __mmask16 lane_mask(size_t L, size_t lead, size_t end)
{
    size_t lo = lead > L ? lead - L : 0, hi = end > L ? end - L : 0;
    hi = hi > 16 ? 16 : hi;
    return hi <= lo ? 0 : (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* Row r's vector v of a block, lanes at L: to out's column L - lead (the first vector of a
 * block with a lead, compressed to column 0), streamed where stream allows it. */
static inline void diff_store(float *out, size_t L, size_t lead, size_t end, int stream, __m512 v)
{
    __mmask16 m = lane_mask(L, lead, end);
    if (m == 0)
        return;
    if (L < lead) {
        _mm512_mask_compressstoreu_ps(out, m, v);
        return;
    }
    float *o = out + (L - lead);
    if (stream && m == 0xffff && ((uintptr_t)o & 63) == 0)
        _mm512_stream_ps(o, v);
    else
        _mm512_mask_storeu_ps(o, m, v);
}

/* One block of R rows by GK_RBF_COLS lanes from lane L of the packed columns (yt at lane L):
 * distances (float sums of up to GK_RBF_F32_CHUNK features, chunks added in double:
 * cpu_rbf_kernel.c's rule), then the exponent rule and exp, lane by lane through a tile in L1;
 * lanes lead .. end - 1 are columns, stored by diff_store. */
static inline __attribute__((always_inline)) void
diff_block(const int R, size_t d, size_t ld, float gamma, float gz, const float *x, const float *yt,
           size_t L, size_t lead, size_t end, int stream, float *out, size_t ldo)
{
    __m512 acc[MR][NV], vg = _mm512_set1_ps(gamma), vz = _mm512_set1_ps(gz);
    float tile[MR][GK_RBF_COLS] __attribute__((aligned(64)));
    if (d <= GK_RBF_F32_CHUNK) {
#pragma GCC unroll 12
        for (int r = 0; r < R; r++)
            acc[r][0] = acc[r][1] = _mm512_setzero_ps();
        diff_acc(R, 0, d, d, ld, x, yt, acc);
        const __m512 inf = _mm512_set1_ps(INFINITY);
        for (int r = 0; r < R; r++) {
            _mm512_store_ps(tile[r], vkernel(vg, vz, acc[r][0]));
            _mm512_store_ps(tile[r] + 16, vkernel(vg, vz, acc[r][1]));
            uint32_t over = _mm512_cmp_ps_mask(acc[r][0], inf, _CMP_EQ_OQ) |
                            (uint32_t)_mm512_cmp_ps_mask(acc[r][1], inf, _CMP_EQ_OQ) << 16;
            for (; over; over &= over - 1u) {
                unsigned j = (unsigned)__builtin_ctz(over);
                double dist = gk__cpu_rbf_dist_f64(d, ld, x + (size_t)r * d, yt + j);
                tile[r][j] = gk__vexp_f32((float)-gk__rbf_exponent_f64(gamma, gz, dist));
            }
        }
    } else {
        double accd[MR][GK_RBF_COLS] __attribute__((aligned(64)));
        memset(accd, 0, sizeof accd);
        for (size_t f0 = 0; f0 < d; f0 += GK_RBF_F32_CHUNK) {
            size_t f1 = d - f0 > GK_RBF_F32_CHUNK ? f0 + GK_RBF_F32_CHUNK : d;
#pragma GCC unroll 12
            for (int r = 0; r < R; r++)
                acc[r][0] = acc[r][1] = _mm512_setzero_ps();
            diff_acc(R, f0, f1, d, ld, x, yt, acc);
            for (int r = 0; r < R; r++) {
                _mm512_store_ps(tile[r], acc[r][0]);
                _mm512_store_ps(tile[r] + 16, acc[r][1]);
#pragma omp simd
                for (size_t j = 0; j < GK_RBF_COLS; j++)
                    accd[r][j] += (double)tile[r][j];
            }
        }
        for (int r = 0; r < R; r++) {
            for (size_t j = 0; j < GK_RBF_COLS; j++)
                if (accd[r][j] == INFINITY)
                    accd[r][j] = gk__cpu_rbf_dist_f64(d, ld, x + (size_t)r * d, yt + j);
#pragma omp simd
            for (size_t j = 0; j < GK_RBF_COLS; j++)
                tile[r][j] = gk__vexp_f32((float)-gk__rbf_exponent_f64(gamma, gz, accd[r][j]));
        }
    }
    for (int r = 0; r < R; r++)
        for (size_t v = 0; v < NV; v++)
            diff_store(out + (size_t)r * ldo, L + 16 * v, lead, end, stream,
                       _mm512_load_ps(tile[r] + 16 * v));
}

/* R rows against the packed lanes lead .. end - 1. */
static inline __attribute__((always_inline)) void diff_rows(const int R, size_t d, size_t end,
                                                            size_t ld, size_t lead, int stream,
                                                            float gamma, float gz, const float *x,
                                                            const float *yt, float *out, size_t ldo)
{
    for (size_t L = 0; L < end; L += GK_RBF_COLS)
        diff_block(R, d, ld, gamma, gz, x, yt + L, L, lead, end, stream, out, ldo);
}

static void rows_f32(size_t d, size_t rows, size_t nb, size_t ld, size_t lead, int stream,
                     float gamma, float gz, const float *x, const float *yt, float *out, size_t ldo)
{
    size_t i = 0, end = lead + nb;
    for (; i + MR <= rows; i += MR)
        diff_rows(MR, d, end, ld, lead, stream, gamma, gz, x + i * d, yt, out + i * ldo, ldo);
    /* the rest in blocks of 8, 4, 2 and 1 rows */
    for (int R = 8; R >= 1; R /= 2) {
        if (rows - i < (size_t)R)
            continue;
        const float *xr = x + i * d;
        float *o = out + i * ldo;
        switch (R) {
        case 8:
            diff_rows(8, d, end, ld, lead, stream, gamma, gz, xr, yt, o, ldo);
            break;
        case 4:
            diff_rows(4, d, end, ld, lead, stream, gamma, gz, xr, yt, o, ldo);
            break;
        case 2:
            diff_rows(2, d, end, ld, lead, stream, gamma, gz, xr, yt, o, ldo);
            break;
        default:
            diff_rows(1, d, end, ld, lead, stream, gamma, gz, xr, yt, o, ldo);
            break;
        }
        i += (size_t)R;
    }
    if (stream)
        _mm_sfence(); /* streamed stores are weakly ordered: done before the team's barrier */
}

/* ----------------------------------------------------------------------------------------
 * The inner-product form, fused (cpu/cpu_rbf_fused.c drives it): a tile of IP_MR x NR entries as
 * dot products of packed centered rows, then, from the registers, the distance, exp and the
 * rounding bound's test, so G never goes to memory.
 * -------------------------------------------------------------------------------------- */
/* Rows of x per tile of the inner-product form: 28 accumulators, 2 y vectors and a broadcast
 * fill 31 of the 32 registers; 14 measured 4-6% faster than 12. */
#define IP_MR 14
#define NR 32
/* Features per block of a dot product: each block is a chain of FMAs from 0, the block sums are
 * added in order, so a product errs by g_{16 + d / 16}(u) (ip_dot_err) instead of g_d(u) for
 * one chain. The rigorous bound then holds on standardized N(0, 1) data at gamma = 1 / d, where
 * with one chain it sent back about half the entries of 2048^2 x 256 to differences
 * (docs/forms.md). */
#define IP_BLOCK ((size_t)16)

_Static_assert(NR == NV * 16, "a tile is NV vectors wide");

/* Tile (p, q): rows p IP_MR .. of x, columns q NR - sh .. of y (a->sh aligns them with the output's
 * cache lines, so whole vectors can be streamed past the cache: the output is written once and
 * not read, and a store that misses would first read its line). The bound's test per entry is
 * t <= e (too close to tell), gamma e > 1e-2 or gamma e K coef > tol (not for entries far
 * apart, gk__cpu_rbf_far); for a row of the tile it
 * is first tried with e at its largest in the tile, e_row = beta (nx_i + max ny) (bounds taken
 * in double): where that passes the last two for the whole row, only t <= e_row is tested per
 * entry (it sends back a few more entries, those closer than e_row). */
static inline size_t ip_tile(const gk_cpu_rbf_ip_f32 *a, size_t p, size_t q)
{
    size_t d = a->d;
    const float *xp = (const float *)((const char *)a->xp + p * a->xbytes);
    const float *yp = (const float *)((const char *)a->yp + q * a->ybytes);
    __m512 acc[IP_MR][NV];
    /* The block sums before the last, added up in L1 (no registers are left for them). */
    float sum[IP_MR][NR] __attribute__((aligned(64)));
    size_t f0 = 0; /* d >= 1 (cpu/rbf/plan.c) */
    do {
        size_t f1 = d - f0 > IP_BLOCK ? f0 + IP_BLOCK : d;
#pragma GCC unroll 14
        for (int r = 0; r < IP_MR; r++)
            acc[r][0] = acc[r][1] = _mm512_setzero_ps();
        for (size_t f = f0; f < f1; f++) {
            __m512 y0 = _mm512_load_ps(yp + f * NR), y1 = _mm512_load_ps(yp + f * NR + 16);
#pragma GCC unroll 14
            for (int r = 0; r < IP_MR; r++) {
                __m512 xr = _mm512_set1_ps(xp[f * IP_MR + r]);
                acc[r][0] = _mm512_fmadd_ps(xr, y0, acc[r][0]);
                acc[r][1] = _mm512_fmadd_ps(xr, y1, acc[r][1]);
            }
        }
        if (f0 == 0 && f1 == d)
            break;
#pragma GCC unroll 14
        for (int r = 0; r < IP_MR; r++)
            for (int v = 0; v < NV; v++) {
                __m512 prev = f0 == 0 ? _mm512_setzero_ps() : _mm512_load_ps(sum[r] + 16 * v);
                if (f1 == d)
                    acc[r][v] = _mm512_add_ps(prev, acc[r][v]);
                else
                    _mm512_store_ps(sum[r] + 16 * v, _mm512_add_ps(prev, acc[r][v]));
            }
    } while ((f0 += IP_BLOCK) < d);
    size_t i0 = p * IP_MR, rows = a->m - i0 < IP_MR ? a->m - i0 : IP_MR;
    ptrdiff_t j0 = (ptrdiff_t)(q * NR) - (ptrdiff_t)a->sh;
    __mmask16 valid[NV] = {cols_mask(j0, a->n), cols_mask(j0 + 16, a->n)};
    const float *nyq = a->ny + q * NR;
    __m512 ny[NV] = {_mm512_load_ps(nyq), _mm512_load_ps(nyq + 16)};
    double nymax = (double)a->nymax[q];
    float pend[IP_MR][NR] __attribute__((aligned(64)));
    uint32_t pending[IP_MR] = {0};
    if (!a->upper) {
#pragma GCC unroll 14
        for (int r = 0; r < IP_MR; r++) {
            if ((size_t)r >= rows)
                break;
            pending[r] = ip_row(a, i0 + (size_t)r, j0, valid, ny, nymax, acc[r], NULL, pend[r]);
        }
        return ip_finish(a, i0, rows, j0, valid, pending, pend, NULL);
    }
    /* x and y the same rows: the tile writes its entries on and above the diagonal (j >= i) and,
     * from a copy in L1, their mirror images k[j][i] for j > i, a column of the copy (a gather)
     * at a time; the tiles wholly below are skipped (ip_f32). The mirror images fill rows j
     * 14 columns at a time, which the same thread's next tiles (p + 1) continue. */
    float keep[IP_MR][NR] __attribute__((aligned(64)));
    __mmask16 upper[IP_MR][NV];
#pragma GCC unroll 14
    for (int r = 0; r < IP_MR; r++) {
        if ((size_t)r >= rows)
            break;
        size_t i = i0 + (size_t)r;
        upper[r][0] = valid[0] & (__mmask16)~cols_mask(j0, i);
        upper[r][1] = valid[1] & (__mmask16)~cols_mask(j0 + 16, i);
        pending[r] = ip_row(a, i, j0, upper[r], ny, nymax, acc[r], keep[r], pend[r]);
    }
    size_t redone = 0;
    for (size_t r = 0; r < rows; r++)
        redone += ip_finish(a, i0 + r, 1, j0, upper[r], pending + r, pend + r, keep + r);
    const __m512i rowstep =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32((int)NR));
    for (size_t c = 0; c < NR; c++) {
        ptrdiff_t j = j0 + (ptrdiff_t)c;
        if (j <= (ptrdiff_t)i0 || j >= (ptrdiff_t)a->n)
            continue;
        size_t below = (size_t)j - i0; /* rows i < j of the tile */
        below = below < rows ? below : rows;
        __mmask16 m = (__mmask16)((1u << below) - 1u);
        __m512 col = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, rowstep, &keep[0][c], 4);
        _mm512_mask_storeu_ps(a->k + (size_t)j * a->n + i0, m, col);
    }
    return redone;
}

/* Panels: x's feature-major, xp[f IP_MR + r]; y's likewise, yp[f NR + c]. */
static double ip_pack(int side, size_t rows, size_t d, size_t sh, size_t p, const float *src,
                      const float *c, void *dstv, float *norms, float *nmax)
{
    size_t per = side == 0 ? IP_MR : NR;
    float *dst = (float *)dstv + p * per * d;
#define PUT(r, f, v) (dst[(f)*per + (r)] = (v))
    GK_IP_PACK_BODY(PUT)
#undef PUT
}

static size_t ip_panel_bytes(int side, size_t d)
{
    return (side == 0 ? IP_MR : NR) * d * sizeof(float);
}

/* A dot product is ceil(d / B) chains of at most B FMAs each (g_B(u) relative to the sum of
 * |x_f y_f| over the chain), their sums added in order (g_{k-1}(u) over k chains): together
 * within g_{B + k - 1}(u) = (B + k - 1) u / (1 - (B + k - 1) u) of sum |x_f y_f|. */
static double ip_dot_err(size_t d)
{
    size_t chains = (d + IP_BLOCK - 1) / IP_BLOCK;
    double terms = (double)((d < IP_BLOCK ? d : IP_BLOCK) + (chains > 0 ? chains - 1 : 0));
    return terms * 0x1p-24 / (1.0 - terms * 0x1p-24);
}

static size_t ip_f32(const gk_cpu_rbf_ip_f32 *a, size_t p0, size_t p1, size_t q0, size_t q1)
{
    size_t redone = 0;
    for (size_t q = q0; q < q1; q++)
        for (size_t p = p0; p < p1; p++)
            if (!a->upper || !gk__cpu_rbf_ip_below(a, IP_MR, NR, p, q))
                redone += ip_tile(a, p, q);
    if (a->stream)
        _mm_sfence(); /* streamed stores are weakly ordered: done before the team's barrier */
    return redone;
}

/* Rounded as a scalar conversion rounds (to nearest), so values equal the portable store's. */
static void store_f32(size_t nb, const double *v, float *out)
{
    size_t j = 0, head = (64 - (uintptr_t)out % 64) % 64 / sizeof(float);
    if ((uintptr_t)out % sizeof(float) != 0)
        head = nb;
    for (; j < head && j < nb; j++)
        out[j] = (float)v[j];
    for (; j + 16 <= nb; j += 16) {
        __m256 lo = _mm512_cvtpd_ps(_mm512_loadu_pd(v + j));
        __m256 hi = _mm512_cvtpd_ps(_mm512_loadu_pd(v + j + 8));
        __m512d both = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)),
                                          _mm256_castps_pd(hi), 1);
        _mm512_stream_ps(out + j, _mm512_castpd_ps(both));
    }
    for (; j < nb; j++)
        out[j] = (float)v[j];
    _mm_sfence(); /* streamed stores are weakly ordered: done before the team's barrier */
}

const gk_cpu_rbf_isa gk__cpu_rbf_avx512 = {"avx512", rows_f32,   IP_MR,  NR,       ip_panel_bytes,
                                           ip_pack,  ip_dot_err, ip_f32, store_f32};
