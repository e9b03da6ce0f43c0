/* SPDX-License-Identifier: MIT */
/* cuda_launch_graph.h - kernel launches through one-node CUDA graphs kept per context, for the
 * calls that wait for their kernel (the reductions). */
#ifndef GK_CUDA_LAUNCH_GRAPH_H
#define GK_CUDA_LAUNCH_GRAPH_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* Why: a reduction's result is on the host when the call returns, so the time from the call to
 * the kernel's first block is part of every call's time. A kernel writing a mapped-host flag
 * was seen by the host 7.0-7.7 us after a <<<>>> launch began, 5.2-6.0 us after
 * cudaGraphExecKernelNodeSetParams and cudaGraphLaunch of an instantiated one-node graph, 4.5 us
 * after cudaGraphLaunch alone. So each
 * slot keeps an executable graph of one kernel node with the arguments of its last launch: the
 * same kernel and arguments launch it as it is, other arguments of the same kernel update its
 * node first, and another kernel takes the least recently used slot. */
#define GK_CUDA_LAUNCH_GRAPHS 4
/* The bytes that tell two launches of a kernel apart (its arguments and grid, packed by the
 * caller). */
#define GK_CUDA_LAUNCH_KEY_BYTES 64

typedef struct gk_cuda_launch_graph {
    const void *func; /* the kernel; NULL: the slot is empty */
    cudaGraph_t graph;
    cudaGraphNode_t node;
    cudaGraphExec_t exec;
    unsigned char key[GK_CUDA_LAUNCH_KEY_BYTES];
    uint64_t used; /* the launch count when the slot last launched */
} gk_cuda_launch_graph;

typedef struct gk_cuda_launch_graphs {
    gk_cuda_launch_graph slot[GK_CUDA_LAUNCH_GRAPHS];
    uint64_t launches;
} gk_cuda_launch_graphs;

/* Launches func<<<blocks, threads, 0, stream>>>(args...) through a slot of g; key (at most
 * GK_CUDA_LAUNCH_KEY_BYTES, zero-padded by the caller) identifies the arguments and grid. Where
 * a graph cannot be made or updated the kernel is launched directly, so the launch is never
 * refused for the graph's sake; the result is the launch's cudaError_t. */
cudaError_t gk__cuda_graph_launch(gk_cuda_launch_graphs *g, cudaStream_t stream, const void *func,
                                  unsigned int blocks, unsigned int threads, void **args,
                                  const void *key);
/* Destroys every slot's graph. */
void gk__cuda_graphs_free(gk_cuda_launch_graphs *g);

#endif /* GK_CUDA_LAUNCH_GRAPH_H */
