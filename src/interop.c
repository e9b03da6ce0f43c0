/* SPDX-License-Identifier: MIT */
/* interop.c - device counts, caller-owned device memory, data addresses and caller streams. */
#include <stdint.h>

#include "check.h"
#include "core.h"
#include "dispatch.h"

/* The devices of backend table ops: 1 for the CPU, what the module reports otherwise. */
static gk_status backend_devices(const char *fn, const gk_backend_ops *ops, int *count)
{
    if (ops->kind == GK_BACKEND_CPU) {
        *count = 1;
        return GK_OK;
    }
    int n = 0;
    gk_status st = ops->device_count(&n);
    if (st != GK_OK)
        return gk__error_in(st, fn);
    GK_CHECK(n > 0, GK_E_BACKEND_UNAVAILABLE, "%s: the %s backend reports no device", fn,
             ops->name);
    *count = n;
    return GK_OK;
}

GK_API int gk_device_count(gk_backend b)
{
    static const char fn[] = "gk_device_count";
    const gk_backend_ops *ops = NULL;
    int hybrid = 0;
    if (b == GK_BACKEND_CUDA) {
        ops = gk__cuda_backend(fn, 1);
        if (ops == NULL)
            return 0;
    } else if (b == GK_BACKEND_CPU || b == GK_BACKEND_AUTO) {
        if (gk__resolve_backend(fn, b, &ops, &hybrid) != GK_OK)
            return 0;
    } else {
        gk__error(GK_E_INVALID_ARGUMENT, "%s: b (%d) is not a gk_backend", fn, (int)b);
        return 0;
    }
    int count = 0;
    return backend_devices(fn, ops, &count) == GK_OK ? count : 0;
}

gk_status gk__check_device(const char *fn, const gk_backend_ops *ops, gk_backend requested,
                           int32_t device)
{
    /* AUTO falling back to the CPU: the ordinal named a GPU that is not there. */
    if (requested == GK_BACKEND_AUTO && ops->kind == GK_BACKEND_CPU)
        return GK_OK;
    int count = 0;
    GK_FORWARD(backend_devices(fn, ops, &count));
    GK_CHECK(device < count, GK_E_INVALID_ARGUMENT,
             "%s: options->device (%d) is not a device of the %s backend, which has %d "
             "(gk_device_count)",
             fn, (int)device, ops->name, count);
    return GK_OK;
}

GK_API gk_status gk_buffer_wrap_device(gk_context *ctx, gk_dtype t, size_t count, void *device_ptr,
                                       gk_buffer **out)
{
    static const char fn[] = "gk_buffer_wrap_device";
    GK_FORWARD(gk__check_context(fn, ctx));
    GK_FORWARD(gk__check_dtype(fn, "t", (int)t));
    GK_FORWARD(gk__check_pointer(fn, "out", out));
    size_t bytes = 0;
    GK_FORWARD(gk__mul_size(fn, "count * element size", count, gk__dtype_size(t), &bytes));
    GK_CHECK(device_ptr != NULL || count == 0, GK_E_INVALID_ARGUMENT,
             "%s: device_ptr is NULL but count is %zu", fn, count);
    const gk_engine *e = &ctx->primary;
    GK_CHECK(e->ops->kind != GK_BACKEND_CPU, GK_E_UNSUPPORTED,
             "%s: a CPU context has no device memory (wrap host memory with gk_buffer_wrap_host)",
             fn);
    if (bytes > 0) {
        GK_CHECK((uintptr_t)device_ptr % gk__dtype_size(t) == 0, GK_E_INVALID_ARGUMENT,
                 "%s: device_ptr %p is not aligned to the %zu-byte elements of its dtype", fn,
                 device_ptr, gk__dtype_size(t));
        gk_call call = gk__call_on(fn, e);
        gk_status st = GK_CALL(&call, mem_check_device, device_ptr, bytes);
        if (st != GK_OK)
            return gk__error_in(st, fn);
    }
    return gk__buffer_borrow(fn, ctx, t, count, device_ptr, out);
}

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
