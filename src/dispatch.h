/* SPDX-License-Identifier: MIT */
/* dispatch.h - the one path from a checked public call into a backend slot, and back. */
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

/* One call of a backend slot. A public function checks its arguments, then
 *     gk_call call;
 *     GK_FORWARD(gk__call_begin(&call, c, fn, operands, n, &work));
 *     return gk__call_end(&call, GK_CALL(&call, slot, typed arguments, call.ptr[i] ...));
 * gk__call_begin picks the engine (on a hybrid AUTO context, a call whose operands are all host
 * buffers runs where the cost model predicts work w finishes first) and copies host-wrapped
 * operands to device scratch on a device backend (inputs and partly written outputs);
 * gk__call_end copies outputs back, releases the scratch, prefixes a failure's message with fn,
 * feeds AUTO the call's time and records gk_context_last_backend. */
typedef struct gk_call {
    const char *fn;             /* the public function, first word of every message */
    const gk_engine *engine;    /* where the slot runs */
    void *ptr[GK_MAX_OPERANDS]; /* operand i's element 0 in the engine's memory; NULL: extent 0 */
    /* The rest is gk__call_begin's, for gk__call_end. */
    gk_context *ctx;
    gk_operand operand[GK_MAX_OPERANDS];
    int n;
    void *staged[GK_MAX_OPERANDS];
    gk_workload work;
    gk_placement placed;
    double start;
} gk_call;

/* Begins a call over operands[0, n); on failure nothing is left to end. */
gk_status gk__call_begin(gk_call *call, gk_context *c, const char *fn, const gk_operand *operands,
                         int n, const gk_workload *w);

/* Ends a call whose slot returned st; returns the call's status. */
gk_status gk__call_end(gk_call *call, gk_status st);

/* A call of fn on engine e with memory of e's own (calibration's scratch): no operands to stage
 * and nothing to end. */
gk_call gk__call_on(const char *fn, const gk_engine *e);

/* GK_E_UNSUPPORTED naming the function, the backend and the missing slot. */
gk_status gk__unsupported(const char *fn, const gk_backend_ops *ops, const char *slot);

/* The only way the core calls an operation's slot: engine state first, then the typed
 * arguments; a slot the backend lacks (NULL, or past an older module's struct_size) gives
 * GK_E_UNSUPPORTED instead of a call. */
#define GK_CALL(call, slot, ...)                                                                   \
    (GK_SLOT((call)->engine->ops, slot) != NULL                                                    \
         ? (call)->engine->ops->slot((call)->engine->state, __VA_ARGS__)                           \
         : gk__unsupported((call)->fn, (call)->engine->ops, #slot))

#endif /* GK_DISPATCH_H */
