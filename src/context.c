/* SPDX-License-Identifier: MIT */
/* context.c - contexts: options, backend choice, reference counting and getters. */
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "core.h"
#include "env.h"

/* Bytes of gk_context_options up to and including the field `field`. */
#define GK_OPTIONS_END(field)                                                                      \
    (offsetof(gk_context_options, field) + sizeof(((gk_context_options *)0)->field))

_Static_assert(sizeof(gk_context_options) == GK_OPTIONS_END(flags),
               "read_options lists every field's end");

GK_API void gk_context_options_init(gk_context_options *o)
{
    if (o == NULL)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->backend = GK_BACKEND_AUTO;
}

/* Copies the fields an older caller knows over the defaults; rejects what we cannot honour. */
static gk_status read_options(const char *fn, const gk_context_options *o, gk_context_options *out)
{
    GK_FORWARD(gk__check_pointer(fn, "options", o));
    GK_CHECK(o->struct_size >= GK_OPTIONS_END(backend), GK_E_INVALID_ARGUMENT,
             "%s: options->struct_size (%u) is smaller than the first two fields (%zu bytes)", fn,
             o->struct_size, GK_OPTIONS_END(backend));
    GK_CHECK(o->struct_size <= sizeof *o, GK_E_INVALID_ARGUMENT,
             "%s: options->struct_size (%u) is larger than this library's gk_context_options "
             "(%zu bytes): the caller was built against a newer gpukern.h",
             fn, o->struct_size, sizeof *o);
    /* A size inside a field would copy half of it (14: two bytes of cpu_threads). */
    GK_CHECK(o->struct_size == GK_OPTIONS_END(backend) ||
                 o->struct_size == GK_OPTIONS_END(device) ||
                 o->struct_size == GK_OPTIONS_END(cpu_threads) ||
                 o->struct_size == GK_OPTIONS_END(flags),
             GK_E_INVALID_ARGUMENT,
             "%s: options->struct_size (%u) ends inside a field: a gk_context_options of any "
             "version is %zu, %zu, %zu or %zu bytes",
             fn, o->struct_size, GK_OPTIONS_END(backend), GK_OPTIONS_END(device),
             GK_OPTIONS_END(cpu_threads), GK_OPTIONS_END(flags));
    gk_context_options_init(out);
    memcpy(out, o, o->struct_size);
    out->struct_size = sizeof *out;
    GK_CHECK(out->backend >= GK_BACKEND_AUTO && out->backend <= GK_BACKEND_CUDA,
             GK_E_INVALID_ARGUMENT, "%s: options->backend (%d) is not a gk_backend", fn,
             out->backend);
    GK_CHECK(out->device >= 0, GK_E_INVALID_ARGUMENT, "%s: options->device (%d) is negative", fn,
             out->device);
    GK_CHECK(out->cpu_threads >= 0, GK_E_INVALID_ARGUMENT,
             "%s: options->cpu_threads (%d) is negative", fn, out->cpu_threads);
    /* libgomp does not fail gracefully on absurd team sizes: it crashes (100000) or prints
     * "Out of memory" and exits (INT_MAX) at the first parallel op. */
    GK_CHECK(out->cpu_threads <= GK_CPU_THREADS_MAX, GK_E_INVALID_ARGUMENT,
             "%s: options->cpu_threads (%d) is above the maximum of %d", fn, out->cpu_threads,
             GK_CPU_THREADS_MAX);
    GK_CHECK((out->flags & ~GK_FLAG_ALLOW_TF32) == 0, GK_E_INVALID_ARGUMENT,
             "%s: options->flags (0x%x) has unknown bits", fn, out->flags);
    return GK_OK;
}

static gk_status create_context(const char *fn, const gk_context_options *o, gk_context **out)
{
    const gk_backend_ops *ops = NULL;
    int hybrid = 0;
    GK_FORWARD(gk__resolve_backend(fn, (gk_backend)o->backend, &ops, &hybrid));
    GK_FORWARD(gk__check_device(fn, ops, (gk_backend)o->backend, o->device));
    gk_context *ctx = gk__calloc(1, sizeof *ctx);
    GK_CHECK(ctx != NULL, GK_E_OUT_OF_MEMORY, "%s: cannot allocate a context", fn);
    gk_backend_config cfg = {o->device, o->cpu_threads, o->flags, 0, GK_ISA_AUTO, ""};
    gk_status st = gk__env_read_config(fn, &cfg);
    if (st == GK_OK)
        st = ops->context_create(&cfg, &ctx->primary.state);
    if (st != GK_OK) {
        gk__free(ctx);
        return gk__error_in(st, fn);
    }
    if (hybrid) {
        ctx->secondary.ops = gk__cpu_backend();
        st = ctx->secondary.ops->context_create(&cfg, &ctx->secondary.state);
        if (st != GK_OK) {
            ops->context_destroy(ctx->primary.state);
            gk__free(ctx);
            return gk__error_in(st, fn);
        }
        ctx->hybrid = 1;
        ctx->primary.ops = ops;
        ctx->history = gk__calloc(1, sizeof *ctx->history);
        st = ctx->history == NULL
                 ? gk__error(GK_E_OUT_OF_MEMORY, "%s: cannot allocate the placement history", fn)
                 : gk__load_cost_model(fn, ctx);
        if (st != GK_OK) {
            gk__free(ctx->history);
            ctx->secondary.ops->context_destroy(ctx->secondary.state);
            ops->context_destroy(ctx->primary.state);
            gk__free(ctx);
            return gk__error_in(st, fn);
        }
    }
    ctx->magic = GK_CONTEXT_MAGIC;
    atomic_init(&ctx->refs, 1);
    ctx->primary.ops = ops;
    ctx->last_backend = GK_BACKEND_AUTO;
    ctx->flags = o->flags;
    ctx->log = cfg.log;
    gk__log("%s: context %p on %s (%s)", fn, (void *)ctx, ops->name,
            ops->device_name(ctx->primary.state));
    *out = ctx;
    return GK_OK;
}

GK_API gk_status gk_context_create_ex(const gk_context_options *o, gk_context **out)
{
    static const char fn[] = "gk_context_create_ex";
    GK_FORWARD(gk__check_pointer(fn, "out", out));
    gk_context_options opts;
    GK_FORWARD(read_options(fn, o, &opts));
    return create_context(fn, &opts, out);
}

GK_API gk_status gk_context_create(gk_backend b, gk_context **out)
{
    static const char fn[] = "gk_context_create";
    GK_FORWARD(gk__check_pointer(fn, "out", out));
    GK_CHECK(b >= GK_BACKEND_AUTO && b <= GK_BACKEND_CUDA, GK_E_INVALID_ARGUMENT,
             "%s: b (%d) is not a gk_backend", fn, (int)b);
    gk_context_options opts;
    gk_context_options_init(&opts);
    opts.backend = b;
    return create_context(fn, &opts, out);
}

void gk__context_retain(gk_context *ctx)
{
    atomic_fetch_add(&ctx->refs, 1);
}

void gk__context_release(gk_context *ctx)
{
    if (atomic_fetch_sub(&ctx->refs, 1) != 1)
        return;
    ctx->primary.ops->context_destroy(ctx->primary.state);
    if (ctx->hybrid) {
        ctx->secondary.ops->context_destroy(ctx->secondary.state);
        gk__free(ctx->history);
        ctx->history = NULL;
    }
    gk__retire(GK_HANDLE_CONTEXT, ctx);
}

GK_API void gk_context_destroy(gk_context *ctx)
{
    if (ctx == NULL || ctx->magic != GK_CONTEXT_MAGIC)
        return;
    gk__context_leave_stream(ctx);
    /* Queued work finishes before the handle goes; a fault has no caller left to report to. */
    if (ctx->primary.ops->synchronize != NULL)
        ctx->primary.ops->synchronize(ctx->primary.state);
    ctx->magic = GK_DEAD_CONTEXT_MAGIC;
    gk__context_release(ctx);
}

static int live(const gk_context *ctx)
{
    return ctx != NULL && ctx->magic == GK_CONTEXT_MAGIC;
}

GK_API gk_backend gk_context_backend(const gk_context *ctx)
{
    return live(ctx) ? ctx->primary.ops->kind : (gk_backend)0;
}

GK_API gk_backend gk_context_last_backend(const gk_context *ctx)
{
    return live(ctx) ? ctx->last_backend : GK_BACKEND_AUTO;
}

GK_API const char *gk_context_device_name(const gk_context *ctx)
{
    return live(ctx) ? ctx->primary.ops->device_name(ctx->primary.state) : "";
}

GK_API gk_status gk_context_synchronize(gk_context *ctx)
{
    static const char fn[] = "gk_context_synchronize";
    GK_FORWARD(gk__check_context(fn, ctx));
    if (ctx->hybrid && !ctx->device_queued && !ctx->caller_stream)
        return GK_OK;
    gk_status st = ctx->primary.ops->synchronize(ctx->primary.state);
    if (st != GK_OK)
        return gk__error_in(st, fn);
    ctx->device_queued = 0;
    return GK_OK;
}
