/* SPDX-License-Identifier: MIT */
/* rbf_matvec_small.cuh - rbf_matvec for d <= 4 (points in space): x rows held in registers. */
#ifndef GK_CUDA_RBF_MATVEC_SMALL_CUH
#define GK_CUDA_RBF_MATVEC_SMALL_CUH

#include "rbf_tile.cuh"

/* Shapes: rows per thread and points of y per shared-memory chunk. The kernel is bound by
 * instruction issue (2d + 3 per pair: the differences, their squares, the scaling, ex2 and the
 * product with w), so everything else is amortized: one broadcast 16-byte load of a point
 * serves R rows, and a chunk's staging serves R * 256 rows. */
template <typename T> struct cuda_matvec_small_shape;
template <> struct cuda_matvec_small_shape<float> {
    enum { R = 8, CHUNK = 1024, GROUP = 32 };
};
template <> struct cuda_matvec_small_shape<double> {
    enum { R = 4, CHUNK = 512, GROUP = 16 };
};

/* Packs points [j0, j0 + jn) of y with their weights into pts, P vectors per point (the
 * padding zero). */
template <typename T, int D, int P>
__device__ __forceinline__ void cuda_matvec_small_stage(typename gk_cuda_vec<T>::type (*pts)[P],
                                                        const T *__restrict__ y,
                                                        const T *__restrict__ w, size_t j0, int jn)
{
    typedef gk_cuda_vec<T> V;
    const int W = V::width;
    for (int j = threadIdx.x; j < jn; j += GK_CUDA_THREADS) {
        T v[P * W];
#pragma unroll
        for (int l = 0; l < P * W; l++)
            v[l] = T(0);
#pragma unroll
        for (int l = 0; l < D; l++)
            v[l] = __ldg(y + (j0 + j) * D + l);
        v[D] = __ldg(w + j0 + j);
#pragma unroll
        for (int q = 0; q < P; q++)
            pts[j][q] = V::pack(v + q * W);
    }
}

/* Adds the kernel values times w of the jn points staged in pts to a thread's R row sums s
 * (float64: with compensations comp), from differences of the raw rows xr: float sums over
 * GROUP points at a time, then double. Shared by the difference kernel and by the chunks of the
 * factorized kernel (cuda_rbf_matvec_fact.cuh) that its bound sends back to differences. */
template <typename T, int D, bool CHECK, int P>
__device__ __forceinline__ void
cuda_matvec_small_chunk(const typename gk_cuda_vec<T>::type (*pts)[P], int jn, T c,
                        const T (&xr)[cuda_matvec_small_shape<T>::R][D > 0 ? D : 1],
                        double (&s)[cuda_matvec_small_shape<T>::R],
                        double (&comp)[cuda_matvec_small_shape<T>::R])
{
    typedef cuda_matvec_small_shape<T> S;
    typedef gk_cuda_vec<T> V;
    const int W = V::width, R = S::R;
    for (int g = 0; g < jn; g += S::GROUP) {
        const int gn = jn - g < S::GROUP ? jn - g : S::GROUP;
        T p[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            p[r] = T(0);
#pragma unroll 4
        for (int j = g; j < g + gn; j++) {
            T v[P * W];
#pragma unroll
            for (int q = 0; q < P; q++)
                V::unpack(pts[j][q], v + q * W);
#pragma unroll
            for (int r = 0; r < R; r++) {
                T dist = T(0);
#pragma unroll
                for (int l = 0; l < D; l++) {
                    T t = xr[r][l] - v[l];
                    dist = fma(t, t, dist);
                }
                p[r] = fma(cuda_rbf_value<CHECK>(dist, c), v[D], p[r]);
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (sizeof(T) == 4) {
                s[r] += (double)p[r];
            } else {
                double e;
                cuda_two_sum(s[r], (double)p[r], s[r], e);
                comp[r] += e;
            }
        }
    }
}

/* Block b takes rows [rt * 256R, (rt + 1) * 256R), rt = b / splits, thread t rows
 * rt * 256R + t + 256r, against chunks [sp * cps, (sp + 1) * cps) of y, sp = b % splits. Each
 * point of a chunk is packed with its weight into P 16-byte vectors (y_0 .. y_{D-1}, w), read
 * by all threads at once (a broadcast). Row sums: float32 in float over GROUP points (at most
 * 32 terms, error far inside the 1e-5 * sum|w| contract), then in double; float64 in double
 * over GROUP points, then compensated (TwoSum). With one split the block writes out[] itself,
 * otherwise a double partial per row for the combine kernel. skip (NULL: never): where it
 * points to a nonzero value, the Taylor form (cuda_rbf_matvec_taylor.cuh) writes out[] and the
 * block returns at once. */
template <typename T, int D, bool CHECK>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matvec_small(size_t m, size_t n, T c, const T *__restrict__ x, const T *__restrict__ y,
                          const T *__restrict__ w, unsigned int splits, size_t cps,
                          T *__restrict__ out, double *__restrict__ partial, const int *skip)
{
    typedef cuda_matvec_small_shape<T> S;
    typedef gk_cuda_vec<T> V;
    const int W = V::width, R = S::R;
    const int P = (D + 1 + W - 1) / W;
    __shared__ typename V::type pts[S::CHUNK][P];
    if (skip != NULL && *skip)
        return;

    const int tid = threadIdx.x;
    const size_t rt = blockIdx.x / splits;
    const unsigned int sp = blockIdx.x % splits;
    const size_t row0 = rt * GK_CUDA_THREADS * R + tid;

    T xr[R][D > 0 ? D : 1];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const size_t row = row0 + (size_t)r * GK_CUDA_THREADS;
#pragma unroll
        for (int l = 0; l < D; l++)
            xr[r][l] = row < m ? x[row * D + l] : T(0);
    }
    double s[R], comp[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        s[r] = comp[r] = 0.0;

    const size_t nchunks = (n + S::CHUNK - 1) / S::CHUNK;
    const size_t ch0 = sp * cps, ch1 = ch0 + cps < nchunks ? ch0 + cps : nchunks;
    for (size_t ch = ch0; ch < ch1; ch++) {
        const size_t j0 = ch * S::CHUNK;
        const int jn = n - j0 < (size_t)S::CHUNK ? (int)(n - j0) : S::CHUNK;
        /* Everyone is done with the previous chunk before it is overwritten. */
        __syncthreads();
        cuda_matvec_small_stage<T, D, P>(pts, y, w, j0, jn);
        __syncthreads();

        cuda_matvec_small_chunk<T, D, CHECK, P>(pts, jn, c, xr, s, comp);
    }

#pragma unroll
    for (int r = 0; r < R; r++) {
        const size_t row = row0 + (size_t)r * GK_CUDA_THREADS;
        if (row < m) {
            double v = sizeof(T) == 4 ? s[r] : cuda_comp_value(s[r], comp[r]);
            if (splits == 1)
                out[row] = (T)v;
            else
                partial[(size_t)sp * m + row] = v;
        }
    }
}

#endif /* GK_CUDA_RBF_MATVEC_SMALL_CUH */
