/* SPDX-License-Identifier: MIT */
/* rbf_tc_mma.cuh - rbf_matrix's tensor-core form as one kernel: the split products on
 * mma.sync with the bound-checked exponential epilogue fused, persistent blocks over the tiles. */
#ifndef GK_CUDA_RBF_TC_MMA_CUH
#define GK_CUDA_RBF_TC_MMA_CUH

#include <cuda_fp16.h>

#include <type_traits>

#include "rbf_tc_bound.cuh"
#include "rbf_tile.cuh"

/* A tile with more than this fraction (1 / GK_RBF_TC_TILE_SHARE) of its entries failing the
 * bound is computed from differences as a whole (the tiled CUDA-core loop of
 * cuda_tc_differences), cheaper than one warp per entry. */
#define GK_RBF_TC_TILE_SHARE 64

/* Four 8 x 8 matrices of 16-bit values from shared memory, one per register (ldmatrix .x4);
 * lanes 8i..8i+7 give the row addresses of matrix i (16-byte aligned), lane l gets elements
 * 2 (l % 4) and the next of row l / 4: the layout of the mma fragments. */
__device__ __forceinline__ void cuda_tc_ldmatrix4(unsigned int &r0, unsigned int &r1,
                                                  unsigned int &r2, unsigned int &r3,
                                                  const void *row)
{
    unsigned int a = (unsigned int)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(a));
}

/* D += A B on the tensor cores: A 16 x 16 and B 16 x 8 fp16 fragments, D 16 x 8 float32. */
__device__ __forceinline__ void cuda_tc_mma_f16(float (&acc)[4], const unsigned int (&a)[4],
                                                const unsigned int (&b)[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* D = A B, the same product with a zero accumulator. */
__device__ __forceinline__ void cuda_tc_mma_f16_zero(float (&acc)[4], const unsigned int (&a)[4],
                                                     const unsigned int (&b)[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%10,%10,%10};"
        : "=f"(acc[0]), "=f"(acc[1]), "=f"(acc[2]), "=f"(acc[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f));
}

/* 16 bytes global to shared, asynchronously; ok = false fills zeros (src must be mapped). */
__device__ __forceinline__ void cuda_tc_cp16(float *dst, const float *src, bool ok)
{
    unsigned int d = (unsigned int)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d),
                 "l"(__cvta_generic_to_global(src)), "r"(ok ? 16u : 0u)
                 : "memory");
}

/* The same with the bytes to copy in a register (at most 16; the rest of the 16 filled with
 * zeros; src must be mapped). */
__device__ __forceinline__ void cuda_tc_cp16_bytes(float *dst, const float *src, unsigned int bytes)
{
    unsigned int d = (unsigned int)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d),
                 "l"(__cvta_generic_to_global(src)), "r"(bytes)
                 : "memory");
}

/* The operands of the products: each centered row scaled by a power of two and split into fp16
 * hi and lo (cuda_tc_split), in dp / 32 blocks of 32 hi then 32 lo (dp floats' worth of bytes
 * a row); all three products on fp16 m16n8k16.
 *
 * The tile shapes: BM = 128 rows by BN = 128 (one block per SM) or 64 columns (two blocks per
 * SM, so one block's epilogue overlaps the other's products); eight warps of WTM x 32, each
 * thread holding MT x 4 fragments of 16 x 8 twice (hi.hi and the cross terms, kept apart so
 * that each sum's error scales with its own magnitude). A step stages BK features (a multiple
 * of 32), STAGES steps in flight; a staged row is BK fp16 hi and BK lo, in blocks of 32, plus
 * 16 bytes of padding, which makes the fragment loads conflict-free. */
template <int BN, int STAGES, int BKF> struct cuda_tc_mma_shape {
    enum {
        BM = 128,
        BK = BKF,
        WN = BN / 32,
        WM = 8 / WN,
        WTM = BM / WM,
        MT = WTM / 16,
        NT = 4,
        LDS = BK + 4, /* a staged row in floats */
        BLOCKS = BN == 128 ? 1 : 2
    };
    struct stage {
        float xh[BM][LDS], yh[BN][LDS];
        /* the tile's norms and undoing factors (cuda_tc_params' nx, sx, ny, sy), staged with its
         * last step */
        float nx[BM], sx[BM], ny[BN], sy[BN];
    };
    static constexpr size_t smem_bytes = STAGES * sizeof(stage);
};

/* The fused form, stepped by cuda_tc_pipeline: block b takes tiles b, b + gridDim.x, ... in
 * row-major order; a step stages BK features of the operands of x's and y's rows and runs the
 * products; the epilogue turns the tile into kernel values under the bound, recomputes single
 * failing entries from differences, and leaves tiles with many for cuda_tc_differences. */
template <int BN, int STAGES, int BKF> struct cuda_tc_mma_form {
    typedef cuda_tc_mma_shape<BN, STAGES, BKF> S;
    typedef typename S::stage stage;
    stage *st;
    unsigned int *counts; /* one per warp */
    const cuda_tc_params &p;
    size_t m, dp;
    unsigned int tiles, ntn;
    const float *__restrict__ xs;
    const float *__restrict__ ys;
    float *__restrict__ k;
    bool vec2;
    unsigned int *redo_tiles, *redo_count;
    /* The rows and columns of the tile being staged (set at its first chunk). */
    size_t irow0, icol0;
    /* hi.hi of the step being computed, of the steps before (blocked accumulation: each step's
     * products are summed from zero, then added to hs, so that rounding errors grow with the
     * number of steps rather than of features), and the cross terms. */
    float hh[S::MT][S::NT][4], hs[S::MT][S::NT][4], cr[S::MT][S::NT][4];

    __device__ bool has(unsigned int t) const
    {
        return t < tiles;
    }
    __device__ unsigned int next(unsigned int t) const
    {
        return t + gridDim.x; /* tiles + gridDim.x < 2^32 (cuda_rbf_tc.cu) */
    }
    /* ROWS staged rows from row row0 of src (rows of ld floats; zeros from row `rows` on): the
     * BK floats' worth of bytes from float l0 of each, in 16-byte copies. */
    template <int ROWS>
    static __device__ __forceinline__ void stage_rows(float (*dst)[S::LDS], const float *src,
                                                      size_t row0, size_t rows, size_t ld,
                                                      size_t l0)
    {
        enum { Q = S::BK / 4, PER = ROWS * Q / GK_CUDA_THREADS, RS = GK_CUDA_THREADS / Q };
        /* Thread t copies 16 bytes of rows t / Q + q RS. Where the tile is inside the matrix,
         * every address is the tile's (uniform) plus a 32-bit offset: a 64-bit multiply and a
         * bounds test per copy had been most of a step's instructions (in the sm_90 SASS, some
         * 150 of the 300 a warp issues per step at d = 64). */
        const int r = (int)(threadIdx.x / Q), c = (int)(threadIdx.x % Q * 4);
        const float *tile = src + row0 * ld + l0;
        if (row0 + ROWS <= rows && (size_t)ROWS * ld < ((size_t)1 << 29)) {
            /* every row inside the matrix, and the offsets (in bytes) within 31 bits */
            const char *s0 = (const char *)tile + (unsigned int)(r * (unsigned int)ld + c) * 4u;
            const unsigned int step = (unsigned int)(RS * ld * 4);
#pragma unroll
            for (int q = 0; q < PER; q++)
                cuda_tc_cp16(&dst[r + q * RS][c], (const float *)(s0 + q * step), true);
        } else {
#pragma unroll
            for (int q = 0; q < PER; q++) {
                const bool ok = row0 + r + q * RS < rows;
                cuda_tc_cp16(&dst[r + q * RS][c], ok ? tile + (size_t)(r + q * RS) * ld + c : src,
                             ok);
            }
        }
    }
    /* The norms and factors of the tile's rows and columns, 16 bytes a thread from thread 0 on
     * (zeros outside the matrix), staged with the tile's last step, so that the epilogue reads
     * them from shared memory instead of waiting on 24 bounds-tested global loads a thread. */
    __device__ __forceinline__ void stage_norms(stage &s, size_t row0, size_t col0)
    {
        enum { XQ = S::BM / 4, YQ = BN / 4 };
        const int t = (int)threadIdx.x;
        if (t < 2 * XQ + 2 * YQ) {
            const bool isx = t < 2 * XQ;
            const int q = isx ? t % XQ : (t - 2 * XQ) % YQ;
            const bool second = isx ? t >= XQ : t >= 2 * XQ + YQ;
            const float *src = isx ? (second ? p.sx : p.nx) : (second ? p.sy : p.ny);
            float *dst = isx ? (second ? s.sx : s.nx) : (second ? s.sy : s.ny);
            const size_t i0 = (isx ? row0 : col0) + 4 * q, lim = isx ? m : p.n;
            const unsigned int bytes = i0 >= lim       ? 0u
                                       : lim - i0 >= 4 ? 16u
                                                       : (unsigned int)(lim - i0) * 4u;
            cuda_tc_cp16_bytes(dst + 4 * q, bytes != 0 ? src + i0 : src, bytes);
        }
    }
    __device__ void issue(int b, unsigned int t, size_t l0, bool)
    {
        if (l0 == 0) {
            irow0 = (size_t)(t / ntn) * S::BM;
            icol0 = (size_t)(t % ntn) * BN;
        }
        stage &s = st[b];
        stage_rows<S::BM>(s.xh, xs, irow0, m, dp, l0);
        stage_rows<BN>(s.yh, ys, icol0, p.n, dp, l0);
        if (l0 + S::BK == dp)
            stage_norms(s, irow0, icol0);
    }
    /* The accumulators start at zero (the form's initializer) and are zeroed again after each
     * tile's epilogue (finish), not at a tile's first step, where the test of init would cost
     * a select per accumulator at every step. */
    __device__ void compute(int b, int, bool)
    {
        compute_f16(st[b]);
#pragma unroll
        for (int i = 0; i < S::MT; i++)
#pragma unroll
            for (int j = 0; j < S::NT; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    hs[i][j][e] += hh[i][j][e];
    }
    __device__ void zero()
    {
#pragma unroll
        for (int i = 0; i < S::MT; i++)
#pragma unroll
            for (int j = 0; j < S::NT; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    hs[i][j][e] = cr[i][j][e] = 0.0f;
    }
    __device__ void finish(int b, unsigned int t)
    {
        finish_tile(b, t);
        zero();
    }
    /* All three products on fp16 m16n8k16 from the staged hi and lo of 16 features at a time
     * (ldmatrix gives the fragments directly): B's for the whole warp tile, A's one row block
     * at a time. */
    __device__ __forceinline__ void compute_f16(const stage &s)
    {
        typedef const __half(*rows)[2 * S::LDS];
        rows xh = (rows)s.xh, yh = (rows)s.yh;
        /* unsigned index arithmetic: the addresses are worked out again at every step (the
         * registers are taken), where signed division and remainder cost several times more */
        const unsigned int lane = threadIdx.x % 32u, warp = threadIdx.x / 32u;
        const unsigned int lr = lane % 8u, lb = lane / 8u;
        const unsigned int wr = warp / S::WN * S::WTM, wc = warp % S::WN * 32u;
        const __half *yrow = &yh[wc + lb / 2u * 8u + lr][lb % 2u * 8u];
        const __half *xrow = &xh[wr + lb % 2u * 8u + lr][lb / 2u * 8u];
#pragma unroll
        for (int kk = 0; kk < S::BK; kk += 16) {
            /* features kk.. of the step: in block kk / 32, hi at 64 per block, lo 32 after */
            const int hi = kk / 32 * 64 + kk % 32, lo = hi + 32;
            unsigned int bh[S::NT][2], bl[S::NT][2];
#pragma unroll
            for (int j = 0; j < S::NT; j += 2) {
                const __half *c = yrow + j * 8 * 2 * S::LDS;
                cuda_tc_ldmatrix4(bh[j][0], bh[j][1], bh[j + 1][0], bh[j + 1][1], c + hi);
                cuda_tc_ldmatrix4(bl[j][0], bl[j][1], bl[j + 1][0], bl[j + 1][1], c + lo);
            }
#pragma unroll
            for (int i = 0; i < S::MT; i++) {
                unsigned int ah[4], al[4];
                const __half *r = xrow + i * 16 * 2 * S::LDS;
                cuda_tc_ldmatrix4(ah[0], ah[1], ah[2], ah[3], r + hi);
                cuda_tc_ldmatrix4(al[0], al[1], al[2], al[3], r + lo);
#pragma unroll
                for (int j = 0; j < S::NT; j++) {
                    if (kk == 0)
                        cuda_tc_mma_f16_zero(hh[i][j], ah, bh[j]);
                    else
                        cuda_tc_mma_f16(hh[i][j], ah, bh[j]);
                    cuda_tc_mma_f16(cr[i][j], ah, bl[j]);
                    cuda_tc_mma_f16(cr[i][j], al, bh[j]);
                }
            }
        }
    }
    /* Entry e of fragment (i, j) of lane l: row and column offsets within the tile. */
    static __device__ __forceinline__ int frag_row(int warp, int l, int i, int e)
    {
        return (int)((unsigned int)warp / S::WN * S::WTM + (unsigned int)l / 4u) + i * 16 +
               e / 2 * 8;
    }
    static __device__ __forceinline__ int frag_col(int warp, int l, int j, int e)
    {
        return (int)((unsigned int)warp % S::WN * 32u + (unsigned int)l % 4u * 2u) + j * 8 + e % 2;
    }
    /* The tile's failing entries, one bit per (i, j, e) of the thread's fragments. */
    typedef
        typename std::conditional<S::MT * S::NT * 4 <= 32, unsigned int, unsigned long long>::type
            redo_bits;
    /* The tile's entries are stored (K^, whether kept or not) before the block counts the
     * failing ones, so that the stores need not wait for the barrier; entries that fail the
     * bound are then stored again by the same thread (one warp each), or their whole tile by
     * cuda_tc_differences after this kernel. */
    __device__ __forceinline__ void finish_tile(int b, unsigned int t)
    {
        const size_t row0 = (size_t)(t / ntn) * S::BM;
        const size_t col0 = (size_t)(t % ntn) * BN;
        const int lane = (int)(threadIdx.x % 32u), warp = (int)(threadIdx.x / 32u);
        const stage &s = st[b];
        /* the rows' norms and the factors -2 2^-k_x undoing their scales (with D's -2) */
        float nx[S::MT][2], fx[S::MT][2];
#pragma unroll
        for (int i = 0; i < S::MT; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = frag_row(warp, lane, i, 2 * h);
                nx[i][h] = s.nx[r];
                fx[i][h] = s.sx[r];
            }
        float ny[S::NT][2], fy[S::NT][2];
#pragma unroll
        for (int j = 0; j < S::NT; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int c = frag_col(warp, lane, j, e);
                ny[j][e] = s.ny[c];
                fy[j][e] = s.sy[c];
            }
        redo_bits redo = 0;
        /* D^ = t - 2 G, K^ = exp2(c D^); hh takes K^, cr D^. One bound for all of the thread's
         * entries, from its largest norms (E >= each entry's e: the bound is monotonic in t), so
         * that an entry's test is two comparisons: D^ > E and K^ <= KT with KT E <= kesmall give
         * D^ > e and fl(K^ e) <= kesmall, the first test of cuda_tc_keep_small (E <= esmall
         * checked once). A NaN norm leaves D^ NaN (failing); an infinite one makes E infinite
         * (all failing). Where any entry of the warp fails, the exact tests (cuda_tc_keep_small,
         * then cuda_tc_keep_large) decide every entry, so that the entries kept are those of the
         * per-entry tests. An entry costs 8 instructions here, against some 17 with its own
         * bound, bounds tests and bit (sm_90 SASS). */
        float mxn = 0.0f, myn = 0.0f;
#pragma unroll
        for (int i = 0; i < S::MT; i++)
            mxn = fmaxf(mxn, fmaxf(nx[i][0], nx[i][1]));
#pragma unroll
        for (int j = 0; j < S::NT; j++)
            myn = fmaxf(myn, fmaxf(ny[j][0], ny[j][1]));
        const float ebig = cuda_tc_bound(p, mxn + myn);
        const float kt = ebig <= p.esmall ? __fdiv_rd(p.kesmall, ebig) : -1.0f;
        bool bad = false;
#pragma unroll
        for (int j = 0; j < S::NT; j++)
#pragma unroll
            for (int e = 0; e < 2; e++)
#pragma unroll
                for (int i = 0; i < S::MT; i++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int f = 2 * h + e;
                        const float tn = nx[i][h] + ny[j][e];
                        const float g = hs[i][j][f] + cr[i][j][f];
                        const float dh = fmaf(g, fx[i][h] * fy[j][e], tn);
                        const float kv = cuda_ex2(dh * p.c);
                        bad |= !(dh > ebig);
                        bad |= !(kv <= kt);
                        hh[i][j][f] = kv;
                        cr[i][j][f] = dh;
                    }
        if (__any_sync(0xffffffffu, bad)) {
#pragma unroll
            for (int j = 0; j < S::NT; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const size_t col = col0 + frag_col(warp, lane, j, e);
#pragma unroll
                    for (int i = 0; i < S::MT; i++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const int f = 2 * h + e;
                            const size_t row = row0 + frag_row(warp, lane, i, 2 * h);
                            const float eb = cuda_tc_bound(p, nx[i][h] + ny[j][e]);
                            if (!cuda_tc_keep_small(p, cr[i][j][f], eb, hh[i][j][f]) &&
                                !cuda_tc_keep_large(p, cr[i][j][f] - eb) && row < m && col < p.n)
                                redo |= (redo_bits)1 << ((i * S::NT + j) * 4 + f);
                        }
                }
        }
        if (vec2 && row0 + S::BM <= m && col0 + BN <= p.n) {
            /* an inner tile: one address a row, the columns at constant offsets */
            float *base =
                k + (row0 + frag_row(warp, lane, 0, 0)) * p.n + col0 + frag_col(warp, lane, 0, 0);
            const size_t rstep = 8 * p.n;
#pragma unroll
            for (int i = 0; i < S::MT; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    float *dst = base + (size_t)(2 * i + h) * rstep;
#pragma unroll
                    for (int j = 0; j < S::NT; j++)
                        __stcs((float2 *)(dst + j * 8),
                               make_float2(hh[i][j][2 * h], hh[i][j][2 * h + 1]));
                }
        } else {
#pragma unroll
            for (int i = 0; i < S::MT; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    size_t row = row0 + frag_row(warp, lane, i, 2 * h);
                    if (row >= m)
                        continue;
#pragma unroll
                    for (int j = 0; j < S::NT; j++) {
                        size_t col = col0 + frag_col(warp, lane, j, 0);
                        float *dst = k + row * p.n + col;
                        if (vec2 && col < p.n) {
                            __stcs((float2 *)dst,
                                   make_float2(hh[i][j][2 * h], hh[i][j][2 * h + 1]));
                        } else {
                            if (col < p.n)
                                __stcs(dst, hh[i][j][2 * h]);
                            if (col + 1 < p.n)
                                __stcs(dst + 1, hh[i][j][2 * h + 1]);
                        }
                    }
                }
        }
        /* No failing entry in the block (the usual case): one barrier, no counts. */
        if (!__syncthreads_or(redo != 0))
            return;
        unsigned int mine = __reduce_add_sync(0xffffffffu, (unsigned int)__popcll(redo));
        if (lane == 0)
            counts[warp] = mine;
        __syncthreads();
        unsigned int failing = 0;
#pragma unroll
        for (int w = 0; w < GK_CUDA_THREADS / 32; w++)
            failing += counts[w];
        if (failing > (unsigned int)(S::BM * BN / GK_RBF_TC_TILE_SHARE)) {
            /* Left for cuda_tc_differences, which computes the listed tiles after this kernel. */
            if (threadIdx.x == 0)
                redo_tiles[atomicAdd(redo_count, 1u)] = t;
            return;
        }
        /* The warp takes its failing entries one at a time, lanes across features; the lane
         * that stored the entry stores it again. */
        unsigned int want = __ballot_sync(0xffffffffu, redo != 0);
        while (want != 0) {
            const int src = __ffs((int)want) - 1;
            const redo_bits bits = __shfl_sync(0xffffffffu, redo, src);
            const int bit = __ffsll((long long)bits) - 1;
            const int i = bit / 4 / S::NT, j = bit / 4 % S::NT, f = bit % 4;
            const size_t row = row0 + frag_row(warp, src, i, f);
            const size_t col = col0 + frag_col(warp, src, j, f);
            float dist = cuda_tc_warp_distance(p.x + row * p.d, p.y + col * p.d, p.d, lane);
            if (lane == src) {
                __stcs(k + row * p.n + col, cuda_rbf_value<false>(dist, p.c));
                redo &= redo - 1;
            }
            want = __ballot_sync(0xffffffffu, redo != 0);
        }
    }
};

/* Waits until at most N of this thread's groups of copies are still in flight. */
template <int N> __device__ __forceinline__ void cuda_tc_cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* The steps (tile, chunk of BK features) of a block, STAGES - 1 of them in flight while one is
 * computed, across tiles too; one barrier per step. The form is used as by cuda_rbf_steps. A
 * group of copies is committed at every step, empty or not, so that the wait's count holds. */
template <int STAGES, int BK, typename Form>
__device__ __forceinline__ void cuda_tc_pipeline(Form &f, unsigned int t0, unsigned int nchunks)
{
    unsigned int it = t0, ich = 0; /* the next step to issue */
#pragma unroll
    for (int b = 0; b < STAGES - 1; b++) {
        if (f.has(it)) {
            f.issue(b, it, ich * BK, b == 0);
            if (++ich == nchunks) {
                ich = 0;
                it = f.next(it);
            }
        }
        cuda_cp_commit();
    }
    unsigned int t = t0, ch = 0;
    for (int buf = 0; f.has(t); buf = buf + 1 == STAGES ? 0 : buf + 1) {
        /* Step s has landed for every thread, and every thread is done with step s - 1,
         * whose buffer the next copies overwrite. */
        cuda_tc_cp_wait<STAGES - 2>();
        __syncthreads();
        if (f.has(it)) {
            f.issue(buf == 0 ? STAGES - 1 : buf - 1, it, ich * BK, false);
            if (++ich == nchunks) {
                ich = 0;
                it = f.next(it);
            }
        }
        cuda_cp_commit();
        f.compute(buf, BK, ch == 0);
        if (++ch == nchunks) {
            f.finish(buf, t);
            ch = 0;
            t = f.next(t);
        }
    }
}

/* The fused kernel: persistent blocks (the grid is at most S::BLOCKS per SM), so that the next
 * tile's first operands are in flight during a tile's epilogue. Dynamic shared memory:
 * cuda_tc_mma_shape<BN, STAGES, BK>::smem_bytes. */
template <int BN, int STAGES, int BK>
__global__ void __launch_bounds__(GK_CUDA_THREADS, cuda_tc_mma_shape<BN, STAGES, BK>::BLOCKS)
    cuda_tc_mma(cuda_tc_params p, size_t m, size_t dp, unsigned int tiles, unsigned int ntn,
                const float *__restrict__ xs, const float *__restrict__ ys, float *__restrict__ k,
                bool vec2, unsigned int *__restrict__ redo_tiles, unsigned int *redo_count,
                cuda_tc_gate gate)
{
    if (!gate.tensor_cores())
        return;
    typedef cuda_tc_mma_shape<BN, STAGES, BK> S;
    extern __shared__ __align__(16) unsigned char cuda_tc_smem[];
    __shared__ unsigned int counts[GK_CUDA_THREADS / 32];
    typename S::stage *st = (typename S::stage *)cuda_tc_smem;
    cuda_tc_mma_form<BN, STAGES, BK> f{st, counts, p,          m,          dp, tiles, ntn, xs, ys,
                                       k,  vec2,   redo_tiles, redo_count, 0,  0,     {},  {}, {}};
    cuda_tc_pipeline<STAGES, S::BK>(f, blockIdx.x, (unsigned int)(dp / S::BK));
}

#endif /* GK_CUDA_RBF_TC_MMA_CUH */
