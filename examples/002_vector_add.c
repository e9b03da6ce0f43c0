/* SPDX-License-Identifier: MIT */
/* 002_vector_add.c - the vector add (c = a + b) of article 002's PyCUDA example, with gk_add,
 * timed per backend. */
#include "common.h"

/* One backend's run: times gk_add on the backend's own buffers and on wrapped host arrays
 * (what PyCUDA's memcpy_htod / kernel / memcpy_dtoh in the article amounts to), checks the
 * result, and leaves it in out[] so backends can be compared bit for bit. */
static void run_backend(gk_backend be, size_t n, int reps, float *hx, float *hy, float *out,
                        double times[2])
{
    gk_context *ctx = NULL;
    GKX_CHECK(gk_context_create(be, &ctx));
    printf("\n[%s] device: %s\n", gkx_backend_name(be), gk_context_device_name(ctx));

    gk_buffer *x = NULL, *y = NULL, *z = NULL;
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, n, &x));
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, n, &y));
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, n, &z));
    /* Same seeds on every backend give the same numbers (the stream is part of the API). */
    GKX_CHECK(gk_rng_uniform(ctx, 1, 0, x));
    GKX_CHECK(gk_rng_uniform(ctx, 2, 0, y));

    double *t = gkx_malloc((size_t)reps * sizeof *t);
    GKX_CHECK(gk_add(ctx, x, y, z)); /* warm-up: first-touch pages, kernel loading */
    GKX_CHECK(gk_context_synchronize(ctx));
    for (int r = 0; r < reps; r++) {
        double t0 = gkx_now();
        GKX_CHECK(gk_add(ctx, x, y, z));
        GKX_CHECK(gk_context_synchronize(ctx));
        t[r] = gkx_now() - t0;
    }
    double dev_s = gkx_median(t, reps);

    GKX_CHECK(gk_buffer_read(x, 0, n, hx));
    GKX_CHECK(gk_buffer_read(y, 0, n, hy));
    GKX_CHECK(gk_buffer_read(z, 0, n, out));
    for (size_t i = 0; i < n; i++) {
        float want = hx[i] + hy[i]; /* one correctly rounded float add, as the contract says */
        if (out[i] != want) {
            fprintf(stderr, "[%s] wrong result: z[%zu] = %.9g, expected %.9g\n",
                    gkx_backend_name(be), i, (double)out[i], (double)want);
            exit(EXIT_FAILURE);
        }
    }

    /* Host-resident operands: on CUDA every call uploads x and y and downloads z. */
    float *hz = gkx_malloc(n * sizeof *hz);
    gk_buffer *wx = NULL, *wy = NULL, *wz = NULL;
    GKX_CHECK(gk_buffer_wrap_host(ctx, GK_FLOAT32, n, hx, &wx));
    GKX_CHECK(gk_buffer_wrap_host(ctx, GK_FLOAT32, n, hy, &wy));
    GKX_CHECK(gk_buffer_wrap_host(ctx, GK_FLOAT32, n, hz, &wz));
    GKX_CHECK(gk_add(ctx, wx, wy, wz));
    for (int r = 0; r < reps; r++) {
        double t0 = gkx_now();
        GKX_CHECK(gk_add(ctx, wx, wy, wz));
        GKX_CHECK(gk_context_synchronize(ctx));
        t[r] = gkx_now() - t0;
    }
    double host_s = gkx_median(t, reps);
    if (memcmp(hz, out, n * sizeof *hz) != 0) {
        fprintf(stderr, "[%s] host-data result differs from device-data result\n",
                gkx_backend_name(be));
        exit(EXIT_FAILURE);
    }

    printf("  gk_add, %zu float32, backend buffers: %9.3f ms  (%7.1f GB/s, counting 3 x %zu B)\n",
           n, 1e3 * dev_s, 3.0 * (double)n * sizeof(float) / dev_s * 1e-9, n * sizeof(float));
    printf("  gk_add, %zu float32, host arrays:     %9.3f ms  (includes any transfers)\n", n,
           1e3 * host_s);
    times[0] = dev_s;
    times[1] = host_s;

    gk_buffer_destroy(wx);
    gk_buffer_destroy(wy);
    gk_buffer_destroy(wz);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(z);
    gk_context_destroy(ctx);
    free(hz);
    free(t);
}

int main(int argc, char **argv)
{
    size_t n = 10000000;
    int reps = 10;
    unsigned mask = GKX_ALL;
    const gkx_flag flags[] = {
        {"--n", GKX_SIZE, &n, "number of float32 elements (default 1e7)"},
        {"--reps", GKX_INT, &reps, "timed repetitions, median reported (default 10)"},
        {"--backend", GKX_BACKENDS, &mask, "cpu | cuda | all (default all that are available)"},
    };
    gkx_parse_flags(argc, argv, "Vector add z = x + y with gk_add (article 002's PyCUDA kernel).",
                    flags, (int)(sizeof flags / sizeof flags[0]));
    if (reps < 1)
        reps = 1;

    printf("libgpukern %s: vector add of %zu float32 elements, median of %d runs\n",
           gk_version_string(), n, reps);
    gk_backend be[2];
    int nb = gkx_backends(mask, be);

    float *hx = gkx_malloc(n * sizeof *hx), *hy = gkx_malloc(n * sizeof *hy);
    float *res[2] = {gkx_malloc(n * sizeof(float)), nb > 1 ? gkx_malloc(n * sizeof(float)) : NULL};
    double times[2][2]; /* [backend][backend buffers, host arrays] */
    for (int i = 0; i < nb; i++)
        run_backend(be[i], n, reps, hx, hy, res[i], times[i]);
    if (nb > 1) {
        /* add is specified bit-identical across backends, inputs included (Philox). */
        if (memcmp(res[0], res[1], n * sizeof(float)) != 0) {
            fprintf(stderr, "CPU and CUDA results differ\n");
            return EXIT_FAILURE;
        }
        printf("\nCPU and CUDA results are bit-identical.\n");
    }
    char work[96];
    snprintf(work, sizeof work, "gk_add of %zu float32 on each backend's buffers", n);
    printf("\n");
    gkx_summary(work, gkx_backend_name(be[0]), times[0][0], nb > 1 ? gkx_backend_name(be[1]) : NULL,
                nb > 1 ? times[1][0] : 0);
    free(hx);
    free(hy);
    free(res[0]);
    free(res[1]);
    return EXIT_SUCCESS;
}
