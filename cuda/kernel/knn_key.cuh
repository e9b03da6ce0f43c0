/* SPDX-License-Identifier: MIT */
/* knn_key.cuh - k-NN's order on distances as unsigned integers: the order of the values, with
 * -0 as 0 and every NaN last (after +inf) and equal, so that selection and sorting see one total
 * order and ties fall to the smaller index. */
#ifndef GK_CUDA_KERNEL_KNN_KEY_CUH
#define GK_CUDA_KERNEL_KNN_KEY_CUH

#include <stdint.h>

#include "cuda_internal.h"

template <typename T> struct cuda_knn_key;
template <> struct cuda_knn_key<float> {
    typedef uint32_t type;
    static constexpr uint32_t nan = 0xffffffffu;
    /* Distances are never negative: the bits of a non-negative float are in its order. */
    static __device__ __forceinline__ uint32_t of(float v)
    {
        return v != v ? nan : v == 0.0f ? 0u : __float_as_uint(v);
    }
    static __device__ __forceinline__ float value(uint32_t k)
    {
        return k == nan ? __int_as_float(0x7fc00000) : __uint_as_float(k);
    }
};
template <> struct cuda_knn_key<double> {
    typedef uint64_t type;
    static constexpr uint64_t nan = 0xffffffffffffffffull;
    static __device__ __forceinline__ uint64_t of(double v)
    {
        return v != v ? nan : v == 0.0 ? 0ull : (uint64_t)__double_as_longlong(v);
    }
    static __device__ __forceinline__ double value(uint64_t k)
    {
        return k == nan ? __longlong_as_double(0x7ff8000000000000ll)
                        : __longlong_as_double((long long)k);
    }
};

/* (key, index) pairs in lexicographic order. */
template <typename K>
__device__ __forceinline__ bool cuda_knn_less(K a, int64_t ia, K b, int64_t ib)
{
    return a < b || (a == b && ia < ib);
}

#endif /* GK_CUDA_KERNEL_KNN_KEY_CUH */
