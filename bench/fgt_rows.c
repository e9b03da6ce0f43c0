/* SPDX-License-Identifier: MIT */
/* fgt_rows.c - times float32 rbf_matvec at d = 3 on the fast Gauss transform's rows (docs/fgt.md):
 * the form the planner ran, the median of --reps calls, 16 rows checked against a direct sum.
 * With --cols R > 1: kernel_matmul (Gaussian kernel) of R columns of weights, beside R separate
 * rbf_matvec calls, one a column. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

enum { D = 3, CHECKED_ROWS = 16, MEDIAN_PAIRS = 2001 };

typedef enum data_kind { DATA_UNIFORM, DATA_NORMAL, DATA_CLUSTERS } data_kind;

/* The rows: U[0,1) at 0.5; N(0,1) at 1/d and at 1/median of |x - y|^2; 50 clusters, centres
 * U[-10, 10)^3, spread 0.5, at 2 and at 1/d. */
static const struct row {
    data_kind kind;
    double gamma; /* 0: 1/median */
    const char *name;
} rows[] = {{DATA_UNIFORM, 0.5, "U[0,1), gamma 0.5"},
            {DATA_NORMAL, 1.0 / 3, "N(0,1), gamma 1/d"},
            {DATA_NORMAL, 0.0, "N(0,1), gamma 1/median"},
            {DATA_CLUSTERS, 2.0, "50 clusters, gamma 2"},
            {DATA_CLUSTERS, 1.0 / 3, "50 clusters, gamma 1/d"}};

static uint64_t rng_state;

/* splitmix64: a fresh stream per --seed, so a row's data can be made again. */
static double uniform(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

static double normal(void)
{
    double u = 1.0 - uniform(), v = uniform();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* m + n rows of D features of kind k: x's rows, then y's (malloc'ed). */
static float *make_points(data_kind k, size_t rows_total)
{
    float *h = gkx_malloc(rows_total * D * sizeof *h);
    double centres[50][D];
    for (int c = 0; c < 50; c++)
        for (int f = 0; f < D; f++)
            centres[c][f] = -10.0 + 20.0 * uniform();
    for (size_t r = 0; r < rows_total; r++) {
        int c = (int)(uniform() * 50);
        for (int f = 0; f < D; f++)
            h[r * D + f] = (float)(k == DATA_UNIFORM  ? uniform()
                                   : k == DATA_NORMAL ? normal()
                                                      : centres[c][f] + 0.5 * normal());
    }
    return h;
}

/* 1 / the median of |x_i - y_j|^2 over MEDIAN_PAIRS random pairs. */
static double median_gamma(const float *x, size_t m, const float *y, size_t n)
{
    double dist[MEDIAN_PAIRS];
    for (int k = 0; k < MEDIAN_PAIRS; k++) {
        size_t i = (size_t)(uniform() * (double)m), j = (size_t)(uniform() * (double)n);
        dist[k] = 0.0;
        for (int f = 0; f < D; f++) {
            double z = (double)x[i * D + f] - y[j * D + f];
            dist[k] += z * z;
        }
    }
    return 1.0 / gkx_median(dist, MEDIAN_PAIRS);
}

/* The largest error of CHECKED_ROWS rows of out (m x cols), spread over m, against the long
 * double direct sum, over the contract's bound 1e-5 sum |w_c| of its column (w: n x cols): at
 * most 1 keeps the contract. */
static double checked_error(const float *x, size_t m, const float *y, size_t n, const float *w,
                            size_t cols, double gamma, const float *out)
{
    long double g = (float)gamma, worst = 0;
    size_t step = m > CHECKED_ROWS ? m / CHECKED_ROWS : 1;
    for (size_t c = 0; c < cols; c++) {
        long double wsum = 0;
        for (size_t j = 0; j < n; j++)
            wsum += fabsl((long double)w[j * cols + c]);
        for (size_t i = 0; i < m; i += step) {
            long double sum = 0;
            for (size_t j = 0; j < n; j++) {
                long double dist = 0;
                for (int f = 0; f < D; f++) {
                    long double z = (long double)x[i * D + f] - y[j * D + f];
                    dist += z * z;
                }
                sum += expl(-g * dist) * w[j * cols + c];
            }
            long double err = fabsl((long double)out[i * cols + c] - sum) / (1e-5L * wsum);
            worst = isnan(err) || err > worst ? err : worst;
        }
    }
    return (double)worst;
}

/* A context of backend be whose rbf calls log their form (GK_LOG=1), with GK_RBF_FORM=form
 * (NULL: the planner's choice); the environment is put back afterwards. */
static gk_context *logging_context(gk_backend be, const char *form)
{
    const char *vars[2] = {"GK_LOG", "GK_RBF_FORM"}, *values[2] = {"1", form};
    char *old[2];
    for (int v = 0; v < 2; v++) {
        const char *was = getenv(vars[v]);
        old[v] = was != NULL ? strdup(was) : NULL;
        if (values[v] != NULL)
            setenv(vars[v], values[v], 1);
        else
            unsetenv(vars[v]);
    }
    gk_context *ctx = NULL;
    GKX_CHECK(gkx_open(be, 0, 0, &ctx));
    for (int v = 0; v < 2; v++) {
        if (old[v] != NULL)
            setenv(vars[v], old[v], 1);
        else
            unsetenv(vars[v]);
        free(old[v]);
    }
    return ctx;
}

/* One call: rbf_matvec (cols 1) or kernel_matmul of cols columns (w n x cols, out m x cols). */
static gk_status call(gk_context *ctx, size_t m, size_t n, size_t cols, double gamma, gk_buffer *x,
                      gk_buffer *y, gk_buffer *w, gk_buffer *out)
{
    if (cols == 1)
        return gk_rbf_matvec(ctx, m, n, D, gamma, x, y, w, out);
    gk_kernel k;
    gk_kernel_init(&k, GK_KERNEL_RBF);
    k.gamma = gamma;
    return gk_kernel_matmul(ctx, &k, m, n, D, cols, x, y, w, out);
}

/* Runs one call with stderr sent to a temporary file, then echoes what the call logged and
 * copies into form (size bytes) the form its "gpukern: <op>: form <name>" line names. */
static void call_logging_form(gk_context *ctx, size_t m, size_t n, size_t cols, double gamma,
                              gk_buffer *x, gk_buffer *y, gk_buffer *w, gk_buffer *out, char *form,
                              size_t size)
{
    const char *prefix = cols == 1 ? "gpukern: rbf_matvec: form " : "gpukern: kernel_matmul: form ";
    size_t plen = strlen(prefix);
    fflush(stderr);
    FILE *log = tmpfile();
    int saved = dup(STDERR_FILENO);
    if (log == NULL || saved < 0 || dup2(fileno(log), STDERR_FILENO) < 0) {
        perror("fgt_rows: capturing the log");
        exit(EXIT_FAILURE);
    }
    gk_status st = call(ctx, m, n, cols, gamma, x, y, w, out);
    if (st == GK_OK)
        st = gk_context_synchronize(ctx);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    GKX_CHECK(st);
    snprintf(form, size, "?");
    char line[1024];
    rewind(log);
    while (fgets(line, sizeof line, log) != NULL) {
        fputs(line, stderr);
        if (strncmp(line, prefix, plen) == 0)
            snprintf(form, size, "%.*s", (int)strcspn(line + plen, " (\n"), line + plen);
    }
    fclose(log);
}

/* The median of reps timed calls (after one untimed where reps > 1: a single call, as for
 * direct summation at the size, is timed alone), in ms; the last call's form in form. */
enum { MAX_REPS = 9 };
static double time_calls(gk_context *ctx, size_t m, size_t n, size_t cols, double gamma,
                         gk_buffer *x, gk_buffer *y, gk_buffer *w, gk_buffer *out, int reps,
                         char *form, size_t size)
{
    double t[MAX_REPS];
    if (reps > 1) {
        GKX_CHECK(call(ctx, m, n, cols, gamma, x, y, w, out));
        GKX_CHECK(gk_context_synchronize(ctx));
    }
    for (int k = 0; k < reps; k++) {
        double t0 = gkx_now();
        if (k == reps - 1) {
            call_logging_form(ctx, m, n, cols, gamma, x, y, w, out, form, size);
        } else {
            GKX_CHECK(call(ctx, m, n, cols, gamma, x, y, w, out));
            GKX_CHECK(gk_context_synchronize(ctx));
        }
        t[k] = (gkx_now() - t0) * 1e3;
    }
    return gkx_median(t, reps);
}

/* x (m rows, then y's n) and w (n x cols) in buffers of ctx, timed; out (m x cols) read back
 * into host_out. */
static double time_on(gk_context *ctx, const float *h, size_t m, size_t n, size_t cols,
                      const float *hw, double gamma, int reps, char *form, size_t size,
                      float *host_out)
{
    gk_buffer *x, *y, *w, *out;
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, m * D, &x));
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, n * D, &y));
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, n * cols, &w));
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, m * cols, &out));
    GKX_CHECK(gk_buffer_write(x, 0, m * D, h));
    GKX_CHECK(gk_buffer_write(y, 0, n * D, h + m * D));
    GKX_CHECK(gk_buffer_write(w, 0, n * cols, hw));
    double ms = time_calls(ctx, m, n, cols, gamma, x, y, w, out, reps, form, size);
    GKX_CHECK(gk_buffer_read(out, 0, m * cols, host_out));
    gk_buffer_destroy(out);
    gk_buffer_destroy(w);
    gk_buffer_destroy(y);
    gk_buffer_destroy(x);
    return ms;
}

int main(int argc, char **argv)
{
    size_t n = 1000000;
    int direct = 0, seed = 1, reps = 3, only = 0, ncols = 1;
    unsigned mask = GKX_ALL;
    const gkx_flag flags[] = {
        {"--rows", GKX_SIZE, &n, "points in x and in y (default 1e6, the issue's size)"},
        {"--backend", GKX_BACKENDS, &mask, "cpu, cuda or all (default: all there are)"},
        {"--direct", GKX_SWITCH, &direct,
         "also time direct summation (the CPU's form diff, CUDA's cuda_matvec_fact)"},
        {"--seed", GKX_INT, &seed, "seed of the data (default 1)"},
        {"--reps", GKX_INT, &reps, "timed calls a form and row, 1 to 9 (default 3)"},
        {"--row", GKX_INT, &only, "only this row, 1 to 5 (default 0: all)"},
        {"--cols", GKX_INT, &ncols,
         "columns of weights, 1 to 64 (default 1: rbf_matvec); more: kernel_matmul beside as many "
         "rbf_matvec calls (--direct: kernel_matmul by direct summation, GK_RBF_FORM=diff)"},
    };
    gkx_parse_flags(argc, argv,
                    "Times float32 rbf_matvec, m = n = rows, d = 3, on the fast Gauss transform's "
                    "rows (docs/fgt.md).",
                    flags, (int)(sizeof flags / sizeof flags[0]));
    const int nrows = (int)(sizeof rows / sizeof rows[0]);
    if (n == 0 || reps < 1 || reps > MAX_REPS || only < 0 || only > nrows || ncols < 1 ||
        ncols > 64) {
        fprintf(stderr,
                "fgt_rows: --rows must be at least 1 (got %zu), --reps 1 to %d (got %d), "
                "--row 0 to %d (got %d), --cols 1 to 64 (got %d)\n",
                n, MAX_REPS, reps, nrows, only, ncols);
        return 2;
    }
    const size_t cols = (size_t)ncols;
    const size_t m = n;
    gk_backend be[2];
    int nb = gkx_backends(mask, be), failed = 0;
    printf("fgt_rows: float32 %zux%zux%d, seed %d, median of %d call%s%s\n", m, n, D, seed, reps,
           reps > 1 ? "s" : "", reps > 1 ? " after one untimed" : "");
    for (int b = 0; b < nb; b++) {
        int cuda = be[b] == GK_BACKEND_CUDA;
        gk_context *ctx = logging_context(be[b], NULL);
        gk_context *dctx =
            direct ? logging_context(be[b], cuda ? "cuda_matvec_fact" : "diff") : NULL;
        for (int c = 0; c < nrows; c++) {
            if (only != 0 && c != only - 1)
                continue;
            rng_state = (uint64_t)seed * 1000 + c;
            float *h = make_points(rows[c].kind, m + n);
            float *hw = gkx_malloc(n * cols * sizeof *hw),
                  *got = gkx_malloc(m * cols * sizeof *got);
            for (size_t j = 0; j < n * cols; j++)
                hw[j] = (float)(2.0 * uniform() - 1.0);
            double gamma = rows[c].gamma > 0.0 ? rows[c].gamma : median_gamma(h, m, h + m * D, n);
            char form[64], dform[64] = "-";
            double ms = time_on(ctx, h, m, n, cols, hw, gamma, reps, form, sizeof form, got);
            double err = checked_error(h, m, h + m * D, n, hw, cols, gamma, got), dms = 0.0;
            if (direct)
                dms = time_on(dctx, h, m, n, cols, hw, gamma, reps, dform, sizeof dform, got);
            if (cols == 1) {
                printf("fgt timing, %s float32 %zux%zux3, %s (gamma %.4g): %s %.2f ms; direct (%s) "
                       "%.2f ms; x%.1f\n",
                       cuda ? "cuda" : "cpu", m, n, rows[c].name, gamma, form, ms, dform, dms,
                       dms > 0.0 ? dms / ms : 0.0);
            } else {
                /* the same columns, one rbf_matvec each: the sum of their medians */
                float *col = gkx_malloc(n * sizeof *col);
                char sform[64];
                double sms = 0.0;
                for (size_t k = 0; k < cols; k++) {
                    for (size_t j = 0; j < n; j++)
                        col[j] = hw[j * cols + k];
                    sms += time_on(ctx, h, m, n, 1, col, gamma, reps, sform, sizeof sform, got);
                }
                free(col);
                printf("fgt columns, %s float32 %zux%zux3, %zu columns, %s (gamma %.4g): "
                       "kernel_matmul %s %.2f ms (%.2f ms a column); %zu rbf_matvec calls (%s) "
                       "%.2f ms; x%.2f; direct kernel_matmul (%s) %.2f ms\n",
                       cuda ? "cuda" : "cpu", m, n, cols, rows[c].name, gamma, form, ms,
                       ms / (double)cols, cols, sform, sms, sms / ms, dform, dms);
            }
            fflush(stdout);
            if (!(err <= 1.0)) {
                printf("  FAILED: %d rows against the direct sum: error %.3g x the contract's "
                       "1e-5 sum |w| (of its column)\n",
                       CHECKED_ROWS, err);
                failed = 1;
            }
            free(got);
            free(hw);
            free(h);
        }
        gk_context_destroy(dctx);
        gk_context_destroy(ctx);
    }
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
