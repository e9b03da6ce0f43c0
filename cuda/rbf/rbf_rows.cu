/* SPDX-License-Identifier: MIT */
/* rbf_rows.cu - k[i] = exp(-gamma ||a_i - b_i||^2), a streaming row-wise kernel. */
#include "backend_math.h"
#include "cuda_internal.h"
#include "plan.h"

/* Rows each thread group handles per step: their loads are all issued before the first use. */
#define GK_RBF_ROWS_R 4

/* A group of G lanes owns one row at a time and reads its d features contiguously, as 16-byte
 * vectors when rows are aligned (VEC) or as scalars; the warp's groups take consecutive rows,
 * so each load instruction covers a contiguous span of 32/G rows. G is the power of two that
 * covers the row's vectors (at most 32), e.g. 8 lanes x float4 for d = 32. Squares of one
 * vector are summed in T (at most 4 terms), everything beyond in double, and the exponential is
 * taken in double and rounded once: the kernel is bound by memory, so the accuracy is free,
 * and one float-to-double conversion per vector keeps the conversion pipe off the critical
 * path. */
template <typename T, int G, bool VEC>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_rbf_rows(size_t n, size_t d, double gamma, const T *__restrict__ a,
                  const T *__restrict__ b, T *__restrict__ k)
{
    typedef gk_cuda_vec<T> V;
    const int E = VEC ? V::width : 1;
    const int GPW = 32 / G;
    const size_t RPW = (size_t)GPW * GK_RBF_ROWS_R;
    const int lane = threadIdx.x & 31;
    const int q = lane / G, gl = lane % G;
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const size_t nwarps = ((size_t)gridDim.x * blockDim.x) >> 5;
    const size_t units = d / E;

    for (size_t base = warp * RPW; base < n; base += nwarps * RPW) {
        double acc[GK_RBF_ROWS_R];
#pragma unroll
        for (int r = 0; r < GK_RBF_ROWS_R; r++)
            acc[r] = 0.0;
        for (size_t u = gl; u < units; u += G) {
            T av[GK_RBF_ROWS_R][E], bv[GK_RBF_ROWS_R][E];
#pragma unroll
            for (int r = 0; r < GK_RBF_ROWS_R; r++) {
                size_t row = base + (size_t)r * GPW + q;
                if (row < n) {
                    size_t at = row * units + u;
                    if (VEC) {
                        V::unpack(__ldg((const typename V::type *)a + at), av[r]);
                        V::unpack(__ldg((const typename V::type *)b + at), bv[r]);
                    } else {
                        av[r][0] = __ldg(a + at);
                        bv[r][0] = __ldg(b + at);
                    }
                } else {
#pragma unroll
                    for (int e = 0; e < E; e++)
                        av[r][e] = bv[r][e] = T(0);
                }
            }
#pragma unroll
            for (int r = 0; r < GK_RBF_ROWS_R; r++) {
                T part = T(0);
#pragma unroll
                for (int e = 0; e < E; e++) {
                    T t = av[r][e] - bv[r][e];
                    part = fma(t, t, part);
                }
                acc[r] += (double)part;
            }
        }
#pragma unroll
        for (int r = 0; r < GK_RBF_ROWS_R; r++) {
#pragma unroll
            for (int off = G / 2; off > 0; off >>= 1)
                acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], off, G);
        }
        if (gl == 0) {
#pragma unroll
            for (int r = 0; r < GK_RBF_ROWS_R; r++) {
                size_t row = base + (size_t)r * GPW + q;
                if (row < n)
                    k[row] = (T)exp(-gk__rbf_exponent(gamma, acc[r]));
            }
        }
    }
}

template <typename T, bool VEC>
static void cuda_rbf_rows_launch(gk_cuda_state *s, int g, unsigned int blocks, size_t n, size_t d,
                                 double gamma, const T *a, const T *b, T *k)
{
    cudaStream_t st = s->stream;
    switch (g) {
    case 1:
        cuda_rbf_rows<T, 1, VEC><<<blocks, GK_CUDA_THREADS, 0, st>>>(n, d, gamma, a, b, k);
        break;
    case 2:
        cuda_rbf_rows<T, 2, VEC><<<blocks, GK_CUDA_THREADS, 0, st>>>(n, d, gamma, a, b, k);
        break;
    case 4:
        cuda_rbf_rows<T, 4, VEC><<<blocks, GK_CUDA_THREADS, 0, st>>>(n, d, gamma, a, b, k);
        break;
    case 8:
        cuda_rbf_rows<T, 8, VEC><<<blocks, GK_CUDA_THREADS, 0, st>>>(n, d, gamma, a, b, k);
        break;
    case 16:
        cuda_rbf_rows<T, 16, VEC><<<blocks, GK_CUDA_THREADS, 0, st>>>(n, d, gamma, a, b, k);
        break;
    default:
        cuda_rbf_rows<T, 32, VEC><<<blocks, GK_CUDA_THREADS, 0, st>>>(n, d, gamma, a, b, k);
        break;
    }
}

template <typename T>
static gk_status cuda_rbf_rows_run(gk_cuda_state *s, size_t n, size_t d, double gamma, const T *a,
                                   const T *b, T *k)
{
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    gk__cuda_rbf_log(s, "rbf_rows", n, 1, d, gk__cuda_rbf_plan_rows(s, n, d));
    const size_t w = gk_cuda_vec<T>::width;
    bool vec = d % w == 0 && (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0;
    size_t units = vec ? d / w : d;
    int g = 1;
    while (g < 32 && (size_t)g < units)
        g *= 2;
    size_t rows_per_block = (size_t)(32 / g) * GK_RBF_ROWS_R * (GK_CUDA_THREADS / 32);
    unsigned int blocks = gk__cuda_blocks(n, rows_per_block, (size_t)s->sm_count * 16);
    if (vec)
        cuda_rbf_rows_launch<T, true>(s, g, blocks, n, d, gamma, a, b, k);
    else
        cuda_rbf_rows_launch<T, false>(s, g, blocks, n, d, gamma, a, b, k);
    return gk__cuda_launched("cuda_rbf_rows");
}

gk_status gk__cuda_rbf_rows(void *st, gk_dtype t, size_t n, size_t d, double gamma, const void *a,
                            const void *b, void *k)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    if (t == GK_FLOAT32)
        return cuda_rbf_rows_run<float>(s, n, d, gamma, (const float *)a, (const float *)b,
                                        (float *)k);
    if (t == GK_FLOAT64)
        return cuda_rbf_rows_run<double>(s, n, d, gamma, (const double *)a, (const double *)b,
                                         (double *)k);
    return gk__cuda_bad_dtype(t);
}
