/* SPDX-License-Identifier: MIT */
/* rbf_tc.cuh - float32 rbf_matrix on tensor cores with split operands (form matrix_tc). */
#ifndef GK_CUDA_RBF_TC_CUH
#define GK_CUDA_RBF_TC_CUH

#include "cuda_internal.h"

/* k[i*n + j] = exp(-gamma ||x_i - y_j||^2) for float32 rows in the tensor-core form, where the
 * planner chose it (plan.h: gamma positive and finite, scratch no larger than the output).
 * With sample set, a sample of tiles decides on the device whether the products run or every
 * tile is computed from differences (cuda_tc_differences). The result meets the rbf contract
 * whatever the data; nothing waits for the device. */
gk_status gk__cuda_rbf_matrix_tc(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                                 bool sample, const float *x, const float *y, float *k);

#endif /* GK_CUDA_RBF_TC_CUH */
