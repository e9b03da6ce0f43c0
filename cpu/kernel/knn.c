/* SPDX-License-Identifier: MIT */
/* knn.c - exact k nearest neighbours: each row keeps its k best (distance, index) pairs in a
 * bounded max-heap while the tiles of y go by, so memory is a panel's heaps, never m x n. */
#include <math.h>

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

/* Offers row r's tile values (columns j0 onward, in increasing index) to its heap. */
static void offer_row(void *arg, const gk_cpu_job *j, size_t r, double *v)
{
    const knn_arg *a = arg;
    gk__cpu_finish_row(j, a->nb, r, 0, v);
    double *hd = a->hd + r * a->k;
    int64_t *hi = a->hi + r * a->k;
    size_t c = a->cnt[r];
    for (size_t jj = 0; jj < a->nb; jj++) {
        int64_t idx = (int64_t)(a->j0 + jj);
        if (c < a->k) {
            hd[c] = v[jj];
            hi[c] = idx;
            sift_up(hd, hi, c++);
        } else if (before(v[jj], idx, hd[0], hi[0])) {
            hd[0] = v[jj];
            hi[0] = idx;
            sift_down(hd, hi, a->k, 0);
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

/* Heaps of a panel hold at most this many pairs (32 MiB): fewer rows per panel for large k. */
#define GK_KNN_HEAP_PAIRS ((size_t)1 << 21)

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
    size_t rows = GK_KNN_HEAP_PAIRS / k > 0 ? GK_KNN_HEAP_PAIRS / k : 1;
    gk_status s = gk__cpu_job_begin(st, &j, t, m, n, d, x, y, rows);
    if (s != GK_OK)
        return s;
    size_t bytes = j.mb * (k * (sizeof(double) + sizeof(int64_t)) + sizeof(size_t));
    void *mem = NULL;
    if (gk__aligned_alloc(&mem, 64, bytes) != 0) {
        gk__cpu_job_end(&j);
        return gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %zu bytes of scratch", bytes);
    }
    knn_arg a = {k, 0, 0, mem, NULL, NULL};
    a.hi = (int64_t *)(a.hd + j.mb * k);
    a.cnt = (size_t *)(a.hi + j.mb * k);
    for (size_t i0 = 0; s == GK_OK && i0 < m; i0 += j.mb) {
        size_t mb = m - i0 < j.mb ? m - i0 : j.mb;
        gk__cpu_job_rows(&j, i0, mb);
        for (size_t r = 0; r < mb; r++)
            a.cnt[r] = 0;
        for (size_t j0 = 0; s == GK_OK && j0 < n; j0 += j.nb) {
            a.j0 = j0;
            a.nb = n - j0 < j.nb ? n - j0 : j.nb;
            s = gk__cpu_job_tile(st, &j, i0, mb, j0, a.nb, offer_row, &a);
        }
        if (s != GK_OK)
            break;
        int team = j.threads > 1 && mb * k > 4096;
        GK_CPU_PARALLEL_IF(
            team, "omp parallel for num_threads(j.threads) schedule(static)",
            for (size_t r = 0; r < mb; r++) {
                double *hd = a.hd + r * k;
                int64_t *hi = a.hi + r * k;
                /* Heap sort: the top (the last pair) goes to the end, k times. */
                for (size_t e = k; e > 1; e--) {
                    swap_entries(hd, hi, 0, e - 1);
                    sift_down(hd, hi, e - 1, 0);
                }
                settle(&j, root, i0 + r, k, hd, hi);
                size_t at = (i0 + r) * k;
                for (size_t e = 0; e < k; e++) {
                    if (t == GK_FLOAT32)
                        ((float *)dist)[at + e] = (float)hd[e];
                    else
                        ((double *)dist)[at + e] = hd[e];
                    index[at + e] = hi[e];
                }
            });
    }
    gk__free(mem);
    gk__cpu_job_end(&j);
    return s;
}
