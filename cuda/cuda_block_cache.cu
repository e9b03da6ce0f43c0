/* SPDX-License-Identifier: MIT */
/* cuda_block_cache.cu - per-context free lists of small device blocks, by power-of-two class. */
#include "cuda_block_cache.h"

int gk__cuda_cache_class(size_t bytes)
{
    if (bytes > ((size_t)1 << GK_CUDA_CACHE_MAX_SHIFT))
        return -1;
    int shift = GK_CUDA_CACHE_MIN_SHIFT;
    while (((size_t)1 << shift) < bytes)
        shift++;
    return shift - GK_CUDA_CACHE_MIN_SHIFT;
}

size_t gk__cuda_cache_class_bytes(int c)
{
    return (size_t)1 << (c + GK_CUDA_CACHE_MIN_SHIFT);
}

void *gk__cuda_cache_take(gk_cuda_block_cache *cache, int c)
{
    if (cache->count[c] == 0)
        return NULL;
    return cache->blocks[c][--cache->count[c]];
}

int gk__cuda_cache_put(gk_cuda_block_cache *cache, int c, void *p)
{
    if (cache->count[c] == GK_CUDA_CACHE_DEPTH)
        return 0;
    cache->blocks[c][cache->count[c]++] = p;
    return 1;
}

void *gk__cuda_cache_pop_any(gk_cuda_block_cache *cache)
{
    for (int c = 0; c < GK_CUDA_CACHE_CLASSES; c++)
        if (cache->count[c] > 0)
            return cache->blocks[c][--cache->count[c]];
    return NULL;
}
