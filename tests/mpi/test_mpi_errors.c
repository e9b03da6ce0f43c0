/* SPDX-License-Identifier: MIT */
/* test_mpi_errors.c - collective errors of gk_mpi_rbf_matvec: a bad argument on one rank, or
 * ranks that disagree, give every rank the same status and message, promptly; then the next
 * call works. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_test.h"

#define M 13
#define N 9
#define D 3

/* Each rank's valid operands; a scenario spoils some of them on one rank. */
typedef struct operands {
    gk_context *ctx;
    size_t m, n, d;
    double gamma;
    gk_buffer *x, *y, *w, *out;
} operands;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static gk_status call(const operands *o)
{
    return gk_mpi_rbf_matvec(o->ctx, MPI_COMM_WORLD, o->m, o->n, o->d, o->gamma, o->x, o->y, o->w,
                             o->out);
}

/* Status st of a failing call is want on every rank, with the same message everywhere, starting
 * with `prefix` and containing `needle`. */
static void check_failure(const char *what, gk_status st, gk_status want, const char *prefix,
                          const char *needle)
{
    char mine[1024], first[1024];
    snprintf(mine, sizeof mine, "%s", gk_mpi_last_error());
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    mpt_check(st == want, "%s: status %s, want %s (%s)", what, gk_status_string(st),
              gk_status_string(want), mine);
    mpt_check(strcmp(mine, first) == 0, "%s: message \"%s\" differs from rank 0's \"%s\"", what,
              mine, first);
    mpt_check(strncmp(mine, prefix, strlen(prefix)) == 0, "%s: message \"%s\" lacks prefix \"%s\"",
              what, mine, prefix);
    mpt_check(strstr(mine, needle) != NULL, "%s: message \"%s\" does not say \"%s\"", what, mine,
              needle);
}

/* Runs the spoiled call on every rank and checks: status `want` everywhere, the very same
 * message everywhere, starting with `prefix` and containing `needle`, within 20 s; then a
 * valid call succeeds on every rank. */
static void expect(const char *what, const operands *spoiled, const operands *valid, gk_status want,
                   const char *prefix, const char *needle)
{
    double t0 = now();
    gk_status st = call(spoiled);
    double took = now() - t0;
    check_failure(what, st, want, prefix, needle);
    mpt_check(took < 20.0, "%s: took %.1f s", what, took);
    st = call(valid);
    mpt_check(st == GK_OK, "%s: the valid call after it: %s: %s", what, gk_status_string(st),
              gk_mpi_last_error());
}

/* As expect, for a call whose arguments are valid everywhere but whose environment is not. */
static void expect_setup(const char *what, const operands *o, gk_status want, const char *prefix,
                         const char *needle)
{
    check_failure(what, call(o), want, prefix, needle);
}

static void make_operands(gk_context *ctx, gk_dtype t, operands *o)
{
    o->ctx = ctx;
    o->m = M;
    o->n = N;
    o->d = D;
    o->gamma = 0.5;
    o->x = gk_test_buffer_random(ctx, t, M * D, -1, 1, NULL);
    o->y = gk_test_buffer_random(ctx, t, N * D, -1, 1, NULL);
    o->w = gk_test_buffer_random(ctx, t, N, -1, 1, NULL);
    o->out = gk_test_buffer_const(ctx, t, M, 0.0);
}

static void free_operands(operands *o)
{
    gk_buffer_destroy(o->x);
    gk_buffer_destroy(o->y);
    gk_buffer_destroy(o->w);
    gk_buffer_destroy(o->out);
}

static void test_one_rank_bad(void **state)
{
    gk_context *ctx = gk_test_context(state);
    int victim = mpt_size - 1, me = mpt_rank == victim;
    char prefix[128];
    snprintf(prefix, sizeof prefix, "gk_mpi_rbf_matvec: rank %d of %d: ", victim, mpt_size);
    operands ok, bad;
    make_operands(ctx, GK_FLOAT32, &ok);

    bad = ok;
    if (me)
        bad.x = NULL;
    expect("x_local NULL", &bad, &ok, GK_E_INVALID_ARGUMENT, prefix, "x_local is NULL");

    bad = ok;
    if (me)
        bad.ctx = NULL;
    expect("ctx NULL", &bad, &ok, GK_E_INVALID_ARGUMENT, prefix, "ctx is NULL");

    bad = ok;
    if (me)
        bad.n = N + 1;
    expect("y_local too small", &bad, &ok, GK_E_SHAPE, prefix, "y_local holds");

    bad = ok;
    if (me)
        bad.m = SIZE_MAX / 2;
    expect("m_local * d overflows", &bad, &ok, GK_E_OVERFLOW, prefix, "overflows");

    gk_buffer *w64 = gk_test_buffer_const(ctx, GK_FLOAT64, N, 1.0);
    bad = ok;
    if (me)
        bad.w = w64;
    expect("mixed dtypes on one rank", &bad, &ok, GK_E_DTYPE, prefix, "gk_rbf_matvec");

    bad = ok;
    if (me)
        bad.out = bad.x;
    expect("out_local is x_local", &bad, &ok, GK_E_INVALID_ARGUMENT, prefix, "overlaps");

    gk_context *other = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &other));
    gk_buffer *foreign = gk_test_buffer_const(other, GK_FLOAT32, N, 1.0);
    bad = ok;
    if (me)
        bad.w = foreign;
    expect("w_local of another context", &bad, &ok, GK_E_CONTEXT_MISMATCH, prefix, "gk_rbf_matvec");

    /* Two ranks fail differently: rank 0's failure is the one every rank reports. */
    bad = ok;
    if (mpt_rank == 0)
        bad.out = NULL;
    if (me && victim != 0)
        bad.n = N + 1;
    snprintf(prefix, sizeof prefix, "gk_mpi_rbf_matvec: rank 0 of %d: ", mpt_size);
    expect("two ranks fail", &bad, &ok, GK_E_INVALID_ARGUMENT, prefix, "out_local is NULL");

    gk_buffer_destroy(foreign);
    gk_context_destroy(other);
    gk_buffer_destroy(w64);
    free_operands(&ok);
    mpt_agree();
}

static void test_ranks_disagree(void **state)
{
    gk_context *ctx = gk_test_context(state);
    if (mpt_size < 2) {
        print_message("[ SKIP WHY ] ranks can only disagree when there are two or more\n");
        skip();
    }
    int me = mpt_rank == mpt_size - 1;
    const char *prefix = "gk_mpi_rbf_matvec: ";
    operands ok, bad, f64;
    make_operands(ctx, GK_FLOAT32, &ok);
    make_operands(ctx, GK_FLOAT64, &f64);
    /* The same x serves as d = 1 with three times the rows: valid on its own rank. */
    bad = ok;
    if (me) {
        bad.d = 1;
        bad.m = M;
        bad.n = N;
    }
    expect("d differs", &bad, &ok, GK_E_INVALID_ARGUMENT, prefix,
           "d is not the same on every rank");

    bad = ok;
    if (me)
        bad.gamma = 0.5000001;
    expect("gamma differs", &bad, &ok, GK_E_INVALID_ARGUMENT, prefix,
           "gamma is not the same on every rank");

    expect("dtype differs", me ? &f64 : &ok, &ok, GK_E_DTYPE, prefix,
           "the dtype is not the same on every rank");

    free_operands(&f64);
    free_operands(&ok);
    mpt_agree();
}

/* Equal values of gamma are the same gamma: 0.0 on some ranks and -0.0 on others (once refused:
 * "0 and -0 differ"), or NaNs of different payloads, are accepted. */
static void test_equal_gammas_agree(void **state)
{
    gk_context *ctx = gk_test_context(state);
    operands o;
    make_operands(ctx, GK_FLOAT64, &o);
    o.gamma = mpt_rank % 2 ? -0.0 : 0.0;
    gk_status st = call(&o);
    mpt_check(st == GK_OK, "gamma %g on rank %d: %s: %s", o.gamma, mpt_rank, gk_status_string(st),
              gk_mpi_last_error());
    uint64_t bits = 0x7ff8000000000000u | (uint64_t)(mpt_rank + 1);
    memcpy(&o.gamma, &bits, sizeof o.gamma);
    st = call(&o);
    mpt_check(st == GK_OK && isnan(o.gamma), "NaN gamma with payload %d: %s: %s", mpt_rank + 1,
              gk_status_string(st), gk_mpi_last_error());
    free_operands(&o);
    mpt_agree();
}

/* GK_MPI_CUDA_AWARE takes 0, 1 or nothing: another value on one rank fails every rank's call
 * (once ignored without a word). */
static void test_unknown_cuda_aware_value(void **state)
{
    gk_context *ctx = gk_test_context(state);
    int victim = mpt_size - 1;
    char prefix[128];
    snprintf(prefix, sizeof prefix, "gk_mpi_rbf_matvec: rank %d of %d: ", victim, mpt_size);
    operands ok;
    make_operands(ctx, GK_FLOAT32, &ok);
    if (mpt_rank == victim)
        setenv("GK_MPI_CUDA_AWARE", "yes", 1);
    expect_setup("GK_MPI_CUDA_AWARE=yes", &ok, GK_E_INVALID_ARGUMENT, prefix,
                 "GK_MPI_CUDA_AWARE=yes is not one of: 0, 1 (or unset)");
    if (mpt_rank == victim) {
        mpt_check(gk_mpi_cuda_aware() == 0, "gk_mpi_cuda_aware() with GK_MPI_CUDA_AWARE=yes");
        mpt_check(strstr(gk_mpi_last_error(), "gk_mpi_cuda_aware: GK_MPI_CUDA_AWARE=yes") != NULL,
                  "gk_mpi_cuda_aware's message: %s", gk_mpi_last_error());
        /* the value is quoted in printable characters */
        setenv("GK_MPI_CUDA_AWARE", "\x1b[2J", 1);
        mpt_check(gk_mpi_cuda_aware() == 0, "gk_mpi_cuda_aware() with an escape sequence");
        mpt_check(strcmp(gk_mpi_last_error(), "gk_mpi_cuda_aware: GK_MPI_CUDA_AWARE=\\x1b[2J is "
                                              "not one of: 0, 1 (or unset)") == 0,
                  "gk_mpi_cuda_aware's message: %s", gk_mpi_last_error());
    }
    unsetenv("GK_MPI_CUDA_AWARE");
    gk_status st = call(&ok);
    mpt_check(st == GK_OK, "after unsetenv: %s: %s", gk_status_string(st), gk_mpi_last_error());
    free_operands(&ok);
    mpt_agree();
}

/* An intercommunicator (the world's even and odd ranks), x_local NULL on one rank: every rank
 * refuses it at once (once every rank blocked). */
static void test_intercommunicator_refused(void **state)
{
    gk_context *ctx = gk_test_context(state);
    if (mpt_size < 2) {
        print_message("[ SKIP WHY ] an intercommunicator needs two groups of ranks\n");
        skip();
    }
    MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, mpt_rank % 2, mpt_rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, mpt_rank % 2 ? 0 : 1, 7, &inter);
    operands o;
    make_operands(ctx, GK_FLOAT32, &o);
    double t0 = now();
    gk_status st = gk_mpi_rbf_matvec(o.ctx, inter, o.m, o.n, o.d, o.gamma,
                                     mpt_rank == 0 ? NULL : o.x, o.y, o.w, o.out);
    double took = now() - t0;
    mpt_check(st == GK_E_INVALID_ARGUMENT, "intercommunicator: %s: %s", gk_status_string(st),
              gk_mpi_last_error());
    mpt_check(strcmp(gk_mpi_last_error(),
                     "gk_mpi_rbf_matvec: comm is an intercommunicator; pass an intracommunicator "
                     "(for one over both groups, MPI_Intercomm_merge)") == 0,
              "intercommunicator: message \"%s\"", gk_mpi_last_error());
    mpt_check(took < 20.0, "intercommunicator: took %.1f s", took);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    free_operands(&o);
    mpt_agree();
}

int main(int argc, char **argv)
{
    mpt_init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_one_rank_bad),
        GK_TEST_BOTH(test_ranks_disagree),
        GK_TEST_BOTH(test_equal_gammas_agree),
        GK_TEST_BOTH(test_unknown_cuda_aware_value),
        GK_TEST_BOTH(test_intercommunicator_refused),
    };
    int rc = mpt_run("mpi_errors", tests, sizeof tests / sizeof tests[0]);
    /* After MPI_Finalize the call cannot communicate: it fails on each rank alone. */
    gk_status st = gk_mpi_rbf_matvec(NULL, MPI_COMM_WORLD, 0, 0, 0, 1.0, NULL, NULL, NULL, NULL);
    if (st != GK_E_INVALID_ARGUMENT || strstr(gk_mpi_last_error(), "finalized") == NULL) {
        fprintf(stderr, "after MPI_Finalize: %s: %s\n", gk_status_string(st), gk_mpi_last_error());
        rc = 1;
    }
    return rc;
}
