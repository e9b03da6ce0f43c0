/* SPDX-License-Identifier: MIT */
/* cpu_ab_api.h - the libgpukern calls of gkbench's cases through a table, for cpu_ab.c.
 *
 * cpu_ab times two builds of the library in one process, call batch against call batch. Both
 * are dlopen'ed (RTLD_LOCAL, so each keeps its own symbols), and every gk_* name that cases.c,
 * common.h and cpu_ab.c use goes through gk_ab, the table of the build being timed now: cases.c
 * is compiled with this header forced in first (-include), so the workloads are gkbench's own. */
#ifndef GK_CPU_AB_API_H
#define GK_CPU_AB_API_H

#include <gpukern.h>

#define GK_AB_FUNCS(X)                                                                             \
    X(status_string)                                                                               \
    X(last_error)                                                                                  \
    X(backend_available)                                                                           \
    X(context_options_init)                                                                        \
    X(context_create_ex)                                                                           \
    X(context_destroy)                                                                             \
    X(context_synchronize)                                                                         \
    X(buffer_create)                                                                               \
    X(buffer_destroy)                                                                              \
    X(fill)                                                                                        \
    X(copy)                                                                                        \
    X(add)                                                                                         \
    X(sub)                                                                                         \
    X(mul)                                                                                         \
    X(axpy)                                                                                        \
    X(scale)                                                                                       \
    X(exp)                                                                                         \
    X(sum)                                                                                         \
    X(dot)                                                                                         \
    X(nrm2)                                                                                        \
    X(gemm)                                                                                        \
    X(rbf_rows)                                                                                    \
    X(rbf_matrix)                                                                                  \
    X(rbf_matvec)                                                                                  \
    X(rng_uniform)                                                                                 \
    X(rng_normal)

typedef struct gk_ab_api {
#define GK_AB_FIELD(f) __typeof__(gk_##f) *f;
    GK_AB_FUNCS(GK_AB_FIELD)
#undef GK_AB_FIELD
} gk_ab_api;

/* The build whose calls run now (cpu_ab.c sets it). */
extern const gk_ab_api *gk_ab;

#define gk_status_string (gk_ab->status_string)
#define gk_last_error (gk_ab->last_error)
#define gk_backend_available (gk_ab->backend_available)
#define gk_context_options_init (gk_ab->context_options_init)
#define gk_context_create_ex (gk_ab->context_create_ex)
#define gk_context_destroy (gk_ab->context_destroy)
#define gk_context_synchronize (gk_ab->context_synchronize)
#define gk_buffer_create (gk_ab->buffer_create)
#define gk_buffer_destroy (gk_ab->buffer_destroy)
#define gk_fill (gk_ab->fill)
#define gk_copy (gk_ab->copy)
#define gk_add (gk_ab->add)
#define gk_sub (gk_ab->sub)
#define gk_mul (gk_ab->mul)
#define gk_axpy (gk_ab->axpy)
#define gk_scale (gk_ab->scale)
#define gk_exp (gk_ab->exp)
#define gk_sum (gk_ab->sum)
#define gk_dot (gk_ab->dot)
#define gk_nrm2 (gk_ab->nrm2)
#define gk_gemm (gk_ab->gemm)
#define gk_rbf_rows (gk_ab->rbf_rows)
#define gk_rbf_matrix (gk_ab->rbf_matrix)
#define gk_rbf_matvec (gk_ab->rbf_matvec)
#define gk_rng_uniform (gk_ab->rng_uniform)
#define gk_rng_normal (gk_ab->rng_normal)

#endif /* GK_CPU_AB_API_H */
