/* SPDX-License-Identifier: MIT */
/* pass.cu - the family's tiled pass: rbf_matrix's register tiles and staging loop (rbf_tile.cuh)
 * accumulating inner products, squared or absolute differences, finished by an epilogue. */
#include "family.h"
#include "rbf/rbf_tile.cuh"

/* One form of cuda_rbf_steps: tile t is (t / ntiles, t % ntiles), block b takes tiles b,
 * b + gridDim.x, ... */
template <typename T, int ACC, int EPI> struct cuda_pass_form {
    typedef cuda_rbf_shape<T> S;
    typedef cuda_rbf_tile<T, S::TM, S::TN, GK_RBF_BK> Tile;
    typename Tile::smem &sm;
    size_t ntiles, tiles, m, n, d, ldo;
    const T *__restrict__ x;
    const T *__restrict__ y;
    T *__restrict__ out;
    cuda_epi_params<T> p;
    bool vec_store, stream;
    /* As in rbf_matrix's difference form: the staging addresses of the tile being copied. */
    typename Tile::staged xst, yst;
    T acc[S::TM][S::TN];

    __device__ bool has(size_t t) const
    {
        return t < tiles;
    }
    __device__ size_t next(size_t t) const
    {
        return t + gridDim.x;
    }
    __device__ void issue(int b, size_t t, size_t l0, bool)
    {
        size_t row0 = t / ntiles * Tile::BM, col0 = t % ntiles * Tile::BN;
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
        if (init)
            Tile::zero(acc);
        const int tx = Tile::tx(), ty = Tile::ty();
#pragma unroll 2
        for (int l = 0; l < lmax; l++) {
            T xv[S::TM], yv[S::TN];
            Tile::operands(xv, yv, sm.xs[b][l], sm.ys[b][l], tx, ty);
#pragma unroll
            for (int i = 0; i < S::TM; i++)
#pragma unroll
                for (int j = 0; j < S::TN; j++) {
                    if (ACC == CUDA_ACC_DOT) {
                        acc[i][j] = fma(xv[i], yv[j], acc[i][j]);
                    } else if (ACC == CUDA_ACC_SQDIFF) {
                        T u = xv[i] - yv[j];
                        acc[i][j] = fma(u, u, acc[i][j]);
                    } else {
                        acc[i][j] += fabs(xv[i] - yv[j]);
                    }
                }
        }
    }
    __device__ void store(T *q, T v) const
    {
        if (stream)
            __stcs(q, v);
        else
            *q = v;
    }
    __device__ void finish(int, size_t t)
    {
        enum { W = Tile::W };
        const size_t row0 = t / ntiles * Tile::BM, col0 = t % ntiles * Tile::BN;
        const int tx = Tile::tx(), ty = Tile::ty();
#pragma unroll
        for (int i = 0; i < S::TM; i++) {
            const size_t row = row0 + Tile::lane_index(i, ty);
            if (row >= m)
                continue;
            T *orow = out + row * ldo;
#pragma unroll
            for (int g = 0; g < S::TN / W; g++) {
                const size_t col = col0 + Tile::lane_index(g * W, tx);
                /* Columns past n are computed (the row's last one stands in, so that an
                 * epilogue reading per-column data stays inside it) but not stored. */
                T v[W];
#pragma unroll
                for (int e = 0; e < W; e++)
                    v[e] = cuda_epi_apply<EPI>(p, acc[i][g * W + e], row,
                                               col + e < n ? col + e : n - 1);
                if (vec_store && col + W <= n) {
                    typedef typename Tile::V::type VT;
                    if (stream)
                        __stcs((VT *)(orow + col), Tile::V::pack(v));
                    else
                        *(VT *)(orow + col) = Tile::V::pack(v);
                } else {
#pragma unroll
                    for (int e = 0; e < W; e++)
                        if (col + e < n)
                            store(orow + col + e, v[e]);
                }
            }
        }
    }
};

template <typename T, int ACC, int EPI>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_pass_kernel(size_t m, size_t n, size_t d, const T *__restrict__ x, const T *__restrict__ y,
                     T *__restrict__ out, size_t ldo, cuda_epi_params<T> p, bool vec_store,
                     bool stream)
{
    typedef cuda_pass_form<T, ACC, EPI> Form;
    __shared__ typename Form::Tile::smem sm;
    const size_t ntiles = (n + Form::Tile::BN - 1) / Form::Tile::BN;
    const size_t tiles = (m + Form::Tile::BM - 1) / Form::Tile::BM * ntiles;
    Form f{sm, ntiles, tiles, m, n, d, ldo, x, y, out, p, vec_store, stream, {}, {}, {}};
    cuda_rbf_steps<GK_RBF_BK>(f, blockIdx.x, d);
}

/* d = 0: every sum is 0 (and x, y may be NULL), so only the epilogue runs. */
template <typename T, int EPI>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_pass_empty(size_t m, size_t n, T *__restrict__ out, size_t ldo, cuda_epi_params<T> p)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < m * n;
         e += (size_t)gridDim.x * blockDim.x)
        out[e / n * ldo + e % n] = cuda_epi_apply<EPI>(p, T(0), e / n, e % n);
}

template <typename T, int ACC, int EPI>
static gk_status cuda_pass_launch(gk_cuda_state *s, const cuda_epi_params<T> &p, size_t m, size_t n,
                                  size_t d, const T *x, const T *y, T *out, size_t ldo, bool stream)
{
    if (d == 0) {
        cuda_pass_empty<T, EPI><<<gk__cuda_blocks(m * n, GK_CUDA_THREADS, (size_t)s->sm_count * 16),
                                  GK_CUDA_THREADS, 0, s->stream>>>(m, n, out, ldo, p);
        return gk__cuda_launched("cuda_pass_empty");
    }
    const size_t bm = cuda_rbf_shape<T>::BM, bn = cuda_rbf_shape<T>::BN;
    const size_t tiles = (m + bm - 1) / bm * ((n + bn - 1) / bn);
    const unsigned int grid =
        (unsigned int)(tiles < GK_CUDA_GRID_X_MAX ? tiles : GK_CUDA_GRID_X_MAX);
    /* Vector stores need every row to start on a 16-byte boundary. */
    const bool vec_store = ldo % gk_cuda_vec<T>::width == 0 && (uintptr_t)out % 16 == 0;
    cuda_pass_kernel<T, ACC, EPI>
        <<<grid, GK_CUDA_THREADS, 0, s->stream>>>(m, n, d, x, y, out, ldo, p, vec_store, stream);
    return gk__cuda_launched("cuda_pass_kernel");
}

/* The pairs of pass and epilogue the family uses; any other is an internal error. */
template <typename T>
gk_status gk__cuda_pass(gk_cuda_state *s, cuda_acc acc, cuda_epi epi, const cuda_epi_params<T> &p,
                        size_t m, size_t n, size_t d, const T *x, const T *y, T *out, size_t ldo,
                        bool stream)
{
#define GK_PASS(A, E)                                                                              \
    if (acc == A && epi == E)                                                                      \
    return cuda_pass_launch<T, A, E>(s, p, m, n, d, x, y, out, ldo, stream)
    GK_PASS(CUDA_ACC_DOT, CUDA_EPI_IDENTITY);
    GK_PASS(CUDA_ACC_DOT, CUDA_EPI_POLYNOMIAL);
    GK_PASS(CUDA_ACC_DOT, CUDA_EPI_SIGMOID);
    GK_PASS(CUDA_ACC_DOT, CUDA_EPI_COSINE_KERNEL);
    GK_PASS(CUDA_ACC_SQDIFF, CUDA_EPI_IDENTITY);
    GK_PASS(CUDA_ACC_SQDIFF, CUDA_EPI_EUCLIDEAN);
    GK_PASS(CUDA_ACC_SQDIFF, CUDA_EPI_COSINE_DIST);
    GK_PASS(CUDA_ACC_SQDIFF, CUDA_EPI_MATERN05);
    GK_PASS(CUDA_ACC_SQDIFF, CUDA_EPI_MATERN15);
    GK_PASS(CUDA_ACC_SQDIFF, CUDA_EPI_MATERN25);
    GK_PASS(CUDA_ACC_ABSDIFF, CUDA_EPI_IDENTITY);
    GK_PASS(CUDA_ACC_ABSDIFF, CUDA_EPI_LAPLACIAN);
#undef GK_PASS
    return gk__cuda_error(GK_E_INTERNAL, "cuda: no tiled pass for accumulation %d, epilogue %d",
                          (int)acc, (int)epi);
}

template gk_status gk__cuda_pass<float>(gk_cuda_state *, cuda_acc, cuda_epi,
                                        const cuda_epi_params<float> &, size_t, size_t, size_t,
                                        const float *, const float *, float *, size_t, bool);
template gk_status gk__cuda_pass<double>(gk_cuda_state *, cuda_acc, cuda_epi,
                                         const cuda_epi_params<double> &, size_t, size_t, size_t,
                                         const double *, const double *, double *, size_t, bool);
