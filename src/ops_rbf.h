/* SPDX-License-Identifier: MIT */
/* ops_rbf.h - the Gaussian slots as the core calls them, shared by the rbf and kernel ops. */
#ifndef GK_OPS_RBF_H
#define GK_OPS_RBF_H

#include "dispatch.h"

/* Calls rbf_matrix (a call over x, y, k: call->n == 3) or rbf_matvec (x, y, w, out: n == 4) on
 * the begun call, gamma already rounded to t and the work not empty. Below a tiny gamma the rows
 * are scaled so that no squared distance overflows where gamma times it does not. */
gk_status gk__rbf_slot(gk_call *call, gk_dtype t, size_t m, size_t n, size_t d, double gamma);

#endif /* GK_OPS_RBF_H */
