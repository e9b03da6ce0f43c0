/* SPDX-License-Identifier: MIT */
/* ops_reduce.c - the public reductions (sum, dot, nrm2): checks, then the backend's slot. */
#include "check.h"
#include "dispatch.h"

/* Checks a reduction over x (and y, for dot) into *result. */
static gk_status check(const char *fn, const gk_context *c, const gk_buffer *x, int dot,
                       const gk_buffer *y, const double *result)
{
    GK_FORWARD(gk__check_context(fn, c));
    GK_FORWARD(gk__check_buffer(fn, "x", c, x));
    if (dot) {
        GK_FORWARD(gk__check_buffer(fn, "y", c, y));
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

/* Ends the call; *result is written only on success. */
static gk_status end(gk_call *call, gk_status st, double value, double *result)
{
    GK_FORWARD(gk__call_end(call, st));
    *result = value;
    return GK_OK;
}

GK_API gk_status gk_sum(gk_context *c, const gk_buffer *x, double *result)
{
    static const char fn[] = "gk_sum";
    GK_FORWARD(check(fn, c, x, 0, NULL, result));
    if (x->count == 0) {
        *result = 0.0;
        return GK_OK;
    }
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, x, NULL));
    double value = 0.0;
    gk_status st = GK_CALL(&call, sum, x->dtype, x->count, call.ptr[0], &value);
    return end(&call, st, value, result);
}

GK_API gk_status gk_dot(gk_context *c, const gk_buffer *x, const gk_buffer *y, double *result)
{
    static const char fn[] = "gk_dot";
    GK_FORWARD(check(fn, c, x, 1, y, result));
    if (x->count == 0) {
        *result = 0.0;
        return GK_OK;
    }
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, x, y));
    double value = 0.0;
    gk_status st = GK_CALL(&call, dot, x->dtype, x->count, call.ptr[0], call.ptr[1], &value);
    return end(&call, st, value, result);
}

GK_API gk_status gk_nrm2(gk_context *c, const gk_buffer *x, double *result)
{
    static const char fn[] = "gk_nrm2";
    GK_FORWARD(check(fn, c, x, 0, NULL, result));
    if (x->count == 0) {
        *result = 0.0;
        return GK_OK;
    }
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, x, NULL));
    double value = 0.0;
    gk_status st = GK_CALL(&call, nrm2, x->dtype, x->count, call.ptr[0], &value);
    return end(&call, st, value, result);
}
