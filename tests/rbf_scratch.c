/* SPDX-License-Identifier: MIT */
/* rbf_scratch.c - rbf_matrix and rbf_matvec on very wide rows stay within a memory limit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpukern.h"

/* Issue 12, case 9: m = n = 1 and d = 2^24 float32 (64 MiB per row) made 1.1.0 allocate a
 * packed block of 32 rows of y, 2 GiB. Scratch must be bounded by a tile, not by d. The check
 * runs in a child whose address space is limited to what it has mapped now, plus the inputs,
 * plus GK_SLACK: any scratch that grows with d fails there with GK_E_OUT_OF_MEMORY. A child,
 * since a limit cannot be lifted again; not run under sanitizers or valgrind (their own
 * mappings do not fit such a limit), hence not named test_*. */
#define GK_D ((size_t)1 << 24)
#define GK_SLACK ((rlim_t)256 << 20)

static rlim_t mapped_now(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f == NULL || fscanf(f, "%lu", &pages) != 1)
        pages = 0;
    if (f != NULL)
        fclose(f);
    return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
}

static int fail(const char *what, gk_status s)
{
    fprintf(stderr, "rbf_scratch: %s: %s: %s\n", what, gk_status_string(s), gk_last_error());
    return 1;
}

/* One dtype: x_f = 0, y_f = 2^-12, so ||x - y||^2 = d 2^-24 = 1 and with gamma = 1 both
 * results are exp(-1). Inputs are wrapped host memory, so no copy is made either. */
static int run(gk_dtype t)
{
    size_t es = t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
    size_t d = t == GK_FLOAT32 ? GK_D : GK_D / 2; /* 64 MiB rows for both */
    double yv = t == GK_FLOAT32 ? 0x1p-12 : sqrt(1.0 / (double)d);
    void *x = calloc(d, es), *y = malloc(d * es);
    double out[2] = {0, 0}, w[1] = {1.0};
    float outf[2] = {0, 0}, wf[1] = {1.0f};
    if (x == NULL || y == NULL) {
        fprintf(stderr, "rbf_scratch: cannot allocate the inputs\n");
        return 1;
    }
    for (size_t f = 0; f < d; f++) {
        if (t == GK_FLOAT32)
            ((float *)y)[f] = (float)yv;
        else
            ((double *)y)[f] = yv;
    }
    gk_context *ctx = NULL;
    gk_buffer *bx = NULL, *by = NULL, *bk = NULL, *bw = NULL, *bo = NULL;
    gk_status s = gk_context_create(GK_BACKEND_CPU, &ctx);
    if (s != GK_OK)
        return fail("gk_context_create", s);
    void *k = t == GK_FLOAT32 ? (void *)outf : (void *)out;
    void *wp = t == GK_FLOAT32 ? (void *)wf : (void *)w;
    void *o = t == GK_FLOAT32 ? (void *)(outf + 1) : (void *)(out + 1);
    if ((s = gk_buffer_wrap_host(ctx, t, d, x, &bx)) != GK_OK ||
        (s = gk_buffer_wrap_host(ctx, t, d, y, &by)) != GK_OK ||
        (s = gk_buffer_wrap_host(ctx, t, 1, k, &bk)) != GK_OK ||
        (s = gk_buffer_wrap_host(ctx, t, 1, wp, &bw)) != GK_OK ||
        (s = gk_buffer_wrap_host(ctx, t, 1, o, &bo)) != GK_OK)
        return fail("gk_buffer_wrap_host", s);
    struct rlimit lim = {mapped_now() + GK_SLACK, RLIM_INFINITY};
    if (setrlimit(RLIMIT_AS, &lim) != 0) {
        perror("rbf_scratch: setrlimit");
        return 77;
    }
    if ((s = gk_rbf_matrix(ctx, 1, 1, d, 1.0, bx, by, bk)) != GK_OK)
        return fail("gk_rbf_matrix, m = n = 1, rows of 64 MiB", s);
    if ((s = gk_rbf_matvec(ctx, 1, 1, d, 1.0, bx, by, bw, bo)) != GK_OK)
        return fail("gk_rbf_matvec, m = n = 1, rows of 64 MiB", s);
    double got[2] = {t == GK_FLOAT32 ? outf[0] : out[0], t == GK_FLOAT32 ? outf[1] : out[1]};
    double tol = t == GK_FLOAT32 ? 1e-5 : 1e-12;
    for (int i = 0; i < 2; i++)
        if (!(fabs(got[i] - exp(-1.0)) <= tol)) {
            fprintf(stderr, "rbf_scratch: %s gives %.17g, expected exp(-1) = %.17g\n",
                    i == 0 ? "gk_rbf_matrix" : "gk_rbf_matvec", got[i], exp(-1.0));
            return 1;
        }
    printf("rbf_scratch: %s: rbf_matrix and rbf_matvec on 1 x 1 x %zu within %llu MiB of new "
           "mappings\n",
           t == GK_FLOAT32 ? "float32" : "float64", d, (unsigned long long)(GK_SLACK >> 20));
    gk_buffer_destroy(bx);
    gk_buffer_destroy(by);
    gk_buffer_destroy(bk);
    gk_buffer_destroy(bw);
    gk_buffer_destroy(bo);
    gk_context_destroy(ctx);
    free(x);
    free(y);
    return 0;
}

int main(void)
{
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            perror("rbf_scratch: fork");
            return 1;
        }
        if (pid == 0) {
            int r = run(i == 0 ? GK_FLOAT32 : GK_FLOAT64);
            fflush(NULL);
            _exit(r);
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
            return 1;
        rc = WEXITSTATUS(st);
    }
    return rc;
}
