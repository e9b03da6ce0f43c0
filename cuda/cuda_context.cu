/* SPDX-License-Identifier: MIT */
/* cuda_context.cu - device discovery; per-context stream, cuBLAS handle, pool and scratch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "rbf/plan.h"

/* Offset of the staging area inside the pinned block; the bytes before it take the reductions'
 * partials, a multiple of 256 that keeps the staging area aligned for the DMA engines. */
#define GK_CUDA_PINNED_HEAD ((size_t)GK_CUDA_MAX_PARTIALS * GK_CUDA_PARTIAL_DOUBLES * 8)

gk_status gk__cuda_device_count(int *count)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        /* The core records this text as the reason CUDA is unavailable (no device, no or too
         * old a driver), so it carries the runtime's own name and description. */
        (void)cudaGetLastError();
        return gk__cuda_error(GK_E_BACKEND_UNAVAILABLE, "cudaGetDeviceCount: %s: %s",
                              cudaGetErrorName(e), cudaGetErrorString(e));
    }
    *count = n;
    return GK_OK;
}

/* Releases whatever a (possibly half-built) state holds. Errors are ignored: nothing useful
 * can be done about them while tearing down, and they must not leak into later checks. */
static void gk_cuda_state_free(gk_cuda_state *s)
{
    /* The caller's stream, if one is set, is waited for and left alone from here on: the
     * frees below go on the context's own stream. */
    if (s->stream != NULL)
        (void)cudaStreamSynchronize(s->stream);
    s->stream = s->own_stream;
    gk__cuda_cache_flush(s);
    gk__cuda_graphs_free(&s->graphs);
    if (s->blas != NULL)
        (void)cublasDestroy(s->blas);
    if (s->work != NULL)
        gk__cuda_free(s, s->work);
    if (s->pinned != NULL)
        (void)cudaFreeHost(s->pinned);
    if (s->staging_free != NULL)
        (void)cudaEventDestroy(s->staging_free);
    if (s->switched != NULL)
        (void)cudaEventDestroy(s->switched);
    if (s->own_stream != NULL)
        (void)cudaStreamDestroy(s->own_stream);
    /* Memory still outstanding in the pool is released once it is freed. */
    if (s->pool != NULL)
        (void)cudaMemPoolDestroy(s->pool);
    (void)cudaGetLastError();
    free(s);
}

static gk_status gk_cuda_make_pool(gk_cuda_state *s)
{
    int supported = 0;
    gk_status r = gk__cuda_check(
        cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, s->device),
        "cudaDeviceGetAttribute(cudaDevAttrMemoryPoolsSupported)");
    if (r != GK_OK || !supported)
        return r;
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = s->device;
    r = gk__cuda_check(cudaMemPoolCreate(&s->pool, &props), "cudaMemPoolCreate");
    if (r != GK_OK)
        return r;
    /* Keep freed memory cached in the pool (mem_alloc trims it when an allocation fails), so a
     * loop that frees and re-creates large buffers does not re-map memory at every sync. */
    uint64_t keep = UINT64_MAX;
    return gk__cuda_check(cudaMemPoolSetAttribute(s->pool, cudaMemPoolAttrReleaseThreshold, &keep),
                          "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
}

static gk_status gk_cuda_make_blas(gk_cuda_state *s)
{
    gk_status r = gk__cublas_check(cublasCreate(&s->blas), "cublasCreate");
    if (r == GK_OK)
        r = gk__cublas_check(cublasSetStream(s->blas, s->stream), "cublasSetStream");
    if (r == GK_OK)
        r = gk__cublas_check(cublasSetPointerMode(s->blas, CUBLAS_POINTER_MODE_HOST),
                             "cublasSetPointerMode");
    /* CUBLAS_DEFAULT_MATH keeps float32 products in true fp32 (FFMA); TF32 tensor cores only
     * when the caller opted in, since they carry about 1e-3 relative error. */
    cublasMath_t mode =
        (s->flags & GK_FLAG_ALLOW_TF32) ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
    if (r == GK_OK)
        r = gk__cublas_check(cublasSetMathMode(s->blas, mode), "cublasSetMathMode");
    return r;
}

static gk_status gk_cuda_make_scratch(gk_cuda_state *s)
{
    /* One allocation for the context's life, so reductions never allocate per call. */
    cudaError_t e = gk__cuda_fault() ? cudaErrorMemoryAllocation
                                     : cudaHostAlloc((void **)&s->pinned,
                                                     GK_CUDA_PINNED_HEAD + GK_CUDA_STAGING_BYTES,
                                                     cudaHostAllocMapped);
    gk_status r = gk__cuda_check(e, "cudaHostAlloc(staging)");
    if (r != GK_OK)
        return r;
    s->staging = s->pinned + GK_CUDA_PINNED_HEAD;
    /* Reductions' blocks write their partials straight into host memory, which saves a copy
     * and lets the host merge them before the kernel has retired. */
    s->host_partials = (volatile unsigned long long *)s->pinned;
    r = gk__cuda_check(cudaHostGetDevicePointer((void **)&s->host_partials_dev, s->pinned, 0),
                       "cudaHostGetDevicePointer(reduction partials)");
    if (r != GK_OK)
        return r;
    return gk__cuda_check(cudaEventCreateWithFlags(&s->staging_free, cudaEventDisableTiming),
                          "cudaEventCreateWithFlags");
}

gk_status gk__cuda_context_create(const gk_backend_config *cfg, void **out)
{
    /* The core checked cfg->device against the device count (src/interop.c). */
    gk_cuda_state *s = gk__cuda_fault() ? NULL : (gk_cuda_state *)calloc(1, sizeof *s);
    if (s == NULL)
        return gk__cuda_error(GK_E_OUT_OF_MEMORY, "out of host memory for the CUDA state");
    s->device = cfg->device;
    s->flags = cfg->flags;
    s->log = cfg->log;
    gk_status r = gk__cuda_rbf_form_of(cfg->rbf_form, &s->rbf_form);
    if (r != GK_OK) {
        free(s);
        return r;
    }

    r = gk__cuda_check(cudaSetDevice(s->device), "cudaSetDevice");
    if (r == GK_OK) {
        cudaDeviceProp prop;
        r = gk__cuda_check(cudaGetDeviceProperties(&prop, s->device), "cudaGetDeviceProperties");
        if (r == GK_OK) {
            snprintf(s->name, sizeof s->name, "%.200s (CUDA device %d)", prop.name, s->device);
            s->sm_count = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
        }
    }
    /* Non-blocking: the legacy default stream of other libraries in the process must not
     * serialize with this context's work. */
    if (r == GK_OK)
        r = gk__cuda_check(cudaStreamCreateWithFlags(&s->own_stream, cudaStreamNonBlocking),
                           "cudaStreamCreateWithFlags");
    s->stream = s->own_stream;
    if (r == GK_OK)
        r = gk_cuda_make_pool(s);
    if (r == GK_OK)
        r = gk_cuda_make_blas(s);
    if (r == GK_OK)
        r = gk_cuda_make_scratch(s);
    if (r != GK_OK) {
        gk_cuda_state_free(s);
        return r;
    }
    *out = s;
    return GK_OK;
}

void gk__cuda_context_destroy(void *st)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    /* Destroying cannot fail, so it must not record an error message either. */
    (void)cudaSetDevice(s->device);
    gk_cuda_state_free(s);
}

const char *gk__cuda_device_name(void *st)
{
    return ((gk_cuda_state *)st)->name;
}

gk_status gk__cuda_synchronize(void *st)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    return gk__cuda_check(cudaStreamSynchronize(s->stream), "cudaStreamSynchronize");
}
