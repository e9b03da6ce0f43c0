/* SPDX-License-Identifier: MIT */
/* epilogue.cuh - what the family's tiled pass turns a tile's sums into: one function per kernel
 * kind and metric, applied to an inner product, a squared or an absolute distance. */
#ifndef GK_CUDA_KERNEL_EPILOGUE_CUH
#define GK_CUDA_KERNEL_EPILOGUE_CUH

#include <math.h>

#include "cuda_internal.h"

/* What a tile accumulates over the features of a pair of rows. */
enum cuda_acc { CUDA_ACC_DOT, CUDA_ACC_SQDIFF, CUDA_ACC_ABSDIFF };

/* The epilogues. Cosine kernel and distance run on rows scaled to unit norm (norms.cu), so the
 * first is the inner product of those rows and the second half their squared distance. */
enum cuda_epi {
    CUDA_EPI_IDENTITY,   /* linear kernel, squared Euclidean, Manhattan */
    CUDA_EPI_POLYNOMIAL, /* (gamma s + coef0)^degree */
    CUDA_EPI_SIGMOID,    /* tanh(gamma s + coef0) */
    CUDA_EPI_LAPLACIAN,  /* exp(-gamma s), s an L1 distance */
    CUDA_EPI_MATERN05,   /* Matern from a squared distance s, r = sqrt(gamma s) */
    CUDA_EPI_MATERN15,
    CUDA_EPI_MATERN25,
    CUDA_EPI_EUCLIDEAN,     /* sqrt(s) */
    CUDA_EPI_COSINE_KERNEL, /* s of unit rows; 0 where either row's norm is 0 */
    CUDA_EPI_COSINE_DIST    /* s / 2 of unit rows, at most 2; 1 where either row's norm is 0 */
};

/* The epilogue's parameters (gamma already rounded to the dtype by the core). */
template <typename T> struct cuda_epi_params {
    T gamma, coef0;
    int degree;
    /* The rows' norms (the cosine epilogues only; else NULL). */
    const T *nx, *ny;
    /* The pass's rows of x and y (the tile's first ones) and their features: what the
     * Euclidean epilogue reads again where the sum of squares overflowed. */
    const T *x, *y;
    size_t d;
};

/* |x - y| where sum (x_l - y_l)^2 overflows but the distance need not: the rows scaled down by a
 * power of 2 first (exact but for subnormal results, far below the distance's last bit), and
 * the difference taken after the scaling, since x_l - y_l may overflow too. Out of line: the
 * tile's registers need not survive it, and it runs only for such entries. */
template <typename T>
static __device__ __noinline__ T cuda_euclidean_scaled(const T *__restrict__ x,
                                                       const T *__restrict__ y, size_t d)
{
    const T down = sizeof(T) == 4 ? T(0x1p-64) : T(0x1p-512);
    const T up = sizeof(T) == 4 ? T(0x1p64) : T(0x1p512);
    T s = T(0);
    for (size_t l = 0; l < d; l++) {
        const T u = x[l] * down - y[l] * down;
        s = fma(u, u, s);
    }
    return sqrt(s) * up;
}

/* b^e for an integer e in 0..32 by squaring: exact powers of two and 1 for e = 0 (NaN^0 = 1,
 * as C's pow and NumPy's power give). */
__device__ __forceinline__ double cuda_powi(double b, int e)
{
    double r = 1.0;
    while (e > 0) {
        if (e & 1)
            r *= b;
        b *= b;
        e >>= 1;
    }
    return r;
}

/* Matern from r >= 0 (exactly 1 at r = 0). The bounded kernels are evaluated in the dtype: the
 * contract is absolute, and expf and tanhf are within 2 ulp. */
template <int E, typename T> __device__ __forceinline__ T cuda_matern(T r)
{
    if (E == CUDA_EPI_MATERN05)
        return exp(-r);
    if (E == CUDA_EPI_MATERN15) {
        const T a = T(1.7320508075688772) * r;
        return (T(1) + a) * exp(-a);
    }
    const T a = T(2.23606797749979) * r;
    return (T(1) + a + a * a / T(3)) * exp(-a);
}

/* Entry (i, j) of the output from its sum s. */
template <int E, typename T>
__device__ __forceinline__ T cuda_epi_apply(const cuda_epi_params<T> &p, T s, size_t i, size_t j)
{
    if (E == CUDA_EPI_IDENTITY)
        return s;
    /* The polynomial in double: its contract is relative, and a power of up to 32 would
     * multiply the dtype's rounding errors. */
    if (E == CUDA_EPI_POLYNOMIAL)
        return (T)cuda_powi(fma((double)p.gamma, (double)s, (double)p.coef0), p.degree);
    if (E == CUDA_EPI_SIGMOID)
        return tanh(fma(p.gamma, s, p.coef0));
    /* Identical rows give exactly 1 for every gamma but NaN (src/backend_math.h's rule). */
    if (E == CUDA_EPI_LAPLACIAN)
        return s == T(0) ? (p.gamma == p.gamma ? T(1) : p.gamma) : exp(-p.gamma * s);
    if (E == CUDA_EPI_MATERN05 || E == CUDA_EPI_MATERN15 || E == CUDA_EPI_MATERN25)
        return s == T(0) ? (p.gamma == p.gamma ? T(1) : p.gamma)
                         : cuda_matern<E>(sqrt(p.gamma * s));
    if (E == CUDA_EPI_EUCLIDEAN)
        return isinf(s) ? cuda_euclidean_scaled(p.x + i * p.d, p.y + j * p.d, p.d) : sqrt(s);
    /* A zero row decides the cosine forms even where the other row holds a NaN or an
     * infinity (whose unit-norm copy is NaN). */
    const bool zero = p.nx[i] == T(0) || p.ny[j] == T(0);
    if (E == CUDA_EPI_COSINE_KERNEL)
        return zero ? T(0) : s;
    /* Opposite rows may round to just above 2: the distance stays in [0, 2] (NaN stays NaN). */
    const T h = T(0.5) * s;
    return zero ? T(1) : h > T(2) ? T(2) : h;
}

#endif /* GK_CUDA_KERNEL_EPILOGUE_CUH */
