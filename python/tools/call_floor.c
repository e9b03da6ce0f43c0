/* SPDX-License-Identifier: MIT */
/* call_floor.c - what ctx.exp(ndarray) asks of libgpukern (wrap x2, gk_exp, destroy x2) timed
 * from C, the floor any binding approaches (bench/results/py-overhead-2026-12-06.md).
 * cc -O2 -Iinclude -I<build>/include python/tools/call_floor.c -L<build>/lib -lgpukern */
#include <gpukern.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void)
{
    enum { N = 16, CALLS = 20000, RUNS = 30 };
    gk_context *c;
    if (gk_context_create(GK_BACKEND_CPU, &c) != GK_OK)
        return 1;
    float x[N], o[N];
    for (int i = 0; i < N; i++)
        x[i] = 1.0f;
    double best = 1e9, best_exp = 1e9;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        for (int i = 0; i < CALLS; i++) {
            gk_buffer *hx, *ho;
            gk_buffer_wrap_host(c, GK_FLOAT32, N, x, &hx);
            gk_buffer_wrap_host(c, GK_FLOAT32, N, o, &ho);
            gk_exp(c, hx, ho);
            gk_buffer_destroy(hx);
            gk_buffer_destroy(ho);
        }
        double t = (now() - t0) / CALLS;
        best = t < best ? t : best;
        gk_buffer *hx, *ho;
        gk_buffer_wrap_host(c, GK_FLOAT32, N, x, &hx);
        gk_buffer_wrap_host(c, GK_FLOAT32, N, o, &ho);
        t0 = now();
        for (int i = 0; i < CALLS; i++)
            gk_exp(c, hx, ho);
        t = (now() - t0) / CALLS;
        best_exp = t < best_exp ? t : best_exp;
        gk_buffer_destroy(hx);
        gk_buffer_destroy(ho);
    }
    printf("C: wrap x2 + gk_exp + destroy x2: %.3f us; gk_exp alone %.3f us\n", best * 1e6,
           best_exp * 1e6);
    gk_context_destroy(c);
    return 0;
}
