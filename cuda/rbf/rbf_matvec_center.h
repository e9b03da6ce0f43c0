/* SPDX-License-Identifier: MIT */
/* rbf_matvec_center.h - what rbf_matvec's float32 inner-product form needs: centered rows,
 * their exponent terms and per-group norm bounds. */
#ifndef GK_CUDA_RBF_MATVEC_CENTER_H
#define GK_CUDA_RBF_MATVEC_CENTER_H

#include "cuda_internal.h"

/* Rows per norm group: the float32 tile's side, so a tile looks up one bound for its rows and
 * one for its columns. */
#define GK_MATVEC_GROUP 128

/* x and y less a center c (the mean of x's first rows), a_i = -k ||x_i - c||^2 and
 * b_j = -k ||y_j - c||^2 (k = gamma log2(e)), and per group of GK_MATVEC_GROUP rows the
 * largest ||. - c||^2 (+inf where one is not finite). Any c gives the same distances
 * ||x~ - y~||^2 = ||x - y||^2; the mean keeps the norms, and so the rounding bound, small. */
struct cuda_matvec_centered {
    const float *x, *y;
    const float *a, *b;
    const float *gx, *gy;
};

/* Floats of workspace that gk__cuda_matvec_center needs for m, n, d. */
size_t gk__cuda_matvec_center_floats(size_t m, size_t n, size_t d);

/* Queues the centering on the context's stream into work (gk__cuda_matvec_center_floats(m, n,
 * d) floats of the context's workspace) and describes the result in *out. */
gk_status gk__cuda_matvec_center(gk_cuda_state *s, size_t m, size_t n, size_t d, float k,
                                 const float *x, const float *y, float *work,
                                 cuda_matvec_centered *out);

#endif /* GK_CUDA_RBF_MATVEC_CENTER_H */
