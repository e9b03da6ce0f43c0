/* SPDX-License-Identifier: MIT */
/* rbf_matrix.cu - k[i*n + j] = exp(-gamma ||x_i - y_j||^2): the tiled and dot forms, and the
 * call's dispatch on the planner's form (plan.h). */
#include <cmath>
#include <type_traits>

#include "plan.h"
#include "rbf_center.cuh"
#include "rbf_tc.cuh"
#include "rbf_tile.cuh"

/* The tiles of an m x n output in row-major order (consecutive blocks share their x rows in
 * L2), block b taking tiles b, b + gridDim.x, ... (the grid covers them all but for outputs no
 * memory holds). A tile is named by (row tile << 32 | column tile), so stepping needs no
 * division; the host keeps row tiles below 2^32 - 1 and column tiles below 2^31, so neither
 * sum in next() wraps (a row tile past mtiles ends the loop). */
struct cuda_rbf_tile_order {
    unsigned int mtiles, ntiles, step_r, step_c;

    __device__ cuda_rbf_tile_order(size_t m, size_t n, int bm, int bn)
        : mtiles((unsigned int)((m + bm - 1) / bm)), ntiles((unsigned int)((n + bn - 1) / bn)),
          step_r(gridDim.x / ntiles), step_c(gridDim.x % ntiles)
    {
    }
    __device__ size_t first() const
    {
        return (size_t)(blockIdx.x / ntiles) << 32 | (blockIdx.x % ntiles);
    }
    static __device__ unsigned int row(size_t t)
    {
        return (unsigned int)(t >> 32);
    }
    static __device__ unsigned int col(size_t t)
    {
        return (unsigned int)t;
    }
    __device__ bool has(size_t t) const
    {
        return row(t) < mtiles;
    }
    __device__ size_t next(size_t t) const
    {
        unsigned int r = row(t) + step_r, c = col(t) + step_c;
        if (c >= ntiles) {
            c -= ntiles;
            r++;
        }
        return (size_t)r << 32 | c;
    }
};
/* The direct epilogue: each thread stores its own values (vectors where the rows allow).
 * Stores stream past L2 (__stcs): the output is written once and would otherwise evict the x
 * and y rows that every block re-reads. A whole tile with aligned rows (every tile but those of
 * the last row and column) takes one pointer step per row and constant column offsets, with
 * no bounds tests: the epilogue's address arithmetic otherwise costs about as many
 * instructions as its exponentials. */
template <typename T, bool CHECK, typename Tile>
__device__ __forceinline__ void
cuda_rbf_store_direct(const T (&acc)[cuda_rbf_shape<T>::TM][cuda_rbf_shape<T>::TN], T c,
                      size_t row0, size_t col0, size_t m, size_t n, T *__restrict__ k,
                      bool vec_store)
{
    const int W = Tile::W;
    const int tx = Tile::tx(), ty = Tile::ty();
    if (vec_store && row0 + Tile::BM <= m && col0 + Tile::BN <= n) {
        T *krow = k + (row0 + Tile::lane_index(0, ty)) * n + col0 + Tile::lane_index(0, tx);
#pragma unroll
        for (int i = 0; i < cuda_rbf_shape<T>::TM; i++) {
            if (i > 0)
                krow += (size_t)(Tile::lane_index(i, 0) - Tile::lane_index(i - 1, 0)) * n;
#pragma unroll
            for (int g = 0; g < cuda_rbf_shape<T>::TN / W; g++) {
                T v[W];
#pragma unroll
                for (int e = 0; e < W; e++)
                    v[e] = cuda_rbf_value<CHECK>(acc[i][g * W + e], c);
                __stcs((typename Tile::V::type *)(krow + Tile::lane_index(g * W, 0)),
                       Tile::V::pack(v));
            }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < cuda_rbf_shape<T>::TM; i++) {
        size_t row = row0 + Tile::lane_index(i, ty);
        if (row >= m)
            continue;
        T *krow = k + row * n;
#pragma unroll
        for (int g = 0; g < cuda_rbf_shape<T>::TN / W; g++) {
            size_t col = col0 + Tile::lane_index(g * W, tx);
            T v[W];
#pragma unroll
            for (int e = 0; e < W; e++)
                v[e] = cuda_rbf_value<CHECK>(acc[i][g * W + e], c);
            if (vec_store && col + W <= n) {
                __stcs((typename Tile::V::type *)(krow + col), Tile::V::pack(v));
            } else {
#pragma unroll
                for (int e = 0; e < W; e++)
                    if (col + e < n)
                        __stcs(krow + col + e, v[e]);
            }
        }
    }
}

/* rbf_matrix from differences, as a form of cuda_rbf_steps over the tiles in row-major order. */
template <typename T, int BK, bool CHECK> struct cuda_rbf_matrix_form {
    typedef cuda_rbf_shape<T> S;
    typedef cuda_rbf_tile<T, S::TM, S::TN, BK> Tile;
    typename Tile::smem &sm;
    cuda_rbf_tile_order order;
    size_t m, n, d;
    T c;
    const T *__restrict__ x;
    const T *__restrict__ y;
    T *__restrict__ k;
    bool vec_store;
    /* The staging addresses of the tile being copied, set at its first chunk (the steps copy a
     * tile's chunks in order, before the next tile's). */
    typename Tile::staged xst, yst;
    T acc[S::TM][S::TN];

    __device__ bool has(size_t t) const
    {
        return order.has(t);
    }
    __device__ size_t next(size_t t) const
    {
        return order.next(t);
    }
    __device__ void issue(int b, size_t t, size_t l0, bool)
    {
        size_t row0 = (size_t)order.row(t) * Tile::BM, col0 = (size_t)order.col(t) * Tile::BN;
        if (l0 == 0) {
            xst = Tile::template stage<Tile::XPER>(x, row0, m, d);
            yst = Tile::template stage<Tile::YPER>(y, col0, n, d);
        }
        if (xst.ok)
            Tile::template issue_staged<Tile::XPER>(sm.xs[b], xst, x, d, l0);
        else
            Tile::template issue<Tile::XPER>(sm.xs[b], x, row0, m, d, l0);
        if (yst.ok)
            Tile::template issue_staged<Tile::YPER>(sm.ys[b], yst, y, d, l0);
        else
            Tile::template issue<Tile::YPER>(sm.ys[b], y, col0, n, d, l0);
    }
    __device__ void compute(int b, int lmax, bool init)
    {
        Tile::accumulate(acc, sm.xs[b], sm.ys[b], lmax, Tile::tx(), Tile::ty(), init);
    }
    __device__ void finish(int, size_t t)
    {
        cuda_rbf_store_direct<T, CHECK, Tile>(acc, c, (size_t)order.row(t) * Tile::BM,
                                              (size_t)order.col(t) * Tile::BN, m, n, k, vec_store);
    }
};

/* One block per tile (a grid-stride loop past the grid's limit). */
template <typename T, int BK, bool CHECK>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matrix(size_t m, size_t n, size_t d, T c, const T *__restrict__ x,
                    const T *__restrict__ y, T *__restrict__ k, bool vec_store)
{
    typedef cuda_rbf_matrix_form<T, BK, CHECK> Form;
    __shared__ typename Form::Tile::smem sm;
    cuda_rbf_tile_order order(m, n, Form::Tile::BM, Form::Tile::BN);
    Form f{sm, order, m, n, d, c, x, y, k, vec_store, {}, {}, {}};
    cuda_rbf_steps<BK>(f, order.first(), d);
}

/* The inner-product form (float32): ||x_i - y_j||^2 = nx_i + ny_j - 2 x~_i.y~_j on rows
 * centered by cuda_rbf_center, one FMA per pair and feature where the differences take two.
 * Its rounding error is at most (2d + 8) u (nx_i + ny_j) (u = 2^-24: the dot product and the
 * norms d u each, the centering and the final sums a few u), which moves K by at most
 * gamma times that. A tile takes this form only where that is within GK_RBF_DOT_MAX_ERROR for
 * its largest norms (bound = (2d + 8) u gamma); other tiles, and every tile of data with
 * non-finite values, compute differences of the raw rows as cuda_rbf_matrix does. */
#define GK_RBF_DOT_MAX_ERROR 4e-6f

/* The inner-product epilogue: distances from the norms, clamped at 0, stored as the direct
 * epilogue stores; then the entries whose computed distance is within its error bound of 0
 * (identical rows among them, which must give exactly 1) are recomputed from differences and
 * stored again (rare: a bit mask keeps them, so the tile's registers are free by then). */
template <typename Tile>
__device__ __forceinline__ void
cuda_rbf_store_dot(float (&acc)[8][8], float c, float kdelta, size_t row0, size_t col0, size_t m,
                   size_t n, size_t d, const float *__restrict__ x, const float *__restrict__ y,
                   const cuda_rbf_centered &ctr, bool vec_store, float *__restrict__ k)
{
    const int tx = Tile::tx(), ty = Tile::ty();
    float ny[8];
#pragma unroll
    for (int j = 0; j < 8; j++) {
        size_t col = col0 + Tile::lane_index(j, tx);
        ny[j] = col < n ? ctr.ny[col] : 0.0f;
    }
    unsigned long long redo = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        size_t row = row0 + Tile::lane_index(i, ty);
        float nx = row < m ? ctr.nx[row] : 0.0f;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            float t = nx + ny[j];
            float dist = fmaxf(fmaf(-2.0f, acc[i][j], t), 0.0f);
            if (dist <= kdelta * t)
                redo |= 1ull << (i * 8 + j);
            acc[i][j] = dist;
        }
    }
    cuda_rbf_store_direct<float, false, Tile>(acc, c, row0, col0, m, n, k, vec_store);
    while (redo != 0) {
        int b = __ffsll((long long)redo) - 1;
        redo &= redo - 1;
        size_t row = row0 + Tile::lane_index(b / 8, ty), col = col0 + Tile::lane_index(b % 8, tx);
        if (row < m && col < n)
            __stcs(k + row * n + col,
                   cuda_rbf_value<false>(cuda_rbf_exact_distance(x + row * d, y + col * d, d), c));
    }
}

/* The inner-product kernel as a form of cuda_rbf_steps: the tiles in row-major order, each computed
 * in the inner-product form from the centered rows where its bound allows (dot), else from
 * differences of the raw rows, uniformly for the block (every thread reads the same two group
 * bounds); c is finite here. */
struct cuda_rbf_dot_form {
    typedef cuda_rbf_tile<float, 8, 8, GK_RBF_BK> Tile;
    static_assert(Tile::BM == GK_RBF_GROUP && Tile::BN == GK_RBF_GROUP, "one bound per tile");
    typename Tile::smem &sm;
    cuda_rbf_tile_order order;
    size_t m, n, d;
    float c, bound, kdelta;
    const float *__restrict__ x;
    const float *__restrict__ y;
    cuda_rbf_centered ctr;
    float *__restrict__ k;
    bool vec_store;
    /* The form of the tile being computed, and of the next tile (set by next(), before the
     * barrier, so the load of its bounds overlaps the wait). */
    bool dot, next_dot;
    /* As in cuda_rbf_matrix_form. */
    typename Tile::staged xst, yst;
    float acc[8][8];

    __device__ bool dot_tile(size_t t) const
    {
        return bound * (ctr.gx[order.row(t)] + ctr.gy[order.col(t)]) <= GK_RBF_DOT_MAX_ERROR;
    }
    __device__ bool has(size_t t) const
    {
        return order.has(t);
    }
    __device__ size_t next(size_t t)
    {
        size_t next_t = order.next(t);
        next_dot = order.has(next_t) && dot_tile(next_t);
        return next_t;
    }
    __device__ void issue(int b, size_t t, size_t l0, bool)
    {
        bool form = l0 == 0 ? next_dot : dot;
        const float *xp = form ? ctr.x : x, *yp = form ? ctr.y : y;
        size_t row0 = (size_t)order.row(t) * Tile::BM, col0 = (size_t)order.col(t) * Tile::BN;
        if (l0 == 0) {
            xst = Tile::template stage<Tile::XPER>(xp, row0, m, d);
            yst = Tile::template stage<Tile::YPER>(yp, col0, n, d);
        }
        if (xst.ok)
            Tile::template issue_staged<Tile::XPER>(sm.xs[b], xst, xp, d, l0);
        else
            Tile::template issue<Tile::XPER>(sm.xs[b], xp, row0, m, d, l0);
        if (yst.ok)
            Tile::template issue_staged<Tile::YPER>(sm.ys[b], yst, yp, d, l0);
        else
            Tile::template issue<Tile::YPER>(sm.ys[b], yp, col0, n, d, l0);
    }
    __device__ void compute(int b, int lmax, bool init)
    {
        if (dot)
            Tile::accumulate_dot(acc, sm.xs[b], sm.ys[b], lmax, Tile::tx(), Tile::ty(), init);
        else
            Tile::accumulate(acc, sm.xs[b], sm.ys[b], lmax, Tile::tx(), Tile::ty(), init);
    }
    __device__ void finish(int, size_t t)
    {
        size_t row0 = (size_t)order.row(t) * Tile::BM, col0 = (size_t)order.col(t) * Tile::BN;
        if (dot)
            cuda_rbf_store_dot<Tile>(acc, c, kdelta, row0, col0, m, n, d, x, y, ctr, vec_store, k);
        else
            cuda_rbf_store_direct<float, false, Tile>(acc, c, row0, col0, m, n, k, vec_store);
        dot = next_dot;
    }
};

/* A block whose (first) tile the bound rejects runs the differences form, with none of the
 * inner-product form's per-chunk choices in its loop: data the bound rejects then costs what
 * the differences kernel costs. A later tile of such a block (only for outputs no memory holds)
 * is computed from differences too, which is exact for every tile. */
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matrix_dot(size_t m, size_t n, size_t d, float c, float bound, float kdelta,
                        const float *__restrict__ x, const float *__restrict__ y,
                        cuda_rbf_centered ctr, float *__restrict__ k, bool vec_store)
{
    typedef cuda_rbf_dot_form::Tile Tile;
    typedef cuda_rbf_matrix_form<float, GK_RBF_BK, false> Diff;
    __shared__ union {
        Tile::smem dot;
        Diff::Tile::smem diff;
    } sm;
    cuda_rbf_tile_order order(m, n, Tile::BM, Tile::BN);
    cuda_rbf_dot_form f{sm.dot, order, m, n, d, c, bound, kdelta, x, y, ctr, k, vec_store};
    f.dot = f.next_dot = f.dot_tile(order.first());
    if (f.dot) {
        cuda_rbf_steps<GK_RBF_BK>(f, order.first(), d);
    } else {
        Diff g{sm.diff, order, m, n, d, c, x, y, k, vec_store, {}, {}, {}};
        cuda_rbf_steps<GK_RBF_BK>(g, order.first(), d);
    }
}

/* The dot form: centring, then the kernel, one block per tile. Its rounding error is at most
 * kdelta (nx_i + ny_j), kdelta = (2d + 8) u (cuda_rbf_dot_form). */
static gk_status cuda_rbf_matrix_dot_run(gk_cuda_state *s, size_t m, size_t n, size_t d,
                                         double gamma, float c, const float *x, const float *y,
                                         float *k, unsigned int blocks, bool vec_store)
{
    const double kdelta = (2.0 * (double)d + 8.0) * 0x1p-24, bound = kdelta * gamma;
    cuda_rbf_centered ctr;
    gk_status r = gk__cuda_rbf_center(s, m, n, d, x, y, &ctr);
    if (r != GK_OK)
        return r;
    cuda_rbf_matrix_dot<<<blocks, GK_CUDA_THREADS, 0, s->stream>>>(
        m, n, d, c, (float)bound, (float)kdelta, x, y, ctr, k, vec_store);
    return gk__cuda_launched("cuda_rbf_matrix_dot");
}

template <typename T>
static gk_status cuda_rbf_matrix_run(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                                     const T *x, const T *y, T *k)
{
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    const size_t bm = cuda_rbf_shape<T>::BM, bn = cuda_rbf_shape<T>::BN;
    size_t ntiles = (n + bn - 1) / bn, mtiles = (m + bm - 1) / bm;
    /* cuda_rbf_tile_order's limits (far beyond any memory's output). */
    if (ntiles > GK_CUDA_GRID_X_MAX || mtiles >= 0xffffffffu)
        return gk__cuda_error(GK_E_UNSUPPORTED, "m (%zu) or n (%zu) exceeds the tile grid's limit",
                              m, n);
    size_t tiles = mtiles * ntiles;
    unsigned int grid = (unsigned int)(tiles < GK_CUDA_GRID_X_MAX ? tiles : GK_CUDA_GRID_X_MAX);
    /* Rows start on a 16-byte boundary only when n is a multiple of the vector width. */
    bool vec_store = n % gk_cuda_vec<T>::width == 0 && (uintptr_t)k % 16 == 0;
    T c = cuda_rbf_constant(gamma, T(0));
    const cuda_rbf_plan plan =
        gk__cuda_rbf_plan_matrix(s, sizeof(T) == 4 ? GK_FLOAT32 : GK_FLOAT64, m, n, d, gamma);
    gk__cuda_rbf_log(s, "rbf_matrix", m, n, d, plan);
    if constexpr (std::is_same<T, float>::value) {
        if (plan.form == CUDA_RBF_MATRIX_TC)
            return gk__cuda_rbf_matrix_tc(s, m, n, d, gamma, !plan.forced, x, y, k);
        if (plan.form == CUDA_RBF_MATRIX_DOT)
            return cuda_rbf_matrix_dot_run(s, m, n, d, gamma, c, x, y, k, grid, vec_store);
    }
    cudaStream_t st = s->stream;
    bool check = gk__rbf_needs_zero_test(c);
    if (d <= GK_RBF_SMALL_BK && check)
        cuda_rbf_matrix<T, GK_RBF_SMALL_BK, true>
            <<<grid, GK_CUDA_THREADS, 0, st>>>(m, n, d, c, x, y, k, vec_store);
    else if (d <= GK_RBF_SMALL_BK)
        cuda_rbf_matrix<T, GK_RBF_SMALL_BK, false>
            <<<grid, GK_CUDA_THREADS, 0, st>>>(m, n, d, c, x, y, k, vec_store);
    else if (check)
        cuda_rbf_matrix<T, GK_RBF_BK, true>
            <<<grid, GK_CUDA_THREADS, 0, st>>>(m, n, d, c, x, y, k, vec_store);
    else
        cuda_rbf_matrix<T, GK_RBF_BK, false>
            <<<grid, GK_CUDA_THREADS, 0, st>>>(m, n, d, c, x, y, k, vec_store);
    return gk__cuda_launched("cuda_rbf_matrix");
}

gk_status gk__cuda_rbf_matrix(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                              const void *x, const void *y, void *k)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    if (t == GK_FLOAT32)
        return cuda_rbf_matrix_run<float>(s, m, n, d, gamma, (const float *)x, (const float *)y,
                                          (float *)k);
    if (t == GK_FLOAT64)
        return cuda_rbf_matrix_run<double>(s, m, n, d, gamma, (const double *)x, (const double *)y,
                                           (double *)k);
    return gk__cuda_bad_dtype(t);
}
