/* SPDX-License-Identifier: MIT */
/* rbf_matvec_fact.cuh - float32 rbf_matvec for 1 <= d <= 4 in the factorized form, under
 * its rounding bound, with differences wherever the bound fails. */
#ifndef GK_CUDA_RBF_MATVEC_FACT_CUH
#define GK_CUDA_RBF_MATVEC_FACT_CUH

#include <cfloat>

#include "exp2_poly.h"
#include "rbf_matvec_small.cuh"

/* The form. A block centers its rows and each chunk of y on c, the midrange of its own rows
 * (x~ = x - c, y~ = y - c). With k = gamma log2(e), a_i = -k ||x~_i||^2, b_j = -k ||y~_j||^2,
 * x'_i = 2k x~_i:
 *     exp(-gamma ||x_i - y_j||^2) = 2^(a_i) * 2^(b_j + x'_i . y~_j),
 * so a pair costs d FMAs (b_j their addend) and one exp2, and 2^(a_i) multiplies a row's sum
 * over a group of points once. The differences form takes 2d + 1 instructions before its
 * exp2; the exp2s (16 per clock per SM on the special-function unit) become the limit, so one
 * row in R takes its exp2 on the FMA pipe instead (gk_exp2_poly), which balances the two.
 *
 * The bound (first order in u = 2^-24; nx = ||x~||^2, ny = ||y~||^2, as computed, N = nx + ny):
 *   - centering: x~, y~ are the rounded differences, i.e. exact for points moved by at most
 *     u |x~_l| per feature, which moves ||x - y||^2 by at most 2 ||x - y|| u (||x~|| + ||y~||)
 *     <= 4 u N, the exponent (base 2) by 4 u k N;
 *   - k rounded to float: u k ||x~ - y~||^2 <= 2 u k N;
 *   - a_i, b_j: d rounding steps of the norm and one of the product, (d + 1) u k (nx + ny);
 *   - x' rounded: u sum |x'_l y~_l| <= u k N; the d FMAs of b_j + x'.y~, each rounding a
 *     partial sum of magnitude <= |b_j| + sum |x'_l y~_l| <= 2 k N: 2 d u k N.
 * In all (3d + 8) u k N in the exponent, a relative error of ln 2 times that, (3d + 8) u gamma N,
 * in the kernel value. A chunk of y takes the form only where that is at most
 * GK_MATVEC_FACT_MAX_ERROR for the block's largest nx and the chunk's largest ny; then the two
 * exp2s (the polynomial within 2.2e-7 relative, src/exp2_poly.h) and the products add ~1e-6
 * and the float sum over a group of 32 terms 32 u: within the 1e-5 * sum |w| contract with room
 * to spare. The chunk must also keep the exponents in range: b_j + x'.y~ lies in
 * [-k (||x~|| + ||y~||)^2, k nx] (a_i + that is <= 0), so 2 k N <= 100 keeps every 2^(.) a normal
 * float without clamping (the polynomial exp2 holds for |t| <= 125), and the group sum
 * of up to 32 terms |w_j| 2^(k nx) must stay below 2^126. Non-finite data or weights fail the
 * bound (their norms or maxima are inf or NaN), as do gamma <= 0 or infinite (the launch never
 * asks for the form then): those chunks take differences of the raw rows, exactly as
 * cuda_rbf_matvec_small does. */
#define GK_MATVEC_FACT_MAX_ERROR 4e-6f
#define GK_MATVEC_FACT_MAX_EXPONENT 100.0f
/* A group whose largest computed kernel value (for some row) reaches this is computed again
 * from differences for that row: an entry of identical rows is then exactly 1, as the contract
 * says, and the form's error (below 5e-6 relative) cannot hide one. Only near-identical pairs
 * reach it (gamma ||x - y||^2 below about 1e-5). */
#define GK_MATVEC_FACT_REDO 0.99999f
/* Rows of a thread's R whose exp2 is the polynomial on the FMA pipe. */
#define GK_MATVEC_FACT_POLY_ROWS 1

/* Block-wide fmaxf of one value per thread, NaN and +inf counting as +inf: warp butterflies,
 * then every thread reads the warps' results from slot (filled here, after a barrier; the
 * caller's next barrier must come before slot is written again). */
__device__ __forceinline__ float cuda_matvec_block_max(float v, float *slot)
{
    v = v <= FLT_MAX ? v : INFINITY;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    if (threadIdx.x % 32 == 0)
        slot[threadIdx.x / 32] = v;
    __syncthreads();
    v = slot[0];
#pragma unroll
    for (int k = 1; k < GK_CUDA_THREADS / 32; k++)
        v = fmaxf(v, slot[k]);
    return v;
}

/* Packs points [j0, j0 + jn) of y as (y~_0 .. y~_{D-1}, b, w) into P vectors each, padded to a
 * whole number of groups of GROUP points (so the loop over a group has a fixed count), and
 * returns, reduced over the block, the largest ny of the chunk and the largest |w| (through the
 * slots ny_slot and w_slot, GK_CUDA_THREADS / 32 floats each). */
template <int D, int P, int GROUP>
__device__ __forceinline__ void
cuda_matvec_fact_stage(float4 (*pts)[P], const float *__restrict__ y, const float *__restrict__ w,
                       size_t j0, int jn, const float (&ctr)[D], float k, float *ny_slot,
                       float *w_slot, float &ny_max, float &w_max)
{
    float nyb = 0.0f, wb = 0.0f;
    const int jpad = (jn + GROUP - 1) / GROUP * GROUP;
    for (int j = threadIdx.x; j < jpad; j += GK_CUDA_THREADS) {
        float v[P * 4];
#pragma unroll
        for (int l = 0; l < P * 4; l++)
            v[l] = 0.0f;
        if (j >= jn) {
            /* Padding: y~ = 0, b = -GK_MATVEC_FACT_MAX_EXPONENT, w = 0, whose term 2^b * 0
             * is exactly 0 (2^b a normal float on either exp2) and whose value is far below
             * the redo threshold. */
            v[D] = -GK_MATVEC_FACT_MAX_EXPONENT;
#pragma unroll
            for (int q = 0; q < P; q++)
                pts[j][q] = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
            continue;
        }
        float ny = 0.0f;
#pragma unroll
        for (int l = 0; l < D; l++) {
            v[l] = __fsub_rn(__ldg(y + (j0 + j) * D + l), ctr[l]);
            ny = fmaf(v[l], v[l], ny);
        }
        const float wj = __ldg(w + j0 + j);
        v[D] = __fmul_rn(-k, ny);
        v[D + 1] = wj;
#pragma unroll
        for (int q = 0; q < P; q++)
            pts[j][q] = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
        nyb = fmaxf(nyb, ny <= FLT_MAX ? ny : INFINITY);
        wb = fmaxf(wb, fabsf(wj) <= FLT_MAX ? fabsf(wj) : INFINITY);
    }
    ny_max = cuda_matvec_block_max(nyb, ny_slot);
    w_max = cuda_matvec_block_max(wb, w_slot);
}

/* One row's sum over points [j0, j0 + gn) of y from differences of the raw rows, read from
 * global memory: the rare groups where the factorized form found a value near 1. */
template <int D>
__device__ __noinline__ float
cuda_matvec_fact_redo(const float *__restrict__ xrow, const float *__restrict__ y,
                      const float *__restrict__ w, size_t j0, int gn, float c)
{
    float xv[D];
#pragma unroll
    for (int l = 0; l < D; l++)
        xv[l] = xrow[l];
    float p = 0.0f;
    for (int j = 0; j < gn; j++) {
        float dist = 0.0f;
#pragma unroll
        for (int l = 0; l < D; l++) {
            float t = xv[l] - __ldg(y + (j0 + j) * D + l);
            dist = fmaf(t, t, dist);
        }
        p = fmaf(cuda_rbf_value<false>(dist, c), __ldg(w + j0 + j), p);
    }
    return p;
}

/* A pair of points j, j + 1 against a thread's R rows: the exponentials e[q][r] (the last NPOLY
 * rows on the FMA pipe) and the weights wv[q]. */
template <int D, int PF, int NPOLY>
__device__ __forceinline__ void
cuda_matvec_fact_pair(const float4 (*pts)[PF], int j,
                      const float (&xp)[cuda_matvec_small_shape<float>::R][D],
                      float (&e)[2][cuda_matvec_small_shape<float>::R], float (&wv)[2])
{
    const int R = cuda_matvec_small_shape<float>::R;
#pragma unroll
    for (int q = 0; q < 2; q++) {
        float v[PF * 4];
#pragma unroll
        for (int h = 0; h < PF; h++) {
            const float4 t = pts[j + q][h];
            v[4 * h] = t.x;
            v[4 * h + 1] = t.y;
            v[4 * h + 2] = t.z;
            v[4 * h + 3] = t.w;
        }
        wv[q] = v[D + 1];
#pragma unroll
        for (int r = 0; r < R; r++) {
            float t = v[D];
#pragma unroll
            for (int l = D - 1; l >= 0; l--)
                t = fmaf(xp[r][l], v[l], t);
            e[q][r] = r >= R - NPOLY ? gk_exp2_poly(t) : cuda_ex2(t);
        }
    }
}

/* Adds a pair's terms to the row sums p and its exponentials to the row maxima e_max: the
 * values are finite and >= +0, whose bit patterns order as signed integers do, so one
 * three-way integer max (a DPX instruction on sm_90) takes both. */
__device__ __forceinline__ void
cuda_matvec_fact_consume(const float (&e)[2][cuda_matvec_small_shape<float>::R],
                         const float (&wv)[2], float (&p)[cuda_matvec_small_shape<float>::R],
                         float (&e_max)[cuda_matvec_small_shape<float>::R])
{
#pragma unroll
    for (int r = 0; r < cuda_matvec_small_shape<float>::R; r++) {
        p[r] = fmaf(e[0][r], wv[0], p[r]);
        p[r] = fmaf(e[1][r], wv[1], p[r]);
        e_max[r] = __int_as_float(__vimax3_s32(__float_as_int(e_max[r]), __float_as_int(e[0][r]),
                                               __float_as_int(e[1][r])));
    }
}

/* A thread's R rows of x (zeros past m), as cuda_rbf_matvec_small holds them. */
template <int D>
__device__ __forceinline__ void
cuda_matvec_fact_rows(float (&xr)[cuda_matvec_small_shape<float>::R][D],
                      const float *__restrict__ x, size_t m, size_t row0)
{
#pragma unroll
    for (int r = 0; r < cuda_matvec_small_shape<float>::R; r++) {
        const size_t row = row0 + (size_t)r * GK_CUDA_THREADS;
#pragma unroll
        for (int l = 0; l < D; l++)
            xr[r][l] = row < m ? x[row * D + l] : 0.0f;
    }
}

/* The factorized kernel: the blocks, splits and outputs of cuda_rbf_matvec_small<float>
 * (which see), each chunk of y in the factorized form where the bound above allows, else
 * restaged raw and summed from differences. c = -gamma log2(e), k = -c (finite, > 0), ecoef =
 * (3D + 8) u gamma. skip: as cuda_rbf_matvec_small's. */
template <int D>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matvec_fact(size_t m, size_t n, float c, float k, float ecoef,
                         const float *__restrict__ x, const float *__restrict__ y,
                         const float *__restrict__ w, unsigned int splits, size_t cps,
                         float *__restrict__ out, double *__restrict__ partial, const int *skip)
{
    typedef cuda_matvec_small_shape<float> S;
    const int R = S::R;
    /* Factorized layout (y~, b, w) and the raw layout of cuda_rbf_matvec_small (y, w). */
    const int PF = (D + 2 + 3) / 4, PR = (D + 1 + 3) / 4;
    static_assert(1 <= D && D <= 4 && PR <= PF, "points in space");
    __shared__ float4 pts[S::CHUNK][PF];
    __shared__ float slots[3][GK_CUDA_THREADS / 32];
    float4(*raw)[PR] = reinterpret_cast<float4(*)[PR]>(&pts[0][0]);
    if (skip != NULL && *skip)
        return;

    const int tid = threadIdx.x;
    const size_t rt = blockIdx.x / splits;
    const unsigned int sp = blockIdx.x % splits;
    const size_t row0 = rt * GK_CUDA_THREADS * R + tid;
    float ctr[D];

    /* x' = 2k x~ and 2^(a_i) per row, and the block's largest nx. The raw rows are read again
     * where a chunk takes differences: registers are what the fast loop is short of. */
    float xp[R][D], fa[R], nx_max;
    {
        float xr[R][D];
        cuda_matvec_fact_rows<D>(xr, x, m, row0);
        float lo[D], hi[D];
#pragma unroll
        for (int l = 0; l < D; l++) {
            lo[l] = INFINITY;
            hi[l] = -INFINITY;
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (row0 + (size_t)r * GK_CUDA_THREADS >= m)
                continue;
#pragma unroll
            for (int l = 0; l < D; l++) {
                lo[l] = fminf(lo[l], xr[r][l]);
                hi[l] = fmaxf(hi[l], xr[r][l]);
            }
        }
        /* The center: the midrange of the block's rows per feature (any c keeps the form
         * exact; this one keeps the norms, and so the bound, small). -min and max by the same
         * reduction; the slots alternate, so each reduction's barrier also orders the
         * previous reads of the other slot before its next writes. */
#pragma unroll
        for (int l = 0; l < D; l++) {
            const float nlo = cuda_matvec_block_max(-lo[l], slots[0]);
            const float nhi = cuda_matvec_block_max(hi[l], slots[1]);
            ctr[l] = 0.5f * nhi - 0.5f * nlo;
        }
        float nxb = 0.0f;
#pragma unroll
        for (int r = 0; r < R; r++) {
            float nx = 0.0f;
#pragma unroll
            for (int l = 0; l < D; l++) {
                float t = __fsub_rn(xr[r][l], ctr[l]);
                nx = fmaf(t, t, nx);
                xp[r][l] = __fmul_rn(2.0f * k, t);
            }
            /* Rows past m: 2^(a_i) = 0, so their values never ask for a redo below. */
            const bool in = row0 + (size_t)r * GK_CUDA_THREADS < m;
            fa[r] = in ? cuda_ex2(__fmul_rn(-k, nx)) : 0.0f;
            if (in)
                nxb = fmaxf(nxb, nx <= FLT_MAX ? nx : INFINITY);
        }
        nx_max = cuda_matvec_block_max(nxb, slots[2]);
    }
    const float fact_cap = exp2f(119.0f - k * nx_max);

    double s[R], comp[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        s[r] = comp[r] = 0.0;

    const size_t nchunks = (n + S::CHUNK - 1) / S::CHUNK;
    const size_t ch0 = sp * cps, ch1 = ch0 + cps < nchunks ? ch0 + cps : nchunks;
    for (size_t ch = ch0; ch < ch1; ch++) {
        const size_t j0 = ch * S::CHUNK;
        const int jn = n - j0 < (size_t)S::CHUNK ? (int)(n - j0) : S::CHUNK;
        /* Everyone is done with the previous chunk (and the slots) before they are rewritten;
         * the reductions in the staging order its writes before the reads below. */
        __syncthreads();
        float ny_max, w_max;
        cuda_matvec_fact_stage<D, PF, S::GROUP>(pts, y, w, j0, jn, ctr, k, slots[0], slots[1],
                                                ny_max, w_max);
        /* The same values in every thread, so the choice is uniform. NaN fails every test. */
        const float nsum = nx_max + ny_max;
        const bool fact = ecoef * nsum <= GK_MATVEC_FACT_MAX_ERROR &&
                          2.0f * k * nsum <= GK_MATVEC_FACT_MAX_EXPONENT && w_max <= fact_cap;
        if (!fact) {
            cuda_matvec_small_stage<float, D, PR>(raw, y, w, j0, jn);
            float xr[R][D];
            cuda_matvec_fact_rows<D>(xr, x, m, row0);
            __syncthreads();
            cuda_matvec_small_chunk<float, D, false, PR>(raw, jn, c, xr, s, comp);
            continue;
        }
        for (int g = 0; g < jn; g += S::GROUP) {
            const int gn = jn - g < S::GROUP ? jn - g : S::GROUP;
            float p[R], e_max[R];
#pragma unroll
            for (int r = 0; r < R; r++)
                p[r] = e_max[r] = 0.0f;
                /* Two points at a time, four pairs unrolled: faster than a point at a time with a
                 * float max per pair, and than consuming a pair only after the next pair's
                 * exponentials are issued. */
#pragma unroll 4
            for (int j = g; j < g + S::GROUP; j += 2) {
                float e[2][R], wv[2];
                cuda_matvec_fact_pair<D, PF, GK_MATVEC_FACT_POLY_ROWS>(pts, j, xp, e, wv);
                cuda_matvec_fact_consume(e, wv, p, e_max);
            }
            /* One branch for the group's rows, so the common case costs no call sites. */
            float v[R];
            bool redo = false;
#pragma unroll
            for (int r = 0; r < R; r++) {
                v[r] = p[r] * fa[r];
                redo |= e_max[r] * fa[r] >= GK_MATVEC_FACT_REDO;
            }
            if (redo) {
#pragma unroll
                for (int r = 0; r < R; r++)
                    if (e_max[r] * fa[r] >= GK_MATVEC_FACT_REDO)
                        v[r] = cuda_matvec_fact_redo<D>(
                            x + (row0 + (size_t)r * GK_CUDA_THREADS) * D, y, w, j0 + g, gn, c);
            }
#pragma unroll
            for (int r = 0; r < R; r++)
                s[r] += (double)v[r];
        }
    }

#pragma unroll
    for (int r = 0; r < R; r++) {
        const size_t row = row0 + (size_t)r * GK_CUDA_THREADS;
        if (row < m) {
            if (splits == 1)
                out[row] = (float)s[r];
            else
                partial[(size_t)sp * m + row] = s[r];
        }
    }
}

#endif /* GK_CUDA_RBF_MATVEC_FACT_CUH */
