/* SPDX-License-Identifier: MIT */
/* check.c - argument checks with messages that name the function, the argument and the values. */
#include "check.h"

#include <stdint.h>

static const char *dtype_name(gk_dtype t)
{
    return t == GK_FLOAT32   ? "float32"
           : t == GK_FLOAT64 ? "float64"
           : t == GK_INT64   ? "int64"
                             : "unknown";
}

gk_status gk__check_context(const char *fn, const gk_context *c)
{
    GK_CHECK(c != NULL, GK_E_INVALID_ARGUMENT, "%s: context is NULL", fn);
    GK_CHECK(c->magic != GK_DEAD_CONTEXT_MAGIC, GK_E_INVALID_ARGUMENT,
             "%s: context %p was destroyed", fn, (const void *)c);
    GK_CHECK(c->magic == GK_CONTEXT_MAGIC, GK_E_INVALID_ARGUMENT,
             "%s: context %p is not a gk_context (a foreign pointer, or destroyed long ago)", fn,
             (const void *)c);
    return GK_OK;
}

gk_status gk__check_buffer(const char *fn, const char *arg, const gk_context *c, const gk_buffer *b)
{
    GK_CHECK(b != NULL, GK_E_INVALID_ARGUMENT, "%s: buffer %s is NULL", fn, arg);
    GK_CHECK(b->magic != GK_DEAD_BUFFER_MAGIC, GK_E_INVALID_ARGUMENT, "%s: %s (%p) was destroyed",
             fn, arg, (const void *)b);
    GK_CHECK(b->magic == GK_BUFFER_MAGIC, GK_E_INVALID_ARGUMENT,
             "%s: %s (%p) is not a gk_buffer (a foreign pointer, or destroyed long ago)", fn, arg,
             (const void *)b);
    GK_CHECK(c == NULL || b->storage->ctx == c, GK_E_CONTEXT_MISMATCH,
             "%s: buffer %s belongs to context %p, not to the context %p of the call", fn, arg,
             (const void *)b->storage->ctx, (const void *)c);
    return GK_OK;
}

gk_status gk__check_pointer(const char *fn, const char *arg, const void *p)
{
    GK_CHECK(p != NULL, GK_E_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
    return GK_OK;
}

gk_status gk__check_dtype(const char *fn, const char *arg, int t)
{
    GK_CHECK(t == GK_FLOAT32 || t == GK_FLOAT64 || t == GK_INT64, GK_E_INVALID_ARGUMENT,
             "%s: %s (%d) is not a gk_dtype (GK_FLOAT32 = 1, GK_FLOAT64 = 2, GK_INT64 = 3)", fn,
             arg, t);
    return GK_OK;
}

gk_status gk__check_operand(const char *fn, const char *arg, const gk_context *c,
                            const gk_buffer *b)
{
    GK_FORWARD(gk__check_buffer(fn, arg, c, b));
    GK_CHECK(b->dtype != GK_INT64, GK_E_INVALID_ARGUMENT,
             "%s: %s is an int64 buffer; only the buffer calls, gk_copy and gk_knn's index take "
             "int64, the operations compute in float32 or float64",
             fn, arg);
    return GK_OK;
}

gk_status gk__check_same_dtype(const char *fn, const char *arg, const gk_buffer *b,
                               const char *ref_arg, const gk_buffer *ref)
{
    GK_CHECK(b->dtype == ref->dtype, GK_E_DTYPE, "%s: %s is %s but %s is %s", fn, arg,
             dtype_name(b->dtype), ref_arg, dtype_name(ref->dtype));
    return GK_OK;
}

gk_status gk__check_count(const char *fn, const char *arg, const gk_buffer *b, const char *ref_arg,
                          size_t count)
{
    GK_CHECK(b->count == count, GK_E_SHAPE, "%s: %s has %zu elements but %s has %zu", fn, arg,
             b->count, ref_arg, count);
    return GK_OK;
}

gk_status gk__check_holds(const char *fn, const char *arg, const gk_buffer *b, size_t need)
{
    GK_CHECK(b->count >= need, GK_E_SHAPE, "%s: %s has %zu elements but the sizes address %zu", fn,
             arg, b->count, need);
    return GK_OK;
}

gk_status gk__mul_size(const char *fn, const char *what, size_t a, size_t b, size_t *out)
{
    GK_CHECK(b == 0 || a <= SIZE_MAX / b, GK_E_OVERFLOW, "%s: %s = %zu * %zu overflows size_t", fn,
             what, a, b);
    *out = a * b;
    return GK_OK;
}

gk_status gk__matrix_extent(const char *fn, const char *arg, size_t rows, size_t cols, size_t ld,
                            const char *ld_arg, size_t *need)
{
    GK_CHECK(ld >= cols, GK_E_INVALID_ARGUMENT,
             "%s: %s (%zu) is smaller than the %zu columns of %s", fn, ld_arg, ld, cols, arg);
    if (rows == 0 || cols == 0) {
        *need = 0;
        return GK_OK;
    }
    size_t full = 0;
    GK_FORWARD(gk__mul_size(fn, ld_arg, rows - 1, ld, &full));
    GK_CHECK(full <= SIZE_MAX - cols, GK_E_OVERFLOW,
             "%s: the extent of %s ((%zu - 1) * %zu + %zu) overflows size_t", fn, arg, rows, ld,
             cols);
    *need = full + cols;
    return GK_OK;
}

gk_status gk__check_disjoint(const char *fn, const char *out_arg, const gk_buffer *out,
                             const char *in_arg, const gk_buffer *in)
{
    if (out->count == 0 || in->count == 0)
        return GK_OK;
    /* Addresses of distinct allocations are compared as integers: host and device memory
     * share one address space under CUDA's unified addressing, so this is exact. */
    uintptr_t o = (uintptr_t)gk__buffer_data(out), i = (uintptr_t)gk__buffer_data(in);
    int overlap = o < i + in->count * gk__dtype_size(in->dtype) &&
                  i < o + out->count * gk__dtype_size(out->dtype);
    GK_CHECK(!overlap, GK_E_INVALID_ARGUMENT, "%s: output %s overlaps input %s", fn, out_arg,
             in_arg);
    return GK_OK;
}

gk_status gk__check_same_or_disjoint(const char *fn, const char *out_arg, const gk_buffer *out,
                                     const char *in_arg, const gk_buffer *in)
{
    if (out->count == 0 || in->count == 0 || gk__buffer_data(out) == gk__buffer_data(in))
        return GK_OK;
    uintptr_t o = (uintptr_t)gk__buffer_data(out), i = (uintptr_t)gk__buffer_data(in);
    size_t out_bytes = out->count * gk__dtype_size(out->dtype);
    size_t in_bytes = in->count * gk__dtype_size(in->dtype);
    size_t apart = (o > i ? o - i : i - o) / gk__dtype_size(in->dtype);
    GK_CHECK(!(o < i + in_bytes && i < o + out_bytes), GK_E_INVALID_ARGUMENT,
             "%s: output %s partially overlaps input %s (they start %zu element%s apart): an "
             "output must be the same elements as an input or share none with it",
             fn, out_arg, in_arg, apart, apart == 1 ? "" : "s");
    return GK_OK;
}

double gk__round_scalar(gk_dtype t, double v)
{
    return t == GK_FLOAT32 ? (double)(float)v : v;
}
