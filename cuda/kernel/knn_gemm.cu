/* SPDX-License-Identifier: MIT */
/* knn_gemm.cu - k-NN under the Euclidean metrics by inner products, the way FAISS's flat index
 * searches, made exact: cuBLAS gemm tiles of x y^T read as squared distances
 * |x|^2 + |y|^2 - 2 x.y give each row its GK_KNN_CANDIDATES best (knn_select.cu); the candidates'
 * distances are then recomputed from differences and the k nearest kept. A row is certified when
 * its k-th exact distance lies below its last candidate's approximate one by more than the
 * expanded form's rounding bound: no row of y left out can then be as near. Rows it cannot
 * certify (norms that dwarf the distances, as on offset data; NaN or inf) are searched again by
 * the difference tiles, so the result is the exact search's. */
#include <stdio.h>

#include "family.h"
#include "knn.h"
#include "knn_key.cuh"

/* Candidates a row keeps: the register lists' largest, so that the k-th of at most
 * GK_KNN_GEMM_MAX_K stands well clear of the last. */
#define GK_KNN_CANDIDATES GK_KNN_SELECT_MAX
/* The gemm tile: 2^24 entries, 8192 columns wide, as the difference tiles'. */
#define GK_KNN_GEMM_TILE_ELEMS ((size_t)1 << 24)
#define GK_KNN_GEMM_TILE_COLS ((size_t)8192)

/* Squared distances and norms are summed in double for float32 rows, in double for float64. */

/* norm[r] = |x_r|^2 (rounded once to T), and *max the largest as a key (knn_key.cuh: NaN
 * above all), when max is not NULL. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_knn_sqnorms(size_t rows, size_t d, const T *__restrict__ x, T *__restrict__ norm,
                     unsigned long long *max)
{
    typedef cuda_knn_key<T> Key;
    const int lane = threadIdx.x % 32;
    const size_t warps = (size_t)gridDim.x * (GK_CUDA_THREADS / 32);
    for (size_t r = (size_t)blockIdx.x * (GK_CUDA_THREADS / 32) + threadIdx.x / 32; r < rows;
         r += warps) {
        const T *row = x + r * d;
        double sum = 0.0;
        for (size_t t = lane; t < d; t += 32)
            sum = fma((double)row[t], (double)row[t], sum);
        for (int off = 16; off > 0; off /= 2)
            sum += __shfl_xor_sync(0xffffffffu, sum, off);
        if (lane == 0) {
            norm[r] = (T)sum;
            if (max != NULL)
                atomicMax(max, (unsigned long long)Key::of((T)sum));
        }
    }
}

/* float32 keys are 32 bits: the maximum is kept in 64 and read back as the 32-bit key. */
template <typename T> __device__ __forceinline__ T cuda_knn_key_max(const unsigned long long *max)
{
    return cuda_knn_key<T>::value((typename cuda_knn_key<T>::type) * max);
}

/* One warp a row of the block: the row's kc candidates' squared distances from differences,
 * ranked (equal values by index); certified rows write their k nearest, the others are listed
 * in fail (count in *failed). bound: the expanded form's error per unit of |x|^2 + max |y|^2. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_knn_rerank(size_t rows, size_t row0, size_t d, size_t k, size_t kc, bool root,
                    double bound, const T *__restrict__ x, const T *__restrict__ y,
                    const T *__restrict__ nx, const unsigned long long *ymax,
                    const T *__restrict__ cand_d, const int64_t *__restrict__ cand_i,
                    T *__restrict__ dist, int64_t *__restrict__ index, int64_t *__restrict__ fail,
                    unsigned long long *failed)
{
    typedef cuda_knn_key<T> Key;
    typedef typename Key::type KT;
    const int lane = threadIdx.x % 32;
    const size_t warps = (size_t)gridDim.x * (GK_CUDA_THREADS / 32);
    const double ny_max = (double)cuda_knn_key_max<T>(ymax);
    for (size_t r = (size_t)blockIdx.x * (GK_CUDA_THREADS / 32) + threadIdx.x / 32; r < rows;
         r += warps) {
        const size_t g = row0 + r;
        const T *xr = x + g * d;
        KT key = Key::nan;
        int64_t j = INT64_MAX;
        double e = 0.0;
        if ((size_t)lane < kc && cand_i[g * kc + lane] != INT64_MAX) {
            j = cand_i[g * kc + lane];
            const T *yr = y + (size_t)j * d;
            for (size_t t = 0; t < d; t++) {
                const double u = (double)xr[t] - (double)yr[t];
                e = fma(u, u, e);
            }
            key = Key::of((T)e);
        }
        int rank = 0;
        for (int o = 0; o < 32; o++) {
            const KT ok = __shfl_sync(0xffffffffu, key, o);
            const int64_t oi = __shfl_sync(0xffffffffu, j, o);
            rank += cuda_knn_less(ok, oi, key, j) ? 1 : 0;
        }
        const unsigned int kth = __ballot_sync(0xffffffffu, rank == (int)k - 1);
        const double ek = __shfl_sync(0xffffffffu, e, kth != 0 ? __ffs(kth) - 1 : 0);
        const double last = (double)cand_d[g * kc + kc - 1];
        const double eps = bound * ((double)nx[g] + ny_max);
        /* False for NaN anywhere, or where no lane holds rank k - 1 (candidates missing):
         * such rows take the exact search. */
        const bool certified = kth != 0 && ek < last - eps;
        if (certified) {
            if (rank < (int)k) {
                dist[g * k + rank] = root ? (T)sqrt(e) : (T)e;
                index[g * k + rank] = j;
            }
        } else if (lane == 0) {
            fail[atomicAdd(failed, 1ull)] = (int64_t)g;
        }
    }
}

/* out[i] = x[rows[i]] (rows of d), or the reverse when scatter. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_knn_move_rows(size_t count, size_t d, const int64_t *__restrict__ rows, bool scatter,
                       const T *__restrict__ from, T *__restrict__ to)
{
    const size_t all = count * d;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < all;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t i = e / d, t = e % d, r = (size_t)rows[i];
        if (scatter)
            to[r * d + t] = from[e];
        else
            to[e] = from[r * d + t];
    }
}

template <typename T>
static gk_status cuda_knn_move(gk_cuda_state *s, size_t count, size_t d, const int64_t *rows,
                               bool scatter, const T *from, T *to)
{
    cuda_knn_move_rows<T><<<gk__cuda_blocks(count * d, GK_CUDA_THREADS, (size_t)s->sm_count * 16),
                            GK_CUDA_THREADS, 0, s->stream>>>(count, d, rows, scatter, from, to);
    return gk__cuda_launched("cuda_knn_move_rows");
}

/* What the call allocates: the norms, one gemm tile, the candidates, the failed rows. */
template <typename T> struct cuda_knn_gemm_mem {
    T *nx, *ny, *tile, *cand_d;
    int64_t *cand_i, *fail;
    unsigned long long *ymax, *failed;
};

/* The rows not certified, searched by the difference tiles and written into their places. */
template <typename T>
static gk_status cuda_knn_recheck(gk_cuda_state *s, gk_metric metric, size_t count, size_t n,
                                  size_t d, size_t k, const int64_t *fail, const T *x, const T *y,
                                  T *dist, int64_t *index)
{
    const size_t rows = gk__cuda_round16(count * d * sizeof(T));
    const size_t dists = gk__cuda_round16(count * k * sizeof(T));
    void *p = NULL;
    gk_status r = gk__cuda_check(gk__cuda_malloc(s, rows + dists + count * k * sizeof(int64_t), &p),
                                 "k-NN rows to search again");
    if (r != GK_OK)
        return r;
    T *xf = (T *)p, *df = (T *)((unsigned char *)p + rows);
    int64_t *jf = (int64_t *)((unsigned char *)p + rows + dists);
    r = cuda_knn_move<T>(s, count, d, fail, false, x, xf);
    cuda_family<T> f;
    if (r == GK_OK)
        r = gk__cuda_family_metric<T>(s, metric, count, n, d, xf, y, &f);
    if (r == GK_OK) {
        r = gk__cuda_knn_registers<T>(s, f, count, n, d, k, df, jf);
        gk__cuda_family_release(s, &f);
    }
    if (r == GK_OK)
        r = cuda_knn_move<T>(s, count, k, fail, true, df, dist);
    if (r == GK_OK)
        r = cuda_knn_move<int64_t>(s, count, k, fail, true, jf, index);
    gk__cuda_free(s, p);
    return r;
}

/* The expanded form's error per unit of |x|^2 + max |y|^2, twice the bound (a margin at no cost):
 * the gemm's inner product within (d u + tf32) |x| |y| (any order of summation; TF32 inputs,
 * where the context allows them, truncated to 10 bits), the norms within u, and three roundings
 * of |x|^2 + |y|^2 - 2 x.y within 3u (|x.y| <= (|x|^2 + |y|^2) / 2). */
template <typename T> static double cuda_knn_gemm_bound(const gk_cuda_state *s, size_t d)
{
    const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
    const double tf32 = sizeof(T) == 4 && (s->flags & GK_FLAG_ALLOW_TF32) ? 0x1p-9 : 0.0;
    const double gamma = ((double)d * u + tf32) / (1.0 - (double)d * u);
    return 2.0 * (gamma + 5.0 * u);
}

template <typename T>
static gk_status cuda_knn_gemm_run(gk_cuda_state *s, const cuda_knn_gemm_mem<T> &w,
                                   gk_metric metric, size_t m, size_t n, size_t d, size_t k,
                                   const T *x, const T *y, T *dist, int64_t *index)
{
    const gk_dtype t = sizeof(T) == 4 ? GK_FLOAT32 : GK_FLOAT64;
    const size_t kc = GK_KNN_CANDIDATES;
    const size_t nb = n < GK_KNN_GEMM_TILE_COLS ? n : GK_KNN_GEMM_TILE_COLS;
    const size_t fit = GK_KNN_GEMM_TILE_ELEMS / nb;
    const size_t mq = m < fit ? m : fit;
    const unsigned int row_blocks =
        gk__cuda_blocks(m, GK_CUDA_THREADS / 32, (size_t)s->sm_count * 16);
    gk_status r = gk__cuda_check(
        cudaMemsetAsync(w.ymax, 0, 2 * sizeof(unsigned long long), s->stream), "k-NN counters");
    if (r != GK_OK)
        return r;
    cuda_knn_sqnorms<T><<<row_blocks, GK_CUDA_THREADS, 0, s->stream>>>(m, d, x, w.nx, NULL);
    if ((r = gk__cuda_launched("cuda_knn_sqnorms")) != GK_OK)
        return r;
    cuda_knn_sqnorms<T><<<gk__cuda_blocks(n, GK_CUDA_THREADS / 32, (size_t)s->sm_count * 16),
                          GK_CUDA_THREADS, 0, s->stream>>>(n, d, y, w.ny, w.ymax);
    if ((r = gk__cuda_launched("cuda_knn_sqnorms")) != GK_OK)
        return r;
    const double bound = cuda_knn_gemm_bound<T>(s, d);
    for (size_t i0 = 0; i0 < m; i0 += mq) {
        const size_t mi = m - i0 < mq ? m - i0 : mq;
        for (size_t j0 = 0; j0 < n; j0 += nb) {
            const size_t nj = n - j0 < nb ? n - j0 : nb;
            /* The last tile may be narrower than the candidates: it merges into the lists. */
            if ((r = gk__cuda_gemm(s, t, GK_NO_TRANS, GK_TRANS, mi, nj, d, 1.0, x + i0 * d, d,
                                   y + j0 * d, d, 0.0, w.tile, nj)) != GK_OK)
                return r;
            if ((r = gk__cuda_knn_select<T>(s, mi, nj, kc, j0, w.tile, w.nx + i0, w.ny + j0,
                                            w.cand_d + i0 * kc, w.cand_i + i0 * kc, j0 == 0)) !=
                GK_OK)
                return r;
        }
        cuda_knn_rerank<T>
            <<<gk__cuda_blocks(mi, GK_CUDA_THREADS / 32, (size_t)s->sm_count * 16), GK_CUDA_THREADS,
               0, s->stream>>>(mi, i0, d, k, kc, metric == GK_METRIC_EUCLIDEAN, bound, x, y, w.nx,
                               w.ymax, w.cand_d, w.cand_i, dist, index, w.fail, w.failed);
        if ((r = gk__cuda_launched("cuda_knn_rerank")) != GK_OK)
            return r;
    }
    unsigned long long failed = 0;
    r = gk__cuda_check(
        cudaMemcpyAsync(&failed, w.failed, sizeof failed, cudaMemcpyDeviceToHost, s->stream),
        "k-NN rows not certified");
    if (r == GK_OK)
        r = gk__cuda_check(cudaStreamSynchronize(s->stream), "k-NN rows not certified");
    if (r == GK_OK && failed > 0) {
        if (s->log)
            gk__cuda_log("knn: form cuda_knn_gemm (%llu of %zu rows not certified, searched "
                         "again by differences)",
                         failed, m);
        r = cuda_knn_recheck<T>(s, metric, (size_t)failed, n, d, k, w.fail, x, y, dist, index);
    }
    return r;
}

template <typename T>
gk_status gk__cuda_knn_gemm(gk_cuda_state *s, gk_metric metric, size_t m, size_t n, size_t d,
                            size_t k, const T *x, const T *y, T *dist, int64_t *index)
{
    const size_t kc = GK_KNN_CANDIDATES;
    const size_t nb = n < GK_KNN_GEMM_TILE_COLS ? n : GK_KNN_GEMM_TILE_COLS;
    const size_t mq = m < GK_KNN_GEMM_TILE_ELEMS / nb ? m : GK_KNN_GEMM_TILE_ELEMS / nb;
    const size_t sizes[] = {m * sizeof(T),
                            n * sizeof(T),
                            mq * nb * sizeof(T),
                            m * kc * sizeof(T),
                            m * kc * sizeof(int64_t),
                            m * sizeof(int64_t),
                            2 * sizeof(unsigned long long)};
    size_t bytes = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        bytes += gk__cuda_round16(sizes[i]);
    void *p = NULL;
    cudaError_t e = gk__cuda_malloc(s, bytes, &p);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "k-NN tiles and candidates of %zu bytes", bytes);
        return gk__cuda_check(e, what);
    }
    unsigned char *b = (unsigned char *)p;
    void *parts[sizeof sizes / sizeof sizes[0]];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        parts[i] = b;
        b += gk__cuda_round16(sizes[i]);
    }
    cuda_knn_gemm_mem<T> w;
    w.nx = (T *)parts[0];
    w.ny = (T *)parts[1];
    w.tile = (T *)parts[2];
    w.cand_d = (T *)parts[3];
    w.cand_i = (int64_t *)parts[4];
    w.fail = (int64_t *)parts[5];
    w.ymax = (unsigned long long *)parts[6];
    w.failed = w.ymax + 1;
    gk_status r = cuda_knn_gemm_run<T>(s, w, metric, m, n, d, k, x, y, dist, index);
    gk__cuda_free(s, p);
    return r;
}

template gk_status gk__cuda_knn_gemm<float>(gk_cuda_state *, gk_metric, size_t, size_t, size_t,
                                            size_t, const float *, const float *, float *,
                                            int64_t *);
template gk_status gk__cuda_knn_gemm<double>(gk_cuda_state *, gk_metric, size_t, size_t, size_t,
                                             size_t, const double *, const double *, double *,
                                             int64_t *);
