/* SPDX-License-Identifier: MIT */
/* rbf_center.cu - centered rows, their squared norms and per-group bounds (rbf_matrix). */
#include "rbf_center.cuh"

#include <cmath>

#define GK_CENTER_WARPS (GK_CUDA_THREADS / 32)
#define GK_CENTER_ROWS_PER_WARP (GK_RBF_GROUP / GK_CENTER_WARPS)

/* One block per group of rows (x's groups first, then y's), one warp per row at a time, lanes
 * across features. The butterfly leaves the same norm in every lane, so the result does not
 * depend on which lane writes it: the output is deterministic. */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_rbf_center_rows(size_t m, size_t n, size_t d, size_t mgroups, const float *__restrict__ x,
                         const float *__restrict__ y, float *__restrict__ xc,
                         float *__restrict__ yc, float *__restrict__ nx, float *__restrict__ ny,
                         float *__restrict__ gx, float *__restrict__ gy)
{
    __shared__ float top[GK_CENTER_WARPS];
    const bool is_x = blockIdx.x < mgroups;
    const size_t g = is_x ? blockIdx.x : blockIdx.x - mgroups, rows = is_x ? m : n;
    const float *src = is_x ? x : y;
    float *dst = is_x ? xc : yc, *norm = is_x ? nx : ny;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float big = 0.0f;
    for (int r = 0; r < GK_CENTER_ROWS_PER_WARP; r++) {
        const size_t row = g * GK_RBF_GROUP + (size_t)warp * GK_CENTER_ROWS_PER_WARP + r;
        if (row >= rows)
            break;
        float acc = 0.0f;
        for (size_t l = lane; l < d; l += 32) {
            float v = src[row * d + l] - x[l];
            dst[row * d + l] = v;
            acc = fmaf(v, v, acc);
        }
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_xor_sync(0xffffffffu, acc, off);
        if (lane == 0)
            norm[row] = acc;
        big = isfinite(acc) ? fmaxf(big, acc) : INFINITY;
    }
    if (lane == 0)
        top[warp] = big;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < GK_CENTER_WARPS; w++)
            big = fmaxf(big, top[w]);
        (is_x ? gx : gy)[g] = big;
    }
}

gk_status gk__cuda_rbf_center(gk_cuda_state *s, size_t m, size_t n, size_t d, const float *x,
                              const float *y, cuda_rbf_centered *out)
{
    size_t mgroups = (m + GK_RBF_GROUP - 1) / GK_RBF_GROUP;
    size_t ngroups = (n + GK_RBF_GROUP - 1) / GK_RBF_GROUP;
    /* Sizes are checked by the core: (m + n) * d elements exist as x and y already. */
    size_t floats = (m + n) * d + m + n + mgroups + ngroups;
    void *work = NULL;
    gk_status r = gk__cuda_workspace(s, floats * sizeof(float), &work);
    if (r != GK_OK)
        return r;
    float *xc = (float *)work, *yc = xc + m * d, *nx = yc + n * d, *ny = nx + m, *gx = ny + n,
          *gy = gx + mgroups;
    cuda_rbf_center_rows<<<(unsigned int)(mgroups + ngroups), GK_CUDA_THREADS, 0, s->stream>>>(
        m, n, d, mgroups, x, y, xc, yc, nx, ny, gx, gy);
    *out = cuda_rbf_centered{xc, yc, nx, ny, gx, gy};
    return gk__cuda_launched("cuda_rbf_center_rows");
}
