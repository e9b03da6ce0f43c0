/* SPDX-License-Identifier: MIT */
/* cuda_block_cache.h - small device blocks recycled within a context, without the CUDA API. */
#ifndef GK_CUDA_BLOCK_CACHE_H
#define GK_CUDA_BLOCK_CACHE_H

#include <stddef.h>

/* Blocks of 2^GK_CUDA_CACHE_MIN_SHIFT .. 2^GK_CUDA_CACHE_MAX_SHIFT bytes are cached, up to
 * GK_CUDA_CACHE_DEPTH per size class: NumPy-style code (c = a + b on small arrays) creates
 * and destroys a buffer per call, and cudaMallocFromPoolAsync + cudaFreeAsync then cost more
 * than the kernel. Reuse needs no event: a context runs everything on its current stream, and a
 * switch of streams makes the new one wait for the old, so work queued on a block before it
 * was freed finishes before work queued after its reuse. */
#define GK_CUDA_CACHE_MIN_SHIFT 8
#define GK_CUDA_CACHE_MAX_SHIFT 20
#define GK_CUDA_CACHE_CLASSES (GK_CUDA_CACHE_MAX_SHIFT - GK_CUDA_CACHE_MIN_SHIFT + 1)
#define GK_CUDA_CACHE_DEPTH 32

typedef struct gk_cuda_block_cache {
    void *blocks[GK_CUDA_CACHE_CLASSES][GK_CUDA_CACHE_DEPTH];
    int count[GK_CUDA_CACHE_CLASSES];
} gk_cuda_block_cache;

/* The size class of an allocation of `bytes`, or -1 if it is not cached. */
int gk__cuda_cache_class(size_t bytes);
/* Bytes actually allocated for blocks of class c (so any request of that class fits). */
size_t gk__cuda_cache_class_bytes(int c);
/* A cached block of class c, or NULL. */
void *gk__cuda_cache_take(gk_cuda_block_cache *cache, int c);
/* Keeps p (of class c) for reuse; 0 if the class is full and the caller must free it. */
int gk__cuda_cache_put(gk_cuda_block_cache *cache, int c, void *p);
/* Removes and returns any cached block, or NULL when empty (to free them all). */
void *gk__cuda_cache_pop_any(gk_cuda_block_cache *cache);

#endif /* GK_CUDA_BLOCK_CACHE_H */
