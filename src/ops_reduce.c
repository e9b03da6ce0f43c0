/* SPDX-License-Identifier: MIT */
/* ops_reduce.c - the public reductions (sum, dot, nrm2): checks, then dispatch. */
#include "check.h"
#include "dispatch.h"

typedef struct reduce_args {
    const char *fn;
    gk_dtype t;
    size_t n;
    double *result;
} reduce_args;

static gk_status kernel_sum(const gk_engine *e, void *const *p, const void *v)
{
    const reduce_args *a = v;
    return GK_CALL(e, a->fn, sum, a->t, a->n, p[0], a->result);
}

static gk_status kernel_dot(const gk_engine *e, void *const *p, const void *v)
{
    const reduce_args *a = v;
    return GK_CALL(e, a->fn, dot, a->t, a->n, p[0], p[1], a->result);
}

static gk_status kernel_nrm2(const gk_engine *e, void *const *p, const void *v)
{
    const reduce_args *a = v;
    return GK_CALL(e, a->fn, nrm2, a->t, a->n, p[0], a->result);
}

/* Runs a reduction over x (and y, if given) into *result, which is written only on success. */
static gk_status reduce(const char *fn, gk_context *c, const gk_buffer *x, const gk_buffer *y,
                        double *result, gk_kernel kernel)
{
    GK_FORWARD(gk__check_context(fn, c));
    GK_FORWARD(gk__check_buffer(fn, "x", c, x));
    if (y != NULL) {
        GK_FORWARD(gk__check_same_dtype(fn, "y", y, "x", x));
        GK_FORWARD(gk__check_count(fn, "y", y, "x", x->count));
    }
    GK_FORWARD(gk__check_pointer(fn, "result", result));
    if (x->count == 0) {
        *result = 0.0;
        return GK_OK;
    }
    gk_operand operands[] = {{x, GK_ROLE_IN, x->count}, {y, GK_ROLE_IN, x->count}};
    double value = 0.0;
    reduce_args args = {fn, x->dtype, x->count, &value};
    int n = y != NULL ? 2 : 1;
    gk_workload w = {GK_WORK_STREAM, x->dtype == GK_FLOAT64,
                     (double)n * (double)x->count * (double)gk__dtype_size(x->dtype)};
    GK_FORWARD(gk__dispatch(c, fn, operands, n, &w, kernel, &args));
    *result = value;
    return GK_OK;
}

GK_API gk_status gk_sum(gk_context *c, const gk_buffer *x, double *result)
{
    return reduce("gk_sum", c, x, NULL, result, kernel_sum);
}

GK_API gk_status gk_dot(gk_context *c, const gk_buffer *x, const gk_buffer *y, double *result)
{
    static const char fn[] = "gk_dot";
    GK_FORWARD(gk__check_context(fn, c));
    GK_FORWARD(gk__check_buffer(fn, "y", c, y));
    return reduce(fn, c, x, y, result, kernel_dot);
}

GK_API gk_status gk_nrm2(gk_context *c, const gk_buffer *x, double *result)
{
    return reduce("gk_nrm2", c, x, NULL, result, kernel_nrm2);
}
