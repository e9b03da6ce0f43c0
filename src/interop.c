/* SPDX-License-Identifier: MIT */
/* interop.c - data addresses and caller streams: what other libraries need of a context. */
#include "check.h"
#include "core.h"
#include "dispatch.h"

GK_API void *gk_buffer_data(const gk_buffer *buf)
{
    if (buf == NULL || buf->magic != GK_BUFFER_MAGIC || buf->count == 0)
        return NULL;
    return gk__buffer_data(buf);
}

GK_API gk_status gk_context_set_stream(gk_context *ctx, void *cuda_stream)
{
    static const char fn[] = "gk_context_set_stream";
    GK_FORWARD(gk__check_context(fn, ctx));
    const gk_engine *e = &ctx->primary;
    GK_CHECK(e->ops->kind != GK_BACKEND_CPU, GK_E_UNSUPPORTED,
             "%s: a CPU context has no CUDA stream", fn);
    gk_call call = gk__call_on(fn, e);
    gk_status st = GK_CALL(&call, set_stream, cuda_stream);
    if (st != GK_OK)
        return gk__error_in(st, fn);
    /* The switch queued a wait on the device; on the caller's stream, synchronize must wait
     * even when the context itself queued nothing (the caller's own work is on it too). */
    ctx->device_queued = 1;
    ctx->caller_stream = cuda_stream != NULL;
    return GK_OK;
}

void gk__context_leave_stream(gk_context *ctx)
{
    if (!ctx->caller_stream)
        return;
    /* Later copies and frees go on the context's own stream, which the switch orders after the
     * caller's; a failure here has no caller left to report to. */
    (void)ctx->primary.ops->set_stream(ctx->primary.state, NULL);
    ctx->caller_stream = 0;
}

GK_API void *gk_context_stream(const gk_context *ctx)
{
    if (ctx == NULL || ctx->magic != GK_CONTEXT_MAGIC)
        return NULL;
    const gk_engine *e = &ctx->primary;
    if (e->ops->kind == GK_BACKEND_CPU || GK_SLOT(e->ops, stream) == NULL)
        return NULL;
    return e->ops->stream(e->state);
}
