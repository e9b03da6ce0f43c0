/* SPDX-License-Identifier: MIT */
/* matrix.c - kernel_matrix and distance_matrix: the tiles' rows finished and stored into out. */
#include "cpu_internal.h"
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
    if (j->t == GK_FLOAT32) {
        float *o = (float *)a->out + at;
        for (size_t jj = 0; jj < nb; jj++)
            o[jj] = (float)v[jj];
    } else {
        double *o = (double *)a->out + at;
        for (size_t jj = 0; jj < nb; jj++)
            o[jj] = v[jj];
    }
}

static gk_status run(void *st, gk_cpu_job *j, gk_dtype t, size_t m, size_t n, size_t d,
                     const void *x, const void *y, void *out)
{
    if (t != GK_FLOAT32 && t != GK_FLOAT64)
        return gk__cpu_bad_dtype(t);
    gk_status s = gk__cpu_job_begin(st, j, t, m, n, d, x, y, m);
    for (size_t i0 = 0; s == GK_OK && i0 < m; i0 += j->mb) {
        size_t mb = m - i0 < j->mb ? m - i0 : j->mb;
        gk__cpu_job_rows(j, i0, mb);
        for (size_t j0 = 0; s == GK_OK && j0 < n; j0 += j->nb) {
            size_t nb = n - j0 < j->nb ? n - j0 : j->nb;
            store_arg a = {i0, j0, out};
            if (j->sgemm && j->direct)
                s = gk__cpu_job_tile_f32(st, j, i0, mb, j0, nb, (float *)out + i0 * n + j0, n);
            else
                s = gk__cpu_job_tile(st, j, i0, mb, j0, nb, store_row, &a);
        }
    }
    if (j->mem != NULL)
        gk__cpu_job_end(j);
    return s;
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
