/* SPDX-License-Identifier: MIT */
/* job.c - which pass and epilogue each kernel and metric takes; a call's scratch and centre. */
#include <math.h>
#include <stdint.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "error.h"
#include "kernel/kernel.h"

void gk__cpu_job_kernel(gk_cpu_job *j, const gk_kernel *k)
{
    static const gk_cpu_pass pass[] = {GK_CPU_PASS_SQDIST, GK_CPU_PASS_L1, GK_CPU_PASS_IP,
                                       GK_CPU_PASS_IP,     GK_CPU_PASS_IP, GK_CPU_PASS_IP,
                                       GK_CPU_PASS_SQDIST};
    static const gk_cpu_finish finish[] = {
        GK_CPU_FINISH_EXP,  GK_CPU_FINISH_EXP,     GK_CPU_FINISH_POLY,  GK_CPU_FINISH_SIGMOID,
        GK_CPU_FINISH_NONE, GK_CPU_FINISH_COS_SIM, GK_CPU_FINISH_MATERN};
    j->pass = pass[k->kind - GK_KERNEL_RBF];
    j->finish = finish[k->kind - GK_KERNEL_RBF];
    j->gamma = k->gamma;
    j->coef0 = k->coef0;
    j->degree = (int)k->degree;
    j->nu = k->nu;
    j->norms = k->kind == GK_KERNEL_COSINE;
}

void gk__cpu_job_metric(gk_cpu_job *j, gk_metric metric)
{
    j->pass = metric == GK_METRIC_MANHATTAN ? GK_CPU_PASS_L1
              : metric == GK_METRIC_COSINE  ? GK_CPU_PASS_IP
                                            : GK_CPU_PASS_SQDIST;
    j->finish = metric == GK_METRIC_EUCLIDEAN ? GK_CPU_FINISH_SQRT
                : metric == GK_METRIC_COSINE  ? GK_CPU_FINISH_COS_DIST
                                              : GK_CPU_FINISH_NONE;
    j->norms = metric == GK_METRIC_COSINE;
}

/* Tiles: at most GK_KERNEL_TILE_ROWS rows of x against GK_KERNEL_TILE_COLS rows of y, fewer
 * where d is large, so that the prepared rows stay near GK_KERNEL_TILE_ELEMS doubles. A tile of
 * 256 x 1024 doubles (2 MiB) keeps a dgemm at its speed (OpenBLAS packs the block of y for each
 * call, once per 256 rows) and the epilogue's rows in cache. */
#define GK_KERNEL_TILE_ROWS ((size_t)256)
#define GK_KERNEL_TILE_COLS ((size_t)1024)
#define GK_KERNEL_TILE_ELEMS ((size_t)1 << 20)

static size_t clamp_size(size_t v, size_t lo, size_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Distances: the expanded form's bound (cpu_rbf_gemm.c derives it) for rows centred and held in
 * double, with double's dgemm; entries are kept within this share of the contract's relative
 * error (1e-5, 1e-12), the final rounding having the rest. */
#define GK_KERNEL_SQDIST_TOL_F32 5e-6
#define GK_KERNEL_SQDIST_TOL_F64 5e-13

/* The largest Euclidean norm of `rows` float32 rows of d features, in double (each summed in
 * any order: a bound, and the products are exact). */
GK_CPU_CLONES
static double max_norm(size_t rows, size_t d, const float *p)
{
    double top = 0.0;
    for (size_t i = 0; i < rows; i++) {
        double s = 0.0;
#pragma omp simd reduction(+ : s)
        for (size_t f = 0; f < d; f++)
            s += (double)p[i * d + f] * (double)p[i * d + f];
        top = s > top || isnan(s) ? s : top;
    }
    return sqrt(top);
}

/* Whether float32 inner products summed in float keep this job's contract: sgemm's error is at
 * most g_d(u) S, S = sum_f |x_f y_f| (u = 2^-24), which for linear and the cosine kernel moves an
 * entry by that fraction of the contract's scale; the rest of the 1e-5 goes to the epilogue and
 * the final rounding. 64 features pass for linear and cosine. The sigmoid's error is at most
 * gamma times the inner product's (tanh' <= 1), absolute, so it depends on the data:
 * S <= |x| |y| bounds it by gamma g_d(u) max |x| max |y| (standardized data, 64 features, gamma
 * 1/64: 3.8e-6). The polynomial's scale is A^p, A = gamma S + |coef0|, and its error at most
 * p gamma g_d(u) S A^(p-1) (1 + g_d(u))^(p-1) = p g_d(u) (gamma S / A) (1 + g_d(u))^(p-1) A^p:
 * within the budget for any data where p g_d(u) (1 + g_d(u))^(p-1) is (64 features: degree 2,
 * not 3), else where it is with gamma S / A at its largest, gamma M / (gamma M + |coef0|) for
 * M = max |x| max |y| and gamma >= 0 (standardized data, 64 features, gamma 1/64, coef0 1,
 * degree 3: 7e-6). The cosine distance (1e-6) keeps double. */
#define GK_KERNEL_SGEMM_ERR 8e-6
static int sgemm_suffices(const gk_cpu_job *j, size_t d)
{
    const double u = 0x1p-24, gd = (double)d * u / (1.0 - (double)d * u);
    if ((double)d * u >= 0.5)
        return 0;
    if (j->finish == GK_CPU_FINISH_SIGMOID) {
        double bound = fabs(j->gamma) * gd * max_norm(j->m, d, j->x) * max_norm(j->n, d, j->y);
        return bound <= GK_KERNEL_SGEMM_ERR;
    }
    if (j->finish == GK_CPU_FINISH_POLY) {
        double p = j->degree, err = p * gd * pow(1.0 + gd, p > 1.0 ? p - 1.0 : 0.0);
        if (err <= GK_KERNEL_SGEMM_ERR)
            return 1;
        if (!(j->gamma >= 0.0))
            return 0;
        double gm = j->gamma * max_norm(j->m, d, j->x) * max_norm(j->n, d, j->y);
        double share = gm / (gm + fabs(j->coef0));
        return share <= 1.0 && err * share <= GK_KERNEL_SGEMM_ERR;
    }
    return j->finish == GK_CPU_FINISH_NONE || j->finish == GK_CPU_FINISH_COS_SIM
               ? gd <= GK_KERNEL_SGEMM_ERR
               : 0;
}

/* Points a tile's scratch (tile_elems doubles from p) at its pieces. */
static void lay_out(gk_cpu_job *j, double *p)
{
    const int direct = j->sgemm && j->direct;
    j->v = p;
    p += direct ? 0 : j->mb * j->nb;
    j->xs = p;
    p += direct ? 0 : j->mb * j->d;
    j->ys = p;
    p += direct ? 0 : j->nb * j->d;
    j->nx = p;
    p += j->mb;
    j->ny = p;
    p += j->nb;
    j->iny = p;
    p += j->nb;
    j->vf = j->sgemm && !direct ? (float *)p : NULL;
}

gk_status gk__cpu_job_begin(void *st, gk_cpu_job *j, gk_dtype t, size_t m, size_t n, size_t d,
                            const void *x, const void *y, size_t mb_max)
{
    j->t = t;
    j->m = m;
    j->n = n;
    j->d = d;
    j->x = gk__cpu_rbf_rows_of(x);
    j->y = gk__cpu_rbf_rows_of(y);
    j->threads = gk__cpu_threads(st);
    size_t per = GK_KERNEL_TILE_ELEMS / (d > 0 ? d : 1);
    j->mb = clamp_size(per / 4, 8, mb_max < GK_KERNEL_TILE_ROWS ? mb_max : GK_KERNEL_TILE_ROWS);
    j->nb = clamp_size(per, 8, GK_KERNEL_TILE_COLS);
    if (j->mb > m)
        j->mb = m;
    if (j->nb > n)
        j->nb = n;
    const double u = 0x1p-53, gd = (double)d * u / (1.0 - (double)d * u);
    j->beta = gk__cpu_rbf_beta(d, u, gd);
    j->tol = t == GK_FLOAT32 ? GK_KERNEL_SQDIST_TOL_F32 : GK_KERNEL_SQDIST_TOL_F64;
    j->sgemm = t == GK_FLOAT32 && j->pass == GK_CPU_PASS_IP && sgemm_suffices(j, d);
    /* kernel_matrix's sgemm form writes into the output, with neither prepared rows nor a
     * tile; the linear kernel, which has nothing to finish, over wide blocks of y (few, large
     * sgemm calls, as fast as one), the others over tiles that stay in cache for the epilogue. */
    const int direct = j->sgemm && j->direct;
    if (direct && j->finish == GK_CPU_FINISH_NONE) {
        size_t wide = 4 * per;
        j->nb = n < wide ? n : wide > j->nb ? wide : j->nb;
    }
    size_t rows = direct ? 0 : (j->mb + j->nb) * d, tile = direct ? 0 : j->mb * j->nb;
    size_t ftile = j->sgemm && !direct ? (j->mb * j->nb + 1) / 2 : 0;
    /* a tile's rows, values and norms (in whole cache lines, so members share none); the
     * centre and its rounded copy (d + 1 doubles each), once */
    j->tile_elems = (rows + tile + j->mb + 2 * j->nb + ftile + 7) / 8 * 8;
    size_t tiles = (size_t)j->threads, centre = 2 * d + 2;
    size_t bytes = (tiles * j->tile_elems + centre) * sizeof(double);
    j->mem = NULL;
    if (gk__aligned_alloc(&j->mem, 64, bytes) != 0)
        return gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %zu bytes of scratch", bytes);
    j->c = (double *)j->mem + tiles * j->tile_elems;
    lay_out(j, j->mem);
    for (size_t f = 0; f < d; f++)
        j->c[f] = 0.0;
    if (j->pass == GK_CPU_PASS_SQDIST && d > 0) {
        /* The rbf forms' centre, about the mean of sampled rows; any centre keeps the bound, a
         * good one keeps the distances' cancellation to the data's spread. A feature whose mean
         * is not finite is not centred: the other rows stay accurate. */
        gk__cpu_rbf_mean(t, m, n, d, j->x, j->y, j->c, j->c + d + 1);
        for (size_t f = 0; f < d; f++)
            if (!isfinite(j->c[f]))
                j->c[f] = 0.0;
    }
    return GK_OK;
}

void gk__cpu_job_member(const gk_cpu_job *j, int member, gk_cpu_job *mj)
{
    *mj = *j;
    mj->threads = 1;
    mj->ys_from = SIZE_MAX;
    lay_out(mj, (double *)j->mem + (size_t)member * j->tile_elems);
}

gk_status gk__cpu_job_team_scratch(gk_cpu_job *j, int nt, size_t per, void **mem)
{
    size_t bytes = (size_t)nt * per;
    *mem = NULL;
    if (gk__aligned_alloc(mem, 64, bytes) != 0) {
        gk__cpu_job_end(j);
        return gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %zu bytes of scratch", bytes);
    }
    return GK_OK;
}

size_t gk__cpu_job_task_rows(const gk_cpu_job *j, size_t m, size_t want)
{
    size_t mb = j->mb;
    if ((m + mb - 1) / mb >= want)
        return mb;
    mb = (m + want - 1) / want;
    mb = mb > GK_CPU_JOB_MIN_ROWS ? mb : GK_CPU_JOB_MIN_ROWS;
    return mb < j->mb ? mb : j->mb;
}

void gk__cpu_job_end(gk_cpu_job *j)
{
    gk__free(j->mem);
    j->mem = NULL;
}
