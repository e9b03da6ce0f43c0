/* SPDX-License-Identifier: MIT */
/* dispatch.c - begins and ends a call of a backend slot: engine choice, staging, AUTO's timing. */
#include "dispatch.h"

#include <string.h>

static size_t operand_bytes(const gk_operand *o)
{
    return o->extent * gk__dtype_size(o->buf->dtype);
}

static int needs_staging(const gk_engine *e, const gk_buffer *b)
{
    return b->storage->host && e->ops->kind != GK_BACKEND_CPU;
}

static void release_staging(gk_call *call)
{
    const gk_engine *e = call->engine;
    for (int i = 0; i < call->n; i++)
        if (call->staged[i] != NULL) {
            e->ops->mem_free(e->state, call->staged[i], operand_bytes(&call->operand[i]));
            call->staged[i] = NULL;
        }
}

/* Points ptr[i] at each operand in the engine's memory: allocates device copies of the host
 * operands and uploads what the slot may read. */
static gk_status stage_in(gk_call *call)
{
    const gk_engine *e = call->engine;
    for (int i = 0; i < call->n; i++) {
        const gk_operand *o = &call->operand[i];
        size_t bytes = operand_bytes(o);
        if (bytes == 0)
            continue;
        if (!needs_staging(e, o->buf)) {
            call->ptr[i] = gk__buffer_data(o->buf);
            continue;
        }
        GK_FORWARD(e->ops->mem_alloc(e->state, bytes, &call->staged[i]));
        call->ptr[i] = call->staged[i];
        if (o->role != GK_ROLE_OUT)
            GK_FORWARD(
                e->ops->mem_write(e->state, call->staged[i], gk__buffer_data(o->buf), bytes));
    }
    return GK_OK;
}

/* Copies the staged outputs back into the caller's memory (waits for the slot's work). */
static gk_status stage_out(const gk_call *call)
{
    const gk_engine *e = call->engine;
    for (int i = 0; i < call->n; i++) {
        const gk_operand *o = &call->operand[i];
        if (call->staged[i] == NULL || o->role == GK_ROLE_IN)
            continue;
        GK_FORWARD(
            e->ops->mem_read(e->state, gk__buffer_data(o->buf), call->staged[i], operand_bytes(o)));
    }
    return GK_OK;
}

/* The engine of a hybrid context for a call on host data, placed by the model as corrected by
 * what earlier calls measured; the primary one otherwise (p->predicted_s 0: nothing to learn).
 * Tiny calls, which the CPU wins outright, are placed before any byte is counted, and so are
 * calls that repeat a settled placement: on them AUTO must cost no more than a CPU context
 * (a few of them are timed: gk__place_outright, gk__place_settled). */
static const gk_engine *choose_engine(gk_context *c, const gk_operand *ops, int n,
                                      const gk_workload *w, gk_placement *p)
{
    p->predicted_s = 0.0;
    if (!c->hybrid)
        return &c->primary;
    for (int i = 0; i < n; i++)
        if (!ops[i].buf->storage->host)
            return &c->primary;
    if (gk__place_outright(&c->model, c->history, w, p))
        return &c->secondary;
    size_t in = 0, out = 0;
    for (int i = 0; i < n; i++) {
        size_t bytes = operand_bytes(&ops[i]);
        in += ops[i].role != GK_ROLE_OUT ? bytes : 0;
        out += ops[i].role != GK_ROLE_IN ? bytes : 0;
    }
    double bytes_in = (double)in, bytes_out = (double)out;
    if (!gk__place_settled(c->history, w, bytes_in, bytes_out, p))
        *p = gk__place_learned(&c->model, c->history, w, bytes_in, bytes_out);
    return p->backend == GK_BACKEND_CPU ? &c->secondary : &c->primary;
}

gk_status gk__call_begin(gk_call *call, gk_context *c, const char *fn, const gk_operand *operands,
                         int n, const gk_workload *w)
{
    GK_CHECK(n >= 0 && n <= GK_MAX_OPERANDS, GK_E_INTERNAL,
             "%s: %d operands exceed the dispatcher's %d", fn, n, GK_MAX_OPERANDS);
    memset(call, 0, sizeof *call);
    call->fn = fn;
    call->ctx = c;
    call->n = n;
    memcpy(call->operand, operands, (size_t)n * sizeof *operands);
    call->work = *w;
    call->engine = choose_engine(c, operands, n, w, &call->placed);
    if (call->engine == &c->primary)
        c->device_queued = 1;
    /* A placed call is timed whole: on the GPU, staging out waits for the slot's work. */
    call->start = call->placed.predicted_s > 0.0 ? gk__now() : 0.0;
    gk_status st = stage_in(call);
    if (st != GK_OK) {
        release_staging(call);
        return gk__error_in(st, fn);
    }
    return GK_OK;
}

gk_status gk__call_end(gk_call *call, gk_status st)
{
    if (st == GK_OK)
        st = stage_out(call);
    release_staging(call);
    if (st != GK_OK)
        return gk__error_in(st, call->fn);
    const gk_placement *p = &call->placed;
    if (p->predicted_s > 0.0) {
        double took = gk__now() - call->start;
        gk__placement_observe(call->ctx->history, &call->work, *p, took);
        if (call->ctx->log)
            gk__log(
                "%s: AUTO expected %.3g s on the CPU, %.3g s on the GPU; ran on the %s%s: %.3g s",
                call->fn, p->expected_s[0], p->expected_s[1],
                p->backend == GK_BACKEND_CPU ? "CPU" : "GPU",
                p->cold    ? " (retry, cold)"
                : p->retry ? " (retry)"
                : p->audit ? " (audit)"
                           : "",
                took);
    }
    call->ctx->last_backend = call->engine->ops->kind;
    return GK_OK;
}

gk_call gk__call_on(const char *fn, const gk_engine *e)
{
    gk_call call;
    memset(&call, 0, sizeof call);
    call.fn = fn;
    call.engine = e;
    return call;
}

gk_status gk__unsupported(const char *fn, const gk_backend_ops *ops, const char *slot)
{
    return gk__error(GK_E_UNSUPPORTED, "%s: the %s backend does not implement %s", fn, ops->name,
                     slot);
}
