/* SPDX-License-Identifier: MIT */
/* rbf_matvec_fgt.h - rbf_matvec at 1 <= d <= 4 by the fast Gauss transform on the device. */
#ifndef GK_CUDA_RBF_MATVEC_FGT_H
#define GK_CUDA_RBF_MATVEC_FGT_H

#include "cuda_internal.h"

/* The transform (docs/fgt.md; its grid, bound and cost rules: src/fgt_params.h) for a call the
 * planner gave it. Reads the data's bounds and each candidate grid's occupancy back from the
 * device (it waits for the stream twice), then either queues the transform and sets *ran (out
 * is written by the queued work), or declines, leaving *ran false and out untouched: NaN or
 * infinity anywhere in x, y or w, no grid that fits, more than 2^32 - 1 rows, or, unless
 * forced, an estimated cost above direct summation's. why (why_size bytes) says which grid
 * ran or why it declined. */
gk_status gk__cuda_matvec_fgt(gk_cuda_state *s, gk_dtype t, size_t m, size_t n, size_t d,
                              double gamma, const void *x, const void *y, const void *w, void *out,
                              bool forced, bool *ran, char *why, size_t why_size);

#endif /* GK_CUDA_RBF_MATVEC_FGT_H */
