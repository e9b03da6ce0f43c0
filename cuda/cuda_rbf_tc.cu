/* SPDX-License-Identifier: MIT */
/* cuda_rbf_tc.cu - float32 rbf_matrix for d >= 256 as TF32 tensor-core GEMMs of split operands
 * (cuBLAS), row panel by row panel, each entry kept only under a rounding bound. */
#include "cuda_rbf_tc.cuh"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include <cuda_bf16.h>

#include "cuda_rbf_tc_bound.cuh"
#include "cuda_rbf_tc_mma.cuh"
#include "cuda_rbf_tile.cuh"

/* ------------------------------------------------------------------------------------------
 * The form. Rows are centered on c, the mean of the finite values of each feature over the
 * rows of x and y: x~ = fl(x - c), y~ = fl(y - c), with the squared norms nx, ny of x~ and y~
 * summed in double. Each centered value v is split into tf32 numbers hi = tf32(v) and
 * lo = tf32(v - hi) (round to nearest; v - hi is exact in float32), whose low 13 bits are 0,
 * so a tensor core's conversion to tf32 (whether it truncates or rounds) leaves them as they
 * are, and products of two of them (22 significant bits) are exact in float32. Then
 *     G = x~.y~ ~= hi_x.hi_y + (hi_x.lo_y + lo_x.hi_y)    (3xTF32: lo_x.lo_y dropped)
 * on cuBLAS with CUBLAS_COMPUTE_32F_FAST_TF32 and D = nx + ny - 2 G. The rows are stored as
 * [hi | lo | hi] (x) and [hi | hi | lo] (y), each part dp wide (d padded with zeros to a
 * multiple of 4, so every operand is 16-byte aligned); a panel takes two GEMMs: the cross
 * terms (parts 1 and 2, k = 2 dp, into the output), then hi_x.hi_y (part 0, k = dp) on top
 * with beta = 1, so that the large products are summed in a chain of dp, not 3 dp.
 *
 * Rounding bound (u = 2^-24, s = nx + ny). The tensor cores' accumulation is not documented
 * as rounding to nearest (Fasi, Higham, Mikaitis, Pranesh 2021 found alignment with truncation
 * inside block FMAs), so every addition is taken to err by up to 2u relative to its result,
 * and a block FMA of b >= 4 products to cost b + 2 such additions: a summation of N leaves,
 * in any order or tree, then errs by at most 2u (1.5 N + 2) times the sum of their magnitudes.
 *  - centering: |D(x~, y~) - D(x, y)| <= 4u (1 + u) s;
 *  - splitting: v = hi + lo + r with |r| <= 2^-22 |v|; the dropped terms
 *    lo_x lo_y + r_x y~ + (hi_x + lo_x) r_y are at most 3.001 * 2^-22 |x~||y~| per feature,
 *    so 6.002 u s in G (sum |x~_l||y~_l| <= s / 2) and 12.004 u s in D;
 *  - accumulation: hi.hi is N = dp + 1 leaves (the cross sum, added through beta, is one) of
 *    total magnitude <= 1.0015 s / 2: 2u (1.5 dp + 3.5) 1.0015 s in D; the cross GEMM's own
 *    N = 2 dp leaves: 2u (3 dp + 2) 2^-10 1.002 s in D;
 *  - underflow (subnormal products, sums or lo parts flushed): at most 2u s + (8 dp + 32)
 *    2^-124 in all;
 *  - the epilogue in float: nx, ny rounded, t = nx + ny, D = fma(-2, G, t): 4.01 u s.
 * Hence |D^ - D| <= e = kappa u s + eabs with kappa = 3.02 dp + 30, taken 1.001 times larger
 * for the second-order terms and the bound's own rounding. The entry exp(-gamma D) is then
 * off from exp(-gamma D^) by at most
 *     exp(-gamma (D^ - e)) (1 - exp(-gamma e)),
 * which the epilogue bounds, for gamma e <= 1/64, by K^ gamma e 1.02 (K^ the computed
 * exp(-gamma D^), within 3e-5 relative of the exact one), else by exp(-gamma (D^ - e))
 * 1.0001. An entry is kept where that is at most GK_RBF_TC_MAX_ERROR (the exp2 and the
 * final rounding stay below 3e-7); every other entry, every entry with D^ <= e (identical
 * rows among them, which must give exactly 1) and every entry of a row with a norm that is
 * not finite (NaN or inf in the data) is computed again from differences of the raw rows.
 *
 * Where it pays (H200, 2026-12-01, bench/RESULTS.md): 16384^2 x 256 in 2.84 ms at gamma = 1/d
 * and 0.5 (the difference form 5.60). With kappa ~ 3 d the bound passes for every gamma only
 * up to d ~ 120 on rows whose spread s about the center is about their distance D, as for
 * independent samples (the worst case is gamma D = 1, where the bound is kappa u s / (D e)); at d =
 * 256 on U[0, 1) rows it fails for gamma D in about [0.23, 2.9] (gamma in [1.4 / d, 17 / d]), where
 * whole tiles fall back to differences after the GEMMs (about 1.3 times the difference form's time,
 * estimated). At 32768^2 x 64 the form took 6.2 to 10.8 ms (single GEMM over k = 3 dp or split, 24
 * or 48 MiB panels) against 6.08 for the CUDA-core forms: 171 or 86 panels, each a GEMM, an
 * epilogue and four event calls, bound the host (5.1 and 1.5 ms to queue one call), and
 * GEMMs of panels 192 rows high ran at about half the tensor cores' rate (ncu).
 * ---------------------------------------------------------------------------------------- */
/* Where the form applies: from this many features (at d = 64 it measured slower than the
 * CUDA-core forms of cuda_rbf_matrix.cu, d = 128 was not measured against them), and for outputs of
 * at least this many entries (the centering and splitting passes and the launches cost about 50 us,
 * 57 us in all for a 2048^2 x 64 call, small beside the difference form's 0.35 ms at 4096^2 x 256;
 * sizes between 2048^2 and 16384^2 not measured). */
#define GK_RBF_TC_MIN_D 256
#define GK_RBF_TC_MIN_ENTRIES ((double)(1u << 24))
/* Output bytes per row panel: a panel's G is written by the GEMMs and rewritten as K by the
 * epilogue soon after, mostly while it is still in L2 (50 MB on an H200); 48 MiB measured
 * faster than 24 (2.84 against 3.43 ms at 16384^2 x 256: fewer, fatter GEMMs). */
#define GK_RBF_TC_PANEL_BYTES ((size_t)48 << 20)
/* Panel heights are multiples of this many rows (at least one). */
#define GK_RBF_TC_PANEL_STEP 32
/* Column sums: blocks of 32 features by GK_TC_SUM_LANES rows, over GK_TC_SUM_CHUNKS chunks
 * of the rows of x and y. */
#define GK_TC_SUM_LANES (GK_CUDA_THREADS / 32)
#define GK_TC_SUM_CHUNKS 128

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

/* c_l = the mean of feature l's finite values (0 where there are none: any c is valid). */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_tc_center(size_t d, size_t chunks, const double *__restrict__ psum,
                   const unsigned int *__restrict__ pcount, float *__restrict__ center)
{
    for (size_t col = (size_t)blockIdx.x * blockDim.x + threadIdx.x; col < d;
         col += (size_t)gridDim.x * blockDim.x) {
        double sum = 0.0;
        unsigned long long count = 0;
        for (size_t k = 0; k < chunks; k++) {
            sum += psum[k * d + col];
            count += pcount[k * d + col];
        }
        center[col] = count > 0 ? (float)(sum / (double)count) : 0.0f;
    }
}

/* v rounded to nearest tf32 (ties away), low 13 bits cleared: exactly a float with 11
 * significant bits. */
__device__ __forceinline__ float cuda_tf32(float v)
{
    unsigned int b;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(b) : "f"(v));
    return __uint_as_float(b & 0xffffe000u);
}

/* One warp per row of x, then of y: the split centered row and its squared norm (not finite
 * where the row has a NaN or an infinity, or its norm overflows float32). parts = 3: [hi | lo |
 * hi] for x, [hi | hi | lo] for y (the GEMMs' operands); 2: [hi | lo] for both (the fused
 * kernel's); each part dp wide. */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_tc_split(size_t m, size_t n, size_t d, size_t dp, int parts, const float *__restrict__ x,
                  const float *__restrict__ y, const float *__restrict__ center,
                  float *__restrict__ xs, float *__restrict__ ys, float *__restrict__ nx,
                  float *__restrict__ ny, cuda_tc_gate gate)
{
    if (!gate.tensor_cores())
        return;
    const size_t row = (size_t)blockIdx.x * (GK_CUDA_THREADS / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= m + n)
        return; /* the whole warp */
    const bool is_x = row < m;
    const size_t r = is_x ? row : row - m;
    const float *src = (is_x ? x : y) + r * d;
    float *dst = (is_x ? xs : ys) + r * (parts == 4 ? 2 : parts) * dp;
    double acc = 0.0;
    for (size_t l = lane; l < dp; l += 32) {
        float v = l < d ? src[l] - center[l] : 0.0f;
        float hi = cuda_tf32(v), lo = cuda_tf32(v - hi);
        if (parts == 1) {
            dst[l] = v;
        } else if (parts == 4) {
            dst[l] = hi;
            __nv_bfloat16 *b = (__nv_bfloat16 *)(dst + dp);
            b[l] = __float2bfloat16_rn(hi);
            b[dp + l] = __float2bfloat16_rn(lo);
        } else {
            dst[l] = hi;
            dst[dp + l] = is_x || parts == 2 ? lo : hi;
        }
        if (parts == 3)
            dst[2 * dp + l] = is_x ? hi : lo;
        acc = fma((double)v, (double)v, acc);
    }
    for (int off = 16; off > 0; off /= 2)
        acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0)
        (is_x ? nx : ny)[r] = (float)acc;
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

/* The epilogue of one row panel [row_begin, row_end), in place: a block takes a 128 x 128
 * tile of G (the thread layout of cuda_rbf_tile), turns it into kernel values, and computes
 * the entries that fail the bound again from differences: one warp per entry, or the whole
 * tile in the tiled loop where more than 1 / GK_RBF_TC_TILE_SHARE of them fail. */
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_tc_epilogue(cuda_tc_params p, size_t row_begin, size_t row_end, float *__restrict__ k,
                     bool vec)
{
    typedef cuda_tc_tile Tile;
    const int W = Tile::W;
    __shared__ Tile::smem sm;
    __shared__ unsigned int failing;
    const int tx = Tile::tx(), ty = Tile::ty(), lane = (int)threadIdx.x % 32;
    const size_t col0 = (size_t)blockIdx.x * Tile::BN;
    const size_t row0 = row_begin + (size_t)blockIdx.y * Tile::BM;
    if (threadIdx.x == 0)
        failing = 0;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++) {
        size_t row = row0 + Tile::lane_index(i, ty);
#pragma unroll
        for (int g = 0; g < 8 / W; g++) {
            size_t col = col0 + Tile::lane_index(g * W, tx);
            const float *src = k + row * p.n + col;
            if (row < row_end && vec && col + W <= p.n) {
                Tile::V::unpack(__ldcg((const float4 *)src), &acc[i][g * W]);
            } else {
#pragma unroll
                for (int e = 0; e < W; e++)
                    acc[i][g * W + e] = row < row_end && col + e < p.n ? __ldcg(src + e) : 0.0f;
            }
        }
    }
    float ny[8];
#pragma unroll
    for (int j = 0; j < 8; j++) {
        size_t col = col0 + Tile::lane_index(j, tx);
        ny[j] = col < p.n ? p.ny[col] : 0.0f;
    }
    unsigned long long redo = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        size_t row = row0 + Tile::lane_index(i, ty);
        float nx = row < row_end ? p.nx[row] : 0.0f;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            size_t col = col0 + Tile::lane_index(j, tx);
            float t = nx + ny[j];
            float dh = fmaf(-2.0f, acc[i][j], t);
            float kv = cuda_ex2(dh * p.c);
            bool keep = cuda_tc_keep(p, dh, t, kv);
            if (!keep && row < row_end && col < p.n)
                redo |= 1ull << (i * 8 + j);
            acc[i][j] = kv;
        }
    }
    __syncthreads(); /* failing = 0 is visible */
    unsigned int mine = __reduce_add_sync(0xffffffffu, (unsigned int)__popcll(redo));
    if (lane == 0 && mine != 0)
        atomicAdd(&failing, mine);
    __syncthreads();
    if (failing > (unsigned int)(Tile::BM * Tile::BN / GK_RBF_TC_TILE_SHARE)) {
        cuda_tc_diff_form f{sm, acc, row0, row_end, col0, p.n, p.d, p.x, p.y};
        cuda_rbf_steps<GK_RBF_BK>(f, 0, p.d);
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int j = 0; j < 8; j++)
                acc[i][j] = cuda_rbf_value<false>(acc[i][j], p.c);
    } else {
        /* The warp takes its failing entries one at a time, lanes across features. */
        const int base = (int)threadIdx.x - lane;
        unsigned int want = __ballot_sync(0xffffffffu, redo != 0);
        while (want != 0) {
            const int src = __ffs((int)want) - 1;
            const unsigned long long bits = __shfl_sync(0xffffffffu, redo, src);
            const int b = __ffsll((long long)bits) - 1;
            const int stx = (base + src) % GK_RBF_SIDE, sty = (base + src) / GK_RBF_SIDE;
            const size_t row = row0 + Tile::lane_index(b / 8, sty);
            const size_t col = col0 + Tile::lane_index(b % 8, stx);
            float dist = cuda_tc_warp_distance(p.x + row * p.d, p.y + col * p.d, p.d, lane);
            if (lane == src) {
                float v = cuda_rbf_value<false>(dist, p.c);
                redo &= redo - 1;
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        if (i * 8 + j == b)
                            acc[i][j] = v;
            }
            want = __ballot_sync(0xffffffffu, redo != 0);
        }
    }
    /* Streaming stores: the panel's K is final and should leave L2 for the next panel's G. */
#pragma unroll
    for (int i = 0; i < 8; i++) {
        size_t row = row0 + Tile::lane_index(i, ty);
        if (row >= row_end)
            continue;
#pragma unroll
        for (int g = 0; g < 8 / W; g++) {
            size_t col = col0 + Tile::lane_index(g * W, tx);
            float *dst = k + row * p.n + col;
            if (vec && col + W <= p.n) {
                __stcs((float4 *)dst, Tile::V::pack(&acc[i][g * W]));
            } else {
#pragma unroll
                for (int e = 0; e < W; e++)
                    if (col + e < p.n)
                        __stcs(dst + e, acc[i][g * W + e]);
            }
        }
    }
}

/* Column-major C (n x rows, ld n) = yop^T (n x kk) xop (kk x rows) + beta C: the row-major
 * panel K[r0..r0+rows) = xop-rows . yop-rows^T, on TF32 tensor cores. */
static gk_status cuda_tc_gemm(gk_cuda_state *s, size_t n, size_t rows, size_t kk, const float *yop,
                              const float *xop, size_t ld, float beta, float *c)
{
    const float alpha = 1.0f;
    return gk__cublas_check(cublasGemmEx_64(s->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int64_t)n,
                                            (int64_t)rows, (int64_t)kk, &alpha, yop, CUDA_R_32F,
                                            (int64_t)ld, xop, CUDA_R_32F, (int64_t)ld, &beta, c,
                                            CUDA_R_32F, (int64_t)n, CUBLAS_COMPUTE_32F_FAST_TF32,
                                            CUBLAS_GEMM_DEFAULT),
                            "cublasGemmEx_64 (TF32)");
}

/* The side stream and its events, made once per context. */
static gk_status cuda_tc_streams(gk_cuda_state *s)
{
    gk_status r = GK_OK;
    if (s->side == NULL)
        r = gk__cuda_check(cudaStreamCreateWithFlags(&s->side, cudaStreamNonBlocking),
                           "cudaStreamCreateWithFlags(rbf_matrix panels)");
    if (r == GK_OK && s->gemm_done == NULL)
        r = gk__cuda_check(cudaEventCreateWithFlags(&s->gemm_done, cudaEventDisableTiming),
                           "cudaEventCreateWithFlags");
    for (int i = 0; i < 2 && r == GK_OK; i++)
        if (s->panel_done[i] == NULL)
            r = gk__cuda_check(cudaEventCreateWithFlags(&s->panel_done[i], cudaEventDisableTiming),
                               "cudaEventCreateWithFlags");
    return r;
}

static size_t cuda_tc_round16(size_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

/* The panel loop: GEMMs on the context's stream, epilogues on the side stream, panel p's
 * epilogue overlapping panel p + 1's GEMM; panel p + 2's GEMM waits for panel p's epilogue,
 * so at most two panels occupy L2. The context's stream waits for the last epilogue. */
static gk_status cuda_tc_panels(gk_cuda_state *s, size_t m, const cuda_tc_params &p, size_t dp,
                                const float *xs, const float *ys, float *k)
{
    const size_t n = p.n, ld = 3 * dp;
    size_t rows =
        GK_RBF_TC_PANEL_BYTES / (n * sizeof(float)) / GK_RBF_TC_PANEL_STEP * GK_RBF_TC_PANEL_STEP;
    if (rows < GK_RBF_TC_PANEL_STEP)
        rows = GK_RBF_TC_PANEL_STEP;
    if (rows > (size_t)GK_CUDA_GRID_Y_MAX * cuda_tc_tile::BM)
        rows = (size_t)GK_CUDA_GRID_Y_MAX * cuda_tc_tile::BM;
    const bool vec = n % 4 == 0 && (uintptr_t)k % 16 == 0;
    gk_status r = GK_OK;
    size_t panel = 0;
    for (size_t r0 = 0; r0 < m && r == GK_OK; r0 += rows, panel++) {
        const size_t pr = m - r0 < rows ? m - r0 : rows;
        float *kp = k + r0 * n;
        const float *xp = xs + r0 * ld;
        if (panel >= 2)
            r = gk__cuda_check(cudaStreamWaitEvent(s->stream, s->panel_done[panel % 2], 0),
                               "cudaStreamWaitEvent(rbf_matrix panel)");
        if (r == GK_OK)
            r = cuda_tc_gemm(s, n, pr, 2 * dp, ys + dp, xp + dp, ld, 0.0f, kp);
        if (r == GK_OK)
            r = cuda_tc_gemm(s, n, pr, dp, ys, xp, ld, 1.0f, kp);
        if (r == GK_OK)
            r = gk__cuda_check(cudaEventRecord(s->gemm_done, s->stream), "cudaEventRecord");
        if (r == GK_OK)
            r = gk__cuda_check(cudaStreamWaitEvent(s->side, s->gemm_done, 0),
                               "cudaStreamWaitEvent(rbf_matrix epilogue)");
        if (r != GK_OK)
            break;
        dim3 grid((unsigned int)((n + cuda_tc_tile::BN - 1) / cuda_tc_tile::BN),
                  (unsigned int)((pr + cuda_tc_tile::BM - 1) / cuda_tc_tile::BM));
        cuda_tc_epilogue<<<grid, GK_CUDA_THREADS, 0, s->side>>>(p, r0, r0 + pr, k, vec);
        r = gk__cuda_launched("cuda_tc_epilogue");
        if (r == GK_OK)
            r = gk__cuda_check(cudaEventRecord(s->panel_done[panel % 2], s->side),
                               "cudaEventRecord");
    }
    /* Joined whatever happened, so that nothing of this call runs on after it on the side. */
    gk_status j = gk__cuda_check(cudaEventRecord(s->gemm_done, s->side), "cudaEventRecord");
    if (j == GK_OK)
        j = gk__cuda_check(cudaStreamWaitEvent(s->stream, s->gemm_done, 0),
                           "cudaStreamWaitEvent(rbf_matrix join)");
    return r != GK_OK ? r : j;
}

/* The fused form (cuda_rbf_tc_mma.cuh) over the tiles of the output, BN columns wide. */
template <int BN, bool LDM, int STAGES, int OPS>
static gk_status cuda_tc_fused(gk_cuda_state *s, size_t m, const cuda_tc_params &p, size_t dp,
                               const float *xs, const float *ys, float *k, unsigned int *redo,
                               cuda_tc_gate gate)
{
    typedef cuda_tc_mma_shape<BN, STAGES, OPS> S;
    const size_t ntn = (p.n + BN - 1) / BN, tiles = (m + S::BM - 1) / S::BM * ntn;
    const size_t most = (size_t)s->sm_count * S::BLOCKS;
    const unsigned int grid = (unsigned int)(tiles < most ? tiles : most);
    const bool vec2 = p.n % 2 == 0 && (uintptr_t)k % 8 == 0;
    gk_status r = gk__cuda_check(cudaFuncSetAttribute(cuda_tc_mma<BN, LDM, STAGES, OPS>,
                                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                      (int)S::smem_bytes),
                                 "cudaFuncSetAttribute(cuda_tc_mma)");
    if (r != GK_OK)
        return r;
    cuda_tc_mma<BN, LDM, STAGES, OPS><<<grid, GK_CUDA_THREADS, S::smem_bytes, s->stream>>>(
        p, m, dp, (unsigned int)tiles, (unsigned int)ntn, xs, ys, k, vec2, redo + 2, redo + 1,
        gate);
    return gk__cuda_launched("cuda_tc_mma");
}

/* Round-1 measurement switches (GK_TC_FORM = cublas | mma128 | mma64 | off, GK_TC_PREDICT = 0
 * to skip the sample, GK_TC_MIN_D): not for release. */
static int cuda_tc_env_form(void)
{
    const char *f = getenv("GK_TC_FORM");
    if (f == NULL || strcmp(f, "mma128") == 0)
        return 128;
    if (strcmp(f, "mma64") == 0)
        return 64;
    if (strcmp(f, "cublas") == 0)
        return 3;
    return 0;
}

/* The workspace of one call, 16-byte aligned pieces. */
struct cuda_tc_layout {
    size_t chunk, chunks, dp, parts, bytes;
    size_t o_pcount, o_center, o_xs, o_ys, o_nx, o_ny, o_flag;
};
static cuda_tc_layout cuda_tc_plan(size_t m, size_t n, size_t d, int form, bool fly)
{
    cuda_tc_layout l;
    const size_t rows = m + n;
    l.chunk = (rows + GK_TC_SUM_CHUNKS - 1) / GK_TC_SUM_CHUNKS;
    l.chunks = (rows + l.chunk - 1) / l.chunk;
    l.parts = form == 3 ? 3 : fly ? 1 : 2;
    l.dp = form == 3 ? (d + 3) / 4 * 4 : (d + 31) / 32 * 32;
    size_t o = cuda_tc_round16(l.chunks * d * sizeof(double));
    l.o_pcount = o;
    o += cuda_tc_round16(l.chunks * d * sizeof(unsigned int));
    l.o_center = o;
    o += cuda_tc_round16(d * sizeof(float));
    l.o_xs = o;
    o += cuda_tc_round16(m * l.parts * l.dp * sizeof(float));
    l.o_ys = o;
    o += cuda_tc_round16(n * l.parts * l.dp * sizeof(float));
    l.o_nx = o;
    o += cuda_tc_round16(m * sizeof(float));
    l.o_ny = o;
    o += cuda_tc_round16(n * sizeof(float));
    /* flag[0]: the sample's count; flag[1]: the tiles the fused kernel left, listed from
     * flag[2] on (at most one per tile of 128 x 64). */
    l.o_flag = o;
    l.bytes = o + (2 + (m + 127) / 128 * ((n + 63) / 64)) * sizeof(unsigned int);
    return l;
}

int gk__cuda_rbf_matrix_tc(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                           const float *x, const float *y, float *k, gk_status *r)
{
    const float c = cuda_rbf_constant(gamma, 0.0f);
    const int form = cuda_tc_env_form();
    const char *md = getenv("GK_TC_MIN_D");
    const size_t min_d = md != NULL ? (size_t)atol(md) : (size_t)GK_RBF_TC_MIN_D;
    if (form == 0 || d < min_d || !(gamma > 0.0) || !std::isfinite(c) ||
        !std::isfinite((float)gamma) || (double)m * (double)n < GK_RBF_TC_MIN_ENTRIES ||
        (n + cuda_tc_tile::BN - 1) / cuda_tc_tile::BN > GK_CUDA_GRID_X_MAX ||
        (double)((m + 127) / 128) * (double)((n + 63) / 64) >= 4294967296.0)
        return 0;
    const size_t rows = m + n;
    const size_t dp0 = form == 3 ? (d + 3) / 4 * 4 : (d + 31) / 32 * 32;
    const double parts = form == 3 ? 3.0 : 2.0;
    /* Scratch no larger than the output (the rule of cpu_rbf_gemm.c): checked in double
     * first, so that the sizes below cannot wrap. */
    if ((double)rows * (parts * (double)dp0 + 1.0) + (double)GK_TC_SUM_CHUNKS * (double)d * 3.0 +
            (double)d + (double)m * (double)n / 4096.0 + 64.0 >
        (double)m * (double)n)
        return 0;
    const char *fl = getenv("GK_TC_FLY");
    const bool fly = form != 3 && fl != NULL && strcmp(fl, "1") == 0;
    const char *bfe = getenv("GK_TC_BF16");
    const bool bf = form != 3 && !fly && bfe != NULL && strcmp(bfe, "1") == 0;
    const cuda_tc_layout l = cuda_tc_plan(m, n, d, form, fly);
    char *w = NULL;
    *r = gk__cuda_workspace(s, l.bytes, (void **)&w);
    if (*r == GK_OK && form == 3)
        *r = cuda_tc_streams(s);
    if (*r != GK_OK)
        return 1;
    double *psum = (double *)w;
    unsigned int *pcount = (unsigned int *)(w + l.o_pcount);
    float *center = (float *)(w + l.o_center);
    float *xs = (float *)(w + l.o_xs), *ys = (float *)(w + l.o_ys);
    float *nx = (float *)(w + l.o_nx), *ny = (float *)(w + l.o_ny);
    unsigned int *flag = (unsigned int *)(w + l.o_flag);

    cudaStream_t st = s->stream;
    cuda_tc_column_sums<<<dim3((unsigned int)((d + 31) / 32), (unsigned int)l.chunks),
                          GK_CUDA_THREADS, 0, st>>>(m, n, d, l.chunk, x, y, psum, pcount);
    if ((*r = gk__cuda_launched("cuda_tc_column_sums")) != GK_OK)
        return 1;
    cuda_tc_center<<<gk__cuda_blocks(d, GK_CUDA_THREADS, (size_t)s->sm_count * 4), GK_CUDA_THREADS,
                     0, st>>>(d, l.chunks, psum, pcount, center);
    if ((*r = gk__cuda_launched("cuda_tc_center")) != GK_OK)
        return 1;

    const double u = 0x1p-24;
    /* bf16 cross terms: hi and lo rounded to 8 bits add 2^-18 s to D (64.1 u s). */
    const double kappa = 3.02 * (double)l.dp + 30.0 + (bf ? 64.1 : 0.0);
    cuda_tc_params p;
    p.n = n;
    p.d = d;
    p.c = c;
    p.gamma = (float)gamma;
    /* Rounded up, so the float32 constants are never below the bound. */
    p.ku = nextafterf((float)(kappa * u * 1.001), INFINITY);
    p.eabs = nextafterf((float)((8.0 * (double)l.dp + 32.0) * 0x1p-124), INFINITY);
    p.x = x;
    p.y = y;
    p.nx = nx;
    p.ny = ny;

    const char *pr = getenv("GK_TC_PREDICT");
    const bool sample = pr == NULL || strcmp(pr, "0") != 0;
    const size_t mt = (m + cuda_tc_tile::BM - 1) / cuda_tc_tile::BM;
    const size_t nt = (n + cuda_tc_tile::BN - 1) / cuda_tc_tile::BN;
    const unsigned int samples =
        (unsigned int)(mt * nt < GK_TC_SAMPLE_TILES ? mt * nt : GK_TC_SAMPLE_TILES);
    cuda_tc_gate gate = {sample ? flag : NULL,
                         (unsigned int)(GK_RBF_TC_MAX_FALLBACK * (double)samples)};
    *r = gk__cuda_check(cudaMemsetAsync(flag, 0, 2 * sizeof *flag, st), "cudaMemsetAsync");
    if (*r != GK_OK)
        return 1;
    if (sample) {
        cuda_tc_sample<<<samples, GK_CUDA_THREADS, 0, st>>>(
            p, m, center, (unsigned int)mt, (unsigned int)nt, samples, flag);
        if ((*r = gk__cuda_launched("cuda_tc_sample")) != GK_OK)
            return 1;
    }

    const size_t warps = GK_CUDA_THREADS / 32;
    cuda_tc_split<<<(unsigned int)((rows + warps - 1) / warps), GK_CUDA_THREADS, 0, st>>>(
        m, n, d, l.dp, bf ? 4 : (int)l.parts, x, y, center, xs, ys, nx, ny, gate);
    if ((*r = gk__cuda_launched("cuda_tc_split")) != GK_OK)
        return 1;
    const char *ldm = getenv("GK_TC_LDM");
    const bool lds = ldm != NULL && strcmp(ldm, "0") == 0;
    const char *stg = getenv("GK_TC_STAGES");
    const bool three = stg != NULL && strcmp(stg, "3") == 0;
    const int S_ = GK_TC_OPS_SPLIT, F_ = GK_TC_OPS_FLY, B_ = GK_TC_OPS_BF16;
    if (form == 128 && bf && three)
        *r = cuda_tc_fused<128, true, 3, B_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else if (form == 128 && bf)
        *r = cuda_tc_fused<128, true, 2, B_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else if (form == 64 && bf)
        *r = cuda_tc_fused<64, true, 2, B_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else if (form == 128 && fly)
        *r = cuda_tc_fused<128, true, 3, F_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else if (form == 64 && fly)
        *r = cuda_tc_fused<64, true, 2, F_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else if (form == 128 && !lds && three)
        *r = cuda_tc_fused<128, true, 3, S_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else if (form == 128 && !lds)
        *r = cuda_tc_fused<128, true, 2, S_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else if (form == 128)
        *r = cuda_tc_fused<128, false, 2, S_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else if (form == 64 && !lds)
        *r = cuda_tc_fused<64, true, 2, S_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else if (form == 64)
        *r = cuda_tc_fused<64, false, 2, S_>(s, m, p, l.dp, xs, ys, k, flag, gate);
    else
        *r = cuda_tc_panels(s, m, p, l.dp, xs, ys, k);
    if (*r != GK_OK || form == 3)
        return 1;
    const size_t tiles = mt * nt, most = (size_t)s->sm_count * 2;
    const unsigned int bn = form == 64 ? 64u : 128u;
    cuda_tc_differences<<<(unsigned int)(tiles < most ? tiles : most), GK_CUDA_THREADS, 0, st>>>(
        p, m, (unsigned int)nt, (unsigned int)((n + bn - 1) / bn), bn, flag + 2, flag + 1, gate, k,
        n % 4 == 0 && (uintptr_t)k % 16 == 0);
    *r = gk__cuda_launched("cuda_tc_differences");
    return 1;
}
