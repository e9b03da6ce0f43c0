/* SPDX-License-Identifier: MIT */
/* ops_rbf.c - the public Gaussian (RBF) kernels: size, overflow and aliasing checks. */
#include <math.h>

#include "check.h"
#include "dispatch.h"
#include "ops_rbf.h"

/* The buffer operands of one rbf call: inputs first, the output last. */
typedef struct rbf_operands {
    const gk_buffer *buf[GK_MAX_OPERANDS];
    const char *name[GK_MAX_OPERANDS];
    size_t need[GK_MAX_OPERANDS];
    int n;
} rbf_operands;

/* Checks handles, dtypes, sizes and aliasing. */
static gk_status check(const char *fn, const gk_context *c, const rbf_operands *o)
{
    GK_FORWARD(gk__check_context(fn, c));
    for (int i = 0; i < o->n; i++)
        GK_FORWARD(gk__check_operand(fn, o->name[i], c, o->buf[i]));
    for (int i = 1; i < o->n; i++)
        GK_FORWARD(gk__check_same_dtype(fn, o->name[i], o->buf[i], o->name[0], o->buf[0]));
    for (int i = 0; i < o->n; i++)
        GK_FORWARD(gk__check_holds(fn, o->name[i], o->buf[i], o->need[i]));
    int out = o->n - 1;
    for (int i = 0; i < out; i++)
        GK_FORWARD(gk__check_disjoint(fn, o->name[out], o->buf[out], o->name[i], o->buf[i]));
    return GK_OK;
}

/* Begins the call over the checked operands (the output written, the inputs read) as work w. */
static gk_status begin(gk_call *call, gk_context *c, const char *fn, const rbf_operands *o,
                       const gk_workload *w)
{
    gk_operand operands[GK_MAX_OPERANDS];
    for (int i = 0; i < o->n; i++) {
        operands[i].buf = o->buf[i];
        operands[i].role = i == o->n - 1 ? GK_ROLE_OUT : GK_ROLE_IN;
        operands[i].extent = o->need[i];
    }
    return gk__call_begin(call, c, fn, operands, o->n, w);
}

/* The pairwise kernels' work: row pairs times features. */
static gk_workload pairs(gk_dtype t, size_t m, size_t n, size_t d)
{
    gk_workload w = {GK_WORK_RBF_PAIRS, t == GK_FLOAT64, (double)m * (double)n * (double)d};
    return w;
}

/* Below this gamma (as the dtype holds it) ||x - y||^2 can overflow where gamma ||x - y||^2 does
 * not (x = 1.9e19, y = 0, gamma = 1e-38 in float32): the rows are then scaled by 2^k and gamma
 * by 2^-2k (tiny_gamma_scale), which changes no distance's ratio to 1 / gamma. */
#define GK_TINY_GAMMA_F32 0x1p-60
#define GK_TINY_GAMMA_F64 0x1p-500

/* k < 0 with gamma 2^-2k in [1, 4) where gamma is positive and below the dtype's limit, else 0.
 * Scaling by 2^k is exact but for values that become subnormal, whose squares are then below
 * 2^-200 of gamma's unit and change no kernel value by 1e-5. */
static int tiny_gamma_scale(gk_dtype t, double gamma)
{
    if (!(gamma > 0.0) || gamma >= (t == GK_FLOAT32 ? GK_TINY_GAMMA_F32 : GK_TINY_GAMMA_F64))
        return 0;
    int e;
    (void)frexp(gamma, &e);
    return (e - 1) >> 1;
}

/* A copy of count elements at src on the call's engine, scaled by 2^k, in *dst (bytes long). */
static gk_status scaled_copy(gk_call *call, gk_dtype t, size_t count, const void *src, int k,
                             void **dst, size_t *bytes)
{
    const gk_engine *e = call->engine;
    *bytes = count * gk__dtype_size(t);
    *dst = NULL;
    gk_status st = e->ops->mem_alloc(e->state, *bytes, dst);
    if (st == GK_OK)
        st = GK_CALL(call, copy, t, count, src, *dst);
    if (st == GK_OK)
        st = GK_CALL(call, scale, t, count, ldexp(1.0, k), *dst);
    if (st != GK_OK && *dst != NULL) {
        e->ops->mem_free(e->state, *dst, *bytes);
        *dst = NULL;
    }
    return st;
}

/* The rbf_matrix or rbf_matvec slot on x and y scaled by 2^k and gamma by 2^-2k (k < 0). */
static gk_status call_scaled(gk_call *call, gk_dtype t, int k, size_t m, size_t n, size_t d,
                             double gamma)
{
    void *sx = NULL, *sy = NULL;
    size_t bx = 0, by = 0;
    const gk_engine *e = call->engine;
    gk_status st = scaled_copy(call, t, m * d, call->ptr[0], k, &sx, &bx);
    if (st == GK_OK)
        st = scaled_copy(call, t, n * d, call->ptr[1], k, &sy, &by);
    const double g = ldexp(gamma, -2 * k);
    if (st == GK_OK && call->n == 3)
        st = GK_CALL(call, rbf_matrix, t, m, n, d, g, sx, sy, call->ptr[2]);
    else if (st == GK_OK)
        st = GK_CALL(call, rbf_matvec, t, m, n, d, g, sx, sy, call->ptr[2], call->ptr[3]);
    if (sx != NULL)
        e->ops->mem_free(e->state, sx, bx);
    if (sy != NULL)
        e->ops->mem_free(e->state, sy, by);
    return st;
}

gk_status gk__rbf_slot(gk_call *call, gk_dtype t, size_t m, size_t n, size_t d, double gamma)
{
    const int scale = d > 0 ? tiny_gamma_scale(t, gamma) : 0;
    if (scale != 0)
        return call_scaled(call, t, scale, m, n, d, gamma);
    if (call->n == 3)
        return GK_CALL(call, rbf_matrix, t, m, n, d, gamma, call->ptr[0], call->ptr[1],
                       call->ptr[2]);
    return GK_CALL(call, rbf_matvec, t, m, n, d, gamma, call->ptr[0], call->ptr[1], call->ptr[2],
                   call->ptr[3]);
}

GK_API gk_status gk_rbf_rows(gk_context *c, size_t n, size_t d, double gamma, const gk_buffer *a,
                             const gk_buffer *b, gk_buffer *k)
{
    static const char fn[] = "gk_rbf_rows";
    size_t nd;
    GK_FORWARD(gk__mul_size(fn, "n * d", n, d, &nd));
    rbf_operands o = {{a, b, k}, {"a", "b", "k"}, {nd, nd, n}, 3};
    GK_FORWARD(check(fn, c, &o));
    if (n == 0)
        return GK_OK;
    gk_dtype t = a->dtype;
    /* Bytes of a and b: each pair is read once. */
    gk_workload w = {GK_WORK_RBF_ROWS, t == GK_FLOAT64,
                     2.0 * (double)nd * (double)gk__dtype_size(t)};
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, &o, &w));
    return gk__call_end(&call, GK_CALL(&call, rbf_rows, t, n, d, gk__round_scalar(t, gamma),
                                       call.ptr[0], call.ptr[1], call.ptr[2]));
}

GK_API gk_status gk_rbf_matrix(gk_context *c, size_t m, size_t n, size_t d, double gamma,
                               const gk_buffer *x, const gk_buffer *y, gk_buffer *k)
{
    static const char fn[] = "gk_rbf_matrix";
    size_t md, nd, mn;
    GK_FORWARD(gk__mul_size(fn, "m * d", m, d, &md));
    GK_FORWARD(gk__mul_size(fn, "n * d", n, d, &nd));
    GK_FORWARD(gk__mul_size(fn, "m * n", m, n, &mn));
    rbf_operands o = {{x, y, k}, {"x", "y", "k"}, {md, nd, mn}, 3};
    GK_FORWARD(check(fn, c, &o));
    if (mn == 0)
        return GK_OK;
    gk_dtype t = x->dtype;
    gk_workload w = pairs(t, m, n, d);
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, &o, &w));
    return gk__call_end(&call, gk__rbf_slot(&call, t, m, n, d, gk__round_scalar(t, gamma)));
}

GK_API gk_status gk_rbf_matvec(gk_context *c, size_t m, size_t n, size_t d, double gamma,
                               const gk_buffer *x, const gk_buffer *y, const gk_buffer *w,
                               gk_buffer *out)
{
    static const char fn[] = "gk_rbf_matvec";
    size_t md, nd;
    GK_FORWARD(gk__mul_size(fn, "m * d", m, d, &md));
    GK_FORWARD(gk__mul_size(fn, "n * d", n, d, &nd));
    rbf_operands o = {{x, y, w, out}, {"x", "y", "w", "out"}, {md, nd, n, m}, 4};
    GK_FORWARD(check(fn, c, &o));
    if (m == 0)
        return GK_OK;
    gk_dtype t = x->dtype;
    gk_call call;
    if (n == 0) { /* every sum is empty: the slot only ever sees n > 0 */
        rbf_operands zeros = {{out}, {"out"}, {m}, 1};
        gk_workload bytes = {GK_WORK_STREAM, t == GK_FLOAT64,
                             (double)m * (double)gk__dtype_size(t)};
        GK_FORWARD(begin(&call, c, fn, &zeros, &bytes));
        return gk__call_end(&call, GK_CALL(&call, fill, t, m, 0.0, call.ptr[0]));
    }
    gk_workload work = pairs(t, m, n, d);
    GK_FORWARD(begin(&call, c, fn, &o, &work));
    return gk__call_end(&call, gk__rbf_slot(&call, t, m, n, d, gk__round_scalar(t, gamma)));
}
