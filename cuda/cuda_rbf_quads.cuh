/* SPDX-License-Identifier: MIT */
/* cuda_rbf_quads.cuh - rbf_matrix's float32 difference tile for rows of whole 16-byte quads
 * (d % 4 == 0, rows 16-byte aligned), staged by 16-byte copies in chunks of CQ quads. */
#ifndef GK_CUDA_RBF_QUADS_CUH
#define GK_CUDA_RBF_QUADS_CUH

#include "cuda_rbf_tile.cuh"

/* Asynchronous 16-byte global-to-shared copy to shared address dst, if on (through L1: a warp's
 * copies take 32-byte pieces of 16 rows, whose other halves the next copies read); bytes = 0 fills
 * the quad with zeros (src must still be mapped). One predicated instruction, no branch around it.
 */
__device__ __forceinline__ void cuda_cp_async16(unsigned int dst, const float4 *src,
                                                unsigned int bytes, bool on)
{
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n"
                 " @p cp.async.ca.shared.global [%0], [%1], 16, %2;\n}\n" ::"r"(dst),
                 "l"(__cvta_generic_to_global(src)), "r"(bytes), "r"((unsigned int)on)
                 : "memory");
}

/* A 16-byte shared-memory load that the compiler keeps where it is written: a plane reads each
 * x quad twice on purpose, and keeping the first copy live instead (what it does with plain
 * loads) costs registers that the tile does not have. */
__device__ __forceinline__ void cuda_lds128(const float4 *p, float (&v)[4])
{
    asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
                 : "r"((unsigned int)__cvta_generic_to_shared(p)));
}

/* The tile of cuda_rbf_tile<float, 8, 8, ...> (same threads, rows, columns and epilogue), with
 * the operands staged as whole quads rather than transposed features. On the H200 the float32
 * difference form is bound by instruction issue, and the transposed staging costs a 4-byte copy
 * and its address arithmetic per feature and row (about 6 % of a 16384^2 x 20 call's
 * instructions); here a thread copies a quad (4 features of a row) per instruction, and a
 * chunk holds CQ quads, so d = 20 is one chunk with no zero features (the transposed tile
 * stages 16 + 16).
 *
 * Shared layout: plane q holds quad q of the chunk for every tile row. A thread reads the quads
 * of rows 4t + c (+64) for its t = tx (ty). For x the two ty of a warp land in different
 * 16-byte bank groups as they are. For y the 16 tx of a warp would hit 2 of the 8 groups
 * (8 wavefronts for a 16-address load): y row r sits at slot r ^ ((r >> 3) & 3), which spreads
 * them over all 8 (2 wavefronts, the least for 256 bytes). */
template <int CQ> struct cuda_rbf_qtile {
    typedef cuda_rbf_tile<float, 8, 8, GK_RBF_BK> Layout;
    typedef Layout::V V;
    enum {
        W = 4,
        TM = 8,
        TN = 8,
        BM = Layout::BM,
        BN = Layout::BN,
        BK = 4 * CQ,
        HALF = (CQ + 1) / 2
    };
    static_assert(BM == BN && 2 * BM == GK_CUDA_THREADS, "two threads stage each tile row");

    struct smem {
        float4 xs[2][CQ][BM];
        float4 ys[2][CQ][BN];
    };

    static __device__ __forceinline__ int tx()
    {
        return Layout::tx();
    }
    static __device__ __forceinline__ int ty()
    {
        return Layout::ty();
    }
    static __device__ __forceinline__ int lane_index(int i, int t)
    {
        return Layout::lane_index(i, t);
    }
    template <bool SWIZZLE> static __device__ __forceinline__ int slot(int r)
    {
        return SWIZZLE ? r ^ ((r >> 3) & 3) : r;
    }

    /* Starts the copies of quads [q0, q0 + CQ) of rows [row0, row0 + 128) of p (nrows rows of
     * dq quads) into dst; zeros outside the matrix. Thread t copies quads t % 2 + 2 u of tile
     * row t / 2: one base address per tile, the copies at constant offsets from it on both
     * sides, and for a tile inside the matrix nothing else. SWIZZLE: y's layout. */
    template <bool SWIZZLE>
    static __device__ __forceinline__ void issue(float4 (*dst)[BM], const float4 *p, size_t row0,
                                                 size_t nrows, size_t dq, size_t q0)
    {
        const unsigned int r = threadIdx.x / 2, h = threadIdx.x % 2;
        const unsigned int sbase =
            (unsigned int)__cvta_generic_to_shared(&dst[h][slot<SWIZZLE>((int)r)]);
        const float4 *src = p + (row0 + r) * dq + q0 + h;
        if (row0 + BM <= nrows && q0 + CQ <= dq) {
#pragma unroll
            for (int u = 0; u < HALF; u++)
                cuda_cp_async16(sbase + 2 * u * BM * 16, src + 2 * u, 16u,
                                CQ % 2 == 0 || u < HALF - 1 || h == 0);
            return;
        }
        /* The last row tile or the last chunk: rows past nrows and quads past dq are zeros. */
        const bool rok = row0 + r < nrows;
#pragma unroll
        for (int u = 0; u < HALF; u++) {
            const bool ok = rok && q0 + h + 2 * u < dq;
            cuda_cp_async16(sbase + 2 * u * BM * 16, ok ? src + 2 * u : p, ok ? 16u : 0u,
                            CQ % 2 == 0 || u < HALF - 1 || h == 0);
        }
    }

    /* One plane: acc[i][j] += (x_i - y_j)^2 over its 4 features, in feature order (FIRST: the
     * tile's first features, whose squares are assigned). Per half g of the columns the thread
     * holds 4 y quads and streams its 8 x quads, which keeps operands at 20 registers beside the
     * 64 sums; the x quads are read twice (broadcasts within a warp, one wavefront each). x is
     * the thread's first x row's slot in the plane, y[c] that of its column 4 tx + c. */
    template <bool FIRST>
    static __device__ __forceinline__ void plane(float (&acc)[8][8], const float4 *x,
                                                 const float4 *const (&y)[4])
    {
#pragma unroll
        for (int g = 0; g < 2; g++) {
            float yv[4][4];
#pragma unroll
            for (int c = 0; c < 4; c++)
                cuda_lds128(y[c] + g * 64, yv[c]);
#pragma unroll
            for (int i = 0; i < 8; i++) {
                float xv[4];
                cuda_lds128(x + (i / 4) * 64 + i % 4, xv);
#pragma unroll
                for (int f = 0; f < 4; f++) {
#pragma unroll
                    for (int c = 0; c < 4; c++) {
                        float t = xv[f] - yv[c][f];
                        float &a = acc[i][g * 4 + c];
                        a = FIRST && f == 0 ? t * t : fmaf(t, t, a);
                    }
                }
            }
        }
    }

    /* acc[i][j] += sum over the chunk's 4 CQ features of (x_i - y_j)^2 (features past d were
     * staged as zeros and add 0); init: the tile's first chunk, the sums start afresh. */
    static __device__ __forceinline__ void accumulate(float (&acc)[8][8], const float4 (*xs)[BM],
                                                      const float4 (*ys)[BN], int tx, int ty,
                                                      bool init)
    {
        const int sy = (tx >> 1) & 3;
        const float4 *y0[4] = {&ys[0][4 * tx + sy], &ys[0][4 * tx + (1 ^ sy)],
                               &ys[0][4 * tx + (2 ^ sy)], &ys[0][4 * tx + (3 ^ sy)]};
        if (init)
            plane<true>(acc, &xs[0][4 * ty], y0);
        else
            plane<false>(acc, &xs[0][4 * ty], y0);
#pragma unroll
        for (int q = 1; q < CQ; q++) {
            const float4 *yq[4] = {y0[0] + q * BN, y0[1] + q * BN, y0[2] + q * BN, y0[3] + q * BN};
            plane<false>(acc, &xs[q][4 * ty], yq);
        }
    }
};

#endif /* GK_CUDA_RBF_QUADS_CUH */
