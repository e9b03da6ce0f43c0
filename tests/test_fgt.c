/* SPDX-License-Identifier: MIT */
/* test_fgt.c - rbf_matvec at 1 <= d <= 4 by the fast Gauss transform, on both backends, and the
 * CPU's kernel_matmul of several columns through it. */
#include "gk_test.h"

#include "fgt_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each call runs on a context that logs (GK_LOG=1) and forces the transform (GK_RBF_FORM=fgt on
 * the CPU, cuda_matvec_fgt on CUDA), or leaves the choice to the planner; the form that ran is
 * asserted, and every output against a float64 (long double) direct sum: within 1e-5 sum |w|
 * (float32), 1e-12 sum |w| (float64), NaN exactly where the direct sum is NaN. The data are
 * the shapes users' points come in (docs/fgt.md): uniform, standardized, clustered tight and
 * loose, on a line or a plane in 3-D, duplicated rows, offset by 1e3, with NaN and infinity;
 * gamma from 1e-4 to 1e4 over the data's variance; m != n; tiny sizes. */

enum {
    DATA_UNIFORM,
    DATA_NORMAL,
    DATA_TIGHT,
    DATA_LOOSE,
    DATA_LINE,
    DATA_PLANE,
    DATA_DUPLICATES,
    DATA_OFFSET,
    DATA_SPECIAL,
    DATA_KINDS
};
static const char *const data_names[] = {
    "U[0,1)",         "N(0,1)",          "50 tight clusters", "50 loose clusters", "a line in 3-D",
    "a plane in 3-D", "duplicated rows", "U[0,1) + 1e3",      "NaN and infinity"};

static double normal(void)
{
    double u = gk_test_uniform(0x1p-53, 1.0), v = gk_test_uniform(0.0, 1.0);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Rows of x (m) then y (n), d features, in dtype t; *var: the data's spread (variance per
 * feature, about), which gamma is taken relative to. */
static void *make_points(gk_dtype t, int kind, size_t m, size_t n, size_t d, double *var)
{
    size_t rows = m + n;
    void *h = gk_test_alloc(t, rows * d);
    double centres[50][4], dir[2][4];
    for (int c = 0; c < 50; c++)
        for (size_t f = 0; f < 4; f++)
            centres[c][f] = gk_test_uniform(-10.0, 10.0);
    for (int k = 0; k < 2; k++)
        for (size_t f = 0; f < 4; f++)
            dir[k][f] = normal();
    *var = kind == DATA_NORMAL ? 1.0 : kind == DATA_TIGHT || kind == DATA_LOOSE ? 33.0 : 1.0 / 12;
    for (size_t r = 0; r < rows; r++) {
        int c = (int)gk_test_rand_size(0, 49);
        double a = gk_test_uniform(-1.0, 1.0), b = gk_test_uniform(-1.0, 1.0);
        size_t src = kind == DATA_DUPLICATES ? gk_test_rand_size(0, 9) : r;
        for (size_t f = 0; f < d; f++) {
            double v;
            switch (kind) {
            case DATA_NORMAL:
                v = normal();
                break;
            case DATA_TIGHT:
                v = centres[c][f] + 0.02 * normal();
                break;
            case DATA_LOOSE:
                v = centres[c][f] + 1.5 * normal();
                break;
            case DATA_LINE: /* a line in 3-D (d < 3: along the first feature) */
                v = a * dir[0][f];
                break;
            case DATA_PLANE:
                v = a * dir[0][f] + b * dir[1][f];
                break;
            case DATA_DUPLICATES: /* ten distinct rows, repeated */
                v = 0.1 * (double)((src * 7 + f * 3) % 10);
                break;
            case DATA_OFFSET:
                v = 1e3 + gk_test_uniform(0.0, 1.0);
                break;
            default:
                v = gk_test_uniform(0.0, 1.0);
                break;
            }
            gk_test_set(t, h, r * d + f, v);
        }
    }
    if (kind == DATA_SPECIAL && m > 1 && n > 2) {
        gk_test_set(t, h, 0, NAN);                 /* x row 0 */
        gk_test_set(t, h, (m + 1) * d, INFINITY);  /* y row 1 */
        gk_test_set(t, h, (m + 2) * d, -INFINITY); /* y row 2 */
    }
    return h;
}

/* The form that ran where the transform was forced or planned: the transform itself, or the
 * difference form where the data has NaN or infinity or no grid fits (the log says
 * "declined"). */
static void expect_fgt(int cuda, const char *what, int may_decline)
{
    const char *ran = gk_test_capture_form("rbf_matvec");
    const char *fgt = cuda ? "cuda_matvec_fgt" : "fgt";
    if (strcmp(ran, fgt) == 0)
        return;
    if (may_decline && strstr(gk_test_captured_line(), "declined") != NULL)
        return;
    GK_FAIL("%s: rbf_matvec ran form %s, expected %s", what, ran, fgt);
}

/* out (m x r) against the direct sum of the rows in h (x then y) with each column of weights
 * hw (n x r), within that column's contract; NaN exactly where the direct sum is NaN. */
static void check_columns(gk_dtype t, const char *what, size_t m, size_t n, size_t d, size_t r,
                          double gamma, const void *h, const void *hw, const void *got,
                          size_t rows_checked)
{
    long double g = (long double)gk_test_round(t, gamma);
    size_t step = rows_checked < m ? m / rows_checked : 1;
    for (size_t c = 0; c < r; c++) {
        long double wsum = 0;
        for (size_t j = 0; j < n; j++)
            wsum += fabsl((long double)gk_test_get(t, hw, j * r + c));
        long double tol = (t == GK_FLOAT32 ? 1e-5L : 1e-12L) * wsum;
        for (size_t i = 0; i < m; i += step) {
            gk_test_sum ref = {0, 0};
            for (size_t j = 0; j < n; j++) {
                long double dist = 0;
                for (size_t f = 0; f < d; f++) {
                    long double z = (long double)gk_test_get(t, h, i * d + f) -
                                    (long double)gk_test_get(t, h, (m + j) * d + f);
                    dist += z * z;
                }
                long double e = dist == 0 ? 1.0L : gk_test_exp_ref(-g * dist);
                gk_test_sum_add(&ref, e * (long double)gk_test_get(t, hw, j * r + c));
            }
            long double v = (long double)gk_test_get(t, got, i * r + c),
                        want = gk_test_sum_value(&ref);
            if (isnan(want) || isnan(v)) {
                if (!(isnan(want) && isnan(v)))
                    GK_FAIL("%s: out[%zu][%zu] is %.10Lg, the direct sum %.10Lg", what, i, c, v,
                            want);
                continue;
            }
            if (!(fabsl(v - want) <= tol))
                GK_FAIL("%s: out[%zu][%zu] is %.17Lg, the direct sum %.17Lg: error %.3Lg > %.3Lg "
                        "(column %zu's contract; seed %llu)",
                        what, i, c, v, want, fabsl(v - want), tol, c,
                        (unsigned long long)gk_test_seed());
        }
    }
}

/* One call: rows of kind `kind`, gamma = grel / the data's spread; the transform forced (ctx
 * forces it) or planned; the form asserted, the sums checked (rows_checked of them). */
static void run_case(gk_context *ctx, int cuda, int planned, gk_dtype t, int kind, size_t m,
                     size_t n, size_t d, double grel, size_t rows_checked)
{
    double var;
    void *h = make_points(t, kind, m, n, d, &var);
    double gamma = grel / var;
    size_t es = gk_test_esize(t);
    void *hw = gk_test_random_array(t, n, kind == DATA_DUPLICATES ? 0.0 : -1.0, 1.0);
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, h);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, (char *)h + m * d * es);
    gk_buffer *w = gk_test_buffer_from(ctx, t, n, hw);
    gk_buffer *out = gk_test_buffer_const(ctx, t, m, GK_TEST_SENTINEL);
    char what[200];
    snprintf(what, sizeof what, "%s %s, %s, %zux%zux%zu, gamma %g (%g / variance)",
             planned ? "planned" : "forced", gk_test_dtype_name(t), data_names[kind], m, n, d,
             gamma, grel);
    gk_test_capture_begin();
    GK_CHECK_OK(gk_rbf_matvec(ctx, m, n, d, gamma, x, y, w, out));
    /* forced, the transform must not decline finite data where a grid fits (gamma spread^2 up
     * to 1: a grid has at most 4 cells a point, plus 4096); planned, the sizes that make the
     * planners offer it differ by backend (test_planner_takes_it asserts it is taken) */
    /* CUDA's expansions hold at most GK_FGT_CUDA_MAX_TERMS terms (float64 at d = 4 needs
     * more): there it declines, saying no grid fits, and direct summation runs. */
    if (!planned)
        expect_fgt(cuda, what,
                   kind == DATA_SPECIAL || grel > 1.0 ||
                       (cuda && strstr(gk_test_captured_line(), "no grid of at most") != NULL));
    else
        gk_test_capture_form("rbf_matvec");
    void *got = gk_test_read_all(out);
    check_columns(t, what, m, n, d, 1, gamma, h, hw, got, rows_checked);
    free(got);
    free(hw);
    free(h);
    gk_buffer_destroy(out);
    gk_buffer_destroy(w);
    gk_buffer_destroy(y);
    gk_buffer_destroy(x);
}

/* The context that forces the transform on this test's backend (NULL: skipped). */
static gk_context *forcing_context(void **state, int *cuda)
{
    gk_test_context(state);
    *cuda = gk_test_is_cuda(state);
    return gk_test_logging_context(*cuda ? GK_BACKEND_CUDA : GK_BACKEND_CPU,
                                   *cuda ? "cuda_matvec_fgt" : "fgt");
}

/* Every kind of data, d = 1 .. 4, both dtypes, gamma from 1e-4 to 1e4 over the spread, sizes
 * from 1 x 1 to 1000 x 1300 (m != n), the transform forced. */
static void test_forced(void **state)
{
    int cuda;
    gk_context *ctx = forcing_context(state, &cuda);
    assert_non_null(ctx);
    const double grels[] = {1e-4, 1e-2, 1.0, 1e2, 1e4};
    const size_t sizes[][2] = {{1, 1}, {3, 7}, {200, 150}, {1000, 1300}};
    const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};
    for (int kind = 0; kind < DATA_KINDS; kind++)
        for (size_t d = 1; d <= 4; d++)
            for (size_t ti = 0; ti < 2; ti++)
                for (size_t gi = 0; gi < 5; gi++) {
                    size_t s = ((size_t)kind + d + gi + ti) % 4;
                    run_case(ctx, cuda, 0, dtypes[ti], kind, sizes[s][0], sizes[s][1], d, grels[gi],
                             64);
                }
    /* loose clusters at 4000 x 3000 (boxes of some tens of points) and tight ones at
     * 20000 x 16000 (hundreds): pairs of boxes summed directly or expanded */
    for (size_t d = 2; d <= 4; d++)
        for (size_t ti = 0; ti < 2; ti++) {
            run_case(ctx, cuda, 0, dtypes[ti], DATA_LOOSE, 4000, 3000, d, d == 4 ? 3.0 : 30.0, 32);
            run_case(ctx, cuda, 0, dtypes[ti], DATA_TIGHT, 20000, 16000, d, 1e2, 8);
        }
    gk_context_destroy(ctx);
}

/* The planner's own choice at sizes where the CPU's transform pays: the results keep the
 * contract on 3-D points of several kinds at gamma 1 over the spread, and at gamma 1e4 over the
 * spread (where it may decline and direct summation runs). */
static void test_planned(void **state)
{
    gk_context *ctx0 = gk_test_context(state);
    int cuda = gk_test_is_cuda(state);
    (void)ctx0;
    gk_context *ctx = gk_test_logging_context(cuda ? GK_BACKEND_CUDA : GK_BACKEND_CPU, NULL);
    assert_non_null(ctx);
    const int kinds[] = {DATA_UNIFORM, DATA_NORMAL, DATA_LOOSE, DATA_OFFSET};
    for (size_t k = 0; k < 4; k++)
        run_case(ctx, cuda, 1, GK_FLOAT32, kinds[k], 6000, 5000, 3, 1.0, 24);
    run_case(ctx, cuda, 1, GK_FLOAT64, DATA_NORMAL, 6000, 5000, 2, 1.0, 24);
    run_case(ctx, cuda, 1, GK_FLOAT32, DATA_NORMAL, 6000, 5000, 3, 1e4, 24);
    gk_context_destroy(ctx);
}

/* The planner takes the transform, and it runs (does not decline), on uniform data at gamma
 * 0.5 at sizes where it pays: 6000 x 5000 in [0, 1) on the CPU; on CUDA 400000^2 (2^36 pairs and
 * more) in [0, 30), whose box is too wide for the one-box Taylor form that runs first. */
static void test_planner_takes_it(void **state)
{
    gk_test_context(state);
    int cuda = gk_test_is_cuda(state);
    gk_context *ctx = gk_test_logging_context(cuda ? GK_BACKEND_CUDA : GK_BACKEND_CPU, NULL);
    assert_non_null(ctx);
    const size_t m = cuda ? 400000 : 6000, n = cuda ? 400000 : 5000, d = 3;
    const double hi = cuda ? 30.0 : 1.0;
    gk_buffer *x = gk_test_buffer_random(ctx, GK_FLOAT32, m * d, 0.0, hi, NULL);
    gk_buffer *y = gk_test_buffer_random(ctx, GK_FLOAT32, n * d, 0.0, hi, NULL);
    gk_buffer *w = gk_test_buffer_random(ctx, GK_FLOAT32, n, -1.0, 1.0, NULL);
    gk_buffer *out = gk_test_buffer_const(ctx, GK_FLOAT32, m, 0.0);
    gk_test_capture_begin();
    GK_CHECK_OK(gk_rbf_matvec(ctx, m, n, d, 0.5, x, y, w, out));
    expect_fgt(cuda, "planned float32 uniform, gamma 0.5", 0);
    gk_buffer_destroy(out);
    gk_buffer_destroy(w);
    gk_buffer_destroy(y);
    gk_buffer_destroy(x);
    gk_context_destroy(ctx);
}

/* ------------------------------------------------------------------------------------------
 * kernel_matmul with the Gaussian kernel and r columns of weights (CPU): the transform of all
 * columns together, each column within its own contract (1e-5 or 1e-12 times its sum |w_c|).
 * ---------------------------------------------------------------------------------------- */

/* One kernel_matmul of r columns: rows of kind `kind`, gamma = grel / the data's spread,
 * weights in [-1, 1) with column 1 a million times column 0's scale (each column checked
 * within its own contract); nan_col < r puts a NaN in that column (row n / 2). The form the
 * log names must be `form` ("fgt" or "tiles"). */
static void run_columns(gk_context *ctx, const char *how, gk_dtype t, int kind, size_t m, size_t n,
                        size_t d, size_t r, double grel, size_t nan_col, const char *form,
                        size_t rows_checked)
{
    double var;
    void *h = make_points(t, kind, m, n, d, &var);
    double gamma = grel / var;
    size_t es = gk_test_esize(t);
    void *hw = gk_test_random_array(t, n * r, -1.0, 1.0);
    for (size_t j = 0; j < n; j++)
        gk_test_set(t, hw, j * r + 1, 1e6 * gk_test_get(t, hw, j * r + 1));
    if (nan_col < r)
        gk_test_set(t, hw, n / 2 * r + nan_col, NAN);
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, h);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, (char *)h + m * d * es);
    gk_buffer *w = gk_test_buffer_from(ctx, t, n * r, hw);
    gk_buffer *out = gk_test_buffer_const(ctx, t, m * r, GK_TEST_SENTINEL);
    char what[200];
    snprintf(what, sizeof what, "kernel_matmul %s %s, %s, %zux%zux%zu, %zu columns, gamma %g", how,
             gk_test_dtype_name(t), data_names[kind], m, n, d, r, gamma);
    gk_kernel k;
    gk_kernel_init(&k, GK_KERNEL_RBF);
    k.gamma = gamma;
    gk_test_capture_begin();
    GK_CHECK_OK(gk_kernel_matmul(ctx, &k, m, n, d, r, x, y, w, out));
    const char *ran = gk_test_capture_form("kernel_matmul");
    if (strcmp(ran, form) != 0)
        GK_FAIL("%s: ran form \"%s\", expected %s", what, ran, form);
    void *got = gk_test_read_all(out);
    check_columns(t, what, m, n, d, r, gamma, h, hw, got, rows_checked);
    free(got);
    free(hw);
    free(h);
    gk_buffer_destroy(out);
    gk_buffer_destroy(w);
    gk_buffer_destroy(y);
    gk_buffer_destroy(x);
}

/* r in {2, 5, 16} on uniform, standardized and clustered points, m != n, both dtypes: the
 * transform forced (every size, down to 3 x 7) and planned (6000 x 5000, 20000 x 16000 for 16
 * columns: where it pays against the tiles), each column within its contract; NaN in one
 * column goes to the tiles, which give NaN in that column and the others' sums;
 * GK_RBF_FORM=diff runs the tiles. */
static void test_matmul_columns(void **state)
{
    gk_test_context(state);
    gk_context *forced = gk_test_logging_context(GK_BACKEND_CPU, "fgt");
    gk_context *planned = gk_test_logging_context(GK_BACKEND_CPU, NULL);
    gk_context *direct = gk_test_logging_context(GK_BACKEND_CPU, "diff");
    assert_non_null(forced);
    assert_non_null(planned);
    assert_non_null(direct);
    const size_t cols[] = {2, 5, 16};
    const int kinds[] = {DATA_UNIFORM, DATA_NORMAL, DATA_TIGHT, DATA_LOOSE};
    const size_t sizes[][2] = {{3, 7}, {200, 150}, {1000, 1300}};
    const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};
    for (size_t ci = 0; ci < 3; ci++)
        for (size_t ki = 0; ki < 4; ki++)
            for (size_t ti = 0; ti < 2; ti++) {
                size_t s = (ci + ki + ti) % 3, d = 1 + (ci + ki) % 3;
                run_columns(forced, "forced", dtypes[ti], kinds[ki], sizes[s][0], sizes[s][1], d,
                            cols[ci], 1.0, SIZE_MAX, "fgt", 16);
            }
    /* the grid strategy (uniform points, one box side 0.25 h) and the pairs strategy (tight
     * clusters: pairs of boxes expanded and summed directly) */
    for (size_t ci = 0; ci < 3; ci++) {
        run_columns(planned, "planned", GK_FLOAT32, DATA_UNIFORM, ci < 2 ? 6000 : 20000,
                    ci < 2 ? 5000 : 16000, 3, cols[ci], 0.5 / 12, SIZE_MAX, "fgt", 8);
        run_columns(forced, "forced", dtypes[ci % 2], DATA_TIGHT, 20000, 16000, 2, cols[ci], 1e2,
                    SIZE_MAX, "fgt", 8);
    }
    run_columns(forced, "forced", GK_FLOAT32, DATA_NORMAL, 6000, 5000, 3, 16, 1.0 / 3, SIZE_MAX,
                "fgt", 8);
    run_columns(planned, "planned", GK_FLOAT64, DATA_UNIFORM, 20000, 16000, 3, 5, 0.5 / 12,
                SIZE_MAX, "fgt", 8);
    run_columns(forced, "forced", GK_FLOAT64, DATA_LOOSE, 6000, 5000, 2, 5, 3.0, SIZE_MAX, "fgt",
                8);
    run_columns(forced, "forced, NaN in column 3,", GK_FLOAT32, DATA_NORMAL, 1000, 1300, 3, 5, 1.0,
                3, "tiles", 16);
    run_columns(planned, "planned, NaN in column 0,", GK_FLOAT64, DATA_UNIFORM, 6000, 5000, 3, 2,
                0.5 / 12, 0, "tiles", 8);
    run_columns(direct, "direct (GK_RBF_FORM=diff)", GK_FLOAT32, DATA_UNIFORM, 6000, 5000, 3, 5,
                0.5 / 12, SIZE_MAX, "tiles", 8);
    gk_context_destroy(direct);
    gk_context_destroy(planned);
    gk_context_destroy(forced);
}

/* The bound of src/fgt_params.h against the truncated expansion in one dimension, worst over
 * offsets u, v on a grid of [-rho, rho] and the centres' distances delta = k side of the pairs
 * that interact: never below the measured error (it is rigorous), and at most 16 times it
 * (tight enough that p is within a degree or two of the least that would do). */
static void test_bound(void **state)
{
    (void)state;
    const double sides[] = {0.25, 0.5, 0.7, 1.0};
    for (size_t si = 0; si < 4; si++)
        for (int p = 4; p <= 12; p += 2) {
            double side = sides[si], rho = side / 2, worst = 0.0;
            int reach = (int)(5.0 / side) + 1;
            for (int k = 0; k <= reach; k++) {
                double delta = k * side, h[64];
                h[0] = exp(-delta * delta);
                h[1] = 2.0 * delta * h[0];
                for (int q = 2; q < 2 * p; q++)
                    h[q] = 2.0 * delta * h[q - 1] - 2.0 * (q - 1) * h[q - 2];
                for (int iu = -8; iu <= 8; iu++)
                    for (int iv = -8; iv <= 8; iv++) {
                        long double u = rho * iu / 8, v = rho * iv / 8, sum = 0, fu = 1;
                        for (int a = 0; a < p; a++) {
                            long double fv = 1;
                            for (int b = 0; b < p; b++) {
                                sum += fu * fv * (a % 2 ? -1 : 1) * h[a + b];
                                fv *= v / (b + 1);
                            }
                            fu *= u / (a + 1);
                        }
                        long double z = delta + u - v;
                        worst = fmax(worst, (double)fabsl(sum - expl(-z * z)));
                    }
            }
            double bound = gk__fgt_trunc_bound(1, &rho, &reach, side, p);
            printf("fgt bound, side %.2f, p %2d: measured %.2e, bound %.2e (%.1fx)\n", side, p,
                   worst, bound, bound / worst);
            if (!(worst <= bound) || !(bound <= 16.0 * worst))
                GK_FAIL("side %g, p %d: measured error %.3g, bound %.3g", side, p, worst, bound);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_forced),
        GK_TEST_BOTH(test_planned),
        GK_TEST_BOTH(test_planner_takes_it),
        {"test_matmul_columns/cpu", test_matmul_columns, gk_test_setup, gk_test_teardown,
         &gk_test_cpu},
        cmocka_unit_test(test_bound),
    };
    return cmocka_run_group_tests_name("fgt", tests, gk_test_group_setup, NULL);
}
