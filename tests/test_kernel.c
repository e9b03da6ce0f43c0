/* SPDX-License-Identifier: MIT */
/* test_kernel.c - the kernel family, distances, k-NN and int64 buffers against long double
 * references written from the formulas, and every error path. */
#include "gk_test.h"
#include "kernel_ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};

/* ------------------------------------------------------------------------------------------
 * Data: standardized, clustered, offset by 1e3, with identical rows of x in y.
 * ---------------------------------------------------------------------------------------- */

typedef enum data_kind { DATA_STANDARD, DATA_CLUSTERS, DATA_OFFSET, DATA_KINDS } data_kind;

static const char *const data_names[] = {"standardized", "clustered", "offset 1e3"};

/* rows x d values of kind k rounded to t (malloc'ed). */
static void *make_rows(gk_dtype t, size_t rows, size_t d, data_kind k)
{
    void *p = gk_test_alloc(t, rows * d);
    double centres[4][64];
    for (int c = 0; c < 4; c++)
        for (size_t f = 0; f < 64; f++)
            centres[c][f] = gk_test_uniform(-9.0, 9.0);
    for (size_t i = 0; i < rows; i++) {
        size_t c = (size_t)gk_test_rand_size(0, 3);
        for (size_t f = 0; f < d; f++) {
            double v = k == DATA_STANDARD   ? gk_test_uniform(-1.732, 1.732)
                       : k == DATA_CLUSTERS ? centres[c][f % 64] + gk_test_uniform(-0.3, 0.3)
                                            : 1e3 + gk_test_uniform(0.0, 1.0);
            gk_test_set(t, p, i * d + f, v);
        }
    }
    return p;
}

/* Copies row si of x into row di of y, every `step` rows. */
static void share_rows(gk_dtype t, void *y, size_t n, const void *x, size_t m, size_t d,
                       size_t step)
{
    size_t es = gk_test_esize(t);
    for (size_t j = 0; j < n && j / step < m; j += step)
        memcpy((char *)y + j * d * es, (const char *)x + (j / step) * d * es, d * es);
}

/* An int64 buffer of n elements, each -7. */
static gk_buffer *int64_buffer(gk_context *ctx, size_t n)
{
    gk_buffer *b = NULL;
    GK_CHECK_OK(gk_buffer_create(ctx, GK_INT64, n, &b));
    int64_t *h = malloc((n ? n : 1) * sizeof *h);
    for (size_t e = 0; e < n; e++)
        h[e] = -7;
    GK_CHECK_OK(gk_buffer_write(b, 0, n, h));
    free(h);
    return b;
}

static int64_t *read_int64(const gk_buffer *b)
{
    size_t n = gk_buffer_count(b);
    int64_t *h = malloc((n ? n : 1) * sizeof *h);
    GK_CHECK_OK(gk_buffer_read(b, 0, n, h));
    return h;
}

/* ------------------------------------------------------------------------------------------
 * kernel_matrix, distance_matrix
 * ---------------------------------------------------------------------------------------- */

static const gk_kernel_kind kinds[] = {GK_KERNEL_RBF,     GK_KERNEL_LAPLACIAN, GK_KERNEL_POLYNOMIAL,
                                       GK_KERNEL_SIGMOID, GK_KERNEL_LINEAR,    GK_KERNEL_COSINE,
                                       GK_KERNEL_MATERN};
static const gk_metric metrics[] = {GK_METRIC_SQEUCLIDEAN, GK_METRIC_EUCLIDEAN, GK_METRIC_MANHATTAN,
                                    GK_METRIC_COSINE};

/* A kernel of kind with parameters that spread its values over its range for rows of d
 * features of data k (Matérn's nu cycles through its three values). */
static gk_kernel pick_kernel(gk_kernel_kind kind, size_t d, data_kind k, int variant)
{
    gk_kernel kr;
    gk_kernel_init(&kr, kind);
    double spread = k == DATA_CLUSTERS ? 0.3 * 0.3 : 1.0;
    kr.gamma = gk_test_uniform(0.5, 2.0) / ((double)d * spread);
    if (kind == GK_KERNEL_LAPLACIAN)
        kr.gamma = gk_test_uniform(0.5, 2.0) / (double)d;
    if (kind == GK_KERNEL_POLYNOMIAL || kind == GK_KERNEL_SIGMOID)
        kr.gamma = gk_test_uniform(0.2, 1.0) / (double)d;
    if (kind == GK_KERNEL_POLYNOMIAL)
        kr.degree = (double)(variant % 4 + 1);
    if (kind == GK_KERNEL_MATERN)
        kr.nu = 0.5 + (double)(variant % 3);
    return kr;
}

/* out = kernel or metric (kernel NULL) of x (m x d) and y (n x d) on ctx, checked entry by
 * entry, identical rows included. */
static void matrix_case(gk_context *ctx, gk_dtype t, const gk_kernel *k, gk_metric metric, size_t m,
                        size_t n, size_t d, data_kind data)
{
    void *hx = make_rows(t, m, d, data), *hy = make_rows(t, n, d, data);
    share_rows(t, hy, n, hx, m, d, 3);
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *out = gk_test_buffer_const(ctx, t, m * n, GK_TEST_SENTINEL);
    if (k != NULL)
        GK_CHECK_OK(gk_kernel_matrix(ctx, k, m, n, d, x, y, out));
    else
        GK_CHECK_OK(gk_distance_matrix(ctx, metric, m, n, d, x, y, out));
    void *ho = gk_test_read_all(out);
    char what[160];
    snprintf(what, sizeof what, "%s %s %zux%zux%zu %s (gamma %g)", k != NULL ? "kernel" : "metric",
             gk_test_dtype_name(t), m, n, d, data_names[data], k != NULL ? k->gamma : 0.0);
    long double tol = gk_ref_tol(t);
    int unit = k != NULL && (k->kind == GK_KERNEL_RBF || k->kind == GK_KERNEL_LAPLACIAN ||
                             k->kind == GK_KERNEL_MATERN);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            gk_ref_sums s = gk_ref_sums_of(t, hx, i, hy, j, d);
            long double bound;
            long double ref =
                k != NULL ? gk_ref_kernel(k, t, &s, &bound) : gk_ref_distance(metric, &s, &bound);
            double got = gk_test_get(t, ho, i * n + j);
            gk_ref_check(t, what, i, j, got, ref, tol * bound);
            if (gk_ref_rows_equal(t, hx, i, hy, j, d) && d > 0) {
                if (unit && got != 1.0)
                    GK_FAIL("%s: identical rows (%zu,%zu) give %.17g, not exactly 1", what, i, j,
                            got);
                if (k == NULL && metric != GK_METRIC_COSINE && got != 0.0)
                    GK_FAIL("%s: identical rows (%zu,%zu) are %.17g apart, not exactly 0", what, i,
                            j, got);
            }
        }
    free(hx);
    free(hy);
    free(ho);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(out);
}

/* Shapes across the tiles' edges: 1, 7, and 1000 x 1025 (rows of 256, columns of 1024); 130
 * features cross the float32 L1 sums' chunks of 64. */
static const size_t shapes[][3] = {{1, 1, 7},  {1, 7, 20},   {7, 1, 3},
                                   {7, 7, 64}, {7, 33, 130}, {33, 1025, 5}};

static void test_kernel_matrix(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t ti = 0; ti < 2; ti++)
        for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
            for (int data = 0; data < DATA_KINDS; data++)
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                    gk_kernel k = pick_kernel(kinds[ki], shapes[s][2], (data_kind)data, (int)s);
                    matrix_case(ctx, dtypes[ti], &k, 0, shapes[s][0], shapes[s][1], shapes[s][2],
                                (data_kind)data);
                }
}

static void test_distance_matrix(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t ti = 0; ti < 2; ti++)
        for (size_t mi = 0; mi < sizeof metrics / sizeof metrics[0]; mi++)
            for (int data = 0; data < DATA_KINDS; data++)
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                    matrix_case(ctx, dtypes[ti], NULL, metrics[mi], shapes[s][0], shapes[s][1],
                                shapes[s][2], (data_kind)data);
}

/* The large shape, once per pass (inner products, distances, L1 sums), the dtypes alternating
 * (the 33 x 1025 shapes above cross the column tiles in both). */
static void test_large(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_kernel k = pick_kernel(GK_KERNEL_COSINE, 16, DATA_STANDARD, 0);
    matrix_case(ctx, GK_FLOAT32, &k, 0, 1000, 1025, 16, DATA_CLUSTERS);
    matrix_case(ctx, GK_FLOAT64, NULL, GK_METRIC_EUCLIDEAN, 1000, 1025, 16, DATA_OFFSET);
    matrix_case(ctx, GK_FLOAT32, NULL, GK_METRIC_MANHATTAN, 1000, 1025, 16, DATA_STANDARD);
    /* cubic on standardized rows of 64 features: float inner products (the CPU's sgemm) where
     * gamma max|x| max|y| / (that + coef0) leaves room for them, doubles on other data */
    gk_kernel cubic;
    gk_kernel_init(&cubic, GK_KERNEL_POLYNOMIAL);
    cubic.gamma = 1.0 / 64;
    for (int data = 0; data < DATA_KINDS; data++)
        matrix_case(ctx, GK_FLOAT32, &cubic, 0, 300, 310, 64, (data_kind)data);
}

static void matmul_case(gk_context *ctx, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                        size_t d, size_t r);

/* kernel_matrix and distance_matrix give each thread of the team tiles of its own (256 x 1024
 * at these d), in order down a block of columns (y's rows prepared once a block), and shorter
 * tiles where there would be fewer than threads: several blocks of columns and of rows, and
 * a few rows against one block, every kernel and metric, on data offset by 1e3; kernel_matmul
 * gives each thread rows of its own, along every block of y. */
static void test_member_tiles(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t sizes[][3] = {{300, 2100, 8}, {40, 100, 9}};
    for (size_t ti = 0; ti < 2; ti++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t m = sizes[s][0], n = sizes[s][1], d = sizes[s][2];
            for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
                gk_kernel k = pick_kernel(kinds[ki], d, DATA_OFFSET, (int)(ki + s));
                matrix_case(ctx, dtypes[ti], &k, 0, m, n, d, DATA_OFFSET);
            }
            for (size_t mi = 0; mi < sizeof metrics / sizeof metrics[0]; mi++)
                matrix_case(ctx, dtypes[ti], NULL, metrics[mi], m, n, d, DATA_OFFSET);
            static const gk_kernel_kind passes[] = {GK_KERNEL_LAPLACIAN, GK_KERNEL_POLYNOMIAL,
                                                    GK_KERNEL_MATERN};
            for (size_t ki = 0; ki < 3; ki++) {
                gk_kernel k = pick_kernel(passes[ki], d, DATA_STANDARD, (int)s);
                matmul_case(ctx, dtypes[ti], &k, m, n, d, 3);
            }
        }
}

/* Euclidean distances whose squares leave float32's normal range, above (3e19 apart: 9e38 >
 * FLT_MAX) and below (1e-25 apart: 1e-50), while the distances themselves are ordinary floats:
 * each within 1e-5 of itself. The CPU's float32 calls take the roots in float, of squares
 * held in double. */
static void test_euclidean_range(void **state)
{
    (void)state;
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &ctx));
    const size_t m = 6, n = 3, d = 3;
    const float hx[] = {3e19f, 0, 0,      1e19f, 2e18f, 0, 1e-25f, 0,      0,
                        0,     0, 3e-30f, 1.5f,  -2.f,  0, 5e-20f, 5e-20f, 0};
    const float hy[] = {0, 0, 0, 1e-25f, 1e-25f, 0, 2.f, 1.f, 0};
    gk_buffer *x = gk_test_buffer_from(ctx, GK_FLOAT32, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, GK_FLOAT32, n * d, hy);
    gk_buffer *out = gk_test_buffer_const(ctx, GK_FLOAT32, m * n, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_distance_matrix(ctx, GK_METRIC_EUCLIDEAN, m, n, d, x, y, out));
    float *ho = gk_test_read_all(out);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            long double s = 0;
            for (size_t f = 0; f < d; f++) {
                long double e = (long double)hx[i * d + f] - (long double)hy[j * d + f];
                s += e * e;
            }
            long double ref = sqrtl(s);
            gk_ref_check(GK_FLOAT32, "euclidean, squares outside float's range", i, j,
                         ho[i * n + j], ref, 1e-5L * ref);
        }
    free(ho);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(out);
    gk_context_destroy(ctx);
}

/* Rows far apart, as raw, unscaled features have them: the exponential kernels' arguments run
 * past the dtype's normal range (e^-87.3 float32, e^-708 float64). Such entries are written as 0,
 * never as subnormal numbers, each of which cost a microcode assist (Matérn on raw features took
 * 3.5 times as long as on standardized data); every entry within the contract. */
static void test_far_entries(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = 7, n = 400, d = 3;
    const gk_kernel_kind far_kinds[] = {GK_KERNEL_RBF, GK_KERNEL_LAPLACIAN, GK_KERNEL_MATERN,
                                        GK_KERNEL_MATERN, GK_KERNEL_MATERN};
    const double nus[] = {0.0, 0.0, 0.5, 1.5, 2.5};
    for (size_t ti = 0; ti < 2; ti++) {
        gk_dtype t = dtypes[ti];
        /* arguments gamma r (laplacian, Matérn nu 0.5) from 0 to 1.2 times the cut-off of 0 */
        double top = t == GK_FLOAT32 ? 130.0 : 900.0;
        void *hx = gk_test_alloc(t, m * d), *hy = gk_test_alloc(t, n * d);
        for (size_t i = 0; i < m * d; i++)
            gk_test_set(t, hx, i, i % d == 1 ? 0.25 * (double)(i / d) : 0.0);
        for (size_t j = 0; j < n; j++)
            for (size_t f = 0; f < d; f++)
                gk_test_set(t, hy, j * d + f, f == 0 ? top * (double)j / (double)n : 0.0);
        gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
        gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
        gk_buffer *out = gk_test_buffer_const(ctx, t, m * n, GK_TEST_SENTINEL);
        for (size_t ki = 0; ki < sizeof far_kinds / sizeof far_kinds[0]; ki++) {
            gk_kernel k;
            gk_kernel_init(&k, far_kinds[ki]);
            k.gamma = far_kinds[ki] == GK_KERNEL_RBF ? 1.0 / top : 1.0;
            if (far_kinds[ki] == GK_KERNEL_MATERN)
                k.nu = nus[ki];
            GK_CHECK_OK(gk_kernel_matrix(ctx, &k, m, n, d, x, y, out));
            void *ho = gk_test_read_all(out);
            char what[96];
            snprintf(what, sizeof what, "%s %s on rows far apart", gk_test_dtype_name(t),
                     ki == 0   ? "rbf"
                     : ki == 1 ? "laplacian"
                     : ki == 2 ? "matern 0.5"
                     : ki == 3 ? "matern 1.5"
                               : "matern 2.5");
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    gk_ref_sums sums = gk_ref_sums_of(t, hx, i, hy, j, d);
                    long double bound;
                    long double ref = gk_ref_kernel(&k, t, &sums, &bound);
                    double got = gk_test_get(t, ho, i * n + j);
                    gk_ref_check(t, what, i, j, got, ref, gk_ref_tol(t) * bound);
                    int sub = t == GK_FLOAT32 ? fpclassify((float)got) == FP_SUBNORMAL
                                              : fpclassify(got) == FP_SUBNORMAL;
                    if (sub)
                        GK_FAIL("%s: entry (%zu,%zu) is subnormal, %.9g (reference %.9Lg)", what, i,
                                j, got, ref);
                }
            free(ho);
        }
        free(hx);
        free(hy);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(out);
    }
}

/* d = 0: every distance is 0 and every inner product 0. */
static void test_no_features(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t ti = 0; ti < 2; ti++) {
        gk_dtype t = dtypes[ti];
        gk_buffer *x = gk_test_buffer_const(ctx, t, 0, 0.0),
                  *y = gk_test_buffer_const(ctx, t, 0, 0);
        gk_buffer *out = gk_test_buffer_const(ctx, t, 6, GK_TEST_SENTINEL);
        for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
            gk_kernel k;
            gk_kernel_init(&k, kinds[ki]);
            k.coef0 = 2.0;
            GK_CHECK_OK(gk_kernel_matrix(ctx, &k, 2, 3, 0, x, y, out));
            void *ho = gk_test_read_all(out);
            double want = kinds[ki] == GK_KERNEL_POLYNOMIAL ? 8.0
                          : kinds[ki] == GK_KERNEL_SIGMOID  ? tanh(2.0)
                          : kinds[ki] == GK_KERNEL_LINEAR || kinds[ki] == GK_KERNEL_COSINE ? 0.0
                                                                                           : 1.0;
            for (size_t e = 0; e < 6; e++)
                if (fabs(gk_test_get(t, ho, e) - want) > gk_ref_tol(t))
                    GK_FAIL("kind %d d = 0: entry %zu is %g, not %g", (int)kinds[ki], e,
                            gk_test_get(t, ho, e), want);
            free(ho);
        }
        GK_CHECK_OK(gk_distance_matrix(ctx, GK_METRIC_COSINE, 2, 3, 0, x, y, out));
        void *ho = gk_test_read_all(out);
        for (size_t e = 0; e < 6; e++)
            assert_true(gk_test_get(t, ho, e) == 1.0);
        free(ho);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(out);
    }
}

/* NaN and infinities in the rows give what the formulas give, and leave the other rows exact. */
static void test_special_values(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = 5, n = 6, d = 4;
    for (size_t ti = 0; ti < 2; ti++) {
        gk_dtype t = dtypes[ti];
        void *hx = make_rows(t, m, d, DATA_STANDARD), *hy = make_rows(t, n, d, DATA_OFFSET);
        gk_test_set(t, hx, 0 * d + 1, NAN);
        gk_test_set(t, hx, 2 * d + 0, INFINITY);
        gk_test_set(t, hy, 3 * d + 2, -INFINITY);
        gk_test_set(t, hy, 4 * d + 0, INFINITY);
        gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
        gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
        gk_buffer *out = gk_test_buffer_const(ctx, t, m * n, 0.0);
        /* cases: the seven kinds, the four metrics, Matérn's other two nu */
        for (size_t c = 0; c < 13; c++) {
            int metric = c >= 7 && c < 11;
            gk_kernel k;
            gk_kernel_init(&k, c < 7 ? kinds[c] : GK_KERNEL_MATERN);
            k.gamma = 0.25;
            k.nu = c == 11 ? 0.5 : c == 12 ? 2.5 : k.nu;
            if (!metric)
                GK_CHECK_OK(gk_kernel_matrix(ctx, &k, m, n, d, x, y, out));
            else
                GK_CHECK_OK(gk_distance_matrix(ctx, metrics[c - 7], m, n, d, x, y, out));
            void *ho = gk_test_read_all(out);
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    gk_ref_sums s = gk_ref_sums_of(t, hx, i, hy, j, d);
                    long double bound, ref = !metric ? gk_ref_kernel(&k, t, &s, &bound)
                                                     : gk_ref_distance(metrics[c - 7], &s, &bound);
                    char what[64];
                    snprintf(what, sizeof what, "special values, case %zu %s", c,
                             gk_test_dtype_name(t));
                    long double tol = gk_ref_tol(t) * (isfinite(bound) ? bound : 1.0L);
                    gk_ref_check(t, what, i, j, gk_test_get(t, ho, i * n + j), ref, tol);
                }
            free(ho);
        }
        free(hx);
        free(hy);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(out);
    }
}

/* ------------------------------------------------------------------------------------------
 * kernel_matmul
 * ---------------------------------------------------------------------------------------- */

static void matmul_case(gk_context *ctx, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                        size_t d, size_t r)
{
    void *hx = make_rows(t, m, d, DATA_STANDARD), *hy = make_rows(t, n, d, DATA_STANDARD);
    share_rows(t, hy, n, hx, m, d, 5);
    void *hw = gk_test_random_array(t, n * r, -1.0, 1.0);
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *w = gk_test_buffer_from(ctx, t, n * r, hw);
    gk_buffer *out = gk_test_buffer_const(ctx, t, m * r, GK_TEST_SENTINEL);
    gk_buffer *km = gk_test_buffer_const(ctx, t, m * n, 0.0);
    GK_CHECK_OK(gk_kernel_matmul(ctx, k, m, n, d, r, x, y, w, out));
    GK_CHECK_OK(gk_kernel_matrix(ctx, k, m, n, d, x, y, km));
    void *ho = gk_test_read_all(out), *hk = gk_test_read_all(km);
    long double *kref = malloc(n * sizeof *kref), *kbound = malloc(n * sizeof *kbound);
    char what[128];
    snprintf(what, sizeof what, "matmul kind %d %s %zux%zux%zu r %zu", (int)k->kind,
             gk_test_dtype_name(t), m, n, d, r);
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            gk_ref_sums s = gk_ref_sums_of(t, hx, i, hy, j, d);
            kref[j] = gk_ref_kernel(k, t, &s, &kbound[j]);
        }
        for (size_t c = 0; c < r; c++) {
            gk_test_sum ref = {0, 0}, via = {0, 0};
            long double bound = 0;
            for (size_t j = 0; j < n; j++) {
                long double wj = gk_test_get(t, hw, j * r + c);
                gk_test_sum_add(&ref, kref[j] * wj);
                gk_test_sum_add(&via, (long double)gk_test_get(t, hk, i * n + j) * wj);
                bound += fabsl(kbound[j] * wj);
            }
            double got = gk_test_get(t, ho, i * r + c);
            gk_ref_check(t, what, i, c, got, gk_test_sum_value(&ref), gk_ref_tol(t) * bound);
            /* and against the matrix times w: within both entries' errors */
            gk_ref_check(t, what, i, c, got, gk_test_sum_value(&via), 2 * gk_ref_tol(t) * bound);
        }
    }
    free(kref);
    free(kbound);
    free(hx);
    free(hy);
    free(hw);
    free(ho);
    free(hk);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(w);
    gk_buffer_destroy(out);
    gk_buffer_destroy(km);
}

static void test_kernel_matmul(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const size_t rs[] = {1, 3, 64};
    for (size_t ti = 0; ti < 2; ti++)
        for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
            for (size_t ri = 0; ri < 3; ri++) {
                gk_kernel k = pick_kernel(kinds[ki], 9, DATA_STANDARD, (int)ri);
                matmul_case(ctx, dtypes[ti], &k, 7, 7, 9, rs[ri]);
                matmul_case(ctx, dtypes[ti], &k, 40, 1025, 9, rs[ri]);
            }
}

/* n = 0: every sum is empty; m = 0 or r = 0: nothing to write. */
static void test_matmul_empty(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_kernel k;
    gk_kernel_init(&k, GK_KERNEL_LAPLACIAN);
    gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, 6, 1.0);
    gk_buffer *y = gk_test_buffer_const(ctx, GK_FLOAT32, 0, 0.0);
    gk_buffer *out = gk_test_buffer_const(ctx, GK_FLOAT32, 8, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_kernel_matmul(ctx, &k, 2, 0, 3, 4, x, y, y, out));
    float *h = gk_test_read_all(out);
    for (size_t e = 0; e < 8; e++)
        assert_true(h[e] == 0.0f);
    free(h);
    gk_buffer *s = gk_test_buffer_const(ctx, GK_FLOAT32, 8, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_kernel_matmul(ctx, &k, 0, 3, 2, 2, y, x, x, s));
    GK_CHECK_OK(gk_kernel_matmul(ctx, &k, 2, 3, 1, 0, x, x, y, s));
    GK_CHECK_OK(gk_kernel_matrix(ctx, &k, 0, 3, 2, y, x, s));
    GK_CHECK_OK(gk_distance_matrix(ctx, GK_METRIC_MANHATTAN, 2, 0, 3, x, y, s));
    gk_buffer *none = int64_buffer(ctx, 0);
    GK_CHECK_OK(gk_knn(ctx, GK_METRIC_MANHATTAN, 0, 3, 2, 1, y, x, y, none));
    GK_EXPECT_SENTINEL(s);
    gk_buffer_destroy(none);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(out);
    gk_buffer_destroy(s);
}

/* ------------------------------------------------------------------------------------------
 * knn
 * ---------------------------------------------------------------------------------------- */

static int compare_ld(const void *a, const void *b)
{
    long double x = *(const long double *)a, y = *(const long double *)b;
    return x < y ? -1 : x > y;
}

/* Runs knn and checks: distances nearest first and within the contract of their index's true
 * distance, indices distinct, and none farther (beyond the contract) than the true k-th. */
static void knn_check(gk_context *ctx, gk_dtype t, gk_metric metric, size_t m, size_t n, size_t d,
                      size_t k, const void *hx, const void *hy, int64_t **index_out)
{
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *dist = gk_test_buffer_const(ctx, t, m * k, GK_TEST_SENTINEL);
    gk_buffer *index = int64_buffer(ctx, m * k);
    GK_CHECK_OK(gk_knn(ctx, metric, m, n, d, k, x, y, dist, index));
    void *hd = gk_test_read_all(dist);
    int64_t *hi = read_int64(index);
    long double *all = malloc(n * sizeof *all), *sorted = malloc(n * sizeof *sorted);
    char *seen = malloc(n);
    long double tol = gk_ref_tol(t);
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            gk_ref_sums s = gk_ref_sums_of(t, hx, i, hy, j, d);
            long double scale;
            all[j] = gk_ref_distance(metric, &s, &scale);
            seen[j] = 0;
        }
        /* the true k-th distance */
        memcpy(sorted, all, n * sizeof *all);
        qsort(sorted, n, sizeof *sorted, compare_ld);
        long double kth = sorted[k - 1];
        for (size_t e = 0; e < k; e++) {
            int64_t j = hi[i * k + e];
            double got = gk_test_get(t, hd, i * k + e);
            if (j < 0 || (size_t)j >= n || seen[j])
                GK_FAIL("knn row %zu: neighbour %zu has index %lld (n %zu, or repeated)", i, e,
                        (long long)j, n);
            seen[j] = 1;
            long double scale = gk_ref_distance_scale(metric, all[j]);
            if (!(fabsl((long double)got - all[j]) <= tol * scale))
                GK_FAIL("knn row %zu: neighbour %zu (index %lld) at %.17g, true %.17Lg", i, e,
                        (long long)j, got, all[j]);
            if (all[j] > kth + tol * gk_ref_distance_scale(metric, kth))
                GK_FAIL("knn row %zu: neighbour %zu (index %lld) at %.17Lg is beyond the k-th "
                        "nearest (%.17Lg)",
                        i, e, (long long)j, all[j], kth);
            double before = e > 0 ? gk_test_get(t, hd, i * k + e - 1) : -1.0;
            if (got < before || (got == before && j < hi[i * k + e - 1]))
                GK_FAIL("knn row %zu: neighbour %zu (%.17g, index %lld) out of order", i, e, got,
                        (long long)j);
        }
    }
    free(all);
    free(sorted);
    free(seen);
    free(hd);
    if (index_out != NULL)
        *index_out = hi;
    else
        free(hi);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(dist);
    gk_buffer_destroy(index);
}

static void test_knn(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const size_t sizes[][4] = {
        {1, 1, 3, 1}, {7, 7, 5, 7}, {7, 1025, 8, 5}, {300, 40, 3, 40}, {20, 1025, 16, 1025}};
    for (size_t ti = 0; ti < 2; ti++)
        for (size_t mi = 0; mi < 4; mi++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                gk_dtype t = dtypes[ti];
                size_t m = sizes[s][0], n = sizes[s][1], d = sizes[s][2], k = sizes[s][3];
                void *hx = make_rows(t, m, d, (data_kind)(s % DATA_KINDS));
                void *hy = make_rows(t, n, d, (data_kind)(s % DATA_KINDS));
                share_rows(t, hy, n, hx, m, d, 2);
                knn_check(ctx, t, metrics[mi], m, n, d, k, hx, hy, NULL);
                free(hx);
                free(hy);
            }
}

/* Equal distances come by the smaller index: points on a line of integers, queries halfway
 * between two of them, and copies of one row. */
static void test_knn_ties(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t ti = 0; ti < 2; ti++) {
        gk_dtype t = dtypes[ti];
        const size_t n = 9, m = 3;
        void *hy = gk_test_alloc(t, n), *hx = gk_test_alloc(t, m);
        /* y: 0 1 2 3 4 3 2 1 0 */
        for (size_t j = 0; j < n; j++)
            gk_test_set(t, hy, j, (double)(j < 5 ? j : 8 - j));
        gk_test_set(t, hx, 0, 0.0);
        gk_test_set(t, hx, 1, 2.5);
        gk_test_set(t, hx, 2, 10.0);
        int64_t *hi = NULL;
        knn_check(ctx, t, GK_METRIC_EUCLIDEAN, m, n, 1, n, hx, hy, &hi);
        static const int64_t want[3][9] = {
            {0, 8, 1, 7, 2, 6, 3, 5, 4}, {2, 3, 5, 6, 1, 4, 7, 0, 8}, {4, 3, 5, 2, 6, 1, 7, 0, 8}};
        for (size_t i = 0; i < m; i++)
            for (size_t e = 0; e < n; e++)
                if (hi[i * n + e] != want[i][e])
                    GK_FAIL("knn ties %s: row %zu neighbour %zu is %lld, not %lld",
                            gk_test_dtype_name(t), i, e, (long long)hi[i * n + e],
                            (long long)want[i][e]);
        free(hi);
        free(hx);
        free(hy);
    }
}

/* ------------------------------------------------------------------------------------------
 * int64 buffers
 * ---------------------------------------------------------------------------------------- */

static void test_int64_buffers(void **state)
{
    gk_context *ctx = gk_test_context(state);
    int64_t vals[5] = {-1, 0, INT64_MAX, INT64_MIN, 0x7ff8000000000001LL}, back[5] = {0};
    gk_buffer *a = NULL, *b = NULL, *v = NULL, *w = NULL;
    GK_CHECK_OK(gk_buffer_create(ctx, GK_INT64, 5, &a));
    assert_int_equal(gk_buffer_dtype(a), GK_INT64);
    assert_int_equal(gk_buffer_count(a), 5);
    GK_CHECK_OK(gk_buffer_write(a, 0, 5, vals));
    GK_CHECK_OK(gk_buffer_create(ctx, GK_INT64, 5, &b));
    GK_CHECK_OK(gk_copy(ctx, a, b));
    GK_CHECK_OK(gk_buffer_read(b, 0, 5, back));
    assert_memory_equal(vals, back, sizeof vals);
    GK_CHECK_OK(gk_buffer_view(b, 2, 3, &v));
    int64_t mid[3];
    GK_CHECK_OK(gk_buffer_read(v, 0, 3, mid));
    assert_memory_equal(mid, vals + 2, sizeof mid);
    int64_t host[4] = {1, 2, 3, 4};
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_INT64, 4, host, &w));
    GK_CHECK_OK(gk_buffer_write(w, 1, 2, vals));
    assert_true(host[1] == -1 && host[2] == 0 && host[3] == 4);

    /* every other op refuses it, naming the dtype */
    gk_buffer *f = gk_test_buffer_const(ctx, GK_FLOAT64, 5, 1.0);
    double r = 0;
    gk_kernel k;
    gk_kernel_init(&k, GK_KERNEL_LINEAR);
    gk_status got[] = {
        gk_fill(ctx, 1.0, a),
        gk_add(ctx, a, a, b),
        gk_scale(ctx, 2.0, a),
        gk_exp(ctx, a, b),
        gk_sum(ctx, a, &r),
        gk_dot(ctx, f, a, &r),
        gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, 1, 1, 1, 1.0, a, 1, a, 1, 0.0, b, 1),
        gk_rbf_matrix(ctx, 1, 1, 1, 1.0, a, a, b),
        gk_rng_uniform(ctx, 1, 0, a),
        gk_kernel_matrix(ctx, &k, 1, 1, 1, f, f, a),
        gk_distance_matrix(ctx, GK_METRIC_EUCLIDEAN, 1, 1, 1, a, f, f),
        gk_knn(ctx, GK_METRIC_EUCLIDEAN, 1, 1, 1, 1, f, f, a, b),
    };
    for (size_t i = 0; i < sizeof got / sizeof got[0]; i++) {
        if (got[i] != GK_E_INVALID_ARGUMENT)
            GK_FAIL("call %zu on an int64 buffer returned %s", i, gk_status_string(got[i]));
    }
    GK_EXPECT(gk_add(ctx, f, a, f), GK_E_INVALID_ARGUMENT, "gk_add");
    assert_non_null(strstr(gk_last_error(), "int64"));
    GK_EXPECT(gk_copy(ctx, a, f), GK_E_DTYPE, "gk_copy");
    GK_CHECK_OK(gk_buffer_read(b, 0, 5, back));
    assert_memory_equal(vals, back, sizeof vals);
    gk_buffer_destroy(f);
    gk_buffer_destroy(w);
    gk_buffer_destroy(v);
    gk_buffer_destroy(b);
    gk_buffer_destroy(a);
}

/* ------------------------------------------------------------------------------------------
 * Errors: each provoked once, outputs untouched.
 * ---------------------------------------------------------------------------------------- */

static void test_kernel_init(void **state)
{
    (void)state;
    gk_kernel k;
    memset(&k, 0xff, sizeof k);
    gk_kernel_init(&k, GK_KERNEL_MATERN);
    assert_int_equal(k.struct_size, sizeof k);
    assert_int_equal(k.kind, GK_KERNEL_MATERN);
    assert_true(k.gamma == 1.0 && k.coef0 == 1.0 && k.degree == 3.0 && k.nu == 1.5);
    gk_kernel_init(NULL, GK_KERNEL_RBF);
}

static void test_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const char km[] = "gk_kernel_matrix", kmm[] = "gk_kernel_matmul",
                      dm[] = "gk_distance_matrix", kn[] = "gk_knn";
    gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, 12, 0.5);
    gk_buffer *y = gk_test_buffer_const(ctx, GK_FLOAT32, 12, 0.25);
    gk_buffer *y64 = gk_test_buffer_const(ctx, GK_FLOAT64, 12, 0.25);
    gk_buffer *out = gk_test_buffer_const(ctx, GK_FLOAT32, 16, GK_TEST_SENTINEL);
    gk_buffer *idx = int64_buffer(ctx, 16);
    gk_buffer *xv = gk_test_view(x, 0, 8);
    gk_kernel k, bad;
    gk_kernel_init(&k, GK_KERNEL_POLYNOMIAL);

    GK_EXPECT(gk_kernel_matrix(NULL, &k, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    GK_EXPECT(gk_kernel_matrix(ctx, NULL, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    bad = k;
    bad.struct_size = 8;
    GK_EXPECT(gk_kernel_matrix(ctx, &bad, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    bad = k;
    bad.kind = 8;
    GK_EXPECT(gk_kernel_matrix(ctx, &bad, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    bad = k;
    bad.gamma = NAN;
    GK_EXPECT(gk_kernel_matrix(ctx, &bad, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    assert_non_null(strstr(gk_last_error(), "gamma"));
    bad.gamma = INFINITY;
    GK_EXPECT(gk_kernel_matmul(ctx, &bad, 4, 4, 3, 1, x, y, y, out), GK_E_INVALID_ARGUMENT, kmm);
    bad.gamma = 1e300; /* finite, but not in float32 */
    GK_EXPECT(gk_kernel_matrix(ctx, &bad, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    bad = k;
    bad.coef0 = NAN;
    GK_EXPECT(gk_kernel_matrix(ctx, &bad, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    bad = k;
    bad.degree = 33;
    GK_EXPECT(gk_kernel_matrix(ctx, &bad, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    assert_non_null(strstr(gk_last_error(), "33"));
    bad.degree = 2.5;
    GK_EXPECT(gk_kernel_matrix(ctx, &bad, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    gk_kernel_init(&bad, GK_KERNEL_MATERN);
    bad.nu = 1.0;
    GK_EXPECT(gk_kernel_matrix(ctx, &bad, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    gk_kernel_init(&bad, GK_KERNEL_MATERN);
    bad.gamma = -1.0;
    GK_EXPECT(gk_kernel_matrix(ctx, &bad, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, km);
    /* gamma of a kind that does not use it is ignored */
    gk_kernel_init(&bad, GK_KERNEL_LINEAR);
    bad.gamma = NAN;
    GK_CHECK_OK(gk_kernel_matrix(ctx, &bad, 0, 4, 3, x, y, out));

    GK_EXPECT(gk_kernel_matrix(ctx, &k, 4, 4, 3, x, y64, out), GK_E_DTYPE, km);
    GK_EXPECT(gk_kernel_matrix(ctx, &k, 5, 4, 3, x, y, out), GK_E_SHAPE, km);
    GK_EXPECT(gk_kernel_matrix(ctx, &k, 4, 5, 3, x, y, out), GK_E_SHAPE, km);
    GK_EXPECT(gk_kernel_matrix(ctx, &k, SIZE_MAX / 2, 4, 3, x, y, out), GK_E_OVERFLOW, km);
    GK_EXPECT(gk_kernel_matrix(ctx, &k, 2, 2, 3, x, y, xv), GK_E_INVALID_ARGUMENT, km);
    GK_EXPECT(gk_kernel_matmul(ctx, &k, 4, 4, 3, 5, x, y, y, out), GK_E_SHAPE, kmm);
    GK_EXPECT(gk_kernel_matmul(ctx, &k, 4, 4, 3, SIZE_MAX / 2, x, y, y, out), GK_E_OVERFLOW, kmm);
    GK_EXPECT(gk_kernel_matmul(ctx, &k, 2, 2, 3, 1, x, y, y, x), GK_E_INVALID_ARGUMENT, kmm);

    GK_EXPECT(gk_distance_matrix(ctx, (gk_metric)0, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, dm);
    GK_EXPECT(gk_distance_matrix(ctx, (gk_metric)5, 4, 4, 3, x, y, out), GK_E_INVALID_ARGUMENT, dm);
    GK_EXPECT(gk_distance_matrix(ctx, GK_METRIC_COSINE, 4, 4, 3, x, NULL, out),
              GK_E_INVALID_ARGUMENT, dm);
    GK_EXPECT(gk_distance_matrix(ctx, GK_METRIC_COSINE, 2, 2, 3, x, y, y), GK_E_INVALID_ARGUMENT,
              dm);

    GK_EXPECT(gk_knn(ctx, GK_METRIC_EUCLIDEAN, 4, 4, 3, 0, x, y, out, idx), GK_E_INVALID_ARGUMENT,
              kn);
    GK_EXPECT(gk_knn(ctx, GK_METRIC_EUCLIDEAN, 4, 4, 3, 5, x, y, out, idx), GK_E_INVALID_ARGUMENT,
              kn);
    GK_EXPECT(gk_knn(ctx, (gk_metric)9, 4, 4, 3, 2, x, y, out, idx), GK_E_INVALID_ARGUMENT, kn);
    GK_EXPECT(gk_knn(ctx, GK_METRIC_EUCLIDEAN, 4, 4, 3, 2, x, y, out, out), GK_E_DTYPE, kn);
    GK_EXPECT(gk_knn(ctx, GK_METRIC_EUCLIDEAN, 4, 4, 3, 2, x, y, idx, idx), GK_E_INVALID_ARGUMENT,
              kn);
    GK_EXPECT(gk_knn(ctx, GK_METRIC_EUCLIDEAN, 4, 4, 3, 2, x, y64, out, idx), GK_E_DTYPE, kn);
    GK_EXPECT(gk_knn(ctx, GK_METRIC_EUCLIDEAN, 4, 4, 3, 4, x, y, xv, idx), GK_E_SHAPE, kn);
    GK_EXPECT(gk_knn(ctx, GK_METRIC_EUCLIDEAN, 2, 4, 3, 2, x, y, xv, idx), GK_E_INVALID_ARGUMENT,
              kn);

    /* a buffer of another context */
    gk_context *other = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &other));
    gk_buffer *foreign = gk_test_buffer_const(other, GK_FLOAT32, 12, 0.0);
    GK_EXPECT(gk_kernel_matrix(ctx, &k, 4, 4, 3, x, foreign, out), GK_E_CONTEXT_MISMATCH, km);
    gk_buffer_destroy(foreign);
    gk_context_destroy(other);

    GK_EXPECT_SENTINEL(out);
    int64_t *hi = read_int64(idx);
    for (size_t e = 0; e < 16; e++)
        assert_true(hi[e] == -7);
    free(hi);
    gk_buffer_destroy(xv);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(y64);
    gk_buffer_destroy(out);
    gk_buffer_destroy(idx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_init),
        GK_TEST_BOTH(test_kernel_matrix),
        GK_TEST_BOTH(test_distance_matrix),
        GK_TEST_BOTH(test_large),
        GK_TEST_BOTH(test_member_tiles),
        GK_TEST_BOTH(test_no_features),
        GK_TEST_BOTH(test_far_entries),
        GK_TEST_BOTH(test_special_values),
        cmocka_unit_test(test_euclidean_range),
        GK_TEST_BOTH(test_kernel_matmul),
        GK_TEST_BOTH(test_matmul_empty),
        GK_TEST_BOTH(test_knn),
        GK_TEST_BOTH(test_knn_ties),
        GK_TEST_BOTH(test_int64_buffers),
        GK_TEST_BOTH(test_errors),
    };
    return cmocka_run_group_tests_name("kernel", tests, gk_test_group_setup, NULL);
}
