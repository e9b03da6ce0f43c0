/* SPDX-License-Identifier: MIT */
/* rbf_matvec_tiled.cuh - rbf_matvec for d > 4 on the register-tiled distance block. */
#ifndef GK_CUDA_RBF_MATVEC_TILED_CUH
#define GK_CUDA_RBF_MATVEC_TILED_CUH

#include "rbf_tile.cuh"

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

/* rbf_matvec for d > 4 as a form of cuda_rbf_steps: the block's tiles are column tiles of y
 * against its one row tile, each also staging its slice of w; a finished distance tile becomes
 * kernel values times w, summed per row in registers (the matrix is never stored). */
template <typename T, int BK, bool CHECK> struct cuda_matvec_tiled_form {
    typedef cuda_rbf_shape<T> S;
    typedef cuda_rbf_tile<T, S::TM, S::TN, BK> Tile;
    typedef cuda_matvec_acc<T, S::TM> Acc;
    typename Tile::smem &sm;
    T (&ws)[2][Tile::BN];
    size_t m, n, d, row0, jt0, jt1;
    /* One feature chunk: the block's x rows are staged once, into buffer 0. */
    bool x_fixed;
    T c;
    const T *__restrict__ x;
    const T *__restrict__ y;
    const T *__restrict__ w;
    Acc acc;
    T dist[S::TM][S::TN];

    __device__ bool has(size_t jt) const
    {
        return jt < jt1;
    }
    __device__ size_t next(size_t jt) const
    {
        return jt + 1;
    }
    __device__ void issue(int b, size_t jt, size_t l0, bool first)
    {
        if (first || !x_fixed)
            Tile::template issue<Tile::XPER>(sm.xs[b], x, row0, m, d, l0);
        Tile::template issue<Tile::YPER>(sm.ys[b], y, jt * Tile::BN, n, d, l0);
        const int tid = threadIdx.x;
        if (tid < Tile::BN) {
            const size_t j = jt * Tile::BN + tid;
            cuda_cp_async(&ws[b][tid], j < n ? w + j : w, j < n);
        }
    }
    __device__ void compute(int b, int lmax, bool init)
    {
        Tile::accumulate(dist, sm.xs[x_fixed ? 0 : b], sm.ys[b], lmax, Tile::tx(), Tile::ty(),
                         init);
    }
    /* Row sums of kernel values times w. The last, partial tile masks its padding columns,
     * which must not contribute even where the kernel value is inf (gamma < 0) and inf * 0
     * would be NaN. */
    __device__ void finish(int b, size_t jt)
    {
        const int tx = Tile::tx();
        T wv[S::TN];
        Tile::columns(wv, ws[b], tx);
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
};

/* Block b handles row tile b / splits against column tiles [sp * tps, (sp + 1) * tps) of y,
 * sp = b % splits. With one split it writes out[] itself; otherwise each split writes a double
 * partial per row for the combine kernel. */
template <typename T, int BK, bool CHECK>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matvec_tiled(size_t m, size_t n, size_t d, T c, const T *__restrict__ x,
                          const T *__restrict__ y, const T *__restrict__ w, unsigned int splits,
                          size_t tps, T *__restrict__ out, double *__restrict__ partial)
{
    typedef cuda_matvec_tiled_form<T, BK, CHECK> Form;
    typedef typename Form::Tile Tile;
    __shared__ typename Tile::smem sm;
    __shared__ __align__(16) T ws[2][Tile::BN];
    __shared__ typename Form::Acc::shared accsh;

    const size_t rt = blockIdx.x / splits;
    const unsigned int sp = blockIdx.x % splits;
    const size_t ntiles = (n + Tile::BN - 1) / Tile::BN;
    const size_t jt0 = (size_t)sp * tps;
    const size_t jt1 = jt0 + tps < ntiles ? jt0 + tps : ntiles;
    const bool x_fixed = d <= (size_t)BK;
    Form f{sm, ws, m, n, d, rt * Tile::BM, jt0, jt1, x_fixed, c, x, y, w, {}, {}};
    f.acc.init(accsh);
    cuda_rbf_steps<BK>(f, jt0, d);
    f.acc.flush();

#pragma unroll
    for (int i = 0; i < Form::S::TM; i++) {
        double v = f.acc.total(i);
        size_t row = f.row0 + Tile::lane_index(i, Tile::ty());
        if (Tile::tx() == 0 && row < m) {
            if (splits == 1)
                out[row] = (T)v;
            else
                partial[(size_t)sp * m + row] = v;
        }
    }
}

#endif /* GK_CUDA_RBF_MATVEC_TILED_CUH */
