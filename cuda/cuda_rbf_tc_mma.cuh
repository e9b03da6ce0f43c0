/* SPDX-License-Identifier: MIT */
/* cuda_rbf_tc_mma.cuh - rbf_matrix's tensor-core form as one kernel: the split products on
 * mma.sync with the bound-checked exponential epilogue fused, persistent blocks over the tiles. */
#ifndef GK_CUDA_RBF_TC_MMA_CUH
#define GK_CUDA_RBF_TC_MMA_CUH

#include <cuda_fp16.h>

#include <type_traits>

#include "cuda_rbf_tc_bound.cuh"
#include "cuda_rbf_tile.cuh"

/* A tile with more than this fraction (1 / GK_RBF_TC_TILE_SHARE) of its entries failing the
 * bound is computed from differences as a whole (the tiled CUDA-core loop of
 * cuda_tc_differences), cheaper than one warp per entry. */
#define GK_RBF_TC_TILE_SHARE 16

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

/* 16 bytes global to shared, asynchronously; ok = false fills zeros (src must be mapped). */
__device__ __forceinline__ void cuda_tc_cp16(float *dst, const float *src, bool ok)
{
    unsigned int d = (unsigned int)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d),
                 "l"(__cvta_generic_to_global(src)), "r"(ok ? 16u : 0u)
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
    float hh[S::MT][S::NT][4], cr[S::MT][S::NT][4];

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
        enum { Q = S::BK / 4, PER = ROWS * Q / GK_CUDA_THREADS };
#pragma unroll
        for (int q = 0; q < PER; q++) {
            const int idx = (int)threadIdx.x + q * GK_CUDA_THREADS, r = idx / Q, c = idx % Q * 4;
            const bool ok = row0 + r < rows;
            cuda_tc_cp16(&dst[r][c], ok ? src + (row0 + r) * ld + l0 + c : src, ok);
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
    }
    __device__ void compute(int b, int, bool init)
    {
        if (init) {
#pragma unroll
            for (int i = 0; i < S::MT; i++)
#pragma unroll
                for (int j = 0; j < S::NT; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        hh[i][j][e] = cr[i][j][e] = 0.0f;
        }
        compute_f16(st[b]);
    }
    /* All three products on fp16 m16n8k16 from the staged hi and lo of 16 features at a time
     * (ldmatrix gives the fragments directly): B's for the whole warp tile, A's one row block
     * at a time. */
    __device__ __forceinline__ void compute_f16(const stage &s)
    {
        typedef const __half(*rows)[2 * S::LDS];
        rows xh = (rows)s.xh, yh = (rows)s.yh;
        const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
        const int lr = lane % 8, lb = lane / 8;
        const int wr = warp / S::WN * S::WTM, wc = warp % S::WN * 32;
#pragma unroll
        for (int kk = 0; kk < S::BK; kk += 16) {
            /* features kk.. of the step: in block kk / 32, hi at 64 per block, lo 32 after */
            const int hi = kk / 32 * 64 + kk % 32, lo = hi + 32;
            unsigned int bh[S::NT][2], bl[S::NT][2];
#pragma unroll
            for (int j = 0; j < S::NT; j += 2) {
                const int c = wc + j * 8 + lb / 2 * 8 + lr, kb = lb % 2 * 8;
                cuda_tc_ldmatrix4(bh[j][0], bh[j][1], bh[j + 1][0], bh[j + 1][1], &yh[c][hi + kb]);
                cuda_tc_ldmatrix4(bl[j][0], bl[j][1], bl[j + 1][0], bl[j + 1][1], &yh[c][lo + kb]);
            }
#pragma unroll
            for (int i = 0; i < S::MT; i++) {
                unsigned int ah[4], al[4];
                const int ar = wr + i * 16 + lb % 2 * 8 + lr, ka = lb / 2 * 8;
                cuda_tc_ldmatrix4(ah[0], ah[1], ah[2], ah[3], &xh[ar][hi + ka]);
                cuda_tc_ldmatrix4(al[0], al[1], al[2], al[3], &xh[ar][lo + ka]);
#pragma unroll
                for (int j = 0; j < S::NT; j++) {
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
        return warp / S::WN * S::WTM + i * 16 + l / 4 + e / 2 * 8;
    }
    static __device__ __forceinline__ int frag_col(int warp, int l, int j, int e)
    {
        return warp % S::WN * 32 + j * 8 + l % 4 * 2 + e % 2;
    }
    /* The tile's failing entries, one bit per (i, j, e) of the thread's fragments. */
    typedef
        typename std::conditional<S::MT * S::NT * 4 <= 32, unsigned int, unsigned long long>::type
            redo_bits;
    /* The tile's entries are stored (K^, whether kept or not) before the block counts the
     * failing ones, so that the stores need not wait for the barrier; entries that fail the
     * bound are then stored again by the same thread (one warp each), or their whole tile by
     * cuda_tc_differences after this kernel. */
    __device__ void finish(int, unsigned int t)
    {
        const size_t row0 = (size_t)(t / ntn) * S::BM;
        const size_t col0 = (size_t)(t % ntn) * BN;
        const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
        /* the rows' norms and the factors -2 2^-k_x undoing their scales (with D's -2) */
        float nx[S::MT][2], fx[S::MT][2];
#pragma unroll
        for (int i = 0; i < S::MT; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                size_t row = row0 + frag_row(warp, lane, i, 2 * h);
                nx[i][h] = row < m ? p.nx[row] : 0.0f;
                fx[i][h] = row < m ? p.sx[row] : 0.0f;
            }
        /* D^ = t - 2 G, K^ = exp2(c D^), kept under the bound's first test (small gamma e);
         * hh takes K^, cr D^ for the second */
        redo_bits redo = 0;
#pragma unroll
        for (int j = 0; j < S::NT; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const size_t col = col0 + frag_col(warp, lane, j, e);
                const float ny = col < p.n ? p.ny[col] : 0.0f;
                const float fy = col < p.n ? p.sy[col] : 0.0f;
#pragma unroll
                for (int i = 0; i < S::MT; i++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int f = 2 * h + e;
                        const size_t row = row0 + frag_row(warp, lane, i, 2 * h);
                        const float tn = nx[i][h] + ny;
                        const float g = hh[i][j][f] + cr[i][j][f];
                        const float dh = fmaf(g, fx[i][h] * fy, tn);
                        const float kv = cuda_ex2(dh * p.c);
                        const float eb = cuda_tc_bound(p, tn);
                        if (!cuda_tc_keep_small(p, dh, eb, kv) && row < m && col < p.n)
                            redo |= (redo_bits)1 << ((i * S::NT + j) * 4 + f);
                        hh[i][j][f] = kv;
                        cr[i][j][f] = dh;
                    }
            }
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
                        __stcs((float2 *)dst, make_float2(hh[i][j][2 * h], hh[i][j][2 * h + 1]));
                    } else {
                        if (col < p.n)
                            __stcs(dst, hh[i][j][2 * h]);
                        if (col + 1 < p.n)
                            __stcs(dst + 1, hh[i][j][2 * h + 1]);
                    }
                }
            }
        /* The entries that failed it take the second test (any gamma e), where any did. */
        if (__any_sync(0xffffffffu, redo != 0)) {
#pragma unroll
            for (int b = 0; b < S::MT * S::NT * 4; b++) {
                const int i = b / 4 / S::NT, j = b / 4 % S::NT, f = b % 4;
                if (redo >> b & 1) {
                    const size_t col = col0 + frag_col(warp, lane, j, f);
                    const float eb = cuda_tc_bound(p, nx[i][f / 2] + p.ny[col]);
                    if (cuda_tc_keep_large(p, cr[i][j][f] - eb))
                        redo &= ~((redo_bits)1 << b);
                }
            }
        }
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
                                       k,  vec2,   redo_tiles, redo_count, 0,  0,     {},  {}};
    cuda_tc_pipeline<STAGES, S::BK>(f, blockIdx.x, (unsigned int)(dp / S::BK));
}

#endif /* GK_CUDA_RBF_TC_MMA_CUH */
