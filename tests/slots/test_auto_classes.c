/* SPDX-License-Identifier: MIT */
/* test_auto_classes.c - an AUTO context places each op by the rates of its own class of work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gk_test.h"

/* The CPU backend's code loaded as the CUDA module (slots_module.c) makes AUTO contexts hybrid
 * on a host without a GPU. The cost model below is read from a cache file: transfers and calls
 * free, so only the rates decide, and the rates put add and rng_normal on the CPU and
 * rng_uniform on the GPU; a call of any class placed by another's rates lands elsewhere. */
static const char *const model_lines[] = {
    "h2d_bytes_per_s 1e13",
    "d2h_bytes_per_s 1e13",
    "gpu_call_s 1e-9",
    "cpu_call_s 1e-9",
};
static const char *const class_names[] = {"stream",    "exp",         "gemm",      "rbf_rows",
                                          "rbf_pairs", "rng_uniform", "rng_normal"};
#define NCLASSES (sizeof class_names / sizeof class_names[0])
#define FAST "1e15"
#define SLOW "1e7"

static char model_path[64];

static void write_model(void)
{
    snprintf(model_path, sizeof model_path, "/tmp/gk_test_classes_XXXXXX");
    int fd = mkstemp(model_path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (size_t i = 0; i < sizeof model_lines / sizeof model_lines[0]; i++)
        fprintf(f, "%s\n", model_lines[i]);
    for (size_t c = 0; c < NCLASSES; c++) {
        int gpu_wins = strcmp(class_names[c], "rng_uniform") == 0;
        for (int d = 0; d < 2; d++) {
            const char *dt = d ? "f64" : "f32";
            fprintf(f, "cpu_%s_%s %s\ngpu_%s_%s %s\n", class_names[c], dt, gpu_wins ? SLOW : FAST,
                    class_names[c], dt, gpu_wins ? FAST : SLOW);
        }
    }
    assert_int_equal(fclose(f), 0);
}

static void test_ops_placed_by_their_class(void **state)
{
    (void)state;
    write_model();
    setenv("GK_CALIBRATION", model_path, 1);
    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_AUTO, &ctx));
    assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CUDA);
    enum { N = 100000 };
    float *x = gk_test_alloc(GK_FLOAT32, N), *z = gk_test_alloc(GK_FLOAT32, N);
    memset(x, 0, N * sizeof *x);
    gk_buffer *bx = NULL, *bz = NULL;
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, N, x, &bx));
    GK_CHECK_OK(gk_buffer_wrap_host(ctx, GK_FLOAT32, N, z, &bz));

    GK_CHECK_OK(gk_add(ctx, bx, bx, bz));
    assert_int_equal(gk_context_last_backend(ctx), GK_BACKEND_CPU);
    GK_CHECK_OK(gk_rng_uniform(ctx, 7, 0, bz));
    assert_int_equal(gk_context_last_backend(ctx), GK_BACKEND_CUDA);
    GK_CHECK_OK(gk_rng_normal(ctx, 7, 0, 0.0, 1.0, bz));
    assert_int_equal(gk_context_last_backend(ctx), GK_BACKEND_CPU);

    gk_buffer_destroy(bx);
    gk_buffer_destroy(bz);
    gk_context_destroy(ctx);
    free(x);
    free(z);
    unlink(model_path);
}

/* GK_CALIBRATION is off, empty or an absolute path; "OFF" (which once wrote a file ./OFF)
 * and a relative path fail the context's creation, and gk_context_calibrate before it measures,
 * naming the value. */
static void test_calibration_switch_is_checked(void **state)
{
    (void)state;
    char dir[] = "/tmp/gk_test_calibration_XXXXXX", cwd[4096];
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    static const char *const bad[] = {"OFF", "calibration.txt"};
    gk_context *ctx = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("GK_CALIBRATION", bad[i], 1);
        GK_EXPECT(gk_context_create(GK_BACKEND_AUTO, &ctx), GK_E_INVALID_ARGUMENT,
                  "gk_context_create");
        char want[128];
        snprintf(want, sizeof want,
                 "gk_context_create: GK_CALIBRATION=%s is neither off, empty nor an absolute path",
                 bad[i]);
        assert_string_equal(gk_last_error(), want);
        assert_null(ctx);
    }
    setenv("GK_CALIBRATION", "off", 1);
    GK_CHECK_OK(gk_context_create(GK_BACKEND_AUTO, &ctx));
    setenv("GK_CALIBRATION", "OFF", 1);
    GK_EXPECT(gk_context_calibrate(ctx, 0), GK_E_INVALID_ARGUMENT, "gk_context_calibrate");
    assert_non_null(strstr(gk_last_error(), "GK_CALIBRATION=OFF is neither off"));
    gk_context_destroy(ctx);
    unsetenv("GK_CALIBRATION");
    assert_int_equal(access("OFF", F_OK), -1);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rmdir(dir), 0);
}

static int group_setup(void **state)
{
    (void)state;
    setenv("GK_CUDA_PLUGIN", GK_SLOTS_MODULE, 1);
    unsetenv("GK_BACKEND");
    if (!gk_backend_available(GK_BACKEND_CUDA)) {
        fprintf(stderr, "test module did not load: %s\n", gk_last_error());
        return -1;
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_ops_placed_by_their_class),
                                       cmocka_unit_test(test_calibration_switch_is_checked)};
    return cmocka_run_group_tests_name("auto_classes", tests, group_setup, NULL);
}
