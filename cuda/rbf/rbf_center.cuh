/* SPDX-License-Identifier: MIT */
/* rbf_center.cuh - what rbf_matrix's inner-product form needs: centered rows and norms. */
#ifndef GK_CUDA_RBF_CENTER_CUH
#define GK_CUDA_RBF_CENTER_CUH

#include "cuda_internal.h"

/* Rows per norm group: the float32 rbf_matrix tile's side, so a tile looks up one group
 * bound for its rows and one for its columns. */
#define GK_RBF_GROUP 128

/* x and y (float32) less the center c = x's first row, with ||x_i - c||^2 per row and, per
 * group of GK_RBF_GROUP rows, the largest of them (+inf where one is not finite), all in the
 * context's workspace. ||x_i - y_j||^2 = nx_i + ny_j - 2 (x_i - c).(y_j - c) then cancels
 * only as much as the data spread around c, not around the origin. */
struct cuda_rbf_centered {
    const float *x, *y;
    const float *nx, *ny;
    const float *gx, *gy;
};

gk_status gk__cuda_rbf_center(gk_cuda_state *s, size_t m, size_t n, size_t d, const float *x,
                              const float *y, cuda_rbf_centered *out);

#endif /* GK_CUDA_RBF_CENTER_CUH */
