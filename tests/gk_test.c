/* SPDX-License-Identifier: MIT */
/* gk_test.c - helpers shared by the CMocka tests: per-backend states, random data, references. */
#include "gk_test.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
/* The tests ask for impossible allocations (2^63 bytes) and expect GK_E_OUT_OF_MEMORY; under
 * AddressSanitizer malloc must then return NULL rather than abort. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

gk_test_backend gk_test_cpu = {GK_BACKEND_CPU, "cpu", NULL, ""};
gk_test_backend gk_test_cuda = {GK_BACKEND_CUDA, "cuda", NULL, ""};

static uint64_t seed_value;
static int seed_ready;
static uint64_t rng_state;
static uint64_t test_index;

/* ------------------------------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t gk_test_seed(void)
{
    if (!seed_ready) {
        const char *env = getenv("GK_TEST_SEED");
        if (env && *env) {
            seed_value = strtoull(env, NULL, 0);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t s = (uint64_t)ts.tv_sec * 1000000007ull + (uint64_t)ts.tv_nsec;
            s ^= (uint64_t)getpid() << 32;
            seed_value = splitmix64(&s) % 1000000000000ull;
        }
        seed_ready = 1;
        rng_state = seed_value;
    }
    return seed_value;
}

uint64_t gk_test_rand64(void)
{
    gk_test_seed();
    return splitmix64(&rng_state);
}

double gk_test_uniform(double lo, double hi)
{
    double u = (double)(gk_test_rand64() >> 11) * 0x1p-53;
    double v = lo + (hi - lo) * u;
    return v < hi ? v : lo;
}

size_t gk_test_rand_size(size_t lo, size_t hi)
{
    return lo + (size_t)(gk_test_rand64() % (uint64_t)(hi - lo + 1));
}

int gk_test_group_setup(void **state)
{
    (void)state;
    print_message("[ SEED     ] %" PRIu64 " (GK_TEST_SEED=%" PRIu64 " reproduces this run)\n",
                  gk_test_seed(), gk_test_seed());
    return 0;
}

/* GK_TEST_FILTER, a CMocka pattern (* and ?), keeps only the tests whose names it matches, so
 * that one case can run alone (under compute-sanitizer, say). Run before main, so that every
 * test program honours it without a call of its own before cmocka_run_group_tests. */
__attribute__((constructor)) static void gk_test_filter_from_env(void)
{
    const char *pattern = getenv("GK_TEST_FILTER");
    if (pattern && *pattern)
        cmocka_set_test_filter(pattern);
}

/* ------------------------------------------------------------------------------------------ */

int gk_test_setup(void **state)
{
    gk_test_backend *b = *state;
    uint64_t s = gk_test_seed() ^ (0xD1B54A32D192ED03ull * ++test_index);
    rng_state = splitmix64(&s);

    b->ctx = NULL;
    b->reason[0] = '\0';
    if (b->backend == GK_BACKEND_CUDA && !gk_backend_available(GK_BACKEND_CUDA)) {
        snprintf(b->reason, sizeof b->reason, "no usable CUDA backend: %s", gk_last_error());
        return 0;
    }
    gk_status st = gk_context_create(b->backend, &b->ctx);
    if (st != GK_OK) {
        print_error("gk_context_create(%s) failed: %s: %s\n", b->name, gk_status_string(st),
                    gk_last_error());
        b->ctx = NULL;
        return -1;
    }
    return 0;
}

int gk_test_teardown(void **state)
{
    gk_test_backend *b = *state;
    gk_context_destroy(b->ctx);
    b->ctx = NULL;
    return 0;
}

gk_context *gk_test_context(void **state)
{
    gk_test_backend *b = *state;
    if (b->ctx == NULL) {
        print_message("[ SKIP WHY ] %s: %s\n", b->name, b->reason);
        skip();
    }
    return b->ctx;
}

gk_backend gk_test_backend_of(void **state)
{
    return ((gk_test_backend *)*state)->backend;
}

int gk_test_is_cuda(void **state)
{
    return gk_test_backend_of(state) == GK_BACKEND_CUDA;
}

void gk_test_require_cuda(void)
{
    if (!gk_backend_available(GK_BACKEND_CUDA)) {
        print_message("[ SKIP WHY ] needs CUDA: %s\n", gk_last_error());
        skip();
    }
}

/* ------------------------------------------------------------------------------------------ */

size_t gk_test_esize(gk_dtype t)
{
    return t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
}

const char *gk_test_dtype_name(gk_dtype t)
{
    return t == GK_FLOAT32 ? "f32" : "f64";
}

double gk_test_get(gk_dtype t, const void *p, size_t i)
{
    return t == GK_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

void gk_test_set(gk_dtype t, void *p, size_t i, double v)
{
    if (t == GK_FLOAT32)
        ((float *)p)[i] = (float)v;
    else
        ((double *)p)[i] = v;
}

double gk_test_round(gk_dtype t, double v)
{
    return t == GK_FLOAT32 ? (double)(float)v : v;
}

void *gk_test_alloc(gk_dtype t, size_t n)
{
    void *p = malloc(n ? n * gk_test_esize(t) : 1);
    if (p == NULL)
        GK_FAIL("out of host memory for %zu elements", n);
    return p;
}

void *gk_test_random_array(gk_dtype t, size_t n, double lo, double hi)
{
    void *p = gk_test_alloc(t, n);
    for (size_t i = 0; i < n; i++)
        gk_test_set(t, p, i, gk_test_uniform(lo, hi));
    return p;
}

void *gk_test_const_array(gk_dtype t, size_t n, double v)
{
    void *p = gk_test_alloc(t, n);
    for (size_t i = 0; i < n; i++)
        gk_test_set(t, p, i, v);
    return p;
}

/* ------------------------------------------------------------------------------------------ */

gk_buffer *gk_test_buffer_from(gk_context *ctx, gk_dtype t, size_t n, const void *host)
{
    gk_buffer *b = NULL;
    GK_CHECK_OK(gk_buffer_create(ctx, t, n, &b));
    GK_CHECK_OK(gk_buffer_write(b, 0, n, host));
    return b;
}

gk_buffer *gk_test_buffer_const(gk_context *ctx, gk_dtype t, size_t n, double v)
{
    void *h = gk_test_const_array(t, n, v);
    gk_buffer *b = gk_test_buffer_from(ctx, t, n, h);
    free(h);
    return b;
}

gk_buffer *gk_test_buffer_random(gk_context *ctx, gk_dtype t, size_t n, double lo, double hi,
                                 void **host)
{
    void *h = gk_test_random_array(t, n, lo, hi);
    gk_buffer *b = gk_test_buffer_from(ctx, t, n, h);
    if (host)
        *host = h;
    else
        free(h);
    return b;
}

void *gk_test_read_all(const gk_buffer *b)
{
    gk_dtype t = gk_buffer_dtype(b);
    size_t n = gk_buffer_count(b);
    void *h = gk_test_alloc(t, n);
    GK_CHECK_OK(gk_buffer_read(b, 0, n, h));
    return h;
}

gk_buffer *gk_test_view(gk_buffer *parent, size_t offset, size_t count)
{
    gk_buffer *v = NULL;
    GK_CHECK_OK(gk_buffer_view(parent, offset, count, &v));
    return v;
}

/* ------------------------------------------------------------------------------------------ */

void gk_test_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error("%s [GK_TEST_SEED=%" PRIu64 "]\n", msg, gk_test_seed());
    _fail(file, line);
}

void gk_test_expect(gk_status got, gk_status want, const char *fn, const char *expr,
                    const char *file, int line)
{
    if (got != want)
        gk_test_fail(file, line, "%s returned %d (%s), expected %d (%s); gk_last_error(): \"%s\"",
                     expr, (int)got, gk_status_string(got), (int)want, gk_status_string(want),
                     gk_last_error());
    if (want == GK_OK || fn == NULL)
        return;
    const char *msg = gk_last_error();
    if (msg == NULL || msg[0] == '\0')
        gk_test_fail(file, line, "%s failed as expected but gk_last_error() is empty", expr);
    if (strstr(msg, fn) == NULL)
        gk_test_fail(file, line, "%s: gk_last_error() \"%s\" does not name %s", expr, msg, fn);
}

void gk_test_expect_contents(const gk_buffer *b, const void *expected, const char *file, int line)
{
    gk_dtype t = gk_buffer_dtype(b);
    size_t n = gk_buffer_count(b);
    void *h = gk_test_read_all(b);
    size_t es = gk_test_esize(t);
    for (size_t i = 0; i < n; i++) {
        if (memcmp((const char *)h + i * es, (const char *)expected + i * es, es) != 0) {
            double g = gk_test_get(t, h, i), e = gk_test_get(t, expected, i);
            free(h);
            gk_test_fail(file, line, "%s buffer of %zu: element %zu is %.17g, expected %.17g",
                         gk_test_dtype_name(t), n, i, g, e);
        }
    }
    free(h);
}

void gk_test_expect_sentinel(const gk_buffer *b, const char *file, int line)
{
    gk_dtype t = gk_buffer_dtype(b);
    size_t n = gk_buffer_count(b);
    void *h = gk_test_read_all(b);
    for (size_t i = 0; i < n; i++) {
        double g = gk_test_get(t, h, i);
        if (g != GK_TEST_SENTINEL) {
            free(h);
            gk_test_fail(file, line,
                         "output element %zu of %zu was written (%.17g) by a failing call", i, n,
                         g);
        }
    }
    free(h);
}

/* ------------------------------------------------------------------------------------------ */

long double gk_test_ulp(gk_dtype t, long double v)
{
    v = fabsl(v);
    if (!isfinite(v))
        return v; /* inf or NaN: ilogbl's answer would overflow the exponent arithmetic below */
    if (t == GK_FLOAT32) {
        if (v < FLT_MIN)
            return ldexpl(1.0L, -149);
        return ldexpl(1.0L, ilogbl(v) - 23);
    }
    if (v < DBL_MIN)
        return ldexpl(1.0L, -1074);
    return ldexpl(1.0L, ilogbl(v) - 52);
}

/* Sign-magnitude bits of a value of dtype t, split into sign and magnitude. */
static uint64_t magnitude_bits(gk_dtype t, double v, int *negative)
{
    if (t == GK_FLOAT32) {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        *negative = (int)(u >> 31);
        return u & 0x7fffffffu;
    }
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    *negative = (int)(u >> 63);
    return u & 0x7fffffffffffffffull;
}

uint64_t gk_test_ulp_distance(gk_dtype t, double a, double b)
{
    int na, nb;
    uint64_t ma = magnitude_bits(t, a, &na), mb = magnitude_bits(t, b, &nb);
    if (na == nb)
        return ma > mb ? ma - mb : mb - ma;
    return ma + mb;
}

int gk_test_same_bits(gk_dtype t, double a, double b)
{
    if (t == GK_FLOAT32) {
        float fa = (float)a, fb = (float)b;
        return memcmp(&fa, &fb, sizeof fa) == 0;
    }
    return memcmp(&a, &b, sizeof a) == 0;
}

int gk_test_long_double_is_extended(void)
{
    volatile long double one = 1.0L, tiny = 0x1p-60L;
    return one + tiny != one;
}

long double gk_test_exp_ref(long double x)
{
    return gk_test_long_double_is_extended() ? expl(x) : (long double)exp((double)x);
}

double gk_test_exp_ref_ulps(gk_dtype t)
{
    return t == GK_FLOAT64 && !gk_test_long_double_is_extended() ? 1.0 : 0.0;
}

static char saved_backend_env[256];
static int saved_backend_env_set;

void gk_test_env_save(void)
{
    const char *v = getenv("GK_BACKEND");
    saved_backend_env_set = v != NULL;
    snprintf(saved_backend_env, sizeof saved_backend_env, "%s", v ? v : "");
}

void gk_test_env_restore(void)
{
    if (saved_backend_env_set)
        setenv("GK_BACKEND", saved_backend_env, 1);
    else
        unsetenv("GK_BACKEND");
}

/* Sets var to value (NULL: unsets it), remembering the old value in old (NULL if unset). */
static void env_swap(const char *var, const char *value, char *old, size_t size, int *was_set)
{
    const char *v = getenv(var);
    *was_set = v != NULL;
    snprintf(old, size, "%s", v ? v : "");
    if (value != NULL)
        setenv(var, value, 1);
    else
        unsetenv(var);
}

static void env_put_back(const char *var, const char *old, int was_set)
{
    if (was_set)
        setenv(var, old, 1);
    else
        unsetenv(var);
}

gk_context *gk_test_logging_context(gk_backend b, const char *form)
{
    char old_log[64], old_form[64];
    int log_set, form_set;
    env_swap("GK_LOG", "1", old_log, sizeof old_log, &log_set);
    env_swap("GK_RBF_FORM", form, old_form, sizeof old_form, &form_set);
    gk_context *ctx = NULL;
    gk_status st = gk_context_create(b, &ctx);
    env_put_back("GK_LOG", old_log, log_set);
    env_put_back("GK_RBF_FORM", old_form, form_set);
    if (st != GK_OK) {
        GK_FAIL("gk_context_create with GK_LOG=1, GK_RBF_FORM=%s: %s (%s)", form ? form : "(unset)",
                gk_status_string(st), gk_last_error());
        return NULL;
    }
    return ctx;
}

int gk_test_cpu_has_fused(void)
{
    const char *isa = getenv("GK_RBF_ISA");
    if (isa != NULL && strcmp(isa, "generic") == 0)
        return 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

static FILE *capture_file;
static int capture_saved = -1;

void gk_test_capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    assert_non_null(capture_file);
    capture_saved = dup(STDERR_FILENO);
    assert_true(capture_saved >= 0);
    assert_true(dup2(fileno(capture_file), STDERR_FILENO) >= 0);
}

static char captured_line[1024];

const char *gk_test_captured_line(void)
{
    return captured_line;
}

const char *gk_test_capture_form(const char *op)
{
    static char form[64];
    fflush(stderr);
    assert_true(dup2(capture_saved, STDERR_FILENO) >= 0);
    close(capture_saved);
    capture_saved = -1;
    form[0] = '\0';
    captured_line[0] = '\0';
    char prefix[96], line[1024];
    snprintf(prefix, sizeof prefix, "gpukern: %s: form ", op);
    rewind(capture_file);
    while (fgets(line, sizeof line, capture_file) != NULL) {
        fputs(line, stderr);
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            sscanf(line + strlen(prefix), "%63[^ (\n]", form);
            snprintf(captured_line, sizeof captured_line, "%s", line);
            captured_line[strcspn(captured_line, "\n")] = '\0';
        }
    }
    fclose(capture_file);
    capture_file = NULL;
    return form;
}
