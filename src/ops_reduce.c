/* SPDX-License-Identifier: MIT */
/* ops_reduce.c - the public reductions (sum, dot, nrm2): checks, then the backend's slot. */
#include "check.h"
#include "dispatch.h"

/* Checks a reduction over x (and y, for dot) into *result. */
static gk_status check(const char *fn, const gk_context *c, const gk_buffer *x, int dot,
                       const gk_buffer *y, const double *result)
{
    GK_FORWARD(gk__check_context(fn, c));
    GK_FORWARD(gk__check_operand(fn, "x", c, x));
    if (dot) {
        GK_FORWARD(gk__check_operand(fn, "y", c, y));
        GK_FORWARD(gk__check_same_dtype(fn, "y", y, "x", x));
        GK_FORWARD(gk__check_count(fn, "y", y, "x", x->count));
    }
    return gk__check_pointer(fn, "result", result);
}

static gk_status begin(gk_call *call, gk_context *c, const char *fn, const gk_buffer *x,
                       const gk_buffer *y)
{
    gk_operand operands[] = {{x, GK_ROLE_IN, x->count}, {y, GK_ROLE_IN, x->count}};
    int n = y != NULL ? 2 : 1;
    gk_workload w = {GK_WORK_STREAM, x->dtype == GK_FLOAT64,
                     (double)n * (double)x->count * (double)gk__dtype_size(x->dtype)};
    return gk__call_begin(call, c, fn, operands, n, &w);
}

/* The reductions share everything but their slot. */
typedef enum { REDUCE_SUM, REDUCE_DOT, REDUCE_NRM2 } reduce_op;

/* Reduces x (and y, for dot) into *result, written only on success. */
static gk_status reduce(gk_context *c, const char *fn, reduce_op op, const gk_buffer *x,
                        const gk_buffer *y, double *result)
{
    GK_FORWARD(check(fn, c, x, op == REDUCE_DOT, y, result));
    if (x->count == 0) {
        *result = 0.0;
        return GK_OK;
    }
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, x, y));
    gk_dtype t = x->dtype;
    size_t n = x->count;
    double value = 0.0;
    gk_status st = GK_E_INTERNAL;
    switch (op) {
    case REDUCE_SUM:
        st = GK_CALL(&call, sum, t, n, call.ptr[0], &value);
        break;
    case REDUCE_DOT:
        st = GK_CALL(&call, dot, t, n, call.ptr[0], call.ptr[1], &value);
        break;
    case REDUCE_NRM2:
        st = GK_CALL(&call, nrm2, t, n, call.ptr[0], &value);
        break;
    }
    GK_FORWARD(gk__call_end(&call, st));
    *result = value;
    return GK_OK;
}

GK_API gk_status gk_sum(gk_context *c, const gk_buffer *x, double *result)
{
    return reduce(c, "gk_sum", REDUCE_SUM, x, NULL, result);
}

GK_API gk_status gk_dot(gk_context *c, const gk_buffer *x, const gk_buffer *y, double *result)
{
    return reduce(c, "gk_dot", REDUCE_DOT, x, y, result);
}

GK_API gk_status gk_nrm2(gk_context *c, const gk_buffer *x, double *result)
{
    return reduce(c, "gk_nrm2", REDUCE_NRM2, x, NULL, result);
}
