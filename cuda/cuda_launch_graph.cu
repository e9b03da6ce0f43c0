/* SPDX-License-Identifier: MIT */
/* cuda_launch_graph.cu - the per-context one-node graphs of cuda_launch_graph.h. */
#include "cuda_launch_graph.h"

#include <string.h>

static void cuda_graph_clear(gk_cuda_launch_graph *s)
{
    if (s->exec != NULL)
        (void)cudaGraphExecDestroy(s->exec);
    if (s->graph != NULL)
        (void)cudaGraphDestroy(s->graph);
    memset(s, 0, sizeof *s);
}

static cudaKernelNodeParams cuda_graph_params(const void *func, unsigned int blocks,
                                              unsigned int threads, void **args)
{
    cudaKernelNodeParams p = {};
    p.func = (void *)func;
    p.gridDim = dim3(blocks);
    p.blockDim = dim3(threads);
    p.kernelParams = args;
    return p;
}

/* Makes slot s a graph of this launch: 0 on success, else the slot is left empty. */
static int cuda_graph_make(gk_cuda_launch_graph *s, const cudaKernelNodeParams *p)
{
    if (cudaGraphCreate(&s->graph, 0) == cudaSuccess &&
        cudaGraphAddKernelNode(&s->node, s->graph, NULL, 0, p) == cudaSuccess &&
        cudaGraphInstantiate(&s->exec, s->graph, 0) == cudaSuccess) {
        s->func = p->func;
        return 0;
    }
    cuda_graph_clear(s);
    return -1;
}

/* The slot for this launch: the one with the same kernel and key, else the least recently used
 * one with the same kernel (its node updated), else an empty or the least recently used slot
 * (made anew); NULL where no graph could be made or updated. */
static gk_cuda_launch_graph *cuda_graph_slot(gk_cuda_launch_graphs *g,
                                             const cudaKernelNodeParams *p, const void *key)
{
    gk_cuda_launch_graph *same = NULL, *lru = &g->slot[0];
    for (int i = 0; i < GK_CUDA_LAUNCH_GRAPHS; i++) {
        gk_cuda_launch_graph *s = &g->slot[i];
        if (s->func == p->func && memcmp(s->key, key, GK_CUDA_LAUNCH_KEY_BYTES) == 0)
            return s;
        if (s->func == p->func && (same == NULL || s->used < same->used))
            same = s;
        if (lru->func != NULL && (s->func == NULL || s->used < lru->used))
            lru = s;
    }
    if (same != NULL) {
        if (cudaGraphExecKernelNodeSetParams(same->exec, same->node, p) == cudaSuccess)
            return same;
        (void)cudaGetLastError();
        cuda_graph_clear(same);
        lru = same;
    }
    cuda_graph_clear(lru);
    if (cuda_graph_make(lru, p) != 0) {
        (void)cudaGetLastError();
        return NULL;
    }
    return lru;
}

cudaError_t gk__cuda_graph_launch(gk_cuda_launch_graphs *g, cudaStream_t stream, const void *func,
                                  unsigned int blocks, unsigned int threads, void **args,
                                  const void *key)
{
    const cudaKernelNodeParams p = cuda_graph_params(func, blocks, threads, args);
    gk_cuda_launch_graph *s = cuda_graph_slot(g, &p, key);
    if (s == NULL)
        return cudaLaunchKernel(func, dim3(blocks), dim3(threads), args, 0, stream);
    memcpy(s->key, key, GK_CUDA_LAUNCH_KEY_BYTES);
    s->used = ++g->launches;
    return cudaGraphLaunch(s->exec, stream);
}

void gk__cuda_graphs_free(gk_cuda_launch_graphs *g)
{
    for (int i = 0; i < GK_CUDA_LAUNCH_GRAPHS; i++)
        cuda_graph_clear(&g->slot[i]);
}
