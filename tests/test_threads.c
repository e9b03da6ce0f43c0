/* SPDX-License-Identifier: MIT */
/* test_threads.c - threads with a context each, and several contexts on one device at once. */
#include "gk_test.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "philox.h"

#define NTHREADS 8
#define ITERATIONS 12

/* cmocka's assertions longjmp into the main thread, so workers record failures here. */
typedef struct worker {
    int id;
    uint64_t rng;
    int cuda_available;
    gk_backend backend;
    int failed;
    char why[1024];
} worker;

static pthread_barrier_t barrier;

#define WCHECK(w, cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond) && !(w)->failed) {                                                             \
            (w)->failed = 1;                                                                       \
            int used_ =                                                                            \
                snprintf((w)->why, sizeof(w)->why, "thread %d line %d: ", (w)->id, __LINE__);      \
            snprintf((w)->why + used_, sizeof(w)->why - (size_t)used_, __VA_ARGS__);               \
        }                                                                                          \
    } while (0)

#define WOK(w, call)                                                                               \
    do {                                                                                           \
        gk_status st_ = (call);                                                                    \
        WCHECK(w, st_ == GK_OK, "%s failed: %s", #call, gk_last_error());                          \
    } while (0)

static double wrand(worker *w)
{
    uint64_t z = (w->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-53 * 2.0 - 1.0;
}

/* One round of element-wise ops, a reduction, a gemm, rbf_rows and the RNG, all checked. */
static void one_round(worker *w, gk_context *ctx, int iter)
{
    size_t n = 1000 + (size_t)w->id * 7 + (size_t)iter;
    float *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy), *hz = malloc(n * sizeof *hz);
    for (size_t i = 0; i < n; i++) {
        hx[i] = (float)wrand(w);
        hy[i] = (float)wrand(w);
    }
    gk_buffer *x = NULL, *y = NULL, *z = NULL;
    WOK(w, gk_buffer_create(ctx, GK_FLOAT32, n, &x));
    WOK(w, gk_buffer_create(ctx, GK_FLOAT32, n, &y));
    WOK(w, gk_buffer_create(ctx, GK_FLOAT32, n, &z));
    WOK(w, gk_buffer_write(x, 0, n, hx));
    WOK(w, gk_buffer_write(y, 0, n, hy));
    WOK(w, gk_add(ctx, x, y, z));
    WOK(w, gk_mul(ctx, z, x, z));
    WOK(w, gk_buffer_read(z, 0, n, hz));
    for (size_t i = 0; i < n && !w->failed; i++)
        WCHECK(w, hz[i] == (hx[i] + hy[i]) * hx[i], "add/mul element %zu", i);
    double s = 0;
    long double ref = 0, mag = 0;
    for (size_t i = 0; i < n; i++) {
        ref += hx[i];
        mag += fabsl((long double)hx[i]);
    }
    WOK(w, gk_sum(ctx, x, &s));
    WCHECK(w, fabsl(s - ref) <= 1e-6L * mag, "sum %.17g vs %.17Lg", s, ref);

    /* 17 x 9 times 9 x 13 in double */
    enum { M = 17, K = 9, N = 13 };
    double ha[M * K], hb[K * N], hc[M * N];
    for (size_t i = 0; i < M * K; i++)
        ha[i] = wrand(w);
    for (size_t i = 0; i < K * N; i++)
        hb[i] = wrand(w);
    gk_buffer *a = NULL, *b = NULL, *c = NULL;
    WOK(w, gk_buffer_create(ctx, GK_FLOAT64, M * K, &a));
    WOK(w, gk_buffer_create(ctx, GK_FLOAT64, K * N, &b));
    WOK(w, gk_buffer_create(ctx, GK_FLOAT64, M * N, &c));
    WOK(w, gk_buffer_write(a, 0, M * K, ha));
    WOK(w, gk_buffer_write(b, 0, K * N, hb));
    WOK(w, gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, M, N, K, 1.0, a, K, b, N, 0.0, c, N));
    WOK(w, gk_buffer_read(c, 0, M * N, hc));
    for (size_t i = 0; i < M && !w->failed; i++)
        for (size_t j = 0; j < N; j++) {
            long double r = 0, mg = 0;
            for (size_t l = 0; l < K; l++) {
                r += (long double)ha[i * K + l] * hb[l * N + j];
                mg += fabsl((long double)ha[i * K + l] * hb[l * N + j]);
            }
            WCHECK(w, fabsl(hc[i * N + j] - r) <= 1e-13L * mg, "gemm C[%zu,%zu]", i, j);
        }

    /* rbf_rows over the first n/4 rows of 4 features of x and y */
    size_t rows = n / 4;
    WOK(w, gk_rbf_rows(ctx, rows, 4, 0.5, x, y, z));
    WOK(w, gk_buffer_read(z, 0, rows, hz));
    for (size_t i = 0; i < rows && !w->failed; i++) {
        long double d2 = 0;
        for (size_t f = 0; f < 4; f++) {
            long double diff = (long double)hx[i * 4 + f] - hy[i * 4 + f];
            d2 += diff * diff;
        }
        WCHECK(w, fabsl(hz[i] - expl(-0.5L * d2)) <= 1e-5L, "rbf_rows element %zu", i);
    }

    /* the stream depends on (seed, offset + i) only */
    uint64_t seed = (uint64_t)w->id * 1000003u + (uint64_t)iter;
    WOK(w, gk_rng_uniform(ctx, seed, 77, z));
    WOK(w, gk_buffer_read(z, 0, n, hz));
    for (size_t i = 0; i < n && !w->failed; i++)
        WCHECK(w, hz[i] == gk__philox_uniform_f32(seed, 77 + i), "uniform element %zu", i);

    gk_buffer *all[] = {x, y, z, a, b, c};
    for (int i = 0; i < 6; i++)
        gk_buffer_destroy(all[i]);
    free(hx);
    free(hy);
    free(hz);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    WCHECK(w, gk_last_error()[0] == '\0', "a new thread sees \"%s\"", gk_last_error());
    /* everyone looks for the CUDA module at the same moment */
    pthread_barrier_wait(&barrier);
    w->cuda_available = gk_backend_available(GK_BACKEND_CUDA);
    w->backend = w->cuda_available && (w->id & 1) ? GK_BACKEND_CUDA : GK_BACKEND_CPU;

    gk_context_options o;
    gk_context_options_init(&o);
    o.backend = w->backend;
    o.cpu_threads = w->id % 3; /* 0 (default), 1 and 2 */
    gk_context *ctx = NULL;
    WOK(w, gk_context_create_ex(&o, &ctx));
    if (ctx == NULL) {
        for (int k = 0; k < 3; k++)
            pthread_barrier_wait(&barrier);
        return NULL;
    }
    char before[1024];
    snprintf(before, sizeof before, "%s", gk_last_error());

    /* thread 0 fails; the others' messages do not change */
    pthread_barrier_wait(&barrier);
    if (w->id == 0) {
        gk_buffer *b = NULL;
        WCHECK(w, gk_buffer_create(ctx, (gk_dtype)42, 1, &b) == GK_E_INVALID_ARGUMENT,
               "bad dtype accepted");
        WCHECK(w, strstr(gk_last_error(), "gk_buffer_create") != NULL, "message \"%s\"",
               gk_last_error());
    }
    pthread_barrier_wait(&barrier);
    if (w->id != 0)
        WCHECK(w, strcmp(gk_last_error(), before) == 0,
               "thread 0's failure shows here: \"%.300s\" (was \"%.300s\")", gk_last_error(),
               before);

    /* everyone fails differently and keeps their own message while working */
    gk_buffer *p = NULL, *v = NULL;
    WOK(w, gk_buffer_create(ctx, GK_FLOAT64, 10, &p));
    WCHECK(w, gk_buffer_view(p, 3, 8 + (size_t)w->id, &v) == GK_E_SHAPE, "view past the end");
    char mine[1024];
    snprintf(mine, sizeof mine, "%s", gk_last_error());
    WCHECK(w, strstr(mine, "gk_buffer_view") != NULL, "message \"%.300s\"", mine);
    pthread_barrier_wait(&barrier);

    for (int iter = 0; iter < ITERATIONS && !w->failed; iter++) {
        one_round(w, ctx, iter);
        WCHECK(w, strcmp(gk_last_error(), mine) == 0,
               "message changed to \"%.300s\" (was \"%.300s\")", gk_last_error(), mine);
    }
    WOK(w, gk_context_synchronize(ctx));
    gk_buffer_destroy(p);
    gk_context_destroy(ctx);
    return NULL;
}

static void test_eight_threads(void **state)
{
    (void)state;
    worker w[NTHREADS];
    pthread_t tid[NTHREADS];
    assert_int_equal(pthread_barrier_init(&barrier, NULL, NTHREADS), 0);
    for (int i = 0; i < NTHREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        w[i].rng = gk_test_seed() + (uint64_t)i * 7919u;
        assert_int_equal(pthread_create(&tid[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);
    pthread_barrier_destroy(&barrier);
    int failures = 0;
    for (int i = 0; i < NTHREADS; i++) {
        print_message("thread %d on %s\n", i, w[i].backend == GK_BACKEND_CUDA ? "cuda" : "cpu");
        if (w[i].failed) {
            print_error("%s\n", w[i].why);
            failures++;
        }
        assert_int_equal(w[i].cuda_available, w[0].cuda_available);
    }
    if (failures)
        GK_FAIL("%d of %d threads failed", failures, NTHREADS);
}

/* Several contexts on one device (the GPU when there is one, else the CPU), created, used and
 * destroyed by four threads at once, three times over. Every thread computes the same thing, so
 * all results must be bit-identical. Each thread also leaves a buffer whose context handle it
 * destroyed; the main thread drops those last references. */
#define SHARED_THREADS 4
#define SHARED_ROUNDS 3
#define SHARED_M 33
#define SHARED_N 700
#define SHARED_D 5

typedef struct shared_worker {
    int id;
    gk_backend backend;
    float out[SHARED_ROUNDS][SHARED_M];
    gk_buffer *left; /* outlives its context's handle */
    int failed;
    char why[1024];
} shared_worker;

static void *shared_main(void *arg)
{
    shared_worker *w = arg;
    for (int round = 0; round < SHARED_ROUNDS && !w->failed; round++) {
        pthread_barrier_wait(&barrier);
        gk_context_options o;
        gk_context_options_init(&o);
        o.backend = w->backend;
        o.cpu_threads = 1;
        gk_context *ctx = NULL;
        WOK(w, gk_context_create_ex(&o, &ctx));
        if (ctx == NULL)
            continue;
        gk_buffer *x = NULL, *y = NULL, *wt = NULL, *out = NULL;
        WOK(w, gk_buffer_create(ctx, GK_FLOAT32, SHARED_M * SHARED_D, &x));
        WOK(w, gk_buffer_create(ctx, GK_FLOAT32, SHARED_N * SHARED_D, &y));
        WOK(w, gk_buffer_create(ctx, GK_FLOAT32, SHARED_N, &wt));
        WOK(w, gk_buffer_create(ctx, GK_FLOAT32, SHARED_M, &out));
        WOK(w, gk_rng_uniform(ctx, 11, 0, x));
        WOK(w, gk_rng_normal(ctx, 12, 0, 0.0, 1.0, y));
        WOK(w, gk_rng_uniform(ctx, 13, (uint64_t)round, wt));
        WOK(w, gk_rbf_matvec(ctx, SHARED_M, SHARED_N, SHARED_D, 0.7, x, y, wt, out));
        WOK(w, gk_buffer_read(out, 0, SHARED_M, w->out[round]));
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(wt);
        if (round == SHARED_ROUNDS - 1)
            w->left = out;
        else
            gk_buffer_destroy(out);
        gk_context_destroy(ctx);
    }
    return NULL;
}

static void test_contexts_share_device(void **state)
{
    (void)state;
    shared_worker w[SHARED_THREADS];
    pthread_t tid[SHARED_THREADS];
    gk_backend backend = gk_backend_available(GK_BACKEND_CUDA) ? GK_BACKEND_CUDA : GK_BACKEND_CPU;
    assert_int_equal(pthread_barrier_init(&barrier, NULL, SHARED_THREADS), 0);
    for (int i = 0; i < SHARED_THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        w[i].backend = backend;
        assert_int_equal(pthread_create(&tid[i], NULL, shared_main, &w[i]), 0);
    }
    for (int i = 0; i < SHARED_THREADS; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);
    pthread_barrier_destroy(&barrier);
    print_message("%d %s contexts at a time, %d rounds\n", SHARED_THREADS,
                  backend == GK_BACKEND_CUDA ? "cuda" : "cpu", SHARED_ROUNDS);
    for (int i = 0; i < SHARED_THREADS; i++) {
        if (w[i].failed)
            GK_FAIL("%s", w[i].why);
        assert_non_null(w[i].left);
        float last[SHARED_M];
        GK_CHECK_OK(gk_buffer_read(w[i].left, 0, SHARED_M, last));
        gk_buffer_destroy(w[i].left);
        if (memcmp(last, w[i].out[SHARED_ROUNDS - 1], sizeof last) != 0)
            GK_FAIL("thread %d: its buffer changed after its context's handle went", i);
        if (memcmp(w[i].out, w[0].out, sizeof w[i].out) != 0)
            GK_FAIL("thread %d computed other values than thread 0", i);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eight_threads),
        cmocka_unit_test(test_contexts_share_device),
    };
    return cmocka_run_group_tests_name("threads", tests, gk_test_group_setup, NULL);
}
