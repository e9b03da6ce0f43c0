/* SPDX-License-Identifier: MIT */
/* fgt.c - the CPU's rbf_matvec and kernel_matmul (Gaussian kernel, r columns of weights) at
 * 1 <= d <= 4 by the fast Gauss transform (docs/fgt.md). */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "cpu_vmath.h"
#include "error.h"
#include "fgt_params.h"

/* Box sides tried, in units of h = 1 / sqrt(gamma): smaller boxes need fewer terms (p) but
 * have more neighbours within the cut-off; the widest have no degree that meets the bound and
 * sum every pair within the cut-off directly (sparse data, large gamma). The cost model picks
 * one per call. */
static const double fgt_sides[] = {0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 3.0};
#define FGT_SIDES (sizeof fgt_sides / sizeof fgt_sides[0])

/* The cost model's constants, in multiply-adds of the expansions (fgt_params.h): a pair summed
 * by the difference form (float32 and float64), and a pair summed directly inside the transform
 * (exponents in double through the vector exp). */
#define FGT_DIFF_PAIR_F32 1.0
#define FGT_DIFF_PAIR_F64 2.0
#define FGT_NEAR_PAIR 4.0
/* kernel_matmul (r > 1) sums directly by its tiles (cpu/kernel/matmul.c): a pair (distance,
 * exp, the epilogue) at about 2.2 of the difference form's float32 pairs (float64: 3.4), and
 * each column a multiply-add of its dgemm at about 0.1 (2e4^2 x 3 N(0,1) on 2 cores, 2 to 16
 * columns; clustered data cost the tiles up to 3 times more). */
#define FGT_TILE_PAIR_F32 2.0
#define FGT_TILE_PAIR_F64 3.0
#define FGT_TILE_COL 0.1
/* ... a further column of a pair the transform sums directly: a multiply-add in a dgemm, the
 * exponential shared (measured: each column about 4% of one column's call, 1e5^2 x 3 clusters
 * at gamma 2, where near pairs are nearly all the work) */
#define FGT_NEAR_COL 0.2
/* ... a cell of a target box's neighbourhood looked at, a near source gathered, a point binned
 * for one candidate side (every side is tried, so the choice itself costs this for each) */
#define FGT_VISIT 7.0
#define FGT_GATHER_COST 11.0
#define FGT_BIN_COST 8.0
/* How much cheaper than direct summation the estimate must be for the transform to run. */
#define FGT_MARGIN 1.5
/* Cells of the dense grid and bytes of moments a call may take: at most 2^24 cells, and at
 * most 4 a point (with 4096 more), as each cell costs a few operations per side to bin. */
#define FGT_MAX_CELLS ((size_t)1 << 24)
#define FGT_CELLS_PER_POINT 4
#define FGT_MAX_MOMENT_BYTES ((size_t)1 << 30)
/* Target boxes whose neighbourhoods the cost model visits (evenly spaced). */
#define FGT_SAMPLE_BOXES ((size_t)256)

/* One side of the transform: the points binned into the occupied boxes of the grid. */
typedef struct fgt_side {
    size_t count, boxes;
    uint32_t *cell;  /* each point's cell */
    int32_t *box_of; /* cells -> box, -1 where empty */
    size_t *start;   /* boxes + 1: where each box's points begin in the sorted order */
    uint32_t *bcell; /* each box's cell */
    int32_t *bk;     /* each box's cell coordinates, 4 a box */
    size_t *perm;    /* sorted position -> the row's index */
    double *off;     /* sorted offsets from the box centres, count x d, units of h */
    double *w;       /* sources: the sorted weights, count x r */
    size_t r;        /* sources: the columns of weights */
    size_t largest;  /* points of the largest box */
} fgt_side;

static double fgt_at(const void *p, int f64, size_t i)
{
    return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* The cell of point row (d coordinates) and its per-dimension indices. */
static uint32_t fgt_cell_of(const gk_fgt_grid *g, const void *rows, int f64, size_t row, size_t *k)
{
    size_t c = 0;
    for (int i = 0; i < g->d; i++) {
        double q = floor((fgt_at(rows, f64, row * (size_t)g->d + (size_t)i) - g->lo[i]) / g->hw);
        size_t ki = q <= 0.0 ? 0 : q >= (double)(g->nb[i] - 1) ? g->nb[i] - 1 : (size_t)q;
        k[i] = ki;
        c = c * g->nb[i] + ki;
    }
    return (uint32_t)c;
}

static void fgt_cell_coords(const gk_fgt_grid *g, uint32_t cell, long *k)
{
    size_t c = cell;
    for (int i = g->d - 1; i >= 0; i--) {
        k[i] = (long)(c % g->nb[i]);
        c /= g->nb[i];
    }
}

/* Squared gap between the cells (the boxes' points may stray by the slack), units of h. */
static double fgt_gap2(const gk_fgt_grid *g, const long *a, const int32_t *b)
{
    double s = 0.0;
    for (int i = 0; i < g->d; i++) {
        long dk = labs(a[i] - (long)b[i]);
        double gap = dk > 1 ? (double)(dk - 1) * g->side - 2.0 * g->slack : 0.0;
        s += gap > 0.0 ? gap * gap : 0.0;
    }
    return s;
}

/* Calls visit(ctx, box) for each occupied box of `src` within the cut-off of target cell kc,
 * in increasing cell order (through the neighbourhood, or the list of boxes where shorter). */
typedef void (*fgt_visit)(void *ctx, size_t box);
static void fgt_neighbours(const gk_fgt_grid *g, const fgt_side *src, const long *kc,
                           fgt_visit visit, void *ctx)
{
    long lo[4], hi[4];
    int32_t k[4];
    double volume = 1.0;
    for (int i = 0; i < g->d; i++) {
        lo[i] = kc[i] - g->reach[i] > 0 ? kc[i] - g->reach[i] : 0;
        hi[i] = kc[i] + g->reach[i] < (long)g->nb[i] - 1 ? kc[i] + g->reach[i] : (long)g->nb[i] - 1;
        volume *= (double)(hi[i] - lo[i] + 1);
    }
    if (volume > (double)src->boxes) {
        for (size_t b = 0; b < src->boxes; b++)
            if (fgt_gap2(g, kc, src->bk + 4 * b) < g->r2)
                visit(ctx, b);
        return;
    }
    for (int i = 0; i < g->d; i++)
        k[i] = (int32_t)lo[i];
    for (;;) {
        size_t c = 0;
        for (int i = 0; i < g->d; i++)
            c = c * g->nb[i] + (size_t)k[i];
        if (src->box_of[c] >= 0 && fgt_gap2(g, kc, k) < g->r2)
            visit(ctx, (size_t)src->box_of[c]);
        int i = g->d - 1;
        while (i >= 0 && k[i] == hi[i]) {
            k[i] = (int32_t)lo[i];
            i--;
        }
        if (i < 0)
            return;
        k[i]++;
    }
}

/* ------------------------------------------------------------------------------------------
 * Binning.
 * ---------------------------------------------------------------------------------------- */

static void fgt_side_free(fgt_side *s)
{
    gk__free(s->cell);
    gk__free(s->box_of);
    gk__free(s->start);
    gk__free(s->bcell);
    gk__free(s->bk);
    gk__free(s->perm);
    gk__free(s->off);
    gk__free(s->w);
    memset(s, 0, sizeof *s);
}

static int fgt_alloc(void *p, size_t count, size_t size)
{
    void **pp = p;
    *pp = NULL;
    return count > SIZE_MAX / size || gk__aligned_alloc(pp, 64, count * size + (count == 0)) != 0;
}

/* Each point's cell and the occupied boxes (in cell order); 1 if out of memory. */
static int fgt_bin(const gk_fgt_grid *g, int team, const void *rows, int f64, size_t count,
                   fgt_side *s)
{
    s->count = count;
    if (fgt_alloc(&s->cell, count, sizeof *s->cell) ||
        fgt_alloc(&s->box_of, g->cells, sizeof *s->box_of))
        return 1;
    int nt = gk__cpu_region(team, count / 4096);
    GK_CPU_PARALLEL_IF(
        nt > 1, "omp parallel for num_threads(nt) schedule(static)",
        for (size_t r = 0; r < count; r++) {
            size_t k[4];
            s->cell[r] = fgt_cell_of(g, rows, f64, r, k);
        });
    for (size_t c = 0; c < g->cells; c++)
        s->box_of[c] = 0;
    for (size_t r = 0; r < count; r++)
        s->box_of[s->cell[r]]++; /* counts for now */
    size_t boxes = 0;
    for (size_t c = 0; c < g->cells; c++)
        boxes += s->box_of[c] > 0;
    s->boxes = boxes;
    if (fgt_alloc(&s->start, boxes + 1, sizeof *s->start) ||
        fgt_alloc(&s->bcell, boxes, sizeof *s->bcell) ||
        fgt_alloc(&s->bk, 4 * boxes, sizeof *s->bk))
        return 1;
    size_t b = 0, at = 0;
    s->largest = 0;
    for (size_t c = 0; c < g->cells; c++) {
        size_t n = (size_t)s->box_of[c];
        if (n == 0) {
            s->box_of[c] = -1;
            continue;
        }
        s->start[b] = at;
        s->bcell[b] = (uint32_t)c;
        s->box_of[c] = (int32_t)b;
        long k[4];
        fgt_cell_coords(g, (uint32_t)c, k);
        for (int i = 0; i < 4; i++)
            s->bk[4 * b + (size_t)i] = i < g->d ? (int32_t)k[i] : 0;
        s->largest = n > s->largest ? n : s->largest;
        at += n;
        b++;
    }
    s->start[boxes] = at;
    return 0;
}

/* The sorted order, the offsets from the box centres and (sources) the cols columns of weights
 * (w: n x cols, row-major); 1 if out of memory. */
static int fgt_sort(const gk_fgt_grid *g, int team, const void *rows, int f64, const void *w,
                    size_t cols, fgt_side *s)
{
    size_t d = (size_t)g->d;
    s->r = cols;
    if (fgt_alloc(&s->perm, s->count, sizeof *s->perm) ||
        fgt_alloc(&s->off, s->count * d, sizeof *s->off) ||
        (w != NULL &&
         (s->count > SIZE_MAX / cols || fgt_alloc(&s->w, s->count * cols, sizeof *s->w))))
        return 1;
    size_t *cursor;
    if (fgt_alloc(&cursor, s->boxes, sizeof *cursor))
        return 1;
    memcpy(cursor, s->start, s->boxes * sizeof *cursor);
    for (size_t r = 0; r < s->count; r++)
        s->perm[cursor[s->box_of[s->cell[r]]]++] = r;
    gk__free(cursor);
    int nt = gk__cpu_region(team, s->boxes);
    GK_CPU_PARALLEL_IF(
        nt > 1, "omp parallel for num_threads(nt) schedule(dynamic, 16)",
        for (size_t b = 0; b < s->boxes; b++) {
            long k[4];
            fgt_cell_coords(g, s->bcell[b], k);
            for (size_t q = s->start[b]; q < s->start[b + 1]; q++) {
                size_t r = s->perm[q];
                for (size_t i = 0; i < d; i++)
                    s->off[q * d + i] =
                        (fgt_at(rows, f64, r * d + i) - gk__fgt_centre(g, (int)i, (size_t)k[i])) *
                        g->sg;
                for (size_t c = 0; w != NULL && c < s->r; c++)
                    s->w[q * s->r + c] = fgt_at(w, f64, r * s->r + c);
            }
        });
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * The cost model: the call's cost by this grid, from the boxes' occupancy and a sample of the
 * target boxes' neighbourhoods.
 * ---------------------------------------------------------------------------------------- */

/* With r columns of weights, the work a column repeats and the work the columns share: a pair
 * of boxes' translation or a pass over the grid per column (the p x p matrices shared); a
 * directly summed pair's multiply-add per column (its exponential shared); a point's moments or
 * Taylor polynomial per column (its powers and power tensor shared). r = 1 is the cost model of
 * fgt_params.h. The points' work is dgemms, where each column after the first costs
 * FGT_MORE_COLS of the first's (measured: 0.05 of a call with one column at 1e5^2 x 3 U[0,1)
 * gamma 0.5, 0.2 at N(0,1) gamma 1/3, the grid strategy on 2 cores, where the points' work is
 * about half); translations cost each column in full (their arrays are streamed once a column:
 * 2e5^2 x 3 clusters at gamma 1/3, the grid's 2744 cells at degree 18, took 1.2 s with one
 * column and 6.1 s with four). */
#define FGT_MORE_COLS 0.2

static double fgt_cols(size_t r)
{
    return 1.0 + (double)(r - 1) * FGT_MORE_COLS;
}

static double fgt_h2l_cost_cols(int d, int p, size_t r)
{
    double shared = 2.0 * d * p * p;
    return shared + (double)r * (gk__fgt_h2l_cost(d, p) - shared);
}

static double fgt_near_cost_cols(size_t r)
{
    return FGT_NEAR_PAIR + (double)(r - 1) * FGT_NEAR_COL;
}

static double fgt_point_cost_cols(int d, int p, size_t r)
{
    return (double)(d * p) + fgt_cols(r) * (gk__fgt_point_cost(d, p) - (double)(d * p));
}

/* Whether a pair of boxes of ns sources and nt targets is summed directly (gk__fgt_pair_direct
 * for r columns). */
static int fgt_pair_direct(double ns, double nt, int d, int p, size_t r)
{
    return p == 0 || ns * nt * fgt_near_cost_cols(r) <= fgt_h2l_cost_cols(d, p, r);
}

typedef struct fgt_estimate {
    const fgt_side *src, *tgt;
    double nt, h2l, near, cost;
    int d, p, expands;
    size_t r;
} fgt_estimate;

static void fgt_estimate_pair(void *ctx, size_t b)
{
    fgt_estimate *e = ctx;
    double ns = (double)(e->src->start[b + 1] - e->src->start[b]);
    if (fgt_pair_direct(ns, e->nt, e->d, e->p, e->r)) {
        e->cost += ns * (e->nt * e->near + FGT_GATHER_COST);
    } else {
        e->cost += e->h2l;
        e->expands = 1;
    }
}

/* The pairs strategy's cost for r columns of weights. */
static double fgt_cost(const gk_fgt_grid *g, const fgt_side *src, const fgt_side *tgt, size_t r)
{
    fgt_estimate e = {
        src,  tgt, 0.0, fgt_h2l_cost_cols(g->d, g->p, r), fgt_near_cost_cols(r), 0.0, g->d,
        g->p, 0,   r};
    size_t step = tgt->boxes > FGT_SAMPLE_BOXES ? tgt->boxes / FGT_SAMPLE_BOXES : 1, seen = 0;
    double pairs = 0.0, pc = g->p > 0 ? fgt_point_cost_cols(g->d, g->p, r) : 0.0;
    for (size_t b = 0; b < tgt->boxes; b += step) {
        long kc[4];
        fgt_cell_coords(g, tgt->bcell[b], kc);
        e.nt = (double)(tgt->start[b + 1] - tgt->start[b]);
        e.expands = 0;
        double volume = 1.0;
        for (int i = 0; i < g->d; i++)
            volume *= (double)(2 * g->reach[i] + 1);
        e.cost += fmin(volume, (double)src->boxes) * FGT_VISIT;
        fgt_neighbours(g, src, kc, fgt_estimate_pair, &e);
        pairs += e.expands ? e.nt * pc : 0.0;
        seen++;
    }
    double scale = (double)tgt->boxes / (double)seen;
    return (e.cost + pairs) * scale + (double)src->count * pc +
           4.0 * (double)g->d * (double)(src->count + tgt->count) + 4.0 * (double)g->cells;
}

/* ------------------------------------------------------------------------------------------
 * The transform.
 * ---------------------------------------------------------------------------------------- */

/* pw[k] = v^k / k! (fact) or v^k, k < p. */
static void fgt_powers(int p, double v, int fact, double *pw)
{
    pw[0] = 1.0;
    for (int k = 1; k < p; k++)
        pw[k] = pw[k - 1] * v / (fact ? (double)k : 1.0);
}

/* buf[0 .. p^d) = w prod_i pw[i][a_i] (tensor order, a_0 slowest). */
static void fgt_outer(int d, int p, double w, const double *pw, double *buf)
{
    size_t len = 1;
    buf[0] = w;
    for (int i = 0; i < d; i++) {
        const double *pi = pw + (size_t)i * (size_t)p;
        for (size_t idx = len; idx-- > 0;) {
            double v = buf[idx];
            for (int a = p; a-- > 0;)
                buf[idx * (size_t)p + (size_t)a] = v * pi[a];
        }
        len *= (size_t)p;
    }
}

/* Points whose power tensors several columns take through one dgemm: at most FGT_ROWS and
 * 2^16 doubles of them (a point's tensor has p^d terms; none where p = 0). */
#define FGT_ROWS ((size_t)32)
static size_t fgt_rows(size_t terms)
{
    size_t rows = terms > 0 ? ((size_t)1 << 16) / terms : FGT_ROWS;
    return rows < 1 ? 1 : rows > FGT_ROWS ? FGT_ROWS : rows;
}

/* The moments of source box b for the columns c0 .. c0 + rc of its weights: A[t][c] = sum_s
 * w_s(c0 + c) prod_i v_i^a_i / a_i! (a: p^d x rc, the columns of a term together). One column
 * of weights takes its weight into the outer product, as rbf_matvec always has; several take
 * the points' tensors (buf: fgt_rows(p^d) of them) into a dgemm with their weights. */
GK_CPU_CLONES
static void fgt_moments(const gk_fgt_grid *g, const fgt_side *s, size_t b, size_t c0, size_t rc,
                        double *pw, double *buf, double *a)
{
    int d = g->d, p = g->p;
    size_t terms = gk__fgt_terms(d, p), r = s->r, rows = fgt_rows(terms);
    for (size_t t = 0; t < terms * rc; t++)
        a[t] = 0.0;
    for (size_t q0 = s->start[b]; q0 < s->start[b + 1]; q0 += rows) {
        size_t nq = s->start[b + 1] - q0 < rows ? s->start[b + 1] - q0 : rows;
        for (size_t q = q0; q < q0 + nq; q++) {
            for (int i = 0; i < d; i++)
                fgt_powers(p, s->off[q * (size_t)d + (size_t)i], 1, pw + (size_t)i * (size_t)p);
            if (r == 1) {
                fgt_outer(d, p, s->w[q], pw, buf);
                for (size_t t = 0; t < terms; t++)
                    a[t] += buf[t];
            } else {
                fgt_outer(d, p, 1.0, pw, buf + (q - q0) * terms);
            }
        }
        if (r > 1)
            gk__cpu_gemm_serial(GK_FLOAT64, GK_TRANS, GK_NO_TRANS, terms, rc, nq, 1.0, buf, terms,
                                s->w + q0 * r + c0, r, 1.0, a, rc);
    }
}

/* Per thread: what one target box needs. */
typedef struct fgt_work {
    const gk_fgt_grid *g;
    const fgt_side *src, *tgt;
    const double *mom;       /* moments of the boxes that have them, p^d x r a slot */
    const int64_t *mom_slot; /* source box -> its moments' slot, -1 if none */
    const gk_cpu_vmath *vm;
    size_t tb;   /* the target box */
    double *acc; /* the targets' direct sums, a target's r columns together */
    double *l;   /* the target box's Taylor coefficients, p^d x r */
    double *s1, *s2, *mat, *herm;
    double *ex;   /* the exponents of FGT_NEAR_ROWS targets (one where r = 1), FGT_GATHER each */
    double *rows; /* fgt_rows(p^d) points' power tensors */
    /* the near sources gathered so far, offsets from the target box's centre (d rows of
     * FGT_GATHER), and their weights (FGT_GATHER x r) */
    double *gx, *gw;
    size_t gathered;
    int expands;
} fgt_work;

/* Near sources summed directly, FGT_GATHER at a time: the target box's targets against them
 * as one vector of exponents for the vector exp. */
#define FGT_GATHER ((size_t)1024)

/* Several columns: the exponentials of FGT_NEAR_ROWS targets against the gathered sources go
 * into one dgemm with the sources' weights. */
#define FGT_NEAR_ROWS ((size_t)32)

GK_CPU_CLONES
static void fgt_near_flush(fgt_work *wk)
{
    const fgt_side *tgt = wk->tgt;
    size_t d = (size_t)wk->g->d, cnt = wk->gathered, r = wk->src->r;
    size_t t0 = tgt->start[wk->tb], t1 = tgt->start[wk->tb + 1];
    size_t chunk = r == 1 ? 1 : FGT_NEAR_ROWS;
    const double *restrict g0 = wk->gx, *restrict g1 = g0 + FGT_GATHER,
                           *restrict g2 = g1 + FGT_GATHER, *restrict g3 = g2 + FGT_GATHER;
    const double *restrict gw = wk->gw;
    for (size_t tc = t0; tc < t1; tc += chunk) {
        size_t tn = t1 - tc < chunk ? t1 - tc : chunk;
        for (size_t t = tc; t < tc + tn; t++) {
            double *restrict e = wk->ex + (t - tc) * FGT_GATHER;
            const double *u = tgt->off + t * d;
            double u0 = u[0], u1 = d > 1 ? u[1] : 0.0, u2 = d > 2 ? u[2] : 0.0,
                   u3 = d > 3 ? u[3] : 0.0;
            switch (d) {
            case 1:
                for (size_t q = 0; q < cnt; q++)
                    e[q] = -(u0 - g0[q]) * (u0 - g0[q]);
                break;
            case 2:
                for (size_t q = 0; q < cnt; q++)
                    e[q] = -((u0 - g0[q]) * (u0 - g0[q]) + (u1 - g1[q]) * (u1 - g1[q]));
                break;
            case 3:
                for (size_t q = 0; q < cnt; q++)
                    e[q] = -((u0 - g0[q]) * (u0 - g0[q]) + (u1 - g1[q]) * (u1 - g1[q]) +
                             (u2 - g2[q]) * (u2 - g2[q]));
                break;
            default:
                for (size_t q = 0; q < cnt; q++)
                    e[q] = -((u0 - g0[q]) * (u0 - g0[q]) + (u1 - g1[q]) * (u1 - g1[q]) +
                             (u2 - g2[q]) * (u2 - g2[q]) + (u3 - g3[q]) * (u3 - g3[q]));
                break;
            }
            wk->vm->exp_f64(cnt, e, e, 0);
            if (r > 1)
                continue;
            /* eight partial sums, so the loop vectorizes without reassociation by the compiler */
            double part[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            size_t q = 0;
            for (; q + 8 <= cnt; q += 8)
                for (size_t l = 0; l < 8; l++)
                    part[l] += e[q + l] * gw[q + l];
            for (; q < cnt; q++)
                part[q % 8] += e[q] * gw[q];
            wk->acc[t - t0] += ((part[0] + part[1]) + (part[2] + part[3])) +
                               ((part[4] + part[5]) + (part[6] + part[7]));
        }
        if (r > 1)
            gk__cpu_gemm_serial(GK_FLOAT64, GK_NO_TRANS, GK_NO_TRANS, tn, r, cnt, 1.0, wk->ex,
                                FGT_GATHER, gw, r, 1.0, wk->acc + (tc - t0) * r, r);
    }
    wk->gathered = 0;
}

/* out += M applied along dimension i of the p^d x r tensor in (M: p x p, row-major; the r
 * columns of a term together, so they are the innermost run of every loop). */
GK_CPU_CLONES
static void fgt_apply_dim(int d, int p, int i, size_t r, const double *m, const double *in,
                          double *out)
{
    size_t pp = (size_t)p, outer = 1, inner = r;
    for (int j = 0; j < i; j++)
        outer *= pp;
    for (int j = i + 1; j < d; j++)
        inner *= pp;
    if (inner == 1) {
        /* the last dimension: out[ob][k] += sum_j in[ob][j] M[k][j], as rows of M's transpose
         * added along k, so the inner loop runs over contiguous k */
        double mt[GK_FGT_MAX_P * GK_FGT_MAX_P];
        for (size_t k = 0; k < pp; k++)
            for (size_t j = 0; j < pp; j++)
                mt[j * pp + k] = m[k * pp + j];
        for (size_t ob = 0; ob < outer; ob++) {
            double *orow = out + ob * pp;
            const double *irow = in + ob * pp;
            for (size_t j = 0; j < pp; j++) {
                double v = irow[j];
                for (size_t k = 0; k < pp; k++)
                    orow[k] += v * mt[j * pp + k];
            }
        }
        return;
    }
    for (size_t ob = 0; ob < outer; ob++)
        for (size_t bk = 0; bk < pp; bk++) {
            double *orow = out + (ob * pp + bk) * inner;
            for (size_t aj = 0; aj < pp; aj++) {
                double mv = m[bk * pp + aj];
                const double *irow = in + (ob * pp + aj) * inner;
                for (size_t q = 0; q < inner; q++)
                    orow[q] += mv * irow[q];
            }
        }
}

/* L += (M_0 x ... x M_{d-1}) A for each of the r columns, one dimension at a time. */
static void fgt_h2l_apply(int d, int p, size_t r, const double *mat, const double *a, double *s1,
                          double *s2, double *l)
{
    size_t pp = (size_t)p, len = gk__fgt_terms(d, p) * r;
    const double *in = a;
    for (int i = 0; i < d; i++) {
        double *o = i == d - 1 ? l : i % 2 ? s2 : s1;
        if (i != d - 1)
            for (size_t q = 0; q < len; q++)
                o[q] = 0.0;
        fgt_apply_dim(d, p, i, r, mat + (size_t)i * pp * pp, in, o);
        in = o;
    }
}

static void fgt_pair(void *ctx, size_t b)
{
    fgt_work *wk = ctx;
    const gk_fgt_grid *g = wk->g;
    const fgt_side *src = wk->src, *tgt = wk->tgt;
    int d = g->d, p = g->p;
    size_t dd = (size_t)d, t0 = tgt->start[wk->tb], t1 = tgt->start[wk->tb + 1];
    size_t s0 = src->start[b], s1 = src->start[b + 1], ns = s1 - s0;
    const int32_t *kb = src->bk + 4 * b, *kc = tgt->bk + 4 * wk->tb;
    double delta[4];
    for (int i = 0; i < d; i++)
        delta[i] =
            (gk__fgt_centre(g, i, (size_t)kc[i]) - gk__fgt_centre(g, i, (size_t)kb[i])) * g->sg;
    size_t r = src->r;
    if (wk->mom_slot[b] < 0 || fgt_pair_direct((double)ns, (double)(t1 - t0), d, p, r)) {
        /* t - s = delta + u - v = u - (v - delta) */
        for (size_t q = s0; q < s1; q++) {
            if (wk->gathered == FGT_GATHER)
                fgt_near_flush(wk);
            for (size_t i = 0; i < dd; i++)
                wk->gx[i * FGT_GATHER + wk->gathered] = src->off[q * dd + i] - delta[i];
            for (size_t c = 0; c < r; c++)
                wk->gw[wk->gathered * r + c] = src->w[q * r + c];
            wk->gathered++;
        }
        return;
    }
    size_t pp = (size_t)p, terms = gk__fgt_terms(d, p);
    for (int i = 0; i < d; i++)
        gk__fgt_matrix(p, delta[i], wk->herm, wk->mat + (size_t)i * pp * pp);
    fgt_h2l_apply(d, p, r, wk->mat, wk->mom + (size_t)wk->mom_slot[b] * terms * r, wk->s1, wk->s2,
                  wk->l);
    wk->expands = 1;
}

/* pw = the powers u_i^k of the target at offsets u, which each column's polynomial takes. */
static void fgt_taylor_powers(int d, int p, const double *u, double *pw)
{
    for (int i = 0; i < d; i++)
        fgt_powers(p, u[i], 0, pw + (size_t)i * (size_t)p);
}

/* sum_k L_k prod_i u_i^k_i for the target whose powers are pw, contracting the last dimension
 * first. */
GK_CPU_CLONES
static double fgt_taylor(int d, int p, const double *l, const double *pw, double *s1, double *s2)
{
    size_t pp = (size_t)p, len = gk__fgt_terms(d, p);
    const double *in = l;
    for (int i = d - 1; i >= 0; i--) {
        double *o = (d - 1 - i) % 2 ? s2 : s1;
        const double *pi = pw + (size_t)i * pp;
        len /= pp;
        for (size_t r = 0; r < len; r++) {
            double v = 0.0;
            for (size_t k = 0; k < pp; k++)
                v += in[r * pp + k] * pi[k];
            o[r] = v;
        }
        in = o;
    }
    return in[0];
}

/* The polynomials L (p^d x r) at the nq targets whose offsets are off (nq <= fgt_rows(p^d)):
 * out[q r + c] = (beta = 0: 0, else out[q r + c]) + sum_k L[k][c] prod_i u_qi^k_i. One column
 * contracts each target's tensor, as rbf_matvec always has; several take the targets' power
 * tensors (buf) into a dgemm with L. */
static void fgt_taylor_rows(int d, int p, size_t r, const double *l, const double *off, size_t nq,
                            double *pw, double *buf, double *s1, double *s2, double beta,
                            double *out)
{
    size_t terms = gk__fgt_terms(d, p);
    for (size_t q = 0; q < nq; q++) {
        fgt_taylor_powers(d, p, off + q * (size_t)d, pw);
        if (r == 1) {
            double v = fgt_taylor(d, p, l, pw, s1, s2);
            out[q] = beta == 0.0 ? v : out[q] + v;
        } else {
            fgt_outer(d, p, 1.0, pw, buf + q * terms);
        }
    }
    if (r > 1)
        gk__cpu_gemm_serial(GK_FLOAT64, GK_NO_TRANS, GK_NO_TRANS, nq, r, terms, 1.0, buf, terms, l,
                            r, beta, out, r);
}

/* ------------------------------------------------------------------------------------------
 * The grid strategy: every pair of boxes within reach along each dimension is expanded, as d
 * passes over the whole grid, pass i turning dimension i of each cell from source box to target
 * box (a separable convolution of the moments with the p x p matrices of the 2 reach + 1
 * offsets): d cells (2 reach + 1) p^(d+1) multiply-adds where the pairs cost
 * cells (2 reach + 1)^d d p^(d+1). No pair is summed directly; the bound holds for every offset
 * up to reach, and pairs beyond it are beyond the cut-off.
 * ---------------------------------------------------------------------------------------- */

/* Bytes the grid strategy's two arrays of cells x r x terms doubles may take. */
#define FGT_MAX_GRID_BYTES ((size_t)1 << 30)

/* The grid strategy's cost for r columns of weights: the points' powers shared, their moments
 * and polynomials and the passes over the grid per column. */
/* Columns the grid strategy takes at once where r does not fit: a multiple of 8, as the passes'
 * inner loops run over a term's columns, eight doubles a vector (1e5^2 x 3 N(0,1), the grid's
 * 512 cells at degree 14, 64 columns: batches of 47 and 17 took 5.4 s, of 16 3.6 s; 32 columns
 * in one batch 1.78 s, in two of 16 1.87 s). */
#define FGT_GRID_BATCH ((size_t)16)

/* Columns of weights the grid strategy takes at once: all r where its two arrays of cells x
 * p^d x r doubles fit in FGT_MAX_GRID_BYTES, else at most FGT_GRID_BATCH that fit (0: not
 * one). */
static size_t fgt_grid_cols(const gk_fgt_grid *g, size_t r)
{
    double one = (double)g->cells * (double)gk__fgt_terms(g->d, g->p) * 2.0 * sizeof(double);
    double fit = floor((double)FGT_MAX_GRID_BYTES / one);
    if (fit >= (double)r)
        return r;
    return fit < (double)FGT_GRID_BATCH ? (size_t)fit : FGT_GRID_BATCH;
}

/* The grid strategy's cost for r columns of weights, taken fgt_grid_cols at a time: the points'
 * powers once a batch of columns, their moments and polynomials as dgemms, the passes per
 * column. */
static double fgt_grid_cost(const gk_fgt_grid *g, size_t m, size_t n, size_t r)
{
    size_t cols = g->p > 0 ? fgt_grid_cols(g, r) : 0;
    if (cols == 0)
        return INFINITY;
    double shared = (double)(m + n) * (double)(g->d * g->p + 4 * g->d);
    double points = (double)(m + n) * (double)gk__fgt_terms(g->d, g->p);
    double passes =
        gk__fgt_grid_cost(g->d, g->p, g->cells, g->reach, g->nb, m, n) - shared - points;
    return (double)((r + cols - 1) / cols) * shared + fgt_cols(r) * points + (double)r * passes;
}

static gk_status fgt_grid_sum(const gk_fgt_grid *g, int team, const fgt_side *src,
                              const fgt_side *tgt, int f64, const char *op, void *out)
{
    int d = g->d, p = g->p, rmax = 0;
    size_t pp = (size_t)p, r = src->r, cells = g->cells;
    /* a cell's coefficients: p^d terms of the cols columns of a batch */
    size_t terms = gk__fgt_terms(d, p), cols = fgt_grid_cols(g, r), block = cols * terms;
    size_t rows = fgt_rows(terms);
    for (int i = 0; i < d; i++)
        rmax = g->reach[i] > rmax ? g->reach[i] : rmax;
    /* per thread: two tensors of scratch, the points' power tensors, the powers, the values of
     * a chunk of targets */
    size_t span = 2 * (size_t)rmax + 1, per = (2 + rows) * terms + (size_t)d * pp + rows * cols;
    int nt = gk__cpu_region(team, cells);
    double *a = NULL, *b = NULL, *mats = NULL, *scratch = NULL;
    unsigned char *live = NULL, *live2 = NULL;
    if (fgt_alloc(&a, cells, block * sizeof *a) || fgt_alloc(&b, cells, block * sizeof *b) ||
        fgt_alloc(&mats, (size_t)d * span, pp * pp * sizeof *mats) ||
        fgt_alloc(&scratch, (size_t)nt, per * sizeof *scratch) ||
        fgt_alloc(&live, cells, sizeof *live) || fgt_alloc(&live2, cells, sizeof *live2)) {
        gk__free(a);
        gk__free(b);
        gk__free(mats);
        gk__free(scratch);
        gk__free(live);
        gk__free(live2);
        return gk__error(GK_E_OUT_OF_MEMORY,
                         "%s (fgt): cannot allocate 2 x %zu x %zu doubles of its grid", op, cells,
                         block);
    }
    /* M_i(dk) for the offsets dk = -reach .. reach: delta = dk h_w sqrt(gamma) */
    double herm[2 * GK_FGT_MAX_P];
    for (int i = 0; i < d; i++)
        for (int dk = -g->reach[i]; dk <= g->reach[i]; dk++)
            gk__fgt_matrix(p, (double)dk * g->hw * g->sg, herm,
                           mats + ((size_t)i * span + (size_t)(dk + rmax)) * pp * pp);
    /* several columns: each member's dgemms on its own thread */
    if (r > 1)
        gk__cpu_blas_serial_enter();
    /* the columns in batches of cols, each through the whole grid */
    for (size_t c0 = 0; c0 < r; c0 += cols) {
        size_t rc = r - c0 < cols ? r - c0 : cols;
        size_t cb = rc * terms;
#pragma omp parallel num_threads(nt)
        {
            double *sc = scratch + (size_t)omp_get_thread_num() * per;
            double *s1 = sc, *s2 = s1 + terms, *buf = s2 + terms, *pw = buf + rows * terms;
            double *vals = pw + (size_t)d * pp;
#pragma omp for schedule(static)
            for (size_t c = 0; c < cells; c++)
                live[c] = src->box_of[c] >= 0;
#pragma omp for schedule(dynamic, 4)
            for (size_t bx = 0; bx < src->boxes; bx++)
                fgt_moments(g, src, bx, c0, rc, pw, buf, a + (size_t)src->bcell[bx] * cb);
            size_t stride = cells;
            for (int i = 0; i < d; i++) {
                stride /= g->nb[i];
                const int last = i == d - 1;
#pragma omp for schedule(dynamic, 16)
                for (size_t c = 0; c < cells; c++) {
                    long k[4];
                    fgt_cell_coords(g, (uint32_t)c, k);
                    live2[c] = 0;
                    if (last && tgt->box_of[c] < 0)
                        continue;
                    double *o = b + c * cb;
                    long lo = k[i] - g->reach[i] > 0 ? k[i] - g->reach[i] : 0;
                    long hi = k[i] + g->reach[i] < (long)g->nb[i] - 1 ? k[i] + g->reach[i]
                                                                      : (long)g->nb[i] - 1;
                    for (long kb = lo; kb <= hi; kb++) {
                        size_t cin = (size_t)((long)c + (kb - k[i]) * (long)stride);
                        if (!live[cin])
                            continue;
                        if (!live2[c])
                            for (size_t q = 0; q < cb; q++)
                                o[q] = 0.0;
                        live2[c] = 1;
                        fgt_apply_dim(d, p, i, rc,
                                      mats +
                                          ((size_t)i * span + (size_t)(k[i] - kb + rmax)) * pp * pp,
                                      a + cin * cb, o);
                    }
                }
#pragma omp single
                {
                    double *t = a;
                    a = b;
                    b = t;
                    unsigned char *l = live;
                    live = live2;
                    live2 = l;
                }
            }
#pragma omp for schedule(dynamic, 1)
            for (size_t tb = 0; tb < tgt->boxes; tb++) {
                size_t c = tgt->bcell[tb], end = tgt->start[tb + 1];
                for (size_t q0 = tgt->start[tb]; q0 < end; q0 += rows) {
                    size_t nq = end - q0 < rows ? end - q0 : rows;
                    if (live[c])
                        fgt_taylor_rows(d, p, rc, a + c * cb, tgt->off + q0 * (size_t)d, nq, pw,
                                        buf, s1, s2, 0.0, vals);
                    else
                        for (size_t e = 0; e < nq * rc; e++)
                            vals[e] = 0.0;
                    for (size_t q = 0; q < nq; q++) {
                        size_t row = tgt->perm[q0 + q];
                        for (size_t col = 0; col < rc; col++) {
                            if (f64)
                                ((double *)out)[row * r + c0 + col] = vals[q * rc + col];
                            else
                                ((float *)out)[row * r + c0 + col] = (float)vals[q * rc + col];
                        }
                    }
                }
            }
        }
    }
    if (r > 1)
        gk__cpu_blas_serial_leave();
    gk__free(a);
    gk__free(b);
    gk__free(mats);
    gk__free(scratch);
    gk__free(live);
    gk__free(live2);
    return GK_OK;
}

/* The rows' least and greatest values per feature (d <= 4); 1 where any is NaN or infinite.
 * Chunks of rows in parallel, joined in order. */
#define FGT_BOUND_CHUNKS 64
static int fgt_bounds(int team, int f64, size_t d, size_t count, const void *rows, double *mn,
                      double *mx)
{
    double lo[FGT_BOUND_CHUNKS][4], hi[FGT_BOUND_CHUNKS][4];
    int bad[FGT_BOUND_CHUNKS];
    int nt = gk__cpu_region(team, count / 65536);
    GK_CPU_PARALLEL_IF(
        nt > 1, "omp parallel for num_threads(nt) schedule(static)",
        for (size_t c = 0; c < FGT_BOUND_CHUNKS; c++) {
            size_t q0 = c * count / FGT_BOUND_CHUNKS, q1 = (c + 1) * count / FGT_BOUND_CHUNKS;
            bad[c] = 0;
            for (size_t i = 0; i < d; i++) {
                double l = INFINITY, h = -INFINITY;
                for (size_t q = q0; q < q1; q++) {
                    double v = fgt_at(rows, f64, q * d + i);
                    l = v < l ? v : l;
                    h = v > h ? v : h;
                    bad[c] |= !isfinite(v);
                }
                lo[c][i] = l;
                hi[c][i] = h;
            }
        });
    int any = 0;
    for (size_t i = 0; i < d; i++) {
        mn[i] = INFINITY;
        mx[i] = -INFINITY;
        for (size_t c = 0; c < FGT_BOUND_CHUNKS; c++) {
            mn[i] = fmin(mn[i], lo[c][i]);
            mx[i] = fmax(mx[i], hi[c][i]);
        }
    }
    for (size_t c = 0; c < FGT_BOUND_CHUNKS; c++)
        any |= bad[c];
    return any;
}

int gk__cpu_rbf_matvec_fgt(void *st, gk_dtype t, size_t m, size_t n, size_t d, size_t r,
                           double gamma, int forced, const char *op, const void *x, const void *y,
                           const void *w, void *out, gk_status *rc, char *why, size_t why_size)
{
    int f64 = t == GK_FLOAT64, team = gk__cpu_threads(st);
    *rc = GK_OK;
    gamma = f64 ? gamma : (double)(float)gamma;
    if (m == 0 || n == 0 || d == 0 || d > GK_FGT_MAX_D || r == 0 || !(gamma > 0.0) ||
        !isfinite(gamma)) {
        snprintf(why, why_size, "d %zu, gamma %g, %zu x %zu rows, %zu columns", d, gamma, m, n, r);
        return 0;
    }
    /* the data's bounds; non-finite values go to direct summation, which defines them */
    double mn[4], mx[4];
    int bad = fgt_bounds(team, f64, d, m, x, mn, mx);
    double ymn[4], ymx[4];
    bad |= fgt_bounds(team, f64, d, n, y, ymn, ymx);
    for (size_t i = 0; i < d; i++) {
        mn[i] = fmin(mn[i], ymn[i]);
        mx[i] = fmax(mx[i], ymx[i]);
    }
    for (size_t q = 0; q < n * r; q++)
        bad |= !isfinite(fgt_at(w, f64, q));
    if (bad) {
        snprintf(why, why_size, "NaN or infinity in x, y or w");
        return 0;
    }

    /* the grid: each side that fits, by its estimated cost for r columns (its moments, r x p^d
     * a box, within the cap) */
    gk_fgt_grid g, best = {0};
    fgt_side src = {0}, tgt = {0}, bsrc = {0}, btgt = {0};
    double best_cost = INFINITY;
    int oom = 0, best_grid = 0;
    size_t max_cells = FGT_MAX_CELLS, max_moments = FGT_MAX_MOMENT_BYTES / sizeof(double) / r;
    if ((m + n) < (FGT_MAX_CELLS - 4096) / FGT_CELLS_PER_POINT)
        max_cells = FGT_CELLS_PER_POINT * (m + n) + 4096;
    for (size_t c = 0; c < FGT_SIDES && !oom; c++) {
        gk__fgt_grid_make(&g, (int)d, f64, gamma, fgt_sides[c], mn, mx, max_cells);
        size_t terms = g.p > 0 ? gk__fgt_terms((int)d, g.p) : 0;
        if (g.cells == 0 || terms > max_moments)
            continue;
        if (fgt_bin(&g, team, y, f64, n, &src) || fgt_bin(&g, team, x, f64, m, &tgt)) {
            oom = 1;
        } else if (src.boxes * terms <= max_moments) {
            double pair_cost = fgt_cost(&g, &src, &tgt, r), grid_cost = fgt_grid_cost(&g, m, n, r);
            double cost = fmin(pair_cost, grid_cost);
            if (cost < best_cost) {
                best_cost = cost;
                best_grid = grid_cost < pair_cost;
                best = g;
                fgt_side_free(&bsrc);
                fgt_side_free(&btgt);
                bsrc = src;
                btgt = tgt;
                memset(&src, 0, sizeof src);
                memset(&tgt, 0, sizeof tgt);
            }
        }
        fgt_side_free(&src);
        fgt_side_free(&tgt);
    }
    best_cost += (double)FGT_SIDES * (double)(m + n) * FGT_BIN_COST;
    /* direct summation: rbf_matvec's difference form, or kernel_matmul's tiles of r columns (each
     * pair's exponential once, a multiply-add per column) */
    double direct =
        (double)m * (double)n *
        (r == 1 ? (f64 ? FGT_DIFF_PAIR_F64 : FGT_DIFF_PAIR_F32)
                : (f64 ? FGT_TILE_PAIR_F64 : FGT_TILE_PAIR_F32) + (double)(r - 1) * FGT_TILE_COL);
    /* the model is rough (about 2x either way where measured): the transform must win by a margin
     */
    if (!oom && (best_cost == INFINITY || (!forced && FGT_MARGIN * best_cost >= direct))) {
        if (best_cost == INFINITY)
            snprintf(why, why_size, "no grid of at most %zu cells fits the data", max_cells);
        else
            snprintf(why, why_size, "estimated cost %.3g x %.1f >= %.3g of direct summation",
                     best_cost, FGT_MARGIN, direct);
        fgt_side_free(&bsrc);
        fgt_side_free(&btgt);
        return 0;
    }
    g = best;
    if (!oom && best_grid) {
        if (fgt_sort(&g, team, y, f64, w, r, &bsrc) || fgt_sort(&g, team, x, f64, NULL, r, &btgt))
            *rc = gk__error(GK_E_OUT_OF_MEMORY, "%s (fgt): cannot allocate its boxes", op);
        else
            *rc = fgt_grid_sum(&g, team, &bsrc, &btgt, f64, op, out);
        snprintf(why, why_size,
                 "box side %.2f/sqrt(gamma), degree %d, the grid's %zu cells (%zu source and %zu "
                 "target boxes) all expanded, estimated cost %.3g against %.3g direct",
                 g.side, g.p, g.cells, bsrc.boxes, btgt.boxes, best_cost, direct);
        fgt_side_free(&bsrc);
        fgt_side_free(&btgt);
        return 1;
    }
    int dd = (int)d, p = g.p;
    size_t terms = oom ? 0 : gk__fgt_terms(dd, p), pp = (size_t)p, rows = fgt_rows(terms);
    double *mom = NULL, *scratch = NULL;
    int64_t *slot = NULL;
    int nt = gk__cpu_region(team, btgt.boxes);
    /* per thread: the Taylor coefficients and two tensors of scratch (terms x r each), the
     * matrices, the Hermite functions, the powers, the direct sums (a box's targets x r), the
     * exponents (FGT_NEAR_ROWS x FGT_GATHER), the gathered weights (FGT_GATHER x r) and offsets
     * (d x FGT_GATHER), the points' power tensors (rows x terms) */
    size_t per = 3 * r * terms + d * pp * pp + 2 * pp + d * pp + btgt.largest * r +
                 (FGT_NEAR_ROWS + d + r) * FGT_GATHER + rows * terms;
    per = (per + 7) / 8 * 8;
    if (oom || fgt_sort(&g, team, y, f64, w, r, &bsrc) ||
        fgt_sort(&g, team, x, f64, NULL, r, &btgt) || fgt_alloc(&slot, bsrc.boxes, sizeof *slot) ||
        fgt_alloc(&scratch, (size_t)nt, per * sizeof *scratch)) {
        *rc = gk__error(GK_E_OUT_OF_MEMORY, "%s (fgt): cannot allocate its boxes", op);
        goto done;
    }
    /* moments for the source boxes that some target box may expand */
    size_t slots = 0;
    for (size_t b = 0; b < bsrc.boxes; b++) {
        double ns = (double)(bsrc.start[b + 1] - bsrc.start[b]);
        slot[b] = fgt_pair_direct(ns, (double)btgt.largest, dd, p, r) ? -1 : (int64_t)slots++;
    }
    if (fgt_alloc(&mom, slots * r * terms, sizeof *mom)) {
        *rc = gk__error(GK_E_OUT_OF_MEMORY, "%s (fgt): cannot allocate %zu x %zu moments", op,
                        slots, r * terms);
        goto done;
    }
    const gk_cpu_vmath *vm = gk__cpu_vmath();
    size_t expanded = 0;
    /* several columns: each member's dgemms on its own thread */
    if (r > 1)
        gk__cpu_blas_serial_enter();
#pragma omp parallel num_threads(nt) reduction(+ : expanded)
    {
        double *sc = scratch + (size_t)omp_get_thread_num() * per;
        fgt_work wk = {.g = &g, .src = &bsrc, .tgt = &btgt, .mom = mom, .mom_slot = slot, .vm = vm};
        wk.l = sc;
        wk.s1 = wk.l + r * terms;
        wk.s2 = wk.s1 + r * terms;
        wk.mat = wk.s2 + r * terms;
        wk.herm = wk.mat + d * pp * pp;
        double *pw = wk.herm + 2 * pp;
        wk.acc = pw + d * pp;
        wk.ex = wk.acc + btgt.largest * r;
        wk.gw = wk.ex + FGT_NEAR_ROWS * FGT_GATHER;
        wk.gx = wk.gw + r * FGT_GATHER;
        wk.rows = wk.gx + d * FGT_GATHER;
#pragma omp for schedule(dynamic, 4)
        for (size_t b = 0; b < bsrc.boxes; b++)
            if (slot[b] >= 0)
                fgt_moments(&g, &bsrc, b, 0, r, pw, wk.rows, mom + (size_t)slot[b] * r * terms);
#pragma omp for schedule(dynamic, 1)
        for (size_t b = 0; b < btgt.boxes; b++) {
            size_t t0 = btgt.start[b], t1 = btgt.start[b + 1];
            long kc[4];
            fgt_cell_coords(&g, btgt.bcell[b], kc);
            wk.tb = b;
            wk.expands = 0;
            for (size_t q = 0; q < r * terms; q++)
                wk.l[q] = 0.0;
            for (size_t q = 0; q < (t1 - t0) * r; q++)
                wk.acc[q] = 0.0;
            fgt_neighbours(&g, &bsrc, kc, fgt_pair, &wk);
            if (wk.gathered > 0)
                fgt_near_flush(&wk);
            expanded += (size_t)wk.expands;
            for (size_t q = t0; wk.expands && q < t1; q += rows)
                fgt_taylor_rows(dd, p, r, wk.l, btgt.off + q * d, t1 - q < rows ? t1 - q : rows, pw,
                                wk.rows, wk.s1, wk.s2, 1.0, wk.acc + (q - t0) * r);
            for (size_t q = t0; q < t1; q++) {
                size_t i = btgt.perm[q];
                for (size_t c = 0; c < r; c++) {
                    double v = wk.acc[(q - t0) * r + c];
                    if (f64)
                        ((double *)out)[i * r + c] = v;
                    else
                        ((float *)out)[i * r + c] = (float)v;
                }
            }
        }
    }
    if (r > 1)
        gk__cpu_blas_serial_leave();
    snprintf(why, why_size,
             "box side %.2f/sqrt(gamma), degree %d, %zu source and %zu target boxes (%zu "
             "expanded), estimated cost %.3g against %.3g direct",
             g.side, p, bsrc.boxes, btgt.boxes, expanded, best_cost, direct);
done:
    gk__free(mom);
    gk__free(slot);
    gk__free(scratch);
    fgt_side_free(&bsrc);
    fgt_side_free(&btgt);
    return 1;
}
