/* SPDX-License-Identifier: MIT */
/* test_reduce.c - sum, dot and nrm2 against long double references; range, NaN and inf,
 * repeatability, empty input, errors. */
#include "gk_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};
static const size_t sizes[] = {0, 1, 7, 1000, 1025, 1000003};

enum red { RED_SUM, RED_DOT, RED_NRM2 };
static const char *const red_names[] = {"gk_sum", "gk_dot", "gk_nrm2"};

static gk_status run_red(gk_context *c, enum red r, const gk_buffer *x, const gk_buffer *y,
                         double *result)
{
    switch (r) {
    case RED_SUM:
        return gk_sum(c, x, result);
    case RED_DOT:
        return gk_dot(c, x, y, result);
    default:
        return gk_nrm2(c, x, result);
    }
}

/* The contract's bound: 1e-6 (f32) or 1e-13 (f64) times sum |terms|, for nrm2 times ||x||. */
static double rel_tol(gk_dtype t)
{
    return t == GK_FLOAT32 ? 1e-6 : 1e-13;
}

static void check_red(gk_dtype t, enum red r, const void *x, const void *y, size_t n, double got,
                      const char *what)
{
    long double ref = 0, mag = 0;
    gk_test_sum acc = {0, 0};
    if (r == RED_NRM2) {
        /* scaled, so that 1e200 and 1e-200 stay representable whatever long double is */
        long double scale = 0;
        for (size_t i = 0; i < n; i++)
            if (fabsl((long double)gk_test_get(t, x, i)) > scale)
                scale = fabsl((long double)gk_test_get(t, x, i));
        if (scale > 0) {
            for (size_t i = 0; i < n; i++) {
                long double v = (long double)gk_test_get(t, x, i) / scale;
                gk_test_sum_add(&acc, v * v);
            }
            ref = sqrtl(gk_test_sum_value(&acc)) * scale;
        }
        mag = ref;
    } else {
        for (size_t i = 0; i < n; i++) {
            long double term = (long double)gk_test_get(t, x, i);
            if (r == RED_DOT)
                term *= (long double)gk_test_get(t, y, i);
            gk_test_sum_add(&acc, term);
            mag += fabsl(term);
        }
        ref = gk_test_sum_value(&acc);
    }
    long double err = fabsl((long double)got - ref);
    if (!(err <= rel_tol(t) * mag) || (n == 0 && got != 0.0))
        GK_FAIL("%s %s %s n=%zu: got %.17g, reference %.17Lg, error %.3Lg > %.3Lg", what,
                red_names[r], gk_test_dtype_name(t), n, got, ref, err, rel_tol(t) * mag);
}

static void test_reductions(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            /* centred data (cancellation) and one-signed data */
            for (int shifted = 0; shifted < 2; shifted++) {
                double lo = shifted ? 0.5 : -1, hi = shifted ? 2 : 1;
                void *hx = NULL, *hy = NULL;
                gk_buffer *x = gk_test_buffer_random(ctx, t, n, lo, hi, &hx);
                gk_buffer *y = gk_test_buffer_random(ctx, t, n, lo, hi, &hy);
                for (int r = RED_SUM; r <= RED_NRM2; r++) {
                    double got = GK_TEST_SENTINEL;
                    GK_CHECK_OK(run_red(ctx, (enum red)r, x, y, &got));
                    check_red(t, (enum red)r, hx, hy, n, got, "random");
                }
                /* dot with both operands the same buffer */
                double got = GK_TEST_SENTINEL;
                GK_CHECK_OK(gk_dot(ctx, x, x, &got));
                check_red(t, RED_DOT, hx, hx, n, got, "x.x");
                gk_buffer_destroy(x);
                gk_buffer_destroy(y);
                free(hx);
                free(hy);
            }
        }
    }
}

static void test_empty_gives_zero(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_buffer *x = NULL;
        GK_CHECK_OK(gk_buffer_create(ctx, dtypes[di], 0, &x));
        gk_buffer *p = gk_test_buffer_const(ctx, dtypes[di], 4, 1.0);
        gk_buffer *v = gk_test_view(p, 4, 0);
        for (int r = RED_SUM; r <= RED_NRM2; r++) {
            double got = GK_TEST_SENTINEL;
            GK_CHECK_OK(run_red(ctx, (enum red)r, x, x, &got));
            assert_true(got == 0.0);
            got = GK_TEST_SENTINEL;
            GK_CHECK_OK(run_red(ctx, (enum red)r, v, v, &got));
            assert_true(got == 0.0);
        }
        gk_buffer_destroy(x);
        gk_buffer_destroy(v);
        gk_buffer_destroy(p);
    }
}

/* nrm2 neither overflows nor underflows where the result is representable. */
static void test_nrm2_range(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const struct {
        gk_dtype t;
        double scale;
    } cases[] = {{GK_FLOAT64, 1e200}, {GK_FLOAT64, 1e-200}, {GK_FLOAT64, 1e300},
                 {GK_FLOAT32, 1e30},  {GK_FLOAT32, 1e-30},  {GK_FLOAT32, 3e38}};
    static const size_t ns[] = {1, 7, 1025, 100003};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        for (size_t si = 0; si < sizeof ns / sizeof ns[0]; si++) {
            gk_dtype t = cases[ci].t;
            size_t n = ns[si];
            double s = cases[ci].scale;
            /* values up to the scale; the norm may exceed the dtype but not double */
            void *hx = NULL;
            gk_buffer *x = gk_test_buffer_random(ctx, t, n, -s, s, &hx);
            double got = GK_TEST_SENTINEL;
            GK_CHECK_OK(gk_nrm2(ctx, x, &got));
            if (!isfinite(got) || got == 0.0)
                GK_FAIL("nrm2 %s of %zu values of magnitude %g gave %g", gk_test_dtype_name(t), n,
                        s, got);
            check_red(t, RED_NRM2, hx, NULL, n, got, "range");
            gk_buffer_destroy(x);
            free(hx);
        }
    }
    /* a single value: exactly its magnitude */
    double one = -3e-310;
    gk_buffer *x = gk_test_buffer_from(ctx, GK_FLOAT64, 1, &one);
    double got = 0;
    GK_CHECK_OK(gk_nrm2(ctx, x, &got));
    check_red(GK_FLOAT64, RED_NRM2, &one, NULL, 1, got, "subnormal");
    gk_buffer_destroy(x);
}

/* Reductions over views and over host-wrapped buffers. */
static void test_views_and_host(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t n = 1025, es = gk_test_esize(t);
        void *hp = NULL;
        gk_buffer *p = gk_test_buffer_random(ctx, t, 2 * n + 7, -1, 1, &hp);
        gk_buffer *x = gk_test_view(p, 3, n);
        gk_buffer *y = gk_test_view(p, n + 7, n);
        gk_buffer *w = NULL;
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, n, (char *)hp + 5 * es, &w));
        const void *xh = (char *)hp + 3 * es, *yh = (char *)hp + (n + 7) * es;
        for (int r = RED_SUM; r <= RED_NRM2; r++) {
            double got = GK_TEST_SENTINEL;
            GK_CHECK_OK(run_red(ctx, (enum red)r, x, y, &got));
            check_red(t, (enum red)r, xh, yh, n, got, "views");
            got = GK_TEST_SENTINEL;
            GK_CHECK_OK(run_red(ctx, (enum red)r, w, y, &got));
            check_red(t, (enum red)r, (char *)hp + 5 * es, yh, n, got, "host-wrapped");
        }
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(w);
        gk_buffer_destroy(p);
        free(hp);
    }
}

/* Sets x[i] = v in both the buffer and its host copy. */
static void put(gk_buffer *b, void *host, gk_dtype t, size_t i, double v)
{
    gk_test_set(t, host, i, v);
    GK_CHECK_OK(gk_buffer_write(b, i, 1, (const char *)host + i * gk_test_esize(t)));
}

/* NaN and infinities reach the result from wherever they sit: a misaligned head, the vector
 * body, the last partial round of vectors, the scalar tail. */
static void test_nonfinite(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const double inf = INFINITY;
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t n = 1000003;
        const size_t where[] = {0, 1, 5, n / 2, n - 500, n - 2, n - 1};
        void *hx = NULL, *hy = NULL;
        gk_buffer *p = gk_test_buffer_random(ctx, t, n + 1, -1, 1, &hx);
        gk_buffer *y = gk_test_buffer_random(ctx, t, n, 0.5, 2, &hy);
        /* x is p from its second element: vectors start after a scalar head */
        gk_buffer *x = gk_test_view(p, 1, n);
        for (size_t wi = 0; wi < sizeof where / sizeof where[0]; wi++) {
            size_t i = where[wi], j = where[(wi + 3) % (sizeof where / sizeof where[0])];
            double old_i = gk_test_get(t, hx, i + 1), old_j = gk_test_get(t, hx, j + 1);
            double got[3];
            put(p, hx, t, i + 1, NAN);
            for (int r = RED_SUM; r <= RED_NRM2; r++) {
                GK_CHECK_OK(run_red(ctx, (enum red)r, x, y, &got[r]));
                if (!isnan(got[r]))
                    GK_FAIL("%s %s: NaN at %zu of %zu gave %g", red_names[r], gk_test_dtype_name(t),
                            i, n, got[r]);
            }
            put(p, hx, t, i + 1, inf);
            for (int r = RED_SUM; r <= RED_NRM2; r++) {
                GK_CHECK_OK(run_red(ctx, (enum red)r, x, y, &got[r]));
                if (got[r] != inf)
                    GK_FAIL("%s %s: +inf at %zu of %zu gave %g", red_names[r],
                            gk_test_dtype_name(t), i, n, got[r]);
            }
            put(p, hx, t, j + 1, -inf);
            for (int r = RED_SUM; r <= RED_NRM2; r++) {
                GK_CHECK_OK(run_red(ctx, (enum red)r, x, y, &got[r]));
                /* inf - inf is NaN in a sum; a norm's squares are both +inf */
                if (r == RED_NRM2 ? got[r] != inf : !isnan(got[r]))
                    GK_FAIL("%s %s: +inf at %zu and -inf at %zu of %zu gave %g", red_names[r],
                            gk_test_dtype_name(t), i, j, n, got[r]);
            }
            put(p, hx, t, j + 1, old_j);
            put(p, hx, t, i + 1, old_i);
        }
        /* restored: finite again */
        double got = GK_TEST_SENTINEL;
        GK_CHECK_OK(gk_sum(ctx, x, &got));
        check_red(t, RED_SUM, (char *)hx + gk_test_esize(t), NULL, n, got, "restored");
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(p);
        free(hx);
        free(hy);
    }
}

/* The same data gives the same bits, call after call (no atomics decide the order of the
 * additions on either backend). */
static void test_repeatable(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        const size_t ns[] = {1025, 1000003, 4000037};
        for (size_t si = 0; si < sizeof ns / sizeof ns[0]; si++) {
            void *hx = NULL, *hy = NULL;
            gk_buffer *x = gk_test_buffer_random(ctx, t, ns[si], -1, 1, &hx);
            gk_buffer *y = gk_test_buffer_random(ctx, t, ns[si], -1, 1, &hy);
            for (int r = RED_SUM; r <= RED_NRM2; r++) {
                double first = GK_TEST_SENTINEL;
                GK_CHECK_OK(run_red(ctx, (enum red)r, x, y, &first));
                for (int k = 0; k < 3; k++) {
                    double again = GK_TEST_SENTINEL;
                    GK_CHECK_OK(run_red(ctx, (enum red)r, x, y, &again));
                    if (memcmp(&first, &again, sizeof first) != 0)
                        GK_FAIL("%s %s n=%zu: %.17g, then %.17g", red_names[r],
                                gk_test_dtype_name(t), ns[si], first, again);
                }
            }
            gk_buffer_destroy(x);
            gk_buffer_destroy(y);
            free(hx);
            free(hy);
        }
    }
}

static void test_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_context *other = NULL;
    GK_CHECK_OK(gk_context_create(gk_test_backend_of(state), &other));
    gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, 10, 1.0);
    gk_buffer *x64 = gk_test_buffer_const(ctx, GK_FLOAT64, 10, 1.0);
    gk_buffer *x11 = gk_test_buffer_const(ctx, GK_FLOAT32, 11, 1.0);
    gk_buffer *xo = gk_test_buffer_const(other, GK_FLOAT32, 10, 1.0);
    for (int r = RED_SUM; r <= RED_NRM2; r++) {
        const char *fn = red_names[r];
        double res = GK_TEST_SENTINEL;
        GK_EXPECT(run_red(NULL, (enum red)r, x, x, &res), GK_E_INVALID_ARGUMENT, fn);
        GK_EXPECT(run_red(ctx, (enum red)r, NULL, x, &res), GK_E_INVALID_ARGUMENT, fn);
        GK_EXPECT(run_red(ctx, (enum red)r, x, x, NULL), GK_E_INVALID_ARGUMENT, fn);
        GK_EXPECT(run_red(ctx, (enum red)r, xo, xo, &res), GK_E_CONTEXT_MISMATCH, fn);
        if (r == RED_DOT) {
            GK_EXPECT(run_red(ctx, (enum red)r, x, NULL, &res), GK_E_INVALID_ARGUMENT, fn);
            GK_EXPECT(run_red(ctx, (enum red)r, x, x64, &res), GK_E_DTYPE, fn);
            GK_EXPECT(run_red(ctx, (enum red)r, x64, x, &res), GK_E_DTYPE, fn);
            GK_EXPECT(run_red(ctx, (enum red)r, x, x11, &res), GK_E_SHAPE, fn);
            GK_EXPECT(run_red(ctx, (enum red)r, x, xo, &res), GK_E_CONTEXT_MISMATCH, fn);
        }
        assert_true(res == GK_TEST_SENTINEL);
    }
    gk_buffer_destroy(x);
    gk_buffer_destroy(x64);
    gk_buffer_destroy(x11);
    gk_buffer_destroy(xo);
    gk_context_destroy(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_reductions), GK_TEST_BOTH(test_empty_gives_zero),
        GK_TEST_BOTH(test_nrm2_range), GK_TEST_BOTH(test_views_and_host),
        GK_TEST_BOTH(test_nonfinite),  GK_TEST_BOTH(test_repeatable),
        GK_TEST_BOTH(test_errors),
    };
    return cmocka_run_group_tests_name("reduce", tests, gk_test_group_setup, NULL);
}
