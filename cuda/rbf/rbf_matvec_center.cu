/* SPDX-License-Identifier: MIT */
/* rbf_matvec_center.cu - centered rows, exponent terms and group bounds for rbf_matvec. */
#include "rbf_matvec_center.h"

#include <cfloat>
#include <cmath>

/* Rows of x whose mean is the center: enough for a center near the data's middle, few enough
 * that one block computes it in microseconds. */
#define GK_MATVEC_CENTER_ROWS 1024
#define GK_MATVEC_CENTER_WARPS (GK_CUDA_THREADS / 32)
#define GK_MATVEC_ROWS_PER_WARP (GK_MATVEC_GROUP / GK_MATVEC_CENTER_WARPS)

/* c[l] = mean of feature l over x's first min(m, GK_MATVEC_CENTER_ROWS) rows (one block; a
 * thread per feature, summed in double so the center does not depend on the order). */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_matvec_center_mean(size_t m, size_t d, const float *__restrict__ x, float *__restrict__ c)
{
    const size_t rows = m < GK_MATVEC_CENTER_ROWS ? m : GK_MATVEC_CENTER_ROWS;
    for (size_t l = threadIdx.x; l < d; l += GK_CUDA_THREADS) {
        double s = 0.0;
        for (size_t r = 0; r < rows; r++)
            s += (double)x[r * d + l];
        c[l] = (float)(s / (double)rows);
    }
}

/* One block per group of rows (x's groups first, then y's), one warp per row at a time, lanes
 * across features: the centered row, its exponent term -k ||.||^2 and the group's largest
 * norm. The butterfly leaves the same norm in every lane, so the output is deterministic. */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_matvec_center_rows(size_t m, size_t n, size_t d, size_t mgroups, float k,
                            const float *__restrict__ c, const float *__restrict__ x,
                            const float *__restrict__ y, float *__restrict__ xc,
                            float *__restrict__ yc, float *__restrict__ a, float *__restrict__ b,
                            float *__restrict__ gx, float *__restrict__ gy)
{
    __shared__ float top[GK_MATVEC_CENTER_WARPS];
    const bool is_x = blockIdx.x < mgroups;
    const size_t g = is_x ? blockIdx.x : blockIdx.x - mgroups, rows = is_x ? m : n;
    const float *src = is_x ? x : y;
    float *dst = is_x ? xc : yc, *term = is_x ? a : b;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float big = 0.0f;
    for (int r = 0; r < GK_MATVEC_ROWS_PER_WARP; r++) {
        const size_t row = g * GK_MATVEC_GROUP + (size_t)warp * GK_MATVEC_ROWS_PER_WARP + r;
        if (row >= rows)
            break;
        /* The norm in double: its own rounding then drops out of the forms' bounds, and the
         * term -k ||.||^2 is the one rounding of a double product. */
        double acc = 0.0;
        for (size_t l = lane; l < d; l += 32) {
            float v = __fsub_rn(src[row * d + l], c[l]);
            dst[row * d + l] = v;
            acc = fma((double)v, (double)v, acc);
        }
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_xor_sync(0xffffffffu, acc, off);
        if (lane == 0)
            term[row] = __double2float_rn(-(double)k * acc);
        big = acc <= (double)FLT_MAX ? fmaxf(big, __double2float_ru(acc)) : INFINITY;
    }
    if (lane == 0)
        top[warp] = big;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < GK_MATVEC_CENTER_WARPS; w++)
            big = fmaxf(big, top[w]);
        (is_x ? gx : gy)[g] = big;
    }
}

size_t gk__cuda_matvec_center_floats(size_t m, size_t n, size_t d)
{
    size_t mgroups = (m + GK_MATVEC_GROUP - 1) / GK_MATVEC_GROUP;
    size_t ngroups = (n + GK_MATVEC_GROUP - 1) / GK_MATVEC_GROUP;
    return (m + n) * d + m + n + mgroups + ngroups + d;
}

gk_status gk__cuda_matvec_center(gk_cuda_state *s, size_t m, size_t n, size_t d, float k,
                                 const float *x, const float *y, float *work,
                                 cuda_matvec_centered *out)
{
    size_t mgroups = (m + GK_MATVEC_GROUP - 1) / GK_MATVEC_GROUP;
    size_t ngroups = (n + GK_MATVEC_GROUP - 1) / GK_MATVEC_GROUP;
    float *xc = work, *yc = xc + m * d, *a = yc + n * d, *b = a + m, *gx = b + n,
          *gy = gx + mgroups, *c = gy + ngroups;
    cuda_matvec_center_mean<<<1, GK_CUDA_THREADS, 0, s->stream>>>(m, d, x, c);
    gk_status r = gk__cuda_launched("cuda_matvec_center_mean");
    if (r != GK_OK)
        return r;
    cuda_matvec_center_rows<<<(unsigned int)(mgroups + ngroups), GK_CUDA_THREADS, 0, s->stream>>>(
        m, n, d, mgroups, k, c, x, y, xc, yc, a, b, gx, gy);
    *out = cuda_matvec_centered{xc, yc, a, b, gx, gy};
    return gk__cuda_launched("cuda_matvec_center_rows");
}
