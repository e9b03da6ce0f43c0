/* SPDX-License-Identifier: MIT */
/* knn_sort.cu - k-NN for any k: per block of rows of x, the columns of each tile of distances
 * that may enter a row's k best so far are appended to them, and the rows are sorted as
 * segments (CUB's stable segmented sort), keeping their first k. Stable, with the k best (in
 * order) ahead of the tile's columns (whose indices are all larger, in increasing order), equal
 * distances stay by smaller index. */
#include <stdio.h>

#include <cub/device/device_segmented_sort.cuh>

#include "family.h"
#include "knn.h"
#include "knn_key.cuh"

/* Candidates (rows x (k + tile columns)) a block of rows holds at most, unless one row needs
 * more: 2^23, some 200 MiB with the sort's copies. */
#define GK_KNN_SORT_ENTRIES ((size_t)1 << 23)
/* Columns of y a tile takes, at least (k more where k is larger). */
#define GK_KNN_SORT_COLS ((size_t)8192)

/* The tile's keys and indices appended to each row's candidates, one warp a row, and each
 * row's segment. On the first tile every column, after room for the k best (the segment starts
 * at k); on later ones only the columns that precede the row's k-th best so far (the k best
 * are at the head, sorted), kept in column order by a ballot and a prefix count per step: a
 * segment is then the k best and the few columns that may displace them, not the whole tile. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_knn_append(size_t rows, size_t nb, size_t k, size_t stride, size_t j0,
                    const T *__restrict__ tile, typename cuda_knn_key<T>::type *__restrict__ keys,
                    int64_t *__restrict__ vals, int64_t *__restrict__ begin,
                    int64_t *__restrict__ end, bool first)
{
    typedef cuda_knn_key<T> Key;
    typedef typename Key::type KT;
    enum { U = 4 };
    const int lane = threadIdx.x % 32;
    const unsigned int below = (1u << lane) - 1u;
    const size_t warps = (size_t)gridDim.x * (GK_CUDA_THREADS / 32);
    for (size_t r = (size_t)blockIdx.x * (GK_CUDA_THREADS / 32) + threadIdx.x / 32; r < rows;
         r += warps) {
        KT *krow = keys + r * stride;
        int64_t *vrow = vals + r * stride;
        const KT tk = first ? Key::nan : krow[k - 1];
        const int64_t ti = first ? INT64_MAX : vrow[k - 1];
        const T *trow = tile + r * nb;
        size_t count = 0;
        /* Four loads a lane in flight before any is used. */
        for (size_t c0 = 0; c0 < nb; c0 += 32 * U) {
            T q[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const size_t c = c0 + 32 * u + lane;
                q[u] = c < nb ? trow[c] : T(0);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const size_t c = c0 + 32 * u + lane;
                const KT key = Key::of(q[u]);
                const int64_t j = (int64_t)(j0 + c);
                const bool take = c < nb && (first || cuda_knn_less(key, j, tk, ti));
                const unsigned int ballot = __ballot_sync(0xffffffffu, take);
                if (take) {
                    const size_t at = k + count + (size_t)__popc(ballot & below);
                    krow[at] = key;
                    vrow[at] = j;
                }
                count += (size_t)__popc(ballot);
            }
        }
        if (lane == 0) {
            begin[r] = (int64_t)(r * stride + (first ? k : 0));
            end[r] = (int64_t)(r * stride + k + count);
        }
    }
}

/* Each row's first k sorted candidates: kept at the head of its candidates for the next tile,
 * or, after the last tile, written out. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_knn_keep(size_t rows, size_t k, size_t stride, bool first, bool last,
                  const typename cuda_knn_key<T>::type *__restrict__ keys_sorted,
                  const int64_t *__restrict__ vals_sorted,
                  typename cuda_knn_key<T>::type *__restrict__ keys, int64_t *__restrict__ vals,
                  T *__restrict__ dist, int64_t *__restrict__ index)
{
    const size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < rows * k; e += step) {
        const size_t r = e / k, c = e % k;
        const size_t from = r * stride + (first ? k : 0) + c;
        if (last) {
            dist[e] = cuda_knn_key<T>::value(keys_sorted[from]);
            index[e] = vals_sorted[from];
        } else {
            keys[r * stride + c] = keys_sorted[from];
            vals[r * stride + c] = vals_sorted[from];
        }
    }
}

/* The memory of one block of rows, carved from one allocation. */
template <typename T> struct cuda_knn_sort_mem {
    typedef typename cuda_knn_key<T>::type KT;
    T *tile;
    KT *keys[2];
    int64_t *vals[2], *begin, *end;
    void *temp;
    size_t temp_bytes;
};

template <typename T>
static gk_status cuda_knn_sort_tiles(gk_cuda_state *s, const cuda_family<T> &f,
                                     cuda_knn_sort_mem<T> &w, size_t i0, size_t mq, size_t n,
                                     size_t d, size_t k, size_t nb, T *dist, int64_t *index)
{
    typedef typename cuda_knn_key<T>::type KT;
    const size_t stride = k + nb;
    const unsigned int rows_blocks =
        gk__cuda_blocks(mq, GK_CUDA_THREADS / 32, (size_t)s->sm_count * 16);
    for (size_t j0 = 0; j0 < n; j0 += nb) {
        const size_t nc = n - j0 < nb ? n - j0 : nb;
        const bool first = j0 == 0, last = j0 + nc == n;
        gk_status r = gk__cuda_family_tile<T>(s, f, i0, mq, j0, nc, d, w.tile, nc, false);
        if (r != GK_OK)
            return r;
        cuda_knn_append<T><<<rows_blocks, GK_CUDA_THREADS, 0, s->stream>>>(
            mq, nc, k, stride, j0, w.tile, w.keys[0], w.vals[0], w.begin, w.end, first);
        if ((r = gk__cuda_launched("cuda_knn_append")) != GK_OK)
            return r;
        size_t temp_bytes = w.temp_bytes;
        r = gk__cuda_check(cub::DeviceSegmentedSort::StableSortPairs(
                               w.temp, temp_bytes, (const KT *)w.keys[0], w.keys[1],
                               (const int64_t *)w.vals[0], w.vals[1], (int64_t)(mq * stride),
                               (int64_t)mq, (const int64_t *)w.begin, (const int64_t *)w.end,
                               s->stream),
                           "cub::DeviceSegmentedSort::StableSortPairs");
        if (r != GK_OK)
            return r;
        cuda_knn_keep<T><<<gk__cuda_blocks(mq * k, GK_CUDA_THREADS, (size_t)s->sm_count * 16),
                           GK_CUDA_THREADS, 0, s->stream>>>(mq, k, stride, first, last, w.keys[1],
                                                            w.vals[1], w.keys[0], w.vals[0],
                                                            dist + i0 * k, index + i0 * k);
        if ((r = gk__cuda_launched("cuda_knn_keep")) != GK_OK)
            return r;
    }
    return GK_OK;
}

template <typename T>
gk_status gk__cuda_knn_sort(gk_cuda_state *s, const cuda_family<T> &f, size_t m, size_t n, size_t d,
                            size_t k, T *dist, int64_t *index)
{
    typedef typename cuda_knn_key<T>::type KT;
    const size_t cols = k > GK_KNN_SORT_COLS ? k : GK_KNN_SORT_COLS;
    const size_t nb = n < cols ? n : cols, stride = k + nb;
    const size_t fit = GK_KNN_SORT_ENTRIES / stride;
    const size_t mq = m < fit ? m : fit > 0 ? fit : 1;
    cuda_knn_sort_mem<T> w = {};
    size_t temp_bytes = 0;
    gk_status r =
        gk__cuda_check(cub::DeviceSegmentedSort::StableSortPairs(
                           NULL, temp_bytes, (const KT *)NULL, (KT *)NULL, (const int64_t *)NULL,
                           (int64_t *)NULL, (int64_t)(mq * stride), (int64_t)mq,
                           (const int64_t *)NULL, (const int64_t *)NULL, s->stream),
                       "cub::DeviceSegmentedSort::StableSortPairs");
    if (r != GK_OK)
        return r;
    /* The sort's temporaries first, at the allocation's own (256-byte) alignment. */
    const size_t temp = (temp_bytes + 255) / 256 * 256;
    const size_t tile = gk__cuda_round16(mq * nb * sizeof(T));
    const size_t keys = gk__cuda_round16(mq * stride * sizeof(KT));
    const size_t vals = gk__cuda_round16(mq * stride * sizeof(int64_t));
    const size_t offs = gk__cuda_round16(mq * sizeof(int64_t));
    const size_t bytes = temp + tile + 2 * keys + 2 * vals + 2 * offs;
    void *p = NULL;
    cudaError_t e = gk__cuda_malloc(s, bytes, &p);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "k-NN candidates of %zu bytes", bytes);
        return gk__cuda_check(e, what);
    }
    unsigned char *b = (unsigned char *)p;
    w.temp = b;
    w.temp_bytes = temp_bytes;
    b += temp;
    w.tile = (T *)b;
    b += tile;
    w.keys[0] = (KT *)b;
    w.keys[1] = (KT *)(b + keys);
    b += 2 * keys;
    w.vals[0] = (int64_t *)b;
    w.vals[1] = (int64_t *)(b + vals);
    b += 2 * vals;
    w.begin = (int64_t *)b;
    w.end = (int64_t *)(b + offs);
    for (size_t i0 = 0; i0 < m && r == GK_OK; i0 += mq)
        r = cuda_knn_sort_tiles(s, f, w, i0, m - i0 < mq ? m - i0 : mq, n, d, k, nb, dist, index);
    gk__cuda_free(s, p);
    return r;
}

template gk_status gk__cuda_knn_sort<float>(gk_cuda_state *, const cuda_family<float> &, size_t,
                                            size_t, size_t, size_t, float *, int64_t *);
template gk_status gk__cuda_knn_sort<double>(gk_cuda_state *, const cuda_family<double> &, size_t,
                                             size_t, size_t, size_t, double *, int64_t *);
