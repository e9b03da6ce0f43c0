/* SPDX-License-Identifier: MIT */
/* matmul.cu - the kernel_matmul slot: out = K(x, y) w, one bounded tile of K at a time, each
 * multiplied into out by gemm, so the m x n matrix is never held and each entry of K, the
 * costly part, is computed once for all r columns of w. */
#include <stdio.h>

#include "family.h"

/* The tile's elements: 2^24 (64 MiB of float32), enough for gemm to run near its peak while
 * leaving the device's memory to the caller. */
#define GK_MATMUL_TILE_ELEMS ((size_t)1 << 24)
/* Columns of y a tile takes: long rows keep gemm's inner dimension large. */
#define GK_MATMUL_TILE_COLS ((size_t)16384)

template <typename T>
static gk_status cuda_kernel_matmul_tiles(gk_cuda_state *s, const cuda_family<T> &f, size_t m,
                                          size_t n, size_t d, size_t r, const T *w, T *out)
{
    const size_t nb = n < GK_MATMUL_TILE_COLS ? n : GK_MATMUL_TILE_COLS;
    const size_t rows = GK_MATMUL_TILE_ELEMS / nb;
    const size_t mb = m < rows ? m : rows;
    void *p = NULL;
    cudaError_t e = gk__cuda_malloc(s, mb * nb * sizeof(T), &p);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "a kernel tile of %zu x %zu", mb, nb);
        return gk__cuda_check(e, what);
    }
    T *tile = (T *)p;
    const gk_dtype t = sizeof(T) == 4 ? GK_FLOAT32 : GK_FLOAT64;
    gk_status st = GK_OK;
    for (size_t i0 = 0; i0 < m && st == GK_OK; i0 += mb) {
        const size_t mi = m - i0 < mb ? m - i0 : mb;
        for (size_t j0 = 0; j0 < n && st == GK_OK; j0 += nb) {
            const size_t nj = n - j0 < nb ? n - j0 : nb;
            st = gk__cuda_family_tile<T>(s, f, i0, mi, j0, nj, d, tile, nj, false);
            /* out rows [i0, i0 + mi) = (j0 == 0 ? 0 : themselves) + tile w[j0 .. j0 + nj). */
            if (st == GK_OK)
                st = gk__cuda_gemm(s, t, GK_NO_TRANS, GK_NO_TRANS, mi, r, nj, 1.0, tile, nj,
                                   w + j0 * r, r, j0 == 0 ? 0.0 : 1.0, out + i0 * r, r);
        }
    }
    gk__cuda_free(s, p);
    return st;
}

template <typename T>
static gk_status cuda_kernel_matmul_run(gk_cuda_state *s, const gk_kernel *k, size_t m, size_t n,
                                        size_t d, size_t r, const T *x, const T *y, const T *w,
                                        T *out)
{
    /* No rows of y: every sum is empty. */
    if (n == 0)
        return gk__cuda_check(cudaMemsetAsync(out, 0, m * r * sizeof(T), s->stream),
                              "cudaMemsetAsync");
    cuda_family<T> f;
    gk_status st = gk__cuda_family_kernel<T>(s, k, m, n, d, x, y, &f);
    if (st != GK_OK)
        return st;
    gk__cuda_family_log(s, "kernel_matmul", "cuda_matmul_tiles", f, m, n, d);
    st = cuda_kernel_matmul_tiles(s, f, m, n, d, r, w, out);
    gk__cuda_family_release(s, &f);
    return st;
}

gk_status gk__cuda_kernel_matmul(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                                 size_t d, size_t r, const void *x, const void *y, const void *w,
                                 void *out)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status e = gk__cuda_enter(s);
    if (e != GK_OK)
        return e;
    if (t == GK_FLOAT32)
        return cuda_kernel_matmul_run<float>(s, k, m, n, d, r, (const float *)x, (const float *)y,
                                             (const float *)w, (float *)out);
    if (t == GK_FLOAT64)
        return cuda_kernel_matmul_run<double>(s, k, m, n, d, r, (const double *)x,
                                              (const double *)y, (const double *)w, (double *)out);
    return gk__cuda_bad_dtype(t);
}
