/* SPDX-License-Identifier: MIT */
/* cuda_internal.h - per-context state, error checks and launch helpers of the CUDA module. */
#ifndef GK_CUDA_INTERNAL_H
#define GK_CUDA_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cuda_block_cache.h"
#include "cuda_launch_graph.h"
#include "cuda_slots.h"

/* Launch shape used by every kernel of the module: 8 warps keep enough loads in flight per
 * block while leaving the scheduler room for several blocks per multiprocessor. */
#define GK_CUDA_THREADS 256

/* The largest grid: 2^31 - 1 blocks across, 65535 down. */
#define GK_CUDA_GRID_X_MAX 0x7fffffffu
#define GK_CUDA_GRID_Y_MAX 65535u

/* Reductions leave one partial per block (at most GK_CUDA_MAX_PARTIALS blocks, each partial up
 * to GK_CUDA_PARTIAL_DOUBLES doubles) in mapped host memory, where the host merges them
 * (cuda_reduce.cu). */
#define GK_CUDA_MAX_PARTIALS 4096
#define GK_CUDA_PARTIAL_DOUBLES 4

/* Host writes up to this size are staged through pinned memory so that mem_write can return
 * without waiting for the stream (cuda_memory.cu). */
#define GK_CUDA_STAGING_BYTES ((size_t)1 << 20)

/* Everything one context owns. Created by context_create, used by one thread at a time. */
typedef struct gk_cuda_state {
    int device;
    int sm_count;
    uint32_t flags;
    /* Where all work is queued: own_stream, or the caller's since gk_context_set_stream. */
    cudaStream_t stream;
    cudaStream_t own_stream;
    /* Recorded on the old stream at a switch, waited for by the new one (made at the first). */
    cudaEvent_t switched;
    cublasHandle_t blas;
    /* Stream-ordered allocations come from a pool of the context's own, so that freeing and
     * re-allocating large buffers does not return memory to the driver at every sync; NULL
     * when the device has no memory pools (plain cudaMalloc then). */
    cudaMemPool_t pool;
    /* Small blocks freed by mem_free, kept for the next mem_alloc of their size class. */
    gk_cuda_block_cache cache;
    /* Grow-only device workspace for kernels that need temporary memory (rbf_matvec's split
     * partial sums); stream-ordered, so growing it never waits. */
    void *work;
    size_t work_bytes;
    /* Pinned host memory, mapped into the device's address space: the head holds the
     * reductions' partials, the rest stages small copies. */
    unsigned char *pinned;
    /* The partials (GK_CUDA_MAX_PARTIALS x GK_CUDA_PARTIAL_DOUBLES doubles' bits) as the host
     * and as kernels see them. */
    volatile unsigned long long *host_partials;
    unsigned long long *host_partials_dev;
    unsigned char *staging;
    cudaEvent_t staging_free; /* recorded after the last copy that reads `staging` */
    /* The reductions' launches (cuda_launch_graph.h). */
    gk_cuda_launch_graphs graphs;
    char name[256];
} gk_cuda_state;

#ifdef __cplusplus
extern "C" {
#endif

/* GK_OK for cudaSuccess; otherwise clears the runtime's last error (so a later launch check
 * does not report a stale failure, e.g. after an out-of-memory) and reports
 * "<what>: <cudaErrorName>: <text>" as GK_E_OUT_OF_MEMORY for allocation failures, else
 * GK_E_DEVICE. The core puts the public function's name in front. */
gk_status gk__cuda_check(cudaError_t e, const char *what);
/* The same for cuBLAS statuses: CUBLAS_STATUS_ALLOC_FAILED is GK_E_OUT_OF_MEMORY. */
gk_status gk__cublas_check(cublasStatus_t s, const char *what);
/* GK_E_INTERNAL for a dtype the core should have rejected. */
gk_status gk__cuda_bad_dtype(gk_dtype t);
/* Checks that the launch just made was accepted (cudaGetLastError). */
gk_status gk__cuda_launched(const char *kernel);
/* Makes st->device current on the calling thread (contexts may live on different threads). */
gk_status gk__cuda_enter(gk_cuda_state *st);
/* At least `bytes` of the context's workspace, valid for work queued on its stream from now
 * until the next call (cuda_memory.cu). */
gk_status gk__cuda_workspace(gk_cuda_state *st, size_t bytes, void **out);
/* 1 when the core's allocation sweep makes this allocation point fail: only in a module built
 * with GK_FAULT_INJECTION, loaded by a core that injects (src/alloc.h); 0 at no cost otherwise. */
#ifdef GK_FAULT_INJECTION
int gk__cuda_fault(void);
#else
static inline int gk__cuda_fault(void)
{
    return 0;
}
#endif
/* Stream-ordered allocation and release from the context's pool (cudaMalloc without one). */
cudaError_t gk__cuda_malloc(gk_cuda_state *st, size_t bytes, void **p);
/* Frees every block the cache holds (before giving memory back, and at context destroy). */
void gk__cuda_cache_flush(gk_cuda_state *st);
void gk__cuda_free(gk_cuda_state *st, void *p);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__

/* Blocks for a grid-stride kernel: enough to cover `work` items at `per_block` items per block,
 * at most `cap`, at least 1. */
static inline unsigned int gk__cuda_blocks(size_t work, size_t per_block, size_t cap)
{
    size_t b = (work + per_block - 1) / per_block;
    if (b > cap)
        b = cap;
    return b == 0 ? 1u : (unsigned int)b;
}

/* bytes rounded up to a multiple of 16: the alignment of each piece of a call's workspace. */
static inline size_t gk__cuda_round16(size_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

/* A form's switch in the environment (GK_RBF_TC, GK_MATVEC_TAYLOR; docs/forms.md): 0 for
 * "off", 2 for "forced" or also_forced (NULL: none), 1 (the size thresholds decide) otherwise.
 * Read on every call, so that a test can change it between calls. */
static inline int gk__cuda_form_env(const char *var, const char *also_forced)
{
    const char *v = getenv(var);
    if (v == NULL)
        return 1;
    if (strcmp(v, "off") == 0)
        return 0;
    if (strcmp(v, "forced") == 0 || (also_forced != NULL && strcmp(v, also_forced) == 0))
        return 2;
    return 1;
}

/* 16-byte vectors: float4 / double2 give single 128-bit loads and stores. */
template <typename T> struct gk_cuda_vec;
template <> struct gk_cuda_vec<float> {
    typedef float4 type;
    enum { width = 4 };
    static __device__ __forceinline__ void unpack(const float4 &v, float *o)
    {
        o[0] = v.x;
        o[1] = v.y;
        o[2] = v.z;
        o[3] = v.w;
    }
    static __device__ __forceinline__ float4 pack(const float *o)
    {
        return make_float4(o[0], o[1], o[2], o[3]);
    }
};
template <> struct gk_cuda_vec<double> {
    typedef double2 type;
    enum { width = 2 };
    static __device__ __forceinline__ void unpack(const double2 &v, double *o)
    {
        o[0] = v.x;
        o[1] = v.y;
    }
    static __device__ __forceinline__ double2 pack(const double *o)
    {
        return make_double2(o[0], o[1]);
    }
};

/* Knuth's TwoSum: s + e == a + b exactly. The _rn intrinsics keep the compiler from contracting
 * or reordering the error term away. */
__device__ __forceinline__ void cuda_two_sum(double a, double b, double &s, double &e)
{
    s = __dadd_rn(a, b);
    double bp = __dsub_rn(s, a);
    e = __dadd_rn(__dsub_rn(a, __dsub_rn(s, bp)), __dsub_rn(b, bp));
}

/* A compensated total: the correction is meaningless once the sum overflowed or met NaN. */
__device__ __forceinline__ double cuda_comp_value(double s, double c)
{
    return isfinite(s) ? s + c : s;
}

/* How a stream of n elements splits into a scalar head, a run of aligned 16-byte vectors and a
 * scalar tail. Operands may be views at any element offset, so vectors are used only when all
 * pointers share one misalignment; otherwise everything is scalar (nvec = 0, head = n). */
typedef struct gk_cuda_split {
    size_t head;
    size_t nvec;
} gk_cuda_split;

static inline gk_cuda_split gk__cuda_split(size_t n, size_t elem, const void *p0, const void *p1,
                                           const void *p2)
{
    gk_cuda_split s = {n, 0};
    uintptr_t mis = (uintptr_t)p0 % 16;
    if ((p1 && (uintptr_t)p1 % 16 != mis) || (p2 && (uintptr_t)p2 % 16 != mis))
        return s;
    size_t head = ((16 - mis) % 16) / elem;
    if (head >= n)
        return s;
    s.head = head;
    s.nvec = (n - head) / (16 / elem);
    return s;
}

#endif /* __CUDACC__ */

#endif /* GK_CUDA_INTERNAL_H */
