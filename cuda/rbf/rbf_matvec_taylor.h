/* SPDX-License-Identifier: MIT */
/* rbf_matvec_taylor.h - float32 rbf_matvec for 1 <= d <= 4 by a single Taylor expansion
 * about the data's center (fast Gauss transform), where a bound decided on the device allows. */
#ifndef GK_CUDA_RBF_MATVEC_TAYLOR_H
#define GK_CUDA_RBF_MATVEC_TAYLOR_H

#include "cuda_internal.h"

/* Bytes of workspace gk__cuda_matvec_taylor needs for this call (16-byte aligned base), where
 * the planner chose the form (plan.h: 1 <= d <= 4, gamma as float finite and > 0). */
size_t gk__cuda_matvec_taylor_bytes(const gk_cuda_state *s, size_t m, size_t n, size_t d);

/* Queues the form's five kernels on the context's stream: they write out[] only where the plan
 * kernel's bound holds, and *skip (device memory) is then nonzero, so that the difference
 * kernels given it return at once. Never waits for the device. */
gk_status gk__cuda_matvec_taylor(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                                 const float *x, const float *y, const float *w, float *out,
                                 void *work, const int **skip);

#endif /* GK_CUDA_RBF_MATVEC_TAYLOR_H */
