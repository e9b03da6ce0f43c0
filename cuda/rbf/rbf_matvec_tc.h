/* SPDX-License-Identifier: MIT */
/* rbf_matvec_tc.h - float32 rbf_matvec for 4 < d <= 64 with the inner products on TF32
 * tensor cores (split operands), tile by tile under a rounding bound. */
#ifndef GK_CUDA_RBF_MATVEC_TC_H
#define GK_CUDA_RBF_MATVEC_TC_H

#include "rbf_matvec_center.h"

/* Features the form takes: a block holds its rows' split operands and two column tiles' in
 * shared memory, 24 KiB per 8 features (197 KiB at 64). */
#define GK_MATVEC_TC_MAX_D 64

/* Relative error bound per unit of gamma N of the form's kernel values (the coefficient of
 * cuda_rbf_matvec_tc.cu's bound, times u): a tile takes the form where this times gamma times
 * its rows' and columns' largest norms is at most GK_MATVEC_DOT_MAX_ERROR. */
double gk__cuda_matvec_tc_coef(size_t d);

/* Floats of workspace gk__cuda_matvec_tc needs beyond the centering's. */
size_t gk__cuda_matvec_tc_floats(size_t m, size_t n, size_t d);

/* Queues the split pass and the tensor-core kernel: for row tile rt = b / splits of 128 rows
 * and the column tiles [sp * tps, (sp + 1) * tps) of 128 columns (sp = b % splits) that pass
 * the bound (ecoef = gk__cuda_matvec_tc_coef(d) * gamma, in float), partial[sp * m + row] =
 * the row's sum over them (every row written, 0 where no tile passes). The other tiles are
 * left to cuda_rbf_matvec_dot with the same ecoef as its tc_ecoef. work: the floats above. */
gk_status gk__cuda_matvec_tc(gk_cuda_state *s, size_t m, size_t n, size_t d, float c,
                             float ecoef, const float *x, const float *y, const float *w,
                             const cuda_matvec_centered &ctr, float *work, unsigned int splits,
                             size_t tps, double *partial);

#endif /* GK_CUDA_RBF_MATVEC_TC_H */
