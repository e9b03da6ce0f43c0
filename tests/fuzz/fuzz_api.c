/* SPDX-License-Identifier: MIT */
/* fuzz_api.c - libFuzzer harness: the input is a little program of C API calls on the CPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpukern.h"

/* Each input drives a pool of two contexts, eight buffer slots and a few host blocks: every byte
 * string is a valid program, read op by op (an opcode byte, then the operands it needs; reading
 * past the end gives zeros). Operands reach the edges on purpose: NULL and foreign handles
 * (where the library promises to detect them), a context passed as a buffer and a buffer as a
 * context, bad enum values, sizes near SIZE_MAX, leading dimensions, offsets and views that
 * overlap, and handles the program destroyed a few calls before (the library keeps a destroyed
 * handle's memory, poisoned, until 16 contexts or 256 buffers have been freed after it, and
 * promises to detect it until then; the program only passes its last DEAD_BUFS buffers and
 * DEAD_CTXS contexts destroyed, well inside those numbers).
 *
 * Every call must return a status its documentation lists; a failure must leave its
 * out-parameters and its output buffer as they were, and gk_last_error() must begin with the
 * function's name. Any breach aborts, which libFuzzer reports with the input.
 *
 * Sizes stay small enough for fast runs: buffers hold at most 4096 elements, and a buffer is
 * only ever made with a count that fits (or one so large that count * element size wraps, which
 * must fail before allocating). Every accepted call then touches at most what its buffers hold. */

#define MAX_ELEMS 4096
#define NCTX 2
#define NBUF 8
#define NHOST 16
#define DEAD_BUFS 4
#define DEAD_CTXS 2

/* Calls must fail with these statuses only (bit s for gk_status s), per gpukern.h. */
#define S(x) (1u << (x))
#define OK_INV (S(GK_OK) | S(GK_E_INVALID_ARGUMENT))
#define ALLOWED_CONTEXT                                                                            \
    (OK_INV | S(GK_E_BACKEND_UNAVAILABLE) | S(GK_E_OUT_OF_MEMORY) | S(GK_E_DEVICE))
#define ALLOWED_SYNC (OK_INV | S(GK_E_DEVICE))
#define ALLOWED_CALIBRATE (OK_INV | S(GK_E_OUT_OF_MEMORY) | S(GK_E_DEVICE))
#define ALLOWED_CREATE (OK_INV | S(GK_E_OVERFLOW) | S(GK_E_OUT_OF_MEMORY) | S(GK_E_DEVICE))
#define ALLOWED_WRAP (OK_INV | S(GK_E_OVERFLOW) | S(GK_E_OUT_OF_MEMORY))
#define ALLOWED_VIEW (OK_INV | S(GK_E_SHAPE) | S(GK_E_OVERFLOW) | S(GK_E_OUT_OF_MEMORY))
#define ALLOWED_TRANSFER (OK_INV | S(GK_E_SHAPE) | S(GK_E_OVERFLOW) | S(GK_E_DEVICE))
#define ALLOWED_OP                                                                                 \
    (OK_INV | S(GK_E_SHAPE) | S(GK_E_DTYPE) | S(GK_E_CONTEXT_MISMATCH) | S(GK_E_OUT_OF_MEMORY) |   \
     S(GK_E_DEVICE))
#define ALLOWED_SIZED_OP (ALLOWED_OP | S(GK_E_OVERFLOW))
#define ALLOWED_RNG                                                                                \
    (OK_INV | S(GK_E_OVERFLOW) | S(GK_E_CONTEXT_MISMATCH) | S(GK_E_OUT_OF_MEMORY) | S(GK_E_DEVICE))
#define ALLOWED_WRAP_DEVICE (ALLOWED_WRAP | S(GK_E_UNSUPPORTED) | S(GK_E_DEVICE))
#define ALLOWED_STREAM (OK_INV | S(GK_E_UNSUPPORTED) | S(GK_E_DEVICE))

/* A zeroed object that is neither a context nor a buffer: a foreign pointer. */
static _Alignas(64) unsigned char foreign[64];

typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

typedef struct pool {
    gk_context *ctx[NCTX];
    gk_buffer *buf[NBUF];
    void *host[NHOST]; /* freed last: views of a wrapped buffer outlive its handle */
    int nhost;
    gk_buffer *dead_buf[DEAD_BUFS]; /* the latest buffers and contexts destroyed */
    gk_context *dead_ctx[DEAD_CTXS];
    int next_dead_buf, next_dead_ctx;
    double scratch[MAX_ELEMS]; /* source and destination of reads and writes */
} pool;

static uint8_t take8(reader *r)
{
    if (r->left == 0)
        return 0;
    r->left--;
    return *r->p++;
}

static uint64_t take64(reader *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | take8(r);
    return v;
}

/* Sizes from near SIZE_MAX down to just past what any buffer here holds. */
static const size_t huge_sizes[] = {SIZE_MAX,        SIZE_MAX - 1,          SIZE_MAX / 2 + 1,
                                    SIZE_MAX / 2,    SIZE_MAX / 4 + 1,      SIZE_MAX / 8 + 1,
                                    (size_t)1 << 32, ((size_t)1 << 32) + 1, (size_t)1 << 31,
                                    MAX_ELEMS + 1,   (size_t)1 << 20,       SIZE_MAX / 3};

/* A size operand: mostly small, sometimes up to MAX_ELEMS, sometimes huge. */
static size_t take_size(reader *r)
{
    uint8_t b = take8(r);
    if (b < 192)
        return b % 65;
    if (b < 240)
        return ((size_t)take8(r) << 8 | take8(r)) % (MAX_ELEMS + 1);
    return huge_sizes[(b - 240) % (sizeof huge_sizes / sizeof huge_sizes[0])];
}

/* An element count to create or wrap: one that fits in MAX_ELEMS, or one whose byte size wraps
 * (from 2^62 up, for either dtype), which must fail before anything is allocated. */
static size_t take_count(reader *r)
{
    uint8_t b = take8(r);
    if (b < 240)
        return ((size_t)b << 8 | take8(r)) % (MAX_ELEMS + 1);
    static const size_t wraps[] = {SIZE_MAX, SIZE_MAX / 2 + 1, (size_t)1 << 62, SIZE_MAX / 4 + 1};
    return wraps[b % 4];
}

/* Any double, read as raw bits half the time: NaNs, infinities and subnormals included. */
static double take_double(reader *r)
{
    uint8_t b = take8(r);
    static const double nice[] = {0.0, 1.0, -1.0, 0.5, 2.0, -0.0, 1e-300, 1e300};
    if (b < 128)
        return nice[b % 8];
    uint64_t bits = take64(r);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static gk_dtype take_dtype(reader *r)
{
    static const int dtypes[] = {GK_FLOAT32, GK_FLOAT64, GK_FLOAT32, GK_FLOAT64, 0, 3, -1, 42};
    return (gk_dtype)dtypes[take8(r) % 8];
}

static gk_transpose take_transpose(reader *r)
{
    static const int t[] = {GK_NO_TRANS, GK_TRANS, GK_NO_TRANS, GK_TRANS, 2, -1};
    return (gk_transpose)t[take8(r) % 6];
}

static gk_context *take_ctx(reader *r, pool *p)
{
    uint8_t b = take8(r) % 10;
    if (b < NCTX * 2)
        return p->ctx[b % NCTX];
    if (b == 4 || b == 5)
        return NULL;
    if (b == 6)
        return (gk_context *)(void *)foreign;
    if (b == 7)
        return (gk_context *)(void *)p->buf[0]; /* a buffer where a context belongs */
    return p->dead_ctx[b - 8];
}

static gk_buffer *take_buf(reader *r, pool *p)
{
    uint8_t b = take8(r) % 16;
    if (b < NBUF)
        return p->buf[b];
    if (b < 10)
        return NULL;
    if (b == 10)
        return (gk_buffer *)(void *)foreign;
    if (b == 11)
        return (gk_buffer *)(void *)p->ctx[0]; /* a context where a buffer belongs */
    return p->dead_buf[b - 12];
}

/* Destroys what a slot holds (NULL ok) and remembers it among the latest destroyed. */
static void destroy_buf(pool *p, gk_buffer **slot)
{
    if (*slot == NULL)
        return;
    gk_buffer_destroy(*slot);
    p->dead_buf[p->next_dead_buf] = *slot;
    p->next_dead_buf = (p->next_dead_buf + 1) % DEAD_BUFS;
    *slot = NULL;
}

static void destroy_ctx(pool *p, gk_context **slot)
{
    if (*slot == NULL)
        return;
    gk_context_destroy(*slot);
    p->dead_ctx[p->next_dead_ctx] = *slot;
    p->next_dead_ctx = (p->next_dead_ctx + 1) % DEAD_CTXS;
    *slot = NULL;
}

/* The slot a new buffer goes to; the buffer there before is destroyed. */
static gk_buffer **take_slot(reader *r, pool *p)
{
    gk_buffer **slot = &p->buf[take8(r) % NBUF];
    destroy_buf(p, slot);
    return slot;
}

static void fail(const char *fn, const char *what, gk_status st)
{
    fprintf(stderr, "fuzz_api: %s: %s (status %d: %s; gk_last_error: \"%s\")\n", fn, what, (int)st,
            gk_status_string(st), gk_last_error());
    abort();
}

/* The status is one fn documents, and a failure has a message that starts with "fn:". */
static void check_status(const char *fn, gk_status st, unsigned allowed)
{
    if ((unsigned)st > GK_E_INTERNAL || !(allowed & S(st)))
        fail(fn, "returned a status its documentation does not list", st);
    if (st == GK_OK)
        return;
    const char *msg = gk_last_error();
    size_t len = strlen(fn);
    if (msg == NULL || strncmp(msg, fn, len) != 0 || msg[len] != ':')
        fail(fn, "failed with a message that does not start with its name", st);
}

static int live_buffer(const gk_buffer *b, const pool *p)
{
    for (int i = 0; i < NBUF; i++)
        if (b != NULL && b == p->buf[i])
            return 1;
    return 0;
}

/* A copy of an output buffer before a call, to show that a failing call left it alone. */
typedef struct snapshot {
    const gk_buffer *b;
    size_t bytes;
    unsigned char data[MAX_ELEMS * sizeof(double)];
} snapshot;

static void take_snapshot(snapshot *s, const gk_buffer *b, const pool *p)
{
    s->b = live_buffer(b, p) ? b : NULL;
    if (s->b == NULL)
        return;
    size_t n = gk_buffer_count(b);
    s->bytes = n * (gk_buffer_dtype(b) == GK_FLOAT32 ? 4 : 8);
    if (gk_buffer_read(b, 0, n, s->data) != GK_OK)
        fail("gk_buffer_read", "cannot read a live buffer", GK_E_INTERNAL);
}

static void check_snapshot(const char *fn, gk_status st, const snapshot *s)
{
    static unsigned char now[MAX_ELEMS * sizeof(double)];
    if (st == GK_OK || s->b == NULL)
        return;
    if (gk_buffer_read(s->b, 0, gk_buffer_count(s->b), now) != GK_OK)
        fail("gk_buffer_read", "cannot read a live buffer", GK_E_INTERNAL);
    if (memcmp(now, s->data, s->bytes) != 0)
        fail(fn, "failed but wrote its output buffer", st);
}

static snapshot snap;

/* A call with an output buffer: snapshot, call, check the status and the output. */
#define CALL_OUT(fn, allowed, out, call)                                                           \
    do {                                                                                           \
        take_snapshot(&snap, (out), p);                                                            \
        gk_status st_ = (call);                                                                    \
        check_status((fn), st_, (allowed));                                                        \
        check_snapshot((fn), st_, &snap);                                                          \
    } while (0)

static void op_context_create(reader *r, pool *p)
{
    gk_context **slot = &p->ctx[take8(r) % NCTX];
    gk_context *c = (gk_context *)(void *)foreign;
    uint8_t how = take8(r);
    gk_status st;
    const char *fn;
    if (how & 1) {
        fn = "gk_context_create_ex";
        gk_context_options o;
        gk_context_options_init(&o);
        /* the field boundaries, and sizes inside a field (9-11, 13-15, 17-19), past the struct */
        static const uint32_t sizes[] = {sizeof o, 0,  4,  8,  12, 16, 20, sizeof o + 4,
                                         9,        11, 13, 14, 15, 17, 19, 7};
        static const int32_t ints[] = {0, 1, 2, -1, 3, INT32_MIN, 1025, INT32_MAX};
        o.struct_size = sizes[take8(r) % 16];
        o.backend = ints[take8(r) % 8];
        o.device = ints[take8(r) % 8];
        o.cpu_threads = ints[take8(r) % 8];
        o.flags = take8(r) < 200 ? 0 : (uint32_t)take64(r);
        st = gk_context_create_ex(how & 2 ? &o : NULL, how & 4 ? &c : NULL);
        if (st == GK_OK && o.struct_size % 4 != 0)
            fail(fn, "accepted a struct_size that ends inside a field", st);
    } else {
        fn = "gk_context_create";
        static const int backends[] = {GK_BACKEND_AUTO, GK_BACKEND_CPU, GK_BACKEND_CUDA, 3, -1};
        st = gk_context_create((gk_backend)backends[take8(r) % 5], how & 4 ? &c : NULL);
    }
    check_status(fn, st, ALLOWED_CONTEXT);
    if (st != GK_OK) {
        if (c != (gk_context *)(void *)foreign)
            fail(fn, "failed but set *out", st);
        return;
    }
    if (gk_context_backend(c) != GK_BACKEND_CPU)
        fail(fn, "made a context on a backend other than the CPU in a CPU-only build", st);
    destroy_ctx(p, slot);
    *slot = c;
}

static void op_context_destroy(reader *r, pool *p)
{
    destroy_ctx(p, &p->ctx[take8(r) % NCTX]);
}

/* The slot is emptied before the other operands are read, which may name what it held. */
static void op_buffer_create(reader *r, pool *p)
{
    gk_buffer **slot = take_slot(r, p);
    gk_context *c = take_ctx(r, p);
    gk_dtype t = take_dtype(r);
    size_t n = take_count(r);
    gk_buffer *b = (gk_buffer *)(void *)foreign;
    gk_status st = gk_buffer_create(c, t, n, take8(r) & 1 ? &b : NULL);
    check_status("gk_buffer_create", st, ALLOWED_CREATE);
    if (st != GK_OK) {
        if (b != (gk_buffer *)(void *)foreign)
            fail("gk_buffer_create", "failed but set *out", st);
        return;
    }
    if (gk_buffer_count(b) != n || gk_buffer_dtype(b) != t)
        fail("gk_buffer_create", "made a buffer of another count or dtype", st);
    *slot = b;
}

static void op_buffer_wrap(reader *r, pool *p)
{
    gk_buffer **slot = take_slot(r, p);
    gk_context *c = take_ctx(r, p);
    gk_dtype t = take_dtype(r);
    size_t n = take_count(r);
    uint8_t how = take8(r);
    void *host = NULL;
    if (!(how & 2) && p->nhost < NHOST) {
        /* n + 1 elements of the widest dtype (one, when n must be refused anyway): a start 1-7
         * bytes in (how & 4: misaligned for some dtype) still holds n. */
        host = calloc(n <= MAX_ELEMS ? n + 1 : 1, sizeof(double));
        if (host == NULL)
            abort();
        p->host[p->nhost++] = host;
        if (how & 4)
            host = (char *)host + 1 + (how >> 3) % 7;
    }
    gk_buffer *b = (gk_buffer *)(void *)foreign;
    gk_status st = gk_buffer_wrap_host(c, t, n, host, how & 1 ? &b : NULL);
    check_status("gk_buffer_wrap_host", st, ALLOWED_WRAP);
    if (st == GK_OK && n > 0 && (uintptr_t)host % (t == GK_FLOAT64 ? 8u : 4u) != 0)
        fail("gk_buffer_wrap_host", "accepted a host pointer not aligned to its dtype", st);
    if (st != GK_OK) {
        if (b != (gk_buffer *)(void *)foreign)
            fail("gk_buffer_wrap_host", "failed but set *out", st);
        return;
    }
    if (gk_buffer_count(b) != n || gk_buffer_dtype(b) != t)
        fail("gk_buffer_wrap_host", "made a buffer of another count or dtype", st);
    *slot = b;
}

static void op_buffer_view(reader *r, pool *p)
{
    gk_buffer *parent = take_buf(r, p);
    size_t offset = take_size(r), count = take_size(r);
    uint8_t to = take8(r) % NBUF;
    gk_buffer *v = (gk_buffer *)(void *)foreign;
    gk_status st = gk_buffer_view(parent, offset, count, take8(r) & 1 ? &v : NULL);
    check_status("gk_buffer_view", st, ALLOWED_VIEW);
    if (st != GK_OK) {
        if (v != (gk_buffer *)(void *)foreign)
            fail("gk_buffer_view", "failed but set *out", st);
        return;
    }
    if (gk_buffer_count(v) != count || gk_buffer_dtype(v) != gk_buffer_dtype(parent))
        fail("gk_buffer_view", "made a view of another count or dtype", st);
    /* The parent may sit in the slot the view goes to: views keep their parent's memory. */
    destroy_buf(p, &p->buf[to]);
    p->buf[to] = v;
}

static void op_buffer_destroy(reader *r, pool *p)
{
    destroy_buf(p, &p->buf[take8(r) % NBUF]);
}

static void op_buffer_write(reader *r, pool *p)
{
    gk_buffer *b = take_buf(r, p);
    size_t offset = take_size(r), count = take_size(r);
    uint8_t how = take8(r);
    unsigned char *bytes = (unsigned char *)p->scratch;
    for (size_t i = 0; i < 64; i++)
        bytes[i * 7 % sizeof p->scratch] = take8(r);
    CALL_OUT("gk_buffer_write", ALLOWED_TRANSFER, b,
             gk_buffer_write(b, offset, count, how & 1 ? NULL : p->scratch));
}

static void op_buffer_read(reader *r, pool *p)
{
    const gk_buffer *b = take_buf(r, p);
    size_t offset = take_size(r), count = take_size(r);
    gk_status st = gk_buffer_read(b, offset, count, take8(r) & 1 ? NULL : p->scratch);
    check_status("gk_buffer_read", st, ALLOWED_TRANSFER);
}

static void op_getters(reader *r, pool *p)
{
    const gk_buffer *b = take_buf(r, p);
    const gk_context *c = take_ctx(r, p);
    int s = (int)(int8_t)take8(r);
    size_t n = gk_buffer_count(b);
    gk_dtype t = gk_buffer_dtype(b);
    if (!live_buffer(b, p) && (n != 0 || t != 0))
        fail("gk_buffer_count", "a non-buffer has a count or dtype", GK_OK);
    if (gk_status_string((gk_status)s) == NULL)
        fail("gk_status_string", "returned NULL", (gk_status)s);
    if (gk_context_device_name(c) == NULL)
        fail("gk_context_device_name", "returned NULL", GK_OK);
    gk_backend k = gk_context_backend(c), last = gk_context_last_backend(c);
    if ((unsigned)k > GK_BACKEND_CUDA || (unsigned)last > GK_BACKEND_CUDA)
        fail("gk_context_backend", "returned an unknown backend", GK_OK);
    int avail = gk_backend_available((gk_backend)(s % 4));
    if (avail != 0 && avail != 1)
        fail("gk_backend_available", "returned neither 0 nor 1", GK_OK);
    gk_context_options_init(NULL);
}

static void op_context_calls(reader *r, pool *p)
{
    gk_context *c = take_ctx(r, p);
    if (take8(r) & 1)
        check_status("gk_context_synchronize", gk_context_synchronize(c), ALLOWED_SYNC);
    else
        check_status("gk_context_calibrate", gk_context_calibrate(c, take8(r) < 128 ? 0u : 1u),
                     ALLOWED_CALIBRATE);
}

static void op_elementwise(reader *r, pool *p)
{
    uint8_t which = take8(r) % 9;
    gk_context *c = take_ctx(r, p);
    gk_buffer *x = take_buf(r, p), *y = take_buf(r, p), *z = take_buf(r, p);
    double alpha = take_double(r);
    switch (which) {
    case 0:
        CALL_OUT("gk_fill", ALLOWED_OP, z, gk_fill(c, alpha, z));
        break;
    case 1:
        CALL_OUT("gk_copy", ALLOWED_OP, z, gk_copy(c, x, z));
        break;
    case 2:
        CALL_OUT("gk_add", ALLOWED_OP, z, gk_add(c, x, y, z));
        break;
    case 3:
        CALL_OUT("gk_sub", ALLOWED_OP, z, gk_sub(c, x, y, z));
        break;
    case 4:
        CALL_OUT("gk_mul", ALLOWED_OP, z, gk_mul(c, x, y, z));
        break;
    case 5:
        CALL_OUT("gk_axpy", ALLOWED_OP, z, gk_axpy(c, alpha, x, z));
        break;
    case 6:
        CALL_OUT("gk_scale", ALLOWED_OP, z, gk_scale(c, alpha, z));
        break;
    case 7:
        CALL_OUT("gk_exp", ALLOWED_OP, z, gk_exp(c, x, z));
        break;
    default:
        CALL_OUT("gk_div", ALLOWED_OP, z, gk_div(c, x, y, z));
        break;
    }
}

static void op_reduce(reader *r, pool *p)
{
    static const char *const names[] = {"gk_sum", "gk_dot", "gk_nrm2"};
    uint8_t which = take8(r) % 3;
    gk_context *c = take_ctx(r, p);
    const gk_buffer *x = take_buf(r, p), *y = take_buf(r, p);
    const double sentinel = -12345.5;
    double result = sentinel;
    double *out = take8(r) < 16 ? NULL : &result;
    gk_status st = which == 0   ? gk_sum(c, x, out)
                   : which == 1 ? gk_dot(c, x, y, out)
                                : gk_nrm2(c, x, out);
    check_status(names[which], st, ALLOWED_OP);
    if (st != GK_OK && memcmp(&result, &sentinel, sizeof result) != 0)
        fail(names[which], "failed but wrote *result", st);
}

static void op_gemm(reader *r, pool *p)
{
    gk_context *c = take_ctx(r, p);
    gk_transpose ta = take_transpose(r), tb = take_transpose(r);
    size_t m = take_size(r), n = take_size(r), k = take_size(r);
    size_t lda = take_size(r), ldb = take_size(r), ldc = take_size(r);
    double alpha = take_double(r), beta = take_double(r);
    const gk_buffer *a = take_buf(r, p), *b = take_buf(r, p);
    gk_buffer *cc = take_buf(r, p);
    CALL_OUT("gk_gemm", ALLOWED_SIZED_OP, cc,
             gk_gemm(c, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc));
}

static void op_rbf(reader *r, pool *p)
{
    uint8_t which = take8(r) % 3;
    gk_context *c = take_ctx(r, p);
    size_t m = take_size(r), n = take_size(r), d = take_size(r);
    double gamma = take_double(r);
    const gk_buffer *x = take_buf(r, p), *y = take_buf(r, p), *w = take_buf(r, p);
    gk_buffer *out = take_buf(r, p);
    switch (which) {
    case 0:
        CALL_OUT("gk_rbf_rows", ALLOWED_SIZED_OP, out, gk_rbf_rows(c, n, d, gamma, x, y, out));
        break;
    case 1:
        CALL_OUT("gk_rbf_matrix", ALLOWED_SIZED_OP, out,
                 gk_rbf_matrix(c, m, n, d, gamma, x, y, out));
        break;
    default:
        CALL_OUT("gk_rbf_matvec", ALLOWED_SIZED_OP, out,
                 gk_rbf_matvec(c, m, n, d, gamma, x, y, w, out));
        break;
    }
}

static void op_rng(reader *r, pool *p)
{
    uint8_t which = take8(r);
    gk_context *c = take_ctx(r, p);
    uint64_t seed = take64(r);
    uint64_t offset = take8(r) < 128 ? take8(r) : UINT64_MAX - take8(r);
    double mean = take_double(r), stddev = take_double(r);
    gk_buffer *x = take_buf(r, p);
    if (which & 1)
        CALL_OUT("gk_rng_uniform", ALLOWED_RNG, x, gk_rng_uniform(c, seed, offset, x));
    else
        CALL_OUT("gk_rng_normal", ALLOWED_RNG, x, gk_rng_normal(c, seed, offset, mean, stddev, x));
}

/* The 1.2 interop calls. Contexts here are CPU contexts, which have no device memory and no
 * stream: every wrap of device memory and every stream must be refused, and a buffer's address
 * must be where its elements are. */
static void op_interop(reader *r, pool *p)
{
    uint8_t how = take8(r);
    if (how % 4 == 0) {
        gk_context *c = take_ctx(r, p);
        gk_dtype t = take_dtype(r);
        size_t n = take_count(r);
        void *ptr = how & 4 ? NULL : (void *)p->scratch;
        gk_buffer *b = (gk_buffer *)(void *)foreign;
        gk_status st = gk_buffer_wrap_device(c, t, n, ptr, how & 8 ? NULL : &b);
        check_status("gk_buffer_wrap_device", st, ALLOWED_WRAP_DEVICE);
        if (st == GK_OK)
            fail("gk_buffer_wrap_device", "wrapped host memory on a CPU context", st);
        if (b != (gk_buffer *)(void *)foreign)
            fail("gk_buffer_wrap_device", "failed but set *out", st);
    } else if (how % 4 == 1) {
        const gk_buffer *b = take_buf(r, p);
        const unsigned char *d = gk_buffer_data(b);
        if (!live_buffer(b, p) || gk_buffer_count(b) == 0) {
            if (d != NULL)
                fail("gk_buffer_data", "gave an address for no elements", GK_OK);
            return;
        }
        unsigned char first[8];
        if (d == NULL || gk_buffer_read(b, 0, 1, first) != GK_OK ||
            memcmp(first, d, gk_buffer_dtype(b) == GK_FLOAT32 ? 4 : 8) != 0)
            fail("gk_buffer_data", "is not where the buffer's first element is", GK_OK);
    } else if (how % 4 == 2) {
        gk_context *c = take_ctx(r, p);
        gk_status st = gk_context_set_stream(c, how & 4 ? NULL : (void *)foreign);
        check_status("gk_context_set_stream", st, ALLOWED_STREAM);
        if (st == GK_OK)
            fail("gk_context_set_stream", "set a stream on a CPU context", st);
        if (gk_context_stream(c) != NULL)
            fail("gk_context_stream", "a CPU context has a stream", GK_OK);
    } else {
        int b = (int)(how >> 2) % 5 - 1;
        int n = gk_device_count((gk_backend)b);
        if (n < 0 || (b == GK_BACKEND_CPU && n != 1) || ((b < 0 || b > 2) && n != 0))
            fail("gk_device_count", "returned a count its documentation rules out", GK_OK);
    }
}

typedef void (*op_fn)(reader *r, pool *p);

static const op_fn ops[] = {
    op_context_create,
    op_context_destroy,
    op_buffer_create,
    op_buffer_create,
    op_buffer_wrap,
    op_buffer_view,
    op_buffer_view,
    op_buffer_destroy,
    op_buffer_write,
    op_buffer_read,
    op_getters,
    op_context_calls,
    op_elementwise,
    op_elementwise,
    op_reduce,
    op_gemm,
    op_rbf,
    op_rbf,
    op_rng,
    op_interop,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pool p;
    reader r = {data, size};
    memset(&p, 0, offsetof(pool, scratch));
    /* Most programs want a context to begin with; the first byte says what kind. */
    if (gk_context_create(take8(&r) & 1 ? GK_BACKEND_CPU : GK_BACKEND_AUTO, &p.ctx[0]) != GK_OK)
        fail("gk_context_create", "cannot make a CPU context", GK_E_INTERNAL);
    while (r.left > 0)
        ops[take8(&r) % (sizeof ops / sizeof ops[0])](&r, &p);
    for (int i = 0; i < NBUF; i++)
        gk_buffer_destroy(p.buf[i]);
    for (int i = 0; i < NCTX; i++)
        gk_context_destroy(p.ctx[i]);
    for (int i = 0; i < p.nhost; i++)
        free(p.host[i]);
    return 0;
}

/* The fuzzer tries sizes past any host memory on purpose; they must come back as
 * GK_E_OUT_OF_MEMORY, so AddressSanitizer's malloc returns NULL instead of aborting. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
