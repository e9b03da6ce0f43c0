/* SPDX-License-Identifier: MIT */
/* rbf_tc_bound.cuh - the per-entry rounding test of rbf_matrix's tensor-core form, shared
 * by its epilogues and by the sample that chooses the form (derivation in cuda_rbf_tc.cu). */
#ifndef GK_CUDA_RBF_TC_BOUND_CUH
#define GK_CUDA_RBF_TC_BOUND_CUH

#include "rbf_tile.cuh"

/* The largest error an entry kept from the tensor cores may carry (the contract's 1e-5, less
 * the exp2 and the final rounding's 3e-7 and a margin). */
#define GK_RBF_TC_MAX_ERROR 9e-6f

/* What the epilogues need besides their tile. */
struct cuda_tc_params {
    size_t n, d;
    float c;     /* -gamma log2(e): K = exp2(c D) */
    float gamma; /* gamma in float32 */
    float ku;    /* the bound e = ku (nx + ny) + eabs */
    float eabs;
    float esmall;  /* the largest e with gamma e <= 1/64 (rounded down) */
    float kesmall; /* GK_RBF_TC_MAX_ERROR / (1.0202 gamma), rounded down */
    const float *x, *y, *nx, *ny;
    /* per row of x -2^(1 - k), per row of y 2^-k, undoing the rows' fp16 scales 2^k */
    const float *sx, *sy;
};

/* The form a call takes, decided on the device so that the call need not wait: fallbacks
 * (written by the sample) counts the sampled tiles that would fall back to differences; the
 * tensor-core kernels run where it is at most limit, the difference kernel elsewhere. No
 * sample (fallbacks NULL): the tensor cores. */
struct cuda_tc_gate {
    const unsigned int *fallbacks;
    unsigned int limit;
    __device__ bool tensor_cores() const
    {
        return fallbacks == NULL || *fallbacks <= limit;
    }
};

/* The row a warp of the split kernels (cuda_tc_split, cuda_gemm_split: one warp a row of x, then
 * of y) prepares: none (ok false, for the whole warp) past the last row or where the sample
 * chose differences (gate). */
struct cuda_split_row {
    bool ok;          /* a row to prepare */
    bool is_x;        /* a row of x, else of y */
    size_t r;         /* its index there */
    const float *src; /* its d features */
};
__device__ __forceinline__ cuda_split_row cuda_split_row_of(size_t m, size_t n, size_t d,
                                                            const float *x, const float *y,
                                                            const cuda_tc_gate &gate)
{
    const size_t i = (size_t)blockIdx.x * (GK_CUDA_THREADS / 32) + threadIdx.x / 32;
    cuda_split_row row = {gate.tensor_cores() && i < m + n, i < m, i < m ? i : i - m, NULL};
    row.src = (row.is_x ? x : y) + row.r * d;
    return row;
}

/* Whether an entry whose computed squared distance is dh, from rows whose centered squared
 * norms sum to t, may keep kv = exp2(c dh): its error bound is within GK_RBF_TC_MAX_ERROR and
 * dh is clear of 0 by more than that bound (so identical rows never keep it). False for NaN. */
__device__ __forceinline__ bool cuda_tc_keep(const cuda_tc_params &p, float dh, float t, float kv)
{
    const float e = fmaf(p.ku, t, p.eabs);
    const float ge = p.gamma * e;
    if (ge <= 1.0f / 64.0f)
        return dh > e && kv * ge * 1.02f <= GK_RBF_TC_MAX_ERROR;
    return dh > e && cuda_ex2((dh - e) * p.c) * 1.0001f <= GK_RBF_TC_MAX_ERROR;
}

/* cuda_tc_keep in two halves, each sufficient alone (the second holds for any gamma e, the
 * first is the tighter where gamma e <= 1/64), so that an epilogue runs the second only for the
 * entries that fail the first. e = cuda_tc_bound(p, t). Small: without the branch on gamma e,
 * its constants folded (fl(kv e) <= kesmall gives kv gamma e 1.02 <= GK_RBF_TC_MAX_ERROR);
 * large, from dme = fl(dh - e) alone (positive exactly where dh > e): the bound
 * exp2(c (dh - e)) 1.0001. False for NaN. */
__device__ __forceinline__ float cuda_tc_bound(const cuda_tc_params &p, float t)
{
    return fmaf(p.ku, t, p.eabs);
}
__device__ __forceinline__ bool cuda_tc_keep_small(const cuda_tc_params &p, float dh, float e,
                                                   float kv)
{
    return dh > e && e <= p.esmall && kv * e <= p.kesmall;
}
__device__ __forceinline__ bool cuda_tc_keep_large(const cuda_tc_params &p, float dme)
{
    return dme > 0.0f && cuda_ex2(dme * p.c) * 1.0001f <= GK_RBF_TC_MAX_ERROR;
}

/* ||a - b||^2 over d features by the whole warp (every lane gets it); 0 exactly for equal
 * rows, NaN or inf as the data give. */
__device__ __forceinline__ float
cuda_tc_warp_distance(const float *__restrict__ a, const float *__restrict__ b, size_t d, int lane)
{
    float s = 0.0f;
    for (size_t l = lane; l < d; l += 32) {
        float t = a[l] - b[l];
        s = fmaf(t, t, s);
    }
    for (int off = 16; off > 0; off /= 2)
        s += __shfl_xor_sync(0xffffffffu, s, off);
    return s;
}

#endif /* GK_CUDA_RBF_TC_BOUND_CUH */
