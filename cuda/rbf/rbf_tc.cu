/* SPDX-License-Identifier: MIT */
/* rbf_tc.cu - float32 rbf_matrix on tensor cores: split operands of centered rows, one fused
 * kernel (cuda_rbf_tc_mma.cuh) keeping each entry only under a rounding bound, the form chosen on
 * the device from a sample. */
#include "rbf_tc.cuh"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <cuda_fp16.h>

#include "plan.h"
#include "rbf_tc_bound.cuh"
#include "rbf_tc_mma.cuh"
#include "rbf_tile.cuh"

/* ------------------------------------------------------------------------------------------
 * The form. Rows are centered on c, the mean of the finite values of each feature over the
 * rows of x and y: x~ = fl(x - c), y~ = fl(y - c), with the squared norms nx, ny of x~ and y~
 * summed in double. Each centered row is scaled by sigma = 2^k, k = 14 - floor(log2 max_l
 * |v_l|) clamped to [GK_TC_SCALE_MIN, GK_TC_SCALE_MAX] = [-49, 62] (cuda_tc_split), so that
 * w = sigma v has max |w| in [2^14, 2^15) unless clamped, and each w is split into fp16 numbers
 * hi = fp16(w), lo = fp16(w - hi) (round to nearest; w - hi is exact in float32). Products of
 * two of them (11 x 11 bits) are exact in float32. Then
 *     sigma_x sigma_y G = w_x.w_y ~= hi_x.hi_y + (hi_x.lo_y + lo_x.hi_y)    (lo_x.lo_y dropped)
 * in one kernel (cuda_tc_mma) on mma.sync m16n8k16 with float32 accumulators, 128 x 64 tiles,
 * hi.hi and the cross terms in separate accumulators (so that each sum's error scales with its
 * own magnitude; hi.hi summed step by step, below), added in float at the end;
 * then D = nx + ny - 2 G and K = exp2(c D) from the registers, under the bound below. d is
 * padded with zeros to dp, a multiple of 32.
 *
 * Rounding bound (u = 2^-24, s = nx + ny). The tensor cores' accumulation is not documented
 * as rounding to nearest (Fasi, Higham, Mikaitis, Pranesh 2021 found alignment with truncation
 * inside block FMAs), so every addition is taken to err by up to 2u relative to its result,
 * and a block FMA of b >= 4 products to cost b + 2 such additions: a summation of N leaves,
 * in any order or tree, then errs by at most 2u (1.5 N + 2) times the sum of their magnitudes.
 *  - centering: |D(x~, y~) - D(x, y)| <= 4u (1 + u) s;
 *  - splitting: a part in fp16's normal range errs by 2^-11 of its value; one below it
 *    (2^-14: a subnormal, or 0 if the tensor cores flush it) by at most delta = 2^-14
 *    absolute. So w = hi + lo + r with |r| <= 2^-22 |w| + delta and |lo| <= 2^-11 |w| + delta,
 *    and the dropped terms lo_x lo_y + r_x w_y + (hi_x + lo_x) r_y are at most
 *    3.001 * 2^-22 |w_x||w_y| + 1.002 delta (|w_x| + |w_y|) + 3 delta^2 per feature. The
 *    relative part gives 6.002 u s in G (sum |x~_l||y~_l| <= s / 2) and 12.004 u s in D. For
 *    the rest: the scaled sums stay below dp 2^32, and 1 / sigma <= 2^-14 max |v| + 2^-62 (the
 *    lower clamp binds only where max |v| >= 2^64, whose squared norm is not finite: those
 *    rows are computed again whatever the products say), so 1 / (sigma_x sigma_y) <= 2^-29 s +
 *    2^-76 (1 + s) + 2^-124, and unscaled the absolute part is at most 1.002 sqrt(dp) delta
 *    (|x~| (2^-14 |y~| + 2^-62) + |y~| (2^-14 |x~| + 2^-62)) <= 1.002 sqrt(dp) (2^-28 s +
 *    2^-76 (1 + s)) in G (|a| + |b| <= 1 + s), with the delta^2 terms and the cross sums'
 *    share of it (a factor 2u (3 dp + 2) more) below 0.5 u s for dp < 2^22 (beyond, kappa u > 1
 *    rejects every entry anyway): in D at most (0.25 sqrt(dp) + 1) u s + 2^-74 sqrt(dp);
 *  - accumulation (blocked): each step of 32 features sums its hi.hi products from zero (32
 *    leaves: at most 2u (1.5 32 + 2) times their magnitude), and adds that to the running sum
 *    (dp / 32 additions, each erring by at most 2u times the total magnitude); the final sum
 *    with the cross terms is one more. In all 2u (51 + dp / 32) 1.0015 s / 2 in G, twice that in
 *    D; the cross sum's own N = 2 dp leaves: 2u (3 dp + 2) 2^-10 1.002 s in D;
 *  - underflow (subnormal products or sums flushed, in scaled units, where they are smaller
 *    still once unscaled): at most 2u s + (8 dp + 32) 2^-124 in all;
 *  - the epilogue in float: nx, ny rounded, t = nx + ny, D = fma(G, -2^(1 - k_x - k_y), t)
 *    (the factor, the product of the rows' exact factors, in [2^-123, 2^99]: a normal float,
 *    so the scales are undone inside the fma's one rounding): 4.01 u s.
 * Hence |D^ - D| <= e = kappa u s + eabs with kappa = 2.003 (51 + dp / 32) + 0.0059 dp + 24 +
 * 0.25 sqrt(dp) and
 * eabs = (8 dp + 32) 2^-124 + 2^-74 sqrt(dp), taken 1.001 times larger for the second-order
 * terms and the bound's own rounding. The entry exp(-gamma D) is then off from exp(-gamma D^)
 * by at most
 *     exp(-gamma (D^ - e)) (1 - exp(-gamma e)),
 * which the epilogue bounds, for gamma e <= 1/64, by K^ gamma e 1.02 (K^ the computed
 * exp(-gamma D^), within 3e-5 relative of the exact one), and for any gamma e by
 * exp(-gamma (D^ - e)) 1.0001 (cuda_tc_keep; the fused kernel's epilogue takes the first and
 * the second only for entries the first rejects, cuda_tc_keep_small and cuda_tc_keep_large). An
 * entry is kept where that is at most GK_RBF_TC_MAX_ERROR (the exp2 and the final rounding stay
 * below 3e-7); every other entry, every entry with D^ <= e (identical rows among them, which must
 * give exactly 1) and every entry of a row with a norm that is not finite (NaN or inf in the data)
 * is computed again from differences of the raw rows: one warp per entry, or the whole tile
 * (cuda_tc_differences, after the fused kernel) where more than 1 / GK_RBF_TC_TILE_SHARE of its
 * entries fail.
 *
 * The sample. On clustered data the bound fails for pairs within a cluster (their norms about
 * the global centre are large against their distance), and where such pairs are many every
 * tile would pay the products and then the differences. The norms alone cannot tell, so before
 * the products cuda_tc_sample tests the bound on 64 entries, with their exact distances, of
 * each of 256 tiles spread over the output; where more than a quarter of those tiles would fall
 * back, the split and the fused kernel return at once and cuda_tc_differences computes every
 * tile from differences. The count stays on the device (the call does not wait).
 * ---------------------------------------------------------------------------------------- */
/* The fused kernel's configuration: 128 x 64 tiles (two blocks per SM, so that one block's
 * epilogue overlaps the other's products), 32 features a step (GK_RBF_TC_BK, plan.h: 64 would
 * spill), 3 steps in flight. */
#define GK_RBF_TC_BN 64
#define GK_RBF_TC_STAGES 3

/* The tiles of the sample and of the difference kernel: 128 x 128, differences of the raw rows
 * on the CUDA cores as in cuda_rbf_matrix.cu. */
typedef cuda_rbf_tile<float, 8, 8, GK_RBF_BK> cuda_tc_tile;

/* Column sums: blocks of 32 features by GK_TC_SUM_LANES rows, over GK_TC_SUM_CHUNKS chunks
 * of the rows of x and y. */
#define GK_TC_SUM_LANES (GK_CUDA_THREADS / 32)

/* Per feature and chunk of rows (x's rows, then y's), the sum of the finite values and their
 * count; fixed order throughout, so the center is deterministic. */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_tc_column_sums(size_t m, size_t n, size_t d, size_t chunk, const float *__restrict__ x,
                        const float *__restrict__ y, double *__restrict__ psum,
                        unsigned int *__restrict__ pcount)
{
    __shared__ double ss[GK_TC_SUM_LANES][32];
    __shared__ unsigned int sc[GK_TC_SUM_LANES][32];
    const int lane = threadIdx.x % 32, r = threadIdx.x / 32;
    const size_t col = (size_t)blockIdx.x * 32 + lane;
    const size_t r0 = (size_t)blockIdx.y * chunk;
    const size_t r1 = r0 + chunk < m + n ? r0 + chunk : m + n;
    double sum = 0.0;
    unsigned int count = 0;
    if (col < d)
        for (size_t row = r0 + r; row < r1; row += GK_TC_SUM_LANES) {
            float v = row < m ? x[row * d + col] : y[(row - m) * d + col];
            if (isfinite(v)) {
                sum += (double)v;
                count++;
            }
        }
    ss[r][lane] = sum;
    sc[r][lane] = count;
    __syncthreads();
    if (r == 0 && col < d) {
        for (int k = 1; k < GK_TC_SUM_LANES; k++) {
            sum += ss[k][lane];
            count += sc[k][lane];
        }
        psum[blockIdx.y * d + col] = sum;
        pcount[blockIdx.y * d + col] = count;
    }
}

/* c_l = the mean of feature l's finite values (0 where there are none: any c is valid), one
 * warp per feature over the chunks' sums in a fixed order (so the center is deterministic). */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_tc_center(size_t d, size_t chunks, const double *__restrict__ psum,
                   const unsigned int *__restrict__ pcount, float *__restrict__ center)
{
    const size_t col = (size_t)blockIdx.x * (GK_CUDA_THREADS / 32) + threadIdx.x / 32;
    const int lane = (int)threadIdx.x % 32;
    if (col >= d)
        return; /* the whole warp */
    double sum = 0.0;
    unsigned long long count = 0;
    for (size_t k = lane; k < chunks; k += 32) {
        sum += psum[k * d + col];
        count += pcount[k * d + col];
    }
    for (int off = 16; off > 0; off /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
        count += __shfl_xor_sync(0xffffffffu, count, off);
    }
    if (lane == 0)
        center[col] = count > 0 ? (float)(sum / (double)count) : 0.0f;
}

/* The row scales 2^k: k = 14 - the exponent of the row's largest |value|, so that
 * it scales into [2^14, 2^15), within these limits (the bound in the comment above). */
#define GK_TC_SCALE_MIN (-49)
#define GK_TC_SCALE_MAX 62

/* One warp per row of x, then of y: the centered row v as the fused kernel's operands, w =
 * v 2^k split into fp16 hi and lo, in blocks of 32 hi then 32 lo, dp wide; the factor that
 * undoes 2^k in sx or sy; and its squared norm (not finite where the row has a NaN or an
 * infinity, or its norm overflows float32). Nothing where the sample chose differences. */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_tc_split(size_t m, size_t n, size_t d, size_t dp, const float *__restrict__ x,
                  const float *__restrict__ y, const float *__restrict__ center,
                  float *__restrict__ xs, float *__restrict__ ys, float *__restrict__ nx,
                  float *__restrict__ ny, float *__restrict__ sx, float *__restrict__ sy,
                  cuda_tc_gate gate)
{
    const cuda_split_row row = cuda_split_row_of(m, n, d, x, y, gate);
    if (!row.ok)
        return; /* the whole warp */
    const int lane = threadIdx.x % 32;
    __half *h = (__half *)((row.is_x ? xs : ys) + row.r * dp);
    /* the largest |v| by its bits (NaN above inf, both giving the smallest k) */
    unsigned int big = 0;
    for (size_t l = lane; l < d; l += 32)
        big = max(big, __float_as_uint(fabsf(row.src[l] - center[l])));
    big = __reduce_max_sync(0xffffffffu, big);
    const int k = min(max(141 - (int)(big >> 23), GK_TC_SCALE_MIN), GK_TC_SCALE_MAX);
    const float scale = __int_as_float((127 + k) << 23);
    /* what undoes it: 2^-k for y, -2^(1 - k) for x (the epilogue's -2 folded in) */
    const float undo = __int_as_float((127 - k + (row.is_x ? 1 : 0)) << 23);
    if (lane == 0)
        (row.is_x ? sx : sy)[row.r] = row.is_x ? -undo : undo;
    double acc = 0.0;
    for (size_t l = lane; l < dp; l += 32) {
        const float v = l < d ? row.src[l] - center[l] : 0.0f, w = v * scale;
        const __half hi = __float2half_rn(w);
        h[l / 32 * 64 + l % 32] = hi;
        h[l / 32 * 64 + 32 + l % 32] = __float2half_rn(w - __half2float(hi));
        acc = fma((double)v, (double)v, acc);
    }
    for (int off = 16; off > 0; off /= 2)
        acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0)
        (row.is_x ? nx : ny)[row.r] = (float)acc;
}

/* The form's choice: GK_TC_SAMPLE_TILES tiles of 128 x 128 spread over the output (rows
 * evenly, columns hashed), GK_TC_SAMPLE_ENTRIES entries of each on distinct rows and columns,
 * each tested against the bound with its exact distance and norms about the center in place of
 * the computed ones; a sampled tile with more than 1 / GK_RBF_TC_TILE_SHARE of its entries
 * failing counts as one that would fall back to differences. */
#define GK_TC_SAMPLE_TILES 256
#define GK_TC_SAMPLE_ENTRIES 64
/* The tensor-core form is taken where at most this share of the sampled tiles would fall back:
 * each such tile costs the products on top of the differences. */
#define GK_RBF_TC_MAX_FALLBACK 0.25

__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_tc_sample(cuda_tc_params p, size_t m, const float *__restrict__ center,
                   unsigned int mtiles, unsigned int ntiles, unsigned int samples,
                   unsigned int *__restrict__ fallbacks)
{
    __shared__ unsigned int fails;
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    if (threadIdx.x == 0)
        fails = 0;
    __syncthreads();
    const unsigned int sidx = blockIdx.x;
    const size_t row0 = (size_t)((unsigned long long)sidx * mtiles / samples) * cuda_tc_tile::BM;
    const size_t col0 = (size_t)((sidx * 2654435761u) % ntiles) * cuda_tc_tile::BN;
    unsigned int mine = 0;
    enum { PER = GK_TC_SAMPLE_ENTRIES / (GK_CUDA_THREADS / 32) };
    for (int q = 0; q < PER; q++) {
        const int e = warp * PER + q;
        const size_t row = row0 + (size_t)(e * 53 % cuda_tc_tile::BM);
        const size_t col = col0 + (size_t)((e * 97 + 11) % cuda_tc_tile::BN);
        if (row >= m || col >= p.n)
            continue; /* the whole warp */
        const float *a = p.x + row * p.d, *b = p.y + col * p.d;
        float dist = 0.0f, na = 0.0f, nb = 0.0f;
        for (size_t l = lane; l < p.d; l += 32) {
            const float u = a[l], v = b[l], cl = center[l];
            const float t = u - v, tu = u - cl, tv = v - cl;
            dist = fmaf(t, t, dist);
            na = fmaf(tu, tu, na);
            nb = fmaf(tv, tv, nb);
        }
        for (int off = 16; off > 0; off /= 2) {
            dist += __shfl_xor_sync(0xffffffffu, dist, off);
            na += __shfl_xor_sync(0xffffffffu, na, off);
            nb += __shfl_xor_sync(0xffffffffu, nb, off);
        }
        if (!cuda_tc_keep(p, dist, na + nb, cuda_ex2(dist * p.c)))
            mine++;
    }
    if (lane == 0 && mine != 0)
        atomicAdd(&fails, mine);
    __syncthreads();
    if (threadIdx.x == 0 && fails * GK_RBF_TC_TILE_SHARE > GK_TC_SAMPLE_ENTRIES)
        atomicAdd(fallbacks, 1u);
}

/* A tile from differences of the raw rows, as a single-tile form of cuda_rbf_steps. */
struct cuda_tc_diff_form {
    typedef cuda_tc_tile Tile;
    Tile::smem &sm;
    float (&acc)[8][8];
    size_t row0, row_end, col0, n, d;
    const float *__restrict__ x;
    const float *__restrict__ y;

    __device__ bool has(size_t t) const
    {
        return t == 0;
    }
    __device__ size_t next(size_t) const
    {
        return 1;
    }
    __device__ void issue(int b, size_t, size_t l0, bool)
    {
        Tile::issue<Tile::XPER>(sm.xs[b], x, row0, row_end, d, l0);
        Tile::issue<Tile::YPER>(sm.ys[b], y, col0, n, d, l0);
    }
    __device__ void compute(int b, int lmax, bool init)
    {
        Tile::accumulate(acc, sm.xs[b], sm.ys[b], lmax, Tile::tx(), Tile::ty(), init);
    }
    __device__ void finish(int, size_t)
    {
    }
};

/* Rows [row0, min(row0 + 128, m)) by columns [col0, col_end) of K from differences, stored
 * (streaming) into k; float4 stores where vec4 (n % 4 == 0, k 16-byte aligned). */
static __device__ __forceinline__ void
cuda_tc_tile_differences(cuda_tc_tile::smem &sm, size_t row0, size_t m, size_t col0, size_t col_end,
                         const cuda_tc_params &p, float *__restrict__ k, bool vec4)
{
    typedef cuda_tc_tile Tile;
    const int W = Tile::W;
    float acc[8][8];
    cuda_tc_diff_form f{sm, acc, row0, m, col0, col_end, p.d, p.x, p.y};
    cuda_rbf_steps<GK_RBF_BK>(f, 0, p.d);
    const int tx = Tile::tx(), ty = Tile::ty();
#pragma unroll
    for (int i = 0; i < 8; i++) {
        size_t row = row0 + Tile::lane_index(i, ty);
        if (row >= m)
            continue;
#pragma unroll
        for (int g = 0; g < 8 / W; g++) {
            size_t col = col0 + Tile::lane_index(g * W, tx);
            float v[W];
#pragma unroll
            for (int e = 0; e < W; e++)
                v[e] = cuda_rbf_value<false>(acc[i][g * W + e], p.c);
            float *dst = k + row * p.n + col;
            if (vec4 && col + W <= col_end) {
                __stcs((float4 *)dst, Tile::V::pack(v));
            } else {
#pragma unroll
                for (int e = 0; e < W; e++)
                    if (col + e < col_end)
                        __stcs(dst + e, v[e]);
            }
        }
    }
}

/* After the fused kernel: the tiles it listed (redo_tiles, redo_count: those with too many
 * entries failing the bound, BN columns wide, ntn to a row), or every 128 x 128 tile (ntn128
 * to a row) where the sample rejected the tensor cores, from differences; persistent blocks,
 * two per SM. */
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_tc_differences(cuda_tc_params p, size_t m, unsigned int ntn128, unsigned int ntn,
                        unsigned int bn, const unsigned int *__restrict__ redo_tiles,
                        const unsigned int *redo_count, cuda_tc_gate gate, float *__restrict__ k,
                        bool vec4)
{
    __shared__ cuda_tc_tile::smem sm;
    const bool all = !gate.tensor_cores();
    const size_t count =
        all ? (size_t)ntn128 * ((m + cuda_tc_tile::BM - 1) / cuda_tc_tile::BM) : *redo_count;
    for (size_t i = blockIdx.x; i < count; i += gridDim.x) {
        const unsigned int t = all ? (unsigned int)i : redo_tiles[i];
        const unsigned int per = all ? ntn128 : ntn, w = all ? cuda_tc_tile::BN : bn;
        const size_t row0 = (size_t)(t / per) * cuda_tc_tile::BM, col0 = (size_t)(t % per) * w;
        const size_t col_end = col0 + w < p.n ? col0 + w : p.n;
        cuda_tc_tile_differences(sm, row0, m, col0, col_end, p, k, vec4);
        __syncthreads(); /* every warp is done with the staging buffers */
    }
}

/* v rounded down to a float32 (v > 0). */
static float cuda_tc_down(double v)
{
    float f = (float)v;
    return (double)f > v ? nextafterf(f, 0.0f) : f;
}

/* The fused kernel over the tiles of the output, 128 x BN. */
template <int BN, int STAGES, int BK>
static gk_status cuda_tc_fused(gk_cuda_state *s, size_t m, const cuda_tc_params &p, size_t dp,
                               const float *xs, const float *ys, float *k, unsigned int *flags,
                               cuda_tc_gate gate)
{
    typedef cuda_tc_mma_shape<BN, STAGES, BK> S;
    const size_t ntn = (p.n + BN - 1) / BN, tiles = (m + S::BM - 1) / S::BM * ntn;
    const size_t most = (size_t)s->sm_count * S::BLOCKS;
    const unsigned int grid = (unsigned int)(tiles < most ? tiles : most);
    const bool vec2 = p.n % 2 == 0 && (uintptr_t)k % 8 == 0;
    gk_status r = gk__cuda_check(cudaFuncSetAttribute(cuda_tc_mma<BN, STAGES, BK>,
                                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                      (int)S::smem_bytes),
                                 "cudaFuncSetAttribute(cuda_tc_mma)");
    if (r != GK_OK)
        return r;
    cuda_tc_mma<BN, STAGES, BK><<<grid, GK_CUDA_THREADS, S::smem_bytes, s->stream>>>(
        p, m, dp, (unsigned int)tiles, (unsigned int)ntn, xs, ys, k, vec2, flags + 2, flags + 1,
        gate);
    return gk__cuda_launched("cuda_tc_mma");
}

/* The workspace of one call, 16-byte aligned pieces: the column sums (double) and their
 * counts, the center, the operands of x's and y's rows, their norms, and the flags: [0] the
 * sample's count, [1] the tiles the fused kernel left, listed from [2] on (at most one per
 * tile of 128 x 64). */
struct cuda_tc_layout {
    size_t chunk, chunks, dp, bytes;
    size_t o_pcount, o_center, o_xs, o_ys, o_nx, o_ny, o_sx, o_sy, o_flags;
};
static cuda_tc_layout cuda_tc_plan(size_t m, size_t n, size_t d, size_t bk)
{
    cuda_tc_layout l;
    const size_t rows = m + n;
    l.chunk = (rows + GK_TC_SUM_CHUNKS - 1) / GK_TC_SUM_CHUNKS;
    l.chunks = (rows + l.chunk - 1) / l.chunk;
    l.dp = (d + bk - 1) / bk * bk;
    size_t o = gk__cuda_round16(l.chunks * d * sizeof(double));
    l.o_pcount = o;
    o += gk__cuda_round16(l.chunks * d * sizeof(unsigned int));
    l.o_center = o;
    o += gk__cuda_round16(d * sizeof(float));
    l.o_xs = o;
    o += gk__cuda_round16(m * l.dp * sizeof(float));
    l.o_ys = o;
    o += gk__cuda_round16(n * l.dp * sizeof(float));
    l.o_nx = o;
    o += gk__cuda_round16(m * sizeof(float));
    l.o_ny = o;
    o += gk__cuda_round16(n * sizeof(float));
    l.o_sx = o;
    o += gk__cuda_round16(m * sizeof(float));
    l.o_sy = o;
    o += gk__cuda_round16(n * sizeof(float));
    l.o_flags = o;
    l.bytes = o + (2 + (m + 127) / 128 * ((n + 63) / 64)) * sizeof(unsigned int);
    return l;
}

gk_status gk__cuda_rbf_matrix_tc(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                                 bool sample, const float *x, const float *y, float *k)
{
    const float c = cuda_rbf_constant(gamma, 0.0f);
    const size_t rows = m + n;
    const cuda_tc_layout l = cuda_tc_plan(m, n, d, GK_RBF_TC_BK);
    char *w = NULL;
    gk_status r = gk__cuda_workspace(s, l.bytes, (void **)&w);
    if (r != GK_OK)
        return r;
    double *psum = (double *)w;
    unsigned int *pcount = (unsigned int *)(w + l.o_pcount);
    float *center = (float *)(w + l.o_center);
    float *xs = (float *)(w + l.o_xs), *ys = (float *)(w + l.o_ys);
    float *nx = (float *)(w + l.o_nx), *ny = (float *)(w + l.o_ny);
    float *sx = (float *)(w + l.o_sx), *sy = (float *)(w + l.o_sy);
    unsigned int *flags = (unsigned int *)(w + l.o_flags);
    cudaStream_t st = s->stream;
    const size_t warps = GK_CUDA_THREADS / 32;
    cuda_tc_column_sums<<<dim3((unsigned int)((d + 31) / 32), (unsigned int)l.chunks),
                          GK_CUDA_THREADS, 0, st>>>(m, n, d, l.chunk, x, y, psum, pcount);
    if ((r = gk__cuda_launched("cuda_tc_column_sums")) != GK_OK)
        return r;
    cuda_tc_center<<<(unsigned int)((d + warps - 1) / warps), GK_CUDA_THREADS, 0, st>>>(
        d, l.chunks, psum, pcount, center);
    if ((r = gk__cuda_launched("cuda_tc_center")) != GK_OK)
        return r;

    const double u = 0x1p-24;
    const double dp = (double)l.dp;
    const double kappa =
        2.003 * (51.0 + dp / GK_RBF_TC_BK) + 0.0059 * dp + 24.0 + 0.25 * std::sqrt(dp);
    cuda_tc_params p;
    p.n = n;
    p.d = d;
    p.c = c;
    p.gamma = (float)gamma;
    /* Rounded up, so the float32 constants are never below the bound. */
    p.ku = nextafterf((float)(kappa * u * 1.001), INFINITY);
    p.eabs = nextafterf(
        (float)((8.0 * (double)l.dp + 32.0) * 0x1p-124 + std::sqrt((double)l.dp) * 0x1p-74),
        INFINITY);
    p.esmall = cuda_tc_down(1.0 / (64.0 * (double)p.gamma));
    p.kesmall = cuda_tc_down((double)GK_RBF_TC_MAX_ERROR / (1.0202 * (double)p.gamma));
    p.x = x;
    p.y = y;
    p.nx = nx;
    p.ny = ny;
    p.sx = sx;
    p.sy = sy;

    const size_t mt = (m + cuda_tc_tile::BM - 1) / cuda_tc_tile::BM;
    const size_t nt = (n + cuda_tc_tile::BN - 1) / cuda_tc_tile::BN;
    const unsigned int samples =
        (unsigned int)(mt * nt < GK_TC_SAMPLE_TILES ? mt * nt : GK_TC_SAMPLE_TILES);
    const cuda_tc_gate gate = {sample ? flags : NULL,
                               (unsigned int)(GK_RBF_TC_MAX_FALLBACK * (double)samples)};
    r = gk__cuda_check(cudaMemsetAsync(flags, 0, 2 * sizeof *flags, st), "cudaMemsetAsync");
    if (r != GK_OK)
        return r;
    if (sample) {
        cuda_tc_sample<<<samples, GK_CUDA_THREADS, 0, st>>>(p, m, center, (unsigned int)mt,
                                                            (unsigned int)nt, samples, flags);
        if ((r = gk__cuda_launched("cuda_tc_sample")) != GK_OK)
            return r;
    }
    cuda_tc_split<<<(unsigned int)((rows + warps - 1) / warps), GK_CUDA_THREADS, 0, st>>>(
        m, n, d, l.dp, x, y, center, xs, ys, nx, ny, sx, sy, gate);
    if ((r = gk__cuda_launched("cuda_tc_split")) != GK_OK)
        return r;
    r = cuda_tc_fused<GK_RBF_TC_BN, GK_RBF_TC_STAGES, GK_RBF_TC_BK>(s, m, p, l.dp, xs, ys, k, flags,
                                                                    gate);
    if (r != GK_OK)
        return r;
    const size_t most = (size_t)s->sm_count * 2;
    cuda_tc_differences<<<(unsigned int)(mt * nt < most ? mt * nt : most), GK_CUDA_THREADS, 0,
                          st>>>(
        p, m, (unsigned int)nt, (unsigned int)((n + GK_RBF_TC_BN - 1) / GK_RBF_TC_BN), GK_RBF_TC_BN,
        flags + 2, flags + 1, gate, k, n % 4 == 0 && (uintptr_t)k % 16 == 0);
    return gk__cuda_launched("cuda_tc_differences");
}
