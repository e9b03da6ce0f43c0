/* SPDX-License-Identifier: MIT */
/* ops_rbf.c - the public Gaussian (RBF) kernels: size, overflow and aliasing checks. */
#include "check.h"
#include "dispatch.h"

typedef struct rbf_args {
    const char *fn;
    gk_dtype t;
    size_t m, n, d;
    double gamma;
} rbf_args;

static gk_status kernel_rows(const gk_engine *e, void *const *p, const void *v)
{
    const rbf_args *r = v;
    return GK_CALL(e, r->fn, rbf_rows, r->t, r->n, r->d, r->gamma, p[0], p[1], p[2]);
}

static gk_status kernel_matrix(const gk_engine *e, void *const *p, const void *v)
{
    const rbf_args *r = v;
    return GK_CALL(e, r->fn, rbf_matrix, r->t, r->m, r->n, r->d, r->gamma, p[0], p[1], p[2]);
}

static gk_status kernel_matvec(const gk_engine *e, void *const *p, const void *v)
{
    const rbf_args *r = v;
    return GK_CALL(e, r->fn, rbf_matvec, r->t, r->m, r->n, r->d, r->gamma, p[0], p[1], p[2],
                   p[3]);
}

/* The buffer operands of one rbf call: inputs first, the output last. */
typedef struct rbf_operands {
    const gk_buffer *buf[GK_MAX_OPERANDS];
    const char *name[GK_MAX_OPERANDS];
    size_t need[GK_MAX_OPERANDS];
    int n;
} rbf_operands;

/* Checks handles, dtypes, sizes and aliasing, then dispatches; an empty output is a no-op. */
static gk_status run(const char *fn, gk_context *c, const rbf_operands *o, rbf_args *args,
                     gk_kernel kernel)
{
    GK_FORWARD(gk__check_context(fn, c));
    for (int i = 0; i < o->n; i++)
        GK_FORWARD(gk__check_buffer(fn, o->name[i], c, o->buf[i]));
    for (int i = 1; i < o->n; i++)
        GK_FORWARD(gk__check_same_dtype(fn, o->name[i], o->buf[i], o->name[0], o->buf[0]));
    for (int i = 0; i < o->n; i++)
        GK_FORWARD(gk__check_holds(fn, o->name[i], o->buf[i], o->need[i]));
    int out = o->n - 1;
    for (int i = 0; i < out; i++)
        GK_FORWARD(gk__check_disjoint(fn, o->name[out], o->buf[out], o->name[i], o->buf[i]));
    if (o->need[out] == 0)
        return GK_OK;

    gk_operand operands[GK_MAX_OPERANDS];
    for (int i = 0; i < o->n; i++) {
        operands[i].buf = o->buf[i];
        operands[i].role = i == out ? GK_ROLE_OUT : GK_ROLE_IN;
        operands[i].extent = o->need[i];
    }
    args->fn = fn;
    args->t = o->buf[0]->dtype;
    args->gamma = gk__round_scalar(args->t, args->gamma);
    /* Row pairs times features for the pairwise kernels, bytes of a and b for rbf_rows. */
    double size = (double)gk__dtype_size(args->t);
    gk_workload w = {kernel == kernel_rows ? GK_WORK_RBF_ROWS : GK_WORK_RBF_PAIRS,
                     args->t == GK_FLOAT64,
                     kernel == kernel_rows ? 2.0 * (double)args->n * (double)args->d * size
                                           : (double)args->m * (double)args->n * (double)args->d};
    return gk__dispatch(c, fn, operands, o->n, &w, kernel, args);
}

GK_API gk_status gk_rbf_rows(gk_context *c, size_t n, size_t d, double gamma, const gk_buffer *a,
                             const gk_buffer *b, gk_buffer *k)
{
    static const char fn[] = "gk_rbf_rows";
    size_t nd;
    GK_FORWARD(gk__mul_size(fn, "n * d", n, d, &nd));
    rbf_operands o = {{a, b, k}, {"a", "b", "k"}, {nd, nd, n}, 3};
    rbf_args args = {fn, GK_FLOAT32, 0, n, d, gamma};
    return run(fn, c, &o, &args, kernel_rows);
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
    rbf_args args = {fn, GK_FLOAT32, m, n, d, gamma};
    return run(fn, c, &o, &args, kernel_matrix);
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
    rbf_args args = {fn, GK_FLOAT32, m, n, d, gamma};
    return run(fn, c, &o, &args, kernel_matvec);
}
