/* SPDX-License-Identifier: MIT */
/* gk_test.h - helpers shared by the CMocka tests: per-backend states, random data, references. */
#ifndef GK_TEST_H
#define GK_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpukern.h"

/* ------------------------------------------------------------------------------------------
 * Per-backend state: each test body runs once per backend. gk_test_setup creates the context
 * (or records why it cannot); the body asks for it with gk_test_context(), which skips the test
 * when the backend is unavailable. skip() is only called from test bodies: in cmocka 1.1.5 a
 * skip() inside a setup function counts as a setup error, i.e. a failure.
 * ---------------------------------------------------------------------------------------- */

typedef struct gk_test_backend {
    gk_backend backend;
    const char *name;
    gk_context *ctx;   /* NULL when the backend is unavailable */
    char reason[1024]; /* why ctx is NULL */
} gk_test_backend;

extern gk_test_backend gk_test_cpu;
extern gk_test_backend gk_test_cuda;

int gk_test_setup(void **state);
int gk_test_teardown(void **state);
/* Group setup: picks the seed (GK_TEST_SEED or fresh) and prints it. */
int gk_test_group_setup(void **state);

/* The context of this test's backend; skips the test (printing the reason) if unavailable. */
gk_context *gk_test_context(void **state);
/* The backend of this test's state. */
gk_backend gk_test_backend_of(void **state);
/* 1 when the test runs on CUDA (device buffers, asynchronous ops). */
int gk_test_is_cuda(void **state);

/* Skips the calling test (printing why) unless the CUDA backend is available. */
void gk_test_require_cuda(void);

/* Two entries of a CMUnitTest array: fn on the CPU backend and on the CUDA backend. */
#define GK_TEST_BOTH(fn)                                                                           \
    {#fn "/cpu", fn, gk_test_setup, gk_test_teardown, &gk_test_cpu},                               \
    {                                                                                              \
#fn "/cuda", fn, gk_test_setup, gk_test_teardown, &gk_test_cuda                            \
    }

/* ------------------------------------------------------------------------------------------
 * Random data: one seed per run, from GK_TEST_SEED or the clock, printed at the start of each
 * group and in every failure message of these helpers. Each test restarts the stream from the
 * seed and its position in the group, so a failure reproduces with the same seed.
 * ---------------------------------------------------------------------------------------- */

uint64_t gk_test_seed(void);
uint64_t gk_test_rand64(void);
/* Uniform in [lo, hi). */
double gk_test_uniform(double lo, double hi);
/* Uniform size in [lo, hi]. */
size_t gk_test_rand_size(size_t lo, size_t hi);

/* ------------------------------------------------------------------------------------------
 * Typed host arrays (float or double by dtype).
 * ---------------------------------------------------------------------------------------- */

size_t gk_test_esize(gk_dtype t);
const char *gk_test_dtype_name(gk_dtype t);
double gk_test_get(gk_dtype t, const void *p, size_t i);
void gk_test_set(gk_dtype t, void *p, size_t i, double v);
/* malloc'ed array of n elements (at least one byte), never NULL. */
void *gk_test_alloc(gk_dtype t, size_t n);
/* malloc'ed array of n uniform values in [lo, hi) rounded to t. */
void *gk_test_random_array(gk_dtype t, size_t n, double lo, double hi);
/* malloc'ed array of n copies of v rounded to t. */
void *gk_test_const_array(gk_dtype t, size_t n, double v);
/* v rounded to t, back in a double. */
double gk_test_round(gk_dtype t, double v);

/* Value written into outputs before a call that must fail (and must leave them untouched). */
#define GK_TEST_SENTINEL (-12345.5)

/* ------------------------------------------------------------------------------------------
 * Buffers (assert on failure).
 * ---------------------------------------------------------------------------------------- */

/* A new buffer of n elements holding host[0..n). */
gk_buffer *gk_test_buffer_from(gk_context *ctx, gk_dtype t, size_t n, const void *host);
/* A new buffer of n elements, each v. */
gk_buffer *gk_test_buffer_const(gk_context *ctx, gk_dtype t, size_t n, double v);
/* A new buffer of n random elements in [lo, hi); *host (if not NULL) gets a malloc'ed copy. */
gk_buffer *gk_test_buffer_random(gk_context *ctx, gk_dtype t, size_t n, double lo, double hi,
                                 void **host);
/* malloc'ed copy of the whole buffer. */
void *gk_test_read_all(const gk_buffer *b);
/* A view, asserting success. */
gk_buffer *gk_test_view(gk_buffer *parent, size_t offset, size_t count);

/* ------------------------------------------------------------------------------------------
 * Checks with file/line of the caller.
 * ---------------------------------------------------------------------------------------- */

/* Asserts status == want, and, for want != GK_OK, that gk_last_error() is non-empty and names fn.
 */
#define GK_EXPECT(call, want, fn) gk_test_expect((call), (want), (fn), #call, __FILE__, __LINE__)
void gk_test_expect(gk_status got, gk_status want, const char *fn, const char *expr,
                    const char *file, int line);

/* Asserts a call succeeds, printing gk_last_error() if not. */
#define GK_CHECK_OK(call) gk_test_expect((call), GK_OK, NULL, #call, __FILE__, __LINE__)

/* Asserts the buffer's contents equal the n bytes of `expected` bit for bit. */
#define GK_EXPECT_CONTENTS(buf, expected)                                                          \
    gk_test_expect_contents((buf), (expected), __FILE__, __LINE__)
void gk_test_expect_contents(const gk_buffer *b, const void *expected, const char *file, int line);

/* Asserts every element of the buffer is GK_TEST_SENTINEL. */
#define GK_EXPECT_SENTINEL(buf) gk_test_expect_sentinel((buf), __FILE__, __LINE__)
void gk_test_expect_sentinel(const gk_buffer *b, const char *file, int line);

/* Fails with a formatted message that also names the seed. */
#define GK_FAIL(...) gk_test_fail(__FILE__, __LINE__, __VA_ARGS__)
void gk_test_fail(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ------------------------------------------------------------------------------------------
 * Numerics.
 * ---------------------------------------------------------------------------------------- */

/* References are computed in long double, which under valgrind is only double (its x87
 * emulation rounds to 53 bits). Sums therefore use Neumaier's compensated summation, which
 * stays accurate either way, and exp references fall back to exp() where long double is short. */
typedef struct gk_test_sum {
    long double s, c;
} gk_test_sum;

static inline void gk_test_sum_add(gk_test_sum *a, long double v)
{
    long double t = a->s + v;
    if ((a->s < 0 ? -a->s : a->s) >= (v < 0 ? -v : v))
        a->c += (a->s - t) + v;
    else
        a->c += (v - t) + a->s;
    a->s = t;
}

static inline long double gk_test_sum_value(const gk_test_sum *a)
{
    return a->s + a->c;
}

/* 1 when long double arithmetic carries more bits than double. */
int gk_test_long_double_is_extended(void);
/* exp(x) as accurately as this process can: expl, or exp where long double is only double. */
long double gk_test_exp_ref(long double x);
/* Error bound in ulps of gk_test_exp_ref's own result for dtype t (0 or about 1). */
double gk_test_exp_ref_ulps(gk_dtype t);

/* The spacing of dtype t at |v| (the ulp of a value of that magnitude; FLT/DBL_TRUE_MIN at 0;
 * |v| itself where v is inf or NaN). */
long double gk_test_ulp(gk_dtype t, long double v);
/* Distance in representable values between two finite values of dtype t. */
uint64_t gk_test_ulp_distance(gk_dtype t, double a, double b);
/* 1 when a and b have the same bits in dtype t. */
int gk_test_same_bits(gk_dtype t, double a, double b);

/* GK_BACKEND as it was, saved before a test changes it and put back after (one level deep). */
void gk_test_env_save(void);
void gk_test_env_restore(void);

/* ------------------------------------------------------------------------------------------
 * Which rbf form ran: a context created with GK_LOG=1 prints "gpukern: <op>: form <name> (...)"
 * for each rbf call. gk_test_capture_begin sends stderr to a temporary file (dup2) until
 * gk_test_capture_form, which restores it, echoes what was caught, and returns the name of the
 * form the last such line of op names ("" if none; a static buffer).
 * ---------------------------------------------------------------------------------------- */

/* A context of backend b (CPU: cpu_threads threads, 0 the default) created with GK_LOG=1 and,
 * unless form is NULL, GK_RBF_FORM=form; the environment is restored afterwards. NULL (with the
 * failure reported) if creation fails. */
gk_context *gk_test_logging_context(gk_backend b, const char *form);
void gk_test_capture_begin(void);
const char *gk_test_capture_form(const char *op);
/* 1 when a CPU context's float32 rbf_matrix has the fused form: an AVX-512 CPU, GK_RBF_ISA not
 * generic. */
int gk_test_cpu_has_fused(void);
/* The whole line (without the newline) that gk_test_capture_form took the form from. */
const char *gk_test_captured_line(void);

#endif /* GK_TEST_H */
