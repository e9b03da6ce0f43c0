/* SPDX-License-Identifier: MIT */
/* 000_rbf_network.c - article 000 (PyCUDA against NumPy on a Jetson TX2, for an incremental RBF
 * network): the Gaussian kernel on 1000x20 rows, then a network whose number of centers grows,
 * each timed per backend: CPU, CUDA and AUTO, where the network lives in host arrays and AUTO
 * places each call on either. */
#include "common.h"

/* Part 1 is the article's measurement: K[i] = exp(-||A_i - B_i||^2) on 1000 x 20 float32. */
#define ROWS_N 1000
#define ROWS_D 20
#define ROWS_CALLS 100 /* calls per timed batch: one call is too short for the clock */

/* Opens a context on be. An AUTO context is calibrated first (timed), so that it places calls
 * on host arrays by measured costs; without a usable GPU it is the CPU backend alone. */
static gk_context *open_context(gk_backend be)
{
    gk_context *ctx = NULL;
    GKX_CHECK(gk_context_create(be, &ctx));
    printf("[%s] device: %s\n", gkx_backend_name(be), gk_context_device_name(ctx));
    if (be != GK_BACKEND_AUTO)
        return ctx;
    double t0 = gkx_now();
    GKX_CHECK(gk_context_calibrate(ctx, 0));
    if (gk_context_backend(ctx) == GK_BACKEND_CPU)
        printf("[auto] no usable GPU: AUTO is the CPU backend here (nothing to calibrate)\n");
    else
        printf("[auto] calibrated the placement model in %.2f s\n", gkx_now() - t0);
    return ctx;
}

/* ------------------------------------------------------------------------------------------
 * Part 1: gk_rbf_rows on the article's 1000 x 20 rows
 * ---------------------------------------------------------------------------------------- */

static void check_rows(const float *a, const float *b, const float *k, gk_backend be)
{
    for (size_t i = 0; i < ROWS_N; i++) {
        double s = 0;
        for (size_t j = 0; j < ROWS_D; j++) {
            double t = (double)a[i * ROWS_D + j] - b[i * ROWS_D + j];
            s += t * t;
        }
        if (!(fabs(k[i] - exp(-s)) <= 1e-5)) {
            fprintf(stderr, "[%s] gk_rbf_rows: K[%zu] = %.9g, expected %.9g\n",
                    gkx_backend_name(be), i, (double)k[i], exp(-s));
            exit(EXIT_FAILURE);
        }
    }
}

/* Times one call on backend buffers (batches of ROWS_CALLS, then a synchronize) and one call on
 * wrapped host arrays (the article's drv.In/drv.InOut: on CUDA that includes the copies; AUTO
 * runs it where its model predicts it finishes first). */
static void kernel_rows(gk_context *ctx, gk_backend be, int reps)
{
    gk_buffer *a = NULL, *b = NULL, *k = NULL, *wa = NULL, *wb = NULL, *wk = NULL;
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, ROWS_N * ROWS_D, &a));
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, ROWS_N * ROWS_D, &b));
    GKX_CHECK(gk_buffer_create(ctx, GK_FLOAT32, ROWS_N, &k));
    GKX_CHECK(gk_rng_uniform(ctx, 1, 0, a)); /* np.random.random((1000, 20)) */
    GKX_CHECK(gk_rng_uniform(ctx, 2, 0, b));

    double *t = gkx_malloc((size_t)reps * sizeof *t);
    GKX_CHECK(gk_rbf_rows(ctx, ROWS_N, ROWS_D, 1.0, a, b, k));
    GKX_CHECK(gk_context_synchronize(ctx));
    for (int r = 0; r < reps; r++) {
        double t0 = gkx_now();
        for (int c = 0; c < ROWS_CALLS; c++)
            GKX_CHECK(gk_rbf_rows(ctx, ROWS_N, ROWS_D, 1.0, a, b, k));
        GKX_CHECK(gk_context_synchronize(ctx));
        t[r] = (gkx_now() - t0) / ROWS_CALLS;
    }
    double dev_s = gkx_median(t, reps);

    float *ha = gkx_malloc(ROWS_N * ROWS_D * sizeof *ha);
    float *hb = gkx_malloc(ROWS_N * ROWS_D * sizeof *hb);
    float *hk = gkx_malloc(ROWS_N * sizeof *hk), *hk2 = gkx_malloc(ROWS_N * sizeof *hk2);
    GKX_CHECK(gk_buffer_read(a, 0, ROWS_N * ROWS_D, ha));
    GKX_CHECK(gk_buffer_read(b, 0, ROWS_N * ROWS_D, hb));
    GKX_CHECK(gk_buffer_read(k, 0, ROWS_N, hk));
    check_rows(ha, hb, hk, be);

    GKX_CHECK(gk_buffer_wrap_host(ctx, GK_FLOAT32, ROWS_N * ROWS_D, ha, &wa));
    GKX_CHECK(gk_buffer_wrap_host(ctx, GK_FLOAT32, ROWS_N * ROWS_D, hb, &wb));
    GKX_CHECK(gk_buffer_wrap_host(ctx, GK_FLOAT32, ROWS_N, hk2, &wk));
    for (int r = 0; r < reps; r++) {
        double t0 = gkx_now();
        GKX_CHECK(gk_rbf_rows(ctx, ROWS_N, ROWS_D, 1.0, wa, wb, wk));
        GKX_CHECK(gk_context_synchronize(ctx));
        t[r] = gkx_now() - t0;
    }
    double host_s = gkx_median(t, reps);
    check_rows(ha, hb, hk2, be);

    printf("  [%s] gk_rbf_rows %dx%d float32: %8.1f us on backend buffers, %8.1f us on host arrays",
           gkx_backend_name(be), ROWS_N, ROWS_D, 1e6 * dev_s, 1e6 * host_s);
    if (be == GK_BACKEND_AUTO)
        printf(" (AUTO ran it on %s)", gkx_backend_name(gk_context_last_backend(ctx)));
    printf("\n");
    gk_buffer_destroy(wa);
    gk_buffer_destroy(wb);
    gk_buffer_destroy(wk);
    gk_buffer_destroy(a);
    gk_buffer_destroy(b);
    gk_buffer_destroy(k);
    free(ha);
    free(hb);
    free(hk);
    free(hk2);
    free(t);
}

/* ------------------------------------------------------------------------------------------
 * Part 2: an incremental RBF network. Each iteration adds centers at the training samples the
 * network fits worst, recomputes the design matrix Phi (samples x centers) with gk_rbf_matrix,
 * refines the weights by least squares, and predicts a test set with gk_rbf_matvec.
 * ---------------------------------------------------------------------------------------- */

typedef struct net_config {
    size_t m, mt, d;          /* training samples, test samples, features */
    size_t start, step, nmax; /* first centers, centers added per iteration (0: double), cap */
    int cg_steps;             /* CGLS steps per iteration */
    double gamma, noise;
} net_config;

typedef struct iter_stat {
    size_t centers;
    double design_s, iter_s, train_rmse, test_rmse;
    int ran[2]; /* the iteration's library calls run on the CPU [0] and on CUDA [1] */
} iter_stat;

/* A training sample by the size of its residual. */
typedef struct ranked {
    float mag;
    size_t i;
} ranked;

#define NET_MAX_HOST 16 /* host arrays of a network: 13, and the training noise */

typedef struct net {
    const net_config *cfg;
    gk_context *ctx;
    int host;                      /* arrays in host memory, wrapped (AUTO places the calls) */
    float *host_mem[NET_MAX_HOST]; /* that memory, freed with the network */
    int nhost;
    int ran[2];                     /* calls run on the CPU and on CUDA, see NET_CALL */
    gk_buffer *x, *xt, *y, *yt;     /* training and test inputs and targets */
    gk_buffer *phi, *c, *w, *s, *p; /* design matrix, centers, weights, CGLS vectors */
    gk_buffer *r, *q, *pred, *diff; /* residual y - Phi w, Phi p, test prediction, error */
    float *hx, *hc, *hr;            /* host copies: inputs, centers, residual */
    unsigned char *used;            /* training samples already made centers */
    ranked *rank;                   /* scratch for choosing the next centers */
} net;

/* The function the network learns; smooth, with a few bumps over the unit cube. */
static double target(const float *x, size_t d)
{
    const double tau = 6.283185307179586;
    return sin(tau * x[0]) * cos(tau * x[d - 1]);
}

/* Checks a library call of the network, like GKX_CHECK, and counts the backend that ran it. */
#define NET_CALL(nt, call) net_call((nt), (call), #call, __FILE__, __LINE__)

static void net_call(net *nt, gk_status st, const char *what, const char *file, int line)
{
    gkx_check(st, what, file, line);
    nt->ran[gk_context_last_backend(nt->ctx) == GK_BACKEND_CUDA]++;
}

/* A float32 array of the network: backend memory, or in host mode caller memory wrapped with
 * gk_buffer_wrap_host, so that every call has host operands only and AUTO may place it. */
static gk_buffer *buffer(net *nt, size_t count)
{
    gk_buffer *b = NULL;
    if (!nt->host) {
        GKX_CHECK(gk_buffer_create(nt->ctx, GK_FLOAT32, count, &b));
        return b;
    }
    if (nt->nhost == NET_MAX_HOST) {
        fprintf(stderr, "more than %d host arrays\n", NET_MAX_HOST);
        exit(EXIT_FAILURE);
    }
    float *mem = gkx_malloc(count * sizeof *mem);
    nt->host_mem[nt->nhost++] = mem;
    GKX_CHECK(gk_buffer_wrap_host(nt->ctx, GK_FLOAT32, count, mem, &b));
    return b;
}

/* Element-wise ops need equal counts, so the first n weights are addressed through a view. */
static gk_buffer *view(gk_buffer *parent, size_t offset, size_t count)
{
    gk_buffer *v = NULL;
    GKX_CHECK(gk_buffer_view(parent, offset, count, &v));
    return v;
}

/* Targets on the host (sin and cos of the inputs), uploaded, plus normal noise for training. */
static void make_targets(net *nt, gk_buffer *x, gk_buffer *y, size_t m, double noise)
{
    const size_t d = nt->cfg->d;
    float *hx = gkx_malloc(m * d * sizeof *hx), *hy = gkx_malloc(m * sizeof *hy);
    GKX_CHECK(gk_buffer_read(x, 0, m * d, hx));
    for (size_t i = 0; i < m; i++)
        hy[i] = (float)target(hx + i * d, d);
    GKX_CHECK(gk_buffer_write(y, 0, m, hy));
    if (noise > 0) {
        gk_buffer *e = buffer(nt, m);
        NET_CALL(nt, gk_rng_normal(nt->ctx, 12, 0, 0.0, noise, e));
        NET_CALL(nt, gk_add(nt->ctx, y, e, y));
        gk_buffer_destroy(e);
    }
    free(hx);
    free(hy);
}

/* A network on ctx; host: its arrays in host memory (for AUTO), else in the backend's. */
static void net_create(net *nt, gk_context *ctx, int host, const net_config *cfg)
{
    memset(nt, 0, sizeof *nt);
    nt->cfg = cfg;
    nt->ctx = ctx;
    nt->host = host;
    size_t m = cfg->m, d = cfg->d;
    nt->x = buffer(nt, m * d);
    nt->xt = buffer(nt, cfg->mt * d);
    nt->y = buffer(nt, m);
    nt->yt = buffer(nt, cfg->mt);
    nt->phi = buffer(nt, m * cfg->nmax);
    nt->c = buffer(nt, cfg->nmax * d);
    nt->w = buffer(nt, cfg->nmax);
    nt->s = buffer(nt, cfg->nmax);
    nt->p = buffer(nt, cfg->nmax);
    nt->r = buffer(nt, m);
    nt->q = buffer(nt, m);
    nt->pred = buffer(nt, cfg->mt);
    nt->diff = buffer(nt, cfg->mt);
    NET_CALL(nt, gk_rng_uniform(ctx, 10, 0, nt->x));
    NET_CALL(nt, gk_rng_uniform(ctx, 11, 0, nt->xt));
    make_targets(nt, nt->x, nt->y, m, cfg->noise);
    make_targets(nt, nt->xt, nt->yt, cfg->mt, 0.0); /* test against the clean function */
    nt->hx = gkx_malloc(m * d * sizeof *nt->hx);
    nt->hc = gkx_malloc(cfg->nmax * d * sizeof *nt->hc);
    nt->hr = gkx_malloc(m * sizeof *nt->hr);
    nt->used = gkx_malloc(m);
    memset(nt->used, 0, m);
    nt->rank = gkx_malloc(m * sizeof *nt->rank);
    GKX_CHECK(gk_buffer_read(nt->x, 0, m * d, nt->hx));
    GKX_CHECK(gk_buffer_read(nt->y, 0, m, nt->hr)); /* no centers yet: the residual is y */
}

static void net_destroy(net *nt)
{
    gk_buffer *all[] = {nt->x, nt->xt, nt->y, nt->yt, nt->phi,  nt->c,   nt->w,
                        nt->s, nt->p,  nt->r, nt->q,  nt->pred, nt->diff};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_buffer_destroy(all[i]);
    for (int i = 0; i < nt->nhost; i++)
        free(nt->host_mem[i]);
    free(nt->hx);
    free(nt->hc);
    free(nt->hr);
    free(nt->used);
    free(nt->rank);
}

static int by_mag_desc(const void *a, const void *b)
{
    float x = ((const ranked *)a)->mag, y = ((const ranked *)b)->mag;
    return (x < y) - (x > y);
}

/* Makes the k unused samples with the largest |residual| new centers (weights 0); returns the
 * new number of centers. Greedy placement where the error is, as incremental RBF learners do. */
static size_t add_centers(net *nt, size_t n, size_t k)
{
    const size_t d = nt->cfg->d;
    size_t cand = 0;
    for (size_t i = 0; i < nt->cfg->m; i++)
        if (!nt->used[i])
            nt->rank[cand++] = (ranked){fabsf(nt->hr[i]), i};
    qsort(nt->rank, cand, sizeof *nt->rank, by_mag_desc);
    if (k > cand)
        k = cand;
    for (size_t j = 0; j < k; j++) {
        nt->used[nt->rank[j].i] = 1;
        memcpy(nt->hc + (n + j) * d, nt->hx + nt->rank[j].i * d, d * sizeof *nt->hc);
    }
    GKX_CHECK(gk_buffer_write(nt->c, n * d, k * d, nt->hc + n * d));
    gk_buffer *wnew = view(nt->w, n, k);
    NET_CALL(nt, gk_fill(nt->ctx, 0.0, wnew));
    gk_buffer_destroy(wnew);
    return n + k;
}

/* Refines w toward min ||Phi w - y|| with CGLS (conjugate gradients on the normal equations)
 * from the previous weights. Each step is two matrix-vector products with Phi (gk_gemm with one
 * column). A few steps only: early stopping regularizes the ill-conditioned RBF system. */
static void fit(net *nt, size_t n)
{
    gk_context *c = nt->ctx;
    const size_t m = nt->cfg->m;
    gk_buffer *w = view(nt->w, 0, n), *s = view(nt->s, 0, n), *p = view(nt->p, 0, n);
    NET_CALL(nt, gk_copy(c, nt->y, nt->r));
    NET_CALL(nt,
             gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, m, 1, n, -1.0, nt->phi, n, w, 1, 1.0, nt->r, 1));
    NET_CALL(nt, gk_gemm(c, GK_TRANS, GK_NO_TRANS, n, 1, m, 1.0, nt->phi, n, nt->r, 1, 0.0, s, 1));
    NET_CALL(nt, gk_copy(c, s, p));
    double gam;
    NET_CALL(nt, gk_dot(c, s, s, &gam));
    for (int it = 0; it < nt->cfg->cg_steps && gam > 0; it++) {
        double qq, gam_next;
        NET_CALL(nt, gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, m, 1, n, 1.0, nt->phi, n, p, 1, 0.0,
                             nt->q, 1));
        NET_CALL(nt, gk_dot(c, nt->q, nt->q, &qq));
        if (!(qq > 0))
            break;
        NET_CALL(nt, gk_axpy(c, gam / qq, p, w));
        NET_CALL(nt, gk_axpy(c, -gam / qq, nt->q, nt->r));
        NET_CALL(nt,
                 gk_gemm(c, GK_TRANS, GK_NO_TRANS, n, 1, m, 1.0, nt->phi, n, nt->r, 1, 0.0, s, 1));
        NET_CALL(nt, gk_dot(c, s, s, &gam_next));
        NET_CALL(nt, gk_scale(c, gam_next / gam, p));
        NET_CALL(nt, gk_axpy(c, 1.0, s, p));
        gam = gam_next;
    }
    gk_buffer_destroy(w);
    gk_buffer_destroy(s);
    gk_buffer_destroy(p);
}

/* Root mean square of a buffer of count elements. */
static double rms(net *nt, const gk_buffer *v, size_t count)
{
    double norm;
    NET_CALL(nt, gk_nrm2(nt->ctx, v, &norm));
    return norm / sqrt((double)count);
}

/* One iteration: grow, design matrix, fit, evaluate; fills *st with its timings and errors. */
static size_t iterate(net *nt, size_t n, iter_stat *st)
{
    const net_config *cfg = nt->cfg;
    size_t k = cfg->step ? cfg->step : (n ? n : cfg->start);
    if (k > cfg->nmax - n)
        k = cfg->nmax - n;
    nt->ran[0] = nt->ran[1] = 0;
    double t0 = gkx_now();
    n = add_centers(nt, n, k);
    double t1 = gkx_now();
    NET_CALL(nt, gk_rbf_matrix(nt->ctx, cfg->m, n, cfg->d, cfg->gamma, nt->x, nt->c, nt->phi));
    GKX_CHECK(gk_context_synchronize(nt->ctx));
    st->design_s = gkx_now() - t1;
    fit(nt, n);
    st->train_rmse = rms(nt, nt->r, cfg->m);
    NET_CALL(
        nt, gk_rbf_matvec(nt->ctx, cfg->mt, n, cfg->d, cfg->gamma, nt->xt, nt->c, nt->w, nt->pred));
    NET_CALL(nt, gk_sub(nt->ctx, nt->pred, nt->yt, nt->diff));
    st->test_rmse = rms(nt, nt->diff, cfg->mt);
    GKX_CHECK(gk_buffer_read(nt->r, 0, cfg->m, nt->hr));
    GKX_CHECK(gk_context_synchronize(nt->ctx));
    st->iter_s = gkx_now() - t0;
    st->centers = n;
    st->ran[0] = nt->ran[0];
    st->ran[1] = nt->ran[1];
    return n;
}

/* Checks the final network: a few design-matrix entries against double precision, and
 * gk_rbf_matvec (no matrix) against gk_gemm with Phi on the training set. */
static void check_network(net *nt, size_t n, gk_backend be)
{
    const net_config *cfg = nt->cfg;
    const size_t m = cfg->m, d = cfg->d;
    for (size_t e = 0; e < 32; e++) {
        size_t i = (e * 7919u) % m, j = (e * 104729u) % n;
        double s = 0;
        for (size_t f = 0; f < d; f++) {
            double t = (double)nt->hx[i * d + f] - nt->hc[j * d + f];
            s += t * t;
        }
        float got;
        GKX_CHECK(gk_buffer_read(nt->phi, i * n + j, 1, &got));
        if (!(fabs(got - exp(-(double)(float)cfg->gamma * s)) <= 1e-5)) {
            fprintf(stderr, "[%s] Phi[%zu][%zu] = %.9g, expected %.9g\n", gkx_backend_name(be), i,
                    j, (double)got, exp(-(double)(float)cfg->gamma * s));
            exit(EXIT_FAILURE);
        }
    }
    gk_buffer *w = view(nt->w, 0, n);
    GKX_CHECK(
        gk_gemm(nt->ctx, GK_NO_TRANS, GK_NO_TRANS, m, 1, n, 1.0, nt->phi, n, w, 1, 0.0, nt->q, 1));
    GKX_CHECK(gk_rbf_matvec(nt->ctx, m, n, d, cfg->gamma, nt->x, nt->c, w, nt->r));
    float *hw = gkx_malloc(n * sizeof *hw), *hg = gkx_malloc(m * sizeof *hg);
    GKX_CHECK(gk_buffer_read(w, 0, n, hw));
    GKX_CHECK(gk_buffer_read(nt->q, 0, m, hg));
    GKX_CHECK(gk_buffer_read(nt->r, 0, m, nt->hr));
    double wsum = 0;
    for (size_t j = 0; j < n; j++)
        wsum += fabs(hw[j]);
    /* matvec's contract (1e-5 per unit of sum|w|) plus float32 gemm's n * eps bound */
    double tol = (1e-5 + (double)n * 1.2e-7) * wsum;
    for (size_t i = 0; i < m; i++)
        if (!(fabs((double)hg[i] - nt->hr[i]) <= tol)) {
            fprintf(stderr, "[%s] rbf_matvec[%zu] = %.9g but Phi w = %.9g (tol %.3g)\n",
                    gkx_backend_name(be), i, (double)nt->hr[i], (double)hg[i], tol);
            exit(EXIT_FAILURE);
        }
    gk_buffer_destroy(w);
    free(hw);
    free(hg);
}

/* Trains on one backend (AUTO: on host arrays); fills st[], returns the number of iterations. */
static int run_network(gk_context *ctx, gk_backend be, const net_config *cfg, iter_stat *st,
                       double *rmse0)
{
    net nt;
    net_create(&nt, ctx, be == GK_BACKEND_AUTO, cfg);
    *rmse0 = rms(&nt, nt.y, cfg->m);
    /* Warm-up (library start-up, cuBLAS handle, thread pool) outside the table. */
    GKX_CHECK(gk_rbf_matrix(nt.ctx, cfg->m, 1, cfg->d, cfg->gamma, nt.x, nt.x, nt.phi));
    GKX_CHECK(gk_gemm(nt.ctx, GK_NO_TRANS, GK_NO_TRANS, cfg->m, 1, 1, 1.0, nt.phi, 1, nt.y, 1, 0.0,
                      nt.q, 1));
    GKX_CHECK(gk_context_synchronize(nt.ctx));

    int iters = 0;
    for (size_t n = 0; n < cfg->nmax; iters++)
        n = iterate(&nt, n, &st[iters]);
    check_network(&nt, st[iters - 1].centers, be);
    if (!(st[iters - 1].train_rmse < 0.5 * *rmse0)) {
        fprintf(stderr, "[%s] the network did not learn: training RMSE %.4g from %.4g\n",
                gkx_backend_name(be), st[iters - 1].train_rmse, *rmse0);
        exit(EXIT_FAILURE);
    }
    net_destroy(&nt);
    return iters;
}

/* Where an iteration's calls ran: "cpu", "cuda" or "mixed 12cpu/3cuda". */
static const char *placement(const int ran[2], char *text, size_t size)
{
    if (ran[1] == 0)
        return "cpu";
    if (ran[0] == 0)
        return "cuda";
    snprintf(text, size, "mixed %dcpu/%dcuda", ran[0], ran[1]);
    return text;
}

static void print_table(const gk_backend *be, int nb, iter_stat *const *st, int iters)
{
    printf("\n iter  centers");
    for (int b = 0; b < nb; b++) {
        printf(" | %4s design ms  iter ms", gkx_backend_name(be[b]));
        if (be[b] == GK_BACKEND_AUTO)
            printf("  %-19s", "auto ran on");
    }
    printf(" | train RMSE  test RMSE (%s)\n", gkx_backend_name(be[0]));
    for (int i = 0; i < iters; i++) {
        printf(" %4d  %7zu", i + 1, st[0][i].centers);
        for (int b = 0; b < nb; b++) {
            printf(" | %14.3f %8.3f", 1e3 * st[b][i].design_s, 1e3 * st[b][i].iter_s);
            char text[48];
            if (be[b] == GK_BACKEND_AUTO)
                printf("  %-19s", placement(st[b][i].ran, text, sizeof text));
        }
        printf(" | %10.5f %10.5f\n", st[0][i].train_rmse, st[0][i].test_rmse);
    }
}

int main(int argc, char **argv)
{
    int reps = 9;
    unsigned mask = GKX_ALL | GKX_AUTO;
    net_config cfg = {.m = 8192,
                      .mt = 8192,
                      .d = 2,
                      .start = 8,
                      .step = 0,
                      .nmax = 4096,
                      .cg_steps = 20,
                      .noise = 0.05};
    const gkx_flag flags[] = {
        {"--reps", GKX_INT, &reps, "timed repetitions of the 1000x20 kernel (default 9)"},
        {"--samples", GKX_SIZE, &cfg.m, "training samples (default 8192)"},
        {"--test", GKX_SIZE, &cfg.mt, "test samples, predicted with gk_rbf_matvec (default 8192)"},
        {"--dim", GKX_SIZE, &cfg.d, "input features (default 2)"},
        {"--start", GKX_SIZE, &cfg.start, "centers of the first iteration (default 8)"},
        {"--step", GKX_SIZE, &cfg.step, "centers added per iteration; 0 doubles (default 0)"},
        {"--max-centers", GKX_SIZE, &cfg.nmax, "stop at this many centers (default 4096)"},
        {"--cg-steps", GKX_INT, &cfg.cg_steps, "least-squares (CGLS) steps per iteration (20)"},
        {"--backend", GKX_BACKENDS_AUTO, &mask,
         "cpu | cuda | auto | all (default all: cpu, cuda if available, auto)"},
    };
    gkx_parse_flags(argc, argv,
                    "Gaussian kernel on 1000x20 rows, then an incremental RBF network "
                    "(article 000: PyCUDA 5.4 ms, NumPy 17.5 ms for the kernel).",
                    flags, (int)(sizeof flags / sizeof flags[0]));
    if (reps < 1 || cfg.d == 0 || cfg.start == 0 || cfg.nmax == 0 || cfg.nmax > cfg.m ||
        cfg.mt == 0) {
        fprintf(stderr, "need --reps, --dim, --start, --test >= 1 and 1 <= --max-centers <= "
                        "--samples\n");
        return 2;
    }
    /* Kernel width about a quarter of the unit cube's diameter, whatever the dimension. */
    cfg.gamma = 60.0 / (double)cfg.d;

    printf("libgpukern %s\n\n1) gk_rbf_rows on %dx%d float32 rows, gamma 1 (the article: "
           "PyCUDA 5.4 ms, NumPy 17.5 ms on a Jetson TX2,\n   both from host arrays)\n",
           gk_version_string(), ROWS_N, ROWS_D);
    gk_backend be[3];
    gk_context *ctx[3];
    int nb = gkx_backends(mask, be);
    for (int b = 0; b < nb; b++)
        ctx[b] = open_context(be[b]);
    for (int b = 0; b < nb; b++)
        kernel_rows(ctx[b], be[b], reps);

    printf("\n2) incremental RBF network: %zu training / %zu test samples, %zu features, gamma "
           "%.3g,\n   centers %s up to %zu, %d CGLS steps per iteration\n",
           cfg.m, cfg.mt, cfg.d, cfg.gamma, cfg.step ? "grow linearly" : "double", cfg.nmax,
           cfg.cg_steps);
    if (mask & GKX_AUTO)
        printf("   (auto: the network's arrays are host arrays, and AUTO runs each call where it "
               "predicts it finishes first)\n");
    iter_stat *st[3] = {NULL, NULL, NULL};
    double rmse0[3];
    int iters = 0;
    for (int b = 0; b < nb; b++) {
        st[b] = gkx_malloc((cfg.nmax + 1) * sizeof *st[b]);
        iters = run_network(ctx[b], be[b], &cfg, st[b], &rmse0[b]);
    }
    printf("\nRMSE of the zero predictor (training): %.5f\n", rmse0[0]);
    print_table(be, nb, st, iters);
    double total[3] = {0, 0, 0};
    int on_cuda = -1, on_auto = -1;
    for (int b = 0; b < nb; b++) {
        for (int i = 0; i < iters; i++)
            total[b] += st[b][i].iter_s;
        printf("%-5s final test RMSE %.5f, %.1f ms over %d iterations\n", gkx_backend_name(be[b]),
               st[b][iters - 1].test_rmse, 1e3 * total[b], iters);
        if (be[b] == GK_BACKEND_CUDA)
            on_cuda = b;
        if (be[b] == GK_BACKEND_AUTO)
            on_auto = b;
    }
    /* The CPU against the GPU on the network; AUTO, on host arrays, beside them. be[0] is the
     * CPU unless only CUDA or only AUTO was asked for. */
    char work[160], autotime[32];
    int n = snprintf(work, sizeof work, "RBF network of %zu samples grown to %zu centers", cfg.m,
                     st[0][iters - 1].centers);
    if (on_auto >= 0 && (size_t)n < sizeof work)
        snprintf(work + n, sizeof work - (size_t)n, " (auto on host arrays: %s)",
                 gkx_seconds(total[on_auto], autotime, sizeof autotime));
    printf("\n");
    if (be[0] == GK_BACKEND_CPU && on_cuda >= 0)
        gkx_summary(work, "cpu", total[0], "cuda", total[on_cuda]);
    else
        gkx_summary(work, gkx_backend_name(be[0]), total[0], NULL, 0);
    for (int b = 0; b < nb; b++) {
        gk_context_destroy(ctx[b]);
        free(st[b]);
    }
    return EXIT_SUCCESS;
}
