/* SPDX-License-Identifier: MIT */
/* test_mpi_matvec.c - gk_mpi_rbf_matvec over 1, 2 or 3 ranks against one process's
 * gk_rbf_matvec on the gathered data and a long double reference, per backend. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_test.h"

/* The contract's bound per entry, times sum |w| (docs/DESIGN.md, rbf_matvec). */
static double tolerance(gk_dtype t)
{
    return t == GK_FLOAT32 ? 1e-5 : 1e-12;
}

typedef struct problem {
    gk_dtype t;
    size_t m, n, d;
    double gamma, offset;
    mpt_layout x_layout, y_layout;
} problem;

/* One problem: every rank draws the same global x, y, w, takes its shards, and the outputs
 * gathered on rank 0 are compared there with gk_rbf_matvec on the whole and with long double. */
static void run_problem(gk_context *ctx, const problem *pr)
{
    gk_dtype t = pr->t;
    size_t es = gk_test_esize(t), m = pr->m, n = pr->n, d = pr->d;
    void *x = gk_test_random_array(t, m * d, pr->offset - 1, pr->offset + 1);
    void *y = gk_test_random_array(t, n * d, pr->offset - 1, pr->offset + 1);
    void *w = gk_test_random_array(t, n, -1, 1);
    size_t x0, mr, y0, nr;
    mpt_share(pr->x_layout, m, &x0, &mr);
    mpt_share(pr->y_layout, n, &y0, &nr);

    /* x_local is a view inside a larger buffer, out_local longer than m_local: the extra
     * elements must stay untouched. */
    gk_buffer *xb = gk_test_buffer_const(ctx, t, mr * d + 5, 7.0);
    gk_buffer *xv = gk_test_view(xb, 3, mr * d + 1);
    GK_CHECK_OK(gk_buffer_write(xv, 0, mr * d, (char *)x + x0 * d * es));
    gk_buffer *yb = gk_test_buffer_from(ctx, t, nr * d, (char *)y + y0 * d * es);
    gk_buffer *wb = gk_test_buffer_from(ctx, t, nr, (char *)w + y0 * es);
    gk_buffer *ob = gk_test_buffer_const(ctx, t, mr + 2, GK_TEST_SENTINEL);
    gk_status st = gk_mpi_rbf_matvec(ctx, MPI_COMM_WORLD, mr, nr, d, pr->gamma, xv, yb, wb, ob);
    mpt_check(st == GK_OK, "gk_mpi_rbf_matvec: %s: %s", gk_status_string(st), gk_mpi_last_error());
    void *mine = gk_test_read_all(ob);
    for (size_t i = mr; i < mr + 2; i++)
        mpt_check(gk_test_get(t, mine, i) == GK_TEST_SENTINEL,
                  "out_local[%zu] beyond m_local = %zu was written", i, mr);

    /* Gather every rank's rows on rank 0, in rank order, which is row order. */
    int *counts = malloc((size_t)mpt_size * sizeof *counts);
    int *displs = malloc((size_t)mpt_size * sizeof *displs);
    int mine_count = (int)mr;
    MPI_Gather(&mine_count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0, at = 0; i < mpt_size && mpt_rank == 0; i++) {
        displs[i] = at;
        at += counts[i];
    }
    void *all = gk_test_alloc(t, m);
    MPI_Datatype mt = t == GK_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
    MPI_Gatherv(mine, mine_count, mt, all, counts, displs, mt, 0, MPI_COMM_WORLD);

    if (mpt_rank == 0 && st == GK_OK) {
        gk_buffer *gx = gk_test_buffer_from(ctx, t, m * d, x);
        gk_buffer *gy = gk_test_buffer_from(ctx, t, n * d, y);
        gk_buffer *gw = gk_test_buffer_from(ctx, t, n, w);
        gk_buffer *go = gk_test_buffer_const(ctx, t, m, 0.0);
        GK_CHECK_OK(gk_rbf_matvec(ctx, m, n, d, pr->gamma, gx, gy, gw, go));
        void *single = gk_test_read_all(go);
        double wsum = 0;
        for (size_t j = 0; j < n; j++)
            wsum += fabs(gk_test_get(t, w, j));
        double tol = tolerance(t) * (wsum > 1 ? wsum : 1);
        long double g = (long double)gk_test_round(t, pr->gamma);
        int reported = 0;
        for (size_t i = 0; i < m && reported < 5; i++) {
            gk_test_sum ref = {0, 0};
            for (size_t j = 0; j < n; j++) {
                long double r2 = 0;
                for (size_t k = 0; k < d; k++) {
                    long double diff = (long double)gk_test_get(t, x, i * d + k) -
                                       (long double)gk_test_get(t, y, j * d + k);
                    r2 += diff * diff;
                }
                gk_test_sum_add(&ref, gk_test_exp_ref(-g * r2) * gk_test_get(t, w, j));
            }
            double got = gk_test_get(t, all, i), one = gk_test_get(t, single, i);
            double exact = (double)gk_test_sum_value(&ref);
            int ok = fabs(got - one) <= tol && fabs(got - exact) <= tol;
            mpt_check(ok,
                      "%s m=%zu n=%zu d=%zu gamma=%g offset=%g x %s, y %s: out[%zu] = %.17g, "
                      "single process %.17g, reference %.17g, bound %.3g",
                      gk_test_dtype_name(t), m, n, d, pr->gamma, pr->offset,
                      mpt_layout_name(pr->x_layout), mpt_layout_name(pr->y_layout), i, got, one,
                      exact, tol);
            reported += !ok;
        }
        free(single);
        gk_buffer_destroy(gx);
        gk_buffer_destroy(gy);
        gk_buffer_destroy(gw);
        gk_buffer_destroy(go);
    }
    free(all);
    free(counts);
    free(displs);
    free(mine);
    gk_buffer_destroy(xv);
    gk_buffer_destroy(xb);
    gk_buffer_destroy(yb);
    gk_buffer_destroy(wb);
    gk_buffer_destroy(ob);
    free(x);
    free(y);
    free(w);
}

static void test_layouts(void **state)
{
    gk_context *ctx = gk_test_context(state);
    static const gk_dtype dtypes[2] = {GK_FLOAT32, GK_FLOAT64};
    static const size_t mnd[][3] = {{777, 1025, 3}, {64, 1200, 17}, {1, 1, 1}, {5, 3, 0}};
    for (int di = 0; di < 2; di++)
        for (size_t c = 0; c < sizeof mnd / sizeof mnd[0]; c++)
            for (int xl = MPT_EVEN; xl <= MPT_ALL_LAST; xl++)
                for (int yl = MPT_EVEN; yl <= MPT_ALL_LAST; yl++) {
                    size_t d = mnd[c][2];
                    problem pr = {
                        dtypes[di], mnd[c][0],      mnd[c][1],     d, d ? 0.5 / (double)d : 1.0,
                        0.0,        (mpt_layout)xl, (mpt_layout)yl};
                    run_problem(ctx, &pr);
                }
    mpt_agree();
}

/* Data offset by 1e3: no cancellation blow-up, as the contract requires of gk_rbf_matvec. */
static void test_offset(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (int di = 0; di < 2; di++) {
        problem pr = {di ? GK_FLOAT64 : GK_FLOAT32, 300, 2049, 8, 0.1, 1e3, MPT_UNEVEN, MPT_EVEN};
        run_problem(ctx, &pr);
    }
    mpt_agree();
}

/* Nothing anywhere: every out_local is empty, and the call is still collective. */
static void test_empty(void **state)
{
    gk_context *ctx = gk_test_context(state);
    problem pr = {GK_FLOAT32, 0, 0, 3, 1.0, 0.0, MPT_EVEN, MPT_EVEN};
    run_problem(ctx, &pr);
    problem no_y = {GK_FLOAT64, 10, 0, 3, 1.0, 0.0, MPT_UNEVEN, MPT_EVEN};
    run_problem(ctx, &no_y);
    mpt_agree();
}

/* A communicator made from another one (cached separately, freed while the library holds its
 * duplicate) and repeated calls on it. */
static void test_subcommunicator(void **state)
{
    gk_context *ctx = gk_test_context(state);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, mpt_rank % 2, mpt_rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    /* Row i of x and y is i + 0.25 on every feature; w is all ones. On `half`, rank hr holds
     * row hr of each, so out[0] = sum over the hs rows j of exp(-gamma * d * (hr - j)^2). */
    size_t d = 2;
    double v[2] = {hr + 0.25, hr + 0.25}, one = 1.0;
    gk_buffer *x = gk_test_buffer_from(ctx, GK_FLOAT64, d, v);
    gk_buffer *w = gk_test_buffer_from(ctx, GK_FLOAT64, 1, &one);
    gk_buffer *out = gk_test_buffer_const(ctx, GK_FLOAT64, 1, 0.0);
    for (int rep = 0; rep < 3; rep++) {
        gk_status st = gk_mpi_rbf_matvec(ctx, half, 1, 1, d, 0.5, x, x, w, out);
        mpt_check(st == GK_OK, "on a split communicator: %s: %s", gk_status_string(st),
                  gk_mpi_last_error());
        double got = 0, want = 0;
        GK_CHECK_OK(gk_buffer_read(out, 0, 1, &got));
        for (int j = 0; j < hs; j++)
            want += exp(-0.5 * (double)d * (double)(hr - j) * (double)(hr - j));
        mpt_check(fabs(got - want) <= 1e-12 * hs, "split communicator, rep %d: %.17g, want %.17g",
                  rep, got, want);
    }
    MPI_Comm_free(&half);
    gk_buffer_destroy(x);
    gk_buffer_destroy(w);
    gk_buffer_destroy(out);
    mpt_agree();
}

int main(int argc, char **argv)
{
    mpt_init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_layouts),
        GK_TEST_BOTH(test_offset),
        GK_TEST_BOTH(test_empty),
        GK_TEST_BOTH(test_subcommunicator),
    };
    return mpt_run("mpi_matvec", tests, sizeof tests / sizeof tests[0]);
}
