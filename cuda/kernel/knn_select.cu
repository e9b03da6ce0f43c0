/* SPDX-License-Identifier: MIT */
/* knn_select.cu - k-NN for k <= 32: a tile of distances merged into each row's k best so far,
 * one warp a row, each lane keeping its own sorted list in registers. */
#include "family.h"
#include "knn.h"
#include "knn_key.cuh"

/* A lane's list: its K smallest (key, index) pairs seen, sorted, padded with (nan, INT64_MAX),
 * which every real pair precedes (a NaN distance too, by its index). */
template <typename T, int K> struct cuda_knn_list {
    typedef cuda_knn_key<T> Key;
    typedef typename Key::type KT;
    KT key[K];
    int64_t idx[K];

    __device__ void clear()
    {
#pragma unroll
        for (int s = 0; s < K; s++) {
            key[s] = Key::nan;
            idx[s] = INT64_MAX;
        }
    }
    /* Inserts (v, j) if it precedes the last pair; fully unrolled, so the list stays in
     * registers. */
    __device__ void insert(KT v, int64_t j)
    {
        if (!cuda_knn_less(v, j, key[K - 1], idx[K - 1]))
            return;
        bool placed = false;
#pragma unroll
        for (int s = K - 1; s >= 0; s--) {
            const int below = s > 0 ? s - 1 : 0;
            const bool up = s > 0 && cuda_knn_less(v, j, key[below], idx[below]);
            if (!placed) {
                if (up) {
                    key[s] = key[below];
                    idx[s] = idx[below];
                } else {
                    key[s] = v;
                    idx[s] = j;
                    placed = true;
                }
            }
        }
    }
    __device__ void pop()
    {
#pragma unroll
        for (int s = 0; s + 1 < K; s++) {
            key[s] = key[s + 1];
            idx[s] = idx[s + 1];
        }
        key[K - 1] = Key::nan;
        idx[K - 1] = INT64_MAX;
    }
};

/* Row r of the tile (nb distances to rows j0, j0 + 1, ... of y) merged with dist and index's
 * row r (the k best of the earlier columns; none when first); vec: the tile's rows start on
 * 16-byte boundaries. Pairs that do not precede the
 * row's k-th best so far are skipped with one comparison: after the first tiles almost all. */
template <typename T, int K>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_knn_select(size_t rows, size_t nb, size_t k, size_t j0, const T *__restrict__ tile,
                    T *__restrict__ dist, int64_t *__restrict__ index, bool first, bool vec)
{
    typedef cuda_knn_key<T> Key;
    typedef typename Key::type KT;
    const int lane = threadIdx.x % 32;
    const size_t warps = (size_t)gridDim.x * (GK_CUDA_THREADS / 32);
    for (size_t r = (size_t)blockIdx.x * (GK_CUDA_THREADS / 32) + threadIdx.x / 32; r < rows;
         r += warps) {
        T *drow = dist + r * k;
        int64_t *irow = index + r * k;
        cuda_knn_list<T, K> list;
        list.clear();
        KT tk = Key::nan;
        int64_t ti = INT64_MAX;
        if (!first) {
            for (size_t e = lane; e < k; e += 32)
                list.insert(Key::of(drow[e]), irow[e]);
            tk = Key::of(drow[k - 1]);
            ti = irow[k - 1];
        }
        const T *trow = tile + r * nb;
        if (vec) {
            /* 16-byte loads, four a lane in flight before any is used: a warp reads 2 KiB a
             * step, so a row of the tile takes few dependent steps. */
            typedef gk_cuda_vec<T> V;
            enum { U = 4 };
            const typename V::type *vrow = (const typename V::type *)trow;
            const size_t nvec = nb / V::width;
            for (size_t c0 = lane; c0 < nvec; c0 += 32 * U) {
                typename V::type q[U];
#pragma unroll
                for (int u = 0; u < U; u++)
                    q[u] = vrow[c0 + 32 * u < nvec ? c0 + 32 * u : c0];
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const size_t c = c0 + 32 * u;
                    if (c >= nvec)
                        break;
                    T v[V::width];
                    V::unpack(q[u], v);
#pragma unroll
                    for (int e = 0; e < V::width; e++) {
                        const KT key = Key::of(v[e]);
                        const int64_t j = (int64_t)(j0 + c * V::width + e);
                        if (cuda_knn_less(key, j, tk, ti))
                            list.insert(key, j);
                    }
                }
            }
        } else {
            for (size_t c = lane; c < nb; c += 32) {
                const KT key = Key::of(trow[c]);
                const int64_t j = (int64_t)(j0 + c);
                if (cuda_knn_less(key, j, tk, ti))
                    list.insert(key, j);
            }
        }
        /* k rounds: the warp's smallest head is the next neighbour; its lane pops it (indices
         * are unique, so exactly one lane holds it). */
        for (size_t e = 0; e < k; e++) {
            KT bk = list.key[0];
            int64_t bi = list.idx[0];
            for (int off = 16; off > 0; off /= 2) {
                const KT ok = __shfl_xor_sync(0xffffffffu, bk, off);
                const int64_t oi = __shfl_xor_sync(0xffffffffu, bi, off);
                if (cuda_knn_less(ok, oi, bk, bi)) {
                    bk = ok;
                    bi = oi;
                }
            }
            if (list.idx[0] == bi)
                list.pop();
            if (lane == 0) {
                drow[e] = Key::value(bk);
                irow[e] = bi;
            }
        }
    }
}

template <typename T>
gk_status gk__cuda_knn_select(gk_cuda_state *s, size_t rows, size_t nb, size_t k, size_t j0,
                              const T *tile, T *dist, int64_t *index, bool first)
{
    const unsigned int blocks =
        gk__cuda_blocks(rows, GK_CUDA_THREADS / 32, (size_t)s->sm_count * 16);
    const bool vec = nb % gk_cuda_vec<T>::width == 0 && (uintptr_t)tile % 16 == 0;
    if (k <= 8)
        cuda_knn_select<T, 8><<<blocks, GK_CUDA_THREADS, 0, s->stream>>>(rows, nb, k, j0, tile,
                                                                         dist, index, first, vec);
    else if (k <= 16)
        cuda_knn_select<T, 16><<<blocks, GK_CUDA_THREADS, 0, s->stream>>>(rows, nb, k, j0, tile,
                                                                          dist, index, first, vec);
    else if (k <= GK_KNN_SELECT_MAX)
        cuda_knn_select<T, GK_KNN_SELECT_MAX><<<blocks, GK_CUDA_THREADS, 0, s->stream>>>(
            rows, nb, k, j0, tile, dist, index, first, vec);
    else
        return gk__cuda_error(GK_E_INTERNAL, "cuda: k-NN selection in registers for k = %zu", k);
    return gk__cuda_launched("cuda_knn_select");
}

template gk_status gk__cuda_knn_select<float>(gk_cuda_state *, size_t, size_t, size_t, size_t,
                                              const float *, float *, int64_t *, bool);
template gk_status gk__cuda_knn_select<double>(gk_cuda_state *, size_t, size_t, size_t, size_t,
                                               const double *, double *, int64_t *, bool);
