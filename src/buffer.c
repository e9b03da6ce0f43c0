/* SPDX-License-Identifier: MIT */
/* buffer.c - buffers, views, host and device wrappers over reference-counted storage; reads
 * and writes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "core.h"
#include "dispatch.h"

static void storage_release(gk_storage *s)
{
    if (atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    gk_context *ctx = s->ctx;
    if (!s->host && !s->borrowed && s->ptr != NULL)
        ctx->primary.ops->mem_free(ctx->primary.state, s->ptr, s->bytes);
    gk__free(s);
    gk__context_release(ctx);
}

/* A new handle on storage s (whose reference the handle takes over). */
static gk_status new_handle(const char *fn, gk_storage *s, gk_dtype t, size_t offset, size_t count,
                            gk_buffer **out)
{
    gk_buffer *b = gk__malloc(sizeof *b);
    GK_CHECK(b != NULL, GK_E_OUT_OF_MEMORY, "%s: cannot allocate a buffer handle", fn);
    b->magic = GK_BUFFER_MAGIC;
    b->storage = s;
    b->dtype = t;
    b->offset = offset;
    b->count = count;
    *out = b;
    return GK_OK;
}

/* Storage over ptr (NULL: allocate bytes on the context's backend). */
static gk_status new_storage(const char *fn, gk_context *ctx, size_t bytes, void *host,
                             gk_storage **out)
{
    gk_storage *s = gk__calloc(1, sizeof *s);
    GK_CHECK(s != NULL, GK_E_OUT_OF_MEMORY, "%s: cannot allocate a storage record", fn);
    s->host = host != NULL;
    s->ptr = host;
    s->bytes = bytes;
    if (host == NULL && bytes > 0) {
        ctx->device_queued = 1;
        gk_status st = ctx->primary.ops->mem_alloc(ctx->primary.state, bytes, &s->ptr);
        if (st != GK_OK) {
            gk__free(s);
            return gk__error_in(st, fn);
        }
    }
    atomic_init(&s->refs, 1);
    s->ctx = ctx;
    gk__context_retain(ctx);
    *out = s;
    return GK_OK;
}

static gk_status make_buffer(const char *fn, gk_context *ctx, gk_dtype t, size_t count, void *host,
                             gk_buffer **out)
{
    GK_FORWARD(gk__check_context(fn, ctx));
    GK_FORWARD(gk__check_dtype(fn, "t", (int)t));
    GK_FORWARD(gk__check_pointer(fn, "out", out));
    /* The ops read elements as their type: a misaligned one is undefined behaviour in C. */
    GK_CHECK(count == 0 || (uintptr_t)host % gk__dtype_size(t) == 0, GK_E_INVALID_ARGUMENT,
             "%s: host %p is not aligned to the %zu-byte elements of its dtype", fn, host,
             gk__dtype_size(t));
    size_t bytes;
    GK_FORWARD(gk__mul_size(fn, "count * element size", count, gk__dtype_size(t), &bytes));
    gk_storage *s = NULL;
    GK_FORWARD(new_storage(fn, ctx, bytes, host, &s));
    gk_status st = new_handle(fn, s, t, 0, count, out);
    if (st != GK_OK)
        storage_release(s);
    return st;
}

GK_API gk_status gk_buffer_create(gk_context *ctx, gk_dtype t, size_t count, gk_buffer **out)
{
    return make_buffer("gk_buffer_create", ctx, t, count, NULL, out);
}

GK_API gk_status gk_buffer_wrap_host(gk_context *ctx, gk_dtype t, size_t count, void *host,
                                     gk_buffer **out)
{
    static const char fn[] = "gk_buffer_wrap_host";
    GK_CHECK(host != NULL || count == 0, GK_E_INVALID_ARGUMENT, "%s: host is NULL but count is %zu",
             fn, count);
    if (host == NULL)
        return make_buffer(fn, ctx, t, 0, NULL, out);
    return make_buffer(fn, ctx, t, count, host, out);
}

/* offset + count lies within a buffer of size elements. */
static gk_status check_range(const char *fn, size_t size, size_t offset, size_t count)
{
    GK_CHECK(offset <= SIZE_MAX - count, GK_E_OVERFLOW,
             "%s: offset (%zu) + count (%zu) overflows size_t", fn, offset, count);
    GK_CHECK(offset + count <= size, GK_E_SHAPE,
             "%s: offset (%zu) + count (%zu) is past the buffer's %zu elements", fn, offset, count,
             size);
    return GK_OK;
}

GK_API gk_status gk_buffer_view(gk_buffer *parent, size_t offset, size_t count, gk_buffer **out)
{
    static const char fn[] = "gk_buffer_view";
    GK_FORWARD(gk__check_buffer(fn, "parent", NULL, parent));
    GK_FORWARD(gk__check_pointer(fn, "out", out));
    GK_FORWARD(check_range(fn, parent->count, offset, count));
    atomic_fetch_add(&parent->storage->refs, 1);
    gk_status st =
        new_handle(fn, parent->storage, parent->dtype, parent->offset + offset, count, out);
    if (st != GK_OK)
        storage_release(parent->storage);
    return st;
}

GK_API void gk_buffer_destroy(gk_buffer *buf)
{
    if (buf == NULL || buf->magic != GK_BUFFER_MAGIC)
        return;
    buf->magic = GK_DEAD_BUFFER_MAGIC;
    gk_storage *s = buf->storage;
    gk__retire(GK_HANDLE_BUFFER, buf);
    storage_release(s);
}

GK_API size_t gk_buffer_count(const gk_buffer *buf)
{
    return buf != NULL && buf->magic == GK_BUFFER_MAGIC ? buf->count : 0;
}

GK_API gk_dtype gk_buffer_dtype(const gk_buffer *buf)
{
    return buf != NULL && buf->magic == GK_BUFFER_MAGIC ? buf->dtype : (gk_dtype)0;
}

/* Checks a read or write of count elements at offset and returns the bytes and address. */
static gk_status transfer_args(const char *fn, const gk_buffer *buf, size_t offset, size_t count,
                               const void *host, size_t *bytes, char **at)
{
    GK_FORWARD(gk__check_buffer(fn, "buf", NULL, buf));
    GK_FORWARD(check_range(fn, buf->count, offset, count));
    GK_CHECK(host != NULL || count == 0, GK_E_INVALID_ARGUMENT,
             "%s: host pointer is NULL but count is %zu", fn, count);
    *bytes = count * gk__dtype_size(buf->dtype);
    *at = *bytes ? (char *)gk__buffer_data(buf) + offset * gk__dtype_size(buf->dtype) : NULL;
    return GK_OK;
}

GK_API gk_status gk_buffer_write(gk_buffer *buf, size_t offset, size_t count, const void *src)
{
    static const char fn[] = "gk_buffer_write";
    size_t bytes = 0;
    char *at = NULL;
    GK_FORWARD(transfer_args(fn, buf, offset, count, src, &bytes, &at));
    if (bytes == 0)
        return GK_OK;
    if (buf->storage->host) {
        memmove(at, src, bytes);
        return GK_OK;
    }
    const gk_engine *e = &buf->storage->ctx->primary;
    buf->storage->ctx->device_queued = 1;
    gk_status st = e->ops->mem_write(e->state, at, src, bytes);
    return st == GK_OK ? GK_OK : gk__error_in(st, fn);
}

GK_API gk_status gk_buffer_read(const gk_buffer *buf, size_t offset, size_t count, void *dst)
{
    static const char fn[] = "gk_buffer_read";
    size_t bytes = 0;
    char *at = NULL;
    GK_FORWARD(transfer_args(fn, buf, offset, count, dst, &bytes, &at));
    if (bytes == 0)
        return GK_OK;
    if (buf->storage->host) {
        memmove(dst, at, bytes);
        return GK_OK;
    }
    const gk_engine *e = &buf->storage->ctx->primary;
    buf->storage->ctx->device_queued = 1;
    gk_status st = e->ops->mem_read(e->state, dst, at, bytes);
    return st == GK_OK ? GK_OK : gk__error_in(st, fn);
}

/* A buffer over count elements of caller-owned device memory at ptr (already checked), which
 * is never freed. */
static gk_status borrow_device(const char *fn, gk_context *ctx, gk_dtype t, size_t count, void *ptr,
                               gk_buffer **out)
{
    gk_storage *s = NULL;
    GK_FORWARD(new_storage(fn, ctx, count * gk__dtype_size(t), ptr, &s));
    /* Caller memory like a host wrapper's, but device memory: no staging, never freed. */
    s->host = 0;
    s->borrowed = 1;
    gk_status st = new_handle(fn, s, t, 0, count, out);
    if (st != GK_OK)
        storage_release(s);
    return st;
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
    return borrow_device(fn, ctx, t, count, device_ptr, out);
}
