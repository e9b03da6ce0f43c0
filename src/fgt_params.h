/* SPDX-License-Identifier: MIT */
/* fgt_params.h - the fast Gauss transform's error bound, parameters and cost model, for both
 * backends (host and device). */
#ifndef GK_FGT_PARAMS_H
#define GK_FGT_PARAMS_H

/* Included by C (cpu/) and by nvcc (cuda/), as backend_math.h is: static inline, <math.h> only.
 *
 * The transform (docs/fgt.md). Coordinates are taken in units of h = 1 / sqrt(gamma), so the
 * kernel is exp(-|t - s|^2). A grid of boxes of side `side` covers the rows of x and y; a source
 * box B (centre b) and a target box C (centre c) interact unless the gap between the boxes is
 * at least the cut-off radius R; an interacting pair is summed directly or through the
 * expansion, in each dimension (v = s - b, u = t - c, delta = c - b, h_k the Hermite functions)
 *     exp(-(t - s)^2) = sum_{k, j >= 0} u^k / k! * v^j / j! * (-1)^k h_{k+j}(delta),
 * truncated to k, j < p: B's moments A_j = sum_s w_s v^j / j! become C's Taylor coefficients
 * L_k = sum_j (-1)^k h_{k+j}(delta) / k! A_j (one p x p matrix per dimension), evaluated at
 * each target t of C as sum_k L_k u^k.
 *
 * The bound. With |u|, |v| <= rho (half a box side, or half the data's extent where one box
 * covers it), the terms dropped in one dimension (k >= p or j >= p) sum to at most
 *     tau(delta) = sum_{n >= p} rho^n |h_n(delta)| D_n,  D_n = sum_{k+j=n, k>=p or j>=p} 1/(k! j!),
 * evaluated with the Hermite functions themselves up to n = 2p + 40 and, past that, Cramer's
 * inequality |h_n(x)| <= K 2^(n/2) sqrt(n!) exp(-x^2/2), K < 1.0865. delta takes the values
 * k side for the k (0 .. reach) of the pairs that interact, and the worst is taken. Each
 * dimension's exact factor lies in (0, 1], so the product over d dimensions is off by at most
 * prod (1 + tau_i) - 1, times the pair's sum of |w|. Pairs dropped by the cut-off are off by at
 * most exp(-R^2) times their sum of |w|. Every source meets each target in one pair, so
 * the result is within (truncation + cut-off) sum |w|; both are kept to fractions of
 * gk__fgt_eps, the rest is left to rounding (in double). */

#include <math.h>
#include <stddef.h>

#if defined(__CUDACC__)
#define GK_FGT_HD static __host__ __device__ __forceinline__
#else
#define GK_FGT_HD static inline
#endif

#define GK_FGT_MAX_D 4
#define GK_FGT_MAX_P 24
/* Cramer's constant, rounded up. */
#define GK_FGT_CRAMER 1.0865

/* The transform's tolerance per unit of sum |w| and the shares of it the truncation and the
 * cut-off may take. float64: the contract's 1e-12. float32: 1e-8, far inside the contract's
 * 1e-5 (as the CUDA Taylor form keeps), so that with one nonzero weight w_j at a row of y equal
 * to x_i the output rounds to exactly w_j, as the contract's "exactly 1" asks. */
GK_FGT_HD double gk__fgt_eps(int f64)
{
    return f64 ? 1e-12 : 1e-8;
}
#define GK_FGT_TRUNC_SHARE 0.3
#define GK_FGT_CUT_SHARE 0.2

/* T_p(a) = sum_{n >= p} a^n / sqrt(n!) for 0 <= a <= 8, from above: the terms up to N, then
 * the rest as a geometric series of ratio a / sqrt(N + 1) <= 1/2. */
GK_FGT_HD double gk__fgt_tail(double a, int p)
{
    int top = (int)(4.0 * a * a) + p + 8;
    double t = 1.0, sum = 0.0;
    for (int n = 0; n < top; n++) {
        if (n >= p)
            sum += t;
        t *= a / sqrt((double)(n + 1));
    }
    return (sum + t / (1.0 - a / sqrt((double)(top + 1)))) * (1.0 + 1e-12);
}

/* One dimension's dropped terms for centres delta apart (units of h) and offsets within rho:
 *     tau = sum_{n >= p} rho^n |h_n(delta)| D_n,  D_n = sum_{k + j = n, k >= p or j >= p} 1/(k!
 * j!), with |h_n(delta)| from the recurrence up to n = 2p + 40 and Cramer's inequality past it. */
GK_FGT_HD double gk__fgt_tau(double rho, double delta, int p)
{
    int top = 2 * p + 40;
    double h0 = exp(-delta * delta), h1 = 2.0 * delta * h0, sum = 0.0, rn = 1.0;
    /* f[k] = 1 / k! for k <= top, built as needed: D_n from the k's of the dropped pairs */
    double inv[GK_FGT_MAX_P * 2 + 42];
    inv[0] = 1.0;
    for (int k = 1; k <= top; k++)
        inv[k] = inv[k - 1] / (double)k;
    for (int n = 0; n <= top; n++) {
        double hn = n == 0 ? h0 : n == 1 ? h1 : 0.0;
        if (n >= 2) {
            hn = 2.0 * delta * h1 - 2.0 * (double)(n - 1) * h0;
            h0 = h1;
            h1 = hn;
        }
        if (n >= p) {
            double dn = 0.0;
            for (int k = 0; k <= n; k++)
                if (k >= p || n - k >= p)
                    dn += inv[k] * inv[n - k];
            sum += rn * fabs(hn) * dn;
        }
        rn *= rho;
    }
    return (sum * 1.001 + GK_FGT_CRAMER * exp(-0.5 * delta * delta) *
                              gk__fgt_tail(2.0 * sqrt(2.0) * rho, top + 1)) *
           (1.0 + 1e-9);
}

/* The truncation's bound per unit of |w| for degree p (p terms per dimension), half extents
 * rho[i] of the boxes (units of h, d dimensions) and centres reach[i] boxes of side `side`
 * apart at most: prod_i (1 + max_delta tau_i) - 1. */
GK_FGT_HD double gk__fgt_trunc_bound(int d, const double *rho, const int *reach, double side, int p)
{
    double prod = 1.0;
    for (int i = 0; i < d; i++) {
        double worst = 0.0;
        for (int k = 0; k <= reach[i]; k++)
            worst = fmax(worst, gk__fgt_tau(rho[i], (double)k * side, p));
        prod *= 1.0 + worst;
    }
    return prod - 1.0;
}

/* The smallest p <= GK_FGT_MAX_P whose bound is within eps, or 0 where none is. */
GK_FGT_HD int gk__fgt_degree(int d, const double *rho, const int *reach, double side, double eps)
{
    for (int p = 1; p <= GK_FGT_MAX_P; p++)
        if (gk__fgt_trunc_bound(d, rho, reach, side, p) <= eps)
            return p;
    return 0;
}

/* R^2 of the cut-off: pairs whose boxes are at least R apart (units of h) are dropped, each
 * source's share then at most exp(-R^2) <= eps. */
GK_FGT_HD double gk__fgt_cutoff_r2(double eps)
{
    return -log(eps) * (1.0 + 1e-9);
}

/* p^d, the coefficients of one box. */
GK_FGT_HD size_t gk__fgt_terms(int d, int p)
{
    size_t t = 1;
    for (int i = 0; i < d; i++)
        t *= (size_t)p;
    return t;
}

/* ------------------------------------------------------------------------------------------
 * The cost model, in units of one multiply-add of the expansions; a backend gives the cost of
 * one directly summed pair (distance and exp) in the same units, pair_cost.
 * ---------------------------------------------------------------------------------------- */

/* One interacting pair of boxes with ns sources and nt targets: through the expansion (p x p
 * matrices applied along each of d dimensions) or directly, whichever is cheaper; always
 * directly where no degree meets the bound (p = 0: boxes too wide for the expansion). */
GK_FGT_HD double gk__fgt_h2l_cost(int d, int p)
{
    return (double)d * (double)gk__fgt_terms(d, p) * (double)p + 2.0 * d * p * p;
}

GK_FGT_HD int gk__fgt_pair_direct(double ns, double nt, int d, int p, double pair_cost)
{
    return p == 0 || ns * nt * pair_cost <= gk__fgt_h2l_cost(d, p);
}

/* Per point: its moments (sources) or its Taylor polynomial (targets). */
GK_FGT_HD double gk__fgt_point_cost(int d, int p)
{
    return (double)gk__fgt_terms(d, p) + (double)(d * p);
}

/* M[k][j] = (-1)^k h_{k+j}(delta) / k! (p x p, row-major): the Hermite moments of a source box
 * to the Taylor coefficients of a target box delta away, along one dimension; herm: 2p doubles
 * of scratch for the Hermite functions, by their recurrence. */
GK_FGT_HD void gk__fgt_matrix(int p, double delta, double *herm, double *m)
{
    herm[0] = exp(-delta * delta);
    herm[1] = 2.0 * delta * herm[0];
    for (int k = 2; k < 2 * p - 1; k++)
        herm[k] = 2.0 * delta * herm[k - 1] - 2.0 * (double)(k - 1) * herm[k - 2];
    double f = 1.0;
    for (int k = 0; k < p; k++) {
        if (k > 0)
            f /= -(double)k;
        for (int j = 0; j < p; j++)
            m[k * p + j] = f * herm[k + j];
    }
}

/* The grid strategy (every pair within reach expanded, as d passes over all cells, each pass
 * 2 reach + 1 offsets, at most the boxes along that dimension, of p x p matrices): its cost for
 * `cells` cells with reach[i] and nb[i] per dimension, and m + n points. */
GK_FGT_HD double gk__fgt_grid_cost(int d, int p, size_t cells, const int *reach, const size_t *nb,
                                   size_t m, size_t n)
{
    double terms = (double)gk__fgt_terms(d, p);
    double c = (double)(m + n) * (gk__fgt_point_cost(d, p) + 4.0 * d);
    for (int i = 0; i < d; i++)
        c += (double)cells * fmin((double)(2 * reach[i] + 1), (double)nb[i]) * terms * (double)p;
    return c;
}

/* ------------------------------------------------------------------------------------------
 * The grid of one call: boxes of side `side` (units of h) over the data's bounds, and the
 * degree and cut-off that keep the bound.
 * ---------------------------------------------------------------------------------------- */

typedef struct gk_fgt_grid {
    int d, p;            /* p = 0: no degree meets the bound, every pair is summed directly */
    double side;         /* box side, units of h */
    double sg;           /* sqrt(gamma) */
    double lo[4], hw;    /* grid origin and box side, in the data's units */
    size_t nb[4], cells; /* boxes along each dimension, in all (0: more than max_cells) */
    double rho[4];       /* half extents of the boxes' points about their centres, units of h */
    double r2;           /* cut-off radius squared, units of h */
    double slack;        /* rounding allowance of the offsets, units of h */
    int reach[4];        /* boxes within the cut-off along each dimension */
} gk_fgt_grid;

/* The grid for box side `side` over the data's bounds [mn, mx] (d features): centred on the
 * data, so that a dimension one box covers has rho = half the extent. */
GK_FGT_HD void gk__fgt_grid_make(gk_fgt_grid *g, int d, int f64, double gamma, double side,
                                 const double *mn, const double *mx, size_t max_cells)
{
    g->d = d;
    g->side = side;
    g->sg = sqrt(gamma);
    g->hw = side / g->sg;
    double cells = 1.0, big = 0.0;
    for (int i = 0; i < d; i++) {
        double ext = (mx[i] - mn[i]) * g->sg;
        double nb = ext > side ? ceil(ext / side) : 1.0;
        cells *= nb;
        g->nb[i] = cells <= (double)max_cells ? (size_t)nb : 1;
        g->lo[i] = 0.5 * (mn[i] + mx[i]) - 0.5 * nb * g->hw;
        big = fmax(big, fmax(fabs(mn[i]), fabs(mx[i])) + nb * g->hw);
        g->rho[i] = nb > 1.0 ? 0.5 * side : 0.5 * ext;
    }
    g->cells = cells <= (double)max_cells ? (size_t)cells : 0;
    /* the centres and offsets are rounded a few times, each within an ulp of big */
    g->slack = 16.0 * 0x1p-52 * big * g->sg;
    for (int i = 0; i < d; i++)
        g->rho[i] += g->slack;
    double eps = gk__fgt_eps(f64);
    g->r2 = gk__fgt_cutoff_r2(GK_FGT_CUT_SHARE * eps);
    for (int i = 0; i < d; i++) {
        double r = floor((sqrt(g->r2) + 2.0 * g->slack) / side) + 1.0;
        g->reach[i] = (int)fmin(r, (double)g->nb[i] - 1.0);
    }
    g->p = gk__fgt_degree(d, g->rho, g->reach, side, GK_FGT_TRUNC_SHARE * eps);
}

/* The centre of box k along dimension i, in the data's units: offsets are taken from it. */
GK_FGT_HD double gk__fgt_centre(const gk_fgt_grid *g, int i, size_t k)
{
    return g->lo[i] + ((double)k + 0.5) * g->hw;
}

#endif /* GK_FGT_PARAMS_H */
