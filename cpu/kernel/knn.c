/* SPDX-License-Identifier: MIT */
/* knn.c - exact k nearest neighbours: each row keeps its k best (distance, index) pairs in a
 * bounded max-heap while the tiles of y go by, so memory is the team's panels' heaps, never
 * m x n. */
#include <math.h>
#include <omp.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "error.h"
#include "kernel/kernel.h"

/* Whether (da, ja) comes before (db, jb): nearer first, equal distances by the smaller index,
 * NaN after every number. */
static inline int before(double da, int64_t ja, double db, int64_t jb)
{
    if (da < db)
        return 1;
    if (da > db)
        return 0;
    if (da == db)
        return ja < jb;
    return isnan(da) ? isnan(db) && ja < jb : 1;
}

/* Restores the max-heap (by `before`, the last pair on top) below slot p of n. */
static void swap_entries(double *hd, int64_t *hi, size_t a, size_t b)
{
    double td = hd[a];
    int64_t ti = hi[a];
    hd[a] = hd[b];
    hi[a] = hi[b];
    hd[b] = td;
    hi[b] = ti;
}

static void sift_down(double *hd, int64_t *hi, size_t n, size_t p)
{
    for (;;) {
        size_t c = 2 * p + 1;
        if (c >= n)
            return;
        if (c + 1 < n && before(hd[c], hi[c], hd[c + 1], hi[c + 1]))
            c++;
        if (!before(hd[p], hi[p], hd[c], hi[c]))
            return;
        swap_entries(hd, hi, p, c);
        p = c;
    }
}

static void sift_up(double *hd, int64_t *hi, size_t p)
{
    while (p > 0) {
        size_t q = (p - 1) / 2;
        if (!before(hd[q], hi[q], hd[p], hi[p]))
            return;
        swap_entries(hd, hi, p, q);
        p = q;
    }
}

typedef struct knn_arg {
    size_t k, j0, nb;
    double *hd;  /* mb x k heaps */
    int64_t *hi; /* their indices */
    size_t *cnt; /* pairs in each heap */
} knn_arg;

/* Values a full heap skips a block at a time: the first jj on, in steps of GK_KNN_SKIP, whose
 * block may hold a value below top (blocks wholly at or above it, or NaN, cannot enter). */
#define GK_KNN_SKIP ((size_t)16)
GK_CPU_CLONES
static size_t skip_blocks(const double *v, size_t jj, size_t nb, double top)
{
    for (; jj + GK_KNN_SKIP <= nb; jj += GK_KNN_SKIP) {
        int any = 0;
#pragma omp simd reduction(| : any)
        for (size_t c = 0; c < GK_KNN_SKIP; c++)
            any |= v[jj + c] < top;
        if (any)
            break;
    }
    return jj;
}

/* Offers row r's tile values (columns j0 onward, in increasing index) to its heap. Once the heap
 * is full, a value enters only below its top: every kept index is smaller than the columns to
 * come, so an equal distance never goes before it, and while the top is a number neither does
 * NaN. */
static void offer_row(void *arg, const gk_cpu_job *j, size_t r, double *v)
{
    const knn_arg *a = arg;
    gk__cpu_finish_row(j, a->nb, r, 0, v);
    double *hd = a->hd + r * a->k;
    int64_t *hi = a->hi + r * a->k;
    size_t c = a->cnt[r], jj = 0;
    for (; jj < a->nb && c < a->k; jj++) {
        hd[c] = v[jj];
        hi[c] = (int64_t)(a->j0 + jj);
        sift_up(hd, hi, c++);
    }
    while (jj < a->nb) {
        if (!isnan(hd[0])) {
            jj = skip_blocks(v, jj, a->nb, hd[0]);
            if (jj >= a->nb)
                break;
        }
        size_t end = a->nb - jj < GK_KNN_SKIP ? a->nb : jj + GK_KNN_SKIP;
        for (; jj < end; jj++) {
            int64_t idx = (int64_t)(a->j0 + jj);
            if (before(v[jj], idx, hd[0], hi[0])) {
                hd[0] = v[jj];
                hi[0] = idx;
                sift_down(hd, hi, a->k, 0);
            }
        }
    }
    a->cnt[r] = c;
}

/* The k kept pairs of row i, sorted, as the outputs give them: squared distances again in the
 * difference form (where the expanded form's rounding could tell equal ones apart), the root
 * taken for euclidean, rounded to the dtype, then in order again, so that equal outputs go by
 * index. The order barely changes, so the insertion sort costs about k steps. */
static void settle(const gk_cpu_job *j, int root, size_t i, size_t k, double *hd, int64_t *hi)
{
    for (size_t e = 0; e < k; e++) {
        int64_t idx = hi[e];
        double v = j->pass == GK_CPU_PASS_SQDIST
                       ? gk__cpu_sqdist_direct(j->t, j->d, j->x, i, j->y, (size_t)idx)
                       : hd[e];
        v = root ? sqrt(v) : v;
        v = j->t == GK_FLOAT32 ? (double)(float)v : v;
        size_t p = e;
        for (; p > 0 && before(v, idx, hd[p - 1], hi[p - 1]); p--) {
            hd[p] = hd[p - 1];
            hi[p] = hi[p - 1];
        }
        hd[p] = v;
        hi[p] = idx;
    }
}

/* The heaps of all the team's panels hold at most this many pairs (32 MiB): fewer rows per
 * panel for large k. */
#define GK_KNN_HEAP_PAIRS ((size_t)1 << 21)

/* Each member of the team takes panels of rows of x of its own and goes along all of y for
 * them, offering each tile's rows (a one-thread gemm or L1 loop, the epilogue) to the rows'
 * heaps, then sorts and settles the panel's rows: no region per tile, and every gemm has the
 * panel's rows (split over the team, a tile's rows were 16 a thread on 16 threads). */
gk_status gk__cpu_knn(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n, size_t d,
                      size_t k, const void *x, const void *y, void *dist, int64_t *index)
{
    if (t != GK_FLOAT32 && t != GK_FLOAT64)
        return gk__cpu_bad_dtype(t);
    gk_cpu_job j = {0};
    gk__cpu_job_metric(&j, metric);
    /* Euclidean neighbours are the squared ones: the root is taken of the k kept. */
    int root = j.finish == GK_CPU_FINISH_SQRT;
    if (root)
        j.finish = GK_CPU_FINISH_NONE;
    size_t team_est = (size_t)gk__cpu_threads(st);
    size_t rows = GK_KNN_HEAP_PAIRS / (k * team_est);
    gk_status s = gk__cpu_job_begin(st, &j, t, m, n, d, x, y, rows > 0 ? rows : 1);
    if (s != GK_OK)
        return s;
    size_t mb = gk__cpu_job_task_rows(&j, m, (size_t)j.threads);
    size_t panels = (m + mb - 1) / mb;
    int nt = gk__cpu_region(j.threads, panels);
    size_t per = (j.mb * (k * (sizeof(double) + sizeof(int64_t)) + sizeof(size_t)) + 63) / 64 * 64;
    void *mem;
    if ((s = gk__cpu_job_team_scratch(&j, nt, per, &mem)) != GK_OK)
        return s;
    const gk_cpu_job *cj = &j;
    gk__cpu_blas_serial_enter();
    GK_CPU_PARALLEL_IF(nt > 1, "omp parallel num_threads(nt)", {
        gk_cpu_job mj;
        int me = omp_get_thread_num();
        gk__cpu_job_member(cj, me, &mj);
        knn_arg a = {k, 0, 0, (double *)((char *)mem + (size_t)me * per), NULL, NULL};
        a.hi = (int64_t *)(a.hd + mj.mb * k);
        a.cnt = (size_t *)(a.hi + mj.mb * k);
        _Pragma("omp for schedule(dynamic, 1)") for (size_t p = 0; p < panels; p++)
        {
            size_t i0 = p * mb, pr = m - i0 < mb ? m - i0 : mb;
            for (size_t r = 0; r < pr; r++)
                a.cnt[r] = 0;
            for (size_t j0 = 0; j0 < n; j0 += mj.nb) {
                a.j0 = j0;
                a.nb = n - j0 < mj.nb ? n - j0 : mj.nb;
                gk__cpu_job_tile_member(&mj, i0, pr, j0, a.nb, offer_row, &a);
            }
            for (size_t r = 0; r < pr; r++) {
                double *hd = a.hd + r * k;
                int64_t *hi = a.hi + r * k;
                /* Heap sort: the top (the last pair) goes to the end, k times. */
                for (size_t e = k; e > 1; e--) {
                    swap_entries(hd, hi, 0, e - 1);
                    sift_down(hd, hi, e - 1, 0);
                }
                settle(&mj, root, i0 + r, k, hd, hi);
                size_t at = (i0 + r) * k;
                for (size_t e = 0; e < k; e++) {
                    if (t == GK_FLOAT32)
                        ((float *)dist)[at + e] = (float)hd[e];
                    else
                        ((double *)dist)[at + e] = hd[e];
                    index[at + e] = hi[e];
                }
            }
        }
    });
    gk__cpu_blas_serial_leave();
    gk__free(mem);
    gk__cpu_job_end(&j);
    return GK_OK;
}
