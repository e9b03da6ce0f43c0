/* SPDX-License-Identifier: MIT */
/* cuda_rbf_matrix.cu - k[i*n + j] = exp(-gamma ||x_i - y_j||^2), a register-tiled kernel. */
#include <cmath>

#include "cuda_rbf_center.cuh"
#include "cuda_rbf_quads.cuh"
#include "cuda_rbf_tc.cuh"
#include "cuda_rbf_tile.cuh"

/* The tiles of an m x n output in row-major order (consecutive blocks share their x rows in
 * L2), block b taking tiles b, b + gridDim.x, ... (the grid covers them all but for outputs no
 * memory holds). A tile is named by (row tile << 32 | column tile), so stepping needs no
 * division; the host keeps row tiles below 2^32 - 1 and column tiles below 2^31, so neither
 * sum in next() wraps (a row tile past mtiles ends the loop). With GRID2D a 2-D grid
 * (cuda_rbf_tile_grid) is one block per tile, (blockIdx.y, blockIdx.x), without the 1-D
 * order's divisions; the kernels of the quad tile take this order (compiled with the 1-D one
 * alone, the inner-product kernel with that tile spilled 15 times as much). */
template <bool GRID2D> struct cuda_rbf_tile_order_t {
    unsigned int mtiles, ntiles, step_r, step_c;

    __device__ cuda_rbf_tile_order_t(size_t m, size_t n, int bm, int bn)
        : mtiles((unsigned int)((m + bm - 1) / bm)), ntiles((unsigned int)((n + bn - 1) / bn))
    {
        if (GRID2D && gridDim.y > 1) {
            step_r = mtiles;
            step_c = 0;
        } else {
            step_r = gridDim.x / ntiles;
            step_c = gridDim.x % ntiles;
        }
    }
    __device__ size_t first() const
    {
        if (GRID2D && gridDim.y > 1)
            return (size_t)blockIdx.y << 32 | blockIdx.x;
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
typedef cuda_rbf_tile_order_t<false> cuda_rbf_tile_order;

/* The launch grid of cuda_rbf_tile_order_t<true> for a 1-D grid of `grid` blocks over the tiles
 * of an m x n output: 2-D, one block per tile, where that grid covers every tile and the row
 * tiles fit gridDim.y. */
static dim3 cuda_rbf_tile_grid(unsigned int grid, size_t m, size_t n, size_t bm, size_t bn)
{
    size_t mt = (m + bm - 1) / bm, nt = (n + bn - 1) / bn;
    if (mt > 1 && mt <= 65535 && (size_t)grid == mt * nt)
        return dim3((unsigned int)nt, (unsigned int)mt);
    return dim3(grid);
}

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

/* rbf_matrix from differences, as a form of cuda_rbf_steps over the tiles of Order. */
template <typename T, int BK, bool CHECK, typename Order = cuda_rbf_tile_order>
struct cuda_rbf_matrix_form {
    typedef cuda_rbf_shape<T> S;
    typedef cuda_rbf_tile<T, S::TM, S::TN, BK> Tile;
    typename Tile::smem &sm;
    Order order;
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

/* float32 rbf_matrix from differences on rows of whole aligned quads (cuda_rbf_qtile), as a
 * form of cuda_rbf_steps over the tiles of cuda_rbf_tile_order_t<true>. */
template <int CQ, bool CHECK> struct cuda_rbf_matrix_qform {
    typedef cuda_rbf_qtile<CQ> Tile;
    typename Tile::smem &sm;
    cuda_rbf_tile_order_t<true> order;
    size_t m, n, d;
    float c;
    const float4 *__restrict__ x;
    const float4 *__restrict__ y;
    float *__restrict__ k;
    bool vec_store;
    /* The caller's, not initialized: every tile's first chunk assigns them (a member would be
     * value-initialized, 32 instructions per block that the compiler cannot drop). */
    float (&acc)[8][8];

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
        Tile::template issue<false>(sm.xs[b], x, row0, m, d / 4, l0 / 4);
        Tile::template issue<true>(sm.ys[b], y, col0, n, d / 4, l0 / 4);
    }
    __device__ void compute(int b, int, bool init)
    {
        Tile::accumulate(acc, sm.xs[b], sm.ys[b], Tile::tx(), Tile::ty(), init);
    }
    __device__ void finish(int, size_t t)
    {
        cuda_rbf_store_direct<float, CHECK, Tile>(acc, c, (size_t)order.row(t) * Tile::BM,
                                                  (size_t)order.col(t) * Tile::BN, m, n, k,
                                                  vec_store);
    }
};

/* The chunk in quads of the quad tile for float32 rows of d features at x and y and an n-column
 * output k: 5 for d = 20 (one chunk, no zero features) where the rows are 16-byte aligned and
 * the output takes vector stores, else 0 (the transposed tile). Only where it was measured
 * faster on the H200: chunks of 2, 3 and 4 quads, padded chunks, several chunks and outputs of
 * scalar stores were slower than the transposed tile, or not measured against main's. */
static int cuda_rbf_quad_chunk(size_t d, size_t n, const float *x, const float *y, const float *k)
{
    bool aligned = (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0 && (uintptr_t)k % 16 == 0;
    return d == 20 && n % 4 == 0 && aligned ? 5 : 0;
}

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

/* The inner-product kernel as a form of cuda_rbf_steps: the tiles of Order, each computed in
 * the inner-product form from the centered rows where its bound allows (dot), else from
 * differences of the raw rows, uniformly for the block (every thread reads the same two group
 * bounds); c is finite here. */
template <typename Order = cuda_rbf_tile_order> struct cuda_rbf_dot_form {
    typedef cuda_rbf_tile<float, 8, 8, GK_RBF_BK> Tile;
    static_assert(Tile::BM == GK_RBF_GROUP && Tile::BN == GK_RBF_GROUP, "one bound per tile");
    typename Tile::smem &sm;
    Order order;
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

/* A block whose (first) tile the bound rejects runs a differences form (the quad tile's,
 * cuda_rbf_matrix_qform, for CQ > 0, else cuda_rbf_matrix's), with none of the inner-product
 * form's per-chunk choices in its loop: data the bound rejects then costs what the differences
 * kernel costs. A later tile of such a block is computed from differences too, which is exact
 * for every tile (a block has one tile, but for outputs no memory holds, except under
 * cuda_rbf_matrix_dot_launch's tiles per block for CQ > 0). */
template <int CQ>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matrix_dot(size_t m, size_t n, size_t d, float c, float bound, float kdelta,
                        const float *__restrict__ x, const float *__restrict__ y,
                        cuda_rbf_centered ctr, float *__restrict__ k, bool vec_store)
{
    typedef cuda_rbf_tile_order_t<(CQ > 0)> Order;
    typedef typename cuda_rbf_dot_form<Order>::Tile Tile;
    typedef cuda_rbf_matrix_form<float, GK_RBF_BK, false, Order> Diff;
    typedef cuda_rbf_matrix_qform<CQ == 0 ? 2 : CQ, false> Quads;
    __shared__ union {
        typename Tile::smem dot;
        typename Diff::Tile::smem diff;
        typename Quads::Tile::smem quads;
    } sm;
    Order order(m, n, Tile::BM, Tile::BN);
    cuda_rbf_dot_form<Order> f{sm.dot, order, m, n, d, c, bound, kdelta, x, y, ctr, k, vec_store};
    f.dot = f.next_dot = f.dot_tile(order.first());
    if (f.dot) {
        cuda_rbf_steps<GK_RBF_BK>(f, order.first(), d);
    } else if constexpr (CQ > 0) {
        float acc[8][8] = {};
        Quads g{sm.quads,          order, m,         n,  d, c, (const float4 *)x,
                (const float4 *)y, k,     vec_store, acc};
        cuda_rbf_steps<Quads::Tile::BK>(g, order.first(), d);
    } else {
        Diff g{sm.diff, order, m, n, d, c, x, y, k, vec_store, {}, {}, {}};
        cuda_rbf_steps<GK_RBF_BK>(g, order.first(), d);
    }
}

/* Launches cuda_rbf_matrix_dot with the differences form of chunk cq (cuda_rbf_quad_chunk) on
 * `grid` blocks (one per tile). With the quad tile a tile of d = 20 is short enough that a
 * block's start (its group bounds, then its first copies) shows: from 8 tiles per SM on, a
 * block takes 4 tiles (cuda_rbf_steps copies each next tile while computing the current one);
 * on the H200 at 16384^2 x 20 that measured 545 us against 554 one per tile at gamma = 0.5 and
 * 532 against 529 at gamma = 1/d. Fewer tiles run one per block on a 2-D grid. */
static void cuda_rbf_matrix_dot_launch(gk_cuda_state *s, int cq, unsigned int grid, size_t m,
                                       size_t n, size_t d, float c, float bound, float kdelta,
                                       const float *x, const float *y, cuda_rbf_centered ctr,
                                       float *k, bool vec_store)
{
    cudaStream_t st = s->stream;
    if (cq == 0) {
        cuda_rbf_matrix_dot<0>
            <<<grid, GK_CUDA_THREADS, 0, st>>>(m, n, d, c, bound, kdelta, x, y, ctr, k, vec_store);
        return;
    }
    typedef cuda_rbf_dot_form<cuda_rbf_tile_order_t<true>>::Tile Tile;
    dim3 g = (size_t)grid >= 8 * (size_t)s->sm_count
                 ? dim3((grid + 3) / 4)
                 : cuda_rbf_tile_grid(grid, m, n, Tile::BM, Tile::BN);
    cuda_rbf_matrix_dot<5>
        <<<g, GK_CUDA_THREADS, 0, st>>>(m, n, d, c, bound, kdelta, x, y, ctr, k, vec_store);
}

/* float32 rbf_matrix in the inner-product form where it can be (see above): 1 when launched
 * (*r: the status), 0 when the caller should run the differences kernel instead. Only for a
 * positive, finite gamma (others need no speed and every special case stays in one kernel),
 * 4 < d <= GK_RBF_DOT_MAX_D, and outputs large enough that the centering launch does not
 * show. */
#define GK_RBF_DOT_MIN_ENTRIES (1u << 20)
/* Above this many features the bound exceeds GK_RBF_DOT_MAX_ERROR for data of ordinary spread
 * (it grows with d twice: in the factor and in the norms), so every tile would fall back and
 * the centering pass would be wasted. */
#define GK_RBF_DOT_MAX_D 128
static int cuda_rbf_matrix_try_dot(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                                   float c, const float *x, const float *y, float *k,
                                   unsigned int blocks, bool vec_store, gk_status *r)
{
    const double u = 0x1p-24;
    double kdelta = (2.0 * (double)d + 8.0) * u, bound = kdelta * gamma;
    size_t groups = (m + GK_RBF_GROUP - 1) / GK_RBF_GROUP + (n + GK_RBF_GROUP - 1) / GK_RBF_GROUP;
    if (d <= GK_RBF_SMALL_BK || d > GK_RBF_DOT_MAX_D || !(gamma > 0.0) || !std::isfinite(c) ||
        !(bound < 1.0) || (double)m * (double)n < GK_RBF_DOT_MIN_ENTRIES ||
        groups > GK_CUDA_GRID_X_MAX)
        return 0;
    cuda_rbf_centered ctr;
    *r = gk__cuda_rbf_center(s, m, n, d, x, y, &ctr);
    if (*r != GK_OK)
        return 1;
    cuda_rbf_matrix_dot_launch(s, cuda_rbf_quad_chunk(d, n, x, y, k), blocks, m, n, d, c,
                               (float)bound, (float)kdelta, x, y, ctr, k, vec_store);
    *r = gk__cuda_launched("cuda_rbf_matrix_dot");
    return 1;
}
static int cuda_rbf_matrix_try_dot(gk_cuda_state *, size_t, size_t, size_t, double, double,
                                   const double *, const double *, double *, unsigned int, bool,
                                   gk_status *)
{
    return 0; /* float64: cancellation would cost more accuracy than the FMAs it saves */
}

/* The tensor-core form (cuda_rbf_tc.cu) comes first where it applies: float32 only (float64
 * has no tensor-core path of comparable accuracy). */
static int cuda_rbf_matrix_try_tc(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                                  const float *x, const float *y, float *k, gk_status *r)
{
    return gk__cuda_rbf_matrix_tc(s, m, n, d, gamma, x, y, k, r);
}
static int cuda_rbf_matrix_try_tc(gk_cuda_state *, size_t, size_t, size_t, double, const double *,
                                  const double *, double *, gk_status *)
{
    return 0;
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
    bool check = gk__rbf_needs_zero_test(c);
    if (cuda_rbf_matrix_try_tc(s, m, n, d, gamma, x, y, k, &r))
        return r;
    if (cuda_rbf_matrix_try_dot(s, m, n, d, gamma, c, x, y, k, grid, vec_store, &r))
        return r;
    cudaStream_t st = s->stream;
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
