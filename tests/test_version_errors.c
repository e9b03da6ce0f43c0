/* SPDX-License-Identifier: MIT */
/* test_version_errors.c - version queries, status strings and the per-thread gk_last_error. */
#include "gk_test.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void test_version_number(void **state)
{
    (void)state;
    assert_int_equal(gk_version_number(), GK_VERSION_NUMBER);
    assert_int_equal(GK_VERSION_NUMBER,
                     GK_VERSION_MAJOR * 10000 + GK_VERSION_MINOR * 100 + GK_VERSION_PATCH);
    assert_int_equal(GK_VERSION_MAJOR, 1);
}

static void test_version_string(void **state)
{
    (void)state;
    const char *v = gk_version_string();
    assert_non_null(v);
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", GK_VERSION_MAJOR, GK_VERSION_MINOR,
             GK_VERSION_PATCH);
    assert_string_equal(v, expected);
    assert_string_equal(v, GK_VERSION_STRING);
}

static void test_status_strings(void **state)
{
    (void)state;
    static const char *const names[] = {"GK_OK",
                                        "GK_E_INVALID_ARGUMENT",
                                        "GK_E_SHAPE",
                                        "GK_E_DTYPE",
                                        "GK_E_CONTEXT_MISMATCH",
                                        "GK_E_OUT_OF_MEMORY",
                                        "GK_E_OVERFLOW",
                                        "GK_E_BACKEND_UNAVAILABLE",
                                        "GK_E_UNSUPPORTED",
                                        "GK_E_DEVICE",
                                        "GK_E_INTERNAL"};
    for (int s = 0; s <= 10; s++) {
        const char *str = gk_status_string((gk_status)s);
        assert_non_null(str);
        if (strstr(str, names[s]) == NULL)
            GK_FAIL("gk_status_string(%d) = \"%s\" does not name %s", s, str, names[s]);
        /* "GK_E_SHAPE" must not be mistaken for a prefix of another name */
        size_t len = strlen(names[s]);
        if (str[len] != '\0' && str[len] != ':' && str[len] != ' ')
            GK_FAIL("gk_status_string(%d) = \"%s\" continues the name %s", s, str, names[s]);
        for (int o = 0; o < s; o++)
            assert_string_not_equal(str, gk_status_string((gk_status)o));
    }
    static const int unknown[] = {-1, 11, 100, 1 << 30};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *str = gk_status_string((gk_status)unknown[i]);
        assert_non_null(str);
        assert_true(str[0] != '\0');
    }
}

static void *last_error_in_fresh_thread(void *arg)
{
    const char *msg = gk_last_error();
    *(int *)arg = msg != NULL && msg[0] == '\0';
    return NULL;
}

static void test_last_error_empty_in_new_thread(void **state)
{
    (void)state;
    /* Fail on this thread first: the new thread must still see "". */
    gk_buffer *b = NULL;
    GK_EXPECT(gk_buffer_create(NULL, GK_FLOAT32, 1, &b), GK_E_INVALID_ARGUMENT, "gk_buffer_create");
    int empty = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, last_error_in_fresh_thread, &empty), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(empty);
}

static void test_last_error_kept_by_success(void **state)
{
    (void)state;
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &ctx));
    gk_buffer *b = NULL;
    GK_EXPECT(gk_buffer_create(ctx, (gk_dtype)7, 4, &b), GK_E_INVALID_ARGUMENT, "gk_buffer_create");
    assert_null(b);
    char first[1024];
    snprintf(first, sizeof first, "%s", gk_last_error());

    /* successful calls do not clear the message */
    GK_CHECK_OK(gk_buffer_create(ctx, GK_FLOAT32, 4, &b));
    GK_CHECK_OK(gk_fill(ctx, 1.0, b));
    GK_CHECK_OK(gk_context_synchronize(ctx));
    assert_string_equal(gk_last_error(), first);

    /* the next failure replaces it */
    float host[4];
    GK_EXPECT(gk_buffer_read(b, 2, 4, host), GK_E_SHAPE, "gk_buffer_read");
    assert_string_not_equal(gk_last_error(), first);

    gk_buffer_destroy(b);
    gk_context_destroy(ctx);
}

static void test_last_error_names_values(void **state)
{
    (void)state;
    /* STYLE: messages name the function, the argument and the values. */
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &ctx));
    gk_buffer *b = NULL;
    GK_CHECK_OK(gk_buffer_create(ctx, GK_FLOAT64, 10, &b));
    double host[3];
    GK_EXPECT(gk_buffer_read(b, 9, 3, host), GK_E_SHAPE, "gk_buffer_read");
    const char *msg = gk_last_error();
    if (strstr(msg, "9") == NULL || strstr(msg, "3") == NULL || strstr(msg, "10") == NULL)
        GK_FAIL("gk_last_error() \"%s\" should give offset 9, count 3 and size 10", msg);
    gk_buffer_destroy(b);
    gk_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_number),
        cmocka_unit_test(test_version_string),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_last_error_empty_in_new_thread),
        cmocka_unit_test(test_last_error_kept_by_success),
        cmocka_unit_test(test_last_error_names_values),
    };
    return cmocka_run_group_tests_name("version_errors", tests, gk_test_group_setup, NULL);
}
