/* SPDX-License-Identifier: MIT */
/* cuda_memory.cu - device allocations and host<->device copies, ordered on the context's stream. */
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

static cudaError_t gk_cuda_alloc_once(gk_cuda_state *s, size_t bytes, void **p)
{
    if (s->pool != NULL)
        return cudaMallocFromPoolAsync(p, bytes, s->pool, s->stream);
    return cudaMalloc(p, bytes);
}

cudaError_t gk__cuda_malloc(gk_cuda_state *s, size_t bytes, void **p)
{
    if (gk__cuda_fault())
        return cudaErrorMemoryAllocation;
    cudaError_t e = gk_cuda_alloc_once(s, bytes, p);
    if (e == cudaErrorMemoryAllocation && s->pool != NULL) {
        /* The block cache and the pool may hold memory freed earlier: let queued frees
         * complete, hand it all back to the driver and try once more before reporting out of
         * memory. */
        (void)cudaGetLastError();
        gk__cuda_cache_flush(s);
        if (cudaStreamSynchronize(s->stream) == cudaSuccess &&
            cudaMemPoolTrimTo(s->pool, 0) == cudaSuccess)
            e = gk_cuda_alloc_once(s, bytes, p);
        else
            (void)cudaGetLastError();
    }
    return e;
}

void gk__cuda_free(gk_cuda_state *s, void *p)
{
    /* Stream-ordered: the memory returns to the pool only after queued work that uses it. */
    cudaError_t e = s->pool != NULL ? cudaFreeAsync(p, s->stream) : cudaFree(p);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (gk__cuda_log_enabled())
            fprintf(stderr, "gpukern: cuda: freeing %p failed: %s: %s\n", p, cudaGetErrorName(e),
                    cudaGetErrorString(e));
    }
}

void gk__cuda_cache_flush(gk_cuda_state *s)
{
    void *p;
    while ((p = gk__cuda_cache_pop_any(&s->cache)) != NULL)
        gk__cuda_free(s, p);
}

gk_status gk__cuda_workspace(gk_cuda_state *s, size_t bytes, void **out)
{
    if (bytes > s->work_bytes) {
        void *p = NULL;
        cudaError_t e = gk__cuda_malloc(s, bytes, &p);
        if (e != cudaSuccess) {
            char what[96];
            snprintf(what, sizeof what, "workspace of %zu bytes", bytes);
            return gk__cuda_check(e, what);
        }
        if (s->work != NULL)
            gk__cuda_free(s, s->work);
        s->work = p;
        s->work_bytes = bytes;
    }
    *out = s->work;
    return GK_OK;
}

/* Small requests are served from the block cache, rounded up to their size class. */
gk_status gk__cuda_mem_alloc(void *st, size_t bytes, void **ptr)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    int c = gk__cuda_cache_class(bytes);
    if (c >= 0) {
        void *cached = gk__cuda_cache_take(&s->cache, c);
        if (cached != NULL) {
            *ptr = cached;
            return GK_OK;
        }
        bytes = gk__cuda_cache_class_bytes(c);
    }
    void *p = NULL;
    cudaError_t e = gk__cuda_malloc(s, bytes, &p);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "%s(%zu bytes)",
                 s->pool != NULL ? "cudaMallocFromPoolAsync" : "cudaMalloc", bytes);
        return gk__cuda_check(e, what);
    }
    *ptr = p;
    return GK_OK;
}

void gk__cuda_mem_free(void *st, void *ptr, size_t bytes)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    int c = gk__cuda_cache_class(bytes);
    if (c >= 0 && gk__cuda_cache_put(&s->cache, c, ptr))
        return;
    (void)cudaSetDevice(s->device);
    gk__cuda_free(s, ptr);
}

gk_status gk__cuda_mem_write(void *st, void *dst, const void *src, size_t bytes)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    if (bytes > GK_CUDA_STAGING_BYTES) {
        /* src may be pinned memory, for which the copy really is asynchronous: wait, since
         * the caller may reuse src as soon as this returns. */
        r = gk__cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s->stream),
                           "cudaMemcpyAsync(host to device)");
        if (r == GK_OK)
            r = gk__cuda_check(cudaStreamSynchronize(s->stream), "cudaStreamSynchronize");
        return r;
    }
    /* Small writes go through the pinned staging area and return at once; only a previous
     * copy still reading the staging area is waited for. */
    r = gk__cuda_check(cudaEventSynchronize(s->staging_free), "cudaEventSynchronize");
    if (r != GK_OK)
        return r;
    memcpy(s->staging, src, bytes);
    r = gk__cuda_check(cudaMemcpyAsync(dst, s->staging, bytes, cudaMemcpyHostToDevice, s->stream),
                       "cudaMemcpyAsync(host to device)");
    if (r != GK_OK)
        return r;
    return gk__cuda_check(cudaEventRecord(s->staging_free, s->stream), "cudaEventRecord");
}

gk_status gk__cuda_mem_read(void *st, void *dst, const void *src, size_t bytes)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    /* Small reads land in pinned memory (a cheaper DMA than to pageable memory); the stream
     * orders the copy after any earlier copy out of the staging area. */
    void *land = bytes <= GK_CUDA_STAGING_BYTES ? (void *)s->staging : dst;
    r = gk__cuda_check(cudaMemcpyAsync(land, src, bytes, cudaMemcpyDeviceToHost, s->stream),
                       "cudaMemcpyAsync(device to host)");
    if (r == GK_OK)
        r = gk__cuda_check(cudaStreamSynchronize(s->stream), "cudaStreamSynchronize");
    if (r == GK_OK && land != dst)
        memcpy(dst, land, bytes);
    return r;
}
