/* SPDX-License-Identifier: MIT */
/* test_context.c - backend availability, context creation, options, GK_BACKEND and getters. */
#include "gk_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A value an out-parameter holds before a call that must fail and leave it untouched. */
static char out_marker;
#define CTX_SENTINEL ((gk_context *)&out_marker)

/* Runs one tiny op so that last_backend reports something. */
static void run_one_op(gk_context *ctx)
{
    gk_buffer *b = NULL;
    GK_CHECK_OK(gk_buffer_create(ctx, GK_FLOAT32, 3, &b));
    GK_CHECK_OK(gk_fill(ctx, 2.0, b));
    float h[3];
    GK_CHECK_OK(gk_buffer_read(b, 0, 3, h));
    assert_true(h[0] == 2.0f && h[1] == 2.0f && h[2] == 2.0f);
    gk_buffer_destroy(b);
}

static void test_backend_available(void **state)
{
    (void)state;
    assert_int_equal(gk_backend_available(GK_BACKEND_AUTO), 1);
    assert_int_equal(gk_backend_available(GK_BACKEND_CPU), 1);
    int cuda = gk_backend_available(GK_BACKEND_CUDA);
    assert_true(cuda == 0 || cuda == 1);
    /* asked twice: the answer is cached, not flapping */
    assert_int_equal(gk_backend_available(GK_BACKEND_CUDA), cuda);
    if (!cuda) {
        const char *msg = gk_last_error();
        print_message("CUDA unavailable: %s\n", msg);
        assert_true(msg[0] != '\0');
        if (strstr(msg, "libgpukern-cuda.so") == NULL || strchr(msg, '/') == NULL)
            GK_FAIL("gk_last_error() \"%s\" should list the module paths tried", msg);
    }
    assert_int_equal(gk_backend_available((gk_backend)3), 0);
    assert_true(gk_last_error()[0] != '\0');
    assert_int_equal(gk_backend_available((gk_backend)-1), 0);
    assert_true(gk_last_error()[0] != '\0');
}

/* Per backend: create, getters, synchronize, last_backend before and after an op. */
static void test_create_and_getters(void **state)
{
    gk_test_backend *b = *state;
    gk_context *ctx = gk_test_context(state);
    assert_int_equal(gk_context_backend(ctx), b->backend);
    assert_int_equal(gk_context_last_backend(ctx), GK_BACKEND_AUTO);
    const char *name = gk_context_device_name(ctx);
    assert_non_null(name);
    print_message("%s device: %s\n", b->name, name);
    assert_true(name[0] != '\0');
    if (b->backend == GK_BACKEND_CPU && strstr(name, "CPU") == NULL)
        GK_FAIL("CPU device name \"%s\" does not say CPU", name);
    GK_CHECK_OK(gk_context_synchronize(ctx));
    run_one_op(ctx);
    assert_int_equal(gk_context_last_backend(ctx), b->backend);
    GK_CHECK_OK(gk_context_synchronize(ctx));
}

static void test_getters_null(void **state)
{
    (void)state;
    assert_int_equal(gk_context_backend(NULL), 0);
    assert_int_equal(gk_context_last_backend(NULL), 0);
    assert_non_null(gk_context_device_name(NULL));
    assert_string_equal(gk_context_device_name(NULL), "");
    GK_EXPECT(gk_context_synchronize(NULL), GK_E_INVALID_ARGUMENT, "gk_context_synchronize");
    gk_context_destroy(NULL);
    gk_context_options_init(NULL);
}

static void test_create_errors(void **state)
{
    (void)state;
    GK_EXPECT(gk_context_create(GK_BACKEND_CPU, NULL), GK_E_INVALID_ARGUMENT, "gk_context_create");
    static const int bad[] = {-1, 3, 99};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gk_context *out = CTX_SENTINEL;
        GK_EXPECT(gk_context_create((gk_backend)bad[i], &out), GK_E_INVALID_ARGUMENT,
                  "gk_context_create");
        assert_ptr_equal(out, CTX_SENTINEL);
    }
}

static void test_auto_resolves(void **state)
{
    (void)state;
    gk_test_env_save();
    unsetenv("GK_BACKEND");
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_AUTO, &ctx));
    gk_backend want = gk_backend_available(GK_BACKEND_CUDA) ? GK_BACKEND_CUDA : GK_BACKEND_CPU;
    assert_int_equal(gk_context_backend(ctx), want);
    run_one_op(ctx);
    gk_backend ran = gk_context_last_backend(ctx);
    assert_true(ran == GK_BACKEND_CPU || ran == GK_BACKEND_CUDA);
    if (want == GK_BACKEND_CPU)
        assert_int_equal(ran, GK_BACKEND_CPU);
    gk_context_destroy(ctx);
    gk_test_env_restore();
}

static void test_cuda_request(void **state)
{
    (void)state;
    gk_context *ctx = CTX_SENTINEL;
    if (gk_backend_available(GK_BACKEND_CUDA)) {
        GK_CHECK_OK(gk_context_create(GK_BACKEND_CUDA, &ctx));
        assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CUDA);
        assert_true(gk_context_device_name(ctx)[0] != '\0');
        gk_context_destroy(ctx);
        /* a device ordinal beyond the devices present is refused */
        gk_context_options o;
        gk_context_options_init(&o);
        o.backend = GK_BACKEND_CUDA;
        o.device = 1000;
        ctx = CTX_SENTINEL;
        gk_status st = gk_context_create_ex(&o, &ctx);
        if (st != GK_E_INVALID_ARGUMENT && st != GK_E_DEVICE)
            GK_FAIL("device 1000 gave %s", gk_status_string(st));
        GK_EXPECT(st, st, "gk_context_create");
        assert_ptr_equal(ctx, CTX_SENTINEL);
        return;
    }
    GK_EXPECT(gk_context_create(GK_BACKEND_CUDA, &ctx), GK_E_BACKEND_UNAVAILABLE,
              "gk_context_create");
    assert_ptr_equal(ctx, CTX_SENTINEL);
    const char *msg = gk_last_error();
    print_message("CUDA request refused: %s\n", msg);
    if (strstr(msg, "libgpukern-cuda.so") == NULL || strchr(msg, '/') == NULL)
        GK_FAIL("gk_last_error() \"%s\" should name the module paths tried", msg);

    gk_context_options o;
    gk_context_options_init(&o);
    o.backend = GK_BACKEND_CUDA;
    GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_BACKEND_UNAVAILABLE, "gk_context_create");
    assert_ptr_equal(ctx, CTX_SENTINEL);
}

static void test_env_backend(void **state)
{
    (void)state;
    gk_test_env_save();
    int cuda = gk_backend_available(GK_BACKEND_CUDA);
    gk_context *ctx = NULL;

    setenv("GK_BACKEND", "cpu", 1);
    GK_CHECK_OK(gk_context_create(GK_BACKEND_AUTO, &ctx));
    assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CPU);
    run_one_op(ctx);
    assert_int_equal(gk_context_last_backend(ctx), GK_BACKEND_CPU);
    gk_context_destroy(ctx);

    setenv("GK_BACKEND", "cuda", 1);
    if (cuda) {
        GK_CHECK_OK(gk_context_create(GK_BACKEND_AUTO, &ctx));
        assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CUDA);
        gk_context_destroy(ctx);
    } else {
        ctx = CTX_SENTINEL;
        GK_EXPECT(gk_context_create(GK_BACKEND_AUTO, &ctx), GK_E_BACKEND_UNAVAILABLE,
                  "gk_context_create");
        assert_ptr_equal(ctx, CTX_SENTINEL);
    }
    /* only AUTO is overridden: an explicit CPU request stays CPU */
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &ctx));
    assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CPU);
    gk_context_destroy(ctx);

    setenv("GK_BACKEND", "bogus", 1);
    ctx = CTX_SENTINEL;
    GK_EXPECT(gk_context_create(GK_BACKEND_AUTO, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create");
    assert_ptr_equal(ctx, CTX_SENTINEL);
    if (strstr(gk_last_error(), "bogus") == NULL && strstr(gk_last_error(), "GK_BACKEND") == NULL)
        GK_FAIL("gk_last_error() \"%s\" should name GK_BACKEND or its value", gk_last_error());
    gk_context_options o;
    gk_context_options_init(&o);
    GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create");
    assert_ptr_equal(ctx, CTX_SENTINEL);

    gk_test_env_restore();
}

static void test_options_init(void **state)
{
    (void)state;
    gk_context_options o;
    memset(&o, 0xAB, sizeof o);
    gk_context_options_init(&o);
    assert_int_equal(o.struct_size, sizeof(gk_context_options));
    assert_int_equal(o.backend, GK_BACKEND_AUTO);
    assert_int_equal(o.device, 0);
    assert_int_equal(o.cpu_threads, 0);
    assert_int_equal(o.flags, 0);
}

static void test_create_ex(void **state)
{
    (void)state;
    gk_context_options o;
    gk_context_options_init(&o);
    o.backend = GK_BACKEND_CPU;
    o.cpu_threads = 1;
    o.flags = GK_FLAG_ALLOW_TF32;
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create_ex(&o, &ctx));
    assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CPU);
    run_one_op(ctx);
    gk_context_destroy(ctx);

    o.cpu_threads = 3;
    o.flags = 0;
    GK_CHECK_OK(gk_context_create_ex(&o, &ctx));
    run_one_op(ctx);
    gk_context_destroy(ctx);
}

/* An older caller's struct ends early; whatever lies beyond its struct_size is not read. */
static void test_options_older_struct(void **state)
{
    (void)state;
    static const size_t sizes[] = {offsetof(gk_context_options, device),
                                   offsetof(gk_context_options, cpu_threads),
                                   offsetof(gk_context_options, flags)};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gk_context_options o;
        memset(&o, 0xFF, sizeof o); /* invalid values (-1, unknown flags) past the end */
        o.struct_size = (uint32_t)sizes[i];
        o.backend = GK_BACKEND_CPU;
        if (sizes[i] > offsetof(gk_context_options, device))
            o.device = 0;
        if (sizes[i] > offsetof(gk_context_options, cpu_threads))
            o.cpu_threads = 0;
        gk_context *ctx = NULL;
        GK_CHECK_OK(gk_context_create_ex(&o, &ctx));
        assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CPU);
        run_one_op(ctx);
        gk_context_destroy(ctx);
    }
}

static void test_options_errors(void **state)
{
    (void)state;
    gk_context *ctx = CTX_SENTINEL;
    gk_context_options o;

    GK_EXPECT(gk_context_create_ex(NULL, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
    assert_ptr_equal(ctx, CTX_SENTINEL);
    gk_context_options_init(&o);
    o.backend = GK_BACKEND_CPU;
    GK_EXPECT(gk_context_create_ex(&o, NULL), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");

    /* a newer caller than this library: larger struct */
    struct {
        gk_context_options o;
        uint32_t future;
    } big;
    memset(&big, 0, sizeof big);
    gk_context_options_init(&big.o);
    big.o.backend = GK_BACKEND_CPU;
    big.o.struct_size = (uint32_t)sizeof big;
    GK_EXPECT(gk_context_create_ex(&big.o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
    assert_ptr_equal(ctx, CTX_SENTINEL);

    /* smaller than the first two fields */
    static const uint32_t tiny[] = {0, 4, 7};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        gk_context_options_init(&o);
        o.backend = GK_BACKEND_CPU;
        o.struct_size = tiny[i];
        GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
        assert_ptr_equal(ctx, CTX_SENTINEL);
    }

    /* sizes that end inside a field: 14 was once taken with half of cpu_threads, and 15 refused
     * citing a value never passed */
    for (uint32_t size = 9; size < sizeof o; size++) {
        if (size % 4 == 0)
            continue;
        gk_context_options_init(&o);
        o.backend = GK_BACKEND_CPU;
        o.struct_size = size;
        GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
        char want[96];
        snprintf(want, sizeof want, "options->struct_size (%u) ends inside a field", size);
        if (strstr(gk_last_error(), want) == NULL)
            fail_msg("struct_size %u: \"%s\" lacks \"%s\"", size, gk_last_error(), want);
        assert_ptr_equal(ctx, CTX_SENTINEL);
    }

    gk_context_options_init(&o);
    o.backend = 17;
    GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
    gk_context_options_init(&o);
    o.backend = GK_BACKEND_CPU;
    o.device = -1;
    GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
    gk_context_options_init(&o);
    o.backend = GK_BACKEND_CPU;
    o.cpu_threads = -2;
    GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
    gk_context_options_init(&o);
    o.backend = GK_BACKEND_CPU;
    o.flags = 0x2;
    GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
    o.flags = 0x80000000u | GK_FLAG_ALLOW_TF32;
    GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
    assert_ptr_equal(ctx, CTX_SENTINEL);
}

/* cpu_threads above the documented 1024 is refused at creation, on every backend request: libgomp
 * crashes or exits on such team sizes at the first parallel op. 1024 itself is accepted. */
static void test_cpu_threads_limit(void **state)
{
    (void)state;
    static const int32_t too_many[] = {1025, 100000, INT32_MAX};
    static const int32_t backends[] = {GK_BACKEND_CPU, GK_BACKEND_AUTO, GK_BACKEND_CUDA};
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++)
        for (size_t i = 0; i < sizeof too_many / sizeof too_many[0]; i++) {
            gk_context *ctx = CTX_SENTINEL;
            gk_context_options o;
            gk_context_options_init(&o);
            o.backend = backends[b];
            o.cpu_threads = too_many[i];
            GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT,
                      "gk_context_create_ex");
            assert_ptr_equal(ctx, CTX_SENTINEL);
            char want[64];
            snprintf(want, sizeof want, "cpu_threads (%d) is above the maximum of 1024",
                     (int)too_many[i]);
            if (strstr(gk_last_error(), want) == NULL)
                GK_FAIL("message \"%s\" should say \"%s\"", gk_last_error(), want);
        }
    gk_context_options o;
    gk_context_options_init(&o);
    o.backend = GK_BACKEND_CPU;
    o.cpu_threads = 1024;
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create_ex(&o, &ctx));
    assert_string_equal(gk_context_device_name(ctx), "CPU (1024 threads)");
    run_one_op(ctx);
    gk_context_destroy(ctx);
}

/* A context with one backend has nothing to calibrate; bad arguments are refused. */
static void test_calibrate_single_backend(void **state)
{
    gk_context *ctx = gk_test_context(state);
    GK_CHECK_OK(gk_context_calibrate(ctx, 0));
    GK_EXPECT(gk_context_calibrate(NULL, 0), GK_E_INVALID_ARGUMENT, "gk_context_calibrate");
    GK_EXPECT(gk_context_calibrate(ctx, 1), GK_E_INVALID_ARGUMENT, "gk_context_calibrate");
    GK_EXPECT(gk_context_calibrate(ctx, 0x80000000u), GK_E_INVALID_ARGUMENT,
              "gk_context_calibrate");
    run_one_op(ctx);
}

/* AUTO on a CUDA host keeps both backends: device buffers run on CUDA, host-wrapped operands
 * wherever the cost model says, with correct results either way; calibration writes the file
 * GK_CALIBRATION names. */
static void test_auto_hybrid(void **state)
{
    (void)state;
    gk_test_require_cuda();
    gk_test_env_save();
    unsetenv("GK_BACKEND");
    char path[] = "/tmp/gk_test_calibration_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    const char *old = getenv("GK_CALIBRATION");
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", old ? old : "");
    setenv("GK_CALIBRATION", path, 1);

    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_AUTO, &ctx));
    assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CUDA);
    GK_CHECK_OK(gk_context_calibrate(ctx, 0));
    assert_int_equal(access(path, R_OK), 0);

    run_one_op(ctx); /* device buffers */
    assert_int_equal(gk_context_last_backend(ctx), GK_BACKEND_CUDA);
    static const size_t sizes[] = {10, 100000, 3000000};
    for (size_t si = 0; si < 3; si++) {
        size_t n = sizes[si];
        float *x = gk_test_random_array(GK_FLOAT32, n, -1, 1);
        float *y = gk_test_random_array(GK_FLOAT32, n, -1, 1);
        float *z = gk_test_alloc(GK_FLOAT32, n);
        gk_buffer *bx = NULL, *by = NULL, *bz = NULL;
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, n, x, &bx));
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, n, y, &by));
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, n, z, &bz));
        GK_CHECK_OK(gk_add(ctx, bx, by, bz));
        gk_backend ran = gk_context_last_backend(ctx);
        print_message("AUTO placed a host add of %zu on %s\n", n,
                      ran == GK_BACKEND_CUDA ? "cuda" : "cpu");
        assert_true(ran == GK_BACKEND_CPU || ran == GK_BACKEND_CUDA);
        for (size_t i = 0; i < n; i++)
            if (z[i] != x[i] + y[i])
                GK_FAIL("AUTO host add n=%zu: z[%zu] = %.9g, expected %.9g", n, i, z[i],
                        x[i] + y[i]);
        gk_buffer_destroy(bx);
        gk_buffer_destroy(by);
        gk_buffer_destroy(bz);
        free(x);
        free(y);
        free(z);
    }
    gk_context_destroy(ctx);

    /* a later AUTO context loads the saved model */
    GK_CHECK_OK(gk_context_create(GK_BACKEND_AUTO, &ctx));
    run_one_op(ctx);
    gk_context_destroy(ctx);
    unlink(path);
    if (old)
        setenv("GK_CALIBRATION", saved, 1);
    else
        unsetenv("GK_CALIBRATION");
    gk_test_env_restore();
}

/* Handles carry a magic number: memory that is no handle is refused, not dereferenced blindly. */
static void test_foreign_handle(void **state)
{
    (void)state;
    static _Alignas(64) unsigned char junk[4096];
    gk_context *fake = (gk_context *)(void *)junk;
    GK_EXPECT(gk_context_synchronize(fake), GK_E_INVALID_ARGUMENT, "gk_context_synchronize");
    gk_buffer *b = NULL;
    GK_EXPECT(gk_buffer_create(fake, GK_FLOAT32, 4, &b), GK_E_INVALID_ARGUMENT, "gk_buffer_create");
    assert_null(b);
    /* a context is not a buffer */
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &ctx));
    GK_EXPECT(gk_fill(ctx, 1.0, (gk_buffer *)(void *)junk), GK_E_INVALID_ARGUMENT, "gk_fill");
    gk_context_destroy(ctx);
}

/* A destroyed context passed again is detected, and its memory does not go to the next context,
 * so a second destroy cannot destroy that one (once, malloc handed the freed block to the
 * next context at once, and the stale destroy freed it). */
static void test_destroyed_context(void **state)
{
    (void)state;
    gk_context *a = NULL, *b = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &a));
    gk_context_destroy(a);
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &b));
    assert_ptr_not_equal(a, b);
    gk_context_destroy(a); /* a second destroy is ignored */
    gk_buffer *x = NULL;
    GK_EXPECT(gk_buffer_create(a, GK_FLOAT32, 3, &x), GK_E_INVALID_ARGUMENT, "gk_buffer_create");
    assert_null(x);
    if (strstr(gk_last_error(), "was destroyed") == NULL)
        GK_FAIL("message \"%s\" should say the context was destroyed", gk_last_error());
    GK_EXPECT(gk_context_synchronize(a), GK_E_INVALID_ARGUMENT, "gk_context_synchronize");
    assert_int_equal(gk_context_backend(a), 0);
    assert_string_equal(gk_context_device_name(a), "");
    run_one_op(b); /* the later context is intact */
    gk_context_destroy(b);
}

/* The context goes with its last buffer: destroying it first leaves the buffers usable. */
static void test_destroy_context_first(void **state)
{
    (void)gk_test_context(state); /* skips when the backend is unavailable */
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(gk_test_backend_of(state), &ctx));
    void *h = NULL;
    gk_buffer *b = gk_test_buffer_random(ctx, GK_FLOAT64, 100, -1, 1, &h);
    gk_buffer *v = gk_test_view(b, 10, 20);
    gk_context_destroy(ctx);
    double got[20];
    GK_CHECK_OK(gk_buffer_read(v, 0, 20, got));
    assert_memory_equal(got, (double *)h + 10, sizeof got);
    gk_buffer_destroy(b);
    GK_CHECK_OK(gk_buffer_read(v, 0, 20, got));
    assert_memory_equal(got, (double *)h + 10, sizeof got);
    gk_buffer_destroy(v);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend_available),
        GK_TEST_BOTH(test_create_and_getters),
        cmocka_unit_test(test_getters_null),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_auto_resolves),
        cmocka_unit_test(test_cuda_request),
        cmocka_unit_test(test_env_backend),
        cmocka_unit_test(test_options_init),
        cmocka_unit_test(test_create_ex),
        cmocka_unit_test(test_options_older_struct),
        cmocka_unit_test(test_options_errors),
        cmocka_unit_test(test_cpu_threads_limit),
        GK_TEST_BOTH(test_calibrate_single_backend),
        cmocka_unit_test(test_auto_hybrid),
        cmocka_unit_test(test_foreign_handle),
        cmocka_unit_test(test_destroyed_context),
        GK_TEST_BOTH(test_destroy_context_first),
    };
    return cmocka_run_group_tests_name("context", tests, gk_test_group_setup, NULL);
}
