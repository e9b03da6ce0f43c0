/* SPDX-License-Identifier: MIT */
/* knn.h - the two selections of the knn slot (knn.cu): in registers for small k, by segmented
 * sort for any k. Both merge a tile of distances to columns [j0, j0 + nb) of y into each row's
 * k best so far, nearest first, equal distances by the smaller index (knn_key.cuh). */
#ifndef GK_CUDA_KERNEL_KNN_H
#define GK_CUDA_KERNEL_KNN_H

#include "cuda_internal.h"

/* The largest k the register lists take (knn_select.cu). */
#define GK_KNN_SELECT_MAX 32

/* k <= GK_KNN_SELECT_MAX: tile is rows x nb; dist and index (rows x k) hold the k best of the
 * columns before j0, or nothing when first (then nb >= k). */
template <typename T>
gk_status gk__cuda_knn_select(gk_cuda_state *s, size_t rows, size_t nb, size_t k, size_t j0,
                              const T *tile, T *dist, int64_t *index, bool first);

/* Any k: the whole search for rows x of x against y by sorting, per row, its k best so far
 * followed by the next tile of columns (knn_sort.cu). f is the call's metric. */
template <typename T> struct cuda_family;
template <typename T>
gk_status gk__cuda_knn_sort(gk_cuda_state *s, const cuda_family<T> &f, size_t m, size_t n, size_t d,
                            size_t k, T *dist, int64_t *index);

#endif /* GK_CUDA_KERNEL_KNN_H */
