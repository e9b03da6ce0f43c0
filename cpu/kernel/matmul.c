/* SPDX-License-Identifier: MIT */
/* matmul.c - kernel_matmul: each tile of K finished in place and multiplied into its rows of
 * out by a dgemm, so that only a tile of K (one a thread) ever exists; the Gaussian kernel at
 * 1 <= d <= 4 by the fast Gauss transform where the rbf planner takes it. */
#include <omp.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "error.h"
#include "fgt_params.h"
#include "kernel/kernel.h"
#include "rbf/plan.h"

static void finish_row(void *arg, const gk_cpu_job *j, size_t r, double *v)
{
    size_t nb = *(const size_t *)arg;
    gk__cpu_finish_row(j, nb, r, 0, v);
}

/* The Gaussian kernel at 1 <= d <= 4: the fast Gauss transform of the r columns together
 * (cpu/rbf/fgt.c), where the rbf planner offers it and its cost model accepts the data; 1 when
 * it ran (*rc: its status), 0 when the tiles should run. */
static int matmul_fgt(void *st, gk_dtype t, double gamma, size_t m, size_t n, size_t d, size_t r,
                      const void *x, const void *y, const void *w, void *out, gk_status *rc)
{
    const gk_cpu_state *s = st;
    gk_cpu_rbf_plan p;
    gk__cpu_rbf_plan_matmul(s, t, m, n, d, r, gamma, &p);
    char said[256];
    int ran = 0;
    if (p.form == GK_CPU_RBF_FGT) {
        ran = gk__cpu_rbf_matvec_fgt(st, t, m, n, d, r, gamma, s->rbf_form == GK_CPU_RBF_FGT,
                                     "kernel_matmul", x, y, w, out, rc, said, sizeof said);
        if (ran)
            gk__cpu_rbf_plan_note(&p, said);
        else
            gk__cpu_rbf_plan_decline(&p, t, d, said);
    }
    gk__cpu_rbf_plan_log(s, &p);
    return ran;
}

/* Each member of the team takes rows of x of its own (a task) and goes along all of y for them:
 * a tile (a one-thread gemm or L1 loop, the epilogue), then its product with the block of w by a
 * one-thread dgemm into the rows' sums. A multithreaded dgemm per tile between the team's
 * regions left OpenBLAS's threads and the team's spinning beside each other at every tile
 * (cpu_rbf_fused.c tells the same of the RBF GEMM form). A row's sums add the blocks of y in
 * order, whichever member has it. */
gk_status gk__cpu_kernel_matmul(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                                size_t d, size_t r, const void *x, const void *y, const void *w,
                                void *out)
{
    if (t != GK_FLOAT32 && t != GK_FLOAT64)
        return gk__cpu_bad_dtype(t);
    gk_status s;
    if (k->kind == GK_KERNEL_RBF && d >= 1 && d <= GK_FGT_MAX_D &&
        matmul_fgt(st, t, k->gamma, m, n, d, r, x, y, w, out, &s))
        return s;
    gk_cpu_job j = {0};
    gk__cpu_job_kernel(&j, k);
    s = gk__cpu_job_begin(st, &j, t, m, n, d, x, y, m);
    if (s != GK_OK)
        return s;
    size_t mb = gk__cpu_job_task_rows(&j, m, (size_t)j.threads);
    size_t tasks = (m + mb - 1) / mb;
    int nt = gk__cpu_region(j.threads, tasks);
    /* A member's sums (mb x r) and block of w (nb x r), in double: the products and sums of the
     * contract's sum_j |K_ij| |w_jc| bound keep double's rounding. */
    size_t per = (j.mb + j.nb) * r;
    void *mem;
    if ((s = gk__cpu_job_team_scratch(&j, nt, per * sizeof(double), &mem)) != GK_OK)
        return s;
    double *acc = mem;
    const gk_cpu_job *cj = &j;
    gk__cpu_blas_serial_enter();
    GK_CPU_PARALLEL_IF(nt > 1, "omp parallel num_threads(nt)", {
        gk_cpu_job mj;
        int me = omp_get_thread_num();
        gk__cpu_job_member(cj, me, &mj);
        double *sums = acc + (size_t)me * per, *wd = sums + mj.mb * r;
        _Pragma("omp for schedule(dynamic, 1)") for (size_t task = 0; task < tasks; task++)
        {
            size_t i0 = task * mb, rows = m - i0 < mb ? m - i0 : mb;
            for (size_t j0 = 0; j0 < n; j0 += mj.nb) {
                size_t nb = n - j0 < mj.nb ? n - j0 : mj.nb;
                for (size_t e = 0; e < nb * r; e++)
                    wd[e] = t == GK_FLOAT32 ? (double)((const float *)w)[j0 * r + e]
                                            : ((const double *)w)[j0 * r + e];
                gk__cpu_job_tile_member(&mj, i0, rows, j0, nb, finish_row, &nb);
                gk__cpu_gemm_serial(GK_FLOAT64, GK_NO_TRANS, GK_NO_TRANS, rows, r, nb, 1.0, mj.v,
                                    nb, wd, r, j0 == 0 ? 0.0 : 1.0, sums, r);
            }
            for (size_t e = 0; e < rows * r; e++) {
                if (t == GK_FLOAT32)
                    ((float *)out)[i0 * r + e] = (float)sums[e];
                else
                    ((double *)out)[i0 * r + e] = sums[e];
            }
        }
    });
    gk__cpu_blas_serial_leave();
    gk__free(acc);
    gk__cpu_job_end(&j);
    return GK_OK;
}
