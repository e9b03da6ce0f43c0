/* SPDX-License-Identifier: MIT */
/* rbf_matvec_fgt.cu - the launch of the device's fast Gauss transform: the data's bounds, the
 * grid the cost model picks, the binning (CUB sorts), moments and the per-box kernel. */
#include "rbf/rbf_matvec_fgt.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "rbf/rbf_matvec_fgt.cuh"

/* Box sides tried (units of h), as the CPU's (cpu/rbf/fgt.c) less the smallest. */
static const double fgt_sides[] = {0.35, 0.5, 0.7, 1.0, 2.0, 3.0};
#define FGT_SIDES (sizeof fgt_sides / sizeof fgt_sides[0])
/* A directly summed pair of the difference forms, in the model's units, and what the
 * transform's launches and two waits cost. Calibrated on the GPU at 1e6^2 x 3 float32: the
 * transform ran at 3e-12 to 1.1e-11 s a unit of its model (grids on N(0,1) and clusters at
 * gamma 1/d, pairs of boxes on tight clusters at gamma 2), direct summation at 3.55e-13 s a pair
 * (355 ms): 0.035 units at the transform's slowest rate, so that it runs only where it wins.
 * float64's pair costs five times float32's as before (not measured on a GPU). */
#define FGT_DIRECT_F32 0.035
#define FGT_DIRECT_F64 0.175
#define FGT_FIXED 2e7
/* Moments in bytes at most; the grid strategy's two arrays of cells x terms doubles, at most. */
#define FGT_MAX_MOMENT_BYTES ((size_t)1 << 30)
#define FGT_MAX_GRID_BYTES ((size_t)1 << 31)

/* Frees what it holds when the call returns (stream-ordered, so queued work still sees it). */
struct fgt_buffers {
    gk_cuda_state *s;
    void *p[40];
    int n = 0;
    ~fgt_buffers()
    {
        for (int i = 0; i < n; i++)
            gk__cuda_free(s, p[i]);
    }
    template <typename P> gk_status get(P **out, size_t bytes)
    {
        void *q = NULL;
        gk_status r = gk__cuda_check(gk__cuda_malloc(s, bytes > 0 ? bytes : 16, &q),
                                     "rbf_matvec (fgt) scratch");
        if (r != GK_OK)
            return r;
        p[n++] = q;
        *out = (P *)q;
        return GK_OK;
    }
};

#define FGT_TRY(call)                                                                              \
    do {                                                                                           \
        gk_status fgt_r_ = (call);                                                                 \
        if (fgt_r_ != GK_OK)                                                                       \
            return fgt_r_;                                                                         \
    } while (0)

static cuda_fgt_args fgt_args(const gk_fgt_grid &g, bool f32)
{
    cuda_fgt_args a;
    a.g = g;
    for (int i = 0; i < 4; i++)
        a.nb[i] = i < g.d ? (unsigned int)g.nb[i] : 1u;
    a.near = f32 ? GK_FGT_CUDA_NEAR_F32 : GK_FGT_CUDA_NEAR_F64;
    a.terms = g.p > 0 ? (unsigned int)gk__fgt_terms(g.d, g.p) : 0u;
    a.h2l = g.p > 0 ? gk__fgt_h2l_cost(g.d, g.p) : 0.0;
    return a;
}

template <typename T, int D>
static gk_status
fgt_main_launch(gk_cuda_state *s, const cuda_fgt_args &a, unsigned int runs_t, unsigned int segs,
                const unsigned int *cells_t, const unsigned int *start_t,
                const unsigned int *count_t, const double *off_t, const unsigned int *index_t,
                const int *run_of_s, const unsigned int *start_s, const unsigned int *count_s,
                const double *off_s, const double *ws, const double *mom, const int *has, T *out)
{
    const size_t smem = 3 * (size_t)a.terms * sizeof(double);
    FGT_TRY(
        gk__cuda_check(cudaFuncSetAttribute(cuda_fgt_main<T, D>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                       "cudaFuncSetAttribute (fgt)"));
    cuda_fgt_main<T, D><<<dim3(runs_t, segs), GK_CUDA_THREADS, smem, s->stream>>>(
        a, cells_t, start_t, count_t, off_t, index_t, run_of_s, start_s, count_s, off_s, ws, mom,
        has, out);
    return gk__cuda_launched("cuda_fgt_main");
}

/* One side's rows binned: sorted by cell (stable: the same order every run), the occupied
 * cells (runs), their starts and counts, the sorted offsets (and weights). */
struct fgt_binned {
    unsigned int *keys, *index, *cells, *count, *start, *runs;
    double *off, *w;
};

template <typename T>
static gk_status fgt_bin(gk_cuda_state *s, fgt_buffers &b, const cuda_fgt_args &a, size_t rows,
                         const T *p, const T *w, fgt_binned *o)
{
    cudaStream_t st = s->stream;
    unsigned int *keys_in, *index_in;
    FGT_TRY(b.get(&keys_in, rows * sizeof(unsigned int)));
    FGT_TRY(b.get(&index_in, rows * sizeof(unsigned int)));
    FGT_TRY(b.get(&o->keys, rows * sizeof(unsigned int)));
    FGT_TRY(b.get(&o->index, rows * sizeof(unsigned int)));
    FGT_TRY(b.get(&o->cells, rows * sizeof(unsigned int)));
    FGT_TRY(b.get(&o->count, rows * sizeof(unsigned int)));
    FGT_TRY(b.get(&o->start, rows * sizeof(unsigned int)));
    FGT_TRY(b.get(&o->runs, sizeof(unsigned int)));
    FGT_TRY(b.get(&o->off, rows * (size_t)a.g.d * sizeof(double)));
    o->w = NULL;
    if (w != NULL)
        FGT_TRY(b.get(&o->w, rows * sizeof(double)));
    const unsigned int grid = gk__cuda_blocks(rows, GK_CUDA_THREADS, (size_t)s->sm_count * 8);
    cuda_fgt_keys<T><<<grid, GK_CUDA_THREADS, 0, st>>>(a, rows, p, keys_in, index_in);
    FGT_TRY(gk__cuda_launched("cuda_fgt_keys"));
    int bits = 1;
    while (bits < 32 && ((size_t)1 << bits) < a.g.cells)
        bits++;
    const int items = (int)rows;
    size_t sort_bytes = 0, rle_bytes = 0, scan_bytes = 0;
    FGT_TRY(gk__cuda_check(cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, keys_in, o->keys,
                                                           index_in, o->index, items, 0, bits, st),
                           "cub sort (fgt)"));
    FGT_TRY(gk__cuda_check(cub::DeviceRunLengthEncode::Encode(NULL, rle_bytes, o->keys, o->cells,
                                                              o->count, o->runs, items, st),
                           "cub run-length encode (fgt)"));
    FGT_TRY(gk__cuda_check(
        cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, o->count, o->start, items, st),
        "cub scan (fgt)"));
    size_t tmp_bytes = sort_bytes > rle_bytes ? sort_bytes : rle_bytes;
    tmp_bytes = tmp_bytes > scan_bytes ? tmp_bytes : scan_bytes;
    void *tmp;
    FGT_TRY(b.get(&tmp, tmp_bytes));
    FGT_TRY(gk__cuda_check(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, keys_in, o->keys,
                                                           index_in, o->index, items, 0, bits, st),
                           "cub sort (fgt)"));
    FGT_TRY(gk__cuda_check(cub::DeviceRunLengthEncode::Encode(tmp, tmp_bytes, o->keys, o->cells,
                                                              o->count, o->runs, items, st),
                           "cub run-length encode (fgt)"));
    /* the scan runs over all rows' slots: those past the runs hold no count, and the starts
     * they give are never read */
    FGT_TRY(
        gk__cuda_check(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, o->count, o->start, items, st),
                       "cub scan (fgt)"));
    cuda_fgt_offsets<T>
        <<<grid, GK_CUDA_THREADS, 0, st>>>(a, rows, p, w, o->keys, o->index, o->off, o->w);
    return gk__cuda_launched("cuda_fgt_offsets");
}

/* Per candidate grid, read back: occupied source cells, the largest source count, occupied
 * target cells, the largest target count, then the sampled cost and cells sampled. */
struct fgt_stats {
    unsigned int occ_s, max_s, occ_t, max_t;
    unsigned long long cost, seen;
};

/* The grid strategy: moments at their cells, d passes over the grid, each target's cell
 * evaluated. */
template <typename T>
static gk_status fgt_grid_run(gk_cuda_state *s, fgt_buffers &b, const cuda_fgt_args &a, size_t m,
                              const fgt_binned &bs, const fgt_binned &bt, const fgt_stats &h,
                              T *out)
{
    cudaStream_t st = s->stream;
    const gk_fgt_grid &g = a.g;
    const int d = g.d, p = g.p;
    int rmax = 0;
    for (int i = 0; i < d; i++)
        rmax = g.reach[i] > rmax ? g.reach[i] : rmax;
    const unsigned int span = 2u * (unsigned int)rmax + 1u;
    std::vector<double> mats((size_t)d * span * (size_t)(p * p)), herm(2 * (size_t)p + 2);
    for (int i = 0; i < d; i++)
        for (int dk = -rmax; dk <= rmax; dk++)
            gk__fgt_matrix(p, (double)dk * g.hw * g.sg, herm.data(),
                           mats.data() +
                               ((size_t)i * span + (size_t)(dk + rmax)) * (size_t)(p * p));
    double *dmats, *bufs[2];
    int *run_of_t;
    const size_t cells = g.cells, bytes = cells * a.terms * sizeof(double);
    FGT_TRY(b.get(&dmats, mats.size() * sizeof(double)));
    FGT_TRY(b.get(&bufs[0], bytes));
    FGT_TRY(b.get(&bufs[1], bytes));
    FGT_TRY(b.get(&run_of_t, cells * sizeof(int)));
    FGT_TRY(gk__cuda_check(cudaMemcpyAsync(dmats, mats.data(), mats.size() * sizeof(double),
                                           cudaMemcpyHostToDevice, st),
                           "cudaMemcpyAsync (fgt matrices)"));
    FGT_TRY(gk__cuda_check(cudaMemsetAsync(bufs[0], 0, bytes, st), "cudaMemsetAsync (fgt)"));
    FGT_TRY(gk__cuda_check(cudaMemsetAsync(run_of_t, 0xff, cells * sizeof(int), st),
                           "cudaMemsetAsync (fgt)"));
    cuda_fgt_run_of<<<gk__cuda_blocks(h.occ_t, GK_CUDA_THREADS, (size_t)s->sm_count * 8),
                      GK_CUDA_THREADS, 0, st>>>(h.occ_t, bt.cells, run_of_t);
    FGT_TRY(gk__cuda_launched("cuda_fgt_run_of"));
    cuda_fgt_moments<<<h.occ_s, GK_CUDA_THREADS, 0, st>>>(a, h.max_t, bs.start, bs.count, bs.off,
                                                          bs.w, bs.cells, bufs[0], NULL);
    FGT_TRY(gk__cuda_launched("cuda_fgt_moments"));
    unsigned int stride = (unsigned int)cells;
    for (int i = 0; i < d; i++) {
        stride /= (unsigned int)g.nb[i];
        cuda_fgt_pass<<<gk__cuda_blocks(cells, 1, (size_t)s->sm_count * 64), GK_CUDA_THREADS, 0,
                        st>>>(a, i, stride, span, dmats, i == d - 1 ? run_of_t : NULL, bufs[i % 2],
                              bufs[(i + 1) % 2]);
        FGT_TRY(gk__cuda_launched("cuda_fgt_pass"));
    }
    const double *l = bufs[d % 2];
    const unsigned int grid = gk__cuda_blocks(m, GK_CUDA_THREADS, (size_t)s->sm_count * 8);
    switch (d) {
    case 1:
        cuda_fgt_grid_eval<T, 1>
            <<<grid, GK_CUDA_THREADS, 0, st>>>(a, m, bt.keys, bt.index, bt.off, l, out);
        break;
    case 2:
        cuda_fgt_grid_eval<T, 2>
            <<<grid, GK_CUDA_THREADS, 0, st>>>(a, m, bt.keys, bt.index, bt.off, l, out);
        break;
    case 3:
        cuda_fgt_grid_eval<T, 3>
            <<<grid, GK_CUDA_THREADS, 0, st>>>(a, m, bt.keys, bt.index, bt.off, l, out);
        break;
    default:
        cuda_fgt_grid_eval<T, 4>
            <<<grid, GK_CUDA_THREADS, 0, st>>>(a, m, bt.keys, bt.index, bt.off, l, out);
        break;
    }
    return gk__cuda_launched("cuda_fgt_grid_eval");
}

template <typename T>
static gk_status fgt_run(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma, const T *x,
                         const T *y, const T *w, T *out, bool forced, bool *ran, char *why,
                         size_t why_size)
{
    cudaStream_t st = s->stream;
    const bool f32 = sizeof(T) == 4;
    fgt_buffers b;
    b.s = s;
    /* the bounds */
    const unsigned int bgrid = gk__cuda_blocks(m + n, GK_CUDA_THREADS, (size_t)s->sm_count * 4);
    double *part, *res, host[9];
    FGT_TRY(b.get(&part, (size_t)bgrid * 9 * sizeof(double)));
    FGT_TRY(b.get(&res, 9 * sizeof(double)));
    cuda_fgt_bounds<T><<<bgrid, GK_CUDA_THREADS, 0, st>>>(m, n, (int)d, x, y, w, part);
    FGT_TRY(gk__cuda_launched("cuda_fgt_bounds"));
    cuda_fgt_bounds_join<<<1, GK_CUDA_THREADS, 0, st>>>(bgrid, part, res);
    FGT_TRY(gk__cuda_launched("cuda_fgt_bounds_join"));
    FGT_TRY(gk__cuda_check(cudaMemcpyAsync(host, res, sizeof host, cudaMemcpyDeviceToHost, st),
                           "cudaMemcpyAsync (fgt bounds)"));
    FGT_TRY(gk__cuda_check(cudaStreamSynchronize(st), "cudaStreamSynchronize (fgt bounds)"));
    if (host[8] != 0.0) {
        snprintf(why, why_size, "fgt declined: NaN or infinity in x, y or w");
        return GK_OK;
    }
    /* each candidate grid's occupancy and sampled cost, read back at once */
    gk_fgt_grid grids[FGT_SIDES];
    bool ok[FGT_SIDES];
    unsigned int *counts_s, *counts_t;
    fgt_stats *stats, hs[FGT_SIDES];
    FGT_TRY(b.get(&counts_s, GK_FGT_CUDA_MAX_CELLS * sizeof(unsigned int)));
    FGT_TRY(b.get(&counts_t, GK_FGT_CUDA_MAX_CELLS * sizeof(unsigned int)));
    FGT_TRY(b.get(&stats, sizeof hs));
    FGT_TRY(gk__cuda_check(cudaMemsetAsync(stats, 0, sizeof hs, st), "cudaMemsetAsync (fgt)"));
    for (size_t c = 0; c < FGT_SIDES; c++) {
        gk__fgt_grid_make(&grids[c], (int)d, !f32, gamma, fgt_sides[c], host, host + 4,
                          GK_FGT_CUDA_MAX_CELLS);
        const gk_fgt_grid &g = grids[c];
        ok[c] = g.cells > 0 && (g.p == 0 || gk__fgt_terms(g.d, g.p) <= GK_FGT_CUDA_GRID_TERMS);
        if (!ok[c])
            continue;
        const cuda_fgt_args a = fgt_args(g, f32);
        FGT_TRY(gk__cuda_check(cudaMemsetAsync(counts_s, 0, g.cells * sizeof(unsigned int), st),
                               "cudaMemsetAsync (fgt)"));
        FGT_TRY(gk__cuda_check(cudaMemsetAsync(counts_t, 0, g.cells * sizeof(unsigned int), st),
                               "cudaMemsetAsync (fgt)"));
        cuda_fgt_count<T><<<gk__cuda_blocks(n, GK_CUDA_THREADS, (size_t)s->sm_count * 8),
                            GK_CUDA_THREADS, 0, st>>>(a, n, y, counts_s, &stats[c].occ_s);
        FGT_TRY(gk__cuda_launched("cuda_fgt_count"));
        cuda_fgt_count<T><<<gk__cuda_blocks(m, GK_CUDA_THREADS, (size_t)s->sm_count * 8),
                            GK_CUDA_THREADS, 0, st>>>(a, m, x, counts_t, &stats[c].occ_t);
        FGT_TRY(gk__cuda_launched("cuda_fgt_count"));
        const unsigned int stride =
            g.cells > GK_FGT_CUDA_SAMPLE ? (unsigned int)(g.cells / GK_FGT_CUDA_SAMPLE) : 1u;
        cuda_fgt_cost<<<gk__cuda_blocks(GK_FGT_CUDA_SAMPLE, GK_CUDA_THREADS, 64), GK_CUDA_THREADS,
                        0, st>>>(a, stride, &stats[c].max_t, counts_t, counts_s, &stats[c].cost,
                                 &stats[c].seen);
        FGT_TRY(gk__cuda_launched("cuda_fgt_cost"));
    }
    FGT_TRY(gk__cuda_check(cudaMemcpyAsync(hs, stats, sizeof hs, cudaMemcpyDeviceToHost, st),
                           "cudaMemcpyAsync (fgt stats)"));
    FGT_TRY(gk__cuda_check(cudaStreamSynchronize(st), "cudaStreamSynchronize (fgt stats)"));
    int best = -1;
    bool best_grid = false;
    double best_cost = INFINITY;
    for (size_t c = 0; c < FGT_SIDES; c++) {
        if (!ok[c] || hs[c].seen == 0)
            continue;
        const gk_fgt_grid &g = grids[c];
        const size_t terms = g.p > 0 ? gk__fgt_terms(g.d, g.p) : 0;
        const double pc = g.p > 0 ? gk__fgt_point_cost(g.d, g.p) : 0.0;
        if (terms <= GK_FGT_CUDA_MAX_TERMS &&
            (size_t)hs[c].occ_s * terms <= FGT_MAX_MOMENT_BYTES / sizeof(double)) {
            const double cost = (double)hs[c].cost * ((double)g.cells / (double)hs[c].seen) +
                                (double)n * pc + FGT_FIXED;
            if (cost < best_cost) {
                best_cost = cost;
                best = (int)c;
                best_grid = false;
            }
        }
        if (g.p > 0 &&
            (double)g.cells * (double)terms * 2.0 * sizeof(double) <= (double)FGT_MAX_GRID_BYTES) {
            const double cost =
                gk__fgt_grid_cost(g.d, g.p, g.cells, g.reach, g.nb, m, n) + FGT_FIXED;
            if (cost < best_cost) {
                best_cost = cost;
                best = (int)c;
                best_grid = true;
            }
        }
    }
    const double direct = (double)m * (double)n * (f32 ? FGT_DIRECT_F32 : FGT_DIRECT_F64);
    if (best < 0 || (!forced && best_cost >= direct)) {
        if (best < 0)
            snprintf(why, why_size, "fgt declined: no grid of at most %zu cells fits",
                     GK_FGT_CUDA_MAX_CELLS);
        else
            snprintf(why, why_size, "fgt declined: cost %.3g >= %.3g direct", best_cost, direct);
        return GK_OK;
    }
    /* the transform on the chosen grid */
    const gk_fgt_grid &g = grids[best];
    const fgt_stats &h = hs[best];
    const cuda_fgt_args a = fgt_args(g, f32);
    fgt_binned bs, bt;
    FGT_TRY(fgt_bin<T>(s, b, a, n, y, w, &bs));
    FGT_TRY(fgt_bin<T>(s, b, a, m, x, NULL, &bt));
    if (best_grid) {
        FGT_TRY(fgt_grid_run<T>(s, b, a, m, bs, bt, h, out));
        *ran = true;
        snprintf(why, why_size, "side %.2f h, p %d, grid of %zu cells, cost %.3g vs %.3g direct",
                 g.side, g.p, g.cells, best_cost, direct);
        return GK_OK;
    }
    int *run_of_s, *has;
    double *mom;
    FGT_TRY(b.get(&run_of_s, g.cells * sizeof(int)));
    FGT_TRY(b.get(&has, (size_t)h.occ_s * sizeof(int)));
    FGT_TRY(b.get(&mom, (size_t)h.occ_s * a.terms * sizeof(double)));
    FGT_TRY(gk__cuda_check(cudaMemsetAsync(run_of_s, 0xff, g.cells * sizeof(int), st),
                           "cudaMemsetAsync (fgt)"));
    cuda_fgt_run_of<<<gk__cuda_blocks(h.occ_s, GK_CUDA_THREADS, (size_t)s->sm_count * 8),
                      GK_CUDA_THREADS, 0, st>>>(h.occ_s, bs.cells, run_of_s);
    FGT_TRY(gk__cuda_launched("cuda_fgt_run_of"));
    cuda_fgt_moments<<<h.occ_s, GK_CUDA_THREADS, 0, st>>>(a, h.max_t, bs.start, bs.count, bs.off,
                                                          bs.w, NULL, mom, has);
    FGT_TRY(gk__cuda_launched("cuda_fgt_moments"));
    const unsigned int segs = (h.max_t + GK_FGT_CUDA_SEG - 1) / GK_FGT_CUDA_SEG;
    if (segs > GK_CUDA_GRID_Y_MAX) {
        snprintf(why, why_size, "fgt declined: %u targets in one box", h.max_t);
        return GK_OK;
    }
    switch (d) {
    case 1:
        FGT_TRY((fgt_main_launch<T, 1>(s, a, h.occ_t, segs, bt.cells, bt.start, bt.count, bt.off,
                                       bt.index, run_of_s, bs.start, bs.count, bs.off, bs.w, mom,
                                       has, out)));
        break;
    case 2:
        FGT_TRY((fgt_main_launch<T, 2>(s, a, h.occ_t, segs, bt.cells, bt.start, bt.count, bt.off,
                                       bt.index, run_of_s, bs.start, bs.count, bs.off, bs.w, mom,
                                       has, out)));
        break;
    case 3:
        FGT_TRY((fgt_main_launch<T, 3>(s, a, h.occ_t, segs, bt.cells, bt.start, bt.count, bt.off,
                                       bt.index, run_of_s, bs.start, bs.count, bs.off, bs.w, mom,
                                       has, out)));
        break;
    default:
        FGT_TRY((fgt_main_launch<T, 4>(s, a, h.occ_t, segs, bt.cells, bt.start, bt.count, bt.off,
                                       bt.index, run_of_s, bs.start, bs.count, bs.off, bs.w, mom,
                                       has, out)));
        break;
    }
    *ran = true;
    snprintf(why, why_size, "side %.2f h, p %d, %u x %u boxes, cost %.3g vs %.3g direct", g.side,
             g.p, h.occ_s, h.occ_t, best_cost, direct);
    return GK_OK;
}

gk_status gk__cuda_matvec_fgt(gk_cuda_state *s, gk_dtype t, size_t m, size_t n, size_t d,
                              double gamma, const void *x, const void *y, const void *w, void *out,
                              bool forced, bool *ran, char *why, size_t why_size)
{
    *ran = false;
    const double g = t == GK_FLOAT32 ? (double)(float)gamma : gamma;
    if (m == 0 || n == 0 || d == 0 || d > GK_FGT_MAX_D || !(g > 0.0) || !std::isfinite(g) ||
        m > 0xffffffffu || n > 0xffffffffu || m > 0x7fffffffu || n > 0x7fffffffu) {
        snprintf(why, why_size, "fgt declined: %zu x %zu x %zu, gamma %g", m, n, d, g);
        return GK_OK;
    }
    if (t == GK_FLOAT32)
        return fgt_run<float>(s, m, n, d, g, (const float *)x, (const float *)y, (const float *)w,
                              (float *)out, forced, ran, why, why_size);
    return fgt_run<double>(s, m, n, d, g, (const double *)x, (const double *)y, (const double *)w,
                           (double *)out, forced, ran, why, why_size);
}
