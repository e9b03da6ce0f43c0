/* SPDX-License-Identifier: MIT */
/* matrix.c - kernel_matrix and distance_matrix: the tiles' rows finished and stored into out. */
#include <omp.h>

#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "kernel/kernel.h"

typedef struct store_arg {
    size_t i0, j0;
    void *out;
} store_arg;

/* Finishes row r of the tile and stores it into out at row i0 + r, columns j0 onward. */
static void store_row(void *arg, const gk_cpu_job *j, size_t r, double *v)
{
    const store_arg *a = arg;
    size_t nb = j->n - a->j0 < j->nb ? j->n - a->j0 : j->nb;
    gk__cpu_finish_row(j, nb, r, 0, v);
    size_t at = (a->i0 + r) * j->n + a->j0;
    if (j->t == GK_FLOAT32 && j->isa != NULL && j->isa->store_f32 != NULL) {
        j->isa->store_f32(nb, v, (float *)a->out + at);
    } else if (j->t == GK_FLOAT32) {
        float *o = (float *)a->out + at;
        for (size_t jj = 0; jj < nb; jj++)
            o[jj] = (float)v[jj];
    } else {
        double *o = (double *)a->out + at;
        for (size_t jj = 0; jj < nb; jj++)
            o[jj] = v[jj];
    }
}

/* One parallel region for the call: each member of the team takes tiles of its own (rows
 * prepared, a one-thread gemm, the epilogue, the store), so that no gemm's threads and no
 * region per tile come between the tiles, and a tile's values stay in its core's cache from
 * the gemm to the store. */
static gk_status run(void *st, gk_cpu_job *j, gk_dtype t, size_t m, size_t n, size_t d,
                     const void *x, const void *y, void *out)
{
    if (t != GK_FLOAT32 && t != GK_FLOAT64)
        return gk__cpu_bad_dtype(t);
    j->isa = ((const gk_cpu_state *)st)->rbf_isa;
    gk_status s = gk__cpu_job_begin(st, j, t, m, n, d, x, y, m);
    if (s != GK_OK)
        return s;
    /* Tiles of fewer rows where a few rows of x against a few blocks of y would leave
     * threads without a task. */
    size_t col_tiles = (n + j->nb - 1) / j->nb;
    size_t mb = gk__cpu_job_task_rows(j, m, ((size_t)j->threads + col_tiles - 1) / col_tiles);
    size_t row_tiles = (m + mb - 1) / mb, tasks = row_tiles * col_tiles;
    int nt = gk__cpu_region(j->threads, tasks);
    const gk_cpu_job *cj = j;
    gk__cpu_blas_serial_enter();
    GK_CPU_PARALLEL_IF(nt > 1, "omp parallel num_threads(nt)", {
        gk_cpu_job mj;
        gk__cpu_job_member(cj, omp_get_thread_num(), &mj);
        /* consecutive tasks of a member share a block of y, which it prepares once */
        _Pragma("omp for schedule(static)") for (size_t task = 0; task < tasks; task++)
        {
            size_t i0 = task % row_tiles * mb, j0 = task / row_tiles * mj.nb;
            size_t rows = m - i0 < mb ? m - i0 : mb, cols = n - j0 < mj.nb ? n - j0 : mj.nb;
            store_arg a = {i0, j0, out};
            if (mj.sgemm && mj.direct)
                gk__cpu_job_tile_f32_member(&mj, i0, rows, j0, cols, (float *)out + i0 * n + j0, n);
            else
                gk__cpu_job_tile_member(&mj, i0, rows, j0, cols, store_row, &a);
        }
    });
    gk__cpu_blas_serial_leave();
    gk__cpu_job_end(j);
    return GK_OK;
}

gk_status gk__cpu_kernel_matrix(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                                size_t d, const void *x, const void *y, void *out)
{
    gk_cpu_job j = {0};
    gk__cpu_job_kernel(&j, k);
    j.direct = 1;
    return run(st, &j, t, m, n, d, x, y, out);
}

gk_status gk__cpu_distance_matrix(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n,
                                  size_t d, const void *x, const void *y, void *out)
{
    gk_cpu_job j = {0};
    gk__cpu_job_metric(&j, metric);
    return run(st, &j, t, m, n, d, x, y, out);
}
