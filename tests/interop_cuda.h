/* SPDX-License-Identifier: MIT */
/* interop_cuda.h - the interop test acting as a CUDA program: its memory, streams, kernels. */
#ifndef GK_INTEROP_CUDA_H
#define GK_INTEROP_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA devices, or 0 with the runtime's reason in why. */
int gkt_cuda_devices(char *why, size_t size);
/* cudaSetDevice; 1 on success. */
int gkt_cuda_set_device(int device);

/* cudaMalloc / cudaMallocHost / cudaMallocManaged; NULL on failure. */
void *gkt_cuda_malloc(size_t bytes);
void *gkt_cuda_malloc_host(size_t bytes);
void *gkt_cuda_malloc_managed(size_t bytes);
/* cudaFree / cudaFreeHost; 1 when the runtime accepted the pointer (it was still allocated). */
int gkt_cuda_free(void *p);
int gkt_cuda_free_host(void *p);
/* Synchronous copies; 1 on success. */
int gkt_cuda_upload(void *device_dst, const void *host_src, size_t bytes);
int gkt_cuda_download(void *host_dst, const void *device_src, size_t bytes);

/* A cudaStream_t (non-blocking) as void *, NULL on failure; destroy; 1 on success. */
void *gkt_cuda_stream_create(void);
int gkt_cuda_stream_destroy(void *stream);
int gkt_cuda_stream_sync(void *stream);
/* 1 when all work queued on the stream has completed (cudaStreamQuery). */
int gkt_cuda_stream_idle(void *stream);

/* Queues on stream a kernel that first spins for ms milliseconds, then sets x[0..n) = v: work
 * queued after it on another stream would run before it finishes. 1 when launched. */
int gkt_cuda_fill_late(void *stream, float *x, size_t n, float v, double ms);
/* Queues y[i] = a * x[i] + b on stream. 1 when launched. */
int gkt_cuda_affine(void *stream, float *y, const float *x, size_t n, float a, float b);

#ifdef __cplusplus
}
#endif

#endif /* GK_INTEROP_CUDA_H */
