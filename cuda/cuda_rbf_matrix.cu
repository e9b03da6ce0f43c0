/* SPDX-License-Identifier: MIT */
/* cuda_rbf_matrix.cu - k[i*n + j] = exp(-gamma ||x_i - y_j||^2), a register-tiled kernel. */
#include <cmath>

#include "cuda_rbf_center.cuh"
#include "cuda_rbf_tc.cuh"
#include "cuda_rbf_tile.cuh"

/* The direct epilogue: each thread stores its own values (vectors where the rows allow).
 * Stores stream past L2 (__stcs): the output is written once and would otherwise evict the x
 * and y rows that every block re-reads. */
template <typename T, bool CHECK, typename Tile>
__device__ __forceinline__ void
cuda_rbf_store_direct(const T (&acc)[cuda_rbf_shape<T>::TM][cuda_rbf_shape<T>::TN], T c,
                      size_t row0, size_t col0, size_t m, size_t n, T *__restrict__ k,
                      bool vec_store)
{
    const int W = Tile::W;
    const int tx = Tile::tx(), ty = Tile::ty();
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

/* rbf_matrix from differences, as a form of cuda_rbf_steps: the block's tiles are the row tiles
 * blockIdx.y, + gridDim.y, ... against its column tile blockIdx.x. */
template <typename T, int BK, bool CHECK> struct cuda_rbf_matrix_form {
    typedef cuda_rbf_shape<T> S;
    typedef cuda_rbf_tile<T, S::TM, S::TN, BK> Tile;
    typename Tile::smem &sm;
    size_t m, n, d, col0, mtiles;
    T c;
    const T *__restrict__ x;
    const T *__restrict__ y;
    T *__restrict__ k;
    bool vec_store;
    T acc[S::TM][S::TN];

    __device__ bool has(size_t rt) const
    {
        return rt < mtiles;
    }
    __device__ size_t next(size_t rt) const
    {
        return rt + gridDim.y;
    }
    __device__ void issue(int b, size_t rt, size_t l0, bool)
    {
        Tile::template issue<Tile::XPER>(sm.xs[b], x, rt * Tile::BM, m, d, l0);
        Tile::template issue<Tile::YPER>(sm.ys[b], y, col0, n, d, l0);
    }
    __device__ void compute(int b, int lmax, bool init)
    {
        Tile::accumulate(acc, sm.xs[b], sm.ys[b], lmax, Tile::tx(), Tile::ty(), init);
    }
    __device__ void finish(int, size_t rt)
    {
        cuda_rbf_store_direct<T, CHECK, Tile>(acc, c, rt * Tile::BM, col0, m, n, k, vec_store);
    }
};

/* One block per column tile (blockIdx.x, so consecutive blocks share their x rows in L2),
 * striding over row tiles beyond the grid's limit. */
template <typename T, int BK, bool CHECK>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matrix(size_t m, size_t n, size_t d, T c, const T *__restrict__ x,
                    const T *__restrict__ y, T *__restrict__ k, bool vec_store)
{
    typedef cuda_rbf_matrix_form<T, BK, CHECK> Form;
    __shared__ typename Form::Tile::smem sm;
    const size_t col0 = (size_t)blockIdx.x * Form::Tile::BN;
    const size_t mtiles = (m + Form::Tile::BM - 1) / Form::Tile::BM;
    Form f{sm, m, n, d, col0, mtiles, c, x, y, k, vec_store, {}};
    cuda_rbf_steps<BK>(f, blockIdx.y, d);
}

/* The inner-product form (float32): ||x_i - y_j||^2 = nx_i + ny_j - 2 x~_i.y~_j on rows
 * centered by cuda_rbf_center, one FMA per pair and feature where the differences take two.
 * Its rounding error is at most (2d + 8) u (nx_i + ny_j) (u = 2^-24: the dot product and the
 * norms d u each, the centering and the final sums a few u), which moves K by at most
 * gamma times that. A tile takes this form only where that is within GK_RBF_DOT_MAX_ERROR for
 * its largest norms (bound = (2d + 8) u gamma); other tiles, and every tile of data with
 * non-finite values, compute differences of the raw rows as cuda_rbf_matrix does. */
#define GK_RBF_DOT_MAX_ERROR 4e-6f

/* The distance of one pair from differences of the raw rows, in the order the tile sums them,
 * for the entries the inner-product form cannot resolve. */
__device__ __noinline__ float cuda_rbf_exact_distance(const float *__restrict__ x,
                                                      const float *__restrict__ y, size_t d)
{
    float s = 0.0f;
    for (size_t l = 0; l < d; l++) {
        float t = x[l] - y[l];
        s = fmaf(t, t, s);
    }
    return s;
}

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

/* The inner-product kernel as a form of cuda_rbf_steps: the tiles of cuda_rbf_matrix_form, each
 * computed in the inner-product form from the centered rows where its bound allows (dot), else
 * from differences of the raw rows, uniformly for the block (every thread reads the same two
 * group bounds); c is finite here. */
struct cuda_rbf_dot_form {
    typedef cuda_rbf_tile<float, 8, 8, GK_RBF_BK> Tile;
    static_assert(Tile::BM == GK_RBF_GROUP && Tile::BN == GK_RBF_GROUP, "one bound per tile");
    Tile::smem &sm;
    size_t m, n, d, col0, mtiles;
    float c, bound, kdelta, gy;
    const float *__restrict__ x;
    const float *__restrict__ y;
    cuda_rbf_centered ctr;
    float *__restrict__ k;
    bool vec_store;
    /* The form of the tile being computed, and of the next tile (set by next(), before the
     * barrier, so the load of its bound overlaps the wait). */
    bool dot, next_dot;
    float acc[8][8];

    __device__ bool dot_tile(size_t rt) const
    {
        return bound * (ctr.gx[rt] + gy) <= GK_RBF_DOT_MAX_ERROR;
    }
    __device__ bool has(size_t rt) const
    {
        return rt < mtiles;
    }
    __device__ size_t next(size_t rt)
    {
        size_t next_rt = rt + gridDim.y;
        next_dot = next_rt < mtiles && dot_tile(next_rt);
        return next_rt;
    }
    __device__ void issue(int b, size_t rt, size_t l0, bool)
    {
        bool form = l0 == 0 ? next_dot : dot;
        Tile::issue<Tile::XPER>(sm.xs[b], form ? ctr.x : x, rt * Tile::BM, m, d, l0);
        Tile::issue<Tile::YPER>(sm.ys[b], form ? ctr.y : y, col0, n, d, l0);
    }
    __device__ void compute(int b, int lmax, bool init)
    {
        if (dot)
            Tile::accumulate_dot(acc, sm.xs[b], sm.ys[b], lmax, Tile::tx(), Tile::ty(), init);
        else
            Tile::accumulate(acc, sm.xs[b], sm.ys[b], lmax, Tile::tx(), Tile::ty(), init);
    }
    __device__ void finish(int, size_t rt)
    {
        if (dot)
            cuda_rbf_store_dot<Tile>(acc, c, kdelta, rt * Tile::BM, col0, m, n, d, x, y, ctr,
                                     vec_store, k);
        else
            cuda_rbf_store_direct<float, false, Tile>(acc, c, rt * Tile::BM, col0, m, n, k,
                                                      vec_store);
        dot = next_dot;
    }
};

__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matrix_dot(size_t m, size_t n, size_t d, float c, float bound, float kdelta,
                        const float *__restrict__ x, const float *__restrict__ y,
                        cuda_rbf_centered ctr, float *__restrict__ k, bool vec_store)
{
    typedef cuda_rbf_dot_form::Tile Tile;
    __shared__ Tile::smem sm;
    const size_t col0 = (size_t)blockIdx.x * Tile::BN;
    const size_t mtiles = (m + Tile::BM - 1) / Tile::BM;
    const float gy = ctr.gy[blockIdx.x];
    cuda_rbf_dot_form f{sm, m, n, d, col0, mtiles, c, bound, kdelta, gy, x, y, ctr, k, vec_store};
    f.dot = f.next_dot = f.dot_tile(blockIdx.y);
    cuda_rbf_steps<GK_RBF_BK>(f, blockIdx.y, d);
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
                                   float c, const float *x, const float *y, float *k, dim3 grid,
                                   bool vec_store, gk_status *r)
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
    cuda_rbf_matrix_dot<<<grid, GK_CUDA_THREADS, 0, s->stream>>>(
        m, n, d, c, (float)bound, (float)kdelta, x, y, ctr, k, vec_store);
    *r = gk__cuda_launched("cuda_rbf_matrix_dot");
    return 1;
}
static int cuda_rbf_matrix_try_dot(gk_cuda_state *, size_t, size_t, size_t, double, double,
                                   const double *, const double *, double *, dim3, bool,
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
    if (ntiles > GK_CUDA_GRID_X_MAX)
        return gk__cuda_error(GK_E_UNSUPPORTED, "n (%zu) exceeds the grid's column limit", n);
    dim3 grid((unsigned int)ntiles,
              (unsigned int)(mtiles < GK_CUDA_GRID_Y_MAX ? mtiles : GK_CUDA_GRID_Y_MAX));
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
