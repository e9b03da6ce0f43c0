/* SPDX-License-Identifier: MIT */
/* plan.h - the CUDA backend's RBF planner: the one place where rbf_rows, rbf_matrix and
 * rbf_matvec choose their form (docs/forms.md says what runs when, and why). */
#ifndef GK_CUDA_RBF_PLAN_H
#define GK_CUDA_RBF_PLAN_H

#include "cuda_internal.h"

/* The forms. A form may still decide part of its work on the device, where the host cannot
 * look without waiting:
 * - matrix_tc tests its rounding bound on a sample of tiles and, where more than a quarter of
 *   them would fail, computes every tile from differences; entry by entry, what fails the bound
 *   is computed again from differences;
 * - matrix_dot and matvec_dot take differences for the tiles whose bound fails; matvec_dot's
 *   tensor-core tiles (to d = 64) are those whose bound at the tile's largest norms is within
 *   8 times the budget (GK_MATVEC_TC_GATE), each pair then kept only where its own bound
 *   weighted by its kernel value holds, the others computed again from differences;
 * - matvec_taylor evaluates one expansion where its bound holds for the data's box, else the
 *   factorized form runs. */
typedef enum cuda_rbf_form {
    CUDA_RBF_ROWS,          /* rbf_rows: one thread a pair */
    CUDA_RBF_MATRIX_TILED,  /* differences on the CUDA cores, register tiles: any dtype and d */
    CUDA_RBF_MATRIX_DOT,    /* float32: inner products of centred rows on the CUDA cores */
    CUDA_RBF_MATRIX_TC,     /* float32: split fp16 inner products on the tensor cores */
    CUDA_RBF_MATVEC_SMALL,  /* d <= 4: x rows in registers, differences */
    CUDA_RBF_MATVEC_FACT,   /* float32, 1 <= d <= 4: factorized exponentials */
    CUDA_RBF_MATVEC_TAYLOR, /* float32, 1 <= d <= 4: one Taylor expansion, else fact */
    CUDA_RBF_MATVEC_TILED,  /* d > 4: differences on register tiles */
    CUDA_RBF_MATVEC_DOT,    /* float32, d > 4: centred inner products (tensor cores to d 64) */
    CUDA_RBF_MATVEC_FGT,    /* 1 <= d <= 4: the fast Gauss transform where its cost model,
                               from the data's boxes, beats the others (rbf_matvec_fgt.h) */
    CUDA_RBF_FORM_COUNT
} cuda_rbf_form;

/* A call's form and, for GK_LOG, why it was chosen. */
typedef struct cuda_rbf_plan {
    cuda_rbf_form form;
    bool forced; /* GK_RBF_FORM named it: size thresholds and matrix_tc's sample are skipped */
    char why[128];
} cuda_rbf_plan;

/* The form GK_RBF_FORM names (-1 for "" and for names without the cuda_ prefix, which the CPU
 * backend checks), from a context's configuration; an unknown cuda_ name is
 * GK_E_INVALID_ARGUMENT naming the accepted ones. */
gk_status gk__cuda_rbf_form_of(const char *name, int *form);
const char *gk__cuda_rbf_form_name(cuda_rbf_form f);

cuda_rbf_plan gk__cuda_rbf_plan_rows(const gk_cuda_state *s, size_t n, size_t d);
cuda_rbf_plan gk__cuda_rbf_plan_matrix(const gk_cuda_state *s, gk_dtype t, size_t m, size_t n,
                                       size_t d, double gamma);
cuda_rbf_plan gk__cuda_rbf_plan_matvec(const gk_cuda_state *s, gk_dtype t, size_t m, size_t n,
                                       size_t d, double gamma);
/* The form where matvec_fgt declined the data (declined: its reason, kept in why). */
cuda_rbf_plan gk__cuda_rbf_plan_matvec_after_fgt(const gk_cuda_state *s, gk_dtype t, size_t m,
                                                 size_t n, size_t d, double gamma,
                                                 const char *declined);

/* Prints "gpukern: <op>: form <name> (<m> x <n> x <d>; <why>)" when the context logs (GK_LOG=1). */
void gk__cuda_rbf_log(const gk_cuda_state *s, const char *op, size_t m, size_t n, size_t d,
                      const cuda_rbf_plan &p);

/* The thresholds the planner shares with the forms that need them. */
#define GK_RBF_TC_BK 32      /* matrix_tc's features a step: rows are padded to it */
#define GK_TC_SUM_CHUNKS 128 /* matrix_tc's chunks of rows for the centre's column sums */
#define GK_MATVEC_DOT_MAX_FLOATS ((size_t)1 << 28) /* matvec_dot's centred copies, at most */

#endif /* GK_CUDA_RBF_PLAN_H */
