/* SPDX-License-Identifier: MIT */
/* ops_rng.c - the public counter-based random number generators: checks, then dispatch. */
#include <stdint.h>

#include "check.h"
#include "dispatch.h"

typedef struct rng_args {
    const char *fn;
    gk_dtype t;
    size_t n;
    uint64_t seed, offset;
    double mean, stddev;
} rng_args;

static gk_status kernel_uniform(const gk_engine *e, void *const *p, const void *v)
{
    const rng_args *r = v;
    return GK_CALL(e, r->fn, rng_uniform, r->t, r->n, r->seed, r->offset, p[0]);
}

static gk_status kernel_normal(const gk_engine *e, void *const *p, const void *v)
{
    const rng_args *r = v;
    return GK_CALL(e, r->fn, rng_normal, r->t, r->n, r->seed, r->offset, r->mean, r->stddev, p[0]);
}

static gk_status generate(const char *fn, gk_context *c, gk_buffer *x, rng_args *args,
                          gk_kernel kernel)
{
    GK_FORWARD(gk__check_context(fn, c));
    GK_FORWARD(gk__check_buffer(fn, "x", c, x));
    GK_CHECK(x->count <= UINT64_MAX - args->offset, GK_E_OVERFLOW,
             "%s: offset (%llu) + count (%zu) overflows the 64-bit element counter", fn,
             (unsigned long long)args->offset, x->count);
    if (x->count == 0)
        return GK_OK;
    args->fn = fn;
    args->t = x->dtype;
    args->n = x->count;
    args->mean = gk__round_scalar(x->dtype, args->mean);
    args->stddev = gk__round_scalar(x->dtype, args->stddev);
    gk_operand operand = {x, GK_ROLE_OUT, x->count};
    gk_workload w = {GK_WORK_STREAM, x->dtype == GK_FLOAT64,
                     (double)x->count * (double)gk__dtype_size(x->dtype)};
    return gk__dispatch(c, fn, &operand, 1, &w, kernel, args);
}

GK_API gk_status gk_rng_uniform(gk_context *c, uint64_t seed, uint64_t offset, gk_buffer *x)
{
    rng_args args = {NULL, GK_FLOAT32, 0, seed, offset, 0.0, 0.0};
    return generate("gk_rng_uniform", c, x, &args, kernel_uniform);
}

GK_API gk_status gk_rng_normal(gk_context *c, uint64_t seed, uint64_t offset, double mean,
                               double stddev, gk_buffer *x)
{
    rng_args args = {NULL, GK_FLOAT32, 0, seed, offset, mean, stddev};
    return generate("gk_rng_normal", c, x, &args, kernel_normal);
}
