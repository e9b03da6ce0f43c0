/* SPDX-License-Identifier: MIT */
/* 004_matmul.c - article 004's NumPy-against-CuPy workload, 5 x (x = rand(N, N) float64;
 * x @ x), per backend. */
#include "common.h"

/* Entries of the last product checked against a long double reference: checking all N^2 would
 * cost a CPU matmul of its own, and a wrong kernel is wrong in many places. */
#define CHECKED_ENTRIES 64

/* The article's matrix order (5 rounds of rand(5000, 5000) and x @ x). */
#define ARTICLE_N 5000

/* Checks C = X * X at CHECKED_ENTRIES positions spread over the matrix. The bound allows for
 * any summation order: n * eps(double) times the sum of |terms|, as BLAS error analysis gives. */
static int check_product(const double *x, const double *c, size_t n)
{
    for (size_t e = 0; e < CHECKED_ENTRIES; e++) {
        size_t i = (e * 7919u + 13u) % n, j = (e * 104729u + 5u) % n;
        long double ref = 0, mag = 0;
        for (size_t k = 0; k < n; k++) {
            long double t = (long double)x[i * n + k] * x[k * n + j];
            ref += t;
            mag += fabsl(t);
        }
        double tol = (double)n * 2.3e-16 * (double)mag;
        if (!(fabs(c[i * n + j] - (double)ref) <= tol)) {
            fprintf(stderr, "wrong product: C[%zu][%zu] = %.17g, expected %.17g (tol %.3g)\n", i, j,
                    c[i * n + j], (double)ref, tol);
            return 0;
        }
    }
    return 1;
}

/* Loads the backend's libraries and threads (cuBLAS handle, OpenBLAS pool) on a tiny product,
 * so round 1 measures the work and not one-time start-up. */
static void warm_up(gk_context *ctx)
{
    gk_buffer *a = NULL, *c = NULL;
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT64, 64 * 64, &a));
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT64, 64 * 64, &c));
    GKX_CHECK(gk_rng_uniform(ctx, 99, 0, a));
    GKX_CHECK(gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, 64, 64, 64, 1.0, a, 64, a, 64, 0.0, c, 64));
    GKX_CHECK(gk_context_synchronize(ctx));
    gk_buffer_destroy(a);
    gk_buffer_destroy(c);
}

/* Runs the rounds on one backend; returns the total seconds. */
static double run_backend(gk_backend be, size_t n, int rounds)
{
    gk_context *ctx = NULL;
    GKX_CHECK(gk_context_create(be, &ctx));
    printf("\n[%s] device: %s\n", gkx_backend_name(be), gk_context_device_name(ctx));
    warm_up(ctx);

    gk_buffer *x = NULL, *y = NULL;
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT64, n * n, &x));
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT64, n * n, &y));
    double flops = 2.0 * (double)n * (double)n * (double)n, total = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = gkx_now();
        /* A fresh matrix per round, as np.random.rand(N, N) in the article; seed = round. */
        GKX_CHECK(gk_rng_uniform(ctx, (uint64_t)r, 0, x));
        GKX_CHECK(gk_gemm(ctx, GK_NO_TRANS, GK_NO_TRANS, n, n, n, 1.0, x, n, x, n, 0.0, y, n));
        GKX_CHECK(gk_context_synchronize(ctx));
        double t = gkx_now() - t0;
        total += t;
        printf("  round %d: rand + x @ x  %10.2f ms  (%8.1f GFLOP/s incl. rand)\n", r + 1, 1e3 * t,
               flops / t * 1e-9);
    }
    printf("  total of %d rounds:      %10.2f ms\n", rounds, 1e3 * total);

    double *hx = gkx_malloc(n * n * sizeof *hx), *hy = gkx_malloc(n * n * sizeof *hy);
    GKX_CHECK(gk_buffer_read(x, 0, n * n, hx));
    GKX_CHECK(gk_buffer_read(y, 0, n * n, hy));
    if (!check_product(hx, hy, n)) {
        fprintf(stderr, "[%s] check failed\n", gkx_backend_name(be));
        exit(EXIT_FAILURE);
    }
    printf("  checked %d entries of the last product against long double: ok\n", CHECKED_ENTRIES);
    free(hx);
    free(hy);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_context_destroy(ctx);
    return total;
}

int main(int argc, char **argv)
{
    size_t n = ARTICLE_N;
    int rounds = 5, quick = 0;
    unsigned mask = GKX_ALL;
    const gkx_flag flags[] = {
        {"--size", GKX_SIZE, &n, "matrix order N (default 5000, the article's)"},
        {"--quick", GKX_SWITCH, &quick, "N = 1000: seconds instead of a minute on a small CPU"},
        {"--rounds", GKX_INT, &rounds, "rand + matmul rounds (default 5, as the article)"},
        {"--backend", GKX_BACKENDS, &mask, "cpu | cuda | all (default all that are available)"},
    };
    gkx_parse_flags(argc, argv,
                    "5 x (x = rand(N, N) float64; x @ x) with gk_rng_uniform and gk_gemm "
                    "(article 004: NumPy against CuPy at N = 5000).",
                    flags, (int)(sizeof flags / sizeof flags[0]));
    if (quick)
        n = 1000;
    if (n == 0 || n > 100000 || rounds < 1) {
        fprintf(stderr, "need 0 < --size <= 100000 and --rounds >= 1\n");
        return 2;
    }

    printf("libgpukern %s: %d x (rand %zux%zu float64; x @ x)\n", gk_version_string(), rounds, n,
           n);
    if (n != ARTICLE_N)
        printf("(N = %zu, not the article's %d%s)\n", n, ARTICLE_N, quick ? ": --quick" : "");
    gk_backend be[2];
    int nb = gkx_backends(mask, be);
    double total[2];
    for (int i = 0; i < nb; i++)
        total[i] = run_backend(be[i], n, rounds);
    printf("\n");
    for (int i = 0; i < nb; i++)
        printf("%-5s total %10.2f ms\n", gkx_backend_name(be[i]), 1e3 * total[i]);
    char work[96];
    snprintf(work, sizeof work, "%d x (rand %zu^2 float64; x @ x)%s", rounds, n,
             n == ARTICLE_N ? ", the article's size" : "");
    printf("\n");
    gkx_summary(work, gkx_backend_name(be[0]), total[0], nb > 1 ? gkx_backend_name(be[1]) : NULL,
                nb > 1 ? total[1] : 0);
    return EXIT_SUCCESS;
}
