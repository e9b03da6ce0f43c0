/* SPDX-License-Identifier: MIT */
/* test_rbf_forms.c - rbf_matrix where the CPU's fused inner-product and ISA kernels take it. */
#include "gk_test.h"
#include "kernel_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CPU backend computes float32 rbf_matrix with d >= 8, m n >= 2^16 and (m + n) d <= m n in
 * the inner-product form, a tile of dot products finished in registers, where the CPU has an ISA
 * kernel for it (cpu/rbf/, AVX-512); ctest runs this file also with GK_RBF_ISA=generic, the
 * portable kernels. On the CPU each call runs on a context that logs (GK_LOG=1) and the form it
 * ran is asserted (the planner's, cpu/rbf/plan.c). The shapes here are such calls: output
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
        for (size_t j = 0; j < n; j++)
            gk_ref_check_rbf(GK_FLOAT32, k0[i * n + j], ref_kernel(gamma, x, i, y, j, d), 1e-5L,
                             memcmp(x + i * d, y + j * d, d * sizeof *x) == 0, what, i, j);
}

enum { DATA_NORMAL, DATA_CLUSTERS, DATA_OFFSET, DATA_SPECIAL, DATA_KINDS };
static const char *const data_names[] = {"N(0,1)", "clusters", "clusters + 1e3", "NaN/inf"};

/* The planner's own choice (cpu/rbf/plan.c's table): the inner-product forms from 65536 entries,
 * fused from d = 8 (float32 rbf_matrix with an ISA kernel), gemm from d = 64 (not for float32
 * rbf_matvec with an ISA kernel); else differences.
 * NaN and infinities make the inner-product forms decline (differences then). */
static const char *planner_form(gk_dtype t, int kind, const char *op, size_t m, size_t n, size_t d)
{
    if (strcmp(op, "rbf_rows") == 0 || m * n < 65536 || kind == DATA_SPECIAL)
        return "diff";
    if (t == GK_FLOAT32 && gk_test_cpu_has_fused())
        return strcmp(op, "rbf_matrix") == 0 && d >= 8 ? "fused" : "diff";
    return d >= 64 ? "gemm" : "diff";
}

/* The CPU context of a test body that asserts forms: one that logs (GK_LOG=1); on CUDA the
 * state's (NULL form checks). */
static gk_context *forms_context(void **state, int *cpu)
{
    gk_context *ctx = gk_test_context(state);
    *cpu = !gk_test_is_cuda(state);
    return *cpu ? gk_test_logging_context(GK_BACKEND_CPU, NULL) : ctx;
}

/* The planner's form ran, or (gemm, whose bound is looser than fused's) it declined the data for
 * a reason the log gives and differences ran. */
static void expect_form(const char *op, const char *form, const char *what)
{
    const char *ran = gk_test_capture_form(op);
    char declined[64];
    snprintf(declined, sizeof declined, "%s declined: ", form);
    if (strcmp(ran, form) != 0 && !(strcmp(form, "gemm") == 0 && strcmp(ran, "diff") == 0 &&
                                    strstr(gk_test_captured_line(), declined) != NULL))
        GK_FAIL("%s: %s ran form %s, expected %s", what, op, ran, form);
}

/* rbf_matrix of x (m x d) and y (n x d) into a view of a larger buffer at offset `off`, so the
 * output's rows start anywhere in a cache line; the elements around the view stay untouched. */
static void matrix_at(gk_context *ctx, const char *what, size_t m, size_t n, size_t d, double gamma,
                      const float *hx, const float *hy, size_t off, const char *form)
{
    gk_buffer *x = gk_test_buffer_from(ctx, GK_FLOAT32, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, GK_FLOAT32, n * d, hy);
    gk_buffer *kp = gk_test_buffer_const(ctx, GK_FLOAT32, m * n + 32, GK_TEST_SENTINEL);
    gk_buffer *k = gk_test_view(kp, off, m * n);
    if (form != NULL)
        gk_test_capture_begin();
    GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, gamma, x, y, k));
    if (form != NULL)
        expect_form("rbf_matrix", form, what);
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

/* rbf_matrix of m x n x d into outputs at offsets 0, step, ... 16 floats, on data in [0, 1) and
 * offset by 1e3; form: the form that must run (NULL: not checked). */
static void offsets_sweep(gk_context *ctx, const char *what, size_t m, size_t n, size_t d,
                          size_t step, const char *form)
{
    for (int o = 0; o < 2; o++) {
        float *hx, *hy;
        make_rows(m, n, d, o ? 1e3 : 0.0, o ? 1e3 + 1.0 : 1.0, &hx, &hy);
        double gamma = gk_test_uniform(0.5, 6.0) / (double)d;
        for (size_t off = 0; off <= 16; off += step)
            matrix_at(ctx, what, m, n, d, gamma, hx, hy, off, form);
        free(hx);
        free(hy);
    }
}

/* Output offsets 0 .. 16 floats, n a multiple of 16 (streamed rows) and not, m not a multiple of
 * the kernel's 12 rows, partial column tiles; data in [0, 1) and offset by 1e3. */
static void test_offsets(void **state)
{
    int cpu;
    gk_context *ctx = forms_context(state, &cpu);
    const size_t shapes[][3] = {{300, 512, 20}, {301, 520, 8}, {257, 272, 33}, {130, 4100, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t m = shapes[s][0], n = shapes[s][1], d = shapes[s][2];
        offsets_sweep(ctx, "rbf_matrix at an offset", m, n, d, s == 0 ? 1 : 5,
                      cpu ? planner_form(GK_FLOAT32, DATA_NORMAL, "rbf_matrix", m, n, d) : NULL);
    }
    if (cpu)
        gk_context_destroy(ctx);
}

/* The difference form (forced) writes rbf_matrix's rows a cache line at a time too: its column
 * blocks start after a lead of padding lanes that puts them on the output's lines. Outputs at
 * offsets 0 .. 16 floats, n a multiple of 16 (streamed) and not, several column blocks (d = 64:
 * 512 columns a block), n below one vector; data in [0, 1) and offset by 1e3. */
static void test_cpu_diff_offsets(void **state)
{
    (void)state;
    gk_context *ctx = gk_test_logging_context(GK_BACKEND_CPU, "diff");
    assert_non_null(ctx);
    const size_t shapes[][3] = {
        {29, 1056, 64}, {25, 1000, 20}, {13, 48, 20}, {7, 16, 8}, {5, 9, 3}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t m = shapes[s][0], n = shapes[s][1], d = shapes[s][2];
        offsets_sweep(ctx, "rbf_matrix, diff form, at an offset", m, n, d, n > 1000 ? 3 : 1,
                      "diff");
    }
    gk_context_destroy(ctx);
}

/* x and y the same buffer (scikit-learn's rbf_kernel(X)): the CPU computes the tiles on and
 * above the diagonal and mirrors the others (from d = 128); the diagonal is exactly 1. Outputs at
 * offsets (column shifts), n a multiple of 16 and not, data offset by 1e3. */
static void test_same_buffer(void **state)
{
    int cpu;
    gk_context *ctx = forms_context(state, &cpu);
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
            if (cpu)
                gk_test_capture_begin();
            GK_CHECK_OK(gk_rbf_matrix(ctx, n, n, d, gamma, x, x, k));
            if (cpu)
                expect_form("rbf_matrix",
                            planner_form(GK_FLOAT32, DATA_OFFSET, "rbf_matrix", n, n, d),
                            "rbf_matrix(x, x)");
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
    if (cpu)
        gk_context_destroy(ctx);
}

/* Two clusters 100 apart, each of spread 1: pairs within a cluster are close while
 * ||x - c||^2 + ||y - c||^2 is large, so their entries fail the bound and come from differences;
 * pairs across clusters give 0. With gamma so small that all entries are near 1, whole tiles
 * fail it too. */
static void test_bound(void **state)
{
    int cpu;
    gk_context *ctx = forms_context(state, &cpu);
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
        /* Half the pairs lie within a cluster: at gamma 0.05 and 0.5 their bound fails and so
         * does the fused form's sample, which sends the call to differences; at 1e-5 the bound
         * holds for most entries (all near 1) and the fused form runs. */
        const char *form = planner_form(GK_FLOAT32, DATA_CLUSTERS, "rbf_matrix", m, n, d);
        int decline = strcmp(form, "fused") == 0 && gammas[g] > 1e-3;
        matrix_at(ctx, "rbf_matrix of two clusters", m, n, d, gammas[g], hx, hy, 3,
                  !cpu      ? NULL
                  : decline ? "diff"
                            : form);
        if (cpu && decline &&
            strstr(gk_test_captured_line(), "fused declined: sampled entries fail") == NULL)
            GK_FAIL("two clusters: %s", gk_test_captured_line());
        free(hx);
        free(hy);
    }
    /* One distant row of y among close ones: the tile that holds it fails the bound's test
     * for whole rows, and its other entries are tested one by one (identical rows among them). */
    float *hx, *hy;
    make_rows(m, n, d, 0.0, 1.0, &hx, &hy);
    for (size_t f = 0; f < d; f++)
        hy[1 * d + f] += 30.0f;
    matrix_at(ctx, "rbf_matrix with a distant row", m, n, d, 0.5, hx, hy, 3,
              cpu ? planner_form(GK_FLOAT32, DATA_NORMAL, "rbf_matrix", m, n, d) : NULL);
    free(hx);
    free(hy);
    if (cpu)
        gk_context_destroy(ctx);
}

/* NaN, infinities and values whose squares overflow float: the rule of every backend (an
 * infinite difference gives 0, inf - inf and NaN give NaN), the other entries as usual. */
static void test_special(void **state)
{
    int cpu;
    gk_context *ctx = forms_context(state, &cpu);
    const size_t m = 300, n = 257, d = 20;
    const float specials[] = {NAN, INFINITY, -INFINITY, 3e19f, -1e30f};
    for (size_t s = 0; s < sizeof specials / sizeof specials[0]; s++) {
        float *hx, *hy;
        make_rows(m, n, d, 0.0, 1.0, &hx, &hy);
        hx[7 * d + 2] = specials[s];
        hy[11 * d + 4] = specials[s];
        matrix_at(ctx, "rbf_matrix with special values", m, n, d, 0.3, hx, hy, 0,
                  cpu ? planner_form(GK_FLOAT32, DATA_SPECIAL, "rbf_matrix", m, n, d) : NULL);
        free(hx);
        free(hy);
    }
    if (cpu)
        gk_context_destroy(ctx);
}

/* ------------------------------------------------------------------------------------------
 * The CPU's forms one by one (cpu/rbf/plan.c): each forced with GK_RBF_FORM on a context that
 * logs (GK_LOG=1), the logged form asserted, on standardized N(0, 1) rows, 30 Gaussian clusters
 * (centres N(0, 9 I), spread 0.3), the same offset by 1e3, rows of y that copy rows of x, and
 * NaN/inf, at gamma = 1 / d and 0.5; rbf_matrix, rbf_matvec and rbf_rows, float32 and float64.
 * ---------------------------------------------------------------------------------------- */

static double normal01(void)
{
    double u = gk_test_uniform(0x1p-53, 1.0), v = gk_test_uniform(0.0, 1.0);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* m + n rows of d features of one kind, in dtype t: x then y; every fifth row of y a copy of a
 * row of x. */
static void *make_data(gk_dtype t, int kind, size_t m, size_t n, size_t d)
{
    void *h = gk_test_alloc(t, (m + n) * d);
    double centres[30][130];
    for (size_t c = 0; c < 30; c++)
        for (size_t f = 0; f < d; f++)
            centres[c][f] = 3.0 * normal01();
    for (size_t i = 0; i < m + n; i++) {
        size_t c = gk_test_rand_size(0, 29);
        for (size_t f = 0; f < d; f++) {
            double v = kind == DATA_NORMAL || kind == DATA_SPECIAL
                           ? normal01()
                           : centres[c][f] + 0.3 * normal01();
            gk_test_set(t, h, i * d + f, kind == DATA_OFFSET ? v + 1e3 : v);
        }
    }
    size_t es = gk_test_esize(t);
    for (size_t j = 0; j < n; j += 5)
        memcpy((char *)h + (m + j) * d * es, (char *)h + (j * 7 % m) * d * es, d * es);
    if (kind == DATA_SPECIAL) {
        gk_test_set(t, h, 3 * d + 1, NAN);
        gk_test_set(t, h, (m + 6) * d, INFINITY);
        gk_test_set(t, h, 8 * d + d - 1, -INFINITY);
    }
    return h;
}

static long double ref_entry(gk_dtype t, double gamma, const void *h, size_t a, size_t b, size_t d)
{
    long double dist = 0;
    for (size_t f = 0; f < d; f++) {
        long double diff = (long double)gk_test_get(t, h, a * d + f) - gk_test_get(t, h, b * d + f);
        dist += diff * diff;
    }
    return gk_test_exp_ref(-(long double)gk_test_round(t, gamma) * dist);
}

/* The form that runs when `form` is forced: itself where it can run the call (fused: float32
 * rbf_matrix with an ISA kernel; rbf_rows: diff only), else the planner's choice; the
 * inner-product forms decline NaN and infinities. */
static const char *expected_form(const char *form, gk_dtype t, int kind, const char *op, size_t m,
                                 size_t n, size_t d)
{
    int ip = strcmp(form, "fused") == 0 || strcmp(form, "gemm") == 0;
    if ((strcmp(op, "rbf_rows") == 0 && strcmp(form, "diff") != 0) ||
        (strcmp(form, "fused") == 0 &&
         (strcmp(op, "rbf_matrix") != 0 || t != GK_FLOAT32 || !gk_test_cpu_has_fused())))
        return planner_form(t, kind, op, m, n, d);
    if (ip && kind == DATA_SPECIAL)
        return "diff";
    return form;
}

static void cpu_form_case(const char *form, gk_dtype t, int kind, size_t m, size_t n, size_t d,
                          double gamma, int same)
{
    gk_context *ctx = gk_test_logging_context(GK_BACKEND_CPU, form);
    assert_non_null(ctx);
    void *h = make_data(t, kind, m, n, d);
    size_t es = gk_test_esize(t), yo = same ? 0 : m; /* y's first row in h */
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, h);
    gk_buffer *y = same ? x : gk_test_buffer_from(ctx, t, n * d, (char *)h + m * d * es);
    char what[160];
    snprintf(what, sizeof what, "GK_RBF_FORM=%s, %s, %zux%zux%zu, gamma %g%s", form,
             data_names[kind], m, n, d, gamma, same ? ", x = y" : "");

    gk_buffer *k = gk_test_buffer_const(ctx, t, m * n, GK_TEST_SENTINEL);
    gk_test_capture_begin();
    GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, gamma, x, y, k));
    const char *ran = gk_test_capture_form("rbf_matrix");
    /* Clustered data below d = 128: the fused form may decline it by its sample of entries
     * (test_bound asserts where it must), and differences run. */
    int declined = kind != DATA_NORMAL && d < 128 && strcmp(ran, "diff") == 0 &&
                   strstr(gk_test_captured_line(), "fused declined: sampled entries fail") != NULL;
    if (strcmp(ran, expected_form(form, t, kind, "rbf_matrix", m, n, d)) != 0 && !declined)
        GK_FAIL("rbf_matrix %s: form %s ran, expected %s", what, ran,
                expected_form(form, t, kind, "rbf_matrix", m, n, d));
    void *got = gk_test_read_all(k);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            gk_ref_check_rbf(t, gk_test_get(t, got, i * n + j),
                             ref_entry(t, gamma, h, i, yo + j, d), t == GK_FLOAT32 ? 1e-5L : 1e-12L,
                             gk_ref_rows_equal(t, h, i, h, yo + j, d), what, i, j);
    free(got);
    gk_buffer_destroy(k);

    void *hw;
    gk_buffer *w = gk_test_buffer_random(ctx, t, n, -1.0, 1.0, &hw);
    gk_buffer *out = gk_test_buffer_const(ctx, t, m, GK_TEST_SENTINEL);
    gk_test_capture_begin();
    GK_CHECK_OK(gk_rbf_matvec(ctx, m, n, d, gamma, x, y, w, out));
    ran = gk_test_capture_form("rbf_matvec");
    if (strcmp(ran, expected_form(form, t, kind, "rbf_matvec", m, n, d)) != 0)
        GK_FAIL("rbf_matvec %s: form %s ran, expected %s", what, ran,
                expected_form(form, t, kind, "rbf_matvec", m, n, d));
    got = gk_test_read_all(out);
    long double wsum = 0;
    for (size_t j = 0; j < n; j++)
        wsum += fabsl((long double)gk_test_get(t, hw, j));
    for (size_t i = 0; i < m; i++) {
        long double ref = 0;
        for (size_t j = 0; j < n; j++)
            ref += ref_entry(t, gamma, h, i, yo + j, d) * (long double)gk_test_get(t, hw, j);
        gk_ref_check_rbf(t, gk_test_get(t, got, i), ref, (t == GK_FLOAT32 ? 1e-5L : 1e-12L) * wsum,
                         0, what, i, 0);
    }
    free(got);
    free(hw);
    gk_buffer_destroy(out);
    gk_buffer_destroy(w);

    if (!same) { /* rbf_rows: x's rows against the first m rows of y (some copies of x's) */
        gk_buffer *kr = gk_test_buffer_const(ctx, t, m, GK_TEST_SENTINEL);
        gk_buffer *yv = gk_test_view(y, 0, m * d);
        gk_test_capture_begin();
        GK_CHECK_OK(gk_rbf_rows(ctx, m, d, gamma, x, yv, kr));
        ran = gk_test_capture_form("rbf_rows");
        if (strcmp(ran, "diff") != 0)
            GK_FAIL("rbf_rows %s: form %s ran, expected diff", what, ran);
        got = gk_test_read_all(kr);
        for (size_t i = 0; i < m; i++)
            gk_ref_check_rbf(t, gk_test_get(t, got, i), ref_entry(t, gamma, h, i, m + i, d),
                             t == GK_FLOAT32 ? 1e-5L : 1e-12L,
                             gk_ref_rows_equal(t, h, i, h, m + i, d), what, i, i);
        free(got);
        gk_buffer_destroy(yv);
        gk_buffer_destroy(kr);
    }
    if (y != x)
        gk_buffer_destroy(y);
    gk_buffer_destroy(x);
    free(h);
    gk_context_destroy(ctx);
}

/* The GEMM form (forced) runs rbf_matrix in tiles of 256 x 1024 and rbf_matvec in panels of 256
 * rows of x against blocks of y of at most 2048 rows, each tile a one-thread gemm on the team's
 * threads: shapes with several of each. */
static void test_cpu_gemm_tiles(void **state)
{
    (void)state;
    const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};
    const size_t shapes[][3] = {{300, 2100, 64}, {270, 2100, 130}};
    for (size_t ti = 0; ti < 2; ti++)
        for (size_t s = 0; s < 2; s++)
            cpu_form_case("gemm", dtypes[ti], s == 0 ? DATA_NORMAL : DATA_OFFSET, shapes[s][0],
                          shapes[s][1], shapes[s][2], 1.0 / (double)shapes[s][2], 0);
}

static void test_cpu_forms(void **state)
{
    (void)state;
    const char *const forms[] = {"fused", "gemm", "diff", "wide"};
    const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};
    /* sizes the inner-product forms take when forced ((m + n) d <= m n), rows not a multiple of
     * any kernel's block; d = 130 from the fused form's mirrored tiles (x = y) */
    const size_t shapes[][3] = {{131, 150, 20}, {140, 153, 64}, {300, 300, 130}};
    for (size_t f = 0; f < 4; f++)
        for (size_t ti = 0; ti < 2; ti++)
            for (int kind = 0; kind < DATA_KINDS; kind++)
                for (size_t s = 0; s < 3; s++) {
                    size_t m = shapes[s][0], n = shapes[s][1], d = shapes[s][2];
                    double gamma = (kind + s) % 2 ? 0.5 : 1.0 / (double)d;
                    cpu_form_case(forms[f], dtypes[ti], kind, m, n, d, gamma, m == n);
                }
}

/* GK_RBF_FORM: an unknown name is refused when the context is created, naming the variable, the
 * value and the accepted names; a form that cannot run a call gives the planner's choice, and
 * the log says so. */
static void test_cpu_form_switch(void **state)
{
    (void)state;
    gk_test_env_save();
    setenv("GK_RBF_FORM", "tensor", 1);
    gk_context *ctx = NULL;
    gk_status st = gk_context_create(GK_BACKEND_CPU, &ctx);
    unsetenv("GK_RBF_FORM");
    gk_test_env_restore();
    GK_EXPECT(st, GK_E_INVALID_ARGUMENT, "gk_context_create");
    assert_null(ctx);
    const char *msg = gk_last_error();
    if (strstr(msg, "GK_RBF_FORM=tensor") == NULL || strstr(msg, "fused, gemm, diff, wide") == NULL)
        GK_FAIL("the refusal of GK_RBF_FORM=tensor says \"%s\"", msg);

    ctx = gk_test_logging_context(GK_BACKEND_CPU, "fused");
    assert_non_null(ctx);
    const size_t m = 100, n = 120, d = 30;
    gk_buffer *x = gk_test_buffer_random(ctx, GK_FLOAT64, m * d, 0.0, 1.0, NULL);
    gk_buffer *y = gk_test_buffer_random(ctx, GK_FLOAT64, n * d, 0.0, 1.0, NULL);
    gk_buffer *k = gk_test_buffer_const(ctx, GK_FLOAT64, m * n, 0.0);
    gk_test_capture_begin();
    GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, 0.1, x, y, k));
    const char *ran = gk_test_capture_form("rbf_matrix");
    assert_string_equal(ran, "diff");
    assert_non_null(strstr(gk_test_captured_line(), "not the forced GK_RBF_FORM=fused"));
    gk_buffer_destroy(k);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_context_destroy(ctx);
}

/* float32 rbf_matrix and rbf_matvec where ||x - y||^2 overflows float but gamma ||x - y||^2 does
 * not (x = 1.9e19, y = 0, gamma = 1e-38: exp(-3.61)); every form, rows of 1 to 130 features. */
static void test_cpu_overflow(void **state)
{
    (void)state;
    const char *const forms[] = {"fused", "gemm", "diff", "wide"};
    const size_t dims[] = {1, 2, 7, 20, 64, 130};
    const double values[] = {1e18, 5e18, 1.9e19};
    const double gammas[] = {1e-38, 2e-40};
    const size_t m = 5, n = 4;
    for (size_t f = 0; f < 4; f++) {
        gk_context *ctx = gk_test_logging_context(GK_BACKEND_CPU, forms[f]);
        assert_non_null(ctx);
        for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
            for (size_t vi = 0; vi < 3; vi++)
                for (size_t gi = 0; gi < 2; gi++) {
                    size_t d = dims[di];
                    double v = values[vi], gamma = gammas[gi];
                    float *h = gk_test_alloc(GK_FLOAT32, (m + n) * d);
                    for (size_t i = 0; i < m + n; i++)
                        for (size_t c = 0; c < d; c++) {
                            const double rows[] = {v,     c == 0 ? v : 0.0, -v / 2, v / 3, 0.0, 0.0,
                                                   v / 3, c % 2 ? v : 0.0,  -v};
                            h[i * d + c] = (float)rows[i];
                        }
                    gk_buffer *x = gk_test_buffer_from(ctx, GK_FLOAT32, m * d, h);
                    gk_buffer *y = gk_test_buffer_from(ctx, GK_FLOAT32, n * d, h + m * d);
                    gk_buffer *k = gk_test_buffer_const(ctx, GK_FLOAT32, m * n, GK_TEST_SENTINEL);
                    gk_buffer *w = gk_test_buffer_const(ctx, GK_FLOAT32, n, 1.0);
                    gk_buffer *out = gk_test_buffer_const(ctx, GK_FLOAT32, m, GK_TEST_SENTINEL);
                    char what[128];
                    snprintf(what, sizeof what, "GK_RBF_FORM=%s, values %g, d %zu, gamma %g",
                             forms[f], v, d, gamma);
                    gk_test_capture_begin();
                    GK_CHECK_OK(gk_rbf_matrix(ctx, m, n, d, gamma, x, y, k));
                    GK_CHECK_OK(gk_rbf_matvec(ctx, m, n, d, gamma, x, y, w, out));
                    gk_test_capture_form("rbf_matrix");
                    float *got = gk_test_read_all(k), *sums = gk_test_read_all(out);
                    for (size_t i = 0; i < m; i++) {
                        long double total = 0;
                        for (size_t j = 0; j < n; j++) {
                            long double ref = ref_entry(GK_FLOAT32, gamma, h, i, m + j, d);
                            total += ref;
                            gk_ref_check_rbf(GK_FLOAT32, got[i * n + j], ref, 1e-5L,
                                             gk_ref_rows_equal(GK_FLOAT32, h, i, h, m + j, d), what,
                                             i, j);
                        }
                        gk_ref_check_rbf(GK_FLOAT32, sums[i], total, 1e-5L * (long double)n, 0,
                                         what, i, 0);
                    }
                    free(got);
                    free(sums);
                    free(h);
                    gk_buffer_destroy(out);
                    gk_buffer_destroy(w);
                    gk_buffer_destroy(k);
                    gk_buffer_destroy(x);
                    gk_buffer_destroy(y);
                }
        gk_context_destroy(ctx);
    }
}

/* The number N of the log's "N entries from differences" (the inner-product forms' recompute). */
static size_t entries_redone(const char *line)
{
    const char *at = strstr(line, " entries from differences");
    if (at == NULL)
        GK_FAIL("no count of entries from differences in \"%s\"", line);
    while (at > line && at[-1] >= '0' && at[-1] <= '9')
        at--;
    return (size_t)strtoull(at, NULL, 10);
}

/* Raw, unscaled features as users pass them before StandardScaler: column f of N(0, 1) scaled by
 * 10^(f mod 4 - 1), every eighth column offset by 1e3; every fifth row of y a copy of a row of x.
 * ||x - c||^2 about the centre is some 10^4 d, so the bound's gamma E passes 1e-2 at gamma 1/d
 * and 0.5, while gamma ||x - y||^2 is in the thousands: nearly every entry is far below the
 * budget (true and computed values under 5e-6). The inner-product forms must keep those, not
 * compute them all again from differences (which took 3 to 7 times as long as U[0,1) at 1024^2);
 * the log's count of recomputed entries says which they did. */
static void test_cpu_raw_features(void **state)
{
    (void)state;
    const size_t m = 300, n = 333;
    const size_t dims[] = {20, 64, 130};
    const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};
    gk_context *ctx = gk_test_logging_context(GK_BACKEND_CPU, NULL);
    assert_non_null(ctx);
    for (size_t ti = 0; ti < 2; ti++)
        for (size_t di = 0; di < 3; di++)
            for (int same = 0; same < 2; same++)
                for (int g = 0; g < 2; g++) {
                    gk_dtype t = dtypes[ti];
                    size_t d = dims[di], rows = same ? m : m + n, es = gk_test_esize(t);
                    const char *form = planner_form(t, DATA_NORMAL, "rbf_matrix", m, n, d);
                    if (strcmp(form, "diff") == 0)
                        continue; /* float64 below d = 64, or no ISA kernel at float32 */
                    double gamma = g ? 0.5 : 1.0 / (double)d;
                    void *h = gk_test_alloc(t, rows * d);
                    for (size_t i = 0; i < rows; i++)
                        for (size_t f = 0; f < d; f++)
                            gk_test_set(t, h, i * d + f,
                                        normal01() * pow(10.0, (double)(f % 4) - 1.0) +
                                            (f % 8 == 3 ? 1e3 : 0.0));
                    for (size_t j = 0; !same && j < n; j += 5)
                        memcpy((char *)h + (m + j) * d * es, (char *)h + (j * 7 % m) * d * es,
                               d * es);
                    size_t yo = same ? 0 : m, nn = same ? m : n;
                    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, h);
                    gk_buffer *y =
                        same ? x : gk_test_buffer_from(ctx, t, n * d, (char *)h + m * d * es);
                    gk_buffer *k = gk_test_buffer_const(ctx, t, m * nn, GK_TEST_SENTINEL);
                    char what[128];
                    snprintf(what, sizeof what, "raw features, %s %zux%zux%zu, gamma %g%s",
                             t == GK_FLOAT32 ? "float32" : "float64", m, nn, d, gamma,
                             same ? ", x = y" : "");
                    gk_test_capture_begin();
                    GK_CHECK_OK(gk_rbf_matrix(ctx, m, nn, d, gamma, x, y, k));
                    expect_form("rbf_matrix", form, what);
                    /* the identical rows (one x row each for y's copies, the diagonal) and a
                     * few more at most */
                    size_t redone = entries_redone(gk_test_captured_line());
                    if (redone > m * nn / 100)
                        GK_FAIL("%s: %zu of %zu entries computed again from differences", what,
                                redone, m * nn);
                    void *got = gk_test_read_all(k);
                    for (size_t i = 0; i < m; i++)
                        for (size_t j = 0; j < nn; j++)
                            gk_ref_check_rbf(t, gk_test_get(t, got, i * nn + j),
                                             ref_entry(t, gamma, h, i, yo + j, d),
                                             t == GK_FLOAT32 ? 1e-5L : 1e-12L,
                                             gk_ref_rows_equal(t, h, i, h, yo + j, d), what, i, j);
                    free(got);
                    gk_buffer_destroy(k);
                    if (y != x)
                        gk_buffer_destroy(y);
                    gk_buffer_destroy(x);
                    free(h);
                }
    gk_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_offsets),
        GK_TEST_BOTH(test_same_buffer),
        GK_TEST_BOTH(test_bound),
        GK_TEST_BOTH(test_special),
        cmocka_unit_test(test_cpu_forms),
        cmocka_unit_test(test_cpu_diff_offsets),
        cmocka_unit_test(test_cpu_gemm_tiles),
        cmocka_unit_test(test_cpu_form_switch),
        cmocka_unit_test(test_cpu_overflow),
        cmocka_unit_test(test_cpu_raw_features),
    };
    return cmocka_run_group_tests_name("rbf_forms", tests, gk_test_group_setup, NULL);
}
