/* SPDX-License-Identifier: MIT */
/* tile.c - one tile of the kernel family's pass: inner products or squared distances from a
 * dgemm, L1 sums from a direct loop, each row then handed to the caller's epilogue. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_internal.h"
#include "kernel/kernel.h"

/* Row r of src (dtype t, d features) as doubles, minus c (NULL: not centred), into dst; returns
 * its squared norm. */
GK_CPU_CLONES
static double widen_row(gk_dtype t, size_t d, const void *src, size_t r, const double *c,
                        double *dst)
{
    double s = 0.0;
    if (t == GK_FLOAT32) {
        const float *p = (const float *)src + r * d;
        for (size_t f = 0; f < d; f++)
            dst[f] = (double)p[f];
    } else {
        memcpy(dst, (const double *)src + r * d, d * sizeof *dst);
    }
    /* summed in any order: the bounds that use the norm hold for every order (g_d) */
    if (c != NULL) {
#pragma omp simd reduction(+ : s)
        for (size_t f = 0; f < d; f++) {
            double v = dst[f] - c[f];
            dst[f] = v;
            s += v * v;
        }
    } else {
#pragma omp simd reduction(+ : s)
        for (size_t f = 0; f < d; f++)
            s += dst[f] * dst[f];
    }
    return s;
}

/* Rows [r0, r0 + rows) of src prepared for the pass into dst (row-major; L1 for y: feature-major
 * with row length rows; L1 on float32: kept as floats), their norms into norms. */
static void prepare(const gk_cpu_job *j, const void *src, size_t r0, size_t rows, int is_y,
                    double *dst, double *norms)
{
    const size_t d = j->d;
    const double *c = j->pass == GK_CPU_PASS_SQDIST ? j->c : NULL;
    const int l1 = j->pass == GK_CPU_PASS_L1, f32 = j->t == GK_FLOAT32;
    if (j->sgemm && !j->norms)
        return; /* the sgemm reads the rows as given, and nothing needs their norms */
    for (size_t r = 0; r < rows; r++) {
        norms[r] = 0.0;
        if (j->sgemm && j->norms) {
            /* the sgemm reads the rows as given: only the cosine's norms */
            const float *p = (const float *)src + (r0 + r) * d;
            double s = 0.0;
            for (size_t f = 0; f < d; f++)
                s += (double)p[f] * (double)p[f];
            norms[r] = sqrt(s);
        } else if (l1 && f32) {
            const float *p = (const float *)src + (r0 + r) * d;
            float *o = (float *)dst;
            for (size_t f = 0; f < d; f++)
                o[is_y ? f * rows + r : r * d + f] = p[f];
        } else if (l1 && is_y) {
            const double *p = (const double *)src + (r0 + r) * d;
            for (size_t f = 0; f < d; f++)
                dst[f * rows + r] = p[f];
        } else {
            double s = widen_row(j->t, d, src, r0 + r, c, dst + r * d);
            norms[r] = j->norms ? sqrt(s) : s;
        }
        if (is_y && j->norms)
            j->iny[r] = norms[r] > 0.0 ? 1.0 / norms[r] : 0.0;
    }
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

/* L1 sums of one row xi against nb columns packed feature-major (row length nb), 32 columns (64
 * float32) at a time in registers: four AVX-512 accumulators, which hide the adds' latency. */
#define GK_KERNEL_L1_COLS 32
#define GK_KERNEL_L1_COLS_F32 64
GK_CPU_CLONES
static void l1_row_f64(size_t d, size_t nb, const double *xi, const double *yt, double *out)
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

/* The same on float32 rows in float arithmetic, twice the lanes: each difference is rounded
 * once and at most GK_KERNEL_L1_CHUNK of them are summed in float before the sum goes on in
 * double, so the relative error stays within about 65 * 2^-24 = 3.9e-6 of the contract's 1e-5. */
#define GK_KERNEL_L1_CHUNK ((size_t)64)
GK_CPU_CLONES
static void l1_row_f32(size_t d, size_t nb, const float *xi, const float *yt, double *out)
{
    for (size_t j0 = 0; j0 < nb; j0 += GK_KERNEL_L1_COLS_F32) {
        size_t cols = nb - j0 < GK_KERNEL_L1_COLS_F32 ? nb - j0 : GK_KERNEL_L1_COLS_F32;
        double sum[GK_KERNEL_L1_COLS_F32] = {0};
        for (size_t f0 = 0; f0 < d; f0 += GK_KERNEL_L1_CHUNK) {
            size_t f1 = d - f0 < GK_KERNEL_L1_CHUNK ? d : f0 + GK_KERNEL_L1_CHUNK;
            float acc[GK_KERNEL_L1_COLS_F32] = {0};
            if (cols == GK_KERNEL_L1_COLS_F32) {
                for (size_t f = f0; f < f1; f++) {
                    const float xv = xi[f], *yf = yt + f * nb + j0;
#pragma omp simd
                    for (size_t c = 0; c < GK_KERNEL_L1_COLS_F32; c++)
                        acc[c] += fabsf(xv - yf[c]);
                }
            } else {
                for (size_t f = f0; f < f1; f++)
                    for (size_t c = 0; c < cols; c++)
                        acc[c] += fabsf(xi[f] - yt[f * nb + j0 + c]);
            }
            for (size_t c = 0; c < GK_KERNEL_L1_COLS_F32; c++)
                sum[c] += (double)acc[c];
        }
        for (size_t c = 0; c < cols; c++)
            out[j0 + c] = sum[c];
    }
}

GK_CPU_CLONES
static void widen(size_t nb, const float *src, double *dst)
{
    for (size_t jj = 0; jj < nb; jj++)
        dst[jj] = (double)src[jj];
}

/* The tile of the prepared rows: its inner products (a one-thread gemm), then each row's pass
 * and the caller's epilogue. */
static void tile_rows(const gk_cpu_job *j, size_t i0, size_t mb, size_t j0, size_t nb,
                      gk_cpu_row_fn row, void *arg)
{
    const size_t d = j->d, ld = d > 0 ? d : 1;
    if (j->sgemm)
        gk__cpu_gemm_serial(GK_FLOAT32, GK_NO_TRANS, GK_TRANS, mb, nb, d, 1.0,
                            (const float *)j->x + i0 * d, ld, (const float *)j->y + j0 * d, ld, 0.0,
                            j->vf, nb);
    else if (j->pass != GK_CPU_PASS_L1)
        gk__cpu_gemm_serial(GK_FLOAT64, GK_NO_TRANS, GK_TRANS, mb, nb, d, 1.0, j->xs, ld, j->ys, ld,
                            0.0, j->v, nb);
    for (size_t r = 0; r < mb; r++) {
        double *v = j->v + r * nb;
        if (j->sgemm)
            widen(nb, j->vf + r * nb, v);
        else if (j->pass == GK_CPU_PASS_L1 && j->t == GK_FLOAT32)
            l1_row_f32(d, nb, (const float *)j->xs + r * d, (const float *)j->ys, v);
        else if (j->pass == GK_CPU_PASS_L1)
            l1_row_f64(d, nb, j->xs + r * d, j->ys, v);
        else if (j->pass == GK_CPU_PASS_SQDIST &&
                 sqdist_expand(nb, j->beta, j->tol, j->nx[r], j->ny, v) > 0)
            for (size_t jj = 0; jj < nb; jj++)
                if (isnan(v[jj]))
                    v[jj] = gk__cpu_sqdist_direct(j->t, d, j->x, i0 + r, j->y, j0 + jj);
        row(arg, j, r, v);
    }
}

/* Finishes a float row in chunks widened to double on the stack, so the sgemm form shares the
 * epilogues of the others. */
#define GK_KERNEL_F32_CHUNK ((size_t)256)
GK_CPU_CLONES
static void finish_row_f32(const gk_cpu_job *j, size_t nb, size_t r, float *v)
{
    double buf[GK_KERNEL_F32_CHUNK];
    for (size_t j0 = 0; j0 < nb; j0 += GK_KERNEL_F32_CHUNK) {
        size_t cnt = nb - j0 < GK_KERNEL_F32_CHUNK ? nb - j0 : GK_KERNEL_F32_CHUNK;
        for (size_t c = 0; c < cnt; c++)
            buf[c] = (double)v[j0 + c];
        gk__cpu_finish_row(j, cnt, r, j0, buf);
        for (size_t c = 0; c < cnt; c++)
            v[j0 + c] = (float)buf[c];
    }
}

void gk__cpu_job_tile_member(gk_cpu_job *j, size_t i0, size_t mb, size_t j0, size_t nb,
                             gk_cpu_row_fn row, void *arg)
{
    prepare(j, j->x, i0, mb, 0, j->xs, j->nx);
    if (j->ys_from != j0)
        prepare(j, j->y, j0, nb, 1, j->ys, j->ny);
    j->ys_from = j0;
    tile_rows(j, i0, mb, j0, nb, row, arg);
}

void gk__cpu_job_tile_f32_member(gk_cpu_job *j, size_t i0, size_t mb, size_t j0, size_t nb,
                                 float *c, size_t ldc)
{
    const size_t d = j->d, ld = d > 0 ? d : 1;
    prepare(j, j->x, i0, mb, 0, j->xs, j->nx);
    if (j->ys_from != j0)
        prepare(j, j->y, j0, nb, 1, j->ys, j->ny);
    j->ys_from = j0;
    gk__cpu_gemm_serial(GK_FLOAT32, GK_NO_TRANS, GK_TRANS, mb, nb, d, 1.0,
                        (const float *)j->x + i0 * d, ld, (const float *)j->y + j0 * d, ld, 0.0, c,
                        ldc);
    if (j->finish != GK_CPU_FINISH_NONE)
        for (size_t r = 0; r < mb; r++)
            finish_row_f32(j, nb, r, c + r * ldc);
}
