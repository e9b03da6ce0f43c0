/* SPDX-License-Identifier: MIT */
/* test_buffer.c - buffers: create, wrap_host, views, read/write, bounds, overflow, lifetimes. */
#include "gk_test.h"

#include <stdlib.h>
#include <string.h>

static char out_marker;
#define BUF_SENTINEL ((gk_buffer *)&out_marker)

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};

static void test_create_read_write(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const size_t counts[] = {0, 1, 7, 1000, 1025, 1 << 20};
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            size_t n = counts[ci];
            void *h = NULL;
            gk_buffer *b = gk_test_buffer_random(ctx, t, n, -1e3, 1e3, &h);
            assert_int_equal(gk_buffer_count(b), n);
            assert_int_equal(gk_buffer_dtype(b), t);
            GK_EXPECT_CONTENTS(b, h);
            gk_buffer_destroy(b);
            free(h);
        }
    }
}

static void test_partial_read_write(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t es = gk_test_esize(t);
        void *h = NULL;
        gk_buffer *b = gk_test_buffer_random(ctx, t, 100, -1, 1, &h);
        void *patch = gk_test_random_array(t, 13, 5, 6);
        GK_CHECK_OK(gk_buffer_write(b, 37, 13, patch));
        memcpy((char *)h + 37 * es, patch, 13 * es);
        GK_EXPECT_CONTENTS(b, h);

        void *part = gk_test_const_array(t, 20, GK_TEST_SENTINEL);
        GK_CHECK_OK(gk_buffer_read(b, 80, 19, part));
        assert_memory_equal(part, (char *)h + 80 * es, 19 * es);
        assert_true(gk_test_get(t, part, 19) == GK_TEST_SENTINEL);

        /* zero counts, also at the very end */
        GK_CHECK_OK(gk_buffer_write(b, 100, 0, patch));
        GK_CHECK_OK(gk_buffer_read(b, 100, 0, part));
        GK_CHECK_OK(gk_buffer_read(b, 0, 0, part));
        GK_EXPECT_CONTENTS(b, h);
        gk_buffer_destroy(b);
        free(h);
        free(patch);
        free(part);
    }
}

static void test_create_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_buffer *b = BUF_SENTINEL;
    GK_EXPECT(gk_buffer_create(NULL, GK_FLOAT32, 4, &b), GK_E_INVALID_ARGUMENT, "gk_buffer_create");
    assert_ptr_equal(b, BUF_SENTINEL);
    GK_EXPECT(gk_buffer_create(ctx, GK_FLOAT32, 4, NULL), GK_E_INVALID_ARGUMENT,
              "gk_buffer_create");
    GK_EXPECT(gk_buffer_create(ctx, (gk_dtype)0, 4, &b), GK_E_INVALID_ARGUMENT, "gk_buffer_create");
    GK_EXPECT(gk_buffer_create(ctx, (gk_dtype)4, 4, &b), GK_E_INVALID_ARGUMENT, "gk_buffer_create");
    assert_ptr_equal(b, BUF_SENTINEL);
    GK_EXPECT(gk_buffer_create(ctx, GK_FLOAT32, SIZE_MAX / 2, &b), GK_E_OVERFLOW,
              "gk_buffer_create");
    GK_EXPECT(gk_buffer_create(ctx, GK_FLOAT64, SIZE_MAX / 4 + 1, &b), GK_E_OVERFLOW,
              "gk_buffer_create");
    assert_ptr_equal(b, BUF_SENTINEL);
    /* 2^63 bytes: no machine has them */
    GK_EXPECT(gk_buffer_create(ctx, GK_FLOAT64, (size_t)1 << 60, &b), GK_E_OUT_OF_MEMORY,
              "gk_buffer_create");
    assert_ptr_equal(b, BUF_SENTINEL);
    /* the context stays usable */
    gk_buffer *ok = gk_test_buffer_const(ctx, GK_FLOAT32, 5, 3.0);
    GK_CHECK_OK(gk_scale(ctx, 2.0, ok));
    float h[5];
    GK_CHECK_OK(gk_buffer_read(ok, 0, 5, h));
    for (int i = 0; i < 5; i++)
        assert_true(h[i] == 6.0f);
    gk_buffer_destroy(ok);
}

/* CUDA only: 2^40 bytes of device memory fails cleanly and the context keeps working. */
static void test_cuda_out_of_memory(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_buffer *b = BUF_SENTINEL;
    GK_EXPECT(gk_buffer_create(ctx, GK_FLOAT32, (size_t)1 << 38, &b), GK_E_OUT_OF_MEMORY,
              "gk_buffer_create");
    assert_ptr_equal(b, BUF_SENTINEL);
    void *hx = NULL, *hy = NULL;
    gk_buffer *x = gk_test_buffer_random(ctx, GK_FLOAT32, 1000, -1, 1, &hx);
    gk_buffer *y = gk_test_buffer_random(ctx, GK_FLOAT32, 1000, -1, 1, &hy);
    GK_CHECK_OK(gk_add(ctx, x, y, y));
    float *expected = hy;
    for (size_t i = 0; i < 1000; i++)
        expected[i] = ((float *)hx)[i] + ((float *)hy)[i];
    GK_EXPECT_CONTENTS(y, expected);
    double s = 0;
    GK_CHECK_OK(gk_sum(ctx, x, &s));
    GK_CHECK_OK(gk_context_synchronize(ctx));
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    free(hx);
    free(hy);
}

static void test_wrap_host(void **state)
{
    gk_context *ctx = gk_test_context(state);
    double host[50];
    for (int i = 0; i < 50; i++)
        host[i] = i;
    gk_buffer *b = NULL;
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT64, 40, host + 5, &b));
    assert_int_equal(gk_buffer_count(b), 40);
    assert_int_equal(gk_buffer_dtype(b), GK_FLOAT64);
    double got[40];
    GK_CHECK_OK(gk_buffer_read(b, 0, 40, got));
    assert_memory_equal(got, host + 5, sizeof got);

    /* operations write the caller's memory before they return, and nothing outside */
    GK_CHECK_OK(gk_fill(ctx, 7.25, b));
    for (int i = 0; i < 50; i++)
        assert_true(host[i] == (i >= 5 && i < 45 ? 7.25 : (double)i));
    double one = -1.5;
    GK_CHECK_OK(gk_buffer_write(b, 39, 1, &one));
    assert_true(host[44] == -1.5);
    assert_true(host[45] == 45.0);

    /* views of host buffers address the same memory */
    gk_buffer *v = gk_test_view(b, 10, 3);
    GK_CHECK_OK(gk_scale(ctx, 2.0, v));
    assert_true(host[14] == 7.25 && host[15] == 14.5 && host[17] == 14.5 && host[18] == 7.25);
    gk_buffer_destroy(b);
    gk_buffer_destroy(v);

    float fh[3] = {1, 2, 3};
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, 3, fh, &b));
    GK_CHECK_OK(gk_scale(ctx, 0.5, b));
    assert_true(fh[0] == 0.5f && fh[1] == 1.0f && fh[2] == 1.5f);
    gk_buffer_destroy(b);

    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, 0, NULL, &b));
    assert_int_equal(gk_buffer_count(b), 0);
    gk_buffer_destroy(b);
}

static void test_wrap_host_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    float host[4] = {0};
    gk_buffer *b = BUF_SENTINEL;
    GK_EXPECT(gk_buffer_wrap_host(NULL, GK_FLOAT32, 4, host, &b), GK_E_INVALID_ARGUMENT,
              "gk_buffer_wrap_host");
    GK_EXPECT(gk_buffer_wrap_host(ctx, GK_FLOAT32, 4, NULL, &b), GK_E_INVALID_ARGUMENT,
              "gk_buffer_wrap_host");
    GK_EXPECT(gk_buffer_wrap_host(ctx, (gk_dtype)9, 4, host, &b), GK_E_INVALID_ARGUMENT,
              "gk_buffer_wrap_host");
    GK_EXPECT(gk_buffer_wrap_host(ctx, GK_FLOAT32, 4, host, NULL), GK_E_INVALID_ARGUMENT,
              "gk_buffer_wrap_host");
    GK_EXPECT(gk_buffer_wrap_host(ctx, GK_FLOAT32, SIZE_MAX / 2, host, &b), GK_E_OVERFLOW,
              "gk_buffer_wrap_host");
    /* Elements not aligned to their dtype (once accepted: UBSan aborted in the ops). */
    double aligned[4] = {0};
    char *bytes = (char *)aligned;
    GK_EXPECT(gk_buffer_wrap_host(ctx, GK_FLOAT32, 3, bytes + 1, &b), GK_E_INVALID_ARGUMENT,
              "gk_buffer_wrap_host");
    assert_non_null(strstr(gk_last_error(), "is not aligned to the 4-byte elements"));
    GK_EXPECT(gk_buffer_wrap_host(ctx, GK_FLOAT64, 3, bytes + 4, &b), GK_E_INVALID_ARGUMENT,
              "gk_buffer_wrap_host");
    assert_non_null(strstr(gk_last_error(), "is not aligned to the 8-byte elements"));
    assert_ptr_equal(b, BUF_SENTINEL);
    /* 4-byte alignment is enough for float32, and no element means nothing to misread. */
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, 3, bytes + 4, &b));
    gk_buffer_destroy(b);
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT64, 0, bytes + 1, &b));
    gk_buffer_destroy(b);
}

static void test_views(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t es = gk_test_esize(t);
        void *h = NULL;
        gk_buffer *p = gk_test_buffer_random(ctx, t, 100, -1, 1, &h);
        gk_buffer *v = gk_test_view(p, 10, 50);
        assert_int_equal(gk_buffer_count(v), 50);
        assert_int_equal(gk_buffer_dtype(v), t);
        void *got = gk_test_read_all(v);
        assert_memory_equal(got, (char *)h + 10 * es, 50 * es);
        free(got);

        /* a view of a view adds the offsets */
        gk_buffer *vv = gk_test_view(v, 5, 20);
        got = gk_test_read_all(vv);
        assert_memory_equal(got, (char *)h + 15 * es, 20 * es);
        free(got);

        /* writes through a view land in the parent, and only there */
        GK_CHECK_OK(gk_fill(ctx, 4.0, vv));
        for (size_t i = 15; i < 35; i++)
            gk_test_set(t, h, i, 4.0);
        GK_EXPECT_CONTENTS(p, h);
        void *patch = gk_test_random_array(t, 3, 10, 20);
        GK_CHECK_OK(gk_buffer_write(vv, 17, 3, patch));
        memcpy((char *)h + 32 * es, patch, 3 * es);
        GK_EXPECT_CONTENTS(p, h);

        /* empty views, also at the end */
        gk_buffer *e = gk_test_view(p, 100, 0);
        assert_int_equal(gk_buffer_count(e), 0);
        gk_buffer *e2 = gk_test_view(vv, 20, 0);
        GK_CHECK_OK(gk_fill(ctx, 1.0, e2));
        GK_EXPECT_CONTENTS(p, h);
        gk_buffer *whole = gk_test_view(p, 0, 100);
        GK_EXPECT_CONTENTS(whole, h);

        /* destroy parents before children: views keep the memory alive */
        gk_buffer_destroy(p);
        gk_buffer_destroy(v);
        got = gk_test_read_all(vv);
        assert_memory_equal(got, (char *)h + 15 * es, 20 * es);
        free(got);
        gk_buffer_destroy(vv);
        gk_buffer_destroy(e);
        gk_buffer_destroy(e2);
        GK_EXPECT_CONTENTS(whole, h);
        gk_buffer_destroy(whole);
        free(h);
        free(patch);
    }
}

static void test_view_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_buffer *p = gk_test_buffer_const(ctx, GK_FLOAT32, 100, 1.0);
    gk_buffer *v = gk_test_view(p, 10, 50);
    gk_buffer *out = BUF_SENTINEL;
    GK_EXPECT(gk_buffer_view(NULL, 0, 1, &out), GK_E_INVALID_ARGUMENT, "gk_buffer_view");
    GK_EXPECT(gk_buffer_view(p, 0, 1, NULL), GK_E_INVALID_ARGUMENT, "gk_buffer_view");
    GK_EXPECT(gk_buffer_view(p, 5, 96, &out), GK_E_SHAPE, "gk_buffer_view");
    GK_EXPECT(gk_buffer_view(p, 101, 0, &out), GK_E_SHAPE, "gk_buffer_view");
    /* inside the parent, but past the end of the view it is taken from */
    GK_EXPECT(gk_buffer_view(v, 40, 11, &out), GK_E_SHAPE, "gk_buffer_view");
    GK_EXPECT(gk_buffer_view(p, SIZE_MAX, 2, &out), GK_E_OVERFLOW, "gk_buffer_view");
    GK_EXPECT(gk_buffer_view(v, 2, SIZE_MAX - 1, &out), GK_E_OVERFLOW, "gk_buffer_view");
    assert_ptr_equal(out, BUF_SENTINEL);
    gk_buffer_destroy(v);
    gk_buffer_destroy(p);
}

static void test_read_write_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        gk_buffer *b = gk_test_buffer_const(ctx, t, 10, GK_TEST_SENTINEL);
        gk_buffer *v = gk_test_view(b, 2, 5);
        void *host = gk_test_const_array(t, 16, 1.0);
        void *untouched = gk_test_const_array(t, 16, 1.0);
        size_t bytes = 16 * gk_test_esize(t);

        GK_EXPECT(gk_buffer_read(NULL, 0, 1, host), GK_E_INVALID_ARGUMENT, "gk_buffer_read");
        GK_EXPECT(gk_buffer_read(b, 0, 1, NULL), GK_E_INVALID_ARGUMENT, "gk_buffer_read");
        GK_EXPECT(gk_buffer_read(b, 0, 11, host), GK_E_SHAPE, "gk_buffer_read");
        GK_EXPECT(gk_buffer_read(b, 10, 1, host), GK_E_SHAPE, "gk_buffer_read");
        GK_EXPECT(gk_buffer_read(v, 1, 5, host), GK_E_SHAPE, "gk_buffer_read");
        GK_EXPECT(gk_buffer_read(b, 2, SIZE_MAX - 1, host), GK_E_OVERFLOW, "gk_buffer_read");
        GK_EXPECT(gk_buffer_read(b, SIZE_MAX, 1, host), GK_E_OVERFLOW, "gk_buffer_read");
        assert_memory_equal(host, untouched, bytes);

        GK_EXPECT(gk_buffer_write(NULL, 0, 1, host), GK_E_INVALID_ARGUMENT, "gk_buffer_write");
        GK_EXPECT(gk_buffer_write(b, 0, 1, NULL), GK_E_INVALID_ARGUMENT, "gk_buffer_write");
        GK_EXPECT(gk_buffer_write(b, 3, 8, host), GK_E_SHAPE, "gk_buffer_write");
        GK_EXPECT(gk_buffer_write(v, 0, 6, host), GK_E_SHAPE, "gk_buffer_write");
        GK_EXPECT(gk_buffer_write(b, 2, SIZE_MAX - 1, host), GK_E_OVERFLOW, "gk_buffer_write");
        GK_EXPECT_SENTINEL(b);

        gk_buffer_destroy(v);
        gk_buffer_destroy(b);
        free(host);
        free(untouched);
    }
}

static void test_getters_and_destroy_null(void **state)
{
    (void)state;
    assert_int_equal(gk_buffer_count(NULL), 0);
    assert_int_equal(gk_buffer_dtype(NULL), 0);
    gk_buffer_destroy(NULL);
}

/* Destroying in any order is safe: context first, parent before views, middle view first. */
static void test_destroy_orders(void **state)
{
    (void)gk_test_context(state);
    for (int order = 0; order < 6; order++) {
        gk_context *ctx = NULL;
        GK_CHECK_OK(gk_context_create(gk_test_backend_of(state), &ctx));
        void *h = NULL;
        gk_buffer *p = gk_test_buffer_random(ctx, GK_FLOAT32, 64, -1, 1, &h);
        gk_buffer *v = gk_test_view(p, 8, 32);
        gk_buffer *vv = gk_test_view(v, 8, 8);
        void *handles[4] = {ctx, p, v, vv};
        static const int perms[6][4] = {{0, 1, 2, 3}, {0, 3, 2, 1}, {1, 0, 3, 2},
                                        {2, 1, 0, 3}, {3, 2, 1, 0}, {1, 2, 0, 3}};
        for (int i = 0; i < 4; i++) {
            int which = perms[order][i];
            if (which == 0)
                gk_context_destroy(handles[0]);
            else
                gk_buffer_destroy(handles[which]);
            handles[which] = NULL;
            /* whatever is left still reads the right data */
            if (handles[3]) {
                float got[8];
                GK_CHECK_OK(gk_buffer_read(handles[3], 0, 8, got));
                assert_memory_equal(got, (float *)h + 16, sizeof got);
            }
            if (handles[1]) {
                float got[64];
                GK_CHECK_OK(gk_buffer_read(handles[1], 0, 64, got));
                assert_memory_equal(got, h, sizeof got);
            }
        }
        free(h);
    }
}

/* A destroyed buffer passed again is detected, and its handle's memory does not go to the next
 * buffer: a second destroy leaves that one alone (it once destroyed it). */
static void test_destroyed_buffer(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, 4, 1.0);
    gk_buffer_destroy(x);
    gk_buffer *y = gk_test_buffer_const(ctx, GK_FLOAT32, 4, 2.0);
    assert_ptr_not_equal(x, y);
    gk_buffer_destroy(x); /* a second destroy is ignored */
    float h[4] = {0};
    GK_EXPECT(gk_buffer_read(x, 0, 4, h), GK_E_INVALID_ARGUMENT, "gk_buffer_read");
    if (strstr(gk_last_error(), "buf (0x") == NULL ||
        strstr(gk_last_error(), "was destroyed") == NULL)
        GK_FAIL("message \"%s\" should say the buffer was destroyed", gk_last_error());
    GK_EXPECT(gk_fill(ctx, 3.0, x), GK_E_INVALID_ARGUMENT, "gk_fill");
    GK_EXPECT(gk_buffer_view(x, 0, 1, &x), GK_E_INVALID_ARGUMENT, "gk_buffer_view");
    assert_int_equal(gk_buffer_count(x), 0);
    assert_int_equal(gk_buffer_dtype(x), 0);
    const float want[4] = {2, 2, 2, 2};
    GK_EXPECT_CONTENTS(y, want);
    gk_buffer_destroy(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_create_read_write),
        GK_TEST_BOTH(test_partial_read_write),
        GK_TEST_BOTH(test_create_errors),
        {"test_cuda_out_of_memory/cuda", test_cuda_out_of_memory, gk_test_setup, gk_test_teardown,
         &gk_test_cuda},
        GK_TEST_BOTH(test_wrap_host),
        GK_TEST_BOTH(test_wrap_host_errors),
        GK_TEST_BOTH(test_views),
        GK_TEST_BOTH(test_view_errors),
        GK_TEST_BOTH(test_read_write_errors),
        cmocka_unit_test(test_getters_and_destroy_null),
        GK_TEST_BOTH(test_destroy_orders),
        GK_TEST_BOTH(test_destroyed_buffer),
    };
    return cmocka_run_group_tests_name("buffer", tests, gk_test_group_setup, NULL);
}
