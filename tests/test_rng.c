/* SPDX-License-Identifier: MIT */
/* test_rng.c - Philox streams: bit-exact against src/philox.h, split invariance, normal stats. */
#include "gk_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "philox.h"

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};

static double ref_uniform(gk_dtype t, uint64_t seed, uint64_t e)
{
    return t == GK_FLOAT32 ? (double)gk__philox_uniform_f32(seed, e)
                           : gk__philox_uniform_f64(seed, e);
}

static double ref_normal_z(gk_dtype t, uint64_t seed, uint64_t e)
{
    return t == GK_FLOAT32 ? gk__philox_normal_f32(seed, e) : gk__philox_normal_f64(seed, e);
}

/* The reference itself: the Salmon et al. known answer and the documented word mapping. */
static void test_known_answer(void **state)
{
    (void)state;
    gk_philox_words w = gk__philox4x32_10(0, 0);
    assert_int_equal(w.x[0], 0x6627e8d5u);
    assert_int_equal(w.x[1], 0xe169c58du);
    assert_int_equal(w.x[2], 0xbc57ac4cu);
    assert_int_equal(w.x[3], 0x9b00dbd8u);
    for (int j = 0; j < 4; j++)
        assert_true(gk__philox_uniform_f32(0, (uint64_t)j) == (float)(w.x[j] >> 8) * 0x1p-24f);
    assert_true(gk__philox_uniform_f64(0, 1) ==
                ((double)(w.x[2] >> 5) * 67108864.0 + (double)(w.x[3] >> 6)) * 0x1p-53);
}

/* The library's uniform stream for seed 0 starts with the known answer. */
static void test_uniform_known_answer(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, 4, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_rng_uniform(ctx, 0, 0, x));
    float h[4];
    GK_CHECK_OK(gk_buffer_read(x, 0, 4, h));
    static const uint32_t words[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
    for (int j = 0; j < 4; j++)
        assert_true(h[j] == (float)(words[j] >> 8) * 0x1p-24f);
    gk_buffer_destroy(x);
}

/* Checks buf == the uniform stream (seed, offset + i) bit for bit, and 0 <= v < 1. */
static void check_uniform(const gk_buffer *buf, uint64_t seed, uint64_t offset, const char *what)
{
    gk_dtype t = gk_buffer_dtype(buf);
    size_t n = gk_buffer_count(buf);
    void *got = gk_test_read_all(buf);
    for (size_t i = 0; i < n; i++) {
        double g = gk_test_get(t, got, i), want = ref_uniform(t, seed, offset + i);
        if (!gk_test_same_bits(t, g, want) || !(g >= 0.0 && g < 1.0))
            GK_FAIL("%s %s uniform seed=%llu offset=%llu: element %zu is %.17g, expected %.17g",
                    what, gk_test_dtype_name(t), (unsigned long long)seed,
                    (unsigned long long)offset, i, g, want);
    }
    free(got);
}

static void test_uniform(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const size_t sizes[] = {0, 1, 7, 1000, 1025, 1000003};
    for (size_t di = 0; di < 2; di++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            uint64_t seed = gk_test_rand64();
            uint64_t offset = si % 2 ? gk_test_rand64() >> 8 : gk_test_rand64() % 1000;
            gk_buffer *x = gk_test_buffer_const(ctx, dtypes[di], n, GK_TEST_SENTINEL);
            GK_CHECK_OK(gk_rng_uniform(ctx, seed, offset, x));
            check_uniform(x, seed, offset, "random seed");
            gk_buffer_destroy(x);
        }
    }
}

/* Offsets where the block counter's low word carries into the high word, the top of the
 * range, and seeds using both key words. */
static void test_uniform_edges(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const uint64_t offsets[] = {(1ull << 34) - 9, (1ull << 33) - 5, UINT64_MAX - 37,
                                       UINT64_MAX - 11};
    static const uint64_t seeds[] = {0, 1, 0xffffffffull, 0x100000000ull, UINT64_MAX};
    for (size_t di = 0; di < 2; di++)
        for (size_t oi = 0; oi < 4; oi++)
            for (size_t s = 0; s < 5; s++) {
                gk_buffer *x = gk_test_buffer_const(ctx, dtypes[di], 11, GK_TEST_SENTINEL);
                GK_CHECK_OK(gk_rng_uniform(ctx, seeds[s], offsets[oi], x));
                check_uniform(x, seeds[s], offsets[oi], "edge");
                gk_buffer_destroy(x);
            }
}

/* One call over [0, N) equals many calls over odd-sized pieces, at odd starting offsets. */
static void test_split_invariance(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const uint64_t bases[] = {0, 1, 2, 3, 4, 5, 6, 7, 13, 1001};
    static const size_t pieces[] = {1, 2, 3, 5, 7, 13, 1001, 4, 6, 31, 255, 257};
    const size_t N = 4099;
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        for (size_t bi = 0; bi < sizeof bases / sizeof bases[0]; bi++) {
            uint64_t seed = gk_test_rand64();
            for (int normal = 0; normal < 2; normal++) {
                gk_buffer *whole = gk_test_buffer_const(ctx, t, N, GK_TEST_SENTINEL);
                gk_buffer *split = gk_test_buffer_const(ctx, t, N, GK_TEST_SENTINEL);
                if (normal)
                    GK_CHECK_OK(gk_rng_normal(ctx, seed, bases[bi], 1.0, 2.0, whole));
                else
                    GK_CHECK_OK(gk_rng_uniform(ctx, seed, bases[bi], whole));
                size_t pos = 0;
                for (size_t p = 0; pos < N; p++) {
                    size_t len = pieces[p % (sizeof pieces / sizeof pieces[0])];
                    if (len > N - pos)
                        len = N - pos;
                    gk_buffer *v = gk_test_view(split, pos, len);
                    if (normal)
                        GK_CHECK_OK(gk_rng_normal(ctx, seed, bases[bi] + pos, 1.0, 2.0, v));
                    else
                        GK_CHECK_OK(gk_rng_uniform(ctx, seed, bases[bi] + pos, v));
                    gk_buffer_destroy(v);
                    pos += len;
                }
                void *a = gk_test_read_all(whole);
                GK_EXPECT_CONTENTS(split, a);
                if (!normal)
                    check_uniform(whole, seed, bases[bi], "split");
                free(a);
                gk_buffer_destroy(whole);
                gk_buffer_destroy(split);
            }
        }
    }
}

/* Normal values are mean + stddev * z with z from the documented Box-Muller mapping; within
 * 4 ulp of |mean| + |stddev z| (libm's log/sin/cos may differ in the last bit). */
static void check_normal(const gk_buffer *buf, uint64_t seed, uint64_t offset, double mean,
                         double stddev)
{
    gk_dtype t = gk_buffer_dtype(buf);
    size_t n = gk_buffer_count(buf);
    double mr = gk_test_round(t, mean), sr = gk_test_round(t, stddev);
    void *got = gk_test_read_all(buf);
    for (size_t i = 0; i < n; i++) {
        double z = ref_normal_z(t, seed, offset + i);
        long double want = (long double)mr + (long double)sr * z;
        long double tol = 4 * gk_test_ulp(t, fabsl((long double)mr) + fabsl((long double)sr * z));
        double g = gk_test_get(t, got, i);
        if (!(fabsl((long double)g - want) <= tol))
            GK_FAIL("%s normal seed=%llu offset=%llu mean=%g std=%g: element %zu is %.17g, "
                    "expected %.17Lg",
                    gk_test_dtype_name(t), (unsigned long long)seed, (unsigned long long)offset,
                    mean, stddev, i, g, want);
    }
    free(got);
}

static void test_normal_values(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const size_t sizes[] = {0, 1, 7, 1000, 1025};
    static const double params[][2] = {{0.0, 1.0}, {3.0, 2.0}, {-1e3, 0.1}, {0.1, 1e-3}};
    for (size_t di = 0; di < 2; di++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t pi = 0; pi < 4; pi++) {
                uint64_t seed = gk_test_rand64(), offset = gk_test_rand64() >> 4;
                gk_buffer *x = gk_test_buffer_const(ctx, dtypes[di], sizes[si], GK_TEST_SENTINEL);
                GK_CHECK_OK(gk_rng_normal(ctx, seed, offset, params[pi][0], params[pi][1], x));
                check_normal(x, seed, offset, params[pi][0], params[pi][1]);
                gk_buffer_destroy(x);
            }
}

/* Infinite and NaN parameters, and a stddev z that overflows before mean is added: what the
 * definition's arithmetic (stddev z, then + mean, in double, rounded to the dtype) gives, NaN
 * where it gives NaN and the same infinity where it overflows; finite values within 4 ulp. */
static void test_normal_nonfinite(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const double big = 1e308, bigf = 3e38;
    static const double special[][2] = {{0.0, INFINITY}, {INFINITY, 1.0}, {-INFINITY, 2.0},
                                        {NAN, 1.0},      {1.0, NAN},      {0.0, -INFINITY}};
    const size_t n = 1001;
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        double params[8][2];
        memcpy(params, special, sizeof special);
        params[6][0] = t == GK_FLOAT64 ? -big : -bigf;
        params[6][1] = t == GK_FLOAT64 ? big : bigf;
        params[7][0] = t == GK_FLOAT64 ? big : bigf;
        params[7][1] = t == GK_FLOAT64 ? big : bigf;
        for (size_t pi = 0; pi < 8; pi++) {
            double mean = gk_test_round(t, params[pi][0]), sd = gk_test_round(t, params[pi][1]);
            uint64_t seed = gk_test_rand64(), offset = gk_test_rand64() >> 4;
            gk_buffer *x = gk_test_buffer_const(ctx, t, n, GK_TEST_SENTINEL);
            GK_CHECK_OK(gk_rng_normal(ctx, seed, offset, mean, sd, x));
            void *h = gk_test_read_all(x);
            for (size_t i = 0; i < n; i++) {
                double z = ref_normal_z(t, seed, offset + i);
                volatile double product = sd * z; /* rounded, never fused with the sum */
                double want = gk_test_round(t, mean + product), g = gk_test_get(t, h, i);
                long double exact = (long double)mean + (long double)sd * z;
                long double tol =
                    4 * gk_test_ulp(t, fabsl((long double)mean) + fabsl(sd * (long double)z));
                int ok = isnan(want) ? isnan(g) : isinf(want) ? g == want : fabsl(g - exact) <= tol;
                if (!ok)
                    GK_FAIL("%s normal(%g, %g) seed=%llu offset=%llu: element %zu is %.17g, the "
                            "definition gives %.17g",
                            gk_test_dtype_name(t), mean, sd, (unsigned long long)seed,
                            (unsigned long long)offset, i, g, want);
            }
            free(h);
            gk_buffer_destroy(x);
        }
    }
}

/* How many values differ from the host's double evaluation rounded once (gk__philox_normal_*
 * here; release 1.1.0's values on the CPU backend): none on a backend that evaluates in double
 * with this libm, some where the libm differs (CUDA's double log/sin/cos, in the last bit) or
 * where the backend evaluates in float32 within the contract (CUDA for float32,
 * src/normal_f32.h). docs/numerics.md quotes these counts; every value is within 4 ulp all the same
 * (check_normal). */
static void test_normal_vs_double(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const double params[][2] = {{0.0, 1.0}, {3.0, 2.0}};
    const size_t n = 1000000;
    for (size_t di = 0; di < 2; di++)
        for (size_t pi = 0; pi < 2; pi++) {
            gk_dtype t = dtypes[di];
            uint64_t seed = gk_test_rand64();
            double mr = gk_test_round(t, params[pi][0]), sr = gk_test_round(t, params[pi][1]);
            gk_buffer *x = gk_test_buffer_const(ctx, t, n, GK_TEST_SENTINEL);
            GK_CHECK_OK(gk_rng_normal(ctx, seed, 0, mr, sr, x));
            check_normal(x, seed, 0, mr, sr);
            void *h = gk_test_read_all(x);
            size_t differ = 0;
            for (size_t i = 0; i < n; i++) {
                double want = mr + sr * ref_normal_z(t, seed, i);
                differ += !gk_test_same_bits(t, gk_test_get(t, h, i), gk_test_round(t, want));
            }
            printf("# %s normal(%g, %g): %zu of %zu values (%.2f%%) differ from the host's double "
                   "evaluation\n",
                   gk_test_dtype_name(t), mr, sr, differ, n, 100.0 * differ / n);
            free(h);
            gk_buffer_destroy(x);
        }
}

/* 1.1.0 computed every normal element as src/philox.h defines it, with libm's log, sin and cos
 * in double: the values below. Since 1.2 the CPU backend uses SLEEF's (cpu/cpu_vmath.h), the
 * CUDA backend CUDA's; this counts the elements whose bits differ from 1.1.0's, and how far
 * (docs/numerics.md, "The random stream"), over 2^20 elements of mean 0, stddev 1 at a random
 * seed. Every difference must stay within the contract's 4 ulp; float32 values are Box-Muller
 * in double rounded once on the CPU, so a difference needs the double result within a few
 * 2^-52 of a float rounding boundary: at most 1 in 10^4 may differ there (CUDA evaluates float32 in
 * float32, src/normal_f32.h, and is held to the 4 ulp only). Seen on the 2-core VM, each of the
 * AVX-512, AVX2 and SSE2 tables: float32 none, float64 4.4% by at most 3 ulp; without SLEEF
 * none. */
static void test_normal_against_1_1_0(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t n = (size_t)1 << 20;
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        uint64_t seed = gk_test_rand64(), offset = gk_test_rand64() >> 8;
        gk_buffer *x = gk_test_buffer_const(ctx, t, n, GK_TEST_SENTINEL);
        GK_CHECK_OK(gk_rng_normal(ctx, seed, offset, 0.0, 1.0, x));
        void *got = gk_test_read_all(x);
        size_t differ = 0;
        uint64_t worst = 0;
        for (size_t i = 0; i < n; i++) {
            double z = ref_normal_z(t, seed, offset + i);
            double old = t == GK_FLOAT32 ? (double)(float)z : z;
            double g = gk_test_get(t, got, i);
            if (gk_test_same_bits(t, g, old))
                continue;
            uint64_t u = gk_test_ulp_distance(t, g, old);
            differ++;
            worst = u > worst ? u : worst;
        }
        printf("[ NOTE     ] %s %s rng_normal: %zu of %zu elements differ from 1.1.0's, by at "
               "most "
               "%llu ulp\n",
               gk_test_is_cuda(state) ? "cuda" : "cpu", gk_test_dtype_name(t), differ, n,
               (unsigned long long)worst);
        if (worst > 4)
            GK_FAIL("%s rng_normal seed=%llu offset=%llu: an element is %llu ulp from 1.1.0's",
                    gk_test_dtype_name(t), (unsigned long long)seed, (unsigned long long)offset,
                    (unsigned long long)worst);
        if (t == GK_FLOAT32 && !gk_test_is_cuda(state) && differ > n / 10000)
            GK_FAIL("float32 rng_normal seed=%llu offset=%llu: %zu of %zu elements differ from "
                    "1.1.0's",
                    (unsigned long long)seed, (unsigned long long)offset, differ, n);
        free(got);
        gk_buffer_destroy(x);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean, standard deviation and a Kolmogorov-Smirnov test against the normal CDF. */
static void test_normal_statistics(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t n = 1000000;
    static const double params[][2] = {{0.0, 1.0}, {3.0, 2.0}};
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        for (size_t pi = 0; pi < 2; pi++) {
            double mean = params[pi][0], sd = params[pi][1];
            uint64_t seed = gk_test_rand64();
            gk_buffer *x = gk_test_buffer_const(ctx, t, n, GK_TEST_SENTINEL);
            GK_CHECK_OK(gk_rng_normal(ctx, seed, 0, mean, sd, x));
            void *h = gk_test_read_all(x);
            double *z = malloc(n * sizeof *z);
            assert_non_null(z);
            long double s = 0, s2 = 0;
            for (size_t i = 0; i < n; i++) {
                z[i] = (gk_test_get(t, h, i) - mean) / sd;
                s += z[i];
                s2 += (long double)z[i] * z[i];
            }
            double m = (double)(s / n), var = (double)(s2 / n) - m * m;
            /* 6 standard errors */
            if (fabs(m) > 6.0 / sqrt((double)n) || fabs(sqrt(var) - 1.0) > 6.0 / sqrt(2.0 * n))
                GK_FAIL("%s normal(%g, %g) seed=%llu: sample mean %g, std %g",
                        gk_test_dtype_name(t), mean, sd, (unsigned long long)seed, mean + sd * m,
                        sd * sqrt(var));
            qsort(z, n, sizeof *z, cmp_double);
            double D = 0;
            for (size_t i = 0; i < n; i++) {
                double F = 0.5 * erfc(-z[i] / sqrt(2.0));
                double lo = fabs(F - (double)i / n), hi = fabs((double)(i + 1) / n - F);
                if (lo > D)
                    D = lo;
                if (hi > D)
                    D = hi;
            }
            /* P(D > 2.2 / sqrt(n)) is about 1e-4 for a correct stream */
            if (D > 2.2 / sqrt((double)n))
                GK_FAIL("%s normal(%g, %g) seed=%llu: Kolmogorov-Smirnov D = %g > %g",
                        gk_test_dtype_name(t), mean, sd, (unsigned long long)seed, D,
                        2.2 / sqrt((double)n));
            free(z);
            free(h);
            gk_buffer_destroy(x);
        }
    }
}

/* Into views with offsets and host-wrapped buffers: only the addressed elements change. */
static void test_views_and_host(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        gk_buffer *p = gk_test_buffer_const(ctx, t, 100, GK_TEST_SENTINEL);
        gk_buffer *v = gk_test_view(p, 17, 50);
        uint64_t seed = gk_test_rand64();
        GK_CHECK_OK(gk_rng_uniform(ctx, seed, 5, v));
        check_uniform(v, seed, 5, "view");
        void *h = gk_test_read_all(p);
        for (size_t i = 0; i < 100; i++)
            if (i < 17 || i >= 67)
                assert_true(gk_test_get(t, h, i) == GK_TEST_SENTINEL);
        free(h);

        void *host = gk_test_const_array(t, 30, GK_TEST_SENTINEL);
        gk_buffer *w = NULL;
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, 29, host, &w));
        GK_CHECK_OK(gk_rng_uniform(ctx, seed, 1u << 20, w));
        for (size_t i = 0; i < 29; i++)
            assert_true(gk_test_same_bits(t, gk_test_get(t, host, i),
                                          ref_uniform(t, seed, (1u << 20) + i)));
        assert_true(gk_test_get(t, host, 29) == GK_TEST_SENTINEL);
        GK_CHECK_OK(gk_rng_normal(ctx, seed, 3, 0.0, 1.0, w));
        check_normal(w, seed, 3, 0.0, 1.0);
        gk_buffer_destroy(w);
        gk_buffer_destroy(v);
        gk_buffer_destroy(p);
        free(host);
    }
}

static void test_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_context *other = NULL;
    GK_CHECK_OK(gk_context_create(gk_test_backend_of(state), &other));
    gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, 10, GK_TEST_SENTINEL);
    gk_buffer *x64 = gk_test_buffer_const(ctx, GK_FLOAT64, 10, GK_TEST_SENTINEL);
    gk_buffer *xo = gk_test_buffer_const(other, GK_FLOAT32, 10, GK_TEST_SENTINEL);
    const char *fu = "gk_rng_uniform", *fn = "gk_rng_normal";

    GK_EXPECT(gk_rng_uniform(NULL, 1, 0, x), GK_E_INVALID_ARGUMENT, fu);
    GK_EXPECT(gk_rng_uniform(ctx, 1, 0, NULL), GK_E_INVALID_ARGUMENT, fu);
    GK_EXPECT(gk_rng_uniform(ctx, 1, UINT64_MAX - 5, x), GK_E_OVERFLOW, fu);
    GK_EXPECT(gk_rng_uniform(ctx, 1, UINT64_MAX, x64), GK_E_OVERFLOW, fu);
    GK_EXPECT(gk_rng_uniform(ctx, 1, 0, xo), GK_E_CONTEXT_MISMATCH, fu);

    GK_EXPECT(gk_rng_normal(NULL, 1, 0, 0.0, 1.0, x), GK_E_INVALID_ARGUMENT, fn);
    GK_EXPECT(gk_rng_normal(ctx, 1, 0, 0.0, 1.0, NULL), GK_E_INVALID_ARGUMENT, fn);
    GK_EXPECT(gk_rng_normal(ctx, 1, UINT64_MAX - 5, 0.0, 1.0, x), GK_E_OVERFLOW, fn);
    GK_EXPECT(gk_rng_normal(ctx, 1, UINT64_MAX - 1, 0.0, 1.0, x64), GK_E_OVERFLOW, fn);
    GK_EXPECT(gk_rng_normal(ctx, 1, 0, 0.0, 1.0, xo), GK_E_CONTEXT_MISMATCH, fn);

    GK_EXPECT_SENTINEL(x);
    GK_EXPECT_SENTINEL(x64);
    GK_EXPECT_SENTINEL(xo);
    gk_buffer_destroy(x);
    gk_buffer_destroy(x64);
    gk_buffer_destroy(xo);
    gk_context_destroy(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answer),
        GK_TEST_BOTH(test_uniform_known_answer),
        GK_TEST_BOTH(test_uniform),
        GK_TEST_BOTH(test_uniform_edges),
        GK_TEST_BOTH(test_split_invariance),
        GK_TEST_BOTH(test_normal_values),
        GK_TEST_BOTH(test_normal_nonfinite),
        GK_TEST_BOTH(test_normal_statistics),
        GK_TEST_BOTH(test_normal_vs_double),
        GK_TEST_BOTH(test_normal_against_1_1_0),
        GK_TEST_BOTH(test_views_and_host),
        GK_TEST_BOTH(test_errors),
    };
    return cmocka_run_group_tests_name("rng", tests, gk_test_group_setup, NULL);
}
