/* SPDX-License-Identifier: MIT */
/* test_multi_device.c - every op on every device at once, one thread per context (selected by
 * gk_context_options.device), each device's results checked against the CPU's by the contract. */
#include "gk_test.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sizes not multiples of any block size. */
#define NE 1000 /* element-wise ops, reductions, random numbers */
#define GM 67   /* gemm m x n x k */
#define GN 45
#define GK 33
#define RN 300 /* rbf_rows n x d */
#define RD 7
#define MM 70 /* rbf_matrix m x n x d */
#define MN 50
#define MD 5
#define VM 300 /* rbf_matvec m x n x d */
#define VN 200
#define VD 3
#define ROUNDS 3 /* each thread runs the whole suite this often, overlapping */
#define MAX_CONTEXTS 16
#define GEMM_OUT (GM * GN)
#define MATRIX_OUT (MM * MN)

enum {
    OP_FILL,
    OP_COPY,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_AXPY,
    OP_SCALE,
    OP_EXP,
    OP_GEMM,
    OP_RBF_ROWS,
    OP_RBF_MATRIX,
    OP_RBF_MATVEC,
    OP_RNG_UNIFORM,
    OP_RNG_NORMAL,
    OP_SUM,
    OP_DOT,
    OP_NRM2,
    OPS
};
static const char *const op_names[OPS] = {
    "fill",        "copy",       "add",  "sub",      "mul",        "axpy",
    "scale",       "exp",        "gemm", "rbf_rows", "rbf_matrix", "rbf_matvec",
    "rng_uniform", "rng_normal", "sum",  "dot",      "nrm2"};
/* Elements of each op's output (a reduction's is one double). */
static const size_t op_count[OPS] = {NE, NE,         NE, NE, NE, NE, NE, NE, GEMM_OUT,
                                     RN, MATRIX_OUT, VM, NE, NE, 1,  1,  1};

#define ALPHA 0.75
#define NORMAL_MEAN 1.0
#define NORMAL_STDDEV 2.0
#define GAMMA 0.3

/* Host inputs, shared read-only by every thread. */
typedef struct inputs {
    gk_dtype t;
    void *x, *y;        /* NE each */
    void *ga, *gb;      /* GM x GK, GK x GN */
    void *ra, *rb;      /* RN x RD each */
    void *mx, *my;      /* MM x MD, MN x MD */
    void *vx, *vy, *vw; /* VM x VD, VN x VD, VN */
} inputs;

/* One context's results: each op's output on the host (reductions as one double). */
typedef struct results {
    void *out[OPS];
    double red[OPS];
    char why[1024]; /* empty unless a call failed */
} results;

typedef struct worker {
    const inputs *in;
    gk_backend backend;
    int device;
    pthread_barrier_t *start;
    results res;
    char name[256];
} worker;

static void fail_why(results *r, const char *what, gk_status st)
{
    if (r->why[0] == '\0')
        snprintf(r->why, sizeof r->why, "%s failed: %s: %s", what, gk_status_string(st),
                 gk_last_error());
}

#define RUN(r, call)                                                                               \
    do {                                                                                           \
        gk_status st_ = (call);                                                                    \
        if (st_ != GK_OK) {                                                                        \
            fail_why((r), #call, st_);                                                             \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

static gk_buffer *upload(gk_context *ctx, gk_dtype t, size_t n, const void *host, results *r)
{
    gk_buffer *b = NULL;
    gk_status st = gk_buffer_create(ctx, t, n, &b);
    if (st == GK_OK && (st = gk_buffer_write(b, 0, n, host)) != GK_OK) {
        gk_buffer_destroy(b);
        b = NULL;
    }
    if (st != GK_OK)
        fail_why(r, "uploading an input", st);
    return b;
}

/* Runs every op once on ctx and reads every output back into r. */
static void run_suite(gk_context *ctx, const inputs *in, results *r)
{
    gk_dtype t = in->t;
    enum { X, Y, GA, GB, RA, RB, MX, MY, VX, VY, VW, NIN };
    const void *host[NIN] = {in->x,  in->y,  in->ga, in->gb, in->ra, in->rb,
                             in->mx, in->my, in->vx, in->vy, in->vw};
    const size_t count[NIN] = {NE,      NE,      GM * GK, GK * GN, RN * RD, RN * RD,
                               MM * MD, MN * MD, VM * VD, VN * VD, VN};
    gk_buffer *b[NIN] = {NULL}, *o[OPS] = {NULL};
    for (int i = 0; i < NIN; i++)
        if ((b[i] = upload(ctx, t, count[i], host[i], r)) == NULL)
            goto done;
    for (int op = 0; op < OPS; op++)
        if (op < OP_SUM)
            RUN(r, gk_buffer_create(ctx, t, op_count[op], &o[op]));
    RUN(r, gk_fill(ctx, -2.5, o[OP_FILL]));
    RUN(r, gk_copy(ctx, b[X], o[OP_COPY]));
    RUN(r, gk_add(ctx, b[X], b[Y], o[OP_ADD]));
    RUN(r, gk_sub(ctx, b[X], b[Y], o[OP_SUB]));
    RUN(r, gk_mul(ctx, b[X], b[Y], o[OP_MUL]));
    RUN(r, gk_copy(ctx, b[Y], o[OP_AXPY]));
    RUN(r, gk_axpy(ctx, ALPHA, b[X], o[OP_AXPY]));
    RUN(r, gk_copy(ctx, b[X], o[OP_SCALE]));
    RUN(r, gk_scale(ctx, ALPHA, o[OP_SCALE]));
    RUN(r, gk_exp(ctx, b[X], o[OP_EXP]));
    RUN(r, gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, GM, GN, GK, 1.0, b[GA], GK, b[GB], GN, 0.0,
                   o[OP_GEMM], GN));
    RUN(r, gk_rbf_rows(ctx, RN, RD, GAMMA, b[RA], b[RB], o[OP_RBF_ROWS]));
    RUN(r, gk_rbf_matrix(ctx, MM, MN, MD, GAMMA, b[MX], b[MY], o[OP_RBF_MATRIX]));
    RUN(r, gk_rbf_matvec(ctx, VM, VN, VD, GAMMA, b[VX], b[VY], b[VW], o[OP_RBF_MATVEC]));
    RUN(r, gk_rng_uniform(ctx, 17, 5, o[OP_RNG_UNIFORM]));
    RUN(r, gk_rng_normal(ctx, 17, 5, NORMAL_MEAN, NORMAL_STDDEV, o[OP_RNG_NORMAL]));
    RUN(r, gk_sum(ctx, b[X], &r->red[OP_SUM]));
    RUN(r, gk_dot(ctx, b[X], b[Y], &r->red[OP_DOT]));
    RUN(r, gk_nrm2(ctx, b[X], &r->red[OP_NRM2]));
    for (int op = 0; op < OP_SUM; op++) {
        free(r->out[op]);
        r->out[op] = gk_test_alloc(t, op_count[op]);
        RUN(r, gk_buffer_read(o[op], 0, op_count[op], r->out[op]));
    }
done:
    for (int i = 0; i < NIN; i++)
        gk_buffer_destroy(b[i]);
    for (int op = 0; op < OPS; op++)
        gk_buffer_destroy(o[op]);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    gk_context_options opt;
    gk_context_options_init(&opt);
    opt.backend = w->backend;
    opt.device = w->device;
    gk_context *ctx = NULL;
    gk_status st = gk_context_create_ex(&opt, &ctx);
    if (st != GK_OK)
        fail_why(&w->res, "gk_context_create_ex", st);
    else
        snprintf(w->name, sizeof w->name, "%s device %d (%s)",
                 w->backend == GK_BACKEND_CUDA ? "cuda" : "cpu", w->device,
                 gk_context_device_name(ctx));
    /* Every thread starts its suite at once, so the devices really work at the same time. */
    pthread_barrier_wait(w->start);
    for (int round = 0; round < ROUNDS && ctx != NULL && w->res.why[0] == '\0'; round++)
        run_suite(ctx, w->in, &w->res);
    gk_context_destroy(ctx);
    return NULL;
}

static void make_inputs(gk_dtype t, inputs *in)
{
    in->t = t;
    in->x = gk_test_random_array(t, NE, -2, 2);
    in->y = gk_test_random_array(t, NE, -2, 2);
    in->ga = gk_test_random_array(t, GM * GK, -1, 1);
    in->gb = gk_test_random_array(t, GK * GN, -1, 1);
    in->ra = gk_test_random_array(t, RN * RD, -1, 1);
    in->rb = gk_test_random_array(t, RN * RD, -1, 1);
    in->mx = gk_test_random_array(t, MM * MD, -1, 1);
    in->my = gk_test_random_array(t, MN * MD, -1, 1);
    in->vx = gk_test_random_array(t, VM * VD, -1, 1);
    in->vy = gk_test_random_array(t, VN * VD, -1, 1);
    in->vw = gk_test_random_array(t, VN, -1, 1);
}

static void free_inputs(inputs *in)
{
    void *p[] = {in->x,  in->y,  in->ga, in->gb, in->ra, in->rb,
                 in->mx, in->my, in->vx, in->vy, in->vw};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        free(p[i]);
}

static void free_results(results *r)
{
    for (int op = 0; op < OPS; op++)
        free(r->out[op]);
}

/* got against ref (the CPU's), both within the contract of the exact value: twice its bound. */
static void compare(const inputs *in, const results *ref, const results *got, const char *who)
{
    gk_dtype t = in->t;
    double eps = t == GK_FLOAT32 ? FLT_EPSILON : DBL_EPSILON;
    double red_tol = t == GK_FLOAT32 ? 2e-6 : 2e-13, rbf_tol = t == GK_FLOAT32 ? 2e-5 : 2e-12;
    for (int op = 0; op < OP_SUM; op++) {
        double frob = 0, scale = 0;
        for (size_t i = 0; i < op_count[op]; i++) {
            double a = gk_test_get(t, got->out[op], i), b = gk_test_get(t, ref->out[op], i);
            double err = fabs(a - b), bound = 0;
            switch (op) {
            case OP_AXPY:
                bound = 2 * eps *
                        (fabs(ALPHA * gk_test_get(t, in->x, i)) + fabs(gk_test_get(t, in->y, i)));
                break;
            case OP_EXP:
                bound = 4 * eps * fabs(b);
                break;
            case OP_RNG_NORMAL: /* the contract's 4 ulp, of |mean| + |stddev z| */
                bound = 4 * (double)gk_test_ulp(t, fabsl((long double)NORMAL_MEAN) +
                                                       fabsl((long double)b - NORMAL_MEAN));
                break;
            case OP_GEMM:
                frob += err * err;
                continue;
            case OP_RBF_ROWS:
            case OP_RBF_MATRIX:
                bound = rbf_tol;
                break;
            case OP_RBF_MATVEC:
                for (size_t j = 0; i == 0 && j < VN; j++)
                    scale += fabs(gk_test_get(t, in->vw, j));
                bound = rbf_tol * scale;
                break;
            default: /* fill, copy, add, sub, mul, scale, rng_uniform: bit for bit */
                if (!gk_test_same_bits(t, a, b))
                    GK_FAIL("%s: %s[%zu] = %.17g, cpu %.17g: not bit-identical", who, op_names[op],
                            i, a, b);
                continue;
            }
            if (!(err <= bound))
                GK_FAIL("%s: %s[%zu] = %.17g, cpu %.17g, |diff| %.3g > bound %.3g", who,
                        op_names[op], i, a, b, err, bound);
        }
        if (op == OP_GEMM) {
            /* || |A| |B| ||_F, the contract's scale for gemm. */
            double s = 0;
            for (size_t i = 0; i < GM; i++)
                for (size_t j = 0; j < GN; j++) {
                    double v = 0;
                    for (size_t k = 0; k < GK; k++)
                        v += fabs(gk_test_get(t, in->ga, i * GK + k)) *
                             fabs(gk_test_get(t, in->gb, k * GN + j));
                    s += v * v;
                }
            double bound = (t == GK_FLOAT32 ? 2e-5 : 2e-13) * sqrt(s);
            if (!(sqrt(frob) <= bound))
                GK_FAIL("%s: gemm ||C - C_cpu||_F = %.3g > bound %.3g", who, sqrt(frob), bound);
        }
    }
    double abs_sum = 0, abs_dot = 0, sq = 0;
    for (size_t i = 0; i < NE; i++) {
        double x = gk_test_get(t, in->x, i), y = gk_test_get(t, in->y, i);
        abs_sum += fabs(x);
        abs_dot += fabs(x * y);
        sq += x * x;
    }
    const double scales[3] = {abs_sum, abs_dot, sqrt(sq)};
    for (int op = OP_SUM; op < OPS; op++) {
        double a = got->red[op], b = ref->red[op], bound = red_tol * scales[op - OP_SUM];
        if (!(fabs(a - b) <= bound))
            GK_FAIL("%s: %s = %.17g, cpu %.17g, |diff| %.3g > bound %.3g", who, op_names[op], a, b,
                    fabs(a - b), bound);
    }
}

/* Runs the suite on `count` contexts at once, (backend, devices[i]) each on its own thread,
 * in both dtypes, and checks each against a CPU context's results. */
static void run_concurrently(gk_backend backend, const int *devices, int count)
{
    static const gk_dtype dtypes[2] = {GK_FLOAT32, GK_FLOAT64};
    for (int di = 0; di < 2; di++) {
        inputs in;
        make_inputs(dtypes[di], &in);
        results ref;
        memset(&ref, 0, sizeof ref);
        gk_context *cpu = NULL;
        GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &cpu));
        run_suite(cpu, &in, &ref);
        gk_context_destroy(cpu);
        if (ref.why[0] != '\0')
            GK_FAIL("cpu reference: %s", ref.why);

        worker w[MAX_CONTEXTS];
        pthread_t th[MAX_CONTEXTS];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)count);
        memset(w, 0, sizeof w);
        for (int i = 0; i < count; i++) {
            w[i].in = &in;
            w[i].backend = backend;
            w[i].device = devices[i];
            w[i].start = &start;
            snprintf(w[i].name, sizeof w[i].name, "device %d", devices[i]);
            assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
        }
        for (int i = 0; i < count; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&start);
        for (int i = 0; i < count; i++) {
            if (w[i].res.why[0] != '\0')
                GK_FAIL("%s: %s", w[i].name, w[i].res.why);
            compare(&in, &ref, &w[i].res, w[i].name);
        }
        print_message("[ DEVICES  ] %s: %d context(s) at once agree with the CPU: %s%s\n",
                      gk_test_dtype_name(dtypes[di]), count, w[0].name, count > 1 ? ", ..." : "");
        for (int i = 0; i < count; i++)
            free_results(&w[i].res);
        free_results(&ref);
        free_inputs(&in);
    }
}

/* One thread per GPU, all GPUs at once. */
static void test_every_gpu(void **state)
{
    (void)state;
    int n = gk_device_count(GK_BACKEND_CUDA);
    if (n < 2) {
        print_message("[ SKIP WHY ] needs two or more GPUs; gk_device_count(GK_BACKEND_CUDA) = "
                      "%d%s%s\n",
                      n, n == 0 ? ": " : "", n == 0 ? gk_last_error() : "");
        skip();
    }
    int devices[MAX_CONTEXTS];
    n = n < MAX_CONTEXTS ? n : MAX_CONTEXTS;
    for (int i = 0; i < n; i++)
        devices[i] = i;
    run_concurrently(GK_BACKEND_CUDA, devices, n);
}

/* Two contexts of one GPU at once (what two MPI ranks sharing a GPU do). */
static void test_one_gpu_twice(void **state)
{
    (void)state;
    gk_test_require_cuda();
    const int devices[2] = {0, 0};
    run_concurrently(GK_BACKEND_CUDA, devices, 2);
}

/* The CPU's device 0 from three threads: the same harness, on every machine. */
static void test_cpu_contexts(void **state)
{
    (void)state;
    const int devices[3] = {0, 0, 0};
    run_concurrently(GK_BACKEND_CPU, devices, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_contexts),
        cmocka_unit_test(test_one_gpu_twice),
        cmocka_unit_test(test_every_gpu),
    };
    return cmocka_run_group_tests_name("multi_device", tests, gk_test_group_setup, NULL);
}
