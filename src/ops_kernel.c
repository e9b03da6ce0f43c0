/* SPDX-License-Identifier: MIT */
/* ops_kernel.c - the kernel family, distances and k-NN: kernel, metric, size, overflow and
 * aliasing checks; the Gaussian kernel through the rbf slots. */
#include <math.h>

#include "check.h"
#include "dispatch.h"
#include "ops_rbf.h"

GK_API void gk_kernel_init(gk_kernel *k, gk_kernel_kind kind)
{
    if (k == NULL)
        return;
    k->struct_size = (uint32_t)sizeof *k;
    k->kind = (int32_t)kind;
    k->gamma = 1.0;
    k->coef0 = 1.0;
    k->degree = 3.0;
    k->nu = 1.5;
}

static const char *kind_name(int32_t kind)
{
    static const char *const names[] = {"rbf",    "laplacian", "polynomial", "sigmoid",
                                        "linear", "cosine",    "matern"};
    return kind >= GK_KERNEL_RBF && kind <= GK_KERNEL_MATERN ? names[kind - 1] : "unknown";
}

/* The kinds whose value depends on gamma, and on coef0. */
static int uses_gamma(int32_t kind)
{
    return kind != GK_KERNEL_LINEAR && kind != GK_KERNEL_COSINE;
}

static int uses_coef0(int32_t kind)
{
    return kind == GK_KERNEL_POLYNOMIAL || kind == GK_KERNEL_SIGMOID;
}

/* *k is an initialized kernel of a known kind whose parameters it can use. */
static gk_status check_kernel(const char *fn, const gk_kernel *k)
{
    GK_CHECK(k != NULL, GK_E_INVALID_ARGUMENT, "%s: kernel k is NULL", fn);
    GK_CHECK(k->struct_size == sizeof *k, GK_E_INVALID_ARGUMENT,
             "%s: k->struct_size (%u) is not sizeof(gk_kernel) (%zu): k was not set up by "
             "gk_kernel_init",
             fn, (unsigned)k->struct_size, sizeof *k);
    GK_CHECK(k->kind >= GK_KERNEL_RBF && k->kind <= GK_KERNEL_MATERN, GK_E_INVALID_ARGUMENT,
             "%s: k->kind (%d) is not a gk_kernel_kind (GK_KERNEL_RBF = 1 .. GK_KERNEL_MATERN = 7)",
             fn, (int)k->kind);
    const char *name = kind_name(k->kind);
    GK_CHECK(!uses_gamma(k->kind) || isfinite(k->gamma), GK_E_INVALID_ARGUMENT,
             "%s: k->gamma (%g) is not finite; the %s kernel needs a finite gamma", fn, k->gamma,
             name);
    GK_CHECK(k->kind != GK_KERNEL_MATERN || k->gamma >= 0.0, GK_E_INVALID_ARGUMENT,
             "%s: k->gamma (%g) is negative; the matern kernel takes gamma = 1 / length_scale^2",
             fn, k->gamma);
    GK_CHECK(!uses_coef0(k->kind) || isfinite(k->coef0), GK_E_INVALID_ARGUMENT,
             "%s: k->coef0 (%g) is not finite; the %s kernel needs a finite coef0", fn, k->coef0,
             name);
    GK_CHECK(k->kind != GK_KERNEL_POLYNOMIAL ||
                 (k->degree >= 0.0 && k->degree <= 32.0 && k->degree == floor(k->degree)),
             GK_E_INVALID_ARGUMENT,
             "%s: k->degree (%g) is not an integer from 0 to 32, which the polynomial kernel needs",
             fn, k->degree);
    GK_CHECK(k->kind != GK_KERNEL_MATERN || k->nu == 0.5 || k->nu == 1.5 || k->nu == 2.5,
             GK_E_INVALID_ARGUMENT,
             "%s: k->nu (%g) is not 0.5, 1.5 or 2.5, which the matern "
             "kernel needs",
             fn, k->nu);
    return GK_OK;
}

/* The kernel as the slots get it: gamma and coef0 rounded to t, where they must stay finite. */
static gk_status round_kernel(const char *fn, const gk_kernel *k, gk_dtype t, gk_kernel *out)
{
    *out = *k;
    out->gamma = gk__round_scalar(t, k->gamma);
    out->coef0 = gk__round_scalar(t, k->coef0);
    GK_CHECK(!uses_gamma(k->kind) || isfinite(out->gamma), GK_E_INVALID_ARGUMENT,
             "%s: k->gamma (%g) overflows float32, the dtype of the call", fn, k->gamma);
    GK_CHECK(!uses_coef0(k->kind) || isfinite(out->coef0), GK_E_INVALID_ARGUMENT,
             "%s: k->coef0 (%g) overflows float32, the dtype of the call", fn, k->coef0);
    return GK_OK;
}

static gk_status check_metric(const char *fn, gk_metric metric)
{
    GK_CHECK(metric >= GK_METRIC_SQEUCLIDEAN && metric <= GK_METRIC_COSINE, GK_E_INVALID_ARGUMENT,
             "%s: metric (%d) is not a gk_metric (GK_METRIC_SQEUCLIDEAN = 1 .. GK_METRIC_COSINE = "
             "4)",
             fn, (int)metric);
    return GK_OK;
}

/* The operands of one call: the float inputs first, then `outs` outputs. */
typedef struct kernel_operands {
    const gk_buffer *buf[GK_MAX_OPERANDS];
    const char *name[GK_MAX_OPERANDS];
    size_t need[GK_MAX_OPERANDS];
    int n, outs;
} kernel_operands;

/* Checks handles, dtypes, sizes and aliasing. gk_knn's last operand is its int64 index. */
static gk_status check_operands(const char *fn, const gk_context *c, const kernel_operands *o,
                                int int64_last)
{
    GK_FORWARD(gk__check_context(fn, c));
    int floats = o->n - int64_last;
    for (int i = 0; i < floats; i++)
        GK_FORWARD(gk__check_operand(fn, o->name[i], c, o->buf[i]));
    for (int i = floats; i < o->n; i++) {
        GK_FORWARD(gk__check_buffer(fn, o->name[i], c, o->buf[i]));
        GK_CHECK(o->buf[i]->dtype == GK_INT64, GK_E_DTYPE, "%s: %s is %s but must be int64", fn,
                 o->name[i], o->buf[i]->dtype == GK_FLOAT32 ? "float32" : "float64");
    }
    for (int i = 1; i < floats; i++)
        GK_FORWARD(gk__check_same_dtype(fn, o->name[i], o->buf[i], o->name[0], o->buf[0]));
    for (int i = 0; i < o->n; i++)
        GK_FORWARD(gk__check_holds(fn, o->name[i], o->buf[i], o->need[i]));
    for (int out = o->n - o->outs; out < o->n; out++)
        for (int i = 0; i < out; i++)
            GK_FORWARD(gk__check_disjoint(fn, o->name[out], o->buf[out], o->name[i], o->buf[i]));
    return GK_OK;
}

/* Begins the call over the checked operands (the outputs written, the inputs read). */
static gk_status begin(gk_call *call, gk_context *c, const char *fn, const kernel_operands *o,
                       double work)
{
    gk_operand operands[GK_MAX_OPERANDS];
    for (int i = 0; i < o->n; i++) {
        operands[i].buf = o->buf[i];
        operands[i].role = i >= o->n - o->outs ? GK_ROLE_OUT : GK_ROLE_IN;
        operands[i].extent = o->need[i];
    }
    /* Row pairs times features, as the rbf ops count their work. */
    gk_workload w = {GK_WORK_RBF_PAIRS, o->buf[0]->dtype == GK_FLOAT64, work};
    return gk__call_begin(call, c, fn, operands, o->n, &w);
}

static double pair_work(size_t m, size_t n, size_t per_pair)
{
    return (double)m * (double)n * (double)per_pair;
}

/* The operands of an m x n output of x (m x d) against y (n x d), checked; *mn its entries. */
static gk_status pairwise_operands(const char *fn, const gk_context *ctx, size_t m, size_t n,
                                   size_t d, const gk_buffer *x, const gk_buffer *y, gk_buffer *out,
                                   kernel_operands *o, size_t *mn)
{
    size_t md, nd;
    GK_FORWARD(gk__mul_size(fn, "m * d", m, d, &md));
    GK_FORWARD(gk__mul_size(fn, "n * d", n, d, &nd));
    GK_FORWARD(gk__mul_size(fn, "m * n", m, n, mn));
    kernel_operands ops = {{x, y, out}, {"x", "y", "out"}, {md, nd, *mn}, 3, 1};
    *o = ops;
    return check_operands(fn, ctx, o, 0);
}

GK_API gk_status gk_kernel_matrix(gk_context *ctx, const gk_kernel *k, size_t m, size_t n, size_t d,
                                  const gk_buffer *x, const gk_buffer *y, gk_buffer *out)
{
    static const char fn[] = "gk_kernel_matrix";
    GK_FORWARD(gk__check_context(fn, ctx));
    GK_FORWARD(check_kernel(fn, k));
    kernel_operands o;
    size_t mn;
    GK_FORWARD(pairwise_operands(fn, ctx, m, n, d, x, y, out, &o, &mn));
    gk_dtype t = x->dtype;
    gk_kernel kr;
    GK_FORWARD(round_kernel(fn, k, t, &kr));
    if (mn == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, ctx, fn, &o, pair_work(m, n, d)));
    if (kr.kind == GK_KERNEL_RBF)
        return gk__call_end(&call, gk__rbf_slot(&call, t, m, n, d, kr.gamma));
    return gk__call_end(&call, GK_CALL(&call, kernel_matrix, t, &kr, m, n, d, call.ptr[0],
                                       call.ptr[1], call.ptr[2]));
}

GK_API gk_status gk_kernel_matmul(gk_context *ctx, const gk_kernel *k, size_t m, size_t n, size_t d,
                                  size_t r, const gk_buffer *x, const gk_buffer *y,
                                  const gk_buffer *w, gk_buffer *out)
{
    static const char fn[] = "gk_kernel_matmul";
    GK_FORWARD(gk__check_context(fn, ctx));
    GK_FORWARD(check_kernel(fn, k));
    size_t md, nd, nr, mr;
    GK_FORWARD(gk__mul_size(fn, "m * d", m, d, &md));
    GK_FORWARD(gk__mul_size(fn, "n * d", n, d, &nd));
    GK_FORWARD(gk__mul_size(fn, "n * r", n, r, &nr));
    GK_FORWARD(gk__mul_size(fn, "m * r", m, r, &mr));
    kernel_operands o = {{x, y, w, out}, {"x", "y", "w", "out"}, {md, nd, nr, mr}, 4, 1};
    GK_FORWARD(check_operands(fn, ctx, &o, 0));
    gk_dtype t = x->dtype;
    gk_kernel kr;
    GK_FORWARD(round_kernel(fn, k, t, &kr));
    if (mr == 0)
        return GK_OK;
    gk_call call;
    if (n == 0) { /* every sum is empty: the slots only ever see n > 0 */
        kernel_operands zeros = {{out}, {"out"}, {mr}, 1, 1};
        GK_FORWARD(begin(&call, ctx, fn, &zeros, (double)mr));
        return gk__call_end(&call, GK_CALL(&call, fill, t, mr, 0.0, call.ptr[0]));
    }
    GK_FORWARD(begin(&call, ctx, fn, &o, pair_work(m, n, d + r)));
    /* One right-hand side of the Gaussian kernel is rbf_matvec, with its planner's forms. */
    if (kr.kind == GK_KERNEL_RBF && r == 1)
        return gk__call_end(&call, gk__rbf_slot(&call, t, m, n, d, kr.gamma));
    return gk__call_end(&call, GK_CALL(&call, kernel_matmul, t, &kr, m, n, d, r, call.ptr[0],
                                       call.ptr[1], call.ptr[2], call.ptr[3]));
}

GK_API gk_status gk_distance_matrix(gk_context *ctx, gk_metric metric, size_t m, size_t n, size_t d,
                                    const gk_buffer *x, const gk_buffer *y, gk_buffer *out)
{
    static const char fn[] = "gk_distance_matrix";
    GK_FORWARD(gk__check_context(fn, ctx));
    GK_FORWARD(check_metric(fn, metric));
    kernel_operands o;
    size_t mn;
    GK_FORWARD(pairwise_operands(fn, ctx, m, n, d, x, y, out, &o, &mn));
    if (mn == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, ctx, fn, &o, pair_work(m, n, d)));
    return gk__call_end(&call, GK_CALL(&call, distance_matrix, x->dtype, metric, m, n, d,
                                       call.ptr[0], call.ptr[1], call.ptr[2]));
}

GK_API gk_status gk_knn(gk_context *ctx, gk_metric metric, size_t m, size_t n, size_t d, size_t k,
                        const gk_buffer *x, const gk_buffer *y, gk_buffer *dist, gk_buffer *index)
{
    static const char fn[] = "gk_knn";
    GK_FORWARD(gk__check_context(fn, ctx));
    GK_FORWARD(check_metric(fn, metric));
    GK_CHECK(k >= 1 && k <= n, GK_E_INVALID_ARGUMENT,
             "%s: k (%zu) is not between 1 and n (%zu), the rows of y", fn, k, n);
    size_t md, nd, mk;
    GK_FORWARD(gk__mul_size(fn, "m * d", m, d, &md));
    GK_FORWARD(gk__mul_size(fn, "n * d", n, d, &nd));
    GK_FORWARD(gk__mul_size(fn, "m * k", m, k, &mk));
    kernel_operands o = {{x, y, dist, index}, {"x", "y", "dist", "index"}, {md, nd, mk, mk}, 4, 2};
    GK_FORWARD(check_operands(fn, ctx, &o, 1));
    if (m == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, ctx, fn, &o, pair_work(m, n, d)));
    return gk__call_end(&call, GK_CALL(&call, knn, x->dtype, metric, m, n, d, k, call.ptr[0],
                                       call.ptr[1], call.ptr[2], (int64_t *)call.ptr[3]));
}
