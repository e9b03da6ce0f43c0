/* SPDX-License-Identifier: MIT */
/* test_fault.c - the allocation-failure sweep: each scenario runs once per allocation point. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cache_file.h"
#include "gpukern.h"

/* SQLite's method: a scenario (a sequence of API calls) first runs with the injector disarmed,
 * counting its allocation points and recording what it computes; then, for N = 1, 2, ..., it runs
 * with its Nth allocation failing, until a run reaches no Nth allocation. Each run with a failure
 * must stop at a call that returns GK_E_OUT_OF_MEMORY with a message naming the function, whose
 * outputs are untouched; afterwards nothing is leaked (the core's count of live allocations, and
 * LeakSanitizer where the build has it), the fixture's inputs are intact, and the same scenario,
 * run again on the same context, computes exactly what it did at first. */

#if defined(__SANITIZE_ADDRESS__)
#define GK_FAULT_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GK_FAULT_LSAN 1
#endif
#endif
#ifdef GK_FAULT_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#define FIX_N 4096 /* elements of each fixture input */
#define SENTINEL (-12345.5)

typedef struct sweep {
    gk_backend backend;
    const char *name;
    /* The fixture, made with the injector disarmed: a context and inputs in it. */
    gk_context *ctx;
    char reason[1024];  /* why ctx is NULL */
    gk_buffer *dx, *dy; /* float32 in the backend's memory */
    gk_buffer *wx, *wy; /* float64 host memory, wrapped (staged to the device on CUDA) */
    float hx32[FIX_N], hy32[FIX_N];
    double hx64[FIX_N], hy64[FIX_N];
    /* What the current run computed, and what the first, unarmed run did. */
    double *got, *golden;
    size_t ngot, ngolden, cap;
    unsigned long at;    /* the allocation point that fails in this run; 0: none */
    unsigned long after; /* in a run without failures: the point that failed in the last one */
    int failed;
    char why[2048];
} sweep;

static sweep cpu_sweep = {.backend = GK_BACKEND_CPU, .name = "cpu"};
static sweep cuda_sweep = {.backend = GK_BACKEND_CUDA, .name = "cuda"};
static unsigned long points_swept[3];

/* Handles a failing call must leave as they were. */
static char untouched_marker[2];
#define NO_BUFFER ((gk_buffer *)(void *)&untouched_marker[0])
#define NO_CONTEXT ((gk_context *)(void *)&untouched_marker[1])

static void failf(sweep *s, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void failf(sweep *s, int line, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = 1;
    int used;
    if (s->at)
        used =
            snprintf(s->why, sizeof s->why, "line %d, run failing allocation %lu: ", line, s->at);
    else if (s->after)
        used = snprintf(s->why, sizeof s->why,
                        "line %d, run without failures after one failing allocation %lu: ", line,
                        s->after);
    else
        used = snprintf(s->why, sizeof s->why, "line %d, first run, without failures: ", line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why + used, sizeof s->why - (size_t)used, fmt, ap);
    va_end(ap);
}

static void record(sweep *s, double v)
{
    if (s->ngot == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        double *p = realloc(s->got, cap * sizeof *p);
        if (p == NULL) {
            failf(s, __LINE__, "the test itself ran out of memory");
            return;
        }
        s->got = p;
        s->cap = cap;
    }
    s->got[s->ngot++] = v;
}

static size_t esize(gk_dtype t)
{
    return t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
}

/* Reads the whole buffer into malloc'ed memory as doubles (NULL if the read failed). */
static double *read_doubles(const gk_buffer *b, gk_status *st)
{
    size_t n = gk_buffer_count(b);
    gk_dtype t = gk_buffer_dtype(b);
    void *raw = malloc(n ? n * esize(t) : 1);
    double *v = malloc(n ? n * sizeof *v : 1);
    *st = raw && v ? gk_buffer_read(b, 0, n, raw) : GK_E_OUT_OF_MEMORY;
    for (size_t i = 0; *st == GK_OK && i < n; i++)
        v[i] = t == GK_FLOAT32 ? ((float *)raw)[i] : ((double *)raw)[i];
    free(raw);
    if (*st != GK_OK) {
        free(v);
        return NULL;
    }
    return v;
}

/* Appends the buffer's elements to what this run computed. */
static gk_status record_buffer(sweep *s, const gk_buffer *b)
{
    gk_status st;
    double *v = read_doubles(b, &st);
    for (size_t i = 0; v != NULL && i < gk_buffer_count(b); i++)
        record(s, v[i]);
    free(v);
    return st;
}

/* 1 when every element of b is SENTINEL: a failing call did not write its output. */
static int all_sentinel(const gk_buffer *b)
{
    gk_status st;
    double *v = read_doubles(b, &st);
    int ok = v != NULL;
    for (size_t i = 0; ok && i < gk_buffer_count(b); i++)
        ok = v[i] == SENTINEL;
    free(v);
    return ok;
}

static void fill_host(double *p, size_t n, double v)
{
    for (size_t i = 0; i < n; i++)
        p[i] = v;
}

static void drop_buffer(gk_buffer *b)
{
    if (b != NO_BUFFER)
        gk_buffer_destroy(b);
}

static void drop_context(gk_context *c)
{
    if (c != NO_CONTEXT)
        gk_context_destroy(c);
}

/* Checks one call: if the injected failure happened during it, it must return
 * GK_E_OUT_OF_MEMORY with a message that starts with "fn:"; otherwise it must succeed. Returns 1
 * when the scenario goes on. */
static int step(sweep *s, int fired_before, gk_status st, const char *fn, const char *expr,
                int line)
{
    if (gk__fault_fired() && !fired_before) {
        const char *msg = gk_last_error();
        size_t len = strlen(fn);
        if (st != GK_E_OUT_OF_MEMORY)
            failf(s, line, "%s returned %s after an allocation failed (\"%s\")", expr,
                  gk_status_string(st), msg);
        else if (strncmp(msg, fn, len) != 0 || msg[len] != ':')
            failf(s, line, "%s: the message \"%s\" does not start with \"%s:\"", expr, msg, fn);
        return 0;
    }
    if (st != GK_OK)
        failf(s, line, "%s returned %s without an injected failure: %s", expr, gk_status_string(st),
              gk_last_error());
    return st == GK_OK;
}

/* Runs one call of a scenario; on failure checks `untouched` (the call's outputs) and leaves
 * through the scenario's `out:` label, where it releases what it made. */
#define STEP(s, call, fn, untouched)                                                               \
    do {                                                                                           \
        int fired_ = gk__fault_fired();                                                            \
        gk_status st_ = (call);                                                                    \
        if (!step((s), fired_, st_, (fn), #call, __LINE__)) {                                      \
            if (!(untouched))                                                                      \
                failf((s), __LINE__, "%s failed but changed its output", #call);                   \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* ------------------------------------------------------------------------------------------
 * Scenarios: each makes what it needs (so its allocations are swept) and releases it all.
 * ---------------------------------------------------------------------------------------- */

/* Contexts: both constructors, a buffer that outlives its context's handle. */
static void sc_context(sweep *s)
{
    gk_context *c = NO_CONTEXT, *c2 = NO_CONTEXT;
    gk_buffer *b = NO_BUFFER;
    gk_context_options o;
    gk_context_options_init(&o);
    o.backend = s->backend;
    o.cpu_threads = 1;
    STEP(s, gk_context_create(s->backend, &c), "gk_context_create", c == NO_CONTEXT);
    record(s, gk_context_backend(c));
    STEP(s, gk_context_create_ex(&o, &c2), "gk_context_create_ex", c2 == NO_CONTEXT);
    STEP(s, gk_buffer_create(c2, GK_FLOAT32, 10, &b), "gk_buffer_create", b == NO_BUFFER);
    STEP(s, gk_fill(c2, 2.5, b), "gk_fill", 1);
    gk_context_destroy(c2);
    c2 = NO_CONTEXT;
    STEP(s, record_buffer(s, b), "gk_buffer_read", 1);
    STEP(s, gk_context_synchronize(c), "gk_context_synchronize", 1);
out:
    drop_buffer(b);
    drop_context(c2);
    drop_context(c);
}

/* Buffers: create (also empty), wrap, views of views, writes through views, parent first. */
static void sc_buffers(sweep *s)
{
    gk_context *c = s->ctx;
    gk_buffer *p = NO_BUFFER, *e = NO_BUFFER, *h = NO_BUFFER, *v = NO_BUFFER, *vv = NO_BUFFER;
    double host[64];
    float src[20];
    for (int i = 0; i < 64; i++)
        host[i] = 0.5 * i;
    for (int i = 0; i < 20; i++)
        src[i] = (float)(100 + i);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, 100, &p), "gk_buffer_create", p == NO_BUFFER);
    STEP(s, gk_buffer_create(c, GK_FLOAT64, 0, &e), "gk_buffer_create", e == NO_BUFFER);
    STEP(s, gk_buffer_wrap_host(c, GK_FLOAT64, 64, host, &h), "gk_buffer_wrap_host",
         h == NO_BUFFER);
    STEP(s, gk_fill(c, 1.0, p), "gk_fill", 1);
    STEP(s, gk_buffer_view(p, 10, 50, &v), "gk_buffer_view", v == NO_BUFFER);
    STEP(s, gk_buffer_view(v, 5, 20, &vv), "gk_buffer_view", vv == NO_BUFFER);
    STEP(s, gk_buffer_write(vv, 0, 20, src), "gk_buffer_write", 1);
    STEP(s, gk_buffer_write(h, 3, 10, host + 40), "gk_buffer_write", 1);
    gk_buffer_destroy(p);
    p = NO_BUFFER;
    STEP(s, record_buffer(s, v), "gk_buffer_read", 1);
    STEP(s, record_buffer(s, h), "gk_buffer_read", 1);
    record(s, (double)gk_buffer_count(e));
out:
    drop_buffer(vv);
    drop_buffer(v);
    drop_buffer(h);
    drop_buffer(e);
    drop_buffer(p);
}

/* Element-wise ops on the backend's memory (outputs aliasing inputs too) and on host memory. */
static void sc_elementwise(sweep *s)
{
    gk_context *c = s->ctx;
    gk_buffer *z = NO_BUFFER, *wz = NO_BUFFER;
    double *hz = malloc(FIX_N * sizeof *hz);
    if (hz == NULL) {
        failf(s, __LINE__, "the test itself ran out of memory");
        return;
    }
    fill_host(hz, FIX_N, SENTINEL);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, FIX_N, &z), "gk_buffer_create", z == NO_BUFFER);
    STEP(s, gk_fill(c, SENTINEL, z), "gk_fill", 1);
    STEP(s, gk_add(c, s->dx, s->dy, z), "gk_add", all_sentinel(z));
    STEP(s, gk_sub(c, z, s->dy, z), "gk_sub", 1);
    STEP(s, gk_mul(c, z, s->dx, z), "gk_mul", 1);
    STEP(s, gk_div(c, z, s->dy, z), "gk_div", 1);
    STEP(s, gk_axpy(c, 0.5, s->dx, z), "gk_axpy", 1);
    STEP(s, gk_scale(c, 2.0, z), "gk_scale", 1);
    STEP(s, gk_exp(c, z, z), "gk_exp", 1);
    STEP(s, record_buffer(s, z), "gk_buffer_read", 1);
    STEP(s, gk_copy(c, s->dy, z), "gk_copy", 1);
    STEP(s, record_buffer(s, z), "gk_buffer_read", 1);

    STEP(s, gk_buffer_wrap_host(c, GK_FLOAT64, FIX_N, hz, &wz), "gk_buffer_wrap_host",
         wz == NO_BUFFER);
    STEP(s, gk_add(c, s->wx, s->wy, wz), "gk_add", all_sentinel(wz));
    STEP(s, gk_sub(c, wz, s->wy, wz), "gk_sub", 1);
    STEP(s, gk_mul(c, wz, s->wx, wz), "gk_mul", 1);
    STEP(s, gk_div(c, wz, s->wy, wz), "gk_div", 1);
    STEP(s, gk_axpy(c, 0.5, s->wx, wz), "gk_axpy", 1);
    STEP(s, gk_scale(c, 2.0, wz), "gk_scale", 1);
    STEP(s, gk_exp(c, wz, wz), "gk_exp", 1);
    STEP(s, record_buffer(s, wz), "gk_buffer_read", 1);
    fill_host(hz, FIX_N, SENTINEL);
    STEP(s, gk_copy(c, s->wy, wz), "gk_copy", all_sentinel(wz));
    STEP(s, gk_fill(c, 3.0, wz), "gk_fill", 1);
    STEP(s, record_buffer(s, wz), "gk_buffer_read", 1);
out:
    drop_buffer(wz);
    drop_buffer(z);
    free(hz);
}

/* Reductions of the backend's memory and of host memory. */
static void sc_reduce(sweep *s)
{
    gk_context *c = s->ctx;
    const gk_buffer *in[2][2] = {{s->dx, s->dy}, {s->wx, s->wy}};
    for (int i = 0; i < 2; i++) {
        double r = SENTINEL;
        STEP(s, gk_sum(c, in[i][0], &r), "gk_sum", r == SENTINEL);
        record(s, r);
        r = SENTINEL;
        STEP(s, gk_dot(c, in[i][0], in[i][1], &r), "gk_dot", r == SENTINEL);
        record(s, r);
        r = SENTINEL;
        STEP(s, gk_nrm2(c, in[i][1], &r), "gk_nrm2", r == SENTINEL);
        record(s, r);
    }
out:
    return;
}

/* gemm on views of the backend's memory, both transpositions of A, and on host memory with
 * beta != 0 (C is read, so it is staged in and out). */
static void sc_gemm(sweep *s)
{
    enum { M = 32, N = 40, K = 64, H = 16 };
    gk_context *c = s->ctx;
    gk_buffer *a = NO_BUFFER, *b = NO_BUFFER, *cc = NO_BUFFER, *wc = NO_BUFFER;
    double hc[H * H];
    fill_host(hc, H * H, SENTINEL);
    STEP(s, gk_buffer_view(s->dx, 100, M * K, &a), "gk_buffer_view", a == NO_BUFFER);
    STEP(s, gk_buffer_view(s->dy, 7, K * N, &b), "gk_buffer_view", b == NO_BUFFER);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, M * N, &cc), "gk_buffer_create", cc == NO_BUFFER);
    STEP(s, gk_fill(c, 0.0, cc), "gk_fill", 1);
    STEP(s, gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, M, N, K, 1.0, a, K, b, N, 0.0, cc, N), "gk_gemm",
         1);
    STEP(s, record_buffer(s, cc), "gk_buffer_read", 1);
    STEP(s, gk_gemm(c, GK_TRANS, GK_NO_TRANS, M, N, K, 0.5, a, M, b, N, 2.0, cc, N), "gk_gemm", 1);
    STEP(s, record_buffer(s, cc), "gk_buffer_read", 1);
    STEP(s, gk_buffer_wrap_host(c, GK_FLOAT64, H * H, hc, &wc), "gk_buffer_wrap_host",
         wc == NO_BUFFER);
    STEP(s, gk_gemm(c, GK_NO_TRANS, GK_TRANS, H, H, H, 1.0, s->wx, H, s->wy, 2 * H, 0.5, wc, H),
         "gk_gemm", all_sentinel(wc));
    STEP(s, record_buffer(s, wc), "gk_buffer_read", 1);
out:
    drop_buffer(wc);
    drop_buffer(cc);
    drop_buffer(b);
    drop_buffer(a);
}

/* The rbf kernels: rows, matrix, matvec with many rows and with few (the CPU then splits the
 * columns into partial sums kept in scratch), on the backend's memory and on host memory. The
 * few-rows matvec runs on a context of its own: CUDA keeps the partials in a grow-only
 * workspace, which only a new context allocates again. */
static void sc_rbf(sweep *s)
{
    enum { R = 1024, D = 4, MX = 40, NY = 30, DM = 8, MV = 3, NV = 4000, DV = 1, HR = 256 };
    enum { FM = 256 }; /* FM x FM x DM: the CPU's fused inner-product form for float32 */
    gk_context *c = s->ctx, *c2 = NO_CONTEXT;
    gk_buffer *k = NO_BUFFER, *x = NO_BUFFER, *y = NO_BUFFER, *km = NO_BUFFER, *w = NO_BUFFER;
    gk_buffer *o = NO_BUFFER, *x2 = NO_BUFFER, *y2 = NO_BUFFER, *w2 = NO_BUFFER, *o2 = NO_BUFFER;
    gk_buffer *wk = NO_BUFFER, *wo = NO_BUFFER, *xf = NO_BUFFER, *yf = NO_BUFFER, *kf = NO_BUFFER;
    double hk[HR], ho[HR];
    fill_host(hk, HR, SENTINEL);
    fill_host(ho, HR, SENTINEL);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, R, &k), "gk_buffer_create", k == NO_BUFFER);
    STEP(s, gk_fill(c, SENTINEL, k), "gk_fill", 1);
    STEP(s, gk_rbf_rows(c, R, D, 0.5, s->dx, s->dy, k), "gk_rbf_rows", all_sentinel(k));
    STEP(s, record_buffer(s, k), "gk_buffer_read", 1);

    STEP(s, gk_buffer_view(s->dx, 0, MX * DM, &x), "gk_buffer_view", x == NO_BUFFER);
    STEP(s, gk_buffer_view(s->dy, 64, NY * DM, &y), "gk_buffer_view", y == NO_BUFFER);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, MX * NY, &km), "gk_buffer_create", km == NO_BUFFER);
    STEP(s, gk_fill(c, SENTINEL, km), "gk_fill", 1);
    STEP(s, gk_rbf_matrix(c, MX, NY, DM, 0.25, x, y, km), "gk_rbf_matrix", all_sentinel(km));
    STEP(s, record_buffer(s, km), "gk_buffer_read", 1);

    STEP(s, gk_buffer_view(s->dx, 1000, NY, &w), "gk_buffer_view", w == NO_BUFFER);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, MX, &o), "gk_buffer_create", o == NO_BUFFER);
    STEP(s, gk_fill(c, SENTINEL, o), "gk_fill", 1);
    STEP(s, gk_rbf_matvec(c, MX, NY, DM, 0.25, x, y, w, o), "gk_rbf_matvec", all_sentinel(o));
    STEP(s, record_buffer(s, o), "gk_buffer_read", 1);

    STEP(s, gk_buffer_view(s->dx, 0, FM * DM, &xf), "gk_buffer_view", xf == NO_BUFFER);
    STEP(s, gk_buffer_view(s->dy, 0, FM * DM, &yf), "gk_buffer_view", yf == NO_BUFFER);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, FM * FM, &kf), "gk_buffer_create", kf == NO_BUFFER);
    STEP(s, gk_fill(c, SENTINEL, kf), "gk_fill", 1);
    STEP(s, gk_rbf_matrix(c, FM, FM, DM, 0.25, xf, yf, kf), "gk_rbf_matrix", all_sentinel(kf));
    STEP(s, record_buffer(s, kf), "gk_buffer_read", 1);

    STEP(s, gk_context_create(s->backend, &c2), "gk_context_create", c2 == NO_CONTEXT);
    STEP(s, gk_buffer_create(c2, GK_FLOAT32, MV * DV, &x2), "gk_buffer_create", x2 == NO_BUFFER);
    STEP(s, gk_buffer_create(c2, GK_FLOAT32, NV * DV, &y2), "gk_buffer_create", y2 == NO_BUFFER);
    STEP(s, gk_buffer_create(c2, GK_FLOAT32, NV, &w2), "gk_buffer_create", w2 == NO_BUFFER);
    STEP(s, gk_buffer_create(c2, GK_FLOAT32, MV, &o2), "gk_buffer_create", o2 == NO_BUFFER);
    STEP(s, gk_buffer_write(x2, 0, MV * DV, s->hx32 + NV), "gk_buffer_write", 1);
    STEP(s, gk_buffer_write(y2, 0, NV * DV, s->hy32), "gk_buffer_write", 1);
    STEP(s, gk_buffer_write(w2, 0, NV, s->hx32), "gk_buffer_write", 1);
    STEP(s, gk_fill(c2, SENTINEL, o2), "gk_fill", 1);
    STEP(s, gk_rbf_matvec(c2, MV, NV, DV, 1.5, x2, y2, w2, o2), "gk_rbf_matvec", all_sentinel(o2));
    STEP(s, record_buffer(s, o2), "gk_buffer_read", 1);

    STEP(s, gk_buffer_wrap_host(c, GK_FLOAT64, HR, hk, &wk), "gk_buffer_wrap_host",
         wk == NO_BUFFER);
    STEP(s, gk_buffer_wrap_host(c, GK_FLOAT64, HR, ho, &wo), "gk_buffer_wrap_host",
         wo == NO_BUFFER);
    STEP(s, gk_rbf_rows(c, HR, D, 0.5, s->wx, s->wy, wk), "gk_rbf_rows", all_sentinel(wk));
    STEP(s, gk_rbf_matrix(c, 16, 16, D, 0.5, s->wx, s->wy, wk), "gk_rbf_matrix", 1);
    STEP(s, gk_rbf_matvec(c, HR, 300, D, 0.5, s->wx, s->wy, s->wx, wo), "gk_rbf_matvec",
         all_sentinel(wo));
    STEP(s, record_buffer(s, wk), "gk_buffer_read", 1);
    STEP(s, record_buffer(s, wo), "gk_buffer_read", 1);
out:
    drop_buffer(wo);
    drop_buffer(wk);
    drop_buffer(o2);
    drop_buffer(w2);
    drop_buffer(y2);
    drop_buffer(x2);
    drop_context(c2);
    drop_buffer(kf);
    drop_buffer(yf);
    drop_buffer(xf);
    drop_buffer(o);
    drop_buffer(w);
    drop_buffer(km);
    drop_buffer(y);
    drop_buffer(x);
    drop_buffer(k);
}

/* Counter-based random numbers into the backend's memory and into host memory. */
static void sc_rng(sweep *s)
{
    gk_context *c = s->ctx;
    gk_buffer *u = NO_BUFFER, *n = NO_BUFFER, *wn = NO_BUFFER;
    double hn[500];
    fill_host(hn, 500, SENTINEL);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, 1000, &u), "gk_buffer_create", u == NO_BUFFER);
    STEP(s, gk_buffer_create(c, GK_FLOAT64, 777, &n), "gk_buffer_create", n == NO_BUFFER);
    STEP(s, gk_rng_uniform(c, 42, 5, u), "gk_rng_uniform", 1);
    STEP(s, gk_rng_normal(c, 42, 9, 1.0, 2.0, n), "gk_rng_normal", 1);
    STEP(s, record_buffer(s, u), "gk_buffer_read", 1);
    STEP(s, record_buffer(s, n), "gk_buffer_read", 1);
    STEP(s, gk_buffer_wrap_host(c, GK_FLOAT64, 500, hn, &wn), "gk_buffer_wrap_host",
         wn == NO_BUFFER);
    STEP(s, gk_rng_normal(c, 7, 0, 0.0, 1.0, wn), "gk_rng_normal", all_sentinel(wn));
    STEP(s, gk_rng_uniform(c, 7, 1u << 20, wn), "gk_rng_uniform", 1);
    STEP(s, record_buffer(s, wn), "gk_buffer_read", 1);
out:
    drop_buffer(wn);
    drop_buffer(n);
    drop_buffer(u);
}

/* The kernel family: each pass (sgemm into the output, dgemm tiles, expanded distances, L1
 * sums), kernel_matmul's sums and knn's heaps, whose scratch is allocated before any output is
 * written. */
static void sc_kernel(sweep *s)
{
    enum { M = 40, N = 30, D = 8, R = 3, K = 3 };
    gk_context *c = s->ctx;
    gk_buffer *x = NO_BUFFER, *y = NO_BUFFER, *o = NO_BUFFER, *w = NO_BUFFER, *mo = NO_BUFFER;
    gk_buffer *dist = NO_BUFFER, *index = NO_BUFFER;
    gk_kernel cosine, sigmoid, laplacian;
    gk_kernel_init(&cosine, GK_KERNEL_COSINE);
    gk_kernel_init(&sigmoid, GK_KERNEL_SIGMOID);
    gk_kernel_init(&laplacian, GK_KERNEL_LAPLACIAN);
    sigmoid.gamma = laplacian.gamma = 0.125;
    STEP(s, gk_buffer_view(s->dx, 0, M * D, &x), "gk_buffer_view", x == NO_BUFFER);
    STEP(s, gk_buffer_view(s->dy, 8, N * D, &y), "gk_buffer_view", y == NO_BUFFER);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, M * N, &o), "gk_buffer_create", o == NO_BUFFER);
    STEP(s, gk_fill(c, SENTINEL, o), "gk_fill", 1);
    STEP(s, gk_kernel_matrix(c, &cosine, M, N, D, x, y, o), "gk_kernel_matrix", all_sentinel(o));
    STEP(s, record_buffer(s, o), "gk_buffer_read", 1);
    STEP(s, gk_fill(c, SENTINEL, o), "gk_fill", 1);
    STEP(s, gk_kernel_matrix(c, &sigmoid, M, N, D, x, y, o), "gk_kernel_matrix", all_sentinel(o));
    STEP(s, record_buffer(s, o), "gk_buffer_read", 1);
    STEP(s, gk_fill(c, SENTINEL, o), "gk_fill", 1);
    STEP(s, gk_distance_matrix(c, GK_METRIC_EUCLIDEAN, M, N, D, x, y, o), "gk_distance_matrix",
         all_sentinel(o));
    STEP(s, record_buffer(s, o), "gk_buffer_read", 1);
    STEP(s, gk_buffer_view(s->dx, 1000, N * R, &w), "gk_buffer_view", w == NO_BUFFER);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, M * R, &mo), "gk_buffer_create", mo == NO_BUFFER);
    STEP(s, gk_fill(c, SENTINEL, mo), "gk_fill", 1);
    STEP(s, gk_kernel_matmul(c, &laplacian, M, N, D, R, x, y, w, mo), "gk_kernel_matmul",
         all_sentinel(mo));
    STEP(s, record_buffer(s, mo), "gk_buffer_read", 1);
    STEP(s, gk_buffer_create(c, GK_FLOAT32, M * K, &dist), "gk_buffer_create", dist == NO_BUFFER);
    STEP(s, gk_buffer_create(c, GK_INT64, M * K, &index), "gk_buffer_create", index == NO_BUFFER);
    STEP(s, gk_fill(c, SENTINEL, dist), "gk_fill", 1);
    STEP(s, gk_knn(c, GK_METRIC_SQEUCLIDEAN, M, N, D, K, x, y, dist, index), "gk_knn",
         all_sentinel(dist));
    STEP(s, record_buffer(s, dist), "gk_buffer_read", 1);
out:
    drop_buffer(index);
    drop_buffer(dist);
    drop_buffer(mo);
    drop_buffer(w);
    drop_buffer(o);
    drop_buffer(y);
    drop_buffer(x);
}

/* gk_add on three wrapped host arrays of 100 float64, which an AUTO context places. */
static void add_on_host(sweep *s, gk_context *c)
{
    gk_buffer *a = NO_BUFFER, *b = NO_BUFFER, *o = NO_BUFFER;
    double ho[100];
    fill_host(ho, 100, SENTINEL);
    STEP(s, gk_buffer_wrap_host(c, GK_FLOAT64, 100, s->hx64, &a), "gk_buffer_wrap_host",
         a == NO_BUFFER);
    STEP(s, gk_buffer_wrap_host(c, GK_FLOAT64, 100, s->hy64, &b), "gk_buffer_wrap_host",
         b == NO_BUFFER);
    STEP(s, gk_buffer_wrap_host(c, GK_FLOAT64, 100, ho, &o), "gk_buffer_wrap_host", o == NO_BUFFER);
    STEP(s, gk_add(c, a, b, o), "gk_add", all_sentinel(o));
    STEP(s, record_buffer(s, o), "gk_buffer_read", 1);
out:
    drop_buffer(o);
    drop_buffer(b);
    drop_buffer(a);
}

/* An AUTO context (on a GPU host it also keeps the CPU backend and has a cost model to
 * measure), calibrated, then placing a call on host memory. A one-backend context has nothing
 * to calibrate, so on the CPU this sweeps the context alone. */
static void sc_calibrate(sweep *s)
{
    gk_context *c = NO_CONTEXT;
    STEP(s, gk_context_create(GK_BACKEND_AUTO, &c), "gk_context_create", c == NO_CONTEXT);
    STEP(s, gk_context_calibrate(c, 0), "gk_context_calibrate", 1);
    add_on_host(s, c);
out:
    drop_context(c);
}

/* A hybrid AUTO context, with the CPU backend's code standing in for the GPU (tests/slots):
 * it allocates its placement history and loads its cost model from a cache file, then places a
 * call on host memory. Run in a process of its own (`test_fault hybrid`), since the module is
 * loaded once per process. */
static void sc_hybrid(sweep *s)
{
    gk_context *c = NO_CONTEXT;
    STEP(s, gk_context_create(GK_BACKEND_AUTO, &c), "gk_context_create", c == NO_CONTEXT);
    record(s, gk_context_backend(c));
    add_on_host(s, c);
out:
    drop_context(c);
}

/* ------------------------------------------------------------------------------------------
 * The sweep.
 * ---------------------------------------------------------------------------------------- */

typedef void (*scenario_fn)(sweep *s);

static double rand_unit(uint64_t *st)
{
    uint64_t z = (*st += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-53 * 2.0 - 1.0;
}

static int fixture_setup(void **state)
{
    sweep *s = *state;
    s->ctx = NULL;
    s->reason[0] = '\0';
    s->failed = 0;
    gk__fault_arm(0);
    if (s->backend == GK_BACKEND_CUDA && !gk_backend_available(GK_BACKEND_CUDA)) {
        snprintf(s->reason, sizeof s->reason, "no usable CUDA backend: %s", gk_last_error());
        return 0;
    }
    uint64_t seed = 12345;
    for (int i = 0; i < FIX_N; i++) {
        s->hx32[i] = (float)rand_unit(&seed);
        s->hy32[i] = (float)rand_unit(&seed);
        s->hx64[i] = rand_unit(&seed);
        s->hy64[i] = rand_unit(&seed);
    }
    if (gk_context_create(s->backend, &s->ctx) != GK_OK ||
        gk_buffer_create(s->ctx, GK_FLOAT32, FIX_N, &s->dx) != GK_OK ||
        gk_buffer_create(s->ctx, GK_FLOAT32, FIX_N, &s->dy) != GK_OK ||
        gk_buffer_write(s->dx, 0, FIX_N, s->hx32) != GK_OK ||
        gk_buffer_write(s->dy, 0, FIX_N, s->hy32) != GK_OK ||
        gk_buffer_wrap_host(s->ctx, GK_FLOAT64, FIX_N, s->hx64, &s->wx) != GK_OK ||
        gk_buffer_wrap_host(s->ctx, GK_FLOAT64, FIX_N, s->hy64, &s->wy) != GK_OK) {
        print_error("fixture on %s: %s\n", s->name, gk_last_error());
        return -1;
    }
    return 0;
}

static int fixture_teardown(void **state)
{
    sweep *s = *state;
    gk_buffer_destroy(s->dx);
    gk_buffer_destroy(s->dy);
    gk_buffer_destroy(s->wx);
    gk_buffer_destroy(s->wy);
    gk_context_destroy(s->ctx);
    s->dx = s->dy = s->wx = s->wy = NULL;
    s->ctx = NULL;
    return 0;
}

/* The fixture's inputs still hold what they were given. */
static void check_inputs(sweep *s)
{
    const gk_buffer *b[2] = {s->dx, s->dy};
    const float *h32[2] = {s->hx32, s->hy32};
    for (int i = 0; i < 2; i++) {
        gk_status st;
        double *v = read_doubles(b[i], &st);
        if (v == NULL) {
            failf(s, __LINE__, "reading input %d: %s", i, gk_last_error());
            return;
        }
        for (size_t j = 0; j < FIX_N; j++)
            if (v[j] != (double)h32[i][j]) {
                failf(s, __LINE__, "input %d element %zu changed", i, j);
                break;
            }
        free(v);
    }
}

/* The current run computed exactly what the first one did. */
static void check_same(sweep *s)
{
    if (s->failed)
        return;
    if (s->ngot != s->ngolden) {
        failf(s, __LINE__, "%zu values computed, %zu by the first run", s->ngot, s->ngolden);
        return;
    }
    for (size_t i = 0; i < s->ngot; i++)
        if (memcmp(&s->got[i], &s->golden[i], sizeof(double)) != 0) {
            failf(s, __LINE__, "value %zu is %.17g, %.17g in the first run", i, s->got[i],
                  s->golden[i]);
            return;
        }
}

/* Nothing leaked: the core's count of live allocations is back where it was, and LeakSanitizer
 * (in sanitizer builds) finds nothing unreachable. */
static void check_leaks(sweep *s, long live0)
{
    long live = gk__fault_live();
    if (live != live0)
        failf(s, __LINE__, "%ld host allocations of the library live after the run, %ld before",
              live, live0);
#ifdef GK_FAULT_LSAN
    if (__lsan_do_recoverable_leak_check())
        failf(s, __LINE__, "LeakSanitizer found leaks (report above)");
#endif
}

static void run_sweep(void **state, const char *name, scenario_fn fn)
{
    sweep *s = *state;
    if (s->ctx == NULL) {
        print_message("[ SKIP WHY ] %s: %s\n", s->name, s->reason);
        skip();
    }
    long live0 = gk__fault_live();
    s->ngot = 0;
    s->at = 0;
    s->after = 0;
    gk__fault_arm(0);
    fn(s);
    unsigned long reached = gk__fault_count();
    free(s->golden);
    s->golden = malloc((s->ngot ? s->ngot : 1) * sizeof(double));
    assert_non_null(s->golden);
    memcpy(s->golden, s->got, s->ngot * sizeof(double));
    s->ngolden = s->ngot;
    check_leaks(s, live0);

    unsigned long points = 0;
    for (unsigned long n = 1; !s->failed; n++) {
        s->ngot = 0;
        s->at = n;
        gk__fault_arm(n);
        fn(s);
        int fired = gk__fault_fired();
        gk__fault_arm(0);
        check_leaks(s, live0);
        check_inputs(s);
        if (!fired) {
            check_same(s);
            break;
        }
        points++;
        /* The same context, and the same calls, once more without failures. */
        s->ngot = 0;
        s->at = 0;
        s->after = n;
        fn(s);
        check_same(s);
        check_leaks(s, live0);
        if (n > 100000)
            failf(s, __LINE__, "the sweep does not end");
    }
    points_swept[s->backend] += points;
    print_message("[ POINTS   ] %s/%s: %lu allocation points failed one at a time (%lu counted "
                  "in the first run)\n",
                  name, s->name, points, reached);
    if (s->failed)
        fail_msg("%s/%s: %s", name, s->name, s->why);
}

#define SWEEP_TEST(sc)                                                                             \
    static void test_##sc(void **state)                                                            \
    {                                                                                              \
        run_sweep(state, #sc, sc_##sc);                                                            \
    }

SWEEP_TEST(context)
SWEEP_TEST(buffers)
SWEEP_TEST(elementwise)
SWEEP_TEST(reduce)
SWEEP_TEST(gemm)
SWEEP_TEST(rbf)
SWEEP_TEST(rng)
SWEEP_TEST(kernel)
SWEEP_TEST(calibrate)
SWEEP_TEST(hybrid)

#define BOTH(fn)                                                                                   \
    {#fn "/cpu", fn, fixture_setup, fixture_teardown, &cpu_sweep},                                 \
    {                                                                                              \
#fn "/cuda", fn, fixture_setup, fixture_teardown, &cuda_sweep                              \
    }

/* `test_fault hybrid`: the hybrid scenario alone, on the stand-in module, with a valid cache
 * file to load. */
static int run_hybrid(const char *cache)
{
    setenv("GK_CUDA_PLUGIN", GK_SLOTS_MODULE, 1);
    gk_cost_model m;
    gk__cost_model_defaults(&m);
    char why[256];
    if (!gk__cost_model_save(&m, cache, 0, why, sizeof why)) {
        fprintf(stderr, "cannot write %s: %s\n", cache, why);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        {"test_hybrid/cpu", test_hybrid, fixture_setup, fixture_teardown, &cpu_sweep},
    };
    return cmocka_run_group_tests_name("fault_hybrid", tests, NULL, NULL);
}

int main(int argc, char **argv)
{
    /* The calibrate scenario must neither read nor write the user's calibration cache. */
    char cache[64];
    snprintf(cache, sizeof cache, "/tmp/gk-fault-calibration-%ld.txt", (long)getpid());
    setenv("GK_CALIBRATION", cache, 1);
    unsetenv("GK_BACKEND");
    if (argc > 1 && strcmp(argv[1], "hybrid") == 0) {
        int failures = run_hybrid(cache);
        remove(cache);
        free(cpu_sweep.got);
        free(cpu_sweep.golden);
        return failures;
    }
    const struct CMUnitTest tests[] = {
        BOTH(test_context), BOTH(test_buffers),   BOTH(test_elementwise),
        BOTH(test_reduce),  BOTH(test_gemm),      BOTH(test_rbf),
        BOTH(test_rng),     BOTH(test_calibrate), BOTH(test_kernel),
    };
    int failures = cmocka_run_group_tests_name("fault", tests, NULL, NULL);
    printf("fault-injection points swept: cpu %lu, cuda %lu\n", points_swept[GK_BACKEND_CPU],
           points_swept[GK_BACKEND_CUDA]);
    remove(cache);
    free(cpu_sweep.got);
    free(cpu_sweep.golden);
    free(cuda_sweep.got);
    free(cuda_sweep.golden);
    return failures;
}
