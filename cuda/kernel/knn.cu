/* SPDX-License-Identifier: MIT */
/* knn.cu - the knn slot: exact k nearest rows of y for each row of x, from tiles of the
 * metric's distances (the family's pass, relative to the true distance), merged tile by tile
 * into the outputs, so that memory is the tiles and the m x k outputs. */
#include <stdio.h>

#include "family.h"
#include "knn.h"

/* The distance tile of the register selection: 2^24 entries (64 MiB of float32), at least
 * 8192 columns wide so that each row's merge is paid over many columns. */
#define GK_KNN_TILE_ELEMS ((size_t)1 << 24)
#define GK_KNN_TILE_COLS ((size_t)8192)

template <typename T>
static gk_status cuda_knn_registers(gk_cuda_state *s, const cuda_family<T> &f, size_t m, size_t n,
                                    size_t d, size_t k, T *dist, int64_t *index)
{
    const size_t nb = n < GK_KNN_TILE_COLS ? n : GK_KNN_TILE_COLS;
    const size_t rows = GK_KNN_TILE_ELEMS / nb;
    const size_t mq = m < rows ? m : rows;
    void *p = NULL;
    cudaError_t e = gk__cuda_malloc(s, mq * nb * sizeof(T), &p);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "a distance tile of %zu x %zu", mq, nb);
        return gk__cuda_check(e, what);
    }
    T *tile = (T *)p;
    gk_status r = GK_OK;
    for (size_t i0 = 0; i0 < m && r == GK_OK; i0 += mq) {
        const size_t mi = m - i0 < mq ? m - i0 : mq;
        for (size_t j0 = 0; j0 < n && r == GK_OK; j0 += nb) {
            const size_t nj = n - j0 < nb ? n - j0 : nb;
            r = gk__cuda_family_tile<T>(s, f, i0, mi, j0, nj, d, tile, nj, false);
            if (r == GK_OK)
                r = gk__cuda_knn_select<T>(s, mi, nj, k, j0, tile, dist + i0 * k, index + i0 * k,
                                           j0 == 0);
        }
    }
    gk__cuda_free(s, p);
    return r;
}

template <typename T>
static gk_status cuda_knn_run(gk_cuda_state *s, gk_metric metric, size_t m, size_t n, size_t d,
                              size_t k, const T *x, const T *y, T *dist, int64_t *index)
{
    cuda_family<T> f;
    gk_status r = gk__cuda_family_metric<T>(s, metric, m, n, d, x, y, &f);
    if (r != GK_OK)
        return r;
    const bool registers = k <= GK_KNN_SELECT_MAX;
    gk__cuda_family_log(s, "knn", registers ? "cuda_knn_registers" : "cuda_knn_sort", f, m, n, d);
    if (registers)
        r = cuda_knn_registers(s, f, m, n, d, k, dist, index);
    else
        r = gk__cuda_knn_sort(s, f, m, n, d, k, dist, index);
    gk__cuda_family_release(s, &f);
    return r;
}

gk_status gk__cuda_knn(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n, size_t d,
                       size_t k, const void *x, const void *y, void *dist, int64_t *index)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    if (t == GK_FLOAT32)
        return cuda_knn_run<float>(s, metric, m, n, d, k, (const float *)x, (const float *)y,
                                   (float *)dist, index);
    if (t == GK_FLOAT64)
        return cuda_knn_run<double>(s, metric, m, n, d, k, (const double *)x, (const double *)y,
                                    (double *)dist, index);
    return gk__cuda_bad_dtype(t);
}
