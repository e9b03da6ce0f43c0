/* SPDX-License-Identifier: MIT */
/* ops_elementwise.c - the public element-wise operations: checks, then the backend's slot. */
#include "check.h"
#include "dispatch.h"

static const char *const names[] = {"x", "y", "z"};

/* Checks the context and that every operand is a buffer of it with x's dtype and count; int64
 * buffers only where int64_ok (gk_copy). */
static gk_status check_typed(const char *fn, const gk_context *c, const gk_buffer *const *bufs,
                             int n, int int64_ok)
{
    GK_FORWARD(gk__check_context(fn, c));
    for (int i = 0; i < n; i++)
        GK_FORWARD(int64_ok ? gk__check_buffer(fn, names[i], c, bufs[i])
                            : gk__check_operand(fn, names[i], c, bufs[i]));
    for (int i = 1; i < n; i++) {
        GK_FORWARD(gk__check_same_dtype(fn, names[i], bufs[i], names[0], bufs[0]));
        GK_FORWARD(gk__check_count(fn, names[i], bufs[i], names[0], bufs[0]->count));
    }
    /* The last operand is the output. */
    for (int i = 0; i < n - 1; i++)
        GK_FORWARD(gk__check_same_or_disjoint(fn, names[n - 1], bufs[n - 1], names[i], bufs[i]));
    return GK_OK;
}

static gk_status check_operands(const char *fn, const gk_context *c, const gk_buffer *const *bufs,
                                int n)
{
    return check_typed(fn, c, bufs, n, 0);
}

/* Begins the call over the n checked operands, the last one written with role last (the
 * others read). */
static gk_status begin(gk_call *call, gk_context *c, const char *fn, const gk_buffer *const *bufs,
                       int n, gk_role last, gk_work_class cls)
{
    size_t count = bufs[0]->count;
    gk_dtype t = bufs[0]->dtype;
    gk_operand operands[GK_MAX_OPERANDS];
    for (int i = 0; i < n; i++) {
        operands[i].buf = bufs[i];
        operands[i].role = i == n - 1 ? last : GK_ROLE_IN;
        operands[i].extent = count;
    }
    gk_workload w = {cls, t == GK_FLOAT64, (double)count * (double)n * (double)gk__dtype_size(t)};
    return gk__call_begin(call, c, fn, operands, n, &w);
}

GK_API gk_status gk_fill(gk_context *c, double value, gk_buffer *x)
{
    static const char fn[] = "gk_fill";
    const gk_buffer *bufs[] = {x};
    GK_FORWARD(check_operands(fn, c, bufs, 1));
    if (x->count == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, bufs, 1, GK_ROLE_OUT, GK_WORK_STREAM));
    return gk__call_end(&call, GK_CALL(&call, fill, x->dtype, x->count,
                                       gk__round_scalar(x->dtype, value), call.ptr[0]));
}

GK_API gk_status gk_copy(gk_context *c, const gk_buffer *x, gk_buffer *y)
{
    static const char fn[] = "gk_copy";
    const gk_buffer *bufs[] = {x, y};
    GK_FORWARD(check_typed(fn, c, bufs, 2, 1));
    if (x->count == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, bufs, 2, GK_ROLE_OUT, GK_WORK_STREAM));
    /* The slots know the float dtypes only; a copy moves bits, and int64 elements are as wide
     * as float64 ones, which every backend copies exactly. */
    gk_dtype t = x->dtype == GK_INT64 ? GK_FLOAT64 : x->dtype;
    return gk__call_end(&call, GK_CALL(&call, copy, t, x->count, call.ptr[0], call.ptr[1]));
}

/* The binary operations share everything but their slot. */
typedef enum { BINARY_ADD, BINARY_SUB, BINARY_MUL, BINARY_DIV } binary_op;

static gk_status binary(gk_context *c, const char *fn, binary_op op, const gk_buffer *x,
                        const gk_buffer *y, gk_buffer *z)
{
    const gk_buffer *bufs[] = {x, y, z};
    GK_FORWARD(check_operands(fn, c, bufs, 3));
    if (x->count == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, bufs, 3, GK_ROLE_OUT, GK_WORK_STREAM));
    gk_dtype t = x->dtype;
    size_t n = x->count;
    void *const *p = call.ptr;
    gk_status st = GK_E_INTERNAL;
    switch (op) {
    case BINARY_ADD:
        st = GK_CALL(&call, add, t, n, p[0], p[1], p[2]);
        break;
    case BINARY_SUB:
        st = GK_CALL(&call, sub, t, n, p[0], p[1], p[2]);
        break;
    case BINARY_MUL:
        st = GK_CALL(&call, mul, t, n, p[0], p[1], p[2]);
        break;
    case BINARY_DIV:
        st = GK_CALL(&call, div, t, n, p[0], p[1], p[2]);
        break;
    }
    return gk__call_end(&call, st);
}

GK_API gk_status gk_add(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z)
{
    return binary(c, "gk_add", BINARY_ADD, x, y, z);
}

GK_API gk_status gk_sub(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z)
{
    return binary(c, "gk_sub", BINARY_SUB, x, y, z);
}

GK_API gk_status gk_mul(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z)
{
    return binary(c, "gk_mul", BINARY_MUL, x, y, z);
}

/* Since 1.2: a CUDA module built before it has no div slot, which GK_CALL reports. */
GK_API gk_status gk_div(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z)
{
    return binary(c, "gk_div", BINARY_DIV, x, y, z);
}

GK_API gk_status gk_axpy(gk_context *c, double alpha, const gk_buffer *x, gk_buffer *y)
{
    static const char fn[] = "gk_axpy";
    const gk_buffer *bufs[] = {x, y};
    GK_FORWARD(check_operands(fn, c, bufs, 2));
    if (x->count == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, bufs, 2, GK_ROLE_INOUT, GK_WORK_STREAM));
    return gk__call_end(&call,
                        GK_CALL(&call, axpy, x->dtype, x->count, gk__round_scalar(x->dtype, alpha),
                                call.ptr[0], call.ptr[1]));
}

GK_API gk_status gk_scale(gk_context *c, double alpha, gk_buffer *x)
{
    static const char fn[] = "gk_scale";
    const gk_buffer *bufs[] = {x};
    GK_FORWARD(check_operands(fn, c, bufs, 1));
    if (x->count == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, bufs, 1, GK_ROLE_INOUT, GK_WORK_STREAM));
    return gk__call_end(&call, GK_CALL(&call, scale, x->dtype, x->count,
                                       gk__round_scalar(x->dtype, alpha), call.ptr[0]));
}

GK_API gk_status gk_exp(gk_context *c, const gk_buffer *x, gk_buffer *y)
{
    static const char fn[] = "gk_exp";
    const gk_buffer *bufs[] = {x, y};
    GK_FORWARD(check_operands(fn, c, bufs, 2));
    if (x->count == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, bufs, 2, GK_ROLE_OUT, GK_WORK_EXP));
    return gk__call_end(&call, GK_CALL(&call, exp, x->dtype, x->count, call.ptr[0], call.ptr[1]));
}
