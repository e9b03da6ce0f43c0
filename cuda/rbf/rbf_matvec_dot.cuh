/* SPDX-License-Identifier: MIT */
/* rbf_matvec_dot.cuh - float32 rbf_matvec for d > 4 in the inner-product form on centered
 * rows, tile by tile where its rounding bound allows, else from differences. */
#ifndef GK_CUDA_RBF_MATVEC_DOT_CUH
#define GK_CUDA_RBF_MATVEC_DOT_CUH

#include "rbf_matvec_center.h"
#include "rbf_matvec_tiled.cuh"

/* The form: with x~, y~ the rows less the center, a_i, b_j their terms -k ||.||^2
 * (k = gamma log2(e); cuda_rbf_matvec_center.cu), the exponent (base 2) of a pair is
 *     t = a_i + b_j + 2k x~_i.y~_j,
 * one FMA per feature where differences take two. Its rounding (first order in u = 2^-24;
 * N = ||x~_i||^2 + ||y~_j||^2 as computed): the centering moves the points by u |x~_l| per
 * feature, 4 u k N in t; k rounded, 2 u k N; each norm summed in double, its product with k
 * rounded once, u k N for the two; a_i + b_j, u k N; the dot product's d roundings of partial
 * sums bounded by N / 2, d u k N after the factor 2k; the final FMA, its product u k N and its
 * sum 2 u k N: (d + 11) u k N in all, a relative error of (d + 11) u gamma N in the kernel
 * value. A tile takes the form only where that is at most GK_MATVEC_DOT_MAX_ERROR for the
 * largest norms of its row and column groups: then with the exp2 (about 2^-22) and the float tile sums
 * (32 u) every output stays inside the 1e-5 * sum |w| contract. t <= 0 up to that error, so
 * nothing overflows. Non-finite data fails the bound (its group norm is inf). */
#define GK_MATVEC_DOT_MAX_ERROR 4e-6f
/* A pair whose exponent t reaches this (base 2; twice the largest error the bound allows) may
 * be one of identical rows: the tile's row sums that contain one are computed again with that
 * pair's value from differences of the raw rows, which is exactly 1 for identical rows. */
#define GK_MATVEC_DOT_REDO (-2.0f * GK_MATVEC_DOT_MAX_ERROR / 0.69314718f)

/* The tensor-core form (rbf_matvec_tc.cu) takes a tile where its bound at the tile's largest
 * norms is within GK_MATVEC_TC_GATE times GK_MATVEC_DOT_MAX_ERROR: it then keeps each pair only
 * where that pair's own bound, times its kernel value, is within GK_MATVEC_DOT_MAX_ERROR, and
 * computes the others again from differences. So only pairs with K above 1 / GK_MATVEC_TC_GATE
 * (near pairs) can fail: few on data whose spread about the centre is like its distances
 * (standardized data), while clustered data, its norms some hundred times its distances within
 * a cluster, stays on the CUDA-core forms instead of recomputing a pair in thirty. */
#define GK_MATVEC_TC_GATE 8.0f
static __device__ __forceinline__ bool cuda_matvec_tc_takes(float tc_ecoef, float gsum)
{
    return tc_ecoef > 0.0f && tc_ecoef * gsum <= GK_MATVEC_DOT_MAX_ERROR * GK_MATVEC_TC_GATE;
}

/* One row's sum over a tile's TN columns of thread column tx, all from global memory: each
 * pair's exponent t again from the centered rows (the tile's formula and order), and where t
 * reaches GK_MATVEC_DOT_REDO the value from differences of the raw rows instead. Out of line:
 * the tile's registers need not survive it. */
template <typename Tile>
__device__ __noinline__ float
cuda_matvec_dot_row(cuda_matvec_centered ctr, const float *__restrict__ xrow,
                    const float *__restrict__ xcrow, const float *__restrict__ y,
                    const float *__restrict__ w, size_t col0, int tx, size_t n, size_t d, float a,
                    float k2, float c)
{
    float p = 0.0f;
    for (int j = 0; j < cuda_rbf_shape<float>::TN; j++) {
        const size_t col = col0 + Tile::lane_index(j, tx);
        if (col >= n)
            continue;
        float dt = 0.0f;
        for (size_t l = 0; l < d; l++)
            dt = fmaf(xcrow[l], ctr.y[col * d + l], dt);
        const float t = fmaf(k2, dt, a + ctr.b[col]);
        const float v =
            t >= GK_MATVEC_DOT_REDO
                ? cuda_rbf_value<false>(cuda_rbf_exact_distance(xrow, y + col * d, d), c)
                : cuda_ex2(t);
        p = fmaf(v, w[col], p);
    }
    return p;
}

/* The form of cuda_rbf_steps: column tiles of y against the block's one row tile, as
 * cuda_matvec_tiled_form, each in the inner-product form on the centered rows where its bound
 * allows (dot), else from differences of the raw rows; uniform for the block (every thread
 * reads the same two group bounds). c is finite and negative here. */
template <int BK> struct cuda_matvec_dot_form {
    typedef cuda_rbf_shape<float> S;
    typedef cuda_rbf_tile<float, S::TM, S::TN, BK> Tile;
    typedef cuda_matvec_acc<float, S::TM> Acc;
    static_assert(Tile::BM == GK_MATVEC_GROUP && Tile::BN == GK_MATVEC_GROUP, "a tile a group");
    typename Tile::smem &sm;
    float (&ws)[2][Tile::BN];
    float (&bs)[2][Tile::BN];
    size_t m, n, d, row0, jt0, jt1;
    /* tc_ecoef > 0: the tiles where the tensor-core form's bound (that coefficient) holds are
     * cuda_rbf_matvec_tc's, and this kernel takes only the others. */
    float c, k2, ecoef, tc_ecoef, gxr;
    const float *__restrict__ x;
    const float *__restrict__ y;
    const float *__restrict__ w;
    cuda_matvec_centered ctr;
    /* The form of the tile being computed, and of the next (set by next(), before the
     * barrier, so the load of its bound overlaps the wait). */
    bool dot, next_dot;
    /* Tiles summed since the last flush. */
    int pending;
    Acc acc;
    float dist[S::TM][S::TN];

    __device__ bool dot_tile(size_t jt) const
    {
        return ecoef * (gxr + ctr.gy[jt]) <= GK_MATVEC_DOT_MAX_ERROR;
    }
    __device__ bool has(size_t jt) const
    {
        return jt < jt1;
    }
    __device__ bool tc_tile(size_t jt) const
    {
        return cuda_matvec_tc_takes(tc_ecoef, gxr + ctr.gy[jt]);
    }
    /* The first of this kernel's tiles from jt on. */
    __device__ size_t own(size_t jt) const
    {
        while (jt < jt1 && tc_tile(jt))
            jt++;
        return jt;
    }
    __device__ size_t next(size_t jt)
    {
        jt = own(jt + 1);
        next_dot = jt < jt1 && dot_tile(jt);
        return jt;
    }
    __device__ void issue(int b, size_t jt, size_t l0, bool)
    {
        const bool form = l0 == 0 ? next_dot : dot;
        Tile::template issue<Tile::XPER>(sm.xs[b], form ? ctr.x : x, row0, m, d, l0);
        Tile::template issue<Tile::YPER>(sm.ys[b], form ? ctr.y : y, jt * Tile::BN, n, d, l0);
        const int tid = threadIdx.x;
        if (tid < Tile::BN) {
            const size_t j = jt * Tile::BN + tid;
            cuda_cp_async(&ws[b][tid], j < n ? w + j : w, j < n);
            cuda_cp_async(&bs[b][tid], j < n ? ctr.b + j : ctr.b, j < n);
        }
    }
    __device__ void compute(int b, int lmax, bool init)
    {
        if (dot)
            Tile::accumulate_dot(dist, sm.xs[b], sm.ys[b], lmax, Tile::tx(), Tile::ty(), init);
        else
            Tile::accumulate(dist, sm.xs[b], sm.ys[b], lmax, Tile::tx(), Tile::ty(), init);
    }
    /* The row sums of the tile. Padding columns are masked; in the inner-product form a pair
     * whose exponent reaches GK_MATVEC_DOT_REDO sends the tile's rows through
     * cuda_matvec_dot_row (rare: near-identical rows only). */
    __device__ void finish(int b, size_t jt)
    {
        const int tx = Tile::tx(), ty = Tile::ty();
        float wv[S::TN];
        Tile::columns(wv, ws[b], tx);
        const size_t col0 = jt * Tile::BN;
        const bool full = col0 + Tile::BN <= n;
        if (dot) {
            /* a_i from memory (L1) once per tile rather than held: the inner-product loop
             * needs the registers. */
            float bv[S::TN], ps[S::TM], a[S::TM];
            Tile::columns(bv, bs[b], tx);
#pragma unroll
            for (int i = 0; i < S::TM; i++) {
                const size_t row = row0 + Tile::lane_index(i, ty);
                a[i] = row < m ? ctr.a[row] : 0.0f;
            }
            float tmax = -INFINITY;
#pragma unroll
            for (int i = 0; i < S::TM; i++) {
                float p = 0.0f;
#pragma unroll
                for (int j = 0; j < S::TN; j++) {
                    const float t = fmaf(k2, dist[i][j], a[i] + bv[j]);
                    tmax = fmaxf(tmax, t);
                    if (full || col0 + Tile::lane_index(j, tx) < n)
                        p = fmaf(cuda_ex2(t), wv[j], p);
                }
                ps[i] = p;
            }
            if (tmax >= GK_MATVEC_DOT_REDO) {
#pragma unroll
                for (int i = 0; i < S::TM; i++) {
                    const size_t row = row0 + Tile::lane_index(i, ty);
                    if (row < m)
                        ps[i] = cuda_matvec_dot_row<Tile>(ctr, x + row * d, ctr.x + row * d, y, w,
                                                          col0, tx, n, d, a[i], k2, c);
                }
            }
#pragma unroll
            for (int i = 0; i < S::TM; i++)
                acc.add(i, ps[i]);
        } else {
#pragma unroll
            for (int i = 0; i < S::TM; i++) {
                float p = 0.0f;
#pragma unroll
                for (int j = 0; j < S::TN; j++)
                    if (full || col0 + Tile::lane_index(j, tx) < n)
                        p = fmaf(cuda_rbf_value<false>(dist[i][j], c), wv[j], p);
                acc.add(i, p);
            }
        }
        if (++pending == GK_MATVEC_TILED_FLUSH) {
            acc.flush();
            pending = 0;
        }
        dot = next_dot;
    }
};

/* Block b: row tile b / splits against column tiles [sp * tps, (sp + 1) * tps), as
 * cuda_rbf_matvec_tiled, less those of the tensor-core form where tc_ecoef > 0 (see the form).
 * Outputs: out[] where partial is NULL (one split, no tensor-core form), else a double per row
 * in partial[sp * m + row]. c = -gamma log2(e), k2 = -2c, ecoef = (2d + 11) u gamma. */
template <int BK>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matvec_dot(size_t m, size_t n, size_t d, float c, float k2, float ecoef,
                        float tc_ecoef, const float *__restrict__ x, const float *__restrict__ y,
                        const float *__restrict__ w, cuda_matvec_centered ctr, unsigned int splits,
                        size_t tps, float *__restrict__ out, double *__restrict__ partial)
{
    typedef cuda_matvec_dot_form<BK> Form;
    typedef typename Form::Tile Tile;
    __shared__ typename Tile::smem sm;
    __shared__ __align__(16) float ws[2][Tile::BN];
    __shared__ __align__(16) float bs[2][Tile::BN];
    __shared__ typename Form::Acc::shared accsh;

    const size_t rt = blockIdx.x / splits;
    const unsigned int sp = blockIdx.x % splits;
    const size_t ntiles = (n + Tile::BN - 1) / Tile::BN;
    const size_t jt0 = (size_t)sp * tps;
    const size_t jt1 = jt0 + tps < ntiles ? jt0 + tps : ntiles;
    Form f{sm, ws, bs, m, n, d, rt * Tile::BM, jt0, jt1, c, k2, ecoef, tc_ecoef, ctr.gx[rt],
           x,  y,  w,  ctr, false, false, 0, {}, {}};
    const size_t first = f.own(jt0);
    f.dot = f.next_dot = first < jt1 && f.dot_tile(first);
    f.acc.init(accsh);
    cuda_rbf_steps<BK>(f, first, d);
    f.acc.flush();

#pragma unroll
    for (int i = 0; i < Form::S::TM; i++) {
        double v = f.acc.total(i);
        size_t row = f.row0 + Tile::lane_index(i, Tile::ty());
        if (Tile::tx() == 0 && row < m) {
            if (partial == nullptr)
                out[row] = (float)v;
            else
                partial[(size_t)sp * m + row] = v;
        }
    }
}

#endif /* GK_CUDA_RBF_MATVEC_DOT_CUH */
