/* SPDX-License-Identifier: MIT */
/* cuda_rbf_matvec_tiled.cuh - rbf_matvec for d > 4 on the register-tiled distance block. */
#ifndef GK_CUDA_RBF_MATVEC_TILED_CUH
#define GK_CUDA_RBF_MATVEC_TILED_CUH

#include "cuda_rbf_tile.cuh"

/* float32: tile sums are kept in float over this many column tiles (8 terms each), then added
 * to a double. 32 float terms bound the rounding error by 32 * 2^-24 of their magnitude, far
 * inside the 1e-5 * sum|w| contract, while conversions stay rare. */
#define GK_MATVEC_TILED_FLUSH 4
/* Feature chunk: 8 rather than rbf_matrix's 16 leaves room in the 48 KB of static shared
 * memory for the float32 row sums. */
#define GK_MATVEC_TILED_BK 8

/* Per-row running sums of a thread's TM rows. float32: float tile sums, flushed every
 * GK_MATVEC_TILED_FLUSH tiles into doubles kept in shared memory (one slot per thread and
 * row: the 64 distances and their operands need the registers). float64: compensated (TwoSum)
 * pairs in registers, so a long sum over n keeps the 1e-12 contract. */
template <typename T, int TM> struct cuda_matvec_acc;
template <int TM> struct cuda_matvec_acc<float, TM> {
    struct shared {
        double sum[TM][GK_CUDA_THREADS];
    };
    float pend[TM];
    double *slot;
    __device__ void init(shared &sh)
    {
        slot = &sh.sum[0][threadIdx.x];
#pragma unroll
        for (int i = 0; i < TM; i++) {
            pend[i] = 0.0f;
            slot[i * GK_CUDA_THREADS] = 0.0;
        }
    }
    __device__ void add(int i, float v)
    {
        pend[i] += v;
    }
    __device__ void flush()
    {
#pragma unroll
        for (int i = 0; i < TM; i++) {
            slot[i * GK_CUDA_THREADS] += (double)pend[i];
            pend[i] = 0.0f;
        }
    }
    /* Sum over the 16 threads of a half-warp that share rows (fixed xor tree). */
    __device__ double total(int i)
    {
        double t = slot[i * GK_CUDA_THREADS];
#pragma unroll
        for (int off = 8; off > 0; off >>= 1)
            t += __shfl_xor_sync(0xffffffffu, t, off);
        return t;
    }
};
template <int TM> struct cuda_matvec_acc<double, TM> {
    struct shared {
    };
    double s[TM], c[TM];
    __device__ void init(shared &)
    {
#pragma unroll
        for (int i = 0; i < TM; i++)
            s[i] = c[i] = 0.0;
    }
    __device__ void add(int i, double v)
    {
        double e;
        cuda_two_sum(s[i], v, s[i], e);
        c[i] += e;
    }
    __device__ void flush()
    {
    }
    __device__ double total(int i)
    {
        double ts = s[i], tc = c[i];
#pragma unroll
        for (int off = 8; off > 0; off >>= 1) {
            double os = __shfl_xor_sync(0xffffffffu, ts, off);
            double oc = __shfl_xor_sync(0xffffffffu, tc, off);
            double e;
            cuda_two_sum(ts, os, ts, e);
            tc += oc + e;
        }
        return cuda_comp_value(ts, tc);
    }
};

/* For d > 4. Block b handles row tile b / splits against column tiles [sp * tps,
 * (sp + 1) * tps) of y, sp = b % splits. It walks (column tile, feature chunk) steps through
 * the double-buffered tile of cuda_rbf_tile, turns each finished distance tile into kernel
 * values times w in registers, and never stores the matrix. With one split it writes out[]
 * itself; otherwise each split writes a double partial per row for the combine kernel. */
template <typename T, int BK, bool CHECK>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matvec_tiled(size_t m, size_t n, size_t d, T c, const T *__restrict__ x,
                          const T *__restrict__ y, const T *__restrict__ w, unsigned int splits,
                          size_t tps, T *__restrict__ out, double *__restrict__ partial)
{
    typedef cuda_rbf_shape<T> S;
    typedef cuda_rbf_tile<T, S::TM, S::TN, BK> Tile;
    typedef typename Tile::V V;
    const int W = Tile::W;
    __shared__ typename Tile::smem sm;
    __shared__ __align__(16) T ws[2][Tile::BN];

    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const size_t rt = blockIdx.x / splits;
    const unsigned int sp = blockIdx.x % splits;
    const size_t row0 = rt * Tile::BM;
    const size_t ntiles = (n + Tile::BN - 1) / Tile::BN;
    const size_t jt0 = (size_t)sp * tps;
    const size_t jt1 = jt0 + tps < ntiles ? jt0 + tps : ntiles;
    const size_t nchunks = d == 0 ? 1 : (d + BK - 1) / BK;
    const bool x_fixed = nchunks == 1;

    typedef cuda_matvec_acc<T, S::TM> Acc;
    __shared__ typename Acc::shared accsh;
    Acc acc;
    acc.init(accsh);
    T dist[S::TM][S::TN];

    const int tid = threadIdx.x;
    if (jt0 < jt1) {
        Tile::template issue<Tile::XPER>(sm.xs[0], x, row0, m, d, 0);
        Tile::template issue<Tile::YPER>(sm.ys[0], y, jt0 * Tile::BN, n, d, 0);
        if (tid < Tile::BN) {
            const size_t j = jt0 * Tile::BN + tid;
            cuda_cp_async(&ws[0][tid], j < n ? w + j : w, j < n);
        }
        cuda_cp_commit();
    }

    size_t jt = jt0, ch = 0;
    for (int buf = 0; jt < jt1; buf ^= 1) {
        /* The step after this one: next chunk, or chunk 0 of the next column tile. */
        size_t njt = jt, nch = ch + 1;
        if (nch == nchunks) {
            nch = 0;
            njt++;
        }
        /* This step's data has landed for every thread, and every thread is done with the
         * previous step, whose buffers the next copies overwrite. */
        cuda_cp_wait_all();
        __syncthreads();
        if (njt < jt1) {
            if (!x_fixed)
                Tile::template issue<Tile::XPER>(sm.xs[buf ^ 1], x, row0, m, d, nch * BK);
            Tile::template issue<Tile::YPER>(sm.ys[buf ^ 1], y, njt * Tile::BN, n, d, nch * BK);
            if (tid < Tile::BN) {
                const size_t j = njt * Tile::BN + tid;
                cuda_cp_async(&ws[buf ^ 1][tid], j < n ? w + j : w, j < n);
            }
            cuda_cp_commit();
        }

        size_t left = d - ch * BK;
        int lmax = d == 0 ? 0 : (left < (size_t)BK ? (int)left : BK);
        Tile::accumulate(dist, sm.xs[x_fixed ? 0 : buf], sm.ys[buf], lmax, tx, ty, ch == 0);

        if (ch + 1 == nchunks) {
            T wv[S::TN];
#pragma unroll
            for (int g = 0; g < S::TN / W; g++)
                V::unpack(*(const typename V::type *)&ws[buf][g * 16 * W + tx * W], wv + g * W);
            const size_t col0 = jt * Tile::BN;
            if (col0 + Tile::BN <= n) {
#pragma unroll
                for (int i = 0; i < S::TM; i++) {
                    T p = T(0);
#pragma unroll
                    for (int j = 0; j < S::TN; j++)
                        p = fma(cuda_rbf_value<CHECK>(dist[i][j], c), wv[j], p);
                    acc.add(i, p);
                }
            } else {
                /* The last, partial tile: padding columns must not contribute even where the
                 * kernel value is inf (gamma < 0) and inf * 0 would be NaN. */
#pragma unroll
                for (int i = 0; i < S::TM; i++) {
                    T p = T(0);
#pragma unroll
                    for (int j = 0; j < S::TN; j++)
                        if (col0 + Tile::lane_index(j, tx) < n)
                            p = fma(cuda_rbf_value<CHECK>(dist[i][j], c), wv[j], p);
                    acc.add(i, p);
                }
            }
            if ((jt - jt0) % GK_MATVEC_TILED_FLUSH == GK_MATVEC_TILED_FLUSH - 1)
                acc.flush();
        }

        jt = njt;
        ch = nch;
    }
    acc.flush();

#pragma unroll
    for (int i = 0; i < S::TM; i++) {
        double v = acc.total(i);
        size_t row = row0 + Tile::lane_index(i, ty);
        if (tx == 0 && row < m) {
            if (splits == 1)
                out[row] = (T)v;
            else
                partial[(size_t)sp * m + row] = v;
        }
    }
}

#endif /* GK_CUDA_RBF_MATVEC_TILED_CUH */
