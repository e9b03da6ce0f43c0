/* SPDX-License-Identifier: MIT */
/* interop_cuda.cu - the CUDA runtime calls and kernels of the interop test's "caller program". */
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime.h>

#include "interop_cuda.h"

static int ok(cudaError_t e)
{
    if (e == cudaSuccess)
        return 1;
    (void)cudaGetLastError();
    return 0;
}

int gkt_cuda_devices(char *why, size_t size)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, size, "cudaGetDeviceCount: %s: %s", cudaGetErrorName(e),
                 cudaGetErrorString(e));
        return 0;
    }
    if (n == 0)
        snprintf(why, size, "cudaGetDeviceCount reports no device");
    return n;
}

int gkt_cuda_set_device(int device)
{
    return ok(cudaSetDevice(device));
}

void *gkt_cuda_malloc(size_t bytes)
{
    void *p = NULL;
    return ok(cudaMalloc(&p, bytes)) ? p : NULL;
}

void *gkt_cuda_malloc_host(size_t bytes)
{
    void *p = NULL;
    return ok(cudaMallocHost(&p, bytes)) ? p : NULL;
}

void *gkt_cuda_malloc_managed(size_t bytes)
{
    void *p = NULL;
    return ok(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal)) ? p : NULL;
}

int gkt_cuda_free(void *p)
{
    return ok(cudaFree(p));
}

int gkt_cuda_free_host(void *p)
{
    return ok(cudaFreeHost(p));
}

int gkt_cuda_upload(void *device_dst, const void *host_src, size_t bytes)
{
    return ok(cudaMemcpy(device_dst, host_src, bytes, cudaMemcpyHostToDevice));
}

int gkt_cuda_download(void *host_dst, const void *device_src, size_t bytes)
{
    return ok(cudaMemcpy(host_dst, device_src, bytes, cudaMemcpyDeviceToHost));
}

void *gkt_cuda_stream_create(void)
{
    cudaStream_t s = NULL;
    return ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) ? (void *)s : NULL;
}

int gkt_cuda_stream_destroy(void *stream)
{
    return ok(cudaStreamDestroy((cudaStream_t)stream));
}

int gkt_cuda_stream_sync(void *stream)
{
    return ok(cudaStreamSynchronize((cudaStream_t)stream));
}

int gkt_cuda_stream_idle(void *stream)
{
    return ok(cudaStreamQuery((cudaStream_t)stream));
}

static __device__ uint64_t gkt_now_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* One block: thread 0 spins, then all threads fill, so no element is written early. */
static __global__ void gkt_fill_late_kernel(float *x, size_t n, float v, uint64_t ns)
{
    if (threadIdx.x == 0) {
        uint64_t start = gkt_now_ns();
        while (gkt_now_ns() - start < ns) {
        }
    }
    __syncthreads();
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        x[i] = v;
}

static __global__ void gkt_affine_kernel(float *y, const float *x, size_t n, float a, float b)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = a * x[i] + b;
}

int gkt_cuda_fill_late(void *stream, float *x, size_t n, float v, double ms)
{
    gkt_fill_late_kernel<<<1, 256, 0, (cudaStream_t)stream>>>(x, n, v, (uint64_t)(ms * 1e6));
    return ok(cudaGetLastError());
}

int gkt_cuda_affine(void *stream, float *y, const float *x, size_t n, float a, float b)
{
    gkt_affine_kernel<<<64, 256, 0, (cudaStream_t)stream>>>(y, x, n, a, b);
    return ok(cudaGetLastError());
}
