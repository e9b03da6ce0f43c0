/* SPDX-License-Identifier: MIT */
/* dispatch.h - running a checked operation on a backend, staging host-wrapped operands. */
#ifndef GK_DISPATCH_H
#define GK_DISPATCH_H

#include "core.h"

typedef enum gk_role {
    GK_ROLE_IN = 1,   /* read only */
    GK_ROLE_OUT = 2,  /* every addressed element is written, none is read */
    GK_ROLE_INOUT = 3 /* read, or only partly written (gemm's C with its padding) */
} gk_role;

/* One buffer argument of an operation and the elements [0, extent) it addresses. */
typedef struct gk_operand {
    const gk_buffer *buf;
    gk_role role;
    size_t extent;
} gk_operand;

#define GK_MAX_OPERANDS 4

/* Calls the backend: ptrs[i] is operand i's element 0 in the engine's memory. */
typedef gk_status (*gk_kernel)(const gk_engine *e, void *const *ptrs, const void *args);

/* Runs kernel on the context's backend; on a hybrid AUTO context, a call whose operands are
 * all host buffers runs where the cost model predicts work w finishes first. Host-wrapped
 * operands on a device backend are copied to device scratch (inputs and partly written
 * outputs), and outputs copied back before this returns. Records the backend in
 * gk_context_last_backend. Operands with extent 0 get NULL. */
gk_status gk__dispatch(gk_context *c, const char *fn, const gk_operand *operands, int n,
                       const gk_workload *w, gk_kernel kernel, const void *args);


/* GK_E_UNSUPPORTED naming the function, the backend and the missing slot. */
gk_status gk__unsupported(const char *fn, const gk_backend_ops *ops, const char *slot);

/* Calls slot of engine e, or reports GK_E_UNSUPPORTED when the backend lacks it. */
#define GK_CALL(e, fn, slot, ...)                                                                \
    (GK_SLOT((e)->ops, slot) != NULL ? (e)->ops->slot((e)->state, __VA_ARGS__)                   \
                                     : gk__unsupported((fn), (e)->ops, #slot))

#endif /* GK_DISPATCH_H */
