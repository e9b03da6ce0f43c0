/* SPDX-License-Identifier: MIT */
/* rbf_matvec_fgt.cuh - the kernels of the device's fast Gauss transform (rbf_matvec_fgt.cu
 * launches them; the grid and bound are src/fgt_params.h's, the algorithm docs/fgt.md's). */
#ifndef GK_CUDA_RBF_MATVEC_FGT_CUH
#define GK_CUDA_RBF_MATVEC_FGT_CUH

#include <cub/cub.cuh>

#include "cuda_internal.h"
#include "fgt_params.h"

/* Cells of a grid at most (32-bit cell ids, count arrays of 16 MiB), terms of an expansion at
 * most for the pairs strategy (three of them in a block's shared memory) and for the grid
 * strategy (in global memory), targets of a box per block. */
#define GK_FGT_CUDA_MAX_CELLS ((size_t)1 << 22)
#define GK_FGT_CUDA_MAX_TERMS 2048
#define GK_FGT_CUDA_GRID_TERMS 16384
#define GK_FGT_CUDA_SEG 1024
/* Target boxes whose neighbourhoods the cost kernel visits, at most. */
#define GK_FGT_CUDA_SAMPLE 4096
/* Sources whose powers a block of the moments kernel holds at once. */
#define GK_FGT_CUDA_CHUNK 32

/* The cost model's constants on the device, in double multiply-adds (src/fgt_params.h): a pair
 * summed directly by the transform (float32: float exp; float64: double exp), a neighbour cell
 * looked at. */
#define GK_FGT_CUDA_NEAR_F32 4.0
#define GK_FGT_CUDA_NEAR_F64 20.0
#define GK_FGT_CUDA_VISIT 4.0

/* Per-call values every kernel reads. */
struct cuda_fgt_args {
    gk_fgt_grid g;
    unsigned int nb[4]; /* g.nb as 32-bit */
    double near;        /* the near pair's cost */
    double h2l;         /* an expanded pair's cost */
    unsigned int terms; /* p^d (0 where p = 0) */
};

/* Cell coordinates of cell c. */
__device__ __forceinline__ void cuda_fgt_coords(const cuda_fgt_args &a, unsigned int c, int *k)
{
    for (int i = a.g.d - 1; i >= 0; i--) {
        k[i] = (int)(c % a.nb[i]);
        c /= a.nb[i];
    }
}

template <typename T>
__device__ __forceinline__ unsigned int cuda_fgt_cell_of(const cuda_fgt_args &a, const T *row)
{
    unsigned int c = 0;
    for (int i = 0; i < a.g.d; i++) {
        double q = floor(((double)row[i] - a.g.lo[i]) / a.g.hw);
        unsigned int k = q <= 0.0                      ? 0u
                         : q >= (double)(a.nb[i] - 1u) ? a.nb[i] - 1u
                                                       : (unsigned int)q;
        c = c * a.nb[i] + k;
    }
    return c;
}

/* Squared gap between cells a and b (their points may stray by the slack), units of h. */
__device__ __forceinline__ double cuda_fgt_gap2(const cuda_fgt_args &a, const int *ka,
                                                const int *kb)
{
    double s = 0.0;
    for (int i = 0; i < a.g.d; i++) {
        int dk = abs(ka[i] - kb[i]);
        double gap = dk > 1 ? (double)(dk - 1) * a.g.side - 2.0 * a.g.slack : 0.0;
        s += gap > 0.0 ? gap * gap : 0.0;
    }
    return s;
}

/* The neighbourhood of cell coordinates kc: lo, size per dimension, and its volume. */
__device__ __forceinline__ unsigned int cuda_fgt_hood(const cuda_fgt_args &a, const int *kc,
                                                      int *lo, int *size)
{
    unsigned int vol = 1;
    for (int i = 0; i < a.g.d; i++) {
        int l = kc[i] - a.g.reach[i], h = kc[i] + a.g.reach[i];
        l = l < 0 ? 0 : l;
        h = h > (int)a.nb[i] - 1 ? (int)a.nb[i] - 1 : h;
        lo[i] = l;
        size[i] = h - l + 1;
        vol *= (unsigned int)size[i];
    }
    return vol;
}

/* Cell v of the neighbourhood (lo, size): its coordinates and id. */
__device__ __forceinline__ unsigned int cuda_fgt_hood_cell(const cuda_fgt_args &a, unsigned int v,
                                                           const int *lo, const int *size, int *k)
{
    for (int i = a.g.d - 1; i >= 0; i--) {
        k[i] = lo[i] + (int)(v % (unsigned int)size[i]);
        v /= (unsigned int)size[i];
    }
    unsigned int c = 0;
    for (int i = 0; i < a.g.d; i++)
        c = c * a.nb[i] + (unsigned int)k[i];
    return c;
}

/* Whether a pair of boxes is summed directly: no moments for the source box, or cheaper. */
__device__ __forceinline__ bool cuda_fgt_direct(const cuda_fgt_args &a, double ns, double nt,
                                                bool moments)
{
    return !moments || gk__fgt_pair_direct(ns, nt, a.g.d, a.g.p, a.near);
}

struct cuda_fgt_min {
    __device__ __forceinline__ double operator()(double a, double b) const
    {
        return fmin(a, b);
    }
};
struct cuda_fgt_max {
    __device__ __forceinline__ double operator()(double a, double b) const
    {
        return fmax(a, b);
    }
};

/* ------------------------------------------------------------------------------------------
 * The data's bounds: per block, the least and greatest value of each feature over the rows of
 * x and y and whether anything (w too) is not finite; then one block joins the blocks'.
 * ---------------------------------------------------------------------------------------- */

template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_bounds(size_t m, size_t n, int d, const T *x, const T *y, const T *w, double *part)
{
    typedef cub::BlockReduce<double, GK_CUDA_THREADS> reduce;
    __shared__ typename reduce::TempStorage tmp;
    double lo[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
    double hi[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    double bad = 0.0;
    for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < m + n;
         r += (size_t)gridDim.x * blockDim.x) {
        const T *row = r < m ? x + r * (size_t)d : y + (r - m) * (size_t)d;
        for (int i = 0; i < d; i++) {
            double v = (double)row[i];
            lo[i] = fmin(lo[i], v);
            hi[i] = fmax(hi[i], v);
            bad = isfinite(v) ? bad : 1.0;
        }
        if (r >= m && !isfinite((double)w[r - m]))
            bad = 1.0;
    }
    double *out = part + blockIdx.x * 9;
    for (int i = 0; i < 4; i++) {
        double v = reduce(tmp).Reduce(lo[i], cuda_fgt_min());
        __syncthreads();
        if (threadIdx.x == 0)
            out[i] = v;
        v = reduce(tmp).Reduce(hi[i], cuda_fgt_max());
        __syncthreads();
        if (threadIdx.x == 0)
            out[4 + i] = v;
    }
    double b = reduce(tmp).Reduce(bad, cuda_fgt_max());
    if (threadIdx.x == 0)
        out[8] = b;
}

__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_bounds_join(unsigned int blocks, const double *part, double *res)
{
    typedef cub::BlockReduce<double, GK_CUDA_THREADS> reduce;
    __shared__ typename reduce::TempStorage tmp;
    for (int k = 0; k < 9; k++) {
        double v = k < 4 ? INFINITY : k < 8 ? -INFINITY : 0.0;
        for (unsigned int b = threadIdx.x; b < blocks; b += blockDim.x)
            v = k < 4 ? fmin(v, part[b * 9 + k]) : fmax(v, part[b * 9 + k]);
        double r =
            k < 4 ? reduce(tmp).Reduce(v, cuda_fgt_min()) : reduce(tmp).Reduce(v, cuda_fgt_max());
        __syncthreads();
        if (threadIdx.x == 0)
            res[k] = r;
    }
}

/* ------------------------------------------------------------------------------------------
 * A candidate grid's occupancy and estimated cost.
 * ---------------------------------------------------------------------------------------- */

/* counts[cell] += 1 for each row; stats[0] += occupied cells, stats[1] = the largest count. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_count(cuda_fgt_args a, size_t rows, const T *p, unsigned int *counts,
                   unsigned int *stats)
{
    for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < rows;
         r += (size_t)gridDim.x * blockDim.x) {
        unsigned int c = cuda_fgt_cell_of(a, p + r * (size_t)a.g.d);
        unsigned int old = atomicAdd(counts + c, 1u);
        if (old == 0)
            atomicAdd(stats, 1u);
        atomicMax(stats + 1, old + 1);
    }
}

/* The cost of every GK_FGT_CUDA_SAMPLE-th-or-so target cell's interactions (pairs direct or
 * expanded, cells looked at, its Taylor evaluations), summed in whole units into *cost (integer
 * adds: the same total whatever the order), and the number of cells sampled into *seen. */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_cost(cuda_fgt_args a, unsigned int stride, const unsigned int *max_target,
                  const unsigned int *counts_t, const unsigned int *counts_s,
                  unsigned long long *cost, unsigned long long *seen)
{
    const unsigned int cells = (unsigned int)a.g.cells, max_t = *max_target;
    for (unsigned int c = (blockIdx.x * blockDim.x + threadIdx.x) * stride; c < cells;
         c += gridDim.x * blockDim.x * stride) {
        atomicAdd(seen, 1ull);
        unsigned int nt = counts_t[c];
        if (nt == 0)
            continue;
        int kc[4], lo[4], size[4], k[4];
        cuda_fgt_coords(a, c, kc);
        unsigned int vol = cuda_fgt_hood(a, kc, lo, size);
        double sum = (double)vol * GK_FGT_CUDA_VISIT;
        bool expands = false;
        for (unsigned int v = 0; v < vol; v++) {
            unsigned int cs = cuda_fgt_hood_cell(a, v, lo, size, k);
            unsigned int ns = counts_s[cs];
            if (ns == 0 || cuda_fgt_gap2(a, kc, k) >= a.g.r2)
                continue;
            bool moments =
                a.g.p > 0 && !gk__fgt_pair_direct((double)ns, (double)max_t, a.g.d, a.g.p, a.near);
            if (cuda_fgt_direct(a, (double)ns, (double)nt, moments))
                sum += (double)ns * (double)nt * a.near;
            else {
                sum += a.h2l;
                expands = true;
            }
        }
        if (expands)
            sum += (double)nt * gk__fgt_point_cost(a.g.d, a.g.p);
        atomicAdd(cost, (unsigned long long)sum);
    }
}

/* ------------------------------------------------------------------------------------------
 * Binning and the transform.
 * ---------------------------------------------------------------------------------------- */

template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_keys(cuda_fgt_args a, size_t rows, const T *p, unsigned int *keys, unsigned int *index)
{
    for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < rows;
         r += (size_t)gridDim.x * blockDim.x) {
        keys[r] = cuda_fgt_cell_of(a, p + r * (size_t)a.g.d);
        index[r] = (unsigned int)r;
    }
}

/* Sorted position q: offsets from its cell's centre (units of h) and, for sources, its
 * weight in double. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_offsets(cuda_fgt_args a, size_t rows, const T *p, const T *w, const unsigned int *keys,
                     const unsigned int *index, double *off, double *ws)
{
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < rows;
         q += (size_t)gridDim.x * blockDim.x) {
        int k[4];
        cuda_fgt_coords(a, keys[q], k);
        size_t r = index[q];
        for (int i = 0; i < a.g.d; i++)
            off[q * (size_t)a.g.d + (size_t)i] =
                ((double)p[r * (size_t)a.g.d + (size_t)i] - gk__fgt_centre(&a.g, i, (size_t)k[i])) *
                a.g.sg;
        if (w != NULL)
            ws[q] = (double)w[r];
    }
}

__global__ void cuda_fgt_run_of(unsigned int runs, const unsigned int *cells, int *run_of)
{
    for (unsigned int r = blockIdx.x * blockDim.x + threadIdx.x; r < runs;
         r += gridDim.x * blockDim.x)
        run_of[cells[r]] = (int)r;
}

/* One block per source box: its moments A_alpha = sum w v^alpha / alpha! where some target box
 * may expand it (has[r] says), each thread a set of terms, the sources in order. For the grid
 * strategy (cells not NULL) every box's, at its cell's place. */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_moments(cuda_fgt_args a, unsigned int max_t, const unsigned int *start,
                     const unsigned int *count, const double *off, const double *ws,
                     const unsigned int *cells, double *mom, int *has)
{
    __shared__ double pw[GK_FGT_CUDA_CHUNK][4][GK_FGT_MAX_P];
    __shared__ double wq[GK_FGT_CUDA_CHUNK];
    const unsigned int r = blockIdx.x, s0 = start[r], ns = count[r];
    const int d = a.g.d, p = a.g.p;
    const bool need =
        p > 0 && (cells != NULL || !gk__fgt_pair_direct((double)ns, (double)max_t, d, p, a.near));
    if (threadIdx.x == 0 && has != NULL)
        has[r] = need;
    if (!need)
        return;
    double *out = mom + (size_t)(cells != NULL ? cells[r] : r) * a.terms;
    for (unsigned int e0 = 0; e0 < a.terms; e0 += blockDim.x) {
        unsigned int e = e0 + threadIdx.x;
        int alpha[4] = {0, 0, 0, 0};
        for (int i = d - 1, rest = (int)e; i >= 0; i--) {
            alpha[i] = rest % p;
            rest /= p;
        }
        double acc = 0.0;
        for (unsigned int q0 = 0; q0 < ns; q0 += GK_FGT_CUDA_CHUNK) {
            unsigned int chunk = ns - q0 < GK_FGT_CUDA_CHUNK ? ns - q0 : GK_FGT_CUDA_CHUNK;
            __syncthreads();
            for (unsigned int t = threadIdx.x; t < chunk * (unsigned int)d; t += blockDim.x) {
                unsigned int q = t / (unsigned int)d, i = t % (unsigned int)d;
                double v = off[(size_t)(s0 + q0 + q) * (size_t)d + i], f = 1.0;
                for (int j = 0; j < p; j++) {
                    pw[q][i][j] = f;
                    f = f * v / (double)(j + 1);
                }
                if (i == 0)
                    wq[q] = ws[s0 + q0 + q];
            }
            __syncthreads();
            if (e < a.terms)
                for (unsigned int q = 0; q < chunk; q++) {
                    double t = wq[q];
                    for (int i = 0; i < d; i++)
                        t *= pw[q][i][alpha[i]];
                    acc += t;
                }
        }
        if (e < a.terms)
            out[e] = acc;
    }
}

/* sum_beta L_beta u^beta by Horner's rule, one dimension at a time. */
template <int D> struct cuda_fgt_horner {
    static __device__ __forceinline__ double run(const double *l, const double *u, int p, int len)
    {
        double r = 0.0;
        for (int b = p - 1; b >= 0; b--)
            r = r * u[0] + cuda_fgt_horner<D - 1>::run(l + b * len, u + 1, p, len / p);
        return r;
    }
};
template <> struct cuda_fgt_horner<0> {
    static __device__ __forceinline__ double run(const double *l, const double *, int, int)
    {
        return l[0];
    }
};

/* One block per (target box, segment of GK_FGT_CUDA_SEG of its targets): the neighbourhood a
 * chunk of cells at a time (kept in order by a block scan, so sums run in a fixed order),
 * expanded pairs turned into the box's Taylor coefficients in shared memory, direct pairs
 * summed per target, then each target's polynomial. */
template <typename T, int D>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_main(cuda_fgt_args a, const unsigned int *cells_t, const unsigned int *start_t,
                  const unsigned int *count_t, const double *off_t, const unsigned int *index_t,
                  const int *run_of_s, const unsigned int *start_s, const unsigned int *count_s,
                  const double *off_s, const double *ws, const double *mom, const int *has, T *out)
{
    typedef cub::BlockScan<int, GK_CUDA_THREADS> scan;
    __shared__ typename scan::TempStorage tmp;
    __shared__ int dlist[GK_CUDA_THREADS], hlist[GK_CUDA_THREADS];
    __shared__ double dl_delta[GK_CUDA_THREADS][D], hl_delta[GK_CUDA_THREADS][D];
    __shared__ int nd, nh;
    __shared__ double mat[D][GK_FGT_MAX_P][GK_FGT_MAX_P];
    __shared__ double herm[D][2 * GK_FGT_MAX_P];
    extern __shared__ double dyn[];
    const int p = a.g.p;
    const unsigned int terms = a.terms;
    double *L = dyn, *s1 = dyn + terms, *s2 = dyn + 2 * terms;
    const unsigned int r = blockIdx.x, t0 = start_t[r], nt = count_t[r];
    const unsigned int seg0 = blockIdx.y * GK_FGT_CUDA_SEG;
    if (seg0 >= nt)
        return;
    const unsigned int seg1 = nt - seg0 < GK_FGT_CUDA_SEG ? nt : seg0 + GK_FGT_CUDA_SEG;
    int kc[4], lo[4], size[4];
    cuda_fgt_coords(a, cells_t[r], kc);
    const unsigned int vol = cuda_fgt_hood(a, kc, lo, size);
    for (unsigned int e = threadIdx.x; e < terms; e += blockDim.x)
        L[e] = 0.0;
    /* each thread's targets (at most SEG / threads) */
    constexpr int TT = GK_FGT_CUDA_SEG / GK_CUDA_THREADS;
    double acc[TT], u[TT][D];
    for (int j = 0; j < TT; j++) {
        acc[j] = 0.0;
        unsigned int q = t0 + seg0 + threadIdx.x + (unsigned int)j * blockDim.x;
        for (int i = 0; i < D; i++)
            u[j][i] = q < t0 + seg1 ? off_t[(size_t)q * D + i] : 0.0;
    }
    bool expands = false;
    for (unsigned int v0 = 0; v0 < vol; v0 += blockDim.x) {
        unsigned int v = v0 + threadIdx.x;
        int kind = 0, run = -1; /* 1 direct, 2 expanded */
        double delta[D];
        if (v < vol) {
            int k[4];
            unsigned int cs = cuda_fgt_hood_cell(a, v, lo, size, k);
            run = run_of_s[cs];
            if (run >= 0 && cuda_fgt_gap2(a, kc, k) < a.g.r2) {
                kind = cuda_fgt_direct(a, (double)count_s[run], (double)nt, has[run] != 0) ? 1 : 2;
                for (int i = 0; i < D; i++)
                    delta[i] = (gk__fgt_centre(&a.g, i, (size_t)kc[i]) -
                                gk__fgt_centre(&a.g, i, (size_t)k[i])) *
                               a.g.sg;
            }
        }
        int pd, ph, td, th;
        scan(tmp).ExclusiveSum(kind == 1 ? 1 : 0, pd, td);
        __syncthreads();
        scan(tmp).ExclusiveSum(kind == 2 ? 1 : 0, ph, th);
        if (kind == 1) {
            dlist[pd] = run;
            for (int i = 0; i < D; i++)
                dl_delta[pd][i] = delta[i];
        } else if (kind == 2) {
            hlist[ph] = run;
            for (int i = 0; i < D; i++)
                hl_delta[ph][i] = delta[i];
        }
        if (threadIdx.x == 0) {
            nd = td;
            nh = th;
        }
        __syncthreads();
        /* expanded pairs: L += (M_0 x ... x M_{D-1}) A, the block together */
        for (int h = 0; h < nh; h++) {
            expands = true;
            if (threadIdx.x < D) {
                const int i = (int)threadIdx.x;
                double xx = hl_delta[h][i], *hh = herm[i];
                hh[0] = exp(-xx * xx);
                hh[1] = 2.0 * xx * hh[0];
                for (int k = 2; k < 2 * p - 1; k++)
                    hh[k] = 2.0 * xx * hh[k - 1] - 2.0 * (double)(k - 1) * hh[k - 2];
            }
            __syncthreads();
            for (int e = (int)threadIdx.x; e < D * p * p; e += (int)blockDim.x) {
                int i = e / (p * p), kk = e / p % p, jj = e % p;
                double f = 1.0;
                for (int q = 1; q <= kk; q++)
                    f /= -(double)q;
                mat[i][kk][jj] = f * herm[i][kk + jj];
            }
            __syncthreads();
            const double *in = mom + (size_t)hlist[h] * terms;
            unsigned int inner = terms / (unsigned int)p;
            for (int i = 0; i < D; i++) {
                double *o = i == D - 1 ? L : i % 2 ? s2 : s1;
                for (unsigned int e = threadIdx.x; e < terms; e += blockDim.x) {
                    unsigned int q = e % inner, bk = e / inner % (unsigned int)p,
                                 ob = e / (inner * (unsigned int)p);
                    double val = 0.0;
                    for (int aj = 0; aj < p; aj++)
                        val += mat[i][bk][aj] *
                               in[(ob * (unsigned int)p + (unsigned int)aj) * inner + q];
                    if (i == D - 1)
                        o[e] += val;
                    else
                        o[e] = val;
                }
                __syncthreads();
                in = o;
                inner /= (unsigned int)p;
            }
        }
        /* direct pairs: each thread its targets against the listed boxes' sources */
        for (int h = 0; h < nd; h++) {
            const unsigned int s0 = start_s[dlist[h]], ns = count_s[dlist[h]];
            double dd[D];
            for (int i = 0; i < D; i++)
                dd[i] = dl_delta[h][i];
            for (unsigned int q = s0; q < s0 + ns; q++) {
                double vq[D];
                for (int i = 0; i < D; i++)
                    vq[i] = off_s[(size_t)q * D + i] - dd[i];
                const double wq = ws[q];
                for (int j = 0; j < TT; j++) {
                    double dist = 0.0;
                    for (int i = 0; i < D; i++) {
                        double z = u[j][i] - vq[i];
                        dist += z * z;
                    }
                    if constexpr (sizeof(T) == 4)
                        acc[j] += (double)expf(-(float)dist) * wq;
                    else
                        acc[j] += exp(-dist) * wq;
                }
            }
        }
        __syncthreads();
    }
    for (int j = 0; j < TT; j++) {
        unsigned int q = t0 + seg0 + threadIdx.x + (unsigned int)j * blockDim.x;
        if (q >= t0 + seg1)
            continue;
        double val = acc[j];
        if (expands)
            val += cuda_fgt_horner<D>::run(L, u[j], p, (int)(terms / (unsigned int)p));
        out[index_t[q]] = (T)val;
    }
}

/* ------------------------------------------------------------------------------------------
 * The grid strategy (docs/fgt.md): pass i turns dimension i of every cell from source box to
 * target box, out[c] = sum over the offsets dk of M_i(dk) applied along term index i to
 * in[c - dk stride]; the last pass only where a cell has targets (run_of_t >= 0). mats holds
 * M_i(dk) for dk = -span/2 .. span/2 at [(i span + dk + span/2) p^2]. One block per cell.
 * ---------------------------------------------------------------------------------------- */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_pass(cuda_fgt_args a, int i, unsigned int stride, unsigned int span,
                  const double *mats, const int *run_of_t, const double *in, double *out)
{
    for (unsigned int c = blockIdx.x; c < (unsigned int)a.g.cells; c += gridDim.x) {
        if (run_of_t != NULL && run_of_t[c] < 0)
            continue;
        int k[4];
        cuda_fgt_coords(a, c, k);
        const int p = a.g.p, r = a.g.reach[i], half = (int)span / 2;
        const int lo = k[i] - r > 0 ? k[i] - r : 0;
        const int hi = k[i] + r < (int)a.nb[i] - 1 ? k[i] + r : (int)a.nb[i] - 1;
        unsigned int inner = 1;
        for (int j = i + 1; j < a.g.d; j++)
            inner *= (unsigned int)p;
        for (unsigned int e = threadIdx.x; e < a.terms; e += blockDim.x) {
            const unsigned int q = e % inner, bk = e / inner % (unsigned int)p,
                               ob = e / (inner * (unsigned int)p);
            double val = 0.0;
            for (int kb = lo; kb <= hi; kb++) {
                const double *m =
                    mats + ((size_t)i * span + (size_t)(k[i] - kb + half)) * (size_t)(p * p) +
                    (size_t)bk * (size_t)p;
                const double *src =
                    in + (size_t)((long long)c + (long long)(kb - k[i]) * stride) * a.terms;
                for (int aj = 0; aj < p; aj++)
                    val += m[aj] * src[(ob * (unsigned int)p + (unsigned int)aj) * inner + q];
            }
            out[(size_t)c * a.terms + e] = val;
        }
    }
}

/* Each sorted target: its cell's Taylor polynomial at its offsets. */
template <typename T, int D>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_fgt_grid_eval(cuda_fgt_args a, size_t rows, const unsigned int *keys,
                       const unsigned int *index, const double *off, const double *l, T *out)
{
    for (size_t q = blockIdx.x * (size_t)blockDim.x + threadIdx.x; q < rows;
         q += (size_t)gridDim.x * blockDim.x) {
        double u[D];
        for (int i = 0; i < D; i++)
            u[i] = off[q * D + i];
        const double v = cuda_fgt_horner<D>::run(l + (size_t)keys[q] * a.terms, u, a.g.p,
                                                 (int)(a.terms / (unsigned int)a.g.p));
        out[index[q]] = (T)v;
    }
}

#endif /* GK_CUDA_RBF_MATVEC_FGT_CUH */
