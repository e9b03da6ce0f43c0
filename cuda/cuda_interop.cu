/* SPDX-License-Identifier: MIT */
/* cuda_interop.cu - checks on caller-owned device memory, and switching to a caller's stream. */
#include <stdint.h>
#include <string.h>

#include "cuda_internal.h"

/* GK_OK when the element at p (`which` of the range at base) is memory the context's device
 * computes on: its own device memory or managed memory. */
static gk_status gk_cuda_check_address(const gk_cuda_state *s, const void *base, const void *p,
                                       const char *which)
{
    cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return gk__cuda_error(GK_E_INVALID_ARGUMENT,
                              "device_ptr %p: cudaPointerGetAttributes on its %s element "
                              "(%p) failed: %s: %s",
                              base, which, p, cudaGetErrorName(e), cudaGetErrorString(e));
    }
    switch (a.type) {
    case cudaMemoryTypeDevice:
        if (a.device == s->device)
            return GK_OK;
        return gk__cuda_error(GK_E_INVALID_ARGUMENT,
                              "device_ptr %p: its %s element (%p) is memory of CUDA device "
                              "%d, not of the context's CUDA device %d",
                              base, which, p, a.device, s->device);
    case cudaMemoryTypeManaged:
        return GK_OK;
    case cudaMemoryTypeHost:
        return gk__cuda_error(GK_E_INVALID_ARGUMENT,
                              "device_ptr %p: its %s element (%p) is pinned host memory, not "
                              "memory of the context's CUDA device %d",
                              base, which, p, s->device);
    default:
        return gk__cuda_error(GK_E_INVALID_ARGUMENT,
                              "device_ptr %p: its %s element (%p) is no memory the CUDA "
                              "runtime knows (pageable host memory, or past an allocation), not "
                              "memory of the context's CUDA device %d",
                              base, which, p, s->device);
    }
}

/* Both ends are checked: a range that starts in device memory but runs past the allocation
 * into unmapped addresses is caught, though not one that runs into a neighbouring block. */
gk_status gk__cuda_mem_check_device(void *st, const void *ptr, size_t bytes)
{
    const gk_cuda_state *s = (const gk_cuda_state *)st;
    gk_status r = gk_cuda_check_address(s, ptr, ptr, "first");
    if (r != GK_OK || bytes <= 1)
        return r;
    return gk_cuda_check_address(s, ptr, (const char *)ptr + (bytes - 1), "last byte of the last");
}

gk_status gk__cuda_set_stream(void *st, void *stream)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    cudaStream_t next = stream != NULL ? (cudaStream_t)stream : s->own_stream;
    if (next == s->stream)
        return GK_OK;
#if CUDART_VERSION >= 12080
    int device = -1;
    r = gk__cuda_check(cudaStreamGetDevice(next, &device), "cudaStreamGetDevice(cuda_stream)");
    if (r != GK_OK)
        return r;
    if (device != s->device)
        return gk__cuda_error(GK_E_INVALID_ARGUMENT,
                              "cuda_stream %p is a stream of CUDA device %d, not of the "
                              "context's CUDA device %d",
                              stream, device, s->device);
#endif
    if (s->switched == NULL) {
        r = gk__cuda_check(cudaEventCreateWithFlags(&s->switched, cudaEventDisableTiming),
                           "cudaEventCreateWithFlags");
        if (r != GK_OK)
            return r;
    }
    /* The new stream waits on the device for what the context queued on the old one, so
     * buffers, the block cache and the workspace stay in order without waiting here. */
    r = gk__cuda_check(cudaEventRecord(s->switched, s->stream), "cudaEventRecord(old stream)");
    if (r == GK_OK)
        r = gk__cuda_check(cudaStreamWaitEvent(next, s->switched, 0),
                           "cudaStreamWaitEvent(cuda_stream)");
    if (r == GK_OK)
        r = gk__cublas_check(cublasSetStream(s->blas, next), "cublasSetStream");
    if (r != GK_OK)
        return r;
    s->stream = next;
    return GK_OK;
}

void *gk__cuda_stream(void *st)
{
    return (void *)((gk_cuda_state *)st)->stream;
}
