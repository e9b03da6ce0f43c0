/* SPDX-License-Identifier: MIT */
/* ops_rng.c - the public counter-based random number generators: checks, then the backend's slot.
 */
#include <stdint.h>

#include "check.h"
#include "dispatch.h"

/* Checks a generator call filling x with elements offset, offset + 1, ... of the stream. */
static gk_status check(const char *fn, const gk_context *c, const gk_buffer *x, uint64_t offset)
{
    GK_FORWARD(gk__check_context(fn, c));
    GK_FORWARD(gk__check_operand(fn, "x", c, x));
    GK_CHECK(x->count <= UINT64_MAX - offset, GK_E_OVERFLOW,
             "%s: offset (%llu) + count (%zu) overflows the 64-bit element counter", fn,
             (unsigned long long)offset, x->count);
    return GK_OK;
}

static gk_status begin(gk_call *call, gk_context *c, const char *fn, gk_buffer *x,
                       gk_work_class cls)
{
    gk_operand operand = {x, GK_ROLE_OUT, x->count};
    gk_workload w = {cls, x->dtype == GK_FLOAT64,
                     (double)x->count * (double)gk__dtype_size(x->dtype)};
    return gk__call_begin(call, c, fn, &operand, 1, &w);
}

GK_API gk_status gk_rng_uniform(gk_context *c, uint64_t seed, uint64_t offset, gk_buffer *x)
{
    static const char fn[] = "gk_rng_uniform";
    GK_FORWARD(check(fn, c, x, offset));
    if (x->count == 0)
        return GK_OK;
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, x, GK_WORK_RNG_UNIFORM));
    return gk__call_end(&call,
                        GK_CALL(&call, rng_uniform, x->dtype, x->count, seed, offset, call.ptr[0]));
}

GK_API gk_status gk_rng_normal(gk_context *c, uint64_t seed, uint64_t offset, double mean,
                               double stddev, gk_buffer *x)
{
    static const char fn[] = "gk_rng_normal";
    GK_FORWARD(check(fn, c, x, offset));
    if (x->count == 0)
        return GK_OK;
    gk_dtype t = x->dtype;
    gk_call call;
    GK_FORWARD(begin(&call, c, fn, x, GK_WORK_RNG_NORMAL));
    return gk__call_end(&call, GK_CALL(&call, rng_normal, t, x->count, seed, offset,
                                       gk__round_scalar(t, mean), gk__round_scalar(t, stddev),
                                       call.ptr[0]));
}
