/* SPDX-License-Identifier: MIT */
/* cuda_rbf_tc.cuh - float32 rbf_matrix on tensor cores with split operands. */
#ifndef GK_CUDA_RBF_TC_CUH
#define GK_CUDA_RBF_TC_CUH

#include "cuda_internal.h"

/* k[i*n + j] = exp(-gamma ||x_i - y_j||^2) for float32 rows in the tensor-core form, where it
 * applies (d >= 64, gamma positive and finite, a large enough output, scratch no larger than
 * the output, GK_RBF_TC not off): 1 when it took the call (*r: the status), 0 when the caller
 * should use another form. A call it takes whose sample rejects the tensor cores is computed
 * from differences (cuda_tc_differences). The result meets the rbf contract whatever the data;
 * nothing waits for the device. */
int gk__cuda_rbf_matrix_tc(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                           const float *x, const float *y, float *k, gk_status *r);

#endif /* GK_CUDA_RBF_TC_CUH */
