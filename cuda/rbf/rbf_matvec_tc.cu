/* SPDX-License-Identifier: MIT */
/* rbf_matvec_tc.cu - float32 rbf_matvec for 4 < d <= 64: the inner-product form of
 * cuda_rbf_matvec_dot.cuh with the inner products on TF32 tensor cores (3xTF32), tile by tile
 * under its rounding bound. */
#include "rbf_matvec_tc.h"

#include "rbf_matvec_dot.cuh"

/* ------------------------------------------------------------------------------------------
 * The form. On the centered rows x~, y~ and exponent terms a_i, b_j of
 * cuda_rbf_matvec_center.cu (k = gamma log2(e)), a pair's exponent (base 2) is
 *     t = fma(2k, G, a_i + b_j),   G ~= x~_i . y~_j,
 * as in cuda_rbf_matvec_dot.cuh, but G comes from mma.sync m16n8k8 TF32 products of split
 * operands: every centered value v is hi = tf32(v) plus lo = tf32(v - hi) (round to nearest;
 * low 13 bits zero, so the tensor core's own conversion leaves them as they are and a product
 * of two is exact in float32), and per step of 8 features
 *     P = hi_x.hi_y + (hi_x.lo_y + lo_x.hi_y)    (lo_x.lo_y dropped)
 * is one block of three MMAs from zero, cross terms first, which G then adds in float (FADD).
 *
 * Rounding bound (first order in u = 2^-24; N = ||x~||^2 + ||y~||^2 as computed; S_s the sum
 * of |x~_l y~_l| over step s, sum over the steps <= N / 2). The tensor cores' accumulation is
 * taken to err by 2u of each addition's result, a block FMA of b products costing b + 2 such
 * additions, so a sum of L leaves errs by at most 2u (1.5 L + 2) times their magnitude (the
 * model of cuda/cuda_rbf_tc.cu, after Fasi, Higham, Mikaitis and Pranesh 2021):
 *   - splitting: v = hi + lo + r, |r| <= 2^-22 |v|; the dropped terms are at most
 *     3.001 * 2^-22 |x~_l y~_l| per feature: 6.002 u N in G;
 *   - one step: the cross terms (16 leaves below 2^-10.99 S_s) 0.051 u S_s, then hi.hi with
 *     them as a ninth leaf 31 * 1.002 u S_s: 31.12 u S_s;
 *   - G's float additions over ks = ceil(d / 8) steps: (ks - 1) * 1.003 u sum S_s;
 *     so accumulation in all 0.5003 (31.12 + 1.003 (ks - 1)) u N <= (15.1 + 0.51 ks) u N;
 *   - underflow (subnormal products or lo parts flushed): 2 u N, and an absolute
 *     (8 d + 32) 2^-124 that the margin of GK_MATVEC_DOT_MAX_ERROR below the contract absorbs;
 * so |G^ - G| <= (23.2 + 0.51 ks) u N. With the other terms of the inner-product form's bound
 * (centering, k, the norms summed in double, a_i + b_j, the final FMA: 11 u k N in t), t errs
 * by at most (11 + 2 (23.2 + 0.51 ks)) u k N, a relative error e = that times u gamma N in the
 * kernel value (1.001 times that for the second-order terms; 66 u gamma N at d = 64).
 *
 * Which tiles, which pairs: a tile takes the form where e at its row and column groups'
 * largest N is within GK_MATVEC_TC_GATE times GK_MATVEC_DOT_MAX_ERROR (cuda_matvec_tc_takes),
 * so e <= 3.2e-5 for every pair and exp(e) - 1 <= 1.0001 e. A pair's value then errs by at most
 * K e 1.0001; the epilogue keeps it where K^ e_ij (e_ij from the pair's own N, 1.0001 more for
 * K^ against K) is within GK_MATVEC_DOT_MAX_ERROR, as the FFMA form's K <= 1 bound is at its
 * own coefficient (d + 11). A pair that fails, or whose t reaches GK_MATVEC_DOT_REDO (identical
 * rows among them: their e is below the budget, so t^ >= GK_MATVEC_DOT_REDO), is computed
 * again from differences of the raw rows, so identical rows give exactly 1. t <= 0 up to the
 * error, so nothing overflows. Non-finite data fails the gate (its group norm is inf).
 *
 * ---------------------------------------------------------------------------------------- */

/* Tiles: 128 rows by 128 columns, eight warps of 32 rows by 64 columns (two 16-row by eight
 * 8-column MMA tiles each). */
#define GK_TC_BM 128
#define GK_TC_BN 128
static_assert(GK_TC_BM == GK_MATVEC_GROUP && GK_TC_BN == GK_MATVEC_GROUP, "a tile a group");
static_assert(GK_CUDA_THREADS == 256, "eight warps: four row strips by two column halves");

double gk__cuda_matvec_tc_coef(size_t d)
{
    const double ks = (double)((d + 7) / 8);
    return 1.001 * (11.0 + 2.0 * (23.2 + 0.51 * ks)) * 0x1p-24;
}

/* Split operands in the order the MMAs read them, so that each lane's fragment is one 16-byte
 * shared-memory load: x per 16-row tile and step, [hi | lo] of 32 lanes' (a0, a1, a2, a3);
 * y per 8-column tile and step, 32 lanes' (b0 hi, b1 hi, b0 lo, b1 lo); then per 128-column
 * tile [b | w]. Rows and columns past m and n, and features past d, are zero. */
static size_t tc_tiles(size_t rows)
{
    return (rows + GK_TC_BM - 1) / GK_TC_BM;
}
static size_t tc_steps(size_t d)
{
    return (d + 7) / 8;
}
/* float4s of one 128-row (or 128-column) tile's operands: 8 x ks x 64. */
static size_t tc_tile_vecs(size_t d)
{
    return (size_t)8 * tc_steps(d) * 64;
}

size_t gk__cuda_matvec_tc_floats(size_t m, size_t n, size_t d)
{
    return 4 * tc_tile_vecs(d) * (tc_tiles(m) + tc_tiles(n)) + 2 * GK_TC_BN * tc_tiles(n);
}

__device__ __forceinline__ float cuda_tf32(float v)
{
    unsigned int r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return __uint_as_float(r);
}

__device__ __forceinline__ float tc_at(const float *__restrict__ a, size_t rows, size_t d, size_t r,
                                       size_t l)
{
    return r < rows && l < d ? a[r * d + l] : 0.0f;
}

__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_matvec_tc_split(size_t m, size_t n, size_t d, const float *__restrict__ xc,
                         const float *__restrict__ yc, const float *__restrict__ b,
                         const float *__restrict__ w, float4 *__restrict__ xf,
                         float4 *__restrict__ yf, float *__restrict__ bw)
{
    const size_t ks = (d + 7) / 8;
    const size_t xitems = (m + GK_TC_BM - 1) / GK_TC_BM * 8 * ks * 32;
    const size_t ntiles = (n + GK_TC_BN - 1) / GK_TC_BN;
    const size_t yitems = ntiles * 16 * ks * 32, bitems = ntiles * GK_TC_BN;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < xitems + yitems + bitems;
         i += (size_t)gridDim.x * blockDim.x) {
        if (i < xitems + yitems) {
            const bool isx = i < xitems;
            const size_t k = isx ? i : i - xitems;
            const int lane = (int)(k % 32), g = lane / 4, t = lane % 4;
            const size_t step = k / 32 % ks, tile = k / 32 / ks, f = step * 8 + t;
            float v[4], hi[4], lo[4];
            if (isx) {
                const size_t r = tile * 16 + g;
                v[0] = tc_at(xc, m, d, r, f);
                v[1] = tc_at(xc, m, d, r + 8, f);
                v[2] = tc_at(xc, m, d, r, f + 4);
                v[3] = tc_at(xc, m, d, r + 8, f + 4);
            } else {
                const size_t col = tile * 8 + g;
                v[0] = tc_at(yc, n, d, col, f);
                v[1] = tc_at(yc, n, d, col, f + 4);
                v[2] = v[3] = 0.0f;
            }
#pragma unroll
            for (int q = 0; q < 4; q++) {
                hi[q] = cuda_tf32(v[q]);
                lo[q] = cuda_tf32(__fsub_rn(v[q], hi[q]));
            }
            if (isx) {
                xf[(tile * ks + step) * 64 + lane] = make_float4(hi[0], hi[1], hi[2], hi[3]);
                xf[(tile * ks + step) * 64 + 32 + lane] = make_float4(lo[0], lo[1], lo[2], lo[3]);
            } else {
                yf[(tile * ks + step) * 32 + lane] = make_float4(hi[0], hi[1], lo[0], lo[1]);
            }
        } else {
            const size_t j = i - xitems - yitems, tile = j / GK_TC_BN, col = j % GK_TC_BN;
            bw[tile * 2 * GK_TC_BN + col] = j < n ? b[j] : 0.0f;
            bw[tile * 2 * GK_TC_BN + GK_TC_BN + col] = j < n ? w[j] : 0.0f;
        }
    }
}

__device__ __forceinline__ void tc_copy16(void *dst, const void *src)
{
    unsigned int a = (unsigned int)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a),
                 "l"(__cvta_generic_to_global(src))
                 : "memory");
}

/* d += a.b on one 16 x 8 x 8 TF32 tile (PTX fragment layouts: a0..a3 rows g, g + 8 at
 * features t, t + 4; b0, b1 column g at features t, t + 4; d0..d3 rows g, g + 8 at columns
 * 2t, 2t + 1; g = lane / 4, t = lane % 4). */
__device__ __forceinline__ void tc_mma(float (&dd)[4], const float4 &a, float b0, float b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(dd[0]), "+f"(dd[1]), "+f"(dd[2]), "+f"(dd[3])
                 : "r"(__float_as_uint(a.x)), "r"(__float_as_uint(a.y)), "r"(__float_as_uint(a.z)),
                   "r"(__float_as_uint(a.w)), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}

/* Block b: row tile rt = b / splits against the passing column tiles of [jt0, jt1); the
 * block's x operands stay in shared memory, the column tiles stream through two buffers
 * (cp.async, the next one's copies in flight while one is computed). c = -gamma log2(e),
 * k2 = -2c. */
__global__ void __launch_bounds__(GK_CUDA_THREADS, 1)
    cuda_rbf_matvec_tc(size_t m, size_t n, size_t d, float c, float k2, float ecoef, float pcoef,
                       const float4 *__restrict__ xf, const float4 *__restrict__ yf,
                       const float *__restrict__ bw, cuda_matvec_centered ctr,
                       const float *__restrict__ x, const float *__restrict__ y,
                       const float *__restrict__ w, unsigned int splits, size_t tps,
                       double *__restrict__ partial)
{
    extern __shared__ float4 tc_smem[];
    const int ks = (int)((d + 7) / 8);
    const size_t tile4 = (size_t)8 * ks * 64;
    float4 *xs = tc_smem, *ys = xs + tile4;
    float *bws = (float *)(ys + 2 * tile4);
    double *red = (double *)(bws + 4 * GK_TC_BN);

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wr = warp % 4, wc = warp / 4, g = lane / 4, t = lane % 4;
    const size_t rt = blockIdx.x / splits;
    const unsigned int sp = blockIdx.x % splits;
    const size_t ntiles = (n + GK_TC_BN - 1) / GK_TC_BN;
    const size_t jt0 = (size_t)sp * tps, jt1 = jt0 + tps < ntiles ? jt0 + tps : ntiles;
    const size_t row0 = rt * GK_TC_BM;
    const float gxr = ctr.gx[rt];

    /* This thread's rows: strip wr, MMA tile mi, half h (row g or g + 8). */
    float av[2][2];
    double s[2][2];
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const size_t row = row0 + wr * 32 + mi * 16 + h * 8 + g;
            av[mi][h] = row < m ? ctr.a[row] : 0.0f;
            s[mi][h] = 0.0;
        }

    size_t jt = jt0;
    while (jt < jt1 && !cuda_matvec_tc_takes(ecoef, gxr + ctr.gy[jt]))
        jt++;
    if (jt < jt1) {
        const float4 *xsrc = xf + rt * tile4;
        for (size_t i = tid; i < tile4; i += GK_CUDA_THREADS)
            tc_copy16(&xs[i], &xsrc[i]);
        auto issue = [&](int buf, size_t tile) {
            const float4 *src = yf + tile * tile4;
            for (size_t i = tid; i < tile4; i += GK_CUDA_THREADS)
                tc_copy16(&ys[buf * tile4 + i], &src[i]);
            if (tid < GK_TC_BN / 2)
                tc_copy16(&bws[buf * 2 * GK_TC_BN + 4 * tid], &bw[tile * 2 * GK_TC_BN + 4 * tid]);
        };
        issue(0, jt);
        cuda_cp_commit();
        for (int buf = 0; jt < jt1; buf ^= 1) {
            size_t nj = jt + 1;
            while (nj < jt1 && !cuda_matvec_tc_takes(ecoef, gxr + ctr.gy[nj]))
                nj++;
            /* This tile has landed, and every thread is done with the buffer the next
             * copies overwrite. */
            cuda_cp_wait_all();
            __syncthreads();
            if (nj < jt1) {
                issue(buf ^ 1, nj);
                cuda_cp_commit();
            }

            float acc[2][8][4];
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
#pragma unroll
                for (int ni = 0; ni < 8; ni++)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        acc[mi][ni][q] = 0.0f;
            const float4 *xw = xs + (size_t)(wr * 2) * ks * 64 + lane;
            const float4 *yw = ys + buf * tile4 + (size_t)(wc * 8) * ks * 32 + lane;
            for (int st = 0; st < ks; st++) {
                float4 ah[2], al[2], bf[8];
#pragma unroll
                for (int mi = 0; mi < 2; mi++) {
                    ah[mi] = xw[(mi * ks + st) * 64];
                    al[mi] = xw[(mi * ks + st) * 64 + 32];
                }
#pragma unroll
                for (int ni = 0; ni < 8; ni++)
                    bf[ni] = yw[(ni * ks + st) * 32];
#pragma unroll
                for (int mi = 0; mi < 2; mi++)
#pragma unroll
                    for (int ni = 0; ni < 8; ni++) {
                        float p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                        tc_mma(p, ah[mi], bf[ni].z, bf[ni].w);
                        tc_mma(p, al[mi], bf[ni].x, bf[ni].y);
                        tc_mma(p, ah[mi], bf[ni].x, bf[ni].y);
#pragma unroll
                        for (int q = 0; q < 4; q++)
                            acc[mi][ni][q] = __fadd_rn(acc[mi][ni][q], p[q]);
                    }
            }

            /* The row sums: this lane's 16 columns of each of its 4 rows. */
            const float *bs = bws + buf * 2 * GK_TC_BN, *wsh = bs + GK_TC_BN;
            const int cl = wc * 64 + 2 * t;
            const size_t col0 = jt * GK_TC_BN;
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    /* worst: the smallest K (a_i + b_j), whose product with pcoef is the
                     * largest error a pair's value may carry (the pair test above) */
                    float p = 0.0f, tmax = -INFINITY, worst = 0.0f;
#pragma unroll
                    for (int ni = 0; ni < 8; ni++)
#pragma unroll
                        for (int q = 0; q < 2; q++) {
                            const int cc = cl + ni * 8 + q;
                            const float ab = av[mi][h] + bs[cc];
                            const float tt = fmaf(k2, acc[mi][ni][2 * h + q], ab);
                            const float kv = cuda_ex2(tt);
                            tmax = fmaxf(tmax, tt);
                            worst = fminf(worst, kv * ab);
                            p = fmaf(kv, wsh[cc], p);
                        }
                    const size_t row = row0 + wr * 32 + mi * 16 + h * 8 + g;
                    if ((tmax >= GK_MATVEC_DOT_REDO || worst * pcoef > GK_MATVEC_DOT_MAX_ERROR) &&
                        row < m) {
                        /* Near pairs (rare): those that reach the threshold of identical rows
                         * or fail their own bound, from differences of the raw rows. */
                        p = 0.0f;
#pragma unroll
                        for (int ni = 0; ni < 8; ni++)
#pragma unroll
                            for (int q = 0; q < 2; q++) {
                                const int cc = cl + ni * 8 + q;
                                const size_t col = col0 + cc;
                                const float ab = av[mi][h] + bs[cc];
                                const float tt = fmaf(k2, acc[mi][ni][2 * h + q], ab);
                                const float kv = cuda_ex2(tt);
                                const bool exact = tt >= GK_MATVEC_DOT_REDO ||
                                                   kv * ab * pcoef > GK_MATVEC_DOT_MAX_ERROR;
                                const float v =
                                    exact && col < n
                                        ? cuda_rbf_value<false>(
                                              cuda_rbf_exact_distance(x + row * d, y + col * d, d),
                                              c)
                                        : kv;
                                p = fmaf(v, wsh[cc], p);
                            }
                    }
                    s[mi][h] += (double)p;
                }
            jt = nj;
        }
    }

    /* Sums over the four lanes of a row (fixed butterfly), then the two column halves. */
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            double v = s[mi][h];
            v += __shfl_xor_sync(0xffffffffu, v, 1);
            v += __shfl_xor_sync(0xffffffffu, v, 2);
            s[mi][h] = v;
            if (wc == 1 && t == 0)
                red[wr * 32 + mi * 16 + h * 8 + g] = v;
        }
    __syncthreads();
    if (wc == 0 && t == 0) {
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = wr * 32 + mi * 16 + h * 8 + g;
                if (row0 + r < m)
                    partial[(size_t)sp * m + row0 + r] = s[mi][h] + red[r];
            }
    }
}

gk_status gk__cuda_matvec_tc(gk_cuda_state *s, size_t m, size_t n, size_t d, float c, float ecoef,
                             const float *x, const float *y, const float *w,
                             const cuda_matvec_centered &ctr, float *work, unsigned int splits,
                             size_t tps, double *partial)
{
    const size_t v = tc_tile_vecs(d);
    float4 *xf = (float4 *)work, *yf = xf + v * tc_tiles(m);
    float *bw = (float *)(yf + v * tc_tiles(n));
    const size_t items =
        (tc_tiles(m) * 8 + tc_tiles(n) * 16) * tc_steps(d) * 32 + tc_tiles(n) * GK_TC_BN;
    cuda_matvec_tc_split<<<gk__cuda_blocks(items, GK_CUDA_THREADS, (size_t)s->sm_count * 8),
                           GK_CUDA_THREADS, 0, s->stream>>>(m, n, d, ctr.x, ctr.y, ctr.b, w, xf, yf,
                                                            bw);
    gk_status r = gk__cuda_launched("cuda_matvec_tc_split");
    if (r != GK_OK)
        return r;
    const size_t smem =
        3 * v * sizeof(float4) + 4 * GK_TC_BN * sizeof(float) + GK_TC_BM * sizeof(double);
    if (cudaFuncSetAttribute(cuda_rbf_matvec_tc, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)smem) != cudaSuccess)
        return gk__cuda_launched("cuda_rbf_matvec_tc (shared memory)");
    /* A pair's relative error bound is ecoef N = pcoef (a_i + b_j), a_i + b_j = c N; rounded
     * away from zero. */
    const float pcoef = (float)((double)ecoef / (double)c * 1.0001);
    cuda_rbf_matvec_tc<<<(unsigned int)(tc_tiles(m) * splits), GK_CUDA_THREADS, smem, s->stream>>>(
        m, n, d, c, -2.0f * c, ecoef, pcoef, xf, yf, bw, ctr, x, y, w, splits, tps, partial);
    return gk__cuda_launched("cuda_rbf_matvec_tc");
}
