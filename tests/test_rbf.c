/* SPDX-License-Identifier: MIT */
/* test_rbf.c - rbf_rows, rbf_matrix, rbf_matvec against long double references, and errors. */
#include "gk_test.h"
#include "kernel_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};
static const size_t dims[] = {1, 3, 20, 33, 256};

/* Absolute bound per entry (matvec: times sum |w|). */
static double abs_tol(gk_dtype t)
{
    return t == GK_FLOAT32 ? 1e-5 : 1e-12;
}

/* exp(-gamma ||x - y||^2) over d features, in long double from the stored values. */
static long double ref_kernel(gk_dtype t, double gamma, const void *x, size_t xi, const void *y,
                              size_t yj, size_t d)
{
    long double dist = 0;
    for (size_t f = 0; f < d; f++) {
        long double diff =
            (long double)gk_test_get(t, x, xi * d + f) - (long double)gk_test_get(t, y, yj * d + f);
        dist += diff * diff;
    }
    return gk_test_exp_ref(-(long double)gk_test_round(t, gamma) * dist);
}

/* A gamma that spreads the kernel values over (0, 1) for features in [0, 1). */
static double pick_gamma(size_t d)
{
    return gk_test_uniform(0.5, 6.0) / (double)d;
}

/* Random n x d rows in [offset, offset + 1). */
static void *random_rows(gk_dtype t, size_t n, size_t d, double offset)
{
    return gk_test_random_array(t, n * d, offset, offset + 1.0);
}

static void copy_row(gk_dtype t, void *dst, size_t di, const void *src, size_t si, size_t d)
{
    size_t es = gk_test_esize(t);
    memcpy((char *)dst + di * d * es, (const char *)src + si * d * es, d * es);
}

/* --------------------------------------------------------------------------------------------
 * rbf_rows
 * ------------------------------------------------------------------------------------------ */

static void rows_case(gk_context *ctx, gk_dtype t, size_t n, size_t d, double gamma, double offset,
                      int with_identical)
{
    void *ha = random_rows(t, n, d, offset), *hb = random_rows(t, n, d, offset);
    if (with_identical)
        for (size_t i = 0; i < n; i += 3)
            copy_row(t, hb, i, ha, i, d);
    gk_buffer *a = gk_test_buffer_from(ctx, t, n * d, ha);
    gk_buffer *b = gk_test_buffer_from(ctx, t, n * d, hb);
    gk_buffer *k = gk_test_buffer_const(ctx, t, n, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_rbf_rows(ctx, n, d, gamma, a, b, k));
    void *got = gk_test_read_all(k);
    for (size_t i = 0; i < n; i++) {
        long double ref = ref_kernel(t, gamma, ha, i, hb, i, d);
        int same = gk_ref_rows_equal(t, ha, i, hb, i, d);
        gk_ref_check_rbf(t, gk_test_get(t, got, i), ref, abs_tol(t), same, "rbf_rows", i, i);
    }
    free(got);
    free(ha);
    free(hb);
    gk_buffer_destroy(a);
    gk_buffer_destroy(b);
    gk_buffer_destroy(k);
}

/* On the CPU: asserts the form a context that logs (GK_LOG=1) runs op ("rbf_matrix",
 * "rbf_matvec" or "rbf_rows", m = n) with on U[0,1) rows; nothing on CUDA. */
static void cpu_form_is(void **state, const char *op, gk_dtype t, size_t m, size_t n, size_t d,
                        double gamma, const char *form)
{
    if (gk_test_is_cuda(state))
        return;
    gk_context *ctx = gk_test_logging_context(GK_BACKEND_CPU, NULL);
    assert_non_null(ctx);
    gk_buffer *x = gk_test_buffer_random(ctx, t, m * d, 0.0, 1.0, NULL);
    gk_buffer *y = gk_test_buffer_random(ctx, t, n * d, 0.0, 1.0, NULL);
    gk_buffer *w = gk_test_buffer_random(ctx, t, n, -1.0, 1.0, NULL);
    gk_buffer *k = gk_test_buffer_const(ctx, t, m * n, 0.0);
    gk_test_capture_begin();
    gk_status st = strcmp(op, "rbf_matrix") == 0   ? gk_rbf_matrix(ctx, m, n, d, gamma, x, y, k)
                   : strcmp(op, "rbf_matvec") == 0 ? gk_rbf_matvec(ctx, m, n, d, gamma, x, y, w, k)
                                                   : gk_rbf_rows(ctx, m, d, gamma, x, y, k);
    const char *ran = gk_test_capture_form(op);
    GK_CHECK_OK(st);
    if (strcmp(ran, form) != 0)
        GK_FAIL("%s %s %zux%zux%zu on the CPU: form %s ran, expected %s", op, gk_test_dtype_name(t),
                m, n, d, ran, form);
    gk_buffer_destroy(k);
    gk_buffer_destroy(w);
    gk_buffer_destroy(y);
    gk_buffer_destroy(x);
    gk_context_destroy(ctx);
}

static void test_rows(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const size_t ns[] = {1, 7, 100, 1025};
    for (size_t di = 0; di < 2; di++)
        for (size_t ni = 0; ni < 4; ni++)
            for (size_t fi = 0; fi < sizeof dims / sizeof dims[0]; fi++)
                for (int off = 0; off < 2; off++)
                    rows_case(ctx, dtypes[di], ns[ni], dims[fi], pick_gamma(dims[fi]),
                              off ? 1e3 : 0.0, 1);
    cpu_form_is(state, "rbf_rows", GK_FLOAT32, 1000, 1000, 20, 0.05, "diff");
}

/* The seed article's workload: 1000 x 20 float32 rows, gamma = 1. */
static void test_rows_seed_workload(void **state)
{
    gk_context *ctx = gk_test_context(state);
    rows_case(ctx, GK_FLOAT32, 1000, 20, 1.0, 0.0, 0);
    rows_case(ctx, GK_FLOAT64, 1000, 20, 1.0, 0.0, 0);
}

/* --------------------------------------------------------------------------------------------
 * rbf_matrix and rbf_matvec
 * ------------------------------------------------------------------------------------------ */

static const size_t mnd[][3] = {{1, 1, 1},       {7, 1, 3},      {1, 7, 20},     {7, 7, 33},
                                {100, 7, 256},   {7, 100, 20},   {100, 100, 3},  {1025, 7, 20},
                                {7, 1025, 33},   {100, 1025, 1}, {1025, 100, 3}, {33, 33, 256},
                                {1025, 1025, 3}, {260, 516, 20}};

/* x (m x d) and y (n x d) with y_j = x_i for a few pairs; wide: see matrix_case. */
static void make_xy(gk_dtype t, size_t m, size_t n, size_t d, double offset, int identical,
                    int wide, void **hx, void **hy)
{
    *hx = random_rows(t, m, d, offset);
    *hy = random_rows(t, n, d, offset);
    for (size_t i = 0; wide == 1 && i < m && i < 128; i++)
        for (size_t l = 0; l < d; l++)
            gk_test_set(t, *hx, i * d + l,
                        offset + 16.0 * (gk_test_get(t, *hx, i * d + l) - offset));
    for (size_t i = 0; wide == 2 && i < m && i < 128; i++)
        for (size_t l = 0; l < d; l++)
            gk_test_set(t, *hx, i * d + l, gk_test_get(t, *hx, i * d + l) + 10.0);
    for (size_t j = 0; wide == 2 && j < n && j < 128; j++)
        for (size_t l = 0; l < d; l++)
            gk_test_set(t, *hy, j * d + l, gk_test_get(t, *hy, j * d + l) + 10.0);
    for (size_t i = 0; (wide == 3 || wide == 4) && i < m * d; i++)
        gk_test_set(t, *hx, i, ldexp(gk_test_get(t, *hx, i), wide == 3 ? -20 : 40));
    for (size_t j = 0; (wide == 3 || wide == 4) && j < n * d; j++)
        gk_test_set(t, *hy, j, ldexp(gk_test_get(t, *hy, j), wide == 3 ? -20 : 40));
    for (size_t l = 0; wide == 5 && l < d; l++) {
        const double f = ldexp(1.0, -(int)(l % 40));
        for (size_t i = 0; i < m; i++)
            gk_test_set(t, *hx, i * d + l, offset + f * (gk_test_get(t, *hx, i * d + l) - offset));
        for (size_t j = 0; j < n; j++)
            gk_test_set(t, *hy, j * d + l, offset + f * (gk_test_get(t, *hy, j * d + l) - offset));
    }
    if (identical)
        for (size_t j = 0; j < n; j += 5)
            copy_row(t, *hy, j, *hx, (j * 7) % m, d);
}

/* wide = 1: x's first 128 rows spread 16 times wider than the others, so row tiles of one
 * rbf_matrix differ in scale (a CUDA tile may then choose another form than its neighbours);
 * wide = 2: two clusters, the first 128 rows of x and of y 10 higher in every feature than the
 * rest, so the small cluster's rows are far from the data's center but close to each other;
 * wide = 3 and 4: every value times 2^-20 or 2^40 (after the offset, exactly), data far below
 * or above fp16's range (the tensor-core form's row scales); wide = 5: feature l spread
 * 2^-(l % 40) as wide, so a row's values span 2^39 (in the CUDA GEMM form's fp16 operands,
 * scaled to the row's largest value, the small ones subnormal or 0). */
static void matrix_case(gk_context *ctx, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                        double offset, int identical, int wide)
{
    void *hx, *hy;
    make_xy(t, m, n, d, offset, identical, wide, &hx, &hy);
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *k = gk_test_buffer_const(ctx, t, m * n, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, gamma, x, y, k));
    void *got = gk_test_read_all(k);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double g = gk_test_get(t, got, i * n + j);
            if (isnan(gamma)) {
                if (!isnan(g))
                    GK_FAIL("rbf_matrix with gamma NaN gave %g at (%zu,%zu)", g, i, j);
                continue;
            }
            long double ref = ref_kernel(t, gamma, hx, i, hy, j, d);
            gk_ref_check_rbf(t, g, ref, abs_tol(t),
                             identical && gk_ref_rows_equal(t, hx, i, hy, j, d), "rbf_matrix", i,
                             j);
        }
    free(got);
    free(hx);
    free(hy);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(k);
}

/* Runs rbf_matvec on host rows hx (m x d), hy (n x d) and weights hw and checks every
 * stride-th output against the long double reference: within the contract, NaN exactly where
 * the reference is NaN. Returns the outputs (the caller frees them). */
static void *matvec_check(gk_context *ctx, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                          const void *hx, const void *hy, const void *hw, size_t stride,
                          const char *what)
{
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *w = gk_test_buffer_from(ctx, t, n, hw);
    gk_buffer *out = gk_test_buffer_const(ctx, t, m, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_rbf_matvec(ctx, m, n, d, gamma, x, y, w, out));
    void *got = gk_test_read_all(out);
    long double wsum = 0;
    for (size_t j = 0; j < n; j++)
        wsum += fabsl((long double)gk_test_get(t, hw, j));
    for (size_t i = 0; i < m; i += stride) {
        gk_test_sum acc = {0, 0};
        for (size_t j = 0; j < n; j++)
            gk_test_sum_add(&acc, ref_kernel(t, gamma, hx, i, hy, j, d) * gk_test_get(t, hw, j));
        long double ref = gk_test_sum_value(&acc);
        double g = gk_test_get(t, got, i);
        if (isnan(ref) || isnan(g)) {
            if (!(isnan(ref) && isnan(g)))
                GK_FAIL("%s %s (%zu x %zu x %zu, gamma %g): row %zu is %g, reference %Lg", what,
                        gk_test_dtype_name(t), m, n, d, gamma, i, g, ref);
            continue;
        }
        gk_ref_check_rbf(t, g, ref, abs_tol(t) * wsum, 0, what, i, 0);
    }
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(w);
    gk_buffer_destroy(out);
    return got;
}

/* Random rows and weights; every stride-th output checked (the large shapes of the CUDA forms
 * check a subset that still covers every row tile, to keep the references' cost, also under
 * valgrind, near the other tests'). */
static void matvec_case_every(gk_context *ctx, gk_dtype t, size_t m, size_t n, size_t d,
                              double gamma, double offset, int identical, size_t stride)
{
    void *hx, *hy;
    make_xy(t, m, n, d, offset, identical, 0, &hx, &hy);
    void *hw = gk_test_random_array(t, n, -1, 1);
    free(matvec_check(ctx, t, m, n, d, gamma, hx, hy, hw, stride, "rbf_matvec"));
    free(hx);
    free(hy);
    free(hw);
}

static void matvec_case(gk_context *ctx, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                        double offset, int identical)
{
    matvec_case_every(ctx, t, m, n, d, gamma, offset, identical, 1);
}

static void test_matrix(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++)
        for (size_t c = 0; c < sizeof mnd / sizeof mnd[0]; c++)
            for (int off = 0; off < 2; off++)
                matrix_case(ctx, dtypes[di], mnd[c][0], mnd[c][1], mnd[c][2], pick_gamma(mnd[c][2]),
                            off ? 1e3 : 0.0, 1, 0);
    /* every feature count on one shape */
    for (size_t di = 0; di < 2; di++)
        for (size_t fi = 0; fi < sizeof dims / sizeof dims[0]; fi++)
            matrix_case(ctx, dtypes[di], 33, 65, dims[fi], pick_gamma(dims[fi]), 1e3, 1, 0);
    /* Outputs large enough for the CUDA backend's float32 inner-product form: a gamma that
     * allows it on every tile, one that allows it on none, and tiles of both kinds in one call. */
    for (int off = 0; off < 2; off++) {
        double o = off ? 1e3 : 0.0;
        matrix_case(ctx, GK_FLOAT32, 1100, 1030, 20, 0.5 / 20, o, 1, 0);
        matrix_case(ctx, GK_FLOAT32, 1100, 1030, 20, 6.0 / 20, o, 1, 0);
        matrix_case(ctx, GK_FLOAT32, 1100, 1030, 20, 0.5 / 20, o, 1, 1);
    }
}

static void test_matvec(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++)
        for (size_t c = 0; c < sizeof mnd / sizeof mnd[0]; c++)
            for (int off = 0; off < 2; off++)
                matvec_case(ctx, dtypes[di], mnd[c][0], mnd[c][1], mnd[c][2], pick_gamma(mnd[c][2]),
                            off ? 1e3 : 0.0, 1);
    for (size_t di = 0; di < 2; di++)
        for (size_t fi = 0; fi < sizeof dims / sizeof dims[0]; fi++)
            matvec_case(ctx, dtypes[di], 65, 33, dims[fi], pick_gamma(dims[fi]), 1e3, 1);
}

/* --------------------------------------------------------------------------------------------
 * rbf_matvec float32 for d <= 4 on CUDA: the factorized form under its bound (CUDA row blocks
 * of 2048 rows, chunks of 1024 points of y; cuda/cuda_rbf_matvec_fact.cuh). Sizes of two row
 * blocks (one partial) by three chunks (one partial), which the launch splits three ways.
 * ------------------------------------------------------------------------------------------ */

#define FORM_M 2085
#define FORM_N 2053

/* Scales rows [r0, r1) of a (rows x d) array about offset by f: a row block or a chunk of y
 * whose spread, and so whose bound, differs from its neighbours'. */
static void spread_rows(gk_dtype t, void *a, size_t r0, size_t r1, size_t d, double offset,
                        double f)
{
    for (size_t i = r0 * d; i < r1 * d; i++)
        gk_test_set(t, a, i, offset + f * (gk_test_get(t, a, i) - offset));
}

/* Every d the form takes, typical gamma, offset data, identical rows. */
static void test_matvec_factorized(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t d = 1; d <= 4; d++)
        matvec_case_every(ctx, GK_FLOAT32, FORM_M, FORM_N, d, 1.0 / (double)d, d % 2 ? 1e3 : 0.0, 1,
                          3);
    matvec_case_every(ctx, GK_FLOAT32, FORM_M, FORM_N, 3, 1.0 / 3, 0.0, 1, 3);
    /* One row tile per split of one chunk (the combine kernel) and, with m past 528 row
     * blocks, one split (the blocks write out[] themselves). */
    matvec_case(ctx, GK_FLOAT32, 7, 200003, 3, 1.0 / 3, 0.0, 1);
    matvec_case_every(ctx, GK_FLOAT32, 1081349, 7, 3, 1.0 / 3, 1e3, 1, 7);
}

/* The bound's boundary. Rows and points in [o, o + 1)^3 (o = 0 or 1e3), centered on their
 * block's midrange, have nx, ny <= 0.75, so N = nx + ny <= 1.5 and the bound
 * (3d + 8) u gamma N <= 4e-6 holds up to gamma = 2.6: 2.5 is just inside, 2.7 just outside
 * (differences). Then row block 0 and chunk 1 of y spread 16 times wider: at gamma = 0.5 block
 * 0 takes differences throughout and block 1 takes the form on chunks 0 and 2 only; at 0.004
 * every chunk of both blocks takes the form. */
static void test_matvec_factorized_bound(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = FORM_M, n = FORM_N, d = 3;
    static const double narrow[] = {2.5, 2.7}, wide[] = {0.5, 0.004};
    for (int wi = 0; wi < 2; wi++)
        for (int gi = 0; gi < 2; gi++) {
            double o = (wi + gi) % 2 ? 1e3 : 0.0;
            void *hx, *hy;
            make_xy(GK_FLOAT32, m, n, d, o, 1, 0, &hx, &hy);
            if (wi) {
                spread_rows(GK_FLOAT32, hx, 0, 2048, d, o, 16.0);
                spread_rows(GK_FLOAT32, hy, 1024, 2048, d, o, 16.0);
            }
            void *hw = gk_test_random_array(GK_FLOAT32, n, -1, 1);
            free(matvec_check(ctx, GK_FLOAT32, m, n, d, wi ? wide[gi] : narrow[gi], hx, hy, hw, 3,
                              "rbf_matvec (factorized bound)"));
            free(hx);
            free(hy);
            free(hw);
        }
}

/* NaN and infinities in x (row block 0), in y (chunk 1) and in w: the rows and chunks they
 * touch take differences, as everywhere (NaN where the reference is NaN); the others the form. */
static void test_matvec_factorized_special(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = FORM_M, n = FORM_N, d = 3;
    for (int wnan = 0; wnan < 2; wnan++) {
        void *hx, *hy;
        make_xy(GK_FLOAT32, m, n, d, 0.0, 1, 0, &hx, &hy);
        gk_test_set(GK_FLOAT32, hx, 5 * d + 1, NAN);
        gk_test_set(GK_FLOAT32, hx, 7 * d + 2, INFINITY);
        gk_test_set(GK_FLOAT32, hy, 1500 * d + 0, INFINITY);
        gk_test_set(GK_FLOAT32, hy, 1700 * d + 2, -INFINITY);
        void *hw = gk_test_random_array(GK_FLOAT32, n, -1, 1);
        if (wnan)
            gk_test_set(GK_FLOAT32, hw, 2050, NAN);
        free(matvec_check(ctx, GK_FLOAT32, m, n, d, 1.0 / 3, hx, hy, hw, 1,
                          "rbf_matvec (factorized, NaN/inf)"));
        free(hx);
        free(hy);
        free(hw);
    }
}

/* x = y and w one-hot: out_i is the kernel value K_ij of the chosen column j, so out_j must be
 * exactly w_j (identical rows give exactly 1), also where the form computes the rest (every
 * 61st row checked against the reference). */
static void test_matvec_factorized_identical(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = FORM_M;
    static const size_t cols[] = {1023, 1500, 2084};
    for (size_t d = 1; d <= 4; d++) {
        void *hx = random_rows(GK_FLOAT32, m, d, d % 2 ? 1e3 : 0.0);
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
            void *hw = gk_test_const_array(GK_FLOAT32, m, 0.0);
            gk_test_set(GK_FLOAT32, hw, cols[c], 0.375);
            float *got = matvec_check(ctx, GK_FLOAT32, m, m, d, 1.0 / (double)d, hx, hx, hw, 61,
                                      "rbf_matvec (one-hot w)");
            if (got[cols[c]] != 0.375f)
                GK_FAIL("rbf_matvec float32 d %zu: x = y, w one-hot at %zu: out[%zu] is %.9g, "
                        "not exactly w = 0.375",
                        d, cols[c], cols[c], (double)got[cols[c]]);
            free(got);
            free(hw);
        }
        free(hx);
    }
}

/* Rows of x copied into y at other positions (chunk and group starts and ends, the last partial
 * chunk), one with -0 where the copy has +0 (equal values), and one copied twice into one group:
 * with w nonzero only at the copies, out_i must be exactly their sum (each entry exactly 1). */
static void test_matvec_factorized_duplicates(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = FORM_M, n = FORM_N;
    static const size_t pairs[][2] = {{0, 0},     {5, 1500}, {2084, 2052}, {1000, 31},
                                      {1001, 32}, {7, 700},  {9, 900}};
    for (size_t d = 1; d <= 4; d++) {
        void *hx, *hy;
        make_xy(GK_FLOAT32, m, n, d, 0.0, 0, 0, &hx, &hy);
        gk_test_set(GK_FLOAT32, hx, 7 * d, -0.0);
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
            copy_row(GK_FLOAT32, hy, pairs[p][1], hx, pairs[p][0], d);
        gk_test_set(GK_FLOAT32, hy, 700 * d, 0.0);
        copy_row(GK_FLOAT32, hy, 901, hx, 9, d);
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
            const size_t i = pairs[p][0], j = pairs[p][1];
            void *hw = gk_test_const_array(GK_FLOAT32, n, 0.0);
            gk_test_set(GK_FLOAT32, hw, j, 0.375);
            if (j == 900)
                gk_test_set(GK_FLOAT32, hw, 901, 0.25);
            const float want = j == 900 ? 0.625f : 0.375f;
            float *got = matvec_check(ctx, GK_FLOAT32, m, n, d, 1.0 / (double)d, hx, hy, hw, 97,
                                      "rbf_matvec (duplicates)");
            if (got[i] != want)
                GK_FAIL("rbf_matvec float32 d %zu: x_%zu copied to y_%zu: out[%zu] is %.9g, not "
                        "exactly %g",
                        d, i, j, i, (double)got[i], (double)want);
            free(got);
            free(hw);
        }
        free(hx);
        free(hy);
    }
}

/* --------------------------------------------------------------------------------------------
 * rbf_matvec float32 for d <= 4 on CUDA by the Taylor form (cuda/cuda_rbf_matvec_taylor.cuh):
 * one expansion about the box's center, where its truncation and rounding bound (<= 1e-8
 * sum |w|) holds, decided on the device. These cases make contexts that force a form:
 * forced (any size) against the reference, and against off (the difference kernels only):
 * where the bound holds some output must differ from off's (else the form never ran), where it
 * fails every output must be bit-identical to off's (the fallback is those same kernels).
 * ------------------------------------------------------------------------------------------ */

/* A CUDA context whose planner runs `form` where it can (GK_RBF_FORM, read when a context is
 * created; the variable is put back as it was). */
static gk_context *form_context(const char *form)
{
    const char *old = getenv("GK_RBF_FORM");
    char *keep = old ? strdup(old) : NULL;
    setenv("GK_RBF_FORM", form, 1);
    gk_context *ctx = NULL;
    gk_status st = gk_context_create(GK_BACKEND_CUDA, &ctx);
    if (keep) {
        setenv("GK_RBF_FORM", keep, 1);
        free(keep);
    } else {
        unsetenv("GK_RBF_FORM");
    }
    GK_CHECK_OK(st);
    return ctx;
}

/* "forced": the Taylor form wherever its device-side bound holds; "off": the kernels it falls
 * back to (the factorized form) only. */
static gk_context *taylor_context(const char *mode)
{
    return form_context(strcmp(mode, "forced") == 0 ? "cuda_matvec_taylor" : "cuda_matvec_fact");
}

/* rbf_matvec in a context of taylor_context(mode), no reference: the outputs (the caller frees
 * them). */
static float *taylor_raw(const char *mode, size_t m, size_t n, size_t d, double gamma,
                         const float *hx, const float *hy, const float *hw)
{
    gk_context *ctx = taylor_context(mode);
    gk_buffer *x = gk_test_buffer_from(ctx, GK_FLOAT32, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, GK_FLOAT32, n * d, hy);
    gk_buffer *w = gk_test_buffer_from(ctx, GK_FLOAT32, n, hw);
    gk_buffer *out = gk_test_buffer_const(ctx, GK_FLOAT32, m, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_rbf_matvec(ctx, m, n, d, gamma, x, y, w, out));
    float *got = gk_test_read_all(out);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(w);
    gk_buffer_destroy(out);
    gk_context_destroy(ctx);
    return got;
}

/* forced against the reference (every stride-th row) and against off: used = 1, some output
 * must differ; used = 0, all bit-identical; used = -1, no comparison. */
static void taylor_compare(size_t m, size_t n, size_t d, double gamma, const float *hx,
                           const float *hy, const float *hw, size_t stride, int used,
                           const char *what)
{
    gk_context *ctx = taylor_context("forced");
    float *forced = matvec_check(ctx, GK_FLOAT32, m, n, d, gamma, hx, hy, hw, stride, what);
    gk_context_destroy(ctx);
    float *off = taylor_raw("off", m, n, d, gamma, hx, hy, hw);
    const int same = memcmp(forced, off, m * sizeof(float)) == 0;
    if (used == 1 && same)
        GK_FAIL("%s (%zu x %zu x %zu, gamma %g): forced equals off bit for bit: the Taylor form "
                "did not run",
                what, m, n, d, gamma);
    if (used == 0 && !same)
        for (size_t i = 0; i < m; i++)
            if (memcmp(&forced[i], &off[i], sizeof(float)) != 0)
                GK_FAIL("%s (%zu x %zu x %zu, gamma %g): the bound fails, yet row %zu is %.9g "
                        "forced and %.9g off",
                        what, m, n, d, gamma, i, (double)forced[i], (double)off[i]);
    free(forced);
    free(off);
}

static void taylor_case(size_t d, double gamma, double offset, int used)
{
    void *hx, *hy;
    make_xy(GK_FLOAT32, FORM_M, FORM_N, d, offset, 1, 0, &hx, &hy);
    void *hw = gk_test_random_array(GK_FLOAT32, FORM_N, -1, 1);
    taylor_compare(FORM_M, FORM_N, d, gamma, hx, hy, hw, 3, used, "rbf_matvec (Taylor)");
    free(hx);
    free(hy);
    free(hw);
}

/* (a) every d, gamma = 1/d and 0.5, U[0, 1) (S = 2 gamma d / 4 <= 1: the bound holds), and
 * (b) on data offset by 1e3. */
static void test_matvec_taylor(void **state)
{
    (void)gk_test_context(state); /* skips without a GPU */
    for (size_t d = 1; d <= 4; d++) {
        taylor_case(d, 1.0 / (double)d, 0.0, 1);
        taylor_case(d, 0.5, 0.0, 1);
        taylor_case(d, 1.0 / (double)d, 1e3, 1);
    }
}

/* (c) the bound's edge. Rows in [0, L)^d with 0 and (L, .., L) in both x and y, so the box is
 * [0, L]^d exactly and S = 2 gamma (sqrt(d) L / 2)^2 = L^2 / 2 at gamma = 1/d. At the highest
 * degree (d = 3: 21, d = 4: 12) S^(p+1) / (p+1)! e^S reaches 1e-8 at S = 3.37 and 1.248: 3.2 and
 * 1.18 hold (the form), 3.55 and 1.32 fail (the difference kernels, bit for bit). */
static void test_matvec_taylor_bound(void **state)
{
    (void)gk_test_context(state); /* skips without a GPU */
    static const double s_of[][2] = {{3.2, 3.55}, {1.18, 1.32}};
    for (size_t d = 3; d <= 4; d++)
        for (int fails = 0; fails < 2; fails++) {
            const double len = sqrt(2.0 * s_of[d - 3][fails]);
            float *hx = gk_test_random_array(GK_FLOAT32, FORM_M * d, 0.0, len);
            float *hy = gk_test_random_array(GK_FLOAT32, FORM_N * d, 0.0, len);
            for (size_t l = 0; l < d; l++) {
                hx[l] = hy[l] = 0.0f;
                hx[d + l] = hy[d + l] = (float)len;
            }
            float *hw = gk_test_random_array(GK_FLOAT32, FORM_N, -1, 1);
            taylor_compare(FORM_M, FORM_N, d, 1.0 / (double)d, hx, hy, hw, 3, !fails,
                           "rbf_matvec (Taylor bound)");
            free(hx);
            free(hy);
            free(hw);
        }
}

/* (d) NaN in x, infinities in y, inf or NaN in w, and all-zero w: the bound fails, the outputs
 * are the difference kernels' bit for bit (NaN where the reference is NaN). */
static void test_matvec_taylor_special(void **state)
{
    (void)gk_test_context(state); /* skips without a GPU */
    const size_t m = FORM_M, n = FORM_N, d = 3;
    for (int c = 0; c < 5; c++) {
        void *hx, *hy;
        make_xy(GK_FLOAT32, m, n, d, 0.0, 1, 0, &hx, &hy);
        void *hw = gk_test_random_array(GK_FLOAT32, n, -1, 1);
        if (c == 0)
            gk_test_set(GK_FLOAT32, hx, 5 * d + 1, NAN);
        if (c == 1)
            gk_test_set(GK_FLOAT32, hy, 1500 * d + 2, -INFINITY);
        if (c == 2)
            gk_test_set(GK_FLOAT32, hw, 2050, INFINITY);
        if (c == 3)
            gk_test_set(GK_FLOAT32, hw, 7, NAN);
        for (size_t j = 0; c == 4 && j < n; j++)
            gk_test_set(GK_FLOAT32, hw, j, 0.0);
        if (c == 2) {
            /* sums with an infinite weight: compare with off only */
            float *forced = taylor_raw("forced", m, n, d, 1.0 / 3, hx, hy, hw);
            float *off = taylor_raw("off", m, n, d, 1.0 / 3, hx, hy, hw);
            for (size_t i = 0; i < m; i++)
                if (memcmp(&forced[i], &off[i], sizeof(float)) != 0 || isfinite(forced[i]))
                    GK_FAIL("rbf_matvec (Taylor, inf in w): row %zu is %.9g forced, %.9g off", i,
                            (double)forced[i], (double)off[i]);
            free(forced);
            free(off);
        } else {
            taylor_compare(m, n, d, 1.0 / 3, hx, hy, hw, 1, 0, "rbf_matvec (Taylor, special)");
        }
        free(hx);
        free(hy);
        free(hw);
    }
}

/* (e) m or n = 1: one row against itself with w = 1 is exactly 1 (S = 0, the form's one term);
 * x_0 copied into y with a one-hot weight there is exactly that weight (the form's error is
 * below half its ulp); single rows against many and many against one within the contract. */
static void test_matvec_taylor_single(void **state)
{
    (void)gk_test_context(state); /* skips without a GPU */
    for (size_t d = 1; d <= 4; d++) {
        float *hx = random_rows(GK_FLOAT32, FORM_M, d, d % 2 ? 1e3 : 0.0);
        float *hy = random_rows(GK_FLOAT32, FORM_N, d, d % 2 ? 1e3 : 0.0);
        const float one = 1.0f;
        float *got = taylor_raw("forced", 1, 1, d, 1.0 / (double)d, hx, hx, &one);
        if (got[0] != 1.0f)
            GK_FAIL("rbf_matvec (Taylor) d %zu: a row against itself with w = 1 is %.9g, not 1", d,
                    (double)got[0]);
        free(got);
        copy_row(GK_FLOAT32, hy, 1234, hx, 0, d);
        float *hw = gk_test_const_array(GK_FLOAT32, FORM_N, 0.0);
        hw[1234] = 0.375f;
        got = taylor_raw("forced", 1, FORM_N, d, 1.0 / (double)d, hx, hy, hw);
        if (got[0] != 0.375f)
            GK_FAIL("rbf_matvec (Taylor) d %zu: x_0 = y_1234, w one-hot 0.375 there: out is "
                    "%.9g",
                    d, (double)got[0]);
        free(got);
        free(hw);
        hw = gk_test_random_array(GK_FLOAT32, FORM_N, -1, 1);
        taylor_compare(1, FORM_N, d, 0.5, hx, hy, hw, 1, -1, "rbf_matvec (Taylor, m = 1)");
        taylor_compare(FORM_M, 1, d, 0.5, hx, hy, hw, 1, -1, "rbf_matvec (Taylor, n = 1)");
        free(hw);
        free(hx);
        free(hy);
    }
}

/* --------------------------------------------------------------------------------------------
 * rbf_matvec float32 for 4 < d <= 128 on CUDA with 2^20 pairs or more: the inner-product form on
 * rows centered on the mean of x's first 1024 rows, tile (128 x 128) by tile, N the largest
 * ||x~||^2 + ||y~||^2 of the tile's groups: for d <= 64 the inner products on TF32 tensor cores
 * under 1.001 (d + 11 + 2 (23.2 + 0.51 ceil(d / 8))) u gamma N <= 4e-6
 * (cuda/cuda_rbf_matvec_tc.cu), the tiles that fail it on the CUDA cores under
 * (2d + 11) u gamma N <= 4e-6 (cuda/cuda_rbf_matvec_dot.cuh); differences elsewhere.
 * ------------------------------------------------------------------------------------------ */

#define DOT_M 1100
#define DOT_N 1030

/* For U[0,1)^64 around its mean, N is about 14 (group maxima), so the bounds hold to gamma
 * 0.037 (tensor cores) and 0.034 (CUDA cores): 1/64 keeps every tile, 0.03 is near the
 * boundaries and 0.045 past them. At d = 20 (N about 6) the tensor-core bound, the larger
 * there, holds to gamma 0.14 and the other to 0.22: at 0.17 tiles fail the first and take the
 * second. Rows 1024.. of x (the last row group, outside the rows the center is the mean of)
 * spread 16 times wider fail both at 1/64, so their tiles take differences beside the others'
 * inner products. */
static void test_matvec_inner_product_tiles(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = DOT_M, n = DOT_N;
    for (int off = 0; off < 2; off++)
        matvec_case_every(ctx, GK_FLOAT32, m, n, 64, 1.0 / 64, off ? 1e3 : 0.0, 1, 4);
    matvec_case_every(ctx, GK_FLOAT32, m, n, 64, 0.03, 0.0, 1, 4);
    matvec_case_every(ctx, GK_FLOAT32, m, n, 64, 0.045, 1e3, 1, 4);
    matvec_case_every(ctx, GK_FLOAT32, m, n, 20, 1.0 / 20, 1e3, 1, 4);
    matvec_case_every(ctx, GK_FLOAT32, m, n, 20, 0.17, 0.0, 1, 4);
    matvec_case_every(ctx, GK_FLOAT32, m, n, 100, 1.0 / 100, 0.0, 1, 4);
    for (int off = 0; off < 2; off++) {
        double o = off ? 1e3 : 0.0;
        void *hx, *hy;
        make_xy(GK_FLOAT32, m, n, 64, o, 1, 0, &hx, &hy);
        spread_rows(GK_FLOAT32, hx, 1024, m, 64, o, 16.0);
        void *hw = gk_test_random_array(GK_FLOAT32, n, -1, 1);
        free(matvec_check(ctx, GK_FLOAT32, m, n, 64, 1.0 / 64, hx, hy, hw, 4,
                          "rbf_matvec (inner-product tiles, mixed)"));
        free(hx);
        free(hy);
        free(hw);
    }
}

/* NaN and infinities in x and y: their row and column groups' tiles take differences. */
static void test_matvec_inner_product_tiles_special(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = DOT_M, n = DOT_N, d = 64;
    void *hx, *hy;
    make_xy(GK_FLOAT32, m, n, d, 0.0, 1, 0, &hx, &hy);
    gk_test_set(GK_FLOAT32, hx, 5 * d + 3, NAN);
    gk_test_set(GK_FLOAT32, hx, 700 * d + 2, INFINITY);
    gk_test_set(GK_FLOAT32, hy, 11 * d + 2, INFINITY);
    gk_test_set(GK_FLOAT32, hy, 900 * d + 4, -INFINITY);
    void *hw = gk_test_random_array(GK_FLOAT32, n, -1, 1);
    /* every fifth row: rows 5 and 700 hold the NaN and the inf */
    free(matvec_check(ctx, GK_FLOAT32, m, n, d, 1.0 / 64, hx, hy, hw, 5,
                      "rbf_matvec (inner-product tiles, NaN/inf)"));
    free(hx);
    free(hy);
    free(hw);
}

/* x = y and w one-hot, as for the factorized form: out_j exactly w_j. */
static void test_matvec_inner_product_tiles_identical(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = DOT_M, d = 64;
    static const size_t cols[] = {5, 700, 1099};
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
        void *hx = random_rows(GK_FLOAT32, m, d, c % 2 ? 1e3 : 0.0);
        void *hw = gk_test_const_array(GK_FLOAT32, m, 0.0);
        gk_test_set(GK_FLOAT32, hw, cols[c], -0.625);
        float *got = matvec_check(ctx, GK_FLOAT32, m, m, d, 1.0 / 64, hx, hx, hw, 61,
                                  "rbf_matvec (inner-product tiles, one-hot w)");
        if (got[cols[c]] != -0.625f)
            GK_FAIL("rbf_matvec float32 d 64: x = y, w one-hot at %zu: out[%zu] is %.9g, not "
                    "exactly w = -0.625",
                    cols[c], cols[c], (double)got[cols[c]]);
        free(got);
        free(hw);
        free(hx);
    }
}

/* Shapes where the CPU backend computes rbf_matrix as ||x||^2 + ||y||^2 - 2 x.y through GEMM
 * (d >= 64, m n >= 2^16, (m + n) d <= m n; cpu/cpu_rbf_gemm.c), and rbf_matvec so a tile at a
 * time (d >= 64, m n >= 2^16), with offset data and identical rows. At d = 256 float32 its
 * rounding bound keeps an entry only away from gamma ||x - y||^2 = 1 for data of this spread
 * (s = ||x - c||^2 + ||y - c||^2 about 43): with gamma = 1 / 43 the typical entry fails it and
 * the whole call takes differences; 0.5 / 43 puts the boundary among the entries (6% of them
 * computed again from differences, seen when this test was written; 0.45 / 43 gave 0.1%);
 * 0.3 / 43 keeps every entry. */
static void test_matrix_inner_product(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (int off = 0; off < 2; off++) {
        double o = off ? 1e3 : 0.0;
        for (size_t di = 0; di < 2; di++) {
            matrix_case(ctx, dtypes[di], 300, 257, 64, pick_gamma(64), o, 1, 0);
            matrix_case(ctx, dtypes[di], 300, 257, 100, pick_gamma(100), o, 1, 0);
            matvec_case(ctx, dtypes[di], 300, 257, 100, pick_gamma(100), o, 1);
        }
    }
    /* two panels of x by two blocks of y (rbf_matvec's tiles: 256 x 2048) */
    matvec_case(ctx, GK_FLOAT32, 300, 2100, 64, pick_gamma(64), 0.0, 1);
    matvec_case(ctx, GK_FLOAT64, 300, 2100, 64, pick_gamma(64), 1e3, 1);
    /* d = 256 at the bound's boundary; kept few, as the references cost 68 M terms each (the
     * valgrind stage runs this too). */
    matrix_case(ctx, GK_FLOAT32, 520, 515, 256, 1.0 / 43, 0.0, 1, 0);
    matrix_case(ctx, GK_FLOAT32, 520, 515, 256, 0.5 / 43, 0.0, 1, 0);
    matrix_case(ctx, GK_FLOAT32, 520, 515, 256, 0.3 / 43, 1e3, 1, 0);
    matvec_case(ctx, GK_FLOAT32, 520, 515, 256, 0.5 / 43, 0.0, 1);
    /* the forms these shapes take on the CPU */
    cpu_form_is(state, "rbf_matrix", GK_FLOAT64, 300, 257, 64, 1.0 / 64, "gemm");
    cpu_form_is(state, "rbf_matrix", GK_FLOAT32, 300, 257, 100, 1.0 / 100,
                gk_test_cpu_has_fused() ? "fused" : "gemm");
    cpu_form_is(state, "rbf_matvec", GK_FLOAT64, 300, 257, 100, 1.0 / 100, "gemm");
    cpu_form_is(state, "rbf_matvec", GK_FLOAT32, 300, 2100, 64, 1.0 / 64,
                gk_test_cpu_has_fused() ? "diff" : "gemm");
}

/* NaN and infinities in x and y (m x d, n x d): the rule of every backend (an infinite
 * difference gives 0, inf - inf and NaN give NaN), entries of finite rows as usual. */
static void special_matrix_case(gk_context *ctx, gk_dtype t, size_t m, size_t n, size_t d,
                                double gamma, void *hx, void *hy)
{
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *k = gk_test_buffer_const(ctx, t, m * n, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, gamma, x, y, k));
    void *got = gk_test_read_all(k);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double g = gk_test_get(t, got, i * n + j);
            long double ref = ref_kernel(t, gamma, hx, i, hy, j, d);
            if (isnan(ref) || isnan(g)) {
                if (!(isnan(ref) && isnan(g)))
                    GK_FAIL("rbf_matrix %s %zux%zux%zu with NaN/inf data: entry (%zu,%zu) is %g, "
                            "reference %Lg",
                            gk_test_dtype_name(t), m, n, d, i, j, g, ref);
                continue;
            }
            gk_ref_check_rbf(t, g, ref, abs_tol(t), gk_ref_rows_equal(t, hx, i, hy, j, d),
                             "rbf_matrix (NaN/inf data)", i, j);
        }
    free(got);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(k);
}

/* NaN, +inf and -inf at a few places of x and y. */
static void put_specials(gk_dtype t, void *hx, void *hy, size_t d)
{
    gk_test_set(t, hx, 5 * d + 3, NAN);
    gk_test_set(t, hx, 7 * d + 2, INFINITY);
    gk_test_set(t, hy, 11 * d + 2, INFINITY);
    gk_test_set(t, hy, 13 * d + 4, -INFINITY);
}

/* Those inputs on the inner-product shapes, and rbf_matvec on them. */
static void test_matrix_inner_product_special(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = 300, n = 257, d = 100;
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        void *hx, *hy;
        make_xy(t, m, n, d, 0.0, 1, 0, &hx, &hy);
        put_specials(t, hx, hy, d);
        double gamma = pick_gamma(d);
        special_matrix_case(ctx, t, m, n, d, gamma, hx, hy);
        gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
        gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
        /* rbf_matvec with w = 1: a row with a NaN entry sums to NaN, the others as usual. */
        void *hw = gk_test_const_array(t, n, 1.0);
        gk_buffer *w = gk_test_buffer_from(ctx, t, n, hw);
        gk_buffer *out = gk_test_buffer_const(ctx, t, m, GK_TEST_SENTINEL);
        GK_CHECK_OK(gk_rbf_matvec(ctx, m, n, d, gamma, x, y, w, out));
        void *gv = gk_test_read_all(out);
        for (size_t i = 0; i < m; i++) {
            gk_test_sum acc = {0, 0};
            for (size_t j = 0; j < n; j++)
                gk_test_sum_add(&acc, ref_kernel(t, gamma, hx, i, hy, j, d));
            long double ref = gk_test_sum_value(&acc);
            double g = gk_test_get(t, gv, i);
            if (isnan(ref) || isnan(g)) {
                if (!(isnan(ref) && isnan(g)))
                    GK_FAIL("rbf_matvec %s with NaN/inf data: row %zu is %g, reference %Lg",
                            gk_test_dtype_name(t), i, g, ref);
                continue;
            }
            gk_ref_check_rbf(t, g, ref, abs_tol(t) * (long double)n, 0, "rbf_matvec (NaN/inf data)",
                             i, 0);
        }
        free(gv);
        free(hw);
        gk_buffer_destroy(w);
        gk_buffer_destroy(out);
        free(hx);
        free(hy);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
    }
}

/* A float32 rbf_matrix large enough for the CUDA backend's tensor-core form (2^24 entries or
 * more), too large to check every entry against the reference at reasonable cost: the first
 * 16 rows, rows i with i % 128 in {0, 127} (the edges of the 128-row tiles), every 61st row
 * (every position within a tile, over the rows) and the last are checked, each in full. wide
 * as in matrix_case; specials: NaN and infinities (put_specials); alias: rbf_matrix(x, x), one
 * buffer as both operands (n = m), whose diagonal is exactly 1. */
static void tc_case(gk_context *ctx, size_t m, size_t n, size_t d, double gamma, double offset,
                    int wide, int specials, int alias)
{
    const gk_dtype t = GK_FLOAT32;
    void *hx, *hy;
    if (alias)
        n = m;
    make_xy(t, m, n, d, offset, !alias, wide, &hx, &hy);
    if (alias) {
        free(hy);
        hy = hx;
    }
    if (specials)
        put_specials(t, hx, hy, d);
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = alias ? x : gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *k = gk_test_buffer_const(ctx, t, m * n, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, gamma, x, y, k));
    void *got = gk_test_read_all(k);
    for (size_t i = 0; i < m; i++) {
        if (!(i < 16 || i % 128 == 0 || i % 128 == 127 || i % 61 == 0 || i == m - 1))
            continue;
        for (size_t j = 0; j < n; j++) {
            double g = gk_test_get(t, got, i * n + j);
            long double ref = ref_kernel(t, gamma, hx, i, hy, j, d);
            if (isnan(ref) || isnan(g)) {
                if (!(isnan(ref) && isnan(g)))
                    GK_FAIL("rbf_matrix %zux%zux%zu: entry (%zu,%zu) is %g, reference %Lg", m, n, d,
                            i, j, g, ref);
                continue;
            }
            gk_ref_check_rbf(t, g, ref, abs_tol(t), gk_ref_rows_equal(t, hx, i, hy, j, d),
                             "rbf_matrix (tensor-core sizes)", i, j);
        }
    }
    free(got);
    free(hx);
    if (!alias) {
        free(hy);
        gk_buffer_destroy(y);
    }
    gk_buffer_destroy(x);
    gk_buffer_destroy(k);
}

/* The CUDA backend's float32 tensor-core form (cuda/rbf/rbf_tc.cu, rbf_tc_mma.cuh: 2^24 entries or
 * more, d from 64; cuda/rbf/plan.cu), whose rounding bound keeps an
 * entry or sends it back to differences, and whose sample of 256 tiles sends the whole call to
 * differences where more than a quarter of them would fall back. On U[0, 1) rows at d = 256 the
 * bound passes every entry at gamma = 1 / d and fails nearly every one from 1.5 / d: at 1.25 / d
 * some 0.6 % of the entries failed it (a float64 model of the bound with kappa = 3.02 dp + 94, the
 * bf16 form's; the fp16 form's 3.02 dp + 35 rejects fewer), the boundary among the entries, each
 * failing entry recomputed by one warp; at 4 / d the sample rejects the tensor cores (the
 * difference kernel of cuda_rbf_tc.cu computes every tile). With two clusters (wide = 2) and
 * gamma = 0.25 / d, pairs within the small cluster fail it (e is 500 times larger there, K near
 * 1): their tile is computed from differences as a whole, and the copies of its rows elsewhere in
 * y (identical rows) one warp each; pairs across the clusters pass (K near 0), as do pairs within
 * the large one. wide = 5 (values spanning 2^39 in a row) with NaN and inf, and on offset data,
 * takes the fp16 operands' subnormal and zero parts. Shapes are no
 * multiples of the 128 x 128 tiles, n % 4 != 0 takes the scalar loads and stores (n odd: no
 * float2 stores either), d = 257 the padding, and 6000 x 4500 spans
 * many tiles per block; the d = 64 and 100 cases (offset data, NaN and inf, rbf_matrix(x, x))
 * run the CUDA-core forms (below 2^26 entries at d < 128). ctest runs this case again with
 * GK_RBF_FORM=cuda_matrix_tc (no sample and no size limit: the fused kernel takes every case, its
 * fallbacks the 4 / d case). Not run on the CPU
 * backend: its own GEMM form is covered above, and at these sizes the references would take
 * valgrind minutes. */
static void test_matrix_tensor_core(void **state)
{
    gk_context *ctx = gk_test_context(state);
    tc_case(ctx, 4100, 4097, 256, 1.25 / 256, 0.0, 0, 0, 0);
    tc_case(ctx, 4100, 4096, 256, 0.5, 1e3, 0, 0, 0);
    tc_case(ctx, 4100, 4096, 257, 0.25 / 257, 0.0, 2, 0, 0);
    tc_case(ctx, 4100, 4097, 256, 1.0 / 256, 0.0, 0, 1, 0);
    tc_case(ctx, 4100, 0, 256, 0.5, 0.0, 0, 0, 1);
    tc_case(ctx, 6000, 4500, 256, 1.0 / 256, 0.0, 0, 0, 0);
    tc_case(ctx, 4100, 4097, 256, 4.0 / 256, 0.0, 0, 0, 0);
    tc_case(ctx, 4100, 4097, 256, 1.0 / 256, 0.0, 5, 1, 0);
    tc_case(ctx, 4100, 4096, 256, 0.5, 1e3, 5, 0, 0);
    tc_case(ctx, 4100, 4097, 64, 1.0 / 64, 0.0, 0, 0, 0);
    tc_case(ctx, 4100, 4098, 64, 0.5, 1e3, 0, 0, 0);
    tc_case(ctx, 4100, 4097, 64, 0.5, 0.0, 0, 1, 0);
    tc_case(ctx, 4100, 0, 64, 1.0 / 64, 0.0, 0, 0, 1);
    tc_case(ctx, 4100, 4097, 100, 1.0 / 100, 0.0, 0, 1, 0);
}

/* The tensor-core form on small shapes, for the sanitizers (ctest's rbf_tc_forced runs it with
 * GK_RBF_FORM=cuda_matrix_tc, which takes that form at any size whose scratch fits; without it
 * these are CUDA-core shapes): d = 64 at gamma = 1 / d and 0.5, data offset by 1e3, n odd (scalar
 * stores), NaN and inf, rbf_matrix(x, x), values scaled by 2^-20 and 2^40 at
 * gamma = 1 / (d scale^2) (the row scales of the fp16 operands), d = 100 (zero features to the
 * step), and d = 256 (8 steps a tile). */
static void test_matrix_tensor_core_small(void **state)
{
    gk_context *ctx = gk_test_context(state);
    tc_case(ctx, 700, 650, 64, 1.0 / 64, 0.0, 0, 0, 0);
    tc_case(ctx, 700, 651, 64, 0.5, 1e3, 0, 0, 0);
    tc_case(ctx, 700, 650, 64, 0.5, 0.0, 0, 1, 0);
    tc_case(ctx, 700, 0, 64, 1.0 / 64, 0.0, 0, 0, 1);
    tc_case(ctx, 700, 650, 64, 0x1p40 / 64, 0.0, 3, 0, 0);
    tc_case(ctx, 700, 650, 64, 0x1p-80 / 64, 0.0, 4, 0, 0);
    tc_case(ctx, 700, 650, 100, 1.0 / 100, 0.0, 0, 1, 0);
    tc_case(ctx, 1200, 1200, 256, 1.0 / 256, 0.0, 0, 0, 0);
}

/* Rows too wide to pack (over 4096 float32 or 2048 float64 features): rbf_matrix and rbf_matvec
 * read them in place. */
static void test_wide_rows(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++)
        for (int off = 0; off < 2; off++) {
            matrix_case(ctx, dtypes[di], 5, 3, 5000, pick_gamma(5000), off ? 1e3 : 0.0, 1, 0);
            matvec_case(ctx, dtypes[di], 5, 3, 5000, pick_gamma(5000), off ? 1e3 : 0.0, 1);
            matvec_case(ctx, dtypes[di], 1, 9, 4099, pick_gamma(4099), off ? 1e3 : 0.0, 0);
        }
    cpu_form_is(state, "rbf_matrix", GK_FLOAT32, 5, 3, 5000, 1.0 / 5000, "wide");
    cpu_form_is(state, "rbf_matvec", GK_FLOAT64, 1, 9, 4099, 1.0 / 4099, "wide");
}

/* gamma = 0 gives 1, +inf gives 0 away from identical rows, a negative gamma grows, NaN
 * propagates. */
static void test_gamma_values(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        matrix_case(ctx, t, 7, 9, 3, 0.0, 0.0, 1, 0);
        matrix_case(ctx, t, 7, 9, 3, INFINITY, 0.0, 0, 0);
        matrix_case(ctx, t, 7, 9, 3, -0.1, 0.0, 1, 0);
        matrix_case(ctx, t, 7, 9, 3, NAN, 0.0, 0, 0);
        rows_case(ctx, t, 9, 3, 0.0, 0.0, 1);
        rows_case(ctx, t, 9, 3, INFINITY, 0.0, 0);
        matvec_case(ctx, t, 7, 9, 3, 0.0, 0.0, 1);
        matvec_case(ctx, t, 7, 9, 3, INFINITY, 0.0, 0);
    }
}

/* Zero sizes are valid no-ops; d = 0 gives distance 0, i.e. 1. */
static void test_zero_sizes(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_buffer *e = NULL;
    GK_CHECK_OK(gk_buffer_create(ctx, GK_FLOAT32, 0, &e));
    gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, 12, 0.5);
    gk_buffer *k = gk_test_buffer_const(ctx, GK_FLOAT32, 12, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_rbf_rows(ctx, 0, 3, 1.0, e, e, k));
    GK_CHECK_OK(gk_rbf_matrix(ctx, 0, 4, 3, 1.0, e, x, k));
    GK_CHECK_OK(gk_rbf_matrix(ctx, 4, 0, 3, 1.0, x, e, k));
    GK_CHECK_OK(gk_rbf_matvec(ctx, 0, 4, 3, 1.0, e, x, x, k));
    GK_EXPECT_SENTINEL(k);
    /* n = 0 in matvec: empty sums */
    gk_buffer *out = gk_test_buffer_const(ctx, GK_FLOAT32, 4, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_rbf_matvec(ctx, 4, 0, 3, 1.0, x, e, e, out));
    float h[4];
    GK_CHECK_OK(gk_buffer_read(out, 0, 4, h));
    for (int i = 0; i < 4; i++)
        assert_true(h[i] == 0.0f);
    /* d = 0: every distance is 0 */
    GK_CHECK_OK(gk_rbf_matrix(ctx, 3, 4, 0, 1.0, e, e, k));
    float hk[12];
    GK_CHECK_OK(gk_buffer_read(k, 0, 12, hk));
    for (int i = 0; i < 12; i++)
        assert_true(hk[i] == 1.0f);
    gk_buffer_destroy(e);
    gk_buffer_destroy(x);
    gk_buffer_destroy(k);
    gk_buffer_destroy(out);
}

/* Views with offsets and host-wrapped operands. */
static void test_views_and_host(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t m = 13, n = 9, d = 5, es = gk_test_esize(t);
        void *hp = random_rows(t, m + n + 2, d, 0.0);
        gk_buffer *p = gk_test_buffer_from(ctx, t, (m + n + 2) * d, hp);
        gk_buffer *x = gk_test_view(p, d, m * d);
        gk_buffer *y = gk_test_view(p, (m + 2) * d, n * d);
        const char *hx = (char *)hp + d * es, *hy = (char *)hp + (m + 2) * d * es;
        void *hk = gk_test_const_array(t, m * n + 2, GK_TEST_SENTINEL);
        gk_buffer *kw = NULL;
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, m * n, (char *)hk + es, &kw));
        GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, 0.7, x, y, kw));
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++)
                gk_ref_check_rbf(t, gk_test_get(t, hk, 1 + i * n + j),
                                 ref_kernel(t, 0.7, hx, i, hy, j, d), abs_tol(t), 0, "views", i, j);
        assert_true(gk_test_get(t, hk, 0) == GK_TEST_SENTINEL);
        assert_true(gk_test_get(t, hk, m * n + 1) == GK_TEST_SENTINEL);
        /* rows of the first n rows of x against y */
        gk_buffer *xv = gk_test_view(x, 0, n * d);
        gk_buffer *ko = gk_test_view(kw, 3, n);
        GK_CHECK_OK(gk_rbf_rows(ctx, n, d, 0.7, xv, y, ko));
        for (size_t i = 0; i < n; i++)
            gk_ref_check_rbf(t, gk_test_get(t, hk, 4 + i), ref_kernel(t, 0.7, hx, i, hy, i, d),
                             abs_tol(t), 0, "rows on views", i, i);
        gk_buffer *buffers[] = {p, x, y, kw, xv, ko};
        for (size_t i = 0; i < 6; i++)
            gk_buffer_destroy(buffers[i]);
        free(hp);
        free(hk);
    }
}

/* CPU rbf_matrix gives the same bits on one thread as on a team, at sizes whose tasks a team
 * makes smaller so that every thread has one (the tile form's row tiles, cpu_rbf_matrix.c; the
 * fused form's panels per task from 316^2 on 16 threads, cpu_rbf_fused.c) and sizes it leaves
 * alone. (Where only one core is free the teams are one thread too, and the comparison holds
 * trivially.) */
static void test_matrix_same_on_any_team(void **state)
{
    (void)state;
    static const size_t ms[] = {3, 9, 17, 40, 64, 65, 100, 130, 178, 250, 316, 450};
    static const size_t ns[] = {7, 40, 178, 316};
    static const size_t ds[] = {3, 20};
    gk_context *one = NULL, *team = NULL;
    gk_context_options o;
    gk_context_options_init(&o);
    o.backend = GK_BACKEND_CPU;
    o.cpu_threads = 1;
    GK_CHECK_OK(gk_context_create_ex(&o, &one));
    o.cpu_threads = 16;
    GK_CHECK_OK(gk_context_create_ex(&o, &team));
    for (size_t di = 0; di < 2; di++)
        for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++)
            for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
                for (size_t c = 0; c < sizeof ds / sizeof ds[0]; c++) {
                    gk_dtype t = dtypes[di];
                    size_t m = ms[a], n = ns[b], d = ds[c], es = gk_test_esize(t);
                    void *hx = random_rows(t, m, d, 0.0), *hy = random_rows(t, n, d, 0.0);
                    void *k1 = gk_test_alloc(t, m * n), *k2 = gk_test_alloc(t, m * n);
                    gk_buffer *bx[2], *by[2], *bk[2];
                    gk_context *ctx[2] = {one, team};
                    void *hk[2] = {k1, k2};
                    for (int i = 0; i < 2; i++) {
                        GK_CHECK_OK(gk_buffer_wrap_host(ctx[i], t, m * d, hx, &bx[i]));
                        GK_CHECK_OK(gk_buffer_wrap_host(ctx[i], t, n * d, hy, &by[i]));
                        GK_CHECK_OK(gk_buffer_wrap_host(ctx[i], t, m * n, hk[i], &bk[i]));
                        GK_CHECK_OK(gk_rbf_matrix(ctx[i], m, n, d, 0.3, bx[i], by[i], bk[i]));
                        gk_buffer_destroy(bx[i]);
                        gk_buffer_destroy(by[i]);
                        gk_buffer_destroy(bk[i]);
                    }
                    if (memcmp(k1, k2, m * n * es) != 0)
                        fail_msg("rbf_matrix %s %zu x %zu x %zu: one thread and a team differ",
                                 gk_test_dtype_name(t), m, n, d);
                    free(hx);
                    free(hy);
                    free(k1);
                    free(k2);
                }
    gk_context_destroy(one);
    gk_context_destroy(team);
}

/* --------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------ */

static void test_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_context *other = NULL;
    GK_CHECK_OK(gk_context_create(gk_test_backend_of(state), &other));
    const size_t m = 4, n = 5, d = 3;
    gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, m * d, 0.5);
    gk_buffer *y = gk_test_buffer_const(ctx, GK_FLOAT32, n * d, 0.25);
    gk_buffer *w = gk_test_buffer_const(ctx, GK_FLOAT32, n, 1.0);
    gk_buffer *k = gk_test_buffer_const(ctx, GK_FLOAT32, m * n, GK_TEST_SENTINEL);
    gk_buffer *k64 = gk_test_buffer_const(ctx, GK_FLOAT64, m * n, GK_TEST_SENTINEL);
    gk_buffer *x64 = gk_test_buffer_const(ctx, GK_FLOAT64, m * d, 0.5);
    gk_buffer *xo = gk_test_buffer_const(other, GK_FLOAT32, m * d, 0.5);
    gk_buffer *ko = gk_test_buffer_const(other, GK_FLOAT32, m * n, GK_TEST_SENTINEL);
    gk_buffer *x_small = gk_test_buffer_const(ctx, GK_FLOAT32, m * d - 1, 0.5);
    gk_buffer *y_small = gk_test_buffer_const(ctx, GK_FLOAT32, n * d - 1, 0.5);
    gk_buffer *w_small = gk_test_buffer_const(ctx, GK_FLOAT32, n - 1, 1.0);
    gk_buffer *k_small = gk_test_buffer_const(ctx, GK_FLOAT32, m * n - 1, GK_TEST_SENTINEL);
    gk_buffer *big = gk_test_buffer_const(ctx, GK_FLOAT32, 100, GK_TEST_SENTINEL);
    gk_buffer *bx = gk_test_view(big, 0, m * d);
    gk_buffer *bk = gk_test_view(big, m * d - 2, m * n); /* overlaps bx */
    gk_buffer *bw = gk_test_view(big, 60, n);
    gk_buffer *bo = gk_test_view(big, 58, m); /* overlaps bw */
    const char *fr = "gk_rbf_rows", *fm = "gk_rbf_matrix", *fv = "gk_rbf_matvec";
    const size_t half = SIZE_MAX / 2;

    /* rbf_rows: a, b hold m x d (n = m rows here), k holds m */
    GK_CHECK_OK(gk_rbf_rows(ctx, m, d, 1.0, x, x, w_small)); /* w_small has m = 4 elements */
    GK_EXPECT(gk_rbf_rows(NULL, m, d, 1.0, x, x, k), GK_E_INVALID_ARGUMENT, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, NULL, x, k), GK_E_INVALID_ARGUMENT, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, x, NULL, k), GK_E_INVALID_ARGUMENT, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, x, x, NULL), GK_E_INVALID_ARGUMENT, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, x_small, x, k), GK_E_SHAPE, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, x, x_small, k), GK_E_SHAPE, fr);
    GK_EXPECT(gk_rbf_rows(ctx, n, d, 1.0, y, y, w_small), GK_E_SHAPE, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, x, x, x), GK_E_INVALID_ARGUMENT, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, x, bx, bk), GK_E_INVALID_ARGUMENT, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, x64, x, k), GK_E_DTYPE, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, x, x, k64), GK_E_DTYPE, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, xo, x, k), GK_E_CONTEXT_MISMATCH, fr);
    GK_EXPECT(gk_rbf_rows(ctx, m, d, 1.0, x, x, ko), GK_E_CONTEXT_MISMATCH, fr);
    GK_EXPECT(gk_rbf_rows(ctx, half, 3, 1.0, x, x, k), GK_E_OVERFLOW, fr);

    /* rbf_matrix */
    GK_EXPECT(gk_rbf_matrix(NULL, m, n, d, 1.0, x, y, k), GK_E_INVALID_ARGUMENT, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, NULL, y, k), GK_E_INVALID_ARGUMENT, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, x, NULL, k), GK_E_INVALID_ARGUMENT, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, x, y, NULL), GK_E_INVALID_ARGUMENT, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, x_small, y, k), GK_E_SHAPE, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, x, y_small, k), GK_E_SHAPE, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, x, y, k_small), GK_E_SHAPE, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, 2, 2, d, 1.0, x, y, x), GK_E_INVALID_ARGUMENT, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, 2, 2, d, 1.0, x, y, y), GK_E_INVALID_ARGUMENT, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, bx, y, bk), GK_E_INVALID_ARGUMENT, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, x64, y, k), GK_E_DTYPE, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, x, y, k64), GK_E_DTYPE, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, xo, y, k), GK_E_CONTEXT_MISMATCH, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, m, n, d, 1.0, x, y, ko), GK_E_CONTEXT_MISMATCH, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, half, half, 3, 1.0, x, y, k), GK_E_OVERFLOW, fm);
    GK_EXPECT(gk_rbf_matrix(ctx, half, half, 0, 1.0, x, y, k), GK_E_OVERFLOW, fm);

    /* rbf_matvec */
    gk_buffer *out = k_small; /* holds more than m */
    GK_EXPECT(gk_rbf_matvec(NULL, m, n, d, 1.0, x, y, w, out), GK_E_INVALID_ARGUMENT, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, NULL, y, w, out), GK_E_INVALID_ARGUMENT, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x, NULL, w, out), GK_E_INVALID_ARGUMENT, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x, y, NULL, out), GK_E_INVALID_ARGUMENT, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x, y, w, NULL), GK_E_INVALID_ARGUMENT, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x_small, y, w, out), GK_E_SHAPE, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x, y_small, w, out), GK_E_SHAPE, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x, y, w_small, out), GK_E_SHAPE, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, n, n, d, 1.0, y, y, w, w_small), GK_E_SHAPE, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x, y, w, x), GK_E_INVALID_ARGUMENT, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, n, n, 1, 1.0, w, y, w, w), GK_E_INVALID_ARGUMENT, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x, y, bw, bo), GK_E_INVALID_ARGUMENT, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x64, y, w, out), GK_E_DTYPE, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x, y, w, k64), GK_E_DTYPE, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, xo, y, w, out), GK_E_CONTEXT_MISMATCH, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, m, n, d, 1.0, x, y, w, ko), GK_E_CONTEXT_MISMATCH, fv);
    GK_EXPECT(gk_rbf_matvec(ctx, half, half, 3, 1.0, x, y, w, out), GK_E_OVERFLOW, fv);

    GK_EXPECT_SENTINEL(k);
    GK_EXPECT_SENTINEL(k64);
    GK_EXPECT_SENTINEL(ko);
    GK_EXPECT_SENTINEL(k_small);
    GK_EXPECT_SENTINEL(big);
    float hx[12];
    GK_CHECK_OK(gk_buffer_read(x, 0, 12, hx));
    for (int i = 0; i < 12; i++)
        assert_true(hx[i] == 0.5f);

    gk_buffer *all[] = {x,       y,       w,       k,   k64, x64, xo, ko, x_small,
                        y_small, w_small, k_small, big, bx,  bk,  bw, bo};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_buffer_destroy(all[i]);
    gk_context_destroy(other);
}

/* --------------------------------------------------------------------------------------------
 * Each CUDA form, forced (GK_RBF_FORM) on a shape it runs, on data as users have it: standardized
 * rows (N(0, 1)), 30 clusters (centres N(0, 9), spread 0.3), the clusters offset by 1e3; x row 0
 * copied into y (exactly 1) and a NaN in x row 1; gamma 1/d and 0.5. Every value against the
 * reference, and the form that ran is the one asked for (GK_LOG's line).
 * ------------------------------------------------------------------------------------------ */

/* n rows of d features: kind 0 N(0, 1), 1 clusters, 2 clusters offset by 1e3. */
static void *user_rows(gk_dtype t, int kind, size_t n, size_t d, const double *centres)
{
    void *r = gk_test_const_array(t, n * d, 0.0);
    for (size_t i = 0; i < n; i++) {
        const double *c = centres + (size_t)(gk_test_uniform(0, 30) * 0.999999) * d;
        for (size_t f = 0; f < d; f++) {
            /* Box-Muller from two uniforms */
            double u1 = gk_test_uniform(1e-12, 1.0), u2 = gk_test_uniform(0.0, 1.0);
            double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
            gk_test_set(t, r, i * d + f, kind == 0 ? z : (kind == 2 ? 1e3 : 0.0) + c[f] + 0.3 * z);
        }
    }
    return r;
}

static void cuda_form_case(const char *op, const char *form, gk_dtype t, size_t m, size_t n,
                           size_t d)
{
    double *centres = gk_test_random_array(GK_FLOAT64, 30 * d, -1.0, 1.0);
    for (size_t i = 0; i < 30 * d; i++)
        centres[i] *= 3.0 * 1.7320508; /* variance 9 */
    const int matrix = strcmp(op, "rbf_matrix") == 0;
    gk_context *ctx = gk_test_logging_context(GK_BACKEND_CUDA, form);
    assert_non_null(ctx);
    for (int kind = 0; kind < 3; kind++)
        for (int gi = 0; gi < 2; gi++) {
            const double gamma = gi ? 0.5 : 1.0 / (double)d;
            void *hx = user_rows(t, kind, m, d, centres), *hy = user_rows(t, kind, n, d, centres);
            for (size_t f = 0; f < d; f++)
                gk_test_set(t, hy, f, gk_test_get(t, hx, f));
            gk_test_set(t, hx, d, NAN);
            void *hw = gk_test_random_array(t, n, -1.0, 1.0);
            gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
            gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
            gk_buffer *w = gk_test_buffer_from(ctx, t, n, hw);
            gk_buffer *out = gk_test_buffer_const(ctx, t, matrix ? m * n : m, GK_TEST_SENTINEL);
            gk_test_capture_begin();
            gk_status st = matrix ? gk_rbf_matrix(ctx, m, n, d, gamma, x, y, out)
                                  : gk_rbf_matvec(ctx, m, n, d, gamma, x, y, w, out);
            const char *ran = gk_test_capture_form(op);
            GK_CHECK_OK(st);
            if (strcmp(ran, form) != 0)
                GK_FAIL("%s %s %zux%zux%zu: form %s ran, expected %s", op, gk_test_dtype_name(t), m,
                        n, d, ran, form);
            void *got = gk_test_read_all(out);
            for (size_t i = 0; i < m; i++) {
                long double sum = 0, bound = 0;
                for (size_t j = 0; j < n; j++) {
                    long double ref = ref_kernel(t, gamma, hx, i, hy, j, d);
                    if (matrix) {
                        double g = gk_test_get(t, got, i * n + j);
                        if (isnan(ref) || isnan(g)) {
                            if (!(isnan(ref) && isnan(g)))
                                GK_FAIL("%s %s kind %d: (%zu,%zu) is %g, reference %Lg", form,
                                        gk_test_dtype_name(t), kind, i, j, g, ref);
                            continue;
                        }
                        gk_ref_check_rbf(t, g, ref, abs_tol(t),
                                         gk_ref_rows_equal(t, hx, i, hy, j, d), form, i, j);
                    }
                    sum += ref * (long double)gk_test_get(t, hw, j);
                    bound += fabsl((long double)gk_test_get(t, hw, j));
                }
                if (!matrix) {
                    double g = gk_test_get(t, got, i);
                    if (isnan(sum) != isnan(g) ||
                        (!isnan(sum) && !(fabsl((long double)g - sum) <= abs_tol(t) * bound)))
                        GK_FAIL("%s %s kind %d gamma %g: out[%zu] is %.9g, reference %.9Lg", form,
                                gk_test_dtype_name(t), kind, gamma, i, g, sum);
                }
            }
            free(got);
            free(hx);
            free(hy);
            free(hw);
            gk_buffer *bufs[] = {x, y, w, out};
            for (int b = 0; b < 4; b++)
                gk_buffer_destroy(bufs[b]);
        }
    gk_context_destroy(ctx);
    free(centres);
}

static void test_cuda_forms(void **state)
{
    (void)gk_test_context(state); /* skips without a GPU */
    cuda_form_case("rbf_matrix", "cuda_matrix_tiled", GK_FLOAT64, 130, 70, 20);
    cuda_form_case("rbf_matrix", "cuda_matrix_tiled", GK_FLOAT32, 130, 70, 3);
    cuda_form_case("rbf_matrix", "cuda_matrix_dot", GK_FLOAT32, 300, 260, 20);
    cuda_form_case("rbf_matrix", "cuda_matrix_dot", GK_FLOAT32, 300, 260, 100);
    cuda_form_case("rbf_matrix", "cuda_matrix_tc", GK_FLOAT32, 700, 700, 64);
    cuda_form_case("rbf_matrix", "cuda_matrix_tc", GK_FLOAT32, 720, 720, 256);
    cuda_form_case("rbf_matvec", "cuda_matvec_small", GK_FLOAT64, 300, 1100, 3);
    cuda_form_case("rbf_matvec", "cuda_matvec_fact", GK_FLOAT32, 300, 1100, 3);
    cuda_form_case("rbf_matvec", "cuda_matvec_taylor", GK_FLOAT32, 300, 1100, 2);
    cuda_form_case("rbf_matvec", "cuda_matvec_tiled", GK_FLOAT64, 300, 700, 20);
    cuda_form_case("rbf_matvec", "cuda_matvec_dot", GK_FLOAT32, 300, 700, 64);
    cuda_form_case("rbf_matvec", "cuda_matvec_dot", GK_FLOAT32, 300, 700, 100);
}

/* A gamma so small that ||x - y||^2 overflows the dtype while gamma ||x - y||^2 does not
 * (float32: values of 1e18 to 2e19 at gamma = 1e-38; float64: 1e153 to 2e154 at 1e-308):
 * rbf_matrix and rbf_matvec keep the contract, as rbf_rows does. */
/* exp(-gamma ||x_i - y_j||^2) with the differences scaled by sqrt(gamma) before squaring, so
 * that the reference does not overflow where long double is double (valgrind). */
static long double tiny_ref(gk_dtype t, double gamma, const void *x, size_t i, const void *y,
                            size_t j, size_t d)
{
    const long double s = sqrtl((long double)gk_test_round(t, gamma));
    long double dist = 0;
    for (size_t f = 0; f < d; f++) {
        long double diff = ((long double)gk_test_get(t, x, i * d + f) -
                            (long double)gk_test_get(t, y, j * d + f)) *
                           s;
        dist += diff * diff;
    }
    return gk_test_exp_ref(-dist);
}

static void test_tiny_gamma(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const size_t dims[] = {1, 3, 64, 128};
    for (int ti = 0; ti < 2; ti++) {
        const gk_dtype t = ti ? GK_FLOAT64 : GK_FLOAT32;
        const double lo = ti ? 1e153 : 1e18, hi = ti ? 2e154 : 2e19, gamma = ti ? 1e-308 : 1e-38;
        for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
            const size_t d = dims[di], m = 5, n = 4;
            void *hx = gk_test_random_array(t, m * d, lo, hi);
            void *hy = gk_test_random_array(t, n * d, -hi / d, hi / d);
            gk_test_set(t, hy, 0, gk_test_get(t, hx, 0)); /* identical rows: x_0 = y_0 at d = 1 */
            gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
            gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
            gk_buffer *k = gk_test_buffer_const(ctx, t, m * n, GK_TEST_SENTINEL);
            GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, gamma / (double)d, x, y, k));
            void *got = gk_test_read_all(k);
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++)
                    gk_ref_check_rbf(t, gk_test_get(t, got, i * n + j),
                                     tiny_ref(t, gamma / (double)d, hx, i, hy, j, d), abs_tol(t),
                                     gk_ref_rows_equal(t, hx, i, hy, j, d),
                                     "rbf_matrix (tiny gamma)", i, j);
            free(got);
            void *hw = gk_test_const_array(t, n, 1.0);
            gk_buffer *w = gk_test_buffer_from(ctx, t, n, hw);
            gk_buffer *out = gk_test_buffer_const(ctx, t, m, GK_TEST_SENTINEL);
            GK_CHECK_OK(gk_rbf_matvec(ctx, m, n, d, gamma / (double)d, x, y, w, out));
            got = gk_test_read_all(out);
            for (size_t i = 0; i < m; i++) {
                long double ref = 0;
                for (size_t j = 0; j < n; j++)
                    ref += tiny_ref(t, gamma / (double)d, hx, i, hy, j, d);
                gk_ref_check_rbf(t, gk_test_get(t, got, i), ref, abs_tol(t) * (long double)n, 0,
                                 "rbf_matvec (tiny gamma)", i, 0);
            }
            free(got);
            free(hx);
            free(hy);
            free(hw);
            gk_buffer *bufs[] = {x, y, k, w, out};
            for (int b = 0; b < 5; b++)
                gk_buffer_destroy(bufs[b]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_rows),
        GK_TEST_BOTH(test_rows_seed_workload),
        GK_TEST_BOTH(test_matrix),
        GK_TEST_BOTH(test_matvec),
        GK_TEST_BOTH(test_matvec_factorized),
        GK_TEST_BOTH(test_matvec_factorized_bound),
        GK_TEST_BOTH(test_matvec_factorized_special),
        GK_TEST_BOTH(test_matvec_factorized_identical),
        GK_TEST_BOTH(test_matvec_factorized_duplicates),
        {"test_matvec_taylor/cuda", test_matvec_taylor, gk_test_setup, gk_test_teardown,
         &gk_test_cuda},
        {"test_matvec_taylor_bound/cuda", test_matvec_taylor_bound, gk_test_setup, gk_test_teardown,
         &gk_test_cuda},
        {"test_matvec_taylor_special/cuda", test_matvec_taylor_special, gk_test_setup,
         gk_test_teardown, &gk_test_cuda},
        {"test_matvec_taylor_single/cuda", test_matvec_taylor_single, gk_test_setup,
         gk_test_teardown, &gk_test_cuda},
        GK_TEST_BOTH(test_matvec_inner_product_tiles),
        GK_TEST_BOTH(test_matvec_inner_product_tiles_special),
        GK_TEST_BOTH(test_matvec_inner_product_tiles_identical),
        GK_TEST_BOTH(test_matrix_inner_product),
        GK_TEST_BOTH(test_matrix_inner_product_special),
        {"test_matrix_tensor_core/cuda", test_matrix_tensor_core, gk_test_setup, gk_test_teardown,
         &gk_test_cuda},
        {"test_matrix_tensor_core_small/cuda", test_matrix_tensor_core_small, gk_test_setup,
         gk_test_teardown, &gk_test_cuda},
        GK_TEST_BOTH(test_wide_rows),
        GK_TEST_BOTH(test_gamma_values),
        GK_TEST_BOTH(test_tiny_gamma),
        {"test_cuda_forms/cuda", test_cuda_forms, gk_test_setup, gk_test_teardown, &gk_test_cuda},
        GK_TEST_BOTH(test_zero_sizes),
        GK_TEST_BOTH(test_views_and_host),
        cmocka_unit_test(test_matrix_same_on_any_team),
        GK_TEST_BOTH(test_errors),
    };
    return cmocka_run_group_tests_name("rbf", tests, gk_test_group_setup, NULL);
}
