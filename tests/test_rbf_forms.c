/* SPDX-License-Identifier: MIT */
/* test_rbf_forms.c - rbf_matrix where the CPU's fused inner-product and ISA kernels take it. */
#include "gk_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The CPU backend computes float32 rbf_matrix with d >= 8, m n >= 2^16 and (m + n) d <= m n in
 * the inner-product form, a tile of dot products finished in registers, where the CPU has an ISA
 * kernel for it (cpu/rbf/, AVX-512); ctest runs this file also with GK_RBF_ISA=generic, the
 * portable kernels, and =amx, the dot products on AMX tiles. The shapes here are such calls: output
 * rows whose starts fall on every position in a cache line (the kernel shifts its columns to
 * stream whole lines), rows of x and y that are the same buffer, data far from the origin,
 * clusters whose near pairs fail the rounding bound and are computed again from differences,
 * non-finite and huge values (the difference form then does the whole call). */

static long double ref_kernel(double gamma, const float *x, size_t i, const float *y, size_t j,
                              size_t d)
{
    long double dist = 0;
    for (size_t f = 0; f < d; f++) {
        long double diff = (long double)x[i * d + f] - (long double)y[j * d + f];
        dist += diff * diff;
    }
    return gk_test_exp_ref(-(long double)(float)gamma * dist);
}

/* Every entry of k (m x n, at k0 in the host array hk) against the reference: within 1e-5, exactly
 * 1 for identical rows, NaN where the reference is NaN. */
static void check_all(const char *what, size_t m, size_t n, size_t d, double gamma, const float *x,
                      const float *y, const float *k0)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double got = k0[i * n + j];
            long double ref = ref_kernel(gamma, x, i, y, j, d);
            if (isnan(ref) || isnan(got)) {
                if (!(isnan(ref) && isnan(got)))
                    GK_FAIL("%s: entry (%zu,%zu) is %g, reference %Lg", what, i, j, got, ref);
                continue;
            }
            if (memcmp(x + i * d, y + j * d, d * sizeof *x) == 0 && got != 1.0)
                GK_FAIL("%s: entry (%zu,%zu) of identical rows is %.9g, not exactly 1", what, i, j,
                        got);
            if (!(fabsl((long double)got - ref) <= 1e-5L))
                GK_FAIL("%s: entry (%zu,%zu) is %.9g, reference %.9Lg (error %.3Lg)", what, i, j,
                        got, ref, fabsl((long double)got - ref));
        }
}

/* rbf_matrix of x (m x d) and y (n x d) into a view of a larger buffer at offset `off`, so the
 * output's rows start anywhere in a cache line; the elements around the view stay untouched. */
static void matrix_at(gk_context *ctx, const char *what, size_t m, size_t n, size_t d, double gamma,
                      const float *hx, const float *hy, size_t off)
{
    gk_buffer *x = gk_test_buffer_from(ctx, GK_FLOAT32, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, GK_FLOAT32, n * d, hy);
    gk_buffer *kp = gk_test_buffer_const(ctx, GK_FLOAT32, m * n + 32, GK_TEST_SENTINEL);
    gk_buffer *k = gk_test_view(kp, off, m * n);
    GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, gamma, x, y, k));
    float *got = gk_test_read_all(kp);
    for (size_t i = 0; i < off; i++)
        assert_true(got[i] == (float)GK_TEST_SENTINEL);
    for (size_t i = off + m * n; i < m * n + 32; i++)
        assert_true(got[i] == (float)GK_TEST_SENTINEL);
    check_all(what, m, n, d, gamma, hx, hy, got + off);
    free(got);
    gk_buffer_destroy(k);
    gk_buffer_destroy(kp);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
}

/* n x d rows uniform in [lo, hi); every fifth row of y a copy of a row of x. */
static void make_rows(size_t m, size_t n, size_t d, double lo, double hi, float **hx, float **hy)
{
    *hx = gk_test_random_array(GK_FLOAT32, m * d, lo, hi);
    *hy = gk_test_random_array(GK_FLOAT32, n * d, lo, hi);
    for (size_t j = 0; j < n; j += 5)
        memcpy(*hy + j * d, *hx + (j * 7 % m) * d, d * sizeof **hx);
}

/* Output offsets 0 .. 16 floats, n a multiple of 16 (streamed rows) and not, m not a multiple of
 * the kernel's 12 rows, partial column tiles; data in [0, 1) and offset by 1e3. */
static void test_offsets(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t shapes[][3] = {{300, 512, 20}, {301, 520, 8}, {257, 272, 33}, {130, 4100, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t m = shapes[s][0], n = shapes[s][1], d = shapes[s][2];
        for (int o = 0; o < 2; o++) {
            float *hx, *hy;
            make_rows(m, n, d, o ? 1e3 : 0.0, o ? 1e3 + 1.0 : 1.0, &hx, &hy);
            double gamma = gk_test_uniform(0.5, 6.0) / (double)d;
            for (size_t off = 0; off <= 16; off += (s == 0 ? 1 : 5))
                matrix_at(ctx, "rbf_matrix at an offset", m, n, d, gamma, hx, hy, off);
            free(hx);
            free(hy);
        }
    }
}

/* x and y the same buffer (scikit-learn's rbf_kernel(X)): the CPU computes the tiles on and
 * above the diagonal and mirrors the others (from d = 128); the diagonal is exactly 1. Outputs at
 * offsets (column shifts), n a multiple of 16 and not, data offset by 1e3. */
static void test_same_buffer(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t shapes[][2] = {{400, 20}, {512, 128}, {333, 130}, {600, 256}};
    const size_t offsets[] = {0, 5, 12};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t n = shapes[s][0], d = shapes[s][1];
        float *hx = gk_test_random_array(GK_FLOAT32, n * d, 1e3, 1e3 + 1.0);
        for (size_t i = 3; i < n; i += 7) /* identical rows off the diagonal too */
            memcpy(hx + i * d, hx + (i / 7) * d, d * sizeof *hx);
        gk_buffer *x = gk_test_buffer_from(ctx, GK_FLOAT32, n * d, hx);
        for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
            size_t off = offsets[o];
            gk_buffer *kp = gk_test_buffer_const(ctx, GK_FLOAT32, n * n + 32, GK_TEST_SENTINEL);
            gk_buffer *k = gk_test_view(kp, off, n * n);
            double gamma = gk_test_uniform(0.5, 6.0) / (double)d;
            GK_CHECK_OK(gk_rbf_matrix(ctx, n, n, d, gamma, x, x, k));
            float *got = gk_test_read_all(kp);
            for (size_t i = 0; i < off; i++)
                assert_true(got[i] == (float)GK_TEST_SENTINEL);
            for (size_t i = off + n * n; i < n * n + 32; i++)
                assert_true(got[i] == (float)GK_TEST_SENTINEL);
            check_all("rbf_matrix(x, x)", n, n, d, gamma, hx, hx, got + off);
            free(got);
            gk_buffer_destroy(k);
            gk_buffer_destroy(kp);
        }
        free(hx);
        gk_buffer_destroy(x);
    }
}

/* Two clusters 100 apart, each of spread 1: pairs within a cluster are close while
 * ||x - c||^2 + ||y - c||^2 is large, so their entries fail the bound and come from differences;
 * pairs across clusters give 0. With gamma so small that all entries are near 1, whole tiles
 * fail it too. */
static void test_bound(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = 290, n = 300, d = 20;
    const double gammas[] = {0.05, 0.5, 1e-5};
    for (size_t g = 0; g < sizeof gammas / sizeof gammas[0]; g++) {
        float *hx, *hy;
        make_rows(m, n, d, 0.0, 1.0, &hx, &hy);
        for (size_t i = 0; i < m; i++)
            for (size_t f = 0; f < d; f++)
                hx[i * d + f] += i % 2 ? 50.0f : -50.0f;
        for (size_t j = 0; j < n; j++)
            for (size_t f = 0; f < d; f++)
                hy[j * d + f] += j % 3 ? 50.0f : -50.0f;
        for (size_t j = 0; j < n; j += 5) /* the copies of x's rows again */
            memcpy(hy + j * d, hx + (j * 7 % m) * d, d * sizeof *hx);
        matrix_at(ctx, "rbf_matrix of two clusters", m, n, d, gammas[g], hx, hy, 3);
        free(hx);
        free(hy);
    }
    /* One distant row of y among close ones: the tile that holds it fails the bound's test
     * for whole rows, and its other entries are tested one by one (identical rows among them). */
    float *hx, *hy;
    make_rows(m, n, d, 0.0, 1.0, &hx, &hy);
    for (size_t f = 0; f < d; f++)
        hy[1 * d + f] += 30.0f;
    matrix_at(ctx, "rbf_matrix with a distant row", m, n, d, 0.5, hx, hy, 3);
    free(hx);
    free(hy);
}

/* NaN, infinities and values whose squares overflow float: the rule of every backend (an
 * infinite difference gives 0, inf - inf and NaN give NaN), the other entries as usual. */
static void test_special(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = 300, n = 257, d = 20;
    const float specials[] = {NAN, INFINITY, -INFINITY, 3e19f, -1e30f};
    for (size_t s = 0; s < sizeof specials / sizeof specials[0]; s++) {
        float *hx, *hy;
        make_rows(m, n, d, 0.0, 1.0, &hx, &hy);
        hx[7 * d + 2] = specials[s];
        hy[11 * d + 4] = specials[s];
        matrix_at(ctx, "rbf_matrix with special values", m, n, d, 0.3, hx, hy, 0);
        free(hx);
        free(hy);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_offsets),
        GK_TEST_BOTH(test_same_buffer),
        GK_TEST_BOTH(test_bound),
        GK_TEST_BOTH(test_special),
    };
    return cmocka_run_group_tests_name("rbf_forms", tests, gk_test_group_setup, NULL);
}
