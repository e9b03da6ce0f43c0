/* SPDX-License-Identifier: MIT */
/* kernel_ridge.c - kernel ridge regression over MPI ranks: (K + lambda I) alpha = y solved by
 * conjugate gradients, each product K p from gk_mpi_rbf_matvec, dot products by MPI_Allreduce.
 *
 *   mpiexec -n 4 kernel_ridge --n 200000 --d 3 [--backend cpu|cuda|auto] [--check]
 *
 * Rank r holds a contiguous block of the n training points (x, y) and the same block of alpha,
 * p, r and q; nothing is ever gathered except by --check. The points come from the counter-based
 * generator (element i depends only on the seed and i), so every rank count solves the same
 * problem. One rank per GPU: a CUDA context takes device (rank on its node) % gk_device_count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_common.h"

#define KR_PI 3.14159265358979323846

static int rank_, size_;

typedef struct options {
    size_t n, d;
    double gamma, lambda, tol;
    int max_iter, check, uneven;
    gk_dtype t;
    gk_backend backend;
    uint64_t seed;
} options;

static void usage(void)
{
    if (rank_ == 0)
        fprintf(stderr,
                "usage: kernel_ridge [--n N] [--d D] [--gamma G] [--lambda L] [--tol T]\n"
                "                    [--max-iter K] [--dtype f32|f64] [--backend cpu|cuda|auto]\n"
                "                    [--seed S] [--uneven] [--check]\n");
    MPI_Finalize();
    exit(2);
}

static options parse(int argc, char **argv)
{
    options o = {20000, 3, 1.0, 1e-2, 1e-8, 1000, 0, 0, GK_FLOAT64, GK_BACKEND_AUTO, 2026};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--check") == 0) {
            o.check = 1;
            continue;
        }
        if (strcmp(a, "--uneven") == 0) {
            o.uneven = 1;
            continue;
        }
        if (v == NULL)
            usage();
        i++;
        if (strcmp(a, "--n") == 0)
            o.n = strtoull(v, NULL, 0);
        else if (strcmp(a, "--d") == 0)
            o.d = strtoull(v, NULL, 0);
        else if (strcmp(a, "--gamma") == 0)
            o.gamma = atof(v);
        else if (strcmp(a, "--lambda") == 0)
            o.lambda = atof(v);
        else if (strcmp(a, "--tol") == 0)
            o.tol = atof(v);
        else if (strcmp(a, "--max-iter") == 0)
            o.max_iter = atoi(v);
        else if (strcmp(a, "--seed") == 0)
            o.seed = strtoull(v, NULL, 0);
        else if (strcmp(a, "--dtype") == 0 && (!strcmp(v, "f32") || !strcmp(v, "f64")))
            o.t = strcmp(v, "f32") == 0 ? GK_FLOAT32 : GK_FLOAT64;
        else if (strcmp(a, "--backend") == 0 && !strcmp(v, "cpu"))
            o.backend = GK_BACKEND_CPU;
        else if (strcmp(a, "--backend") == 0 && !strcmp(v, "cuda"))
            o.backend = GK_BACKEND_CUDA;
        else if (strcmp(a, "--backend") == 0 && !strcmp(v, "auto"))
            o.backend = GK_BACKEND_AUTO;
        else
            usage();
    }
    if (o.n == 0 || o.lambda <= 0 || o.max_iter < 1)
        usage();
    return o;
}

/* This rank's rows [*first, *first + *count): even blocks, or with --uneven none on rank 1. */
static void share(const options *o, int rank, size_t *first, size_t *count)
{
    /* Weights 1 each, or 2, 0, 1, 1, ... (rank 0 twice the others, rank 1 nothing): either
     * way they add up to the rank count, and the ranks before r weigh r, except rank 1's 2. */
    size_t p = (size_t)size_, r = (size_t)rank, before = r, mine = 1;
    if (o->uneven && p > 1) {
        before = r == 1 ? 2 : r;
        mine = r == 0 ? 2 : r == 1 ? 0 : 1;
    }
    *first = o->n * before / p;
    *count = o->n * (before + mine) / p - *first;
}

/* The problem's data for rows [first, first + count): x uniform in [0, 1)^d, and the target
 * y = sin(2 pi x_0) + cos(pi x_1) + 0.1 * noise (d >= 2; sin alone for d = 1). */
static void make_data(gk_context *ctx, const options *o, size_t first, size_t count, gk_buffer **x,
                      gk_buffer **y)
{
    MPX_CHECK(gk_buffer_create(ctx, o->t, count * o->d, x));
    MPX_CHECK(gk_buffer_create(ctx, o->t, count, y));
    MPX_CHECK(gk_rng_uniform(ctx, o->seed, first * o->d, *x));
    MPX_CHECK(gk_rng_normal(ctx, o->seed + 1, first, 0.0, 0.1, *y));
    size_t es = o->t == GK_FLOAT32 ? 4 : 8;
    char *hx = malloc((count * o->d + 1) * es), *hy = malloc((count + 1) * es);
    if (hx == NULL || hy == NULL)
        MPX_CHECK(GK_E_OUT_OF_MEMORY);
    MPX_CHECK(gk_buffer_read(*x, 0, count * o->d, hx));
    MPX_CHECK(gk_buffer_read(*y, 0, count, hy));
    for (size_t i = 0; i < count; i++) {
        double x0, x1 = 0, noise;
        if (o->t == GK_FLOAT32) {
            x0 = ((float *)hx)[i * o->d];
            x1 = o->d > 1 ? ((float *)hx)[i * o->d + 1] : 0;
            noise = ((float *)hy)[i];
        } else {
            x0 = ((double *)hx)[i * o->d];
            x1 = o->d > 1 ? ((double *)hx)[i * o->d + 1] : 0;
            noise = ((double *)hy)[i];
        }
        double v = sin(2 * KR_PI * x0) + (o->d > 1 ? cos(KR_PI * x1) : 0) + noise;
        if (o->t == GK_FLOAT32)
            ((float *)hy)[i] = (float)v;
        else
            ((double *)hy)[i] = v;
    }
    MPX_CHECK(gk_buffer_write(*y, 0, count, hy));
    free(hx);
    free(hy);
}

/* Sum over ranks of this rank's dot product. */
static double dot(gk_context *ctx, MPI_Comm comm, const gk_buffer *a, const gk_buffer *b)
{
    double local = 0, global = 0;
    MPX_CHECK(gk_dot(ctx, a, b, &local));
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm);
    return global;
}

typedef struct system {
    gk_context *ctx;
    MPI_Comm comm;
    int single; /* the one-process check: gk_rbf_matvec itself, no MPI */
    size_t rows, d;
    double gamma, lambda;
    const gk_buffer *x;
} system_t;

/* q = (K + lambda I) p for the rows this rank holds. */
static gk_status product(system_t *s, const gk_buffer *p, gk_buffer *q)
{
    gk_status st = s->single
                       ? gk_rbf_matvec(s->ctx, s->rows, s->rows, s->d, s->gamma, s->x, s->x, p, q)
                       : gk_mpi_rbf_matvec(s->ctx, s->comm, s->rows, s->rows, s->d, s->gamma, s->x,
                                           s->x, p, q);
    return st != GK_OK ? st : gk_axpy(s->ctx, s->lambda, p, q);
}

typedef struct cg_result {
    int iterations;
    double residual, seconds, product_seconds;
} cg_result;

/* Conjugate gradients from alpha = 0 until ||r|| <= tol ||y|| (relative residual). */
static cg_result cg(system_t *s, const options *o, const gk_buffer *y, gk_buffer *alpha)
{
    gk_context *ctx = s->ctx;
    gk_buffer *r = NULL, *p = NULL, *q = NULL;
    MPX_CHECK(gk_buffer_create(ctx, o->t, s->rows, &r));
    MPX_CHECK(gk_buffer_create(ctx, o->t, s->rows, &p));
    MPX_CHECK(gk_buffer_create(ctx, o->t, s->rows, &q));
    MPX_CHECK(gk_fill(ctx, 0.0, alpha));
    MPX_CHECK(gk_copy(ctx, y, r));
    MPX_CHECK(gk_copy(ctx, y, p));
    double rs = dot(ctx, s->comm, r, r), bnorm = sqrt(rs);
    cg_result res = {0, 1.0, 0, 0};
    double t0 = mpx_now();
    while (res.iterations < o->max_iter && sqrt(rs) > o->tol * bnorm) {
        double tp = mpx_now();
        MPX_CHECK(product(s, p, q));
        MPX_CHECK(gk_context_synchronize(ctx));
        res.product_seconds += mpx_now() - tp;
        double a = rs / dot(ctx, s->comm, p, q);
        MPX_CHECK(gk_axpy(ctx, a, p, alpha));
        MPX_CHECK(gk_axpy(ctx, -a, q, r));
        double rs_new = dot(ctx, s->comm, r, r);
        MPX_CHECK(gk_scale(ctx, rs_new / rs, p));
        MPX_CHECK(gk_axpy(ctx, 1.0, r, p));
        rs = rs_new;
        res.iterations++;
    }
    MPX_CHECK(gk_context_synchronize(ctx));
    res.seconds = mpx_now() - t0;
    res.residual = bnorm > 0 ? sqrt(rs) / bnorm : 0;
    gk_buffer_destroy(r);
    gk_buffer_destroy(p);
    gk_buffer_destroy(q);
    return res;
}

/* --check: rank 0 solves the whole problem in one process with the same CG and compares. */
static int check(const options *o, gk_context *ctx, const gk_buffer *alpha, size_t count)
{
    size_t es = o->t == GK_FLOAT32 ? 4 : 8;
    char *mine = malloc((count + 1) * es), *all = malloc((o->n + 1) * es);
    int *counts = malloc((size_t)size_ * sizeof *counts),
        *displs = malloc((size_t)size_ * sizeof *displs);
    if (!mine || !all || !counts || !displs)
        MPX_CHECK(GK_E_OUT_OF_MEMORY);
    MPX_CHECK(gk_buffer_read(alpha, 0, count, mine));
    for (int r = 0; r < size_; r++) {
        size_t f, c;
        share(o, r, &f, &c);
        counts[r] = (int)c;
        displs[r] = (int)f;
    }
    MPI_Datatype mt = o->t == GK_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
    MPI_Gatherv(mine, (int)count, mt, all, counts, displs, mt, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (rank_ == 0) {
        gk_buffer *x = NULL, *y = NULL, *single = NULL;
        make_data(ctx, o, 0, o->n, &x, &y);
        MPX_CHECK(gk_buffer_create(ctx, o->t, o->n, &single));
        system_t s = {ctx, MPI_COMM_SELF, 1, o->n, o->d, o->gamma, o->lambda, x};
        cg_result r = cg(&s, o, y, single);
        double *a = malloc(o->n * sizeof *a), *b = malloc(o->n * sizeof *b);
        char *raw = malloc(o->n * es);
        MPX_CHECK(gk_buffer_read(single, 0, o->n, raw));
        double diff = 0, norm = 0;
        for (size_t i = 0; i < o->n; i++) {
            a[i] = o->t == GK_FLOAT32 ? ((float *)all)[i] : ((double *)all)[i];
            b[i] = o->t == GK_FLOAT32 ? ((float *)raw)[i] : ((double *)raw)[i];
            diff += (a[i] - b[i]) * (a[i] - b[i]);
            norm += b[i] * b[i];
        }
        double rel = sqrt(diff / (norm > 0 ? norm : 1));
        /* Both solves stop at a relative residual of tol; their solutions then differ by at
         * most about cond(K + lambda I) * tol, cond <= (n + lambda) / lambda. */
        double bound = 10 * o->tol * ((double)o->n + o->lambda) / o->lambda;
        if (o->t == GK_FLOAT32 && bound < 1e-3)
            bound = 1e-3;
        ok = rel <= bound;
        printf("check: one process took %d iterations (residual %.3g); |alpha - alpha_1| / "
               "|alpha_1| = %.3g (bound %.3g): %s\n",
               r.iterations, r.residual, rel, bound, ok ? "OK" : "FAILED");
        free(a);
        free(b);
        free(raw);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(single);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(mine);
    free(all);
    free(counts);
    free(displs);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    options o = parse(argc, argv);
    gk_context *ctx = mpx_open_context(o.backend, 0);
    size_t first, count;
    share(&o, rank_, &first, &count);
    gk_buffer *x = NULL, *y = NULL, *alpha = NULL;
    make_data(ctx, &o, first, count, &x, &y);
    MPX_CHECK(gk_buffer_create(ctx, o.t, count, &alpha));
    if (rank_ == 0)
        printf("kernel ridge regression: n = %zu points, d = %zu, gamma = %g, lambda = %g, %s, "
               "%d rank(s), %s (CUDA-aware MPI: %s)\n",
               o.n, o.d, o.gamma, o.lambda, o.t == GK_FLOAT32 ? "float32" : "float64", size_,
               gk_context_device_name(ctx), gk_mpi_cuda_aware() ? "yes" : "no");

    system_t s = {ctx, MPI_COMM_WORLD, 0, count, o.d, o.gamma, o.lambda, x};
    MPI_Barrier(MPI_COMM_WORLD);
    cg_result r = cg(&s, &o, y, alpha);
    double slowest = 0;
    MPI_Reduce(&r.seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank_ == 0)
        printf("CG: %d iterations, relative residual %.3g (tol %.3g), %.4f s per iteration "
               "(%.4f s of it the product), %.3f s in all\n",
               r.iterations, r.residual, o.tol, slowest / (r.iterations ? r.iterations : 1),
               r.product_seconds / (r.iterations ? r.iterations : 1), slowest);
    int ok = r.residual <= o.tol;
    if (!ok && rank_ == 0)
        printf("CG did not reach the tolerance in %d iterations\n", o.max_iter);
    if (ok && o.check)
        ok = check(&o, ctx, alpha, count);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(alpha);
    gk_context_destroy(ctx);
    MPI_Finalize();
    return ok ? 0 : 1;
}
