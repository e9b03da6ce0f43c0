/* SPDX-License-Identifier: MIT */
/* dispatch.c - runs a checked operation on the context's backend, staging host operands. */
#include "dispatch.h"

#include <string.h>

/* Device scratch for the host-wrapped operands of one call. */
typedef struct gk_staging {
    void *device[GK_MAX_OPERANDS];
} gk_staging;

static int needs_staging(const gk_engine *e, const gk_buffer *b)
{
    return b->storage->host && e->ops->kind != GK_BACKEND_CPU;
}

static void release_staging(const gk_engine *e, gk_staging *s, const gk_operand *ops, int n)
{
    for (int i = 0; i < n; i++)
        if (s->device[i] != NULL)
            e->ops->mem_free(e->state, s->device[i],
                             ops[i].extent * gk__dtype_size(ops[i].buf->dtype));
}

/* Allocates device copies of the host operands and uploads what the kernel may read. */
static gk_status stage_in(const gk_engine *e, const gk_operand *ops, int n, gk_staging *s,
                          void **ptrs)
{
    for (int i = 0; i < n; i++) {
        const gk_buffer *b = ops[i].buf;
        size_t bytes = ops[i].extent * gk__dtype_size(b->dtype);
        if (bytes == 0) {
            ptrs[i] = NULL;
            continue;
        }
        if (!needs_staging(e, b)) {
            ptrs[i] = gk__buffer_data(b);
            continue;
        }
        GK_FORWARD(e->ops->mem_alloc(e->state, bytes, &s->device[i]));
        ptrs[i] = s->device[i];
        if (ops[i].role != GK_ROLE_OUT)
            GK_FORWARD(e->ops->mem_write(e->state, s->device[i], gk__buffer_data(b), bytes));
    }
    return GK_OK;
}

/* Copies the staged outputs back into the caller's memory (waits for the kernel). */
static gk_status stage_out(const gk_engine *e, const gk_operand *ops, int n, const gk_staging *s)
{
    for (int i = 0; i < n; i++) {
        if (s->device[i] == NULL || ops[i].role == GK_ROLE_IN)
            continue;
        size_t bytes = ops[i].extent * gk__dtype_size(ops[i].buf->dtype);
        GK_FORWARD(e->ops->mem_read(e->state, gk__buffer_data(ops[i].buf), s->device[i], bytes));
    }
    return GK_OK;
}

/* The engine of a hybrid context for a call on host data, placed by the model as corrected by
 * what earlier calls measured; the primary one otherwise (p->predicted_s 0: nothing to learn).
 * Tiny calls, which the CPU wins outright, are placed before any byte is counted: on them AUTO
 * must cost no more than a CPU context. */
static const gk_engine *choose_engine(gk_context *c, const gk_operand *ops, int n,
                                      const gk_workload *w, gk_placement *p)
{
    p->predicted_s = 0.0;
    if (!c->hybrid)
        return &c->primary;
    for (int i = 0; i < n; i++)
        if (!ops[i].buf->storage->host)
            return &c->primary;
    if (gk__cpu_wins_outright(&c->model, w))
        return &c->secondary;
    double bytes_in = 0.0, bytes_out = 0.0;
    for (int i = 0; i < n; i++) {
        double bytes = (double)ops[i].extent * (double)gk__dtype_size(ops[i].buf->dtype);
        if (ops[i].role != GK_ROLE_OUT)
            bytes_in += bytes;
        if (ops[i].role != GK_ROLE_IN)
            bytes_out += bytes;
    }
    *p = gk__place_learned(&c->model, &c->history, w, bytes_in, bytes_out);
    return p->backend == GK_BACKEND_CPU ? &c->secondary : &c->primary;
}

gk_status gk__dispatch(gk_context *c, const char *fn, const gk_operand *operands, int n,
                       const gk_workload *w, gk_kernel kernel, const void *args)
{
    GK_CHECK(n <= GK_MAX_OPERANDS, GK_E_INTERNAL, "%s: %d operands exceed the dispatcher's %d", fn,
             n, GK_MAX_OPERANDS);
    gk_placement placed;
    const gk_engine *e = choose_engine(c, operands, n, w, &placed);
    if (e == &c->primary)
        c->device_queued = 1;
    /* A placed call is timed whole: on the GPU, staging out waits for the kernel. */
    double start = placed.predicted_s > 0.0 ? gk__now() : 0.0;
    gk_staging staging;
    memset(&staging, 0, sizeof staging);
    void *ptrs[GK_MAX_OPERANDS] = {NULL};

    gk_status st = stage_in(e, operands, n, &staging, ptrs);
    if (st == GK_OK)
        st = kernel(e, ptrs, args);
    if (st == GK_OK)
        st = stage_out(e, operands, n, &staging);
    release_staging(e, &staging, operands, n);
    if (st != GK_OK)
        return gk__error_in(st, fn);
    if (placed.predicted_s > 0.0) {
        double took = gk__now() - start;
        gk__placement_observe(&c->history, w, placed, took);
        gk__log("%s: AUTO expected %.3g s on the CPU, %.3g s on the GPU; ran on the %s%s: %.3g s",
                fn, placed.expected_s[0], placed.expected_s[1],
                placed.backend == GK_BACKEND_CPU ? "CPU" : "GPU",
                placed.cold    ? " (retry, cold)"
                : placed.retry ? " (retry)"
                               : "",
                took);
    }
    c->last_backend = e->ops->kind;
    return GK_OK;
}

gk_status gk__unsupported(const char *fn, const gk_backend_ops *ops, const char *slot)
{
    return gk__error(GK_E_UNSUPPORTED, "%s: the %s backend does not implement %s", fn, ops->name,
                     slot);
}
