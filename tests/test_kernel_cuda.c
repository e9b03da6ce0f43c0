/* SPDX-License-Identifier: MIT */
/* test_kernel_cuda.c - the CUDA module's kernel family, distances and k-NN where its tiles and
 * selections have edges: sizes around the tile shapes, outputs at odd offsets, k past the
 * register lists and past a tile's columns, ties and NaN across tiles, offset data. */
#include "gk_test.h"
#include "kernel_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};

/* rows x d values in [offset, offset + 1) with every `step`-th row of y a copy of a row of x
 * (step 0: none); x and y malloc'ed. */
static void make_data(gk_dtype t, size_t m, size_t n, size_t d, double offset, size_t step,
                      void **x, void **y)
{
    *x = gk_test_random_array(t, m * d, offset, offset + 1.0);
    *y = gk_test_random_array(t, n * d, offset, offset + 1.0);
    size_t es = gk_test_esize(t);
    for (size_t j = 0; step > 0 && j < n && m > 0; j += step)
        memcpy((char *)*y + j * d * es, (const char *)*x + (j / step % m) * d * es, d * es);
}

/* The kinds other than RBF (rbf_matrix's own tests cover it), with parameters that spread the
 * values for features in [0, 1) or [1e3, 1e3 + 1). */
static int kernel_case(int c, size_t d, double offset, gk_kernel *k)
{
    static const gk_kernel_kind kinds[] = {
        GK_KERNEL_LAPLACIAN, GK_KERNEL_POLYNOMIAL, GK_KERNEL_SIGMOID, GK_KERNEL_LINEAR,
        GK_KERNEL_COSINE,    GK_KERNEL_MATERN,     GK_KERNEL_MATERN,  GK_KERNEL_MATERN};
    if (c >= (int)(sizeof kinds / sizeof kinds[0]))
        return 0;
    gk_kernel_init(k, kinds[c]);
    double dd = d > 0 ? (double)d : 1.0;
    k->gamma = kinds[c] == GK_KERNEL_LAPLACIAN ? 2.0 / dd : 1.0 / dd;
    if (offset != 0.0 && (kinds[c] == GK_KERNEL_POLYNOMIAL || kinds[c] == GK_KERNEL_SIGMOID))
        k->gamma = 1e-6 / dd;
    k->coef0 = 0.5;
    k->degree = kinds[c] == GK_KERNEL_POLYNOMIAL ? 3 : k->degree;
    k->nu = c == 5 ? 0.5 : c == 6 ? 1.5 : 2.5;
    return 1;
}

/* kernel_matrix and distance_matrix on shapes around the tiles (128 x 128 float32, 64 x 64
 * float64), into an output that starts one element into its buffer (no 16-byte stores), with
 * rows of x repeated in y: distances exactly 0 and laplacian and Matern exactly 1 there. */
static void test_matrix_edges(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const size_t shapes[][3] = {{1, 1, 1},     {7, 129, 3},  {65, 63, 17},
                                       {129, 257, 5}, {130, 70, 0}, {200, 131, 64}};
    static const double offsets[] = {0.0, 1e3};
    for (size_t ti = 0; ti < 2; ti++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t oi = 0; oi < 2; oi++) {
                gk_dtype t = dtypes[ti];
                size_t m = shapes[si][0], n = shapes[si][1], d = shapes[si][2];
                void *hx, *hy;
                make_data(t, m, n, d, offsets[oi], 3, &hx, &hy);
                /* d = 0: one element, which the call does not address. */
                gk_buffer *x = d > 0 ? gk_test_buffer_from(ctx, t, m * d, hx)
                                     : gk_test_buffer_const(ctx, t, 1, 0.0);
                gk_buffer *y = d > 0 ? gk_test_buffer_from(ctx, t, n * d, hy)
                                     : gk_test_buffer_const(ctx, t, 1, 0.0);
                gk_buffer *whole = gk_test_buffer_const(ctx, t, m * n + 1, GK_TEST_SENTINEL);
                gk_buffer *out = gk_test_view(whole, 1, m * n);
                char what[160];
                gk_kernel k;
                for (int c = 0; kernel_case(c, d, offsets[oi], &k); c++) {
                    GK_CHECK_OK(gk_kernel_matrix(ctx, &k, m, n, d, x, y, out));
                    void *got = gk_test_read_all(out);
                    snprintf(what, sizeof what, "kernel %d nu %g %s %zux%zux%zu offset %g",
                             (int)k.kind, k.nu, gk_test_dtype_name(t), m, n, d, offsets[oi]);
                    for (size_t i = 0; i < m; i++)
                        for (size_t j = 0; j < n; j++) {
                            gk_ref_sums s = gk_ref_sums_of(t, hx, i, hy, j, d);
                            long double scale, ref = gk_ref_kernel(&k, t, &s, &scale);
                            double v = gk_test_get(t, got, i * n + j);
                            gk_ref_check(t, what, i, j, v, ref, gk_ref_tol(t) * scale);
                            if ((k.kind == GK_KERNEL_LAPLACIAN || k.kind == GK_KERNEL_MATERN) &&
                                gk_ref_rows_equal(t, hx, i, hy, j, d) && v != 1.0)
                                GK_FAIL("%s: entry (%zu,%zu) of identical rows is %.17g", what, i,
                                        j, v);
                        }
                    free(got);
                }
                for (gk_metric mt = GK_METRIC_SQEUCLIDEAN; mt <= GK_METRIC_COSINE; mt++) {
                    GK_CHECK_OK(gk_distance_matrix(ctx, mt, m, n, d, x, y, out));
                    void *got = gk_test_read_all(out);
                    snprintf(what, sizeof what, "metric %d %s %zux%zux%zu offset %g", (int)mt,
                             gk_test_dtype_name(t), m, n, d, offsets[oi]);
                    for (size_t i = 0; i < m; i++)
                        for (size_t j = 0; j < n; j++) {
                            gk_ref_sums s = gk_ref_sums_of(t, hx, i, hy, j, d);
                            long double scale, ref = gk_ref_distance(mt, &s, &scale);
                            double v = gk_test_get(t, got, i * n + j);
                            gk_ref_check(t, what, i, j, v, ref, gk_ref_tol(t) * scale);
                            if (mt != GK_METRIC_COSINE && gk_ref_rows_equal(t, hx, i, hy, j, d) &&
                                v != 0.0)
                                GK_FAIL("%s: entry (%zu,%zu) of identical rows is %.17g", what, i,
                                        j, v);
                        }
                    free(got);
                }
                double first;
                GK_CHECK_OK(gk_buffer_read(whole, 0, 1, &first));
                if (gk_test_get(t, &first, 0) != GK_TEST_SENTINEL)
                    GK_FAIL("the element before the output view was overwritten: %g",
                            gk_test_get(t, &first, 0));
                gk_buffer_destroy(out);
                gk_buffer_destroy(whole);
                gk_buffer_destroy(x);
                gk_buffer_destroy(y);
                free(hx);
                free(hy);
            }
}

/* Cosine on rows of one direction (x and 2x: distance exactly 0, the unit-norm copies being
 * the same), zero rows (distance 1, kernel 0, also against a row with an infinity) and a NaN
 * row (NaN). */
static void test_cosine_special(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t ti = 0; ti < 2; ti++) {
        gk_dtype t = dtypes[ti];
        enum { M = 3, N = 4, D = 5 };
        double hx[M * D], hy[N * D];
        for (int f = 0; f < D; f++) {
            hx[0 * D + f] = 0.25 + f;
            hx[1 * D + f] = 0.0;
            hx[2 * D + f] = f == 2 ? NAN : 1.0;
            hy[0 * D + f] = 2.0 * (0.25 + f);
            hy[1 * D + f] = 0.0;
            hy[2 * D + f] = -(0.25 + f);
            hy[3 * D + f] = f == 4 ? INFINITY : f;
        }
        void *tx = gk_test_alloc(t, M * D), *ty = gk_test_alloc(t, N * D);
        for (int e = 0; e < M * D; e++)
            gk_test_set(t, tx, e, hx[e]);
        for (int e = 0; e < N * D; e++)
            gk_test_set(t, ty, e, hy[e]);
        gk_buffer *x = gk_test_buffer_from(ctx, t, M * D, tx);
        gk_buffer *y = gk_test_buffer_from(ctx, t, N * D, ty);
        gk_buffer *out = gk_test_buffer_const(ctx, t, M * N, GK_TEST_SENTINEL);
        GK_CHECK_OK(gk_distance_matrix(ctx, GK_METRIC_COSINE, M, N, D, x, y, out));
        void *dist = gk_test_read_all(out);
        gk_kernel k;
        gk_kernel_init(&k, GK_KERNEL_COSINE);
        GK_CHECK_OK(gk_kernel_matrix(ctx, &k, M, N, D, x, y, out));
        void *kern = gk_test_read_all(out);
        const char *tn = gk_test_dtype_name(t);
        if (gk_test_get(t, dist, 0) != 0.0)
            GK_FAIL("%s: cosine distance of x and 2x is %.17g, not 0", tn, gk_test_get(t, dist, 0));
        if (fabs(gk_test_get(t, dist, 2) - 2.0) > 1e-6 || gk_test_get(t, dist, 2) > 2.0)
            GK_FAIL("%s: cosine distance of x and -x is %.17g (want 2, at most)", tn,
                    gk_test_get(t, dist, 2));
        for (int j = 0; j < N; j++) {
            if (gk_test_get(t, dist, 1 * N + j) != 1.0 || gk_test_get(t, kern, 1 * N + j) != 0.0)
                GK_FAIL("%s: zero row against row %d: distance %g, kernel %g (want 1, 0)", tn, j,
                        gk_test_get(t, dist, 1 * N + j), gk_test_get(t, kern, 1 * N + j));
            if (!isnan(gk_test_get(t, dist, 2 * N + j)) && j != 1)
                GK_FAIL("%s: NaN row against row %d: distance %g", tn, j,
                        gk_test_get(t, dist, 2 * N + j));
        }
        free(dist);
        free(kern);
        free(tx);
        free(ty);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(out);
    }
}

/* ------------------------------------------------------------------------------------------
 * k-NN
 * ---------------------------------------------------------------------------------------- */

/* The k-th smallest (1-based) of a[0 .. n), reordering a (Hoare's selection). */
static long double select_kth(long double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {
        long double pivot = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                long double s = a[i];
                a[i] = a[j];
                a[j] = s;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            break;
    }
    return a[want];
}

/* Rows of y ordered by a hash of their bytes, then by index: exact copies are neighbours. */
typedef struct row_hash {
    uint64_t h;
    size_t j;
} row_hash;

static int row_hash_cmp(const void *a, const void *b)
{
    const row_hash *p = a, *q = b;
    return p->h != q->h ? (p->h < q->h ? -1 : 1) : (p->j < q->j ? -1 : p->j > q->j);
}

static row_hash *hash_rows(gk_dtype t, const void *y, size_t n, size_t d)
{
    row_hash *r = malloc((n > 0 ? n : 1) * sizeof *r);
    assert_non_null(r);
    size_t bytes = d * gk_test_esize(t);
    for (size_t j = 0; j < n; j++) {
        const unsigned char *p = (const unsigned char *)y + j * bytes;
        uint64_t h = 1469598103934665603ull;
        for (size_t b = 0; b < bytes; b++)
            h = (h ^ p[b]) * 1099511628211ull;
        r[j].h = h;
        r[j].j = j;
    }
    qsort(r, n, sizeof *r, row_hash_cmp);
    return r;
}

/* Runs gk_knn and checks each row: indices valid and distinct, distances within the contract of
 * their true distance, nearest first with equal distances by smaller index, every index within
 * the contract of the true k-th distance, and no exact copy of a returned row of y with a
 * smaller index left out (ties across tiles fall to the smaller index). */
static void knn_case(gk_context *ctx, gk_dtype t, gk_metric metric, size_t m, size_t n, size_t d,
                     size_t k, const void *hx, const void *hy, const char *label)
{
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *dist = gk_test_buffer_const(ctx, t, m * k, GK_TEST_SENTINEL);
    gk_buffer *index = NULL;
    GK_CHECK_OK(gk_buffer_create(ctx, GK_INT64, m * k, &index));
    GK_CHECK_OK(gk_knn(ctx, metric, m, n, d, k, x, y, dist, index));
    void *hd = gk_test_read_all(dist);
    row_hash *groups = hash_rows(t, hy, n, d);
    int64_t *hi = malloc(m * k * sizeof *hi);
    long double *truth = malloc(n * sizeof *truth), *sorted = malloc(n * sizeof *sorted);
    unsigned char *seen = malloc(n);
    assert_non_null(hi);
    assert_non_null(truth);
    assert_non_null(sorted);
    assert_non_null(seen);
    GK_CHECK_OK(gk_buffer_read(index, 0, m * k, hi));
    char what[200];
    snprintf(what, sizeof what, "%s: knn metric %d %s %zux%zux%zu k %zu", label, (int)metric,
             gk_test_dtype_name(t), m, n, d, k);
    for (size_t i = 0; i < m; i++) {
        size_t finite = 0;
        for (size_t j = 0; j < n; j++) {
            gk_ref_sums s = gk_ref_sums_of(t, hx, i, hy, j, d);
            long double scale;
            truth[j] = gk_ref_distance(metric, &s, &scale);
            if (!isnan(truth[j]))
                sorted[finite++] = truth[j];
        }
        /* The true k-th distance among the finite ones (NaN distances come last). */
        long double kth = finite >= k ? select_kth(sorted, finite, k) : NAN;
        memset(seen, 0, n);
        for (size_t e = 0; e < k; e++) {
            int64_t j = hi[i * k + e];
            double v = gk_test_get(t, hd, i * k + e);
            if (j < 0 || (size_t)j >= n || seen[j])
                GK_FAIL("%s: row %zu neighbour %zu has index %lld (out of range or repeated)", what,
                        i, e, (long long)j);
            seen[j] = 1;
            if (isnan(truth[j]) && finite >= k)
                GK_FAIL("%s: row %zu neighbour %zu (index %lld) is NaN, but %zu rows are finite",
                        what, i, e, (long long)j, finite);
            long double scale = gk_ref_distance_scale(metric, truth[j]);
            gk_ref_check(t, what, i, (size_t)j, v, truth[j], gk_ref_tol(t) * scale);
            if (!isnan(kth) && !isnan(truth[j]) &&
                truth[j] > kth + 2 * gk_ref_tol(t) * gk_ref_distance_scale(metric, kth))
                GK_FAIL("%s: row %zu neighbour %zu (index %lld) is at %.17Lg, past the k-th "
                        "distance %.17Lg",
                        what, i, e, (long long)j, truth[j], kth);
            if (e > 0) {
                double pv = gk_test_get(t, hd, i * k + e - 1);
                int64_t pj = hi[i * k + e - 1];
                int before = isnan(v) ? (!isnan(pv) || pj < j) : (pv < v || (pv == v && pj < j));
                if (!before)
                    GK_FAIL("%s: row %zu neighbours %zu, %zu out of order: (%.17g, %lld) then "
                            "(%.17g, %lld)",
                            what, i, e - 1, e, pv, (long long)pj, v, (long long)j);
            }
        }
        /* Within each run of equal hashes (index order), an unreturned row before a returned
         * copy of it lost a tie it should have won; among NaN distances, which tie too, an
         * unreturned NaN before a returned one. */
        for (size_t a = 0; a < n;) {
            size_t b = a;
            while (b < n && groups[b].h == groups[a].h)
                b++;
            for (size_t p = a; p < b; p++)
                for (size_t q = p + 1; q < b; q++)
                    if (!seen[groups[p].j] && seen[groups[q].j] && !isnan(truth[groups[q].j]) &&
                        gk_ref_rows_equal(t, hy, groups[p].j, hy, groups[q].j, d))
                        GK_FAIL("%s: row %zu returned index %zu but not %zu, an identical row",
                                what, i, groups[q].j, groups[p].j);
            a = b;
        }
        int64_t last_nan = -1;
        for (size_t e = 0; e < k; e++)
            if (isnan(gk_test_get(t, hd, i * k + e)) && hi[i * k + e] > last_nan)
                last_nan = hi[i * k + e];
        for (int64_t j2 = 0; j2 < last_nan; j2++)
            if (isnan(truth[j2]) && !seen[j2])
                GK_FAIL("%s: row %zu returned NaN distances up to index %lld but not index %lld",
                        what, i, (long long)last_nan, (long long)j2);
    }
    free(groups);
    free(hd);
    free(hi);
    free(truth);
    free(sorted);
    free(seen);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(dist);
    gk_buffer_destroy(index);
}

/* y of n rows where rows 5, 8197 and 16389 (one in each tile of 8192 columns) and 6, 7 are the
 * first row of x: its nearest are at distance 0, tied, across tiles. */
static void tie_rows(gk_dtype t, void *x, void *y, size_t n, size_t d)
{
    static const size_t copies[] = {5, 6, 7, 8197, 16389};
    size_t es = gk_test_esize(t);
    for (size_t c = 0; c < sizeof copies / sizeof copies[0]; c++)
        if (copies[c] < n)
            memcpy((char *)y + copies[c] * d * es, x, d * es);
}

/* Every k from the register lists (up to 32) to the sort (33 and up), past a tile's 8192
 * columns, and k = n, on rows with exact ties across tiles. */
static void test_knn_k_range(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const size_t ks[] = {1, 2, 9, 16, 17, 32, 33, 300, 8193, 20000};
    const size_t m = 9, n = 20000, d = 3;
    for (size_t ti = 0; ti < 2; ti++) {
        gk_dtype t = dtypes[ti];
        void *hx, *hy;
        make_data(t, m, n, d, 0.0, 0, &hx, &hy);
        tie_rows(t, hx, hy, n, d);
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            knn_case(ctx, t, GK_METRIC_EUCLIDEAN, m, n, d, ks[ki], hx, hy, "k range");
        free(hx);
        free(hy);
    }
}

/* Every metric, on data offset by 1e3 (where the expanded form would cancel), with more rows of
 * x than one tile holds in both selections. */
static void test_knn_metrics_offset(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = 2100, n = 8200, d = 4;
    void *hx, *hy;
    make_data(GK_FLOAT32, m, n, d, 1e3, 97, &hx, &hy);
    for (gk_metric mt = GK_METRIC_SQEUCLIDEAN; mt <= GK_METRIC_COSINE; mt++) {
        knn_case(ctx, GK_FLOAT32, mt, m, n, d, 7, hx, hy, "offset");
        knn_case(ctx, GK_FLOAT32, mt, m, n, d, 100, hx, hy, "offset");
    }
    free(hx);
    free(hy);
}

/* NaN rows: in y they come after every finite distance; a row of x with a NaN has every
 * distance NaN, and its neighbours are then the first k rows of y, in order. */
static void test_knn_nan(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = 4, n = 9000, d = 6;
    static const size_t ks[] = {5, 40};
    for (size_t ti = 0; ti < 2; ti++) {
        gk_dtype t = dtypes[ti];
        void *hx, *hy;
        make_data(t, m, n, d, 0.0, 0, &hx, &hy);
        for (size_t j = 0; j < n; j += 2)
            gk_test_set(t, hy, j * d + j % d, NAN);
        gk_test_set(t, hx, 1 * d + 2, NAN);
        for (size_t ki = 0; ki < 2; ki++) {
            size_t k = ks[ki];
            knn_case(ctx, t, GK_METRIC_SQEUCLIDEAN, m, n, d, k, hx, hy, "NaN");
            /* Half the rows of y NaN and k past the finite ones: some NaN neighbours. */
            knn_case(ctx, t, GK_METRIC_MANHATTAN, m, k + k / 2 + 2, d, k + k / 4 + 1, hx, hy,
                     "NaN neighbours");
        }
        free(hx);
        free(hy);
    }
}

/* ------------------------------------------------------------------------------------------
 * kernel_matmul
 * ---------------------------------------------------------------------------------------- */

/* out against sum_j K_ij w_jc within 1e-5 sum_j |K~_ij| |w_jc| (1e-12 float64). */
static void matmul_case(gk_context *ctx, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                        size_t d, size_t r)
{
    void *hx, *hy;
    make_data(t, m, n, d, 0.0, 5, &hx, &hy);
    void *hw = gk_test_random_array(t, n * r, -1.0, 1.0);
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *w = gk_test_buffer_from(ctx, t, n * r, hw);
    gk_buffer *out = gk_test_buffer_const(ctx, t, m * r, GK_TEST_SENTINEL);
    GK_CHECK_OK(gk_kernel_matmul(ctx, k, m, n, d, r, x, y, w, out));
    void *got = gk_test_read_all(out);
    long double *ref = calloc(r, sizeof *ref), *bound = calloc(r, sizeof *bound);
    assert_non_null(ref);
    assert_non_null(bound);
    char what[160];
    snprintf(what, sizeof what, "kernel_matmul kind %d %s %zux%zux%zu r %zu", (int)k->kind,
             gk_test_dtype_name(t), m, n, d, r);
    for (size_t i = 0; i < m; i++) {
        for (size_t c = 0; c < r; c++)
            ref[c] = bound[c] = 0;
        for (size_t j = 0; j < n; j++) {
            gk_ref_sums s = gk_ref_sums_of(t, hx, i, hy, j, d);
            long double scale, kv = gk_ref_kernel(k, t, &s, &scale);
            long double kb = scale > fabsl(kv) ? scale : fabsl(kv);
            for (size_t c = 0; c < r; c++) {
                long double wv = gk_test_get(t, hw, j * r + c);
                ref[c] += kv * wv;
                bound[c] += kb * fabsl(wv);
            }
        }
        for (size_t c = 0; c < r; c++)
            gk_ref_check(t, what, i, c, gk_test_get(t, got, i * r + c), ref[c],
                         gk_ref_tol(t) * bound[c]);
    }
    free(ref);
    free(bound);
    free(got);
    free(hx);
    free(hy);
    free(hw);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(w);
    gk_buffer_destroy(out);
}

/* Every kind with several right-hand sides on a small shape; then more rows and columns than
 * one tile of K holds (1024 x 16384 float32), the Gaussian kernel's tiles being rbf_matrix's. */
static void test_matmul_tiles(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_kernel k;
    for (size_t ti = 0; ti < 2; ti++)
        for (int c = 0; kernel_case(c, 9, 0.0, &k); c++)
            matmul_case(ctx, dtypes[ti], &k, 70, 300, 9, 17);
    gk_kernel_init(&k, GK_KERNEL_RBF);
    k.gamma = 0.7;
    matmul_case(ctx, GK_FLOAT64, &k, 33, 200, 6, 64);
    matmul_case(ctx, GK_FLOAT32, &k, 1030, 16400, 3, 4);
    gk_kernel_init(&k, GK_KERNEL_LAPLACIAN);
    matmul_case(ctx, GK_FLOAT32, &k, 1030, 16400, 3, 2);
}

/* A gamma so small that ||x - y||^2 overflows float32 where gamma ||x - y||^2 does not: the
 * Matern kernel, and the Gaussian kernel in kernel_matmul (whose tiles the core does not scale
 * as it scales rbf_matrix), still give the kernel's value. */
static void test_tiny_gamma(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = 5, n = 7, d = 40, r = 3;
    const gk_dtype t = GK_FLOAT32;
    void *hx = gk_test_random_array(t, m * d, 0.0, 0x1p63);
    void *hy = gk_test_random_array(t, n * d, 0.0, 0x1p63);
    void *hw = gk_test_random_array(t, n * r, -1.0, 1.0);
    memcpy((float *)hy + 2 * d, hx, d * sizeof(float));
    gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
    gk_buffer *w = gk_test_buffer_from(ctx, t, n * r, hw);
    gk_buffer *out = gk_test_buffer_const(ctx, t, m * n, GK_TEST_SENTINEL);
    gk_kernel k;
    gk_kernel_init(&k, GK_KERNEL_MATERN);
    k.gamma = 1e-38;
    GK_CHECK_OK(gk_kernel_matrix(ctx, &k, m, n, d, x, y, out));
    void *got = gk_test_read_all(out);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            gk_ref_sums sm = gk_ref_sums_of(t, hx, i, hy, j, d);
            long double scale, ref = gk_ref_kernel(&k, t, &sm, &scale);
            gk_ref_check(t, "matern, gamma 1e-38", i, j, gk_test_get(t, got, i * n + j), ref,
                         1e-5L);
        }
    free(got);
    gk_kernel_init(&k, GK_KERNEL_RBF);
    k.gamma = 1e-38;
    GK_CHECK_OK(gk_kernel_matmul(ctx, &k, m, n, d, r, x, y, w, out));
    got = gk_test_read_all(out);
    for (size_t i = 0; i < m; i++)
        for (size_t c = 0; c < r; c++) {
            long double ref = 0, bound = 0;
            for (size_t j = 0; j < n; j++) {
                gk_ref_sums sm = gk_ref_sums_of(t, hx, i, hy, j, d);
                long double scale, kv = gk_ref_kernel(&k, t, &sm, &scale);
                long double wv = gk_test_get(t, hw, j * r + c);
                ref += kv * wv;
                bound += fabsl(wv);
            }
            gk_ref_check(t, "rbf kernel_matmul, gamma 1e-38", i, c, gk_test_get(t, got, i * r + c),
                         ref, 1e-5L * bound);
        }
    free(got);
    free(hx);
    free(hy);
    free(hw);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(w);
    gk_buffer_destroy(out);
}

/* Euclidean distances whose squares overflow the dtype while the distances do not (rows near
 * 2^70 in float32, 2^600 in float64), in distance_matrix and knn. */
static void test_euclidean_overflow(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t m = 3, n = 6, d = 5;
    for (size_t ti = 0; ti < 2; ti++) {
        gk_dtype t = dtypes[ti];
        double big = t == GK_FLOAT32 ? 0x1p70 : 0x1p600;
        void *hx = gk_test_random_array(t, m * d, -big, big);
        void *hy = gk_test_random_array(t, n * d, -big, big);
        memcpy((char *)hy + 4 * d * gk_test_esize(t), hx, d * gk_test_esize(t));
        gk_buffer *x = gk_test_buffer_from(ctx, t, m * d, hx);
        gk_buffer *y = gk_test_buffer_from(ctx, t, n * d, hy);
        gk_buffer *out = gk_test_buffer_const(ctx, t, m * n, GK_TEST_SENTINEL);
        GK_CHECK_OK(gk_distance_matrix(ctx, GK_METRIC_EUCLIDEAN, m, n, d, x, y, out));
        void *got = gk_test_read_all(out);
        char what[64];
        snprintf(what, sizeof what, "euclidean near overflow %s", gk_test_dtype_name(t));
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                gk_ref_sums sm = gk_ref_sums_of(t, hx, i, hy, j, d);
                long double scale, ref = gk_ref_distance(GK_METRIC_EUCLIDEAN, &sm, &scale);
                gk_ref_check(t, what, i, j, gk_test_get(t, got, i * n + j), ref,
                             gk_ref_tol(t) * scale);
            }
        free(got);
        knn_case(ctx, t, GK_METRIC_EUCLIDEAN, m, n, d, 2, hx, hy, what);
        free(hx);
        free(hy);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(out);
    }
}

int main(void)
{
#define GK_CUDA_ONLY(fn)                                                                           \
    {                                                                                              \
#fn "/cuda", fn, gk_test_setup, gk_test_teardown, &gk_test_cuda                            \
    }
    const struct CMUnitTest tests[] = {
        GK_CUDA_ONLY(test_matrix_edges), GK_CUDA_ONLY(test_cosine_special),
        GK_CUDA_ONLY(test_knn_k_range),  GK_CUDA_ONLY(test_knn_metrics_offset),
        GK_CUDA_ONLY(test_knn_nan),      GK_CUDA_ONLY(test_matmul_tiles),
        GK_CUDA_ONLY(test_tiny_gamma),   GK_CUDA_ONLY(test_euclidean_overflow),
    };
#undef GK_CUDA_ONLY
    return cmocka_run_group_tests_name("kernel_cuda", tests, gk_test_group_setup, NULL);
}
