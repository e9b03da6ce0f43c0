/* SPDX-License-Identifier: MIT */
/* ops_elementwise.c - the public element-wise operations: checks, then dispatch. */
#include "check.h"
#include "dispatch.h"

/* Arguments of an element-wise call, as the kernels below need them. */
typedef struct elementwise_args {
    const char *fn;
    gk_dtype t;
    size_t n;
    double alpha;
} elementwise_args;

/* Checks the context and that every operand is a buffer of it with first's dtype and count. */
static gk_status check_operands(const char *fn, const gk_context *c, const gk_buffer *const *bufs,
                                const char *const *names, int n)
{
    GK_FORWARD(gk__check_context(fn, c));
    for (int i = 0; i < n; i++)
        GK_FORWARD(gk__check_buffer(fn, names[i], c, bufs[i]));
    for (int i = 1; i < n; i++) {
        GK_FORWARD(gk__check_same_dtype(fn, names[i], bufs[i], names[0], bufs[0]));
        GK_FORWARD(gk__check_count(fn, names[i], bufs[i], names[0], bufs[0]->count));
    }
    return GK_OK;
}

static gk_status kernel_fill(const gk_engine *e, void *const *p, const void *v)
{
    const elementwise_args *a = v;
    return GK_CALL(e, a->fn, fill, a->t, a->n, a->alpha, p[0]);
}

static gk_status kernel_copy(const gk_engine *e, void *const *p, const void *v)
{
    const elementwise_args *a = v;
    return GK_CALL(e, a->fn, copy, a->t, a->n, p[0], p[1]);
}

static gk_status kernel_add(const gk_engine *e, void *const *p, const void *v)
{
    const elementwise_args *a = v;
    return GK_CALL(e, a->fn, add, a->t, a->n, p[0], p[1], p[2]);
}

static gk_status kernel_sub(const gk_engine *e, void *const *p, const void *v)
{
    const elementwise_args *a = v;
    return GK_CALL(e, a->fn, sub, a->t, a->n, p[0], p[1], p[2]);
}

static gk_status kernel_mul(const gk_engine *e, void *const *p, const void *v)
{
    const elementwise_args *a = v;
    return GK_CALL(e, a->fn, mul, a->t, a->n, p[0], p[1], p[2]);
}

static gk_status kernel_axpy(const gk_engine *e, void *const *p, const void *v)
{
    const elementwise_args *a = v;
    return GK_CALL(e, a->fn, axpy, a->t, a->n, a->alpha, p[0], p[1]);
}

static gk_status kernel_scale(const gk_engine *e, void *const *p, const void *v)
{
    const elementwise_args *a = v;
    return GK_CALL(e, a->fn, scale, a->t, a->n, a->alpha, p[0]);
}

static gk_status kernel_exp(const gk_engine *e, void *const *p, const void *v)
{
    const elementwise_args *a = v;
    return GK_CALL(e, a->fn, exp, a->t, a->n, p[0], p[1]);
}

/* Dispatches kernel over the n operands, the last one being written (roles: in..., out). */
static gk_status run(gk_context *c, const char *fn, const gk_buffer *const *bufs, int n,
                     gk_role last_role, double alpha, gk_kernel kernel)
{
    size_t count = bufs[0]->count;
    if (count == 0)
        return GK_OK;
    gk_dtype t = bufs[0]->dtype;
    gk_workload w = {kernel == kernel_exp ? GK_WORK_EXP : GK_WORK_STREAM, t == GK_FLOAT64,
                     (double)count * (double)n * (double)gk__dtype_size(t)};
    gk_operand operands[GK_MAX_OPERANDS];
    for (int i = 0; i < n; i++) {
        operands[i].buf = bufs[i];
        operands[i].role = i == n - 1 ? last_role : GK_ROLE_IN;
        operands[i].extent = count;
    }
    elementwise_args args = {fn, t, count, gk__round_scalar(t, alpha)};
    return gk__dispatch(c, fn, operands, n, &w, kernel, &args);
}

GK_API gk_status gk_fill(gk_context *c, double value, gk_buffer *x)
{
    static const char fn[] = "gk_fill";
    const gk_buffer *bufs[] = {x};
    static const char *const names[] = {"x"};
    GK_FORWARD(check_operands(fn, c, bufs, names, 1));
    return run(c, fn, bufs, 1, GK_ROLE_OUT, value, kernel_fill);
}

GK_API gk_status gk_copy(gk_context *c, const gk_buffer *x, gk_buffer *y)
{
    static const char fn[] = "gk_copy";
    const gk_buffer *bufs[] = {x, y};
    static const char *const names[] = {"x", "y"};
    GK_FORWARD(check_operands(fn, c, bufs, names, 2));
    return run(c, fn, bufs, 2, GK_ROLE_OUT, 0.0, kernel_copy);
}

/* add, sub and mul differ only in their kernel. */
static gk_status binary(const char *fn, gk_context *c, const gk_buffer *x, const gk_buffer *y,
                        gk_buffer *z, gk_kernel kernel)
{
    const gk_buffer *bufs[] = {x, y, z};
    static const char *const names[] = {"x", "y", "z"};
    GK_FORWARD(check_operands(fn, c, bufs, names, 3));
    return run(c, fn, bufs, 3, GK_ROLE_OUT, 0.0, kernel);
}

GK_API gk_status gk_add(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z)
{
    return binary("gk_add", c, x, y, z, kernel_add);
}

GK_API gk_status gk_sub(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z)
{
    return binary("gk_sub", c, x, y, z, kernel_sub);
}

GK_API gk_status gk_mul(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z)
{
    return binary("gk_mul", c, x, y, z, kernel_mul);
}

GK_API gk_status gk_axpy(gk_context *c, double alpha, const gk_buffer *x, gk_buffer *y)
{
    static const char fn[] = "gk_axpy";
    const gk_buffer *bufs[] = {x, y};
    static const char *const names[] = {"x", "y"};
    GK_FORWARD(check_operands(fn, c, bufs, names, 2));
    return run(c, fn, bufs, 2, GK_ROLE_INOUT, alpha, kernel_axpy);
}

GK_API gk_status gk_scale(gk_context *c, double alpha, gk_buffer *x)
{
    static const char fn[] = "gk_scale";
    const gk_buffer *bufs[] = {x};
    static const char *const names[] = {"x"};
    GK_FORWARD(check_operands(fn, c, bufs, names, 1));
    return run(c, fn, bufs, 1, GK_ROLE_INOUT, alpha, kernel_scale);
}

GK_API gk_status gk_exp(gk_context *c, const gk_buffer *x, gk_buffer *y)
{
    static const char fn[] = "gk_exp";
    const gk_buffer *bufs[] = {x, y};
    static const char *const names[] = {"x", "y"};
    GK_FORWARD(check_operands(fn, c, bufs, names, 2));
    return run(c, fn, bufs, 2, GK_ROLE_OUT, 0.0, kernel_exp);
}
