/* SPDX-License-Identifier: MIT */
/* cuda_rbf_matrix.cu - k[i*n + j] = exp(-gamma ||x_i - y_j||^2), a register-tiled kernel. */
#include <cmath>

#include "cuda_rbf_tile.cuh"

/* One block per 128 x 128 (float64: 64 x 64) output tile; blockIdx.x walks the columns, so
 * consecutive blocks share their x rows in L2, and blockIdx.y strides over row tiles beyond the
 * grid's limit. Stores stream past L2 (__stcs): the output is written once and would otherwise
 * evict the x and y rows that every block re-reads. */
template <typename T, int BK, bool CHECK>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matrix(size_t m, size_t n, size_t d, T c, const T *__restrict__ x,
                    const T *__restrict__ y, T *__restrict__ k, bool vec_store)
{
    typedef cuda_rbf_shape<T> S;
    typedef cuda_rbf_tile<T, S::TM, S::TN, BK> Tile;
    typedef typename Tile::V V;
    const int W = Tile::W;
    __shared__ typename Tile::smem sm;

    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const size_t col0 = (size_t)blockIdx.x * Tile::BN;
    const size_t mtiles = (m + Tile::BM - 1) / Tile::BM;
    const size_t nchunks = d == 0 ? 1 : (d + BK - 1) / BK;

    for (size_t rt = blockIdx.y; rt < mtiles; rt += gridDim.y) {
        const size_t row0 = rt * Tile::BM;
        T acc[S::TM][S::TN];
        Tile::template issue<Tile::XPER>(sm.xs[0], x, row0, m, d, 0);
        Tile::template issue<Tile::YPER>(sm.ys[0], y, col0, n, d, 0);
        cuda_cp_commit();
        for (size_t ch = 0; ch < nchunks; ch++) {
            const int buf = (int)(ch & 1);
            /* Chunk ch has landed for every thread, and every thread is done with ch - 1,
             * whose buffer the next copies overwrite. */
            cuda_cp_wait_all();
            __syncthreads();
            if (ch + 1 < nchunks) {
                Tile::template issue<Tile::XPER>(sm.xs[buf ^ 1], x, row0, m, d, (ch + 1) * BK);
                Tile::template issue<Tile::YPER>(sm.ys[buf ^ 1], y, col0, n, d, (ch + 1) * BK);
                cuda_cp_commit();
            }
            size_t left = d - ch * BK;
            int lmax = d == 0 ? 0 : (left < (size_t)BK ? (int)left : BK);
            Tile::accumulate(acc, sm.xs[buf], sm.ys[buf], lmax, tx, ty, ch == 0);
        }

#pragma unroll
        for (int i = 0; i < S::TM; i++) {
            size_t row = row0 + Tile::lane_index(i, ty);
            if (row >= m)
                continue;
            T *krow = k + row * n;
#pragma unroll
            for (int g = 0; g < S::TN / W; g++) {
                size_t col = col0 + g * 16 * W + tx * W;
                T v[W];
#pragma unroll
                for (int e = 0; e < W; e++)
                    v[e] = cuda_rbf_value<CHECK>(acc[i][g * W + e], c);
                if (vec_store && col + W <= n) {
                    __stcs((typename V::type *)(krow + col), V::pack(v));
                } else {
#pragma unroll
                    for (int e = 0; e < W; e++)
                        if (col + e < n)
                            __stcs(krow + col + e, v[e]);
                }
            }
        }
        /* The next row tile's first copies overwrite buffer 0. */
        __syncthreads();
    }
}

template <typename T>
static gk_status cuda_rbf_matrix_run(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                                     const T *x, const T *y, T *k)
{
    const char *fn = "gk_rbf_matrix";
    gk_status r = gk__cuda_enter(s, fn);
    if (r != GK_OK || m == 0 || n == 0)
        return r;
    const size_t bm = 16 * cuda_rbf_shape<T>::TM, bn = 16 * cuda_rbf_shape<T>::TN;
    size_t ntiles = (n + bn - 1) / bn, mtiles = (m + bm - 1) / bm;
    if (ntiles > 0x7fffffffu)
        return gk__cuda_error(GK_E_UNSUPPORTED, "%s: n (%zu) exceeds the grid's column limit", fn,
                              n);
    dim3 grid((unsigned int)ntiles, (unsigned int)(mtiles < 65535 ? mtiles : 65535));
    /* Rows start on a 16-byte boundary only when n is a multiple of the vector width. */
    bool vec_store = n % gk_cuda_vec<T>::width == 0 && (uintptr_t)k % 16 == 0;
    T c = cuda_rbf_constant(gamma, T(0));
    /* The identical-rows test is needed only where 0 * c is NaN. */
    bool check = std::isinf(c); /* NaN gamma must propagate, as on the CPU */
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
    return gk__cuda_launched(fn, "cuda_rbf_matrix");
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
    return gk__cuda_error(GK_E_INTERNAL, "gk_rbf_matrix: unknown dtype %d reached the CUDA backend",
                          (int)t);
}
