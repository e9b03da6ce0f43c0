/* SPDX-License-Identifier: MIT */
/* norms.cu - rows scaled to unit norm, for the cosine kernel and distance: the kernel is then
 * the inner product of the copies, the distance half their squared distance, 0 exactly for
 * rows with the same direction and accurate where 1 - cos would cancel. */
#include "family.h"

/* The warp's reduction: the maximum of |v| keeping a NaN once seen (fmax would drop it, and a
 * row with a NaN must give NaN, not the norm of its other values). */
template <typename T> __device__ __forceinline__ T cuda_max_nan(T a, T b)
{
    return (b > a || b != b) ? b : a;
}

/* One warp a row: the largest magnitude first, so that the sum of squares of the scaled row
 * neither overflows nor underflows (float64 rows near its limits), then the norm and the copy. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_unit_rows(size_t rows, size_t d, const T *__restrict__ x, T *__restrict__ u,
                   T *__restrict__ norm)
{
    const int lane = threadIdx.x % 32;
    const size_t warps = (size_t)gridDim.x * (GK_CUDA_THREADS / 32);
    for (size_t r = (size_t)blockIdx.x * (GK_CUDA_THREADS / 32) + threadIdx.x / 32; r < rows;
         r += warps) {
        const T *row = x + r * d;
        T big = T(0);
        for (size_t l = lane; l < d; l += 32)
            big = cuda_max_nan(big, (T)fabs(row[l]));
        for (int off = 16; off > 0; off /= 2)
            big = cuda_max_nan(big, __shfl_xor_sync(0xffffffffu, big, off));
        double ss = 0.0;
        if (big != T(0))
            for (size_t l = lane; l < d; l += 32) {
                double v = (double)row[l] / (double)big;
                ss = fma(v, v, ss);
            }
        for (int off = 16; off > 0; off /= 2)
            ss += __shfl_xor_sync(0xffffffffu, ss, off);
        /* big = inf makes inf / inf a NaN in ss: the row's norm and copy are NaN. */
        const double root = sqrt(ss);
        for (size_t l = lane; l < d; l += 32)
            u[r * d + l] = big == T(0) ? T(0) : (T)((double)row[l] / (double)big / root);
        if (lane == 0)
            norm[r] = big == T(0) ? T(0) : (T)((double)big * root);
    }
}

template <typename T>
gk_status gk__cuda_unit_rows(gk_cuda_state *s, size_t rows, size_t d, const T *x, T *u, T *norm)
{
    const size_t per_block = GK_CUDA_THREADS / 32;
    cuda_unit_rows<T><<<gk__cuda_blocks(rows, per_block, (size_t)s->sm_count * 32), GK_CUDA_THREADS,
                        0, s->stream>>>(rows, d, x, u, norm);
    return gk__cuda_launched("cuda_unit_rows");
}

template gk_status gk__cuda_unit_rows<float>(gk_cuda_state *, size_t, size_t, const float *,
                                             float *, float *);
template gk_status gk__cuda_unit_rows<double>(gk_cuda_state *, size_t, size_t, const double *,
                                              double *, double *);
