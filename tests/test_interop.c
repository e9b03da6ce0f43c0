/* SPDX-License-Identifier: MIT */
/* test_interop.c - 1.2 interop: device counts, wrapped device memory, addresses, streams. */
#include "gk_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GK_TEST_CUDA_HELPER
#include "interop_cuda.h"
#endif

static char out_marker;
#define BUF_SENTINEL ((gk_buffer *)&out_marker)
#define CTX_SENTINEL ((gk_context *)&out_marker)

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};

/* Memory that is no handle: the magic number check must refuse it. */
static _Alignas(64) unsigned char junk[4096];

/* Asserts gk_last_error() contains text. */
static void expect_message(const char *text)
{
    if (strstr(gk_last_error(), text) == NULL)
        GK_FAIL("gk_last_error() \"%s\" does not say \"%s\"", gk_last_error(), text);
}

/* ------------------------------------------------------------------------------------------
 * Device counts and the device option
 * ---------------------------------------------------------------------------------------- */

static void test_device_count(void **state)
{
    (void)state;
    gk_test_env_save();
    unsetenv("GK_BACKEND");
    assert_int_equal(gk_device_count(GK_BACKEND_CPU), 1);
    int cuda = gk_device_count(GK_BACKEND_CUDA);
    if (cuda == 0) {
        expect_message("gk_device_count: CUDA backend unavailable");
        print_message("gk_device_count(GK_BACKEND_CUDA) = 0: %s\n", gk_last_error());
    }
    assert_int_equal(cuda > 0, gk_backend_available(GK_BACKEND_CUDA));
    assert_int_equal(gk_device_count(GK_BACKEND_AUTO), cuda > 0 ? cuda : 1);
    /* AUTO counts the devices of the backend an AUTO context would run on */
    setenv("GK_BACKEND", "cpu", 1);
    assert_int_equal(gk_device_count(GK_BACKEND_AUTO), 1);
    setenv("GK_BACKEND", "tpu", 1);
    assert_int_equal(gk_device_count(GK_BACKEND_AUTO), 0);
    expect_message("gk_device_count: GK_BACKEND=tpu");
    gk_test_env_restore();

    assert_int_equal(gk_device_count((gk_backend)3), 0);
    expect_message("gk_device_count: b (3) is not a gk_backend");
    assert_int_equal(gk_device_count((gk_backend)-1), 0);
    expect_message("gk_device_count: b (-1) is not a gk_backend");
}

static void test_device_option(void **state)
{
    (void)state;
    gk_test_env_save();
    unsetenv("GK_BACKEND");
    gk_context_options o;
    gk_context_options_init(&o);
    gk_context *ctx = CTX_SENTINEL;

    /* the CPU has device 0 only */
    o.backend = GK_BACKEND_CPU;
    o.device = 1;
    GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
    expect_message("options->device (1) is not a device of the cpu backend, which has 1");
    assert_ptr_equal(ctx, CTX_SENTINEL);
    o.device = 0;
    GK_CHECK_OK(gk_context_create_ex(&o, &ctx));
    gk_context_destroy(ctx);

    int cuda = gk_device_count(GK_BACKEND_CUDA);
    o.backend = GK_BACKEND_AUTO;
    o.device = cuda > 0 ? cuda : 5;
    ctx = CTX_SENTINEL;
    if (cuda > 0) {
        /* a GPU ordinal past the devices is refused, for CUDA and for AUTO choosing CUDA */
        GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
        expect_message("is not a device of the cuda backend");
        o.backend = GK_BACKEND_CUDA;
        GK_EXPECT(gk_context_create_ex(&o, &ctx), GK_E_INVALID_ARGUMENT, "gk_context_create_ex");
        assert_ptr_equal(ctx, CTX_SENTINEL);
        /* every device present can be chosen, and the name says which */
        for (int d = 0; d < cuda; d++) {
            o.device = d;
            GK_CHECK_OK(gk_context_create_ex(&o, &ctx));
            char want[32];
            snprintf(want, sizeof want, "(CUDA device %d)", d);
            print_message("device %d: %s\n", d, gk_context_device_name(ctx));
            if (strstr(gk_context_device_name(ctx), want) == NULL)
                GK_FAIL("device name \"%s\" does not say %s", gk_context_device_name(ctx), want);
            gk_context_destroy(ctx);
        }
    } else {
        /* AUTO falling back to the CPU ignores the GPU ordinal */
        GK_CHECK_OK(gk_context_create_ex(&o, &ctx));
        assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CPU);
        gk_context_destroy(ctx);
    }
    gk_test_env_restore();
}

/* ------------------------------------------------------------------------------------------
 * What a CPU context refuses, and argument errors on any context
 * ---------------------------------------------------------------------------------------- */

static void test_wrap_device_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    float mem[8];
    gk_buffer *b = BUF_SENTINEL;
    static const char fn[] = "gk_buffer_wrap_device";
    GK_EXPECT(gk_buffer_wrap_device(NULL, GK_FLOAT32, 8, mem, &b), GK_E_INVALID_ARGUMENT, fn);
    GK_EXPECT(gk_buffer_wrap_device((gk_context *)(void *)junk, GK_FLOAT32, 8, mem, &b),
              GK_E_INVALID_ARGUMENT, fn);
    GK_EXPECT(gk_buffer_wrap_device(ctx, (gk_dtype)0, 8, mem, &b), GK_E_INVALID_ARGUMENT, fn);
    expect_message("t (0) is not a gk_dtype");
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, 8, mem, NULL), GK_E_INVALID_ARGUMENT, fn);
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, 8, NULL, &b), GK_E_INVALID_ARGUMENT, fn);
    expect_message("device_ptr is NULL but count is 8");
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT64, SIZE_MAX / 4, mem, &b), GK_E_OVERFLOW, fn);
    assert_ptr_equal(b, BUF_SENTINEL);
    if (gk_test_is_cuda(state)) {
        /* host memory is no device memory; a misaligned pointer is refused before it is asked */
        GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, 8, mem, &b), GK_E_INVALID_ARGUMENT, fn);
        print_message("stack memory: %s\n", gk_last_error());
        expect_message("not memory of the context's CUDA device 0");
        GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, 4, (char *)mem + 2, &b),
                  GK_E_INVALID_ARGUMENT, fn);
        expect_message("is not aligned to the 4-byte elements");
        /* count 0: nothing is addressed, the pointer is not examined */
        GK_CHECK_OK(gk_buffer_wrap_device(ctx, GK_FLOAT32, 0, mem, &b));
        assert_int_equal(gk_buffer_count(b), 0);
        assert_null(gk_buffer_data(b));
        gk_buffer_destroy(b);
        return;
    }
    /* a CPU context has no device memory, whatever the pointer */
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, 8, mem, &b), GK_E_UNSUPPORTED, fn);
    expect_message("a CPU context has no device memory");
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, 0, NULL, &b), GK_E_UNSUPPORTED, fn);
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT64, 1, (char *)mem + 1, &b), GK_E_UNSUPPORTED, fn);
    assert_ptr_equal(b, BUF_SENTINEL);
}

static void test_stream_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const char fn[] = "gk_context_set_stream";
    GK_EXPECT(gk_context_set_stream(NULL, NULL), GK_E_INVALID_ARGUMENT, fn);
    GK_EXPECT(gk_context_set_stream((gk_context *)(void *)junk, NULL), GK_E_INVALID_ARGUMENT, fn);
    assert_null(gk_context_stream(NULL));
    assert_null(gk_context_stream((gk_context *)(void *)junk));
    if (gk_test_is_cuda(state)) {
        /* the context's own stream, and NULL selects it again */
        void *own = gk_context_stream(ctx);
        assert_non_null(own);
        GK_CHECK_OK(gk_context_set_stream(ctx, NULL));
        assert_ptr_equal(gk_context_stream(ctx), own);
        return;
    }
    GK_EXPECT(gk_context_set_stream(ctx, NULL), GK_E_UNSUPPORTED, fn);
    expect_message("a CPU context has no CUDA stream");
    GK_EXPECT(gk_context_set_stream(ctx, (void *)junk), GK_E_UNSUPPORTED, fn);
    assert_null(gk_context_stream(ctx));
    /* the context is still fine */
    gk_buffer *b = gk_test_buffer_const(ctx, GK_FLOAT32, 5, 2.0);
    double sum = 0;
    GK_CHECK_OK(gk_sum(ctx, b, &sum));
    assert_true(sum == 10.0);
    gk_buffer_destroy(b);
}

/* ------------------------------------------------------------------------------------------
 * gk_buffer_data on host memory
 * ---------------------------------------------------------------------------------------- */

static void test_data_cpu(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t es = gk_test_esize(t);
        void *h = NULL;
        gk_buffer *b = gk_test_buffer_random(ctx, t, 1000, -1, 1, &h);
        char *p = gk_buffer_data(b);
        assert_non_null(p);
        /* the address is where the elements are: ops' results show there, writes there show
         * in reads */
        assert_memory_equal(p, h, 1000 * es);
        GK_CHECK_OK(gk_scale(ctx, 2.0, b));
        for (size_t i = 0; i < 1000; i++)
            if (gk_test_get(t, p, i) != 2.0 * gk_test_get(t, h, i))
                GK_FAIL("%s element %zu is %g after scale, want %g", gk_test_dtype_name(t), i,
                        gk_test_get(t, p, i), 2.0 * gk_test_get(t, h, i));
        gk_test_set(t, p, 999, 7.5);
        double cell[1] = {0};
        GK_CHECK_OK(gk_buffer_read(b, 999, 1, cell));
        assert_true(gk_test_get(t, cell, 0) == 7.5);

        /* views: the offset applied, views of views too */
        gk_buffer *v = gk_test_view(b, 37, 100);
        gk_buffer *vv = gk_test_view(v, 5, 3);
        assert_ptr_equal(gk_buffer_data(v), p + 37 * es);
        assert_ptr_equal(gk_buffer_data(vv), p + 42 * es);
        /* a view keeps the memory, and its address, after the parent's handle goes */
        gk_buffer_destroy(b);
        assert_ptr_equal(gk_buffer_data(v), p + 37 * es);
        GK_CHECK_OK(gk_fill(ctx, -3.0, vv));
        assert_true(gk_test_get(t, p, 42) == -3.0 && gk_test_get(t, p, 44) == -3.0);
        assert_true(gk_test_get(t, p, 45) == 2.0 * gk_test_get(t, h, 45));

        /* empty buffers and views have no elements, hence no address */
        gk_buffer *e0 = gk_test_view(v, 100, 0);
        assert_null(gk_buffer_data(e0));
        gk_buffer *e1 = NULL;
        GK_CHECK_OK(gk_buffer_create(ctx, t, 0, &e1));
        assert_null(gk_buffer_data(e1));
        gk_buffer_destroy(e0);
        gk_buffer_destroy(e1);
        gk_buffer_destroy(vv);
        gk_buffer_destroy(v);
        free(h);
    }
    assert_null(gk_buffer_data(NULL));
    assert_null(gk_buffer_data((const gk_buffer *)(const void *)junk));
}

/* Host-wrapped buffers give back the caller's own address, on every backend. */
static void test_data_wrap_host(void **state)
{
    gk_context *ctx = gk_test_context(state);
    double mem[64];
    for (int i = 0; i < 64; i++)
        mem[i] = i;
    gk_buffer *b = NULL;
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT64, 64, mem, &b));
    assert_ptr_equal(gk_buffer_data(b), mem);
    gk_buffer *v = gk_test_view(b, 10, 20);
    assert_ptr_equal(gk_buffer_data(v), mem + 10);
    GK_CHECK_OK(gk_scale(ctx, 3.0, v));
    assert_true(mem[9] == 9.0 && mem[10] == 30.0 && mem[29] == 87.0 && mem[30] == 30.0);
    gk_buffer_destroy(v);
    gk_buffer_destroy(b);
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, 0, NULL, &b));
    assert_null(gk_buffer_data(b));
    gk_buffer_destroy(b);
}

/* ------------------------------------------------------------------------------------------
 * CUDA: the caller's cudaMalloc'd memory and stream
 * ---------------------------------------------------------------------------------------- */

#ifdef GK_TEST_CUDA_HELPER

/* The CUDA context of the state, or a skip saying why there is none. */
static gk_context *cuda_context(void **state)
{
    gk_context *ctx = gk_test_context(state);
    char why[512] = "";
    if (gkt_cuda_devices(why, sizeof why) < 1) {
        print_message("[ SKIP WHY ] the test's CUDA runtime sees no device: %s\n", why);
        skip();
    }
    assert_true(gkt_cuda_set_device(0));
    return ctx;
}

/* n random float32 values in caller memory from cudaMalloc; *host gets a copy. */
static float *device_random(size_t n, float **host)
{
    float *h = gk_test_random_array(GK_FLOAT32, n, -2, 2);
    float *d = gkt_cuda_malloc(n * sizeof *d);
    assert_non_null(d);
    assert_true(gkt_cuda_upload(d, h, n * sizeof *d));
    *host = h;
    return d;
}

static void test_cuda_wrap_device(void **state)
{
    gk_context *ctx = cuda_context(state);
    const size_t n = 1025;
    float *hx = NULL, *hy = NULL;
    float *dx = device_random(n, &hx), *dy = device_random(n, &hy);
    float *dz = gkt_cuda_malloc(n * sizeof(float));
    assert_non_null(dz);

    gk_buffer *x = NULL, *y = NULL, *z = NULL;
    GK_CHECK_OK(gk_buffer_wrap_device(ctx, GK_FLOAT32, n, dx, &x));
    GK_CHECK_OK(gk_buffer_wrap_device(ctx, GK_FLOAT32, n, dy, &y));
    GK_CHECK_OK(gk_buffer_wrap_device(ctx, GK_FLOAT32, n, dz, &z));
    assert_int_equal(gk_buffer_count(x), n);
    assert_int_equal(gk_buffer_dtype(x), GK_FLOAT32);
    /* no copy: the buffer is the caller's memory */
    assert_ptr_equal(gk_buffer_data(x), dx);
    GK_EXPECT_CONTENTS(x, hx);

    /* an op writes straight into the caller's memory */
    GK_CHECK_OK(gk_add(ctx, x, y, z));
    GK_CHECK_OK(gk_context_synchronize(ctx));
    float *got = gk_test_alloc(GK_FLOAT32, n);
    assert_true(gkt_cuda_download(got, dz, n * sizeof(float)));
    for (size_t i = 0; i < n; i++)
        if (got[i] != hx[i] + hy[i])
            GK_FAIL("z[%zu] = %g, want %g", i, got[i], hx[i] + hy[i]);

    /* views: offset applied, ops on them; a gk buffer and a wrapped one mix */
    gk_buffer *xv = gk_test_view(x, 100, 300);
    assert_ptr_equal(gk_buffer_data(xv), dx + 100);
    gk_buffer *own = gk_test_buffer_const(ctx, GK_FLOAT32, 300, 1.0);
    GK_CHECK_OK(gk_axpy(ctx, 2.0, own, xv));
    double sum = 0, want = 0;
    GK_CHECK_OK(gk_sum(ctx, xv, &sum));
    for (size_t i = 100; i < 400; i++)
        want += (double)(hx[i] + 2.0f);
    if (sum < want - 1e-3 || sum > want + 1e-3)
        GK_FAIL("sum over the view %g, want %g", sum, want);

    /* gemm through cuBLAS on wrapped memory: 5x7 = (5x3)(3x7) */
    gk_buffer *a = gk_test_view(y, 0, 15), *bm = gk_test_view(y, 15, 21);
    gk_buffer *c = gk_test_view(z, 0, 35);
    GK_CHECK_OK(gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, 5, 7, 3, 1.0, a, 3, bm, 7, 0.0, c, 7));
    float cg[35];
    GK_CHECK_OK(gk_buffer_read(c, 0, 35, cg));
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++) {
            double r = 0;
            for (int l = 0; l < 3; l++)
                r += (double)hy[i * 3 + l] * hy[15 + l * 7 + j];
            if (cg[i * 7 + j] < r - 1e-5 || cg[i * 7 + j] > r + 1e-5)
                GK_FAIL("C[%d][%d] = %g, want %g", i, j, cg[i * 7 + j], r);
        }

    /* the overlap rules hold across separate wraps of the same memory */
    gk_buffer *alias = NULL;
    GK_CHECK_OK(gk_buffer_wrap_device(ctx, GK_FLOAT32, 35, dy + 10, &alias));
    GK_EXPECT(gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, 5, 7, 3, 1.0, a, 3, bm, 7, 0.0, alias, 7),
              GK_E_INVALID_ARGUMENT, "gk_gemm");
    expect_message("overlaps");

    /* lifetimes: the context handle and the buffers go in any order; the memory is never
     * freed by the library (cudaFree of it must still succeed) and keeps its contents */
    gk_context_destroy(ctx);
    ((gk_test_backend *)*state)->ctx = NULL;
    gk_buffer_destroy(x);
    float back[400];
    GK_CHECK_OK(gk_buffer_read(xv, 0, 300, back));
    gk_buffer *all[] = {xv, y, z, a, bm, c, alias, own};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_buffer_destroy(all[i]);
    assert_true(gkt_cuda_download(back, dx, sizeof back));
    assert_memory_equal(back, hx, 100 * sizeof(float));
    for (size_t i = 100; i < 400; i++)
        assert_true(back[i] == hx[i] + 2.0f);
    assert_true(gkt_cuda_free(dx));
    assert_true(gkt_cuda_free(dy));
    assert_true(gkt_cuda_free(dz));
    free(hx);
    free(hy);
    free(got);
}

static void test_cuda_wrap_device_refused(void **state)
{
    gk_context *ctx = cuda_context(state);
    static const char fn[] = "gk_buffer_wrap_device";
    gk_buffer *b = BUF_SENTINEL;
    char ptr[32];

    float *heap = malloc(64 * sizeof *heap);
    assert_non_null(heap);
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, 64, heap, &b), GK_E_INVALID_ARGUMENT, fn);
    snprintf(ptr, sizeof ptr, "%p", (void *)heap);
    expect_message(ptr);
    expect_message("not memory of the context's CUDA device 0");
    free(heap);

    float *pinned = gkt_cuda_malloc_host(64 * sizeof *pinned);
    assert_non_null(pinned);
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, 64, pinned, &b), GK_E_INVALID_ARGUMENT, fn);
    expect_message("pinned host memory");
    print_message("pinned: %s\n", gk_last_error());
    assert_true(gkt_cuda_free_host(pinned));

    /* a range that starts in device memory but runs far past its allocation */
    float *d = gkt_cuda_malloc(256);
    assert_non_null(d);
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, (size_t)1 << 40, d, &b), GK_E_INVALID_ARGUMENT,
              fn);
    expect_message("last byte of the last element");
    print_message("past the end: %s\n", gk_last_error());
    GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT64, 4, (char *)d + 4, &b), GK_E_INVALID_ARGUMENT,
              fn);
    assert_ptr_equal(b, BUF_SENTINEL);
    assert_true(gkt_cuda_free(d));

    /* managed memory is memory the device computes on */
    float *m = gkt_cuda_malloc_managed(16 * sizeof *m);
    if (m != NULL) {
        for (int i = 0; i < 16; i++)
            m[i] = (float)i;
        GK_CHECK_OK(gk_buffer_wrap_device(ctx, GK_FLOAT32, 16, m, &b));
        double sum = 0;
        GK_CHECK_OK(gk_sum(ctx, b, &sum));
        assert_true(sum == 120.0);
        gk_buffer_destroy(b);
        assert_true(gkt_cuda_free(m));
    }

    /* another GPU's memory, where there is another GPU */
    char why[256];
    if (gkt_cuda_devices(why, sizeof why) >= 2) {
        assert_true(gkt_cuda_set_device(1));
        float *other = gkt_cuda_malloc(64 * sizeof *other);
        assert_true(gkt_cuda_set_device(0));
        assert_non_null(other);
        b = BUF_SENTINEL;
        GK_EXPECT(gk_buffer_wrap_device(ctx, GK_FLOAT32, 64, other, &b), GK_E_INVALID_ARGUMENT, fn);
        expect_message("is memory of CUDA device 1, not of the context's CUDA device 0");
        assert_ptr_equal(b, BUF_SENTINEL);
        assert_true(gkt_cuda_set_device(1));
        assert_true(gkt_cuda_free(other));
        assert_true(gkt_cuda_set_device(0));
    } else {
        print_message("one GPU: the other-device case is not exercised\n");
    }
}

/* The caller's kernels and the context's work on one stream run in stream order. Each caller
 * kernel spins for a while before it writes, so work that ignored the stream would run first
 * and the results would show it. */
static void test_cuda_user_stream(void **state)
{
    gk_context *ctx = cuda_context(state);
    const size_t n = 4099;
    const double spin_ms = 50;
    void *own = gk_context_stream(ctx);
    void *stream = gkt_cuda_stream_create();
    assert_non_null(stream);
    GK_CHECK_OK(gk_context_set_stream(ctx, stream));
    assert_ptr_equal(gk_context_stream(ctx), stream);

    float *dx = gkt_cuda_malloc(n * sizeof(float));
    float *dy = gkt_cuda_malloc(n * sizeof(float));
    assert_non_null(dx);
    assert_non_null(dy);
    gk_buffer *x = NULL, *y = NULL;
    GK_CHECK_OK(gk_buffer_wrap_device(ctx, GK_FLOAT32, n, dx, &x));
    GK_CHECK_OK(gk_buffer_wrap_device(ctx, GK_FLOAT32, n, dy, &y));
    float *got = gk_test_alloc(GK_FLOAT32, n);

    /* caller kernel -> gk op -> caller kernel, checked without any gk wait */
    assert_true(gkt_cuda_fill_late(stream, dx, n, 3.0f, spin_ms));
    GK_CHECK_OK(gk_scale(ctx, 2.0, x));
    assert_true(gkt_cuda_affine(stream, dy, dx, n, 1.0f, 1.0f));
    assert_true(gkt_cuda_stream_sync(stream));
    assert_true(gkt_cuda_download(got, dy, n * sizeof(float)));
    for (size_t i = 0; i < n; i++)
        if (got[i] != 7.0f)
            GK_FAIL("y[%zu] = %g, want 7 = (3 * 2) + 1: the op did not run in stream order", i,
                    got[i]);

    /* cuBLAS on the caller's stream: A is filled late, C = A * B */
    gk_buffer *a = gk_test_view(x, 0, 64), *b = gk_test_view(x, 64, 64);
    gk_buffer *c = gk_test_view(y, 0, 64);
    assert_true(gkt_cuda_fill_late(stream, dx, 128, 0.5f, spin_ms));
    GK_CHECK_OK(gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, 8, 8, 8, 1.0, a, 8, b, 8, 0.0, c, 8));
    assert_true(gkt_cuda_affine(stream, dy + 64, dy, 64, 1.0f, 0.0f));
    float cg[128];
    GK_CHECK_OK(gk_buffer_read(y, 0, 128, cg)); /* waits on the caller's stream */
    for (int i = 0; i < 128; i++)
        if (cg[i] != 2.0f)
            GK_FAIL("C element %d = %g, want 2 = 8 * 0.5 * 0.5", i, cg[i]);

    /* waiting calls wait for the stream: a reduction, staging of a host operand, a read */
    assert_true(gkt_cuda_fill_late(stream, dx, n, 1.5f, spin_ms));
    double sum = 0;
    GK_CHECK_OK(gk_sum(ctx, x, &sum));
    assert_true(sum == 1.5 * (double)n);
    float *host = gk_test_const_array(GK_FLOAT32, n, 0.25);
    gk_buffer *hb = NULL;
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, n, host, &hb));
    assert_true(gkt_cuda_fill_late(stream, dx, n, 4.0f, spin_ms));
    GK_CHECK_OK(gk_mul(ctx, x, hb, hb)); /* staged through the stream, back before it returns */
    for (size_t i = 0; i < n; i++)
        if (host[i] != 1.0f)
            GK_FAIL("host[%zu] = %g, want 1 = 4 * 0.25", i, host[i]);
    /* gk_context_synchronize waits for the caller's own work on the stream too */
    assert_true(gkt_cuda_fill_late(stream, dy, n, 9.0f, spin_ms));
    GK_CHECK_OK(gk_context_synchronize(ctx));
    assert_true(gkt_cuda_stream_idle(stream));

    /* back to the context's own stream: what was queued on the caller's comes first */
    assert_true(gkt_cuda_fill_late(stream, dx, n, 5.0f, spin_ms));
    GK_CHECK_OK(gk_scale(ctx, 2.0, x)); /* queued on the caller's stream after the fill */
    GK_CHECK_OK(gk_context_set_stream(ctx, NULL));
    assert_ptr_equal(gk_context_stream(ctx), own);
    GK_CHECK_OK(gk_add(ctx, x, x, y)); /* on the own stream, after the switch */
    GK_CHECK_OK(gk_buffer_read(y, 0, n, got));
    for (size_t i = 0; i < n; i++)
        if (got[i] != 20.0f)
            GK_FAIL("y[%zu] = %g, want 20 = (5 * 2) * 2: the switch did not order the streams", i,
                    got[i]);

    /* buffers created while on the caller's stream, then the context destroyed on it */
    GK_CHECK_OK(gk_context_set_stream(ctx, stream));
    gk_buffer *mine = gk_test_buffer_const(ctx, GK_FLOAT32, n, 2.0);
    GK_CHECK_OK(gk_mul(ctx, mine, x, y));
    GK_CHECK_OK(gk_buffer_read(y, 0, n, got));
    assert_true(got[0] == 20.0f && got[n - 1] == 20.0f);
    gk_buffer *all[] = {x, y, a, b, c, hb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_buffer_destroy(all[i]);
    gk_context_destroy(ctx);
    ((gk_test_backend *)*state)->ctx = NULL;
    assert_true(gkt_cuda_stream_destroy(stream));
    /* a buffer outlives the handle and the caller's stream: it works on the context's own */
    float *fresh = gk_test_const_array(GK_FLOAT32, n, -1.25);
    GK_CHECK_OK(gk_buffer_write(mine, 0, n, fresh));
    GK_CHECK_OK(gk_buffer_read(mine, 0, n, got));
    assert_memory_equal(got, fresh, n * sizeof(float));
    gk_buffer_destroy(mine);
    free(fresh);
    assert_true(gkt_cuda_free(dx));
    assert_true(gkt_cuda_free(dy));
    free(got);
    free(host);
}

/* An AUTO context on a GPU host keeps the CPU too; device memory still runs on the GPU, on the
 * caller's stream, and synchronize waits for that stream even when the context queued nothing
 * since its last wait (the caller's own kernels are on it). */
static void test_cuda_auto_context(void **state)
{
    (void)cuda_context(state);
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_AUTO, &ctx));
    if (gk_context_backend(ctx) != GK_BACKEND_CUDA) {
        gk_context_destroy(ctx);
        print_message("[ SKIP WHY ] AUTO chose the CPU (GK_BACKEND=%s)\n",
                      getenv("GK_BACKEND") ? getenv("GK_BACKEND") : "");
        skip();
    }
    void *stream = gkt_cuda_stream_create();
    assert_non_null(stream);
    GK_CHECK_OK(gk_context_set_stream(ctx, stream));
    const size_t n = 1000;
    float *dx = gkt_cuda_malloc(n * sizeof(float));
    assert_non_null(dx);
    gk_buffer *x = NULL;
    GK_CHECK_OK(gk_buffer_wrap_device(ctx, GK_FLOAT32, n, dx, &x));
    assert_true(gkt_cuda_fill_late(stream, dx, n, 2.0f, 50));
    GK_CHECK_OK(gk_scale(ctx, 0.5, x));
    assert_int_equal(gk_context_last_backend(ctx), GK_BACKEND_CUDA);
    double sum = 0;
    GK_CHECK_OK(gk_sum(ctx, x, &sum));
    assert_true(sum == (double)n);
    GK_CHECK_OK(gk_context_synchronize(ctx));
    assert_true(gkt_cuda_fill_late(stream, dx, n, 3.0f, 50));
    GK_CHECK_OK(gk_context_synchronize(ctx));
    if (!gkt_cuda_stream_idle(stream))
        GK_FAIL("gk_context_synchronize returned before the caller's kernel on its stream ended");
    gk_buffer_destroy(x);
    gk_context_destroy(ctx);
    assert_true(gkt_cuda_stream_destroy(stream));
    assert_true(gkt_cuda_free(dx));
}

#else

static gk_context *cuda_context(void **state)
{
    (void)state;
    print_message("[ SKIP WHY ] built without the CUDA toolkit (GK_WITH_CUDA=OFF): the test has "
                  "no cudaMalloc or stream of a caller's to hand over\n");
    skip();
    return NULL;
}

static void test_cuda_wrap_device(void **state)
{
    (void)cuda_context(state);
}

static void test_cuda_wrap_device_refused(void **state)
{
    (void)cuda_context(state);
}

static void test_cuda_user_stream(void **state)
{
    (void)cuda_context(state);
}

static void test_cuda_auto_context(void **state)
{
    (void)cuda_context(state);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_count),
        cmocka_unit_test(test_device_option),
        GK_TEST_BOTH(test_wrap_device_errors),
        GK_TEST_BOTH(test_stream_errors),
        cmocka_unit_test_prestate_setup_teardown(test_data_cpu, gk_test_setup, gk_test_teardown,
                                                 &gk_test_cpu),
        GK_TEST_BOTH(test_data_wrap_host),
        cmocka_unit_test_prestate_setup_teardown(test_cuda_wrap_device, gk_test_setup,
                                                 gk_test_teardown, &gk_test_cuda),
        cmocka_unit_test_prestate_setup_teardown(test_cuda_wrap_device_refused, gk_test_setup,
                                                 gk_test_teardown, &gk_test_cuda),
        cmocka_unit_test_prestate_setup_teardown(test_cuda_user_stream, gk_test_setup,
                                                 gk_test_teardown, &gk_test_cuda),
        cmocka_unit_test_prestate_setup_teardown(test_cuda_auto_context, gk_test_setup,
                                                 gk_test_teardown, &gk_test_cuda),
    };
    return cmocka_run_group_tests_name("interop", tests, gk_test_group_setup, NULL);
}
