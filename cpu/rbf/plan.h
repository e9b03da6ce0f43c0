/* SPDX-License-Identifier: MIT */
/* plan.h - the CPU's rbf planner: the one place where a form is chosen for each rbf call. */
#ifndef GK_CPU_RBF_PLAN_H
#define GK_CPU_RBF_PLAN_H

#include <stddef.h>

#include "gpukern.h"

struct gk_cpu_state;

/* The CPU's forms (docs/forms.md, "CPU", says what each costs and where it wins). */
typedef enum gk_cpu_rbf_form {
    /* rbf_matrix float32: dot products of centred rows, a tile at a time in registers, finished
     * there (distance, exp, the rounding bound's test); an ISA kernel (cpu/rbf/cpu_rbf_avx512.c).
     */
    GK_CPU_RBF_FUSED,
    /* rbf_matrix, rbf_matvec: dot products of centred rows through OpenBLAS GEMM, then a pass
     * that finishes each entry or sends it back to differences (cpu_rbf_gemm.c). */
    GK_CPU_RBF_GEMM,
    /* Every op: sums of squared differences against packed blocks of y (cpu_rbf_kernel.c, the
     * ISA's rows kernel where there is one); the reference every other form falls back to. */
    GK_CPU_RBF_DIFF,
    /* rbf_matrix, rbf_matvec: rows too wide to pack, each pair read in place (no scratch). */
    GK_CPU_RBF_WIDE,
    /* rbf_matvec and the Gaussian kernel's kernel_matmul, 1 <= d <= 4: the fast Gauss transform
     * (cpu/rbf/fgt.c, docs/fgt.md), where its cost model, from the data's boxes, says it beats
     * direct summation. */
    GK_CPU_RBF_FGT,
    GK_CPU_RBF_FORMS
} gk_cpu_rbf_form;

typedef enum gk_cpu_rbf_op {
    GK_CPU_RBF_ROWS_OP,
    GK_CPU_RBF_MATRIX_OP,
    GK_CPU_RBF_MATVEC_OP,
    /* kernel_matmul with the Gaussian kernel and r columns: fgt, or the kernel family's tiles
     * (form GK_CPU_RBF_DIFF here, logged as "tiles") */
    GK_CPU_RBF_MATMUL_OP
} gk_cpu_rbf_op;

/* The form of one call and why, as GK_LOG=1 prints it. */
typedef struct gk_cpu_rbf_plan {
    gk_cpu_rbf_op op;
    gk_cpu_rbf_form form;
    /* fused: test the rounding bound on a sample of entries first, and decline (differences)
     * where too many fail */
    int sample;
    char why[512];
} gk_cpu_rbf_plan;

const char *gk__cpu_rbf_form_name(gk_cpu_rbf_form f);

/* The form named `name` (GK_RBF_FORM) into *form; an unknown name is GK_E_INVALID_ARGUMENT naming
 * the variable, the value and the accepted names. "" leaves the choice to the planner (-1). */
gk_status gk__cpu_rbf_form_parse(const char *name, int *form);

/* The form for a call of op (m = n for rbf_rows), from the shape alone; the context's forced form
 * where it can run the shape, else the planner's choice, saying so in why. */
void gk__cpu_rbf_plan(const struct gk_cpu_state *s, gk_cpu_rbf_op op, gk_dtype t, size_t m,
                      size_t n, size_t d, double gamma, gk_cpu_rbf_plan *p);

/* The form of a kernel_matmul with the Gaussian kernel, r columns, 1 <= d <= 4: the transform
 * (forced by GK_RBF_FORM=fgt, or where it fits and the sizes pay) or the kernel family's tiles
 * (forced by GK_RBF_FORM=diff, direct summation); any other forced form leaves the choice to
 * the planner, saying so. */
void gk__cpu_rbf_plan_matmul(const struct gk_cpu_state *s, gk_dtype t, size_t m, size_t n, size_t d,
                             size_t r, double gamma, gk_cpu_rbf_plan *p);

/* The planned inner-product form or transform declined the data (reason): the difference form
 * (or wide rows; kernel_matmul: the tiles) runs instead, and why says so. */
void gk__cpu_rbf_plan_decline(gk_cpu_rbf_plan *p, gk_dtype t, size_t d, const char *reason);

/* Appends "; <text>" to why (what the form that ran says of its parameters). */
void gk__cpu_rbf_plan_note(gk_cpu_rbf_plan *p, const char *text);

/* Prints "gpukern: <op>: form <name> (<why>)" where the context logs (GK_LOG=1). */
void gk__cpu_rbf_plan_log(const struct gk_cpu_state *s, const gk_cpu_rbf_plan *p);

#endif /* GK_CPU_RBF_PLAN_H */
