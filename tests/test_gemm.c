/* SPDX-License-Identifier: MIT */
/* test_gemm.c - gk_gemm: transposes, padded leading dimensions, alpha/beta, k = 0, errors. */
#include "gk_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cblas.h>
#include <pthread.h>

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};

/* Value in the padding of C (beyond each row's n): must never be written. */
#define PAD_C 4242.125

/* A row-major matrix stored in exactly the elements it addresses, (rows - 1) * ld + cols, with
 * a host copy; padding holds `pad`. */
typedef struct mat {
    size_t rows, cols, ld, count;
    void *h;
    gk_buffer *b;
} mat;

static size_t addressed(size_t rows, size_t cols, size_t ld)
{
    return rows && cols ? (rows - 1) * ld + cols : 0;
}

static void mat_make(gk_context *ctx, gk_dtype t, mat *M, size_t rows, size_t cols, size_t ld,
                     double pad, double lo, double hi)
{
    M->rows = rows;
    M->cols = cols;
    M->ld = ld;
    M->count = addressed(rows, cols, ld);
    M->h = gk_test_alloc(t, M->count);
    for (size_t i = 0; i < M->count; i++)
        gk_test_set(t, M->h, i, i % ld < cols ? gk_test_uniform(lo, hi) : pad);
    M->b = gk_test_buffer_from(ctx, t, M->count, M->h);
}

static void mat_free(mat *M)
{
    gk_buffer_destroy(M->b);
    free(M->h);
    M->b = NULL;
    M->h = NULL;
}

static double op_at(gk_dtype t, const mat *M, gk_transpose tr, size_t i, size_t j)
{
    return tr == GK_TRANS ? gk_test_get(t, M->h, j * M->ld + i)
                          : gk_test_get(t, M->h, i * M->ld + j);
}

/* Checks C (read back) against alpha op(A) op(B) + beta C0 in long double by the contract's
 * Frobenius bound, and that C's padding still holds its old bits. */
static void check_gemm(gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m, size_t n, size_t k,
                       double alpha, const mat *A, const mat *B, double beta, const mat *C0,
                       double tol, const char *what)
{
    void *got = gk_test_read_all(C0->b);
    double ar = gk_test_round(t, alpha), br = gk_test_round(t, beta);
    long double diff2 = 0, scale2 = 0;
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            gk_test_sum acc = {0, 0};
            long double mag = 0;
            for (size_t l = 0; l < k; l++) {
                long double p = (long double)op_at(t, A, ta, i, l) * op_at(t, B, tb, l, j);
                gk_test_sum_add(&acc, p);
                mag += fabsl(p);
            }
            long double ref = ar * gk_test_sum_value(&acc), scale = fabsl((long double)ar) * mag;
            if (br != 0.0) {
                long double c0 = gk_test_get(t, C0->h, i * C0->ld + j);
                ref += br * c0;
                scale += fabsl(br * c0);
            }
            long double g = gk_test_get(t, got, i * C0->ld + j);
            if (!isfinite((double)g))
                GK_FAIL("%s %s gemm ta=%d tb=%d m=%zu n=%zu k=%zu: C[%zu,%zu] = %Lg", what,
                        gk_test_dtype_name(t), ta, tb, m, n, k, i, j, g);
            diff2 += (g - ref) * (g - ref);
            scale2 += scale * scale;
        }
    }
    if (!(sqrtl(diff2) <= tol * sqrtl(scale2)))
        GK_FAIL("%s %s gemm ta=%d tb=%d m=%zu n=%zu k=%zu alpha=%g beta=%g: ||C-C64|| = %Lg > "
                "%g * %Lg",
                what, gk_test_dtype_name(t), ta, tb, m, n, k, alpha, beta, sqrtl(diff2), tol,
                sqrtl(scale2));
    size_t es = gk_test_esize(t);
    for (size_t i = 0; i < C0->count; i++)
        if (i % C0->ld >= n && memcmp((char *)got + i * es, (char *)C0->h + i * es, es) != 0)
            GK_FAIL("%s gemm m=%zu n=%zu ldc=%zu: padding element %zu was written (%g)", what, m, n,
                    C0->ld, i, gk_test_get(t, got, i));
    free(got);
}

static double contract_tol(gk_dtype t)
{
    return t == GK_FLOAT32 ? 1e-5 : 1e-13;
}

/* One gemm on fresh random operands with leading dimensions padded by pa, pb, pc. */
static void one_gemm(gk_context *ctx, gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m,
                     size_t n, size_t k, size_t pa, size_t pb, size_t pc, double alpha, double beta,
                     double c_init, double tol, const char *what)
{
    mat A, B, C;
    size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    mat_make(ctx, t, &A, ar, ac, ac + pa, NAN, -1, 1);
    mat_make(ctx, t, &B, br, bc, bc + pb, NAN, -1, 1);
    mat_make(ctx, t, &C, m, n, n + pc, PAD_C, -1, 1);
    if (!isfinite(c_init)) {
        for (size_t i = 0; i < C.count; i++)
            if (i % C.ld < n)
                gk_test_set(t, C.h, i, c_init);
        GK_CHECK_OK(gk_buffer_write(C.b, 0, C.count, C.h));
    }
    GK_CHECK_OK(gk_gemm(ctx, ta, tb, m, n, k, alpha, A.b, A.ld, B.b, B.ld, beta, C.b, C.ld));
    check_gemm(t, ta, tb, m, n, k, alpha, &A, &B, beta, &C, tol, what);
    /* inputs untouched */
    GK_EXPECT_CONTENTS(A.b, A.h);
    GK_EXPECT_CONTENTS(B.b, B.h);
    mat_free(&A);
    mat_free(&B);
    mat_free(&C);
}

static const size_t shapes[][3] = {{1, 1, 1},       {7, 7, 7},    {33, 65, 7},  {65, 33, 130},
                                   {130, 130, 130}, {1, 130, 33}, {130, 1, 65}, {7, 33, 1},
                                   {65, 7, 33},     {33, 1, 130}, {64, 64, 64}};

static void test_shapes_transposes(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            for (int tr = 0; tr < 4; tr++) {
                gk_transpose ta = (gk_transpose)(tr & 1), tb = (gk_transpose)(tr >> 1);
                /* tight leading dimensions, then padded ones */
                for (int padded = 0; padded < 2; padded++) {
                    size_t pa = padded ? gk_test_rand_size(1, 5) : 0;
                    size_t pb = padded ? gk_test_rand_size(1, 5) : 0;
                    size_t pc = padded ? gk_test_rand_size(1, 5) : 0;
                    double alpha = gk_test_uniform(-2, 2), beta = gk_test_uniform(-2, 2);
                    one_gemm(ctx, t, ta, tb, shapes[s][0], shapes[s][1], shapes[s][2], pa, pb, pc,
                             alpha, beta, 0.0, contract_tol(t), "random");
                }
            }
        }
    }
}

/* The CPU backend sizes OpenBLAS's threads to the op's team for each gemm (cpu_gemm.c): contexts
 * of 2, 5 and 16 threads (as many as the machine has free) on shapes past the size where a team
 * starts (2^18 multiply-adds), m or n below the team, every transpose, padded leading
 * dimensions. */
static void test_team_sizes(void **state)
{
    (void)state;
    static const size_t tile_shapes[][3] = {
        {3, 700, 130}, {700, 3, 130}, {1, 2100, 130}, {129, 257, 33}, {131, 131, 131}};
    static const int teams[] = {2, 5, 16};
    for (size_t ti = 0; ti < sizeof teams / sizeof teams[0]; ti++) {
        gk_context_options o;
        gk_context_options_init(&o);
        o.backend = GK_BACKEND_CPU;
        o.cpu_threads = teams[ti];
        gk_context *ctx = NULL;
        GK_CHECK_OK(gk_context_create_ex(&o, &ctx));
        for (size_t di = 0; di < 2; di++)
            for (size_t s = 0; s < sizeof tile_shapes / sizeof tile_shapes[0]; s++)
                for (int tr = 0; tr < 4; tr++)
                    one_gemm(ctx, dtypes[di], (gk_transpose)(tr & 1), (gk_transpose)(tr >> 1),
                             tile_shapes[s][0], tile_shapes[s][1], tile_shapes[s][2],
                             gk_test_rand_size(0, 3), gk_test_rand_size(0, 3),
                             gk_test_rand_size(1, 3), gk_test_uniform(-2, 2),
                             gk_test_uniform(-2, 2), 0.0, contract_tol(dtypes[di]), "team sizes");
        gk_context_destroy(ctx);
    }
}

typedef struct gemm_worker {
    int threads;
    gk_status status[3];
} gemm_worker;

/* Three 160^3 float64 gemms on a context of w->threads threads. */
static void *gemm_worker_run(void *arg)
{
    gemm_worker *w = arg;
    enum { N = 160 };
    gk_context_options o;
    gk_context_options_init(&o);
    o.backend = GK_BACKEND_CPU;
    o.cpu_threads = w->threads;
    gk_context *ctx = NULL;
    gk_buffer *a = NULL, *c = NULL;
    for (int i = 0; i < 3; i++)
        w->status[i] = GK_E_INTERNAL;
    if (gk_context_create_ex(&o, &ctx) != GK_OK || gk_buffer_create(ctx, GK_FLOAT64, N * N, &a) ||
        gk_buffer_create(ctx, GK_FLOAT64, N * N, &c) || gk_fill(ctx, 0.5, a) != GK_OK)
        goto out;
    for (int i = 0; i < 3; i++)
        w->status[i] = gk_gemm(ctx, GK_NO_TRANS, GK_TRANS, N, N, N, 1.0, a, N, a, N, 0.0, c, N);
out:
    gk_buffer_destroy(a);
    gk_buffer_destroy(c);
    gk_context_destroy(ctx);
    return NULL;
}

/* OpenBLAS's thread count is the program's: the CPU backend changes it only while a gemm of its
 * own runs and puts the program's value back after the last one, also when contexts of
 * different sizes run gemms at the same time. */
static void test_openblas_setting_restored(void **state)
{
    (void)state;
    if (openblas_get_parallel() != 1)
        skip(); /* the OpenMP and serial builds of OpenBLAS are not touched */
    int before = openblas_get_num_threads();
    openblas_set_num_threads(3);
    int mine = openblas_get_num_threads();
    gemm_worker one = {.threads = 2};
    gemm_worker_run(&one);
    int after_one = openblas_get_num_threads();
    gemm_worker w[4] = {{.threads = 1}, {.threads = 2}, {.threads = 5}, {.threads = 16}};
    pthread_t th[4];
    int started = 0;
    for (int i = 0; i < 4; i++)
        started += pthread_create(&th[started], NULL, gemm_worker_run, &w[started]) == 0;
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    int after_many = openblas_get_num_threads();
    openblas_set_num_threads(before);
    for (int i = 0; i < 3; i++)
        assert_int_equal(one.status[i], GK_OK);
    for (int i = 0; i < started; i++)
        for (int j = 0; j < 3; j++)
            assert_int_equal(w[i].status[j], GK_OK);
    assert_int_equal(started, 4);
    if (after_one != mine || after_many != mine)
        fail_msg("OpenBLAS's thread count set to %d before: %d after one gemm on a 2-thread "
                 "context, %d after concurrent gemms on 1, 2, 5 and 16 threads",
                 mine, after_one, after_many);
}

/* alpha = 1, beta = 1 and beta = 0 on C full of NaN: beta = 0 does not read C. */
static void test_alpha_beta(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        for (int tr = 0; tr < 4; tr++) {
            gk_transpose ta = (gk_transpose)(tr & 1), tb = (gk_transpose)(tr >> 1);
            one_gemm(ctx, t, ta, tb, 33, 65, 7, 2, 3, 1, 1.0, 1.0, 0.0, contract_tol(t), "a=1 b=1");
            one_gemm(ctx, t, ta, tb, 65, 33, 130, 1, 0, 4, 0.5, 0.0, NAN, contract_tol(t),
                     "beta=0 C=NaN");
            one_gemm(ctx, t, ta, tb, 7, 7, 7, 0, 0, 0, -1.5, 0.0, INFINITY, contract_tol(t),
                     "beta=0 C=inf");
            one_gemm(ctx, t, ta, tb, 7, 7, 7, 0, 0, 0, 0.0, 2.0, 0.0, contract_tol(t), "alpha=0");
        }
    }
}

/* k = 0 scales C by beta (and beta = 0 clears even a NaN C); m or n = 0 does nothing. */
static void test_degenerate(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        for (int tr = 0; tr < 4; tr++) {
            gk_transpose ta = (gk_transpose)(tr & 1), tb = (gk_transpose)(tr >> 1);
            one_gemm(ctx, t, ta, tb, 7, 33, 0, 1, 1, 3, 1.5, 0.75, 0.0, contract_tol(t), "k=0");
            one_gemm(ctx, t, ta, tb, 7, 33, 0, 1, 1, 3, 1.5, 0.0, NAN, contract_tol(t),
                     "k=0 beta=0 C=NaN");
        }
        /* m = 0 or n = 0: a valid no-op on empty buffers, C untouched */
        gk_buffer *a = NULL, *b = NULL;
        GK_CHECK_OK(gk_buffer_create(ctx, t, 0, &a));
        GK_CHECK_OK(gk_buffer_create(ctx, t, 0, &b));
        gk_buffer *c = gk_test_buffer_const(ctx, t, 8, GK_TEST_SENTINEL);
        gk_buffer *a7 = gk_test_buffer_const(ctx, t, 7 * 3, 1.0);
        gk_buffer *b7 = gk_test_buffer_const(ctx, t, 7 * 3, 1.0);
        GK_CHECK_OK(gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, 0, 3, 7, 1.0, a, 7, b7, 3, 0.0, c, 3));
        GK_CHECK_OK(gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, 3, 0, 7, 1.0, a7, 7, b, 1, 0.0, c, 1));
        GK_CHECK_OK(gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, 0, 0, 0, 1.0, a, 1, b, 1, 0.0, c, 1));
        GK_EXPECT_SENTINEL(c);
        gk_buffer_destroy(a);
        gk_buffer_destroy(b);
        gk_buffer_destroy(c);
        gk_buffer_destroy(a7);
        gk_buffer_destroy(b7);
    }
}

/* Inputs may alias each other, and C may be a disjoint view of the inputs' parent. */
static void test_allowed_sharing(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t m = 33, k = 20, es = gk_test_esize(t);
        /* C = A A^T with A and B the same buffer */
        mat A, C;
        mat_make(ctx, t, &A, m, k, k, NAN, -1, 1);
        mat_make(ctx, t, &C, m, m, m, PAD_C, -1, 1);
        GK_CHECK_OK(gk_gemm(ctx, GK_NO_TRANS, GK_TRANS, m, m, k, 1.0, A.b, k, A.b, k, 0.0, C.b, m));
        check_gemm(t, GK_NO_TRANS, GK_TRANS, m, m, k, 1.0, &A, &A, 0.0, &C, contract_tol(t),
                   "A A^T");
        /* A, B and C side by side in one parent */
        size_t na = m * k, nc = m * m;
        void *hp = NULL;
        gk_buffer *p = gk_test_buffer_random(ctx, t, na + nc + 3, -1, 1, &hp);
        gk_buffer *av = gk_test_view(p, 0, na);
        gk_buffer *cv = gk_test_view(p, na + 3, nc);
        mat Av = {m, k, k, na, hp, av};
        mat Cv = {m, m, m, nc, (char *)hp + (na + 3) * es, cv};
        GK_CHECK_OK(gk_gemm(ctx, GK_NO_TRANS, GK_TRANS, m, m, k, 2.0, av, k, av, k, -1.0, cv, m));
        check_gemm(t, GK_NO_TRANS, GK_TRANS, m, m, k, 2.0, &Av, &Av, -1.0, &Cv, contract_tol(t),
                   "disjoint views");
        /* the 3 elements between A and C are untouched */
        void *all = gk_test_read_all(p);
        assert_memory_equal((char *)all + na * es, (char *)hp + na * es, 3 * es);
        free(all);
        gk_buffer_destroy(av);
        gk_buffer_destroy(cv);
        gk_buffer_destroy(p);
        free(hp);
        mat_free(&A);
        mat_free(&C);
    }
}

/* Host-wrapped operands (staged by CUDA, direct on CPU). */
static void test_host_wrapped(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t m = 65, n = 33, k = 130;
        mat A, B, C;
        mat_make(ctx, t, &A, m, k, k, NAN, -1, 1);
        mat_make(ctx, t, &B, k, n, n + 1, NAN, -1, 1);
        mat_make(ctx, t, &C, m, n, n + 2, PAD_C, -1, 1);
        gk_buffer *wa = NULL, *wc = NULL;
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, A.count, A.h, &wa));
        void *hc = gk_test_alloc(t, C.count);
        memcpy(hc, C.h, C.count * gk_test_esize(t));
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, C.count, hc, &wc));
        GK_CHECK_OK(
            gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, m, n, k, 1.0, wa, k, B.b, B.ld, 0.5, wc, C.ld));
        /* check_gemm reads C.b: point it at the wrapped result */
        gk_buffer *device_c = C.b;
        C.b = wc;
        check_gemm(t, GK_NO_TRANS, GK_NO_TRANS, m, n, k, 1.0, &A, &B, 0.5, &C, contract_tol(t),
                   "host-wrapped");
        C.b = device_c;
        gk_buffer_destroy(wa);
        gk_buffer_destroy(wc);
        free(hc);
        mat_free(&A);
        mat_free(&B);
        mat_free(&C);
    }
}

/* With GK_FLAG_ALLOW_TF32, float32 may use TF32 (about 1e-3 relative); float64 is unaffected. */
static void test_tf32_flag(void **state)
{
    (void)gk_test_context(state);
    gk_context_options o;
    gk_context_options_init(&o);
    o.backend = gk_test_backend_of(state);
    o.flags = GK_FLAG_ALLOW_TF32;
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create_ex(&o, &ctx));
    one_gemm(ctx, GK_FLOAT32, GK_NO_TRANS, GK_TRANS, 130, 130, 130, 0, 0, 0, 1.0, 0.0, 0.0, 3e-3,
             "tf32");
    one_gemm(ctx, GK_FLOAT64, GK_NO_TRANS, GK_TRANS, 130, 130, 130, 0, 0, 0, 1.0, 0.0, 0.0,
             contract_tol(GK_FLOAT64), "tf32 flag, f64");
    gk_context_destroy(ctx);
}

/* A leading dimension above INT_MAX (what OpenBLAS's 32-bit blasint holds): matrices of one
 * stored row address only their columns, so small buffers do, on every backend. At eaa3a2f the
 * CPU backend returned GK_E_UNSUPPORTED, which gk_gemm does not document. */
static void test_huge_ld_one_row(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t huge = ((size_t)1 << 31) + 3;
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        /* m = 1: A (not transposed) and C have one row; n = 1: so has B transposed */
        one_gemm(ctx, t, GK_NO_TRANS, GK_TRANS, 1, 1, 33, huge - 33, huge - 33, huge - 1, 1.5, 0.5,
                 0.0, contract_tol(t), "huge lda, ldb, ldc, one row each");
        /* k = 1: A transposed and B not transposed have one row */
        one_gemm(ctx, t, GK_TRANS, GK_NO_TRANS, 7, 5, 1, huge - 7, huge - 5, 0, 1.0, 0.0, 0.0,
                 contract_tol(t), "huge lda, ldb, k = 1");
        one_gemm(ctx, t, GK_NO_TRANS, GK_NO_TRANS, 1, 33, 7, huge, 1, huge, -1.0, 2.0, 0.0,
                 contract_tol(t), "huge lda, ldc, m = 1");
    }
}

/* Several rows of ld = 2^31 + 1 elements, in sparse anonymous memory wrapped without a copy
 * (the CPU only: CUDA would stage the whole extent, gigabytes). Only the addressed elements
 * are touched; the reference is computed here, element by element. */
static void *sparse_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void test_huge_ld_rows(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t ld = ((size_t)1 << 31) + 1, m = 3, n = 2, k = 3;
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t es = gk_test_esize(t);
        for (int tr = 0; tr < 4; tr++) {
            gk_transpose ta = tr & 1 ? GK_TRANS : GK_NO_TRANS, tb = tr & 2 ? GK_TRANS : GK_NO_TRANS;
            size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
            size_t na = (ar - 1) * ld + ac, nb = (br - 1) * ld + bc, nc = (m - 1) * ld + n;
            void *a = sparse_map(na * es), *b = sparse_map(nb * es), *c = sparse_map(nc * es);
            if (a == NULL || b == NULL || c == NULL) {
                print_message("[ SKIP WHY ] cannot map %zu + %zu + %zu bytes of sparse memory\n",
                              na * es, nb * es, nc * es);
                skip();
            }
            for (size_t i = 0; i < ar; i++)
                for (size_t j = 0; j < ac; j++)
                    gk_test_set(t, a, i * ld + j, gk_test_uniform(-1, 1));
            for (size_t i = 0; i < br; i++)
                for (size_t j = 0; j < bc; j++)
                    gk_test_set(t, b, i * ld + j, gk_test_uniform(-1, 1));
            double c0[3][2];
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    c0[i][j] = gk_test_round(t, gk_test_uniform(-1, 1));
                    gk_test_set(t, c, i * ld + j, c0[i][j]);
                }
            gk_buffer *A = NULL, *B = NULL, *C = NULL;
            GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, na, a, &A));
            GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, nb, b, &B));
            GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, nc, c, &C));
            GK_CHECK_OK(gk_gemm(ctx, ta, tb, m, n, k, 2.0, A, ld, B, ld, 0.5, C, ld));
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    long double ref = 0.5L * c0[i][j], mag = fabsl(ref);
                    for (size_t l = 0; l < k; l++) {
                        long double p = 2.0L * gk_test_get(t, a, ta ? l * ld + i : i * ld + l) *
                                        gk_test_get(t, b, tb ? j * ld + l : l * ld + j);
                        ref += p;
                        mag += fabsl(p);
                    }
                    double got = gk_test_get(t, c, i * ld + j);
                    if (!(fabsl(got - ref) <= contract_tol(t) * mag))
                        GK_FAIL("%s gemm ta=%d tb=%d ld=%zu: C[%zu,%zu] = %.17g, expected %.17Lg",
                                gk_test_dtype_name(t), ta, tb, ld, i, j, got, ref);
                    if (i + 1 < m && gk_test_get(t, c, i * ld + n) != 0.0)
                        GK_FAIL("%s gemm ld=%zu: padding after row %zu was written",
                                gk_test_dtype_name(t), ld, i);
                }
            gk_buffer_destroy(A);
            gk_buffer_destroy(B);
            gk_buffer_destroy(C);
            munmap(a, na * es);
            munmap(b, nb * es);
            munmap(c, nc * es);
        }
    }
}

/* Every documented status, C untouched each time. */
static void test_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_context *other = NULL;
    GK_CHECK_OK(gk_context_create(gk_test_backend_of(state), &other));
    const size_t m = 4, n = 5, k = 3;
    gk_buffer *a = gk_test_buffer_const(ctx, GK_FLOAT32, m * k, 1.0);
    gk_buffer *b = gk_test_buffer_const(ctx, GK_FLOAT32, k * n, 1.0);
    gk_buffer *c = gk_test_buffer_const(ctx, GK_FLOAT32, m * n, GK_TEST_SENTINEL);
    gk_buffer *a_small = gk_test_buffer_const(ctx, GK_FLOAT32, m * k - 1, 1.0);
    gk_buffer *b_small = gk_test_buffer_const(ctx, GK_FLOAT32, k * n - 1, 1.0);
    gk_buffer *c_small = gk_test_buffer_const(ctx, GK_FLOAT32, m * n - 1, GK_TEST_SENTINEL);
    gk_buffer *a64 = gk_test_buffer_const(ctx, GK_FLOAT64, m * k, 1.0);
    gk_buffer *c64 = gk_test_buffer_const(ctx, GK_FLOAT64, m * n, GK_TEST_SENTINEL);
    gk_buffer *a_other = gk_test_buffer_const(other, GK_FLOAT32, m * k, 1.0);
    gk_buffer *c_other = gk_test_buffer_const(other, GK_FLOAT32, m * n, GK_TEST_SENTINEL);
    gk_buffer *big = gk_test_buffer_const(ctx, GK_FLOAT32, 64, GK_TEST_SENTINEL);
    const gk_transpose N = GK_NO_TRANS, T = GK_TRANS;
    const char *fn = "gk_gemm";

    /* the valid call these variations start from */
    GK_CHECK_OK(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, b, n, 0.0, big, n));

    GK_EXPECT(gk_gemm(NULL, N, N, m, n, k, 1.0, a, k, b, n, 0.0, c, n), GK_E_INVALID_ARGUMENT, fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, NULL, k, b, n, 0.0, c, n), GK_E_INVALID_ARGUMENT,
              fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, NULL, n, 0.0, c, n), GK_E_INVALID_ARGUMENT,
              fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, b, n, 0.0, NULL, n), GK_E_INVALID_ARGUMENT,
              fn);
    /* enum values outside their lists */
    GK_EXPECT(gk_gemm(ctx, (gk_transpose)5, N, m, n, k, 1.0, a, k, b, n, 0.0, c, n),
              GK_E_INVALID_ARGUMENT, fn);
    GK_EXPECT(gk_gemm(ctx, N, (gk_transpose)-1, m, n, k, 1.0, a, k, b, n, 0.0, c, n),
              GK_E_INVALID_ARGUMENT, fn);
    /* leading dimensions below the stored row length */
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k - 1, b, n, 0.0, c, n), GK_E_INVALID_ARGUMENT,
              fn);
    GK_EXPECT(gk_gemm(ctx, T, N, m, n, k, 1.0, a, m - 1, b, n, 0.0, c, n), GK_E_INVALID_ARGUMENT,
              fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, b, n - 1, 0.0, c, n), GK_E_INVALID_ARGUMENT,
              fn);
    GK_EXPECT(gk_gemm(ctx, N, T, m, n, k, 1.0, a, k, b, k - 1, 0.0, c, n), GK_E_INVALID_ARGUMENT,
              fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, b, n, 0.0, c, n - 1), GK_E_INVALID_ARGUMENT,
              fn);
    assert_string_not_equal(gk_last_error(), "");
    /* buffers smaller than what they address */
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a_small, k, b, n, 0.0, c, n), GK_E_SHAPE, fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, b_small, n, 0.0, c, n), GK_E_SHAPE, fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, b, n, 0.0, c_small, n), GK_E_SHAPE, fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k + 1, b, n, 0.0, c, n), GK_E_SHAPE, fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, b, n, 0.0, c, n + 1), GK_E_SHAPE, fn);
    /* C overlapping A or B: the same buffer, or overlapping views of one parent */
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, big, k, b, n, 0.0, big, n), GK_E_INVALID_ARGUMENT,
              fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, big, n, 0.0, big, n), GK_E_INVALID_ARGUMENT,
              fn);
    gk_buffer *va = gk_test_view(big, 0, m * k);
    gk_buffer *vc = gk_test_view(big, m * k - 1, m * n);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, va, k, b, n, 0.0, vc, n), GK_E_INVALID_ARGUMENT, fn);
    gk_buffer *vb = gk_test_view(big, 40, k * n);
    gk_buffer *vc2 = gk_test_view(big, 30, m * n);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, vb, n, 0.0, vc2, n), GK_E_INVALID_ARGUMENT,
              fn);
    /* dtypes and contexts */
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a64, k, b, n, 0.0, c, n), GK_E_DTYPE, fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, b, n, 0.0, c64, n), GK_E_DTYPE, fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a_other, k, b, n, 0.0, c, n), GK_E_CONTEXT_MISMATCH,
              fn);
    GK_EXPECT(gk_gemm(ctx, N, N, m, n, k, 1.0, a, k, b, n, 0.0, c_other, n), GK_E_CONTEXT_MISMATCH,
              fn);
    /* (m - 1) * ldc + n wraps; with k = 0, A and B address nothing */
    GK_EXPECT(gk_gemm(ctx, N, N, SIZE_MAX / 2, 4, 0, 1.0, a, 1, b, 4, 0.0, c, 4), GK_E_OVERFLOW,
              fn);
    GK_EXPECT(
        gk_gemm(ctx, N, N, 3, SIZE_MAX - 1, 0, 1.0, a, 1, b, SIZE_MAX - 1, 0.0, c, SIZE_MAX - 1),
        GK_E_OVERFLOW, fn);

    GK_EXPECT_SENTINEL(c);
    GK_EXPECT_SENTINEL(c_small);
    GK_EXPECT_SENTINEL(c64);
    GK_EXPECT_SENTINEL(c_other);
    /* big was written by the valid call in its first m*n elements only */
    void *h = gk_test_read_all(big);
    for (size_t i = m * n; i < 64; i++)
        assert_true(((float *)h)[i] == (float)GK_TEST_SENTINEL);
    free(h);

    gk_buffer *all[] = {a,       b,       c,   a_small, b_small, c_small, a64, c64,
                        a_other, c_other, big, va,      vc,      vb,      vc2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_buffer_destroy(all[i]);
    gk_context_destroy(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_shapes_transposes),
        GK_TEST_BOTH(test_alpha_beta),
        GK_TEST_BOTH(test_degenerate),
        GK_TEST_BOTH(test_allowed_sharing),
        GK_TEST_BOTH(test_host_wrapped),
        GK_TEST_BOTH(test_tf32_flag),
        GK_TEST_BOTH(test_errors),
        GK_TEST_BOTH(test_huge_ld_one_row),
        {"test_huge_ld_rows/cpu", test_huge_ld_rows, gk_test_setup, gk_test_teardown, &gk_test_cpu},
        {"test_team_sizes/cpu", test_team_sizes, gk_test_setup, gk_test_teardown, &gk_test_cpu},
        {"test_openblas_setting_restored/cpu", test_openblas_setting_restored, gk_test_setup,
         gk_test_teardown, &gk_test_cpu},
    };
    return cmocka_run_group_tests_name("gemm", tests, gk_test_group_setup, NULL);
}
