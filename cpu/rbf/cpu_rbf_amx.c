/* SPDX-License-Identifier: MIT */
/* cpu_rbf_amx.c - the fused inner-product form's dot products on AMX tiles, in bfloat16 x 3. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_rbf.h"
#include "cpu_rbf_ip_avx512.h"

/* On request only (GK_RBF_ISA=amx; cpu_rbf_isa.c says why it is not the default).
 * Why it might pay: on an AMX core a TDPBF16PS does 16 x 16 x 32 bfloat16 products into float in 16
 * cycles, 16 times what AVX-512 FMAs do in float; at d = 256 the float32 dot products are what
 * bounds rbf_matrix. A float v splits exactly into three bfloat16 (8 significant bits each),
 * rounded to nearest: h1 = bf(v), h2 = bf(v - h1), h3 = v - h1 - h2, with |h2| <= 2^-8 (1 + 2^-8)
 * |v| and |h3| <= 2^-16 |v|. x.y = sum_f sum_ab h_a g_b; the products with a + b <= 4 are computed
 * (h1 g1, h1 g2, h2 g1, h1 g3, h3 g1, h2 g2: six passes of tiles), the other three are at most
 * 2.01 u |x_f y_f| (u = 2^-24). Each product of two bfloat16 is exact in float, and every piece
 * and product is normal or zero (pack refuses nonzero |v| < 2^-32 and large rows), so AMX's
 * flushing of subnormal results loses at most 2^-126 per addition. Intel documents each
 * accumulation of TDPBF16PS as rounded to nearest even. The five correction passes run first,
 * the main pass h1 g1 last, into one accumulator per tile: one instruction adds 32 terms to it,
 * in whatever order, an error of at most g_32(u) times the magnitudes involved, so with
 * Kc = ceil(d / 32) chunks the main pass costs g_32(u) (1.02 Kc + 1.008) sum |x_f y_f| and the
 * corrections (5 Kc instructions whose terms and partial sums are below 0.0082 sum |x_f y_f|)
 * g_32(u) 0.09 Kc of it: ip_dot_err. */
#define TR 16 /* rows of a tile, and columns of float */
#define PR 32 /* rows of x and of y per panel: 2 x 2 tiles */

/* A panel of x: piece k (h1, h2, h3) at [k][PR][kp], bfloat16, row-major, kp = d rounded up to
 * 32. A panel of y in the layout TDPBF16PS wants for its second operand: piece k at
 * [k][kp / 2][PR][2] (pairs of consecutive features of one row side by side). */
static size_t kpad(size_t d)
{
    return (d + 31) / 32 * 32;
}

static size_t ip_panel_bytes(int side, size_t d)
{
    (void)side;
    return 3 * PR * kpad(d) * sizeof(uint16_t);
}

/* v rounded to the nearest bfloat16 lane by lane (ties to even; v finite), as a float; *bits the
 * bfloat16 in the low half of each lane. */
static inline __m512 bf16_rne(__m512 v, __m512i *bits)
{
    __m512i b = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    b = _mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7fff)), lsb);
    b = _mm512_and_si512(b, _mm512_set1_epi32((int)0xffff0000u));
    *bits = _mm512_srli_epi32(b, 16);
    return _mm512_castsi512_ps(b);
}

/* Features f0 .. f0 + 15 of one centered row (v) as three bfloat16 vectors, 16 bits a lane. */
static inline void split3(__m512 v, __m256i piece[3])
{
    __m512i b1, b2, b3;
    __m512 r1 = _mm512_sub_ps(v, bf16_rne(v, &b1));
    __m512 r2 = _mm512_sub_ps(r1, bf16_rne(r1, &b2));
    bf16_rne(r2, &b3); /* exact: r2 has at most 8 significant bits */
    piece[0] = _mm512_cvtepi32_epi16(b1);
    piece[1] = _mm512_cvtepi32_epi16(b2);
    piece[2] = _mm512_cvtepi32_epi16(b3);
}

/* As GK_IP_PACK_BODY (cpu_rbf_ip_pack.h), vector by vector: row r's features in chunks of 16,
 * the padding features d .. kp - 1 zero. */
static double ip_pack(int side, size_t rows, size_t d, size_t sh, size_t p, const float *src,
                      const float *c, void *dstv, float *norms, float *nmax)
{
    const size_t kp = kpad(d), piece = PR * kp;
    uint16_t *dst = (uint16_t *)dstv + p * 3 * piece;
    double total = 0.0;
    float top = 0.0f;
    const __m512 small = _mm512_set1_ps(0x1p-32f);
    for (size_t r = 0; r < PR; r++) {
        size_t i = p * PR + r - sh; /* wraps to a huge value for the rows before row 0 */
        int valid = p * PR + r >= sh && i < rows;
        const float *row = valid ? src + i * d : c;
        __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
        __mmask16 tiny = 0;
        for (size_t f0 = 0; f0 < kp; f0 += 16) {
            __mmask16 m = f0 >= d ? 0 : d - f0 >= 16 ? 0xffff : (__mmask16)((1u << (d - f0)) - 1u);
            __m512 v =
                _mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + f0), _mm512_maskz_loadu_ps(m, c + f0));
            __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
            __m512d hi =
                _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
            s0 = _mm512_fmadd_pd(lo, lo, s0);
            s1 = _mm512_fmadd_pd(hi, hi, s1);
            tiny |= _mm512_cmp_ps_mask(_mm512_abs_ps(v), small, _CMP_LT_OQ) &
                    _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NEQ_UQ);
            __m256i h[3];
            split3(v, h);
            for (size_t k = 0; k < 3; k++) {
                if (side == 0) {
                    _mm256_storeu_si256((__m256i *)(dst + k * piece + r * kp + f0), h[k]);
                } else {
                    /* pairs of features (f, f + 1) of this row side by side, 32 rows apart */
                    uint32_t w[8];
                    _mm256_storeu_si256((__m256i *)w, h[k]);
                    uint32_t *o = (uint32_t *)(dst + k * piece) + f0 / 2 * PR + r;
                    for (size_t l = 0; l < 8; l++)
                        o[l * PR] = w[l];
                }
            }
        }
        double sn = valid ? _mm512_reduce_add_pd(_mm512_add_pd(s0, s1)) : 0.0;
        /* |x.y| <= sqrt(nx ny) <= 2^60 keeps every partial sum finite */
        if (!(sn <= 0x1p60) || tiny)
            return -1.0;
        float sf = (float)sn;
        norms[p * PR + r] = sf;
        top = sf > top ? sf : top;
        total += sn;
    }
    *nmax = top;
    return total;
}

static double ip_dot_err(size_t d)
{
    const double u = 0x1p-24, g32 = 32.0 * u / (1.0 - 32.0 * u);
    double kc = (double)(kpad(d) / 32);
    /* 2^-126 for each of the 6 kp additions, relative to sum |x_f y_f| >= 2^-64 where it is not
     * 0 (and where it is, every product is 0) */
    double flush = 6.0 * (double)kpad(d) * 0x1p-62;
    return g32 * (1.02 * kc + 1.008) + g32 * 0.09 * kc + 2.01 * u + flush;
}

/* The tile configuration: tiles 0-3 the four 16 x 16 float accumulators of a 32 x 32 block,
 * 4-5 two tiles of x (16 rows x 32 bfloat16), 6-7 two of y (16 pairs x 16 columns). */
typedef struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

static void configure(void)
{
    tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = TR;
    }
    _tile_loadconfig(&cfg);
}

/* acc += pieces ka of x times pieces kb of y over every chunk of 32 features. */
static inline void pass(const uint16_t *xp, const uint16_t *yp, size_t kp, size_t ka, size_t kb)
{
    const size_t piece = PR * kp, xstride = kp * sizeof(uint16_t), ystride = PR * 2 * 2;
    const uint16_t *xa = xp + ka * piece, *yb = yp + kb * piece;
    for (size_t c = 0; c < kp / 32; c++) {
        _tile_loadd(4, xa + c * 32, xstride);
        _tile_loadd(5, xa + TR * kp + c * 32, xstride);
        _tile_loadd(6, yb + c * 16 * PR * 2, ystride);
        _tile_loadd(7, yb + c * 16 * PR * 2 + TR * 2, ystride);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
}

static void ip_tile(const gk_cpu_rbf_ip_f32 *a, size_t p, size_t q, float g[PR][PR])
{
    size_t kp = kpad(a->d);
    const uint16_t *xp = (const uint16_t *)((const char *)a->xp + p * a->xbytes);
    const uint16_t *yp = (const uint16_t *)((const char *)a->yp + q * a->ybytes);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    /* corrections first, the main pass last (ip_dot_err); each pass shares a piece with the one
     * before, which then is still in L1 */
    pass(xp, yp, kp, 0, 1);
    pass(xp, yp, kp, 0, 2);
    pass(xp, yp, kp, 2, 0);
    pass(xp, yp, kp, 1, 0);
    pass(xp, yp, kp, 1, 1);
    pass(xp, yp, kp, 0, 0);
    _tile_stored(0, &g[0][0], PR * sizeof(float));
    _tile_stored(1, &g[0][TR], PR * sizeof(float));
    _tile_stored(2, &g[TR][0], PR * sizeof(float));
    _tile_stored(3, &g[TR][TR], PR * sizeof(float));
    size_t i0 = p * PR, rows = a->m - i0 < PR ? a->m - i0 : PR;
    ptrdiff_t j0 = (ptrdiff_t)(q * PR) - (ptrdiff_t)a->sh;
    __mmask16 valid[2] = {cols_mask(j0, a->n), cols_mask(j0 + 16, a->n)};
    const float *nyq = a->ny + q * PR;
    __m512 ny[2] = {_mm512_load_ps(nyq), _mm512_load_ps(nyq + 16)};
    double nymax = (double)a->nymax[q];
    for (size_t r = 0; r < rows; r++) {
        __m512 gr[2] = {_mm512_load_ps(g[r]), _mm512_load_ps(g[r] + 16)};
        ip_row(a, i0 + r, j0, valid, ny, nymax, gr, NULL);
    }
}

static void ip_f32(const gk_cpu_rbf_ip_f32 *a, size_t p0, size_t p1, size_t q0, size_t q1)
{
    float g[PR][PR] __attribute__((aligned(64)));
    configure();
    /* x's panel outside: its pieces stay in L2 while y's pass (measured 8% faster on the VM
     * than the other order; the passes are bound by L2, about 29 cycles per TDPBF16PS where data
     * in L1 gives 17) */
    for (size_t p = p0; p < p1; p++)
        for (size_t q = q0; q < q1; q++)
            if (!a->upper || !gk__cpu_rbf_ip_below(a, PR, PR, p, q))
                ip_tile(a, p, q, g);
    _tile_release();
    if (a->stream)
        _mm_sfence();
}

const gk_cpu_rbf_isa gk__cpu_rbf_amx = {"amx",   NULL,       PR,     PR, ip_panel_bytes,
                                        ip_pack, ip_dot_err, ip_f32, 0};
