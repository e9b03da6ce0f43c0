/* SPDX-License-Identifier: MIT */
/* tile.c - one tile of the kernel family's pass: inner products or squared distances from a
 * dgemm, L1 sums from a direct loop, each row then handed to the caller's epilogue. */
#include <math.h>

#include "cpu_internal.h"
#include "kernel/kernel.h"

/* Below this many multiply-adds a tile's loops stay on the calling thread. */
#define GK_KERNEL_PAR_MIN ((size_t)1 << 15)

/* Row r of src (dtype t, d features) as doubles, minus c (NULL: not centred), into dst; returns
 * its squared norm. */
GK_CPU_CLONES
static double widen_row(gk_dtype t, size_t d, const void *src, size_t r, const double *c,
                        double *dst)
{
    double s = 0.0;
    if (t == GK_FLOAT32) {
        const float *p = (const float *)src + r * d;
        for (size_t f = 0; f < d; f++) {
            double v = (double)p[f] - (c != NULL ? c[f] : 0.0);
            dst[f] = v;
            s += v * v;
        }
    } else {
        const double *p = (const double *)src + r * d;
        for (size_t f = 0; f < d; f++) {
            double v = p[f] - (c != NULL ? c[f] : 0.0);
            dst[f] = v;
            s += v * v;
        }
    }
    return s;
}

/* Rows [r0, r0 + rows) of src prepared for the pass into dst (row-major; L1 for y: feature-major
 * with row length ld), their norms into norms. */
static void prepare(const gk_cpu_job *j, const void *src, size_t r0, size_t rows, int is_y,
                    double *dst, double *norms)
{
    const size_t d = j->d;
    const double *c = j->pass == GK_CPU_PASS_SQDIST ? j->c : NULL;
    int team = rows * d > GK_KERNEL_PAR_MIN && j->threads > 1;
    GK_CPU_PARALLEL_IF(
        team, "omp parallel for num_threads(j->threads) schedule(static)",
        for (size_t r = 0; r < rows; r++) {
            if (j->pass == GK_CPU_PASS_L1 && is_y) {
                for (size_t f = 0; f < d; f++)
                    dst[f * rows + r] = j->t == GK_FLOAT32
                                            ? (double)((const float *)src)[(r0 + r) * d + f]
                                            : ((const double *)src)[(r0 + r) * d + f];
                norms[r] = 0.0;
            } else {
                double s = widen_row(j->t, d, src, r0 + r, c, dst + r * d);
                norms[r] = j->norms ? sqrt(s) : s;
            }
        });
}

void gk__cpu_job_rows(gk_cpu_job *j, size_t i0, size_t mb)
{
    prepare(j, j->x, i0, mb, 0, j->xs, j->nx);
}

double gk__cpu_sqdist_direct(gk_dtype t, size_t d, const void *x, size_t i, const void *y,
                             size_t jj)
{
    double s = 0.0;
    if (t == GK_FLOAT32) {
        const float *a = (const float *)x + i * d, *b = (const float *)y + jj * d;
        for (size_t f = 0; f < d; f++) {
            double e = (double)a[f] - (double)b[f];
            s += e * e;
        }
    } else {
        const double *a = (const double *)x + i * d, *b = (const double *)y + jj * d;
        for (size_t f = 0; f < d; f++) {
            double e = a[f] - b[f];
            s += e * e;
        }
    }
    return s;
}

/* Squared distances of one row from its dot products g (in place): D = nx + ny - 2 g, kept
 * where the bound allows (so never on identical or near rows, nor where anything is not
 * finite); returns how many entries need differences, marked NaN. */
GK_CPU_CLONES
static size_t sqdist_expand(size_t nb, double beta, double tol, double nxi, const double *ny,
                            double *g)
{
    size_t redo = 0;
#pragma omp simd reduction(+ : redo)
    for (size_t jj = 0; jj < nb; jj++) {
        double s = nxi + ny[jj], t = s - 2.0 * g[jj];
        int bad = !(beta * s <= tol * t);
        g[jj] = bad ? NAN : t;
        redo += (size_t)bad;
    }
    return redo;
}

/* L1 sums of one row xi against nb columns packed feature-major (row length nb), 32 columns at a
 * time in registers. */
#define GK_KERNEL_L1_COLS 32
GK_CPU_CLONES
static void l1_row(size_t d, size_t nb, const double *xi, const double *yt, double *out)
{
    size_t j0 = 0;
    for (; j0 + GK_KERNEL_L1_COLS <= nb; j0 += GK_KERNEL_L1_COLS) {
        double acc[GK_KERNEL_L1_COLS] = {0};
        for (size_t f = 0; f < d; f++) {
            const double xv = xi[f], *yf = yt + f * nb + j0;
#pragma omp simd
            for (size_t c = 0; c < GK_KERNEL_L1_COLS; c++)
                acc[c] += fabs(xv - yf[c]);
        }
        for (size_t c = 0; c < GK_KERNEL_L1_COLS; c++)
            out[j0 + c] = acc[c];
    }
    for (size_t jj = j0; jj < nb; jj++) {
        double s = 0.0;
        for (size_t f = 0; f < d; f++)
            s += fabs(xi[f] - yt[f * nb + jj]);
        out[jj] = s;
    }
}

gk_status gk__cpu_job_tile(void *st, gk_cpu_job *j, size_t i0, size_t mb, size_t j0, size_t nb,
                           gk_cpu_row_fn row, void *arg)
{
    const size_t d = j->d;
    prepare(j, j->y, j0, nb, 1, j->ys, j->ny);
    if (j->pass != GK_CPU_PASS_L1) {
        gk_status s = gk__cpu_gemm(st, GK_FLOAT64, GK_NO_TRANS, GK_TRANS, mb, nb, d, 1.0, j->xs,
                                   d > 0 ? d : 1, j->ys, d > 0 ? d : 1, 0.0, j->v, nb);
        if (s != GK_OK)
            return s;
    }
    const gk_cpu_job *cj = j;
    int team = mb * nb * (d + 1) > GK_KERNEL_PAR_MIN && j->threads > 1 && mb > 1;
    GK_CPU_PARALLEL_IF(
        team, "omp parallel for num_threads(cj->threads) schedule(dynamic, 4)",
        for (size_t r = 0; r < mb; r++) {
            double *v = cj->v + r * nb;
            if (cj->pass == GK_CPU_PASS_L1)
                l1_row(d, nb, cj->xs + r * d, cj->ys, v);
            else if (cj->pass == GK_CPU_PASS_SQDIST &&
                     sqdist_expand(nb, cj->beta, cj->tol, cj->nx[r], cj->ny, v) > 0)
                for (size_t jj = 0; jj < nb; jj++)
                    if (isnan(v[jj]))
                        v[jj] = gk__cpu_sqdist_direct(cj->t, d, cj->x, i0 + r, cj->y, j0 + jj);
            row(arg, cj, r, v);
        });
    return GK_OK;
}
