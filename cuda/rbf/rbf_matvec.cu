/* SPDX-License-Identifier: MIT */
/* rbf_matvec.cu - out[i] = sum_j exp(-gamma ||x_i - y_j||^2) w[j], never forming K. */
#include <cmath>
#include <cstdio>
#include <type_traits>

#include "plan.h"
#include "rbf_matvec_dot.cuh"
#include "rbf_matvec_fact.cuh"
#include "rbf_matvec_fgt.h"
#include "rbf_matvec_small.cuh"
#include "rbf_matvec_taylor.h"
#include "rbf_matvec_tc.h"
#include "rbf_matvec_tiled.cuh"

/* Blocks per multiprocessor the split heuristic aims for (two resident, two waves). */
#define GK_MATVEC_BLOCKS_PER_SM 4

/* out[i] = sum over splits of the partials, in split order: with no atomics anywhere the result
 * does not depend on timing. skip: as cuda_rbf_matvec_small's. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_rbf_matvec_combine(size_t m, unsigned int splits, const double *__restrict__ partial,
                            T *__restrict__ out, const int *skip)
{
    if (skip != NULL && *skip)
        return;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (size_t)gridDim.x * blockDim.x) {
        double t = 0.0;
        for (unsigned int s = 0; s < splits; s++)
            t += partial[(size_t)s * m + i];
        out[i] = (T)t;
    }
}

/* One launch configuration: blocks = row tiles * splits, each split taking `per_split` of the
 * column units (chunks of y) in order. */
typedef struct cuda_matvec_plan {
    size_t splits, per_split;
    unsigned int blocks;
} cuda_matvec_plan;

/* Splits the columns only as far as needed to give every multiprocessor work. With resident > 0
 * (blocks of the kernel that fit on a multiprocessor at once) and more blocks than fit, the
 * split count is then raised, up to twice that or 16, to the one whose last wave is fullest:
 * blocks of one launch take equal time, so a last wave with a fraction f of the slots busy
 * costs a whole wave (1e6^2 x 3 at two splits: 978 blocks in 264 slots, 3.7 waves in the time
 * of 4; at seven, 3423 blocks, 12.97 waves). */
static cuda_matvec_plan cuda_matvec_split(gk_cuda_state *s, size_t m, size_t n, size_t rows,
                                          size_t cols, size_t resident)
{
    size_t mtiles = (m + rows - 1) / rows, units = (n + cols - 1) / cols;
    size_t target = (size_t)s->sm_count * GK_MATVEC_BLOCKS_PER_SM;
    size_t splits = 1;
    if (mtiles < target) {
        splits = (target + mtiles - 1) / mtiles;
        if (splits > units)
            splits = units;
    }
    const size_t slots = (size_t)s->sm_count * resident;
    if (resident > 0 && mtiles * splits > slots) {
        const size_t hi = splits * 2 > 16 ? splits * 2 : 16;
        double best = 0.0;
        size_t pick = splits;
        for (size_t t = splits; t <= hi && t <= units; t++) {
            const size_t per = (units + t - 1) / t, b = mtiles * ((units + per - 1) / per);
            const double fill = (double)b / (double)(((b + slots - 1) / slots) * slots);
            /* a higher count only for a clearly fuller last wave */
            if (fill > best + 0.01) {
                best = fill;
                pick = t;
            }
        }
        splits = pick;
    }
    cuda_matvec_plan p;
    p.per_split = (units + splits - 1) / splits;
    p.splits = (units + p.per_split - 1) / p.per_split;
    p.blocks = (unsigned int)(mtiles * p.splits);
    return p;
}

/* fact: float32 with a finite gamma > 0, where cuda_rbf_matvec_fact's bound may hold (it
 * decides per chunk); its blocks and splits are cuda_rbf_matvec_small's. */
template <typename T, int D>
static void cuda_matvec_small_launch(cudaStream_t st, const cuda_matvec_plan &p, bool check,
                                     bool fact, size_t m, size_t n, double gamma, T c, const T *x,
                                     const T *y, const T *w, T *out, double *part, const int *skip)
{
    unsigned int sc = (unsigned int)p.splits;
    if constexpr (std::is_same<T, float>::value && D >= 1) {
        if (fact) {
            const float ecoef = (float)((3.0 * D + 8.0) * 0x1p-24 * (double)(float)gamma);
            cuda_rbf_matvec_fact<D><<<p.blocks, GK_CUDA_THREADS, 0, st>>>(
                m, n, c, -c, ecoef, x, y, w, sc, p.per_split, out, part, skip);
            return;
        }
    }
    if (check)
        cuda_rbf_matvec_small<T, D, true><<<p.blocks, GK_CUDA_THREADS, 0, st>>>(
            m, n, c, x, y, w, sc, p.per_split, out, part, skip);
    else
        cuda_rbf_matvec_small<T, D, false><<<p.blocks, GK_CUDA_THREADS, 0, st>>>(
            m, n, c, x, y, w, sc, p.per_split, out, part, skip);
}

template <typename T>
static void cuda_matvec_tiled_launch(cudaStream_t st, const cuda_matvec_plan &p, bool check,
                                     size_t m, size_t n, size_t d, T c, const T *x, const T *y,
                                     const T *w, T *out, double *part)
{
    const int BK = GK_MATVEC_TILED_BK;
    unsigned int sc = (unsigned int)p.splits;
    if (check)
        cuda_rbf_matvec_tiled<T, BK, true>
            <<<p.blocks, GK_CUDA_THREADS, 0, st>>>(m, n, d, c, x, y, w, sc, p.per_split, out, part);
    else
        cuda_rbf_matvec_tiled<T, BK, false>
            <<<p.blocks, GK_CUDA_THREADS, 0, st>>>(m, n, d, c, x, y, w, sc, p.per_split, out, part);
}

/* The difference kernels, and for float32 d <= 4 the factorized one (fact). */
template <typename T>
static gk_status cuda_matvec_forms_launch(cudaStream_t st, const cuda_matvec_plan &p, bool check,
                                          bool fact, size_t m, size_t n, size_t d, double gamma,
                                          T c, const T *x, const T *y, const T *w, T *out,
                                          double *part, const int *skip)
{
    switch (d <= 4 ? (int)d : -1) {
    case 0:
        cuda_matvec_small_launch<T, 0>(st, p, check, fact, m, n, gamma, c, x, y, w, out, part,
                                       skip);
        break;
    case 1:
        cuda_matvec_small_launch<T, 1>(st, p, check, fact, m, n, gamma, c, x, y, w, out, part,
                                       skip);
        break;
    case 2:
        cuda_matvec_small_launch<T, 2>(st, p, check, fact, m, n, gamma, c, x, y, w, out, part,
                                       skip);
        break;
    case 3:
        cuda_matvec_small_launch<T, 3>(st, p, check, fact, m, n, gamma, c, x, y, w, out, part,
                                       skip);
        break;
    case 4:
        cuda_matvec_small_launch<T, 4>(st, p, check, fact, m, n, gamma, c, x, y, w, out, part,
                                       skip);
        break;
    default:
        cuda_matvec_tiled_launch<T>(st, p, check, m, n, d, c, x, y, w, out, part);
        break;
    }
    return gk__cuda_launched(d > 4            ? "cuda_rbf_matvec_tiled"
                             : fact && d >= 1 ? "cuda_rbf_matvec_fact"
                                              : "cuda_rbf_matvec_small");
}

/* Floats of workspace for the tensor-core form's operands where it applies (d <= its
 * largest), else 0. */
static size_t cuda_matvec_tc_floats(size_t m, size_t n, size_t d)
{
    return d <= GK_MATVEC_TC_MAX_D ? gk__cuda_matvec_tc_floats(m, n, d) : 0;
}

/* Centers the rows into fwork and launches the inner-product kernels: for d <= 64 the
 * tensor-core form (operands at the start of fwork) on the tiles its bound allows, into the
 * first p.splits slots of part, and cuda_rbf_matvec_dot on the others, into the next
 * p.splits (the combine kernel sums both); for larger d cuda_rbf_matvec_dot alone. */
static gk_status cuda_matvec_dot_launch(gk_cuda_state *s, const cuda_matvec_plan &p, size_t m,
                                        size_t n, size_t d, double gamma, float c, const float *x,
                                        const float *y, const float *w, float *out, double *part,
                                        float *fwork)
{
    const size_t tcf = cuda_matvec_tc_floats(m, n, d);
    cuda_matvec_centered ctr;
    gk_status r = gk__cuda_matvec_center(s, m, n, d, -c, x, y, fwork + tcf, &ctr);
    if (r != GK_OK)
        return r;
    const double g = (double)(float)gamma;
    const float ecoef = (float)(((double)d + 11.0) * 0x1p-24 * g);
    float tc_ecoef = 0.0f;
    unsigned int sc = (unsigned int)p.splits;
    if (tcf > 0) {
        tc_ecoef = (float)(gk__cuda_matvec_tc_coef(d) * g);
        r = gk__cuda_matvec_tc(s, m, n, d, c, tc_ecoef, x, y, w, ctr, fwork, sc, p.per_split, part);
        if (r != GK_OK)
            return r;
        part += p.splits * m;
    }
    cuda_rbf_matvec_dot<GK_MATVEC_TILED_BK><<<p.blocks, GK_CUDA_THREADS, 0, s->stream>>>(
        m, n, d, c, -2.0f * c, ecoef, tc_ecoef, x, y, w, ctr, sc, p.per_split, out, part);
    return gk__cuda_launched("cuda_rbf_matvec_dot");
}

/* Where the planner chose the transform: the one-box Taylor form first, which costs its box pass
 * where its bound fails and, where it holds (data whose box is narrow against the kernel's
 * width), is several times faster than the transform's grid. Waits for the stream to read its
 * decision; *wrote when it wrote out. */
static gk_status cuda_matvec_taylor_first(gk_cuda_state *s, size_t m, size_t n, size_t d,
                                          double gamma, const float *x, const float *y,
                                          const float *w, float *out, bool *wrote)
{
    *wrote = false;
    void *work = NULL;
    gk_status r = gk__cuda_workspace(s, gk__cuda_matvec_taylor_bytes(s, m, n, d), &work);
    const int *skip = NULL;
    if (r == GK_OK)
        r = gk__cuda_matvec_taylor(s, m, n, d, gamma, x, y, w, out, work, &skip);
    int host = 0;
    if (r == GK_OK)
        r = gk__cuda_check(
            cudaMemcpyAsync(&host, skip, sizeof host, cudaMemcpyDeviceToHost, s->stream),
            "cudaMemcpyAsync (taylor decision)");
    if (r == GK_OK)
        r = gk__cuda_check(cudaStreamSynchronize(s->stream),
                           "cudaStreamSynchronize (taylor decision)");
    *wrote = r == GK_OK && host != 0;
    return r;
}

template <typename T>
static gk_status cuda_rbf_matvec_run(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                                     const T *x, const T *y, const T *w, T *out)
{
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    /* d <= 4: x rows in registers, y streamed through shared memory; otherwise the tiled
     * distance block. */
    const bool small = d <= 4;
    const size_t rows = small ? (size_t)GK_CUDA_THREADS * cuda_matvec_small_shape<T>::R
                              : (size_t)cuda_rbf_shape<T>::BM;
    const size_t cols =
        small ? (size_t)cuda_matvec_small_shape<T>::CHUNK : (size_t)cuda_rbf_shape<T>::BN;
    /* The d <= 4 kernels hold two blocks on a multiprocessor (96 to 128 registers a thread). */
    cuda_matvec_plan p = cuda_matvec_split(s, m, n, rows, cols, small ? 2 : 0);
    if ((m + rows - 1) / rows * p.splits > GK_CUDA_GRID_X_MAX)
        return gk__cuda_error(GK_E_UNSUPPORTED, "m (%zu) exceeds the grid's limit", m);
    T c = cuda_rbf_constant(gamma, T(0));
    const gk_dtype t = sizeof(T) == 4 ? GK_FLOAT32 : GK_FLOAT64;
    cuda_rbf_plan plan = gk__cuda_rbf_plan_matvec(s, t, m, n, d, gamma);
    if (plan.form == CUDA_RBF_MATVEC_FGT && !plan.forced && std::isfinite((float)gamma)) {
        bool wrote = false;
        if constexpr (std::is_same<T, float>::value)
            r = cuda_matvec_taylor_first(s, m, n, d, gamma, x, y, w, out, &wrote);
        if (r != GK_OK)
            return r;
        if (wrote) {
            plan.form = CUDA_RBF_MATVEC_TAYLOR;
            snprintf(plan.why, sizeof plan.why,
                     "one expansion: its bound holds for the data's box, before the transform");
            gk__cuda_rbf_log(s, "rbf_matvec", m, n, d, plan);
            return GK_OK;
        }
    }
    if (plan.form == CUDA_RBF_MATVEC_FGT) {
        bool ran = false;
        char why[sizeof plan.why];
        r = gk__cuda_matvec_fgt(s, t, m, n, d, gamma, x, y, w, out, plan.forced, &ran, why,
                                sizeof why);
        if (r != GK_OK)
            return r;
        if (ran) {
            memcpy(plan.why, why, sizeof why);
            gk__cuda_rbf_log(s, "rbf_matvec", m, n, d, plan);
            return GK_OK;
        }
        plan = gk__cuda_rbf_plan_matvec_after_fgt(s, t, m, n, d, gamma, why);
    }
    gk__cuda_rbf_log(s, "rbf_matvec", m, n, d, plan);
    const bool dot = plan.form == CUDA_RBF_MATVEC_DOT;
    /* The tensor-core form and the inner-product kernel each fill p.splits partial slots. */
    const bool tc = dot && d <= GK_MATVEC_TC_MAX_D;
    const size_t slots = tc ? 2 * p.splits : p.splits;
    /* One workspace: the split partials (16-byte aligned after them), then the tensor-core
     * operands and the centered rows, then (16-byte aligned) the Taylor form's. */
    const size_t part_bytes = slots > 1 ? gk__cuda_round16(slots * m * sizeof(double)) : 0;
    const size_t fbytes =
        part_bytes +
        (dot ? (cuda_matvec_tc_floats(m, n, d) + gk__cuda_matvec_center_floats(m, n, d)) *
                   sizeof(float)
             : 0);
    const size_t taylor_bytes =
        plan.form == CUDA_RBF_MATVEC_TAYLOR ? gk__cuda_matvec_taylor_bytes(s, m, n, d) : 0;
    const size_t taylor_off = gk__cuda_round16(fbytes);
    const size_t bytes = taylor_bytes > 0 ? taylor_off + taylor_bytes : fbytes;
    double *part = NULL;
    float *fwork = NULL;
    void *taylor_work = NULL;
    if (bytes > 0) {
        void *work = NULL;
        r = gk__cuda_workspace(s, bytes, &work);
        if (r != GK_OK)
            return r;
        part = slots > 1 ? (double *)work : NULL;
        fwork = (float *)((char *)work + part_bytes);
        taylor_work = (char *)work + taylor_off;
    }
    /* The identical-rows test costs two instructions per pair in a kernel bound by instruction
     * issue, so only a c that needs it pays for it. */
    bool check = gk__rbf_needs_zero_test(c);
    bool fact = plan.form == CUDA_RBF_MATVEC_FACT || plan.form == CUDA_RBF_MATVEC_TAYLOR;
    cudaStream_t st = s->stream;
    /* The Taylor form first: its plan kernel decides on the device whether it writes out[], and
     * the difference kernels and the combine return at once where it does. */
    const int *skip = NULL;
    if (taylor_bytes > 0) {
        if constexpr (std::is_same<T, float>::value)
            r = gk__cuda_matvec_taylor(s, m, n, d, gamma, x, y, w, out, taylor_work, &skip);
        if (r != GK_OK)
            return r;
    }
    if (dot) {
        if constexpr (std::is_same<T, float>::value)
            r = cuda_matvec_dot_launch(s, p, m, n, d, gamma, c, x, y, w, out, part, fwork);
    } else {
        r = cuda_matvec_forms_launch<T>(st, p, check, fact, m, n, d, gamma, c, x, y, w, out, part,
                                        skip);
    }
    if (r != GK_OK || slots == 1)
        return r;
    cuda_rbf_matvec_combine<T>
        <<<gk__cuda_blocks(m, GK_CUDA_THREADS, (size_t)s->sm_count * 8), GK_CUDA_THREADS, 0, st>>>(
            m, (unsigned int)slots, part, out, skip);
    return gk__cuda_launched("cuda_rbf_matvec_combine");
}

gk_status gk__cuda_rbf_matvec(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                              const void *x, const void *y, const void *w, void *out)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    if (t == GK_FLOAT32)
        return cuda_rbf_matvec_run<float>(s, m, n, d, gamma, (const float *)x, (const float *)y,
                                          (const float *)w, (float *)out);
    if (t == GK_FLOAT64)
        return cuda_rbf_matvec_run<double>(s, m, n, d, gamma, (const double *)x, (const double *)y,
                                           (const double *)w, (double *)out);
    return gk__cuda_bad_dtype(t);
}
