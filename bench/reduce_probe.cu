/* SPDX-License-Identifier: MIT */
/* reduce_probe.cu - where a float32 sum's time goes on the GPU: access patterns and the round
 * trip of one call on a timeline (issue 16). Standalone: its own copy of the sum kernel of
 * cuda_reduce.cu before 60b32bb ("lib": one wave of 4 x 256-thread blocks per SM, 8 loads in
 * flight, a last block that merges the partials and stores the result into a mapped host
 * slot), varied one thing at a time: loads, access map, launch shape, TMA bulk copies, the
 * finish ("host merges" is the library's since 60b32bb), the launch path. The timeline puts
 * the GPU's %globaltimer on the host's clock through a ping-pong over mapped memory. Prints
 * one line per measurement (bench/RESULTS.md, helper reduce2's section, reads them).
 *
 *     nvcc -O3 -std=c++17 -arch=sm_90 -o reduce_probe bench/reduce_probe.cu -lcuda
 *     ./reduce_probe [once | part of a variant's name]
 *
 * `once` runs every variant once at 1e8 and exits (for ncu -k regex:ksum); a name part keeps
 * only the matching variants in the 1e8 table. */
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

#define EMPTY 0x7ff4dead5eed0001ULL

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

__device__ __forceinline__ unsigned long long gtime(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned smid(void)
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

/* Load modes. */
enum { L_LDG, L_NA256, L_EVF, L_NA, L_P128 };

template <int L> __device__ __forceinline__ float4 ld4(const float4 *p, unsigned long long pol)
{
    float4 v;
    if (L == L_LDG) {
        v = __ldg(p);
    } else if (L == L_NA256) {
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                     : "l"(p));
    } else if (L == L_EVF) {
        asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                     : "l"(p), "l"(pol));
    } else if (L == L_NA) {
        asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                     : "l"(p));
    } else {
        asm volatile("ld.global.nc.L2::128B.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                     : "l"(p));
    }
    return v;
}

template <int T> __device__ double block_merge(double a)
{
    __shared__ double wt[T / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        a += __shfl_down_sync(0xffffffffu, a, off);
    if (lane == 0)
        wt[warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = wt[lane < T / 32 ? lane : 0];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            double o = __shfl_down_sync(0xffffffffu, a, off);
            if (lane + off < T / 32)
                a += o;
        }
    }
    return a;
}

struct probe_args {
    const float4 *xv;
    size_t nvec;
    double *partials;
    unsigned int *ticket;
    unsigned long long *slot; /* mapped host memory */
    unsigned long long *tl;   /* timeline (device), or NULL */
    unsigned long long *tl_host; /* first block start, mapped, or NULL */
    unsigned long long *hpart;   /* FIN 3: one partial per block, mapped host memory */
};

/* Last block: merges the partials in block order, stores the result into the mapped slot.
 * FIN 0: as cuda_reduce.cu (fence, relaxed ticket, fence, a loop of loads); 1: the loads
 * unrolled, all issued before the first add; 2: 1 with an acq_rel ticket and no fences. */
template <int T, int FIN>
__device__ __forceinline__ void finish(double a, const probe_args &p, unsigned long long t0)
{
    a = block_merge<T>(a);
    if (FIN == 3) {
        /* the host merges: each block's partial straight into mapped host memory */
        if (threadIdx.x == 0) {
            if (p.tl) {
                p.tl[4 * blockIdx.x + 0] = t0;
                p.tl[4 * blockIdx.x + 1] = gtime();
                p.tl[4 * blockIdx.x + 2] = smid();
                if (blockIdx.x == 0) {
                    p.tl[4 * gridDim.x + 0] = 0;
                    p.tl[4 * gridDim.x + 1] = 0;
                    p.tl[4 * gridDim.x + 2] = 0;
                }
            }
            *(volatile unsigned long long *)(p.hpart + blockIdx.x) = __double_as_longlong(a);
        }
        return;
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        if (p.tl) {
            p.tl[4 * blockIdx.x + 0] = t0;
            p.tl[4 * blockIdx.x + 1] = gtime();
            p.tl[4 * blockIdx.x + 2] = smid();
        }
        p.partials[blockIdx.x] = a;
        unsigned int old;
        if (FIN == 2) {
            asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                         : "=r"(old)
                         : "l"(p.ticket)
                         : "memory");
        } else {
            __threadfence();
            old = atomicAdd(p.ticket, 1u);
        }
        last = old == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    if (FIN != 2)
        __threadfence();
    unsigned long long tlast = gtime();
    double b = 0.0;
    if (FIN == 0) {
        for (unsigned int blk = threadIdx.x; blk < gridDim.x; blk += blockDim.x)
            b += __ldcg(p.partials + blk);
    } else {
        const unsigned G = gridDim.x;
        if (G <= 8 * T) {
            double q[8];
#pragma unroll
            for (int k = 0; k < 8; k++) {
                unsigned blk = threadIdx.x + k * T;
                q[k] = blk < G ? __ldcg(p.partials + blk) : 0.0;
            }
#pragma unroll
            for (int k = 0; k < 8; k++)
                b += q[k];
        } else {
            for (unsigned int blk = threadIdx.x; blk < G; blk += blockDim.x)
                b += __ldcg(p.partials + blk);
        }
    }
    unsigned long long tload = gtime();
    b = block_merge<T>(b);
    if (threadIdx.x == 0) {
        *p.ticket = 0;
        unsigned long long ts = gtime();
        *(volatile unsigned long long *)p.slot = __double_as_longlong(b);
        if (p.tl) {
            p.tl[4 * gridDim.x + 0] = tlast;
            p.tl[4 * gridDim.x + 1] = ts;
            p.tl[4 * gridDim.x + 2] = tload;
        }
    }
}

/* Access maps. M_GRID: vector k to thread k mod threads (the library's). M_TWO: two halves,
 * U/2 vectors of each a round. M_BLOCK: each block a contiguous range. */
enum { M_GRID, M_TWO, M_BLOCK };

template <int M, int L, int U, int T, int MINB, int FIN = 0>
__global__ void __launch_bounds__(T, MINB) ksum(probe_args p)
{
    unsigned long long t0 = 0;
    if (threadIdx.x == 0 && (p.tl || p.tl_host)) {
        t0 = gtime();
        if (blockIdx.x == 0 && p.tl_host)
            *(volatile unsigned long long *)p.tl_host = t0;
    }
    unsigned long long pol = 0;
    if (L == L_EVF)
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    double a[8];
#pragma unroll
    for (int c = 0; c < 8; c++)
        a[c] = 0.0;
    const size_t tid = (size_t)blockIdx.x * T + threadIdx.x;
    const size_t nth = (size_t)gridDim.x * T;
    const float4 *xv = p.xv;
    size_t lo = 0, hi = p.nvec, step = nth, i = tid;
    if (M == M_BLOCK) {
        lo = p.nvec * blockIdx.x / gridDim.x;
        hi = p.nvec * (blockIdx.x + 1) / gridDim.x;
        step = T;
        i = lo + threadIdx.x;
    }
    if (M == M_TWO) {
        /* vectors [0, h) and [h, 2h); an odd last vector goes to the scalar-ish tail loop */
        const size_t h = p.nvec / 2;
        const size_t round = nth * (U / 2);
        const size_t full = h >= round ? h - (round - nth) : 0;
        for (; i < full; i += round) {
            float4 v[U];
#pragma unroll
            for (int u = 0; u < U / 2; u++) {
                v[2 * u] = ld4<L>(xv + i + u * nth, pol);
                v[2 * u + 1] = ld4<L>(xv + h + i + u * nth, pol);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                double &s = a[u % 8];
                s += (double)v[u].x;
                s += (double)v[u].y;
                s += (double)v[u].z;
                s += (double)v[u].w;
            }
        }
        for (; i < h; i += nth) {
            float4 v0 = ld4<L>(xv + i, pol), v1 = ld4<L>(xv + h + i, pol);
            a[0] += (double)v0.x + (double)v0.y + (double)v0.z + (double)v0.w;
            a[1] += (double)v1.x + (double)v1.y + (double)v1.z + (double)v1.w;
        }
        if (tid == 0 && (p.nvec & 1)) {
            float4 v0 = ld4<L>(xv + 2 * h, pol);
            a[2] += (double)v0.x + (double)v0.y + (double)v0.z + (double)v0.w;
        }
    } else {
        const size_t round = step * U;
        const size_t full = hi - lo >= round ? hi - (round - step) : lo;
        for (; i < full; i += round) {
            float4 v[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                v[u] = ld4<L>(xv + i + u * step, pol);
#pragma unroll
            for (int u = 0; u < U; u++) {
                double &s = a[u % 8];
                s += (double)v[u].x;
                s += (double)v[u].y;
                s += (double)v[u].z;
                s += (double)v[u].w;
            }
        }
        for (; i < hi; i += step) {
            float4 v0 = ld4<L>(xv + i, pol);
            a[0] += (double)v0.x + (double)v0.y + (double)v0.z + (double)v0.w;
        }
    }
#pragma unroll
    for (int c = 1; c < 8; c++)
        a[0] += a[c];
    finish<T, FIN>(a[0], p, t0);
}

/* TMA: one thread of a block bulk-copies tiles of TB bytes into S shared stages (tile j of the
 * block = global tile blockIdx.x + j * gridDim.x); every thread adds its share of each. */
template <int TB, int S, int T>
__global__ void __launch_bounds__(T, 1024 / T) ksum_tma(probe_args p)
{
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full[S];
    unsigned long long t0 = 0;
    if (threadIdx.x == 0 && (p.tl || p.tl_host)) {
        t0 = gtime();
        if (blockIdx.x == 0 && p.tl_host)
            *(volatile unsigned long long *)p.tl_host = t0;
    }
    const size_t vpt = TB / 16; /* vectors per tile */
    const size_t ntiles = p.nvec / vpt;
    const unsigned mine = blockIdx.x < ntiles ? (unsigned)((ntiles - blockIdx.x + gridDim.x - 1) / gridDim.x) : 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; s++) {
            unsigned a = (unsigned)__cvta_generic_to_shared(&full[s]);
            asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(a));
        }
        asm volatile("fence.mbarrier_init.release.cluster;");
    }
    __syncthreads();
    auto issue = [&](unsigned j) {
        int s = j % S;
        unsigned bar = (unsigned)__cvta_generic_to_shared(&full[s]);
        unsigned dst = (unsigned)__cvta_generic_to_shared(smem + (size_t)s * TB);
        const void *src = p.xv + ((size_t)blockIdx.x + (size_t)j * gridDim.x) * vpt;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(TB));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(dst), "l"(src), "r"(TB), "r"(bar) : "memory");
    };
    if (threadIdx.x == 0)
        for (unsigned j = 0; j < S && j < mine; j++)
            issue(j);
    double a[4] = {0.0, 0.0, 0.0, 0.0};
    for (unsigned j = 0; j < mine; j++) {
        int s = j % S;
        unsigned bar = (unsigned)__cvta_generic_to_shared(&full[s]);
        unsigned par = (j / S) & 1;
        unsigned ok;
        do {
            asm volatile("{\n.reg .pred P;\nmbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\n"
                         "selp.u32 %0, 1, 0, P;\n}"
                         : "=r"(ok)
                         : "r"(bar), "r"(par)
                         : "memory");
        } while (!ok);
        const float4 *t = (const float4 *)(smem + (size_t)s * TB);
#pragma unroll
        for (int k = 0; k < (int)(vpt / T); k++) {
            float4 v = t[threadIdx.x + k * T];
            double &q = a[k % 4];
            q += (double)v.x;
            q += (double)v.y;
            q += (double)v.z;
            q += (double)v.w;
        }
        __syncthreads();
        if (threadIdx.x == 0 && j + S < mine)
            issue(j + S);
    }
    /* the vectors past the last whole tile */
    for (size_t i = ntiles * vpt + (size_t)blockIdx.x * T + threadIdx.x; i < p.nvec; i += (size_t)gridDim.x * T) {
        float4 v = __ldg(p.xv + i);
        a[0] += (double)v.x + (double)v.y + (double)v.z + (double)v.w;
    }
    finish<T, 0>(a[0] + a[1] + a[2] + a[3], p, t0);
}

__global__ void kfill(float *x, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = (float)((i * 2654435761u) % 1000u) * 1e-3f - 0.25f;
}

/* One block: stores the first-start time and the result slot, as small as a launch gets. */
__global__ void kempty(probe_args p)
{
    if (threadIdx.x == 0) {
        unsigned long long t = gtime();
        if (p.tl_host)
            *(volatile unsigned long long *)p.tl_host = t;
        *(volatile unsigned long long *)p.slot = __double_as_longlong(1.0);
    }
}

/* The same from a one-wave grid of the reduction's shape (block 0 stores): what the grid's
 * size adds to the time until the first block runs. */
__global__ void __launch_bounds__(256, 4) kempty_grid(probe_args p)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        unsigned long long t = gtime();
        if (p.tl_host)
            *(volatile unsigned long long *)p.tl_host = t;
        *(volatile unsigned long long *)p.slot = __double_as_longlong(1.0);
    }
}

/* Spins on a host flag, then answers with the GPU's time: the clocks' offset. */
__global__ void kping(volatile unsigned long long *flag, volatile unsigned long long *answer)
{
    while (*flag == 0)
        ;
    *answer = gtime();
}

struct variant {
    const char *name;
    const void *fn;
    int threads, bps; /* bps: blocks per SM in the grid (waves x resident blocks) */
    size_t smem;
    int hm; /* the host merges the blocks' partials (FIN 3) */
};

static int g_sms;
static probe_args g_p;
static cudaStream_t g_st;

static int g_hm_blocks; /* > 0: the launch just made leaves this many partials for the host */

static void launch(const variant &v, size_t nvec)
{
    g_hm_blocks = 0;
    if (v.hm) {
        g_hm_blocks = g_sms * v.bps;
        for (int b = 0; b < g_hm_blocks; b++)
            ((volatile unsigned long long *)g_p.hpart)[b] = EMPTY;
    }
    probe_args p = g_p;
    p.nvec = nvec;
    void *args[] = {&p};
    CK(cudaLaunchKernel(v.fn, dim3(g_sms * v.bps), dim3(v.threads), args, v.smem, g_st));
}

static double wait_slot(void)
{
    if (g_hm_blocks > 0) {
        /* in block order, into 8 accumulators, merged in order at the end */
        volatile unsigned long long *h = g_p.hpart;
        double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int b = 0; b < g_hm_blocks; b++) {
            unsigned long long bits;
            while ((bits = h[b]) == EMPTY)
                ;
            double d;
            memcpy(&d, &bits, 8);
            acc[b & 7] += d;
        }
        double t = 0;
        for (int k = 0; k < 8; k++)
            t += acc[k];
        /* the timeline's "slot store" for FIN 3: the host's own clock, mapped to the GPU's */
        return t;
    }
    volatile unsigned long long *s = g_p.slot;
    while (*s == EMPTY)
        ;
    unsigned long long b = *s;
    double d;
    memcpy(&d, &b, 8);
    return d;
}

static double med(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* Kernel time by events over back-to-back launches, and a call's round trip (launch, spin). */
static void measure(const variant &v, size_t n, int reps)
{
    size_t nvec = n / 4;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    launch(v, nvec);
    CK(cudaStreamSynchronize(g_st));
    std::vector<double> ks;
    for (int r = 0; r < 5; r++) {
        CK(cudaEventRecord(e0, g_st));
        for (int k = 0; k < reps; k++)
            launch(v, nvec);
        CK(cudaEventRecord(e1, g_st));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ks.push_back(ms * 1e3 / reps);
    }
    std::vector<double> rt;
    double val = 0;
    for (int k = 0; k < 3 * reps; k++) {
        *(volatile unsigned long long *)g_p.slot = EMPTY;
        long long t0 = now_ns();
        launch(v, nvec);
        val = wait_slot();
        rt.push_back((now_ns() - t0) * 1e-3);
    }
    CK(cudaStreamSynchronize(g_st));
    double rmin = *std::min_element(rt.begin(), rt.end());
    double kmin = *std::min_element(ks.begin(), ks.end());
    printf("%-26s n %-8.3g kernel %8.2f us (min %8.2f) %6.3f TB/s | call %8.2f us (min %8.2f) %6.3f TB/s | sum %.10g\n",
           v.name, (double)n, med(ks), kmin, n * 4.0 / med(ks) / 1e6, med(rt), rmin,
           n * 4.0 / med(rt) / 1e6, val);
    fflush(stdout);
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
}

/* The same call through the driver API's cuLaunchKernel: what the runtime layer costs. */
static void drv_roundtrip(const variant &v, size_t n, int calls)
{
    CUfunction f;
    CK(cudaGetFuncBySymbol(&f, v.fn));
    probe_args p = g_p;
    p.nvec = n / 4;
    void *args[] = {&p};
    std::vector<double> rt, api;
    for (int k = 0; k < calls + 5; k++) {
        *(volatile unsigned long long *)g_p.slot = EMPTY;
        long long t0 = now_ns();
        if (cuLaunchKernel(f, g_sms * v.bps, 1, 1, v.threads, 1, 1, (unsigned)v.smem, (CUstream)g_st,
                           args, NULL) != CUDA_SUCCESS) {
            fprintf(stderr, "cuLaunchKernel failed\n");
            exit(1);
        }
        long long t1 = now_ns();
        wait_slot();
        if (k >= 5) {
            rt.push_back((now_ns() - t0) * 1e-3);
            api.push_back((t1 - t0) * 1e-3);
        }
    }
    CK(cudaStreamSynchronize(g_st));
    printf("driver-API launch %-22s n %-8.3g call %8.2f us (min %8.2f) | launch API %.2f us\n", v.name,
           (double)n, med(rt), *std::min_element(rt.begin(), rt.end()), med(api));
    /* and the runtime's, same loop */
    rt.clear();
    api.clear();
    for (int k = 0; k < calls + 5; k++) {
        *(volatile unsigned long long *)g_p.slot = EMPTY;
        long long t0 = now_ns();
        launch(v, n / 4);
        long long t1 = now_ns();
        wait_slot();
        if (k >= 5) {
            rt.push_back((now_ns() - t0) * 1e-3);
            api.push_back((t1 - t0) * 1e-3);
        }
    }
    CK(cudaStreamSynchronize(g_st));
    printf("runtime launch    %-22s n %-8.3g call %8.2f us (min %8.2f) | launch API %.2f us\n", v.name,
           (double)n, med(rt), *std::min_element(rt.begin(), rt.end()), med(api));
    fflush(stdout);
}

static double g_off; /* gpu globaltimer - host CLOCK_MONOTONIC, ns */

static void calibrate(void)
{
    volatile unsigned long long *flag, *ans;
    unsigned long long *fd, *ad;
    CK(cudaHostAlloc((void **)&flag, 64, cudaHostAllocMapped));
    CK(cudaHostAlloc((void **)&ans, 64, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&fd, (void *)flag, 0));
    CK(cudaHostGetDevicePointer((void **)&ad, (void *)ans, 0));
    double best = 1e30;
    std::vector<double> rts;
    for (int k = 0; k < 30; k++) {
        *flag = 0;
        *ans = 0;
        kping<<<1, 1, 0, g_st>>>(fd, ad);
        long long w = now_ns();
        while (now_ns() - w < 200000)
            ;
        long long ha = now_ns();
        *flag = 1;
        while (*ans == 0)
            ;
        long long hb = now_ns();
        CK(cudaStreamSynchronize(g_st));
        double rt = (double)(hb - ha);
        rts.push_back(rt);
        if (rt < best) {
            best = rt;
            g_off = (double)*ans - 0.5 * (double)(ha + hb);
        }
    }
    printf("clock ping-pong (host store -> gpu sees -> host sees): median %.2f us, min %.2f us\n",
           med(rts) * 1e-3, best * 1e-3);
}

/* One call on a timeline: host before the launch, launch returned, GPU first block start,
 * GPU slot store, host sees the slot. */
static void timeline(const variant &v, size_t n, int calls, bool blocks)
{
    size_t nvec = n / 4;
    std::vector<double> pre, api, run, post, tot, lastfin, endspread, startspread, p50end, tick, lds;
    for (int k = 0; k < calls; k++) {
        *(volatile unsigned long long *)g_p.slot = EMPTY;
        *(volatile unsigned long long *)g_p.tl_host = 0;
        long long h0 = now_ns();
        launch(v, nvec);
        long long h1 = now_ns();
        wait_slot();
        long long h3 = now_ns();
        CK(cudaStreamSynchronize(g_st));
        double gs = (double)*(volatile unsigned long long *)g_p.tl_host - g_off;
        pre.push_back((gs - h0) * 1e-3);
        api.push_back((h1 - h0) * 1e-3);
        tot.push_back((h3 - h0) * 1e-3);
        if (blocks) {
            int G = g_sms * v.bps;
            std::vector<unsigned long long> t((size_t)4 * G + 4);
            CK(cudaMemcpy(t.data(), g_p.tl, t.size() * 8, cudaMemcpyDeviceToHost));
            unsigned long long s0 = ~0ull, s1 = 0;
            std::vector<double> ends;
            for (int b = 0; b < G; b++) {
                s0 = std::min(s0, t[4 * b]);
                s1 = std::max(s1, t[4 * b]);
            }
            for (int b = 0; b < G; b++)
                ends.push_back((double)(t[4 * b + 1] - s0));
            std::sort(ends.begin(), ends.end());
            /* host merges (FIN 3): no last block; the latest block's partial store instead */
            const bool hm = t[4 * G + 1] == 0;
            double gstore = hm ? (double)s0 + ends.back() : (double)t[4 * G + 1];
            if (hm)
                t[4 * G] = t[4 * G + 2] = (unsigned long long)gstore;
            run.push_back((gstore - s0) * 1e-3);
            post.push_back((h3 - (gstore - g_off)) * 1e-3);
            lastfin.push_back((gstore - (s0 + ends.back())) * 1e-3);
            tick.push_back(((double)t[4 * G] - (s0 + ends.back())) * 1e-3);
            lds.push_back(((double)t[4 * G + 2] - (double)t[4 * G]) * 1e-3);
            endspread.push_back((ends.back() - ends.front()) * 1e-3);
            startspread.push_back((s1 - s0) * 1e-3);
            p50end.push_back(ends[ends.size() / 2] * 1e-3);
            if (k == calls - 1) {
                printf("  %s blocks' end after first start (us): min %.2f p10 %.2f p50 %.2f p90 %.2f p99 %.2f max %.2f\n",
                       v.name, ends.front() * 1e-3, ends[ends.size() / 10] * 1e-3,
                       ends[ends.size() / 2] * 1e-3, ends[ends.size() * 9 / 10] * 1e-3,
                       ends[ends.size() * 99 / 100] * 1e-3, ends.back() * 1e-3);
                /* per SM: the mean end of its blocks, the spread across SMs */
                std::vector<double> sm(g_sms, 0.0);
                std::vector<int> cnt(g_sms, 0);
                for (int b = 0; b < G; b++) {
                    int q = (int)t[4 * b + 2];
                    if (q < g_sms) {
                        sm[q] = std::max(sm[q], (double)(t[4 * b + 1] - s0));
                        cnt[q]++;
                    }
                }
                std::sort(sm.begin(), sm.end());
                printf("  %s per-SM last end (us): min %.2f p50 %.2f max %.2f\n", v.name,
                       sm.front() * 1e-3, sm[sm.size() / 2] * 1e-3, sm.back() * 1e-3);
            }
        }
    }
    printf("timeline %-18s n %-8.3g host call %.2f | launch API %.2f | host call -> first block %.2f",
           v.name, (double)n, med(tot), med(api), med(pre));
    if (blocks)
        printf(" | first block -> slot store %.2f (start spread %.2f, end spread %.2f, p50 end %.2f, last block end -> store %.2f = ticket+fences %.2f + partial loads %.2f + merge) | store -> host sees %.2f",
               med(run), med(startspread), med(endspread), med(p50end), med(lastfin), med(tick), med(lds), med(post));
    printf("  (us, medians of %d)\n", calls);
    fflush(stdout);
}

#define V(M, L, U, T, B, name) variant{name, (const void *)ksum<M, L, U, T, B>, T, B, 0, 0}
#define VW(M, L, U, T, B, W, name) variant{name, (const void *)ksum<M, L, U, T, B>, T, B * W, 0, 0}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    CK(cudaSetDevice(0));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaStreamCreateWithFlags(&g_st, cudaStreamNonBlocking));
    const size_t nmax = 250000000;
    float *x;
    CK(cudaMalloc((void **)&x, nmax * 4));
    kfill<<<g_sms * 8, 256, 0, g_st>>>(x, nmax);
    CK(cudaMalloc((void **)&g_p.partials, 65536 * 8));
    CK(cudaMalloc((void **)&g_p.ticket, 64));
    CK(cudaMemset(g_p.ticket, 0, 64));
    unsigned long long *hs;
    CK(cudaHostAlloc((void **)&hs, 4096, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void **)&g_p.slot, hs, 0));
    g_p.slot = hs; /* UVA: the same address */
    unsigned long long *tl_host = hs + 8;
    CK(cudaHostAlloc((void **)&g_p.hpart, 65536 * 8, cudaHostAllocMapped));
    g_p.xv = (const float4 *)x;
    unsigned long long *tl;
    CK(cudaMalloc((void **)&tl, (size_t)(4 * 65536 + 4) * 8));
    CK(cudaStreamSynchronize(g_st));
    printf("device SMs %d\n", g_sms);

    std::vector<variant> vs = {
        V(M_GRID, L_LDG, 8, 256, 4, "lib (grid,ldg,U8,256x4)"),
        V(M_GRID, L_LDG, 4, 256, 4, "grid,ldg,U4,256x4"),
        V(M_GRID, L_LDG, 16, 256, 2, "grid,ldg,U16,256x2"),
        V(M_GRID, L_LDG, 8, 512, 2, "grid,ldg,U8,512x2"),
        V(M_GRID, L_LDG, 8, 1024, 1, "grid,ldg,U8,1024x1"),
        V(M_GRID, L_LDG, 8, 128, 8, "grid,ldg,U8,128x8"),
        V(M_GRID, L_LDG, 4, 256, 8, "grid,ldg,U4,256x8"),
        V(M_TWO, L_LDG, 8, 256, 4, "two,ldg,U8,256x4"),
        V(M_TWO, L_LDG, 4, 256, 4, "two,ldg,U4,256x4"),
        V(M_BLOCK, L_LDG, 8, 256, 4, "block,ldg,U8,256x4"),
        V(M_BLOCK, L_LDG, 4, 256, 4, "block,ldg,U4,256x4"),
        V(M_GRID, L_NA256, 8, 256, 4, "grid,na256,U8,256x4"),
        V(M_GRID, L_EVF, 8, 256, 4, "grid,evict_first,U8,256x4"),
        V(M_GRID, L_NA, 8, 256, 4, "grid,noalloc,U8,256x4"),
        V(M_GRID, L_P128, 8, 256, 4, "grid,L2pf128,U8,256x4"),
        V(M_TWO, L_EVF, 8, 256, 4, "two,evict_first,U8,256x4"),
        variant{"lib, finish unrolled", (const void *)ksum<M_GRID, L_LDG, 8, 256, 4, 1>, 256, 4, 0, 0},
        variant{"lib, finish acq_rel", (const void *)ksum<M_GRID, L_LDG, 8, 256, 4, 2>, 256, 4, 0, 0},
        variant{"lib, host merges", (const void *)ksum<M_GRID, L_LDG, 8, 256, 4, 3>, 256, 4, 0, 1},
        variant{"block,U8,4 waves, host merges", (const void *)ksum<M_BLOCK, L_LDG, 8, 256, 4, 3>, 256, 16, 0, 1},
        VW(M_BLOCK, L_LDG, 8, 256, 4, 2, "block,ldg,U8,256x4,2 waves"),
        VW(M_BLOCK, L_LDG, 8, 256, 4, 4, "block,ldg,U8,256x4,4 waves"),
        VW(M_BLOCK, L_LDG, 8, 256, 4, 8, "block,ldg,U8,256x4,8 waves"),
        VW(M_BLOCK, L_LDG, 4, 256, 4, 8, "block,ldg,U4,256x4,8 waves"),
        VW(M_BLOCK, L_LDG, 8, 256, 4, 16, "block,ldg,U8,256x4,16 waves"),
        variant{"tma 8K x4, 256x4", (const void *)ksum_tma<8192, 4, 256>, 256, 4, 4 * 8192, 0},
        variant{"tma 16K x3, 256x4", (const void *)ksum_tma<16384, 3, 256>, 256, 4, 3 * 16384, 0},
        variant{"tma 32K x3, 512x2", (const void *)ksum_tma<32768, 3, 512>, 512, 2, 3 * 32768, 0},
        variant{"tma 8K x6, 256x4", (const void *)ksum_tma<8192, 6, 256>, 256, 4, 6 * 8192, 0},
    };
    for (auto &v : vs)
        if (v.smem > 0)
            CK(cudaFuncSetAttribute(v.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem));

    if (only && !strcmp(only, "once")) {
        /* each variant once at 1e8 (for ncu) */
        for (auto &v : vs) {
            *(volatile unsigned long long *)g_p.slot = EMPTY;
            launch(v, 100000000 / 4);
            wait_slot();
            CK(cudaStreamSynchronize(g_st));
        }
        printf("once done\n");
        return 0;
    }
    calibrate();
    g_p.tl_host = tl_host;
    cudaStream_t legacy = 0;
    struct {
        const char *name;
        cudaStream_t st;
        const void *fn;
        int blocks, threads;
    } streams[] = {{"non-blocking stream", g_st, (const void *)kempty, 1, 32},
                   {"legacy default stream", legacy, (const void *)kempty, 1, 32},
                   {"per-thread stream", cudaStreamPerThread, (const void *)kempty, 1, 32},
                   {"non-blocking stream, 528x256 grid", g_st, (const void *)kempty_grid, 4 * g_sms, 256}};
    for (auto &sv : streams) {
        std::vector<double> tot, api, pre, post;
        for (int k = 0; k < 200; k++) {
            *(volatile unsigned long long *)g_p.slot = EMPTY;
            long long h0 = now_ns();
            probe_args p = g_p;
            void *args[] = {&p};
            CK(cudaLaunchKernel(sv.fn, dim3(sv.blocks), dim3(sv.threads), args, 0, sv.st));
            long long h1 = now_ns();
            wait_slot();
            long long h3 = now_ns();
            double gs = (double)*(volatile unsigned long long *)g_p.tl_host - g_off;
            tot.push_back((h3 - h0) * 1e-3);
            api.push_back((h1 - h0) * 1e-3);
            pre.push_back((gs - h0) * 1e-3);
            post.push_back((h3 - gs) * 1e-3);
            if (k % 50 == 49)
                CK(cudaStreamSynchronize(sv.st));
        }
        CK(cudaStreamSynchronize(sv.st));
        printf("timeline empty kernel, %s: host call %.2f | launch API %.2f | host call -> kernel start %.2f | kernel start -> host sees %.2f (us, medians of 200)\n",
               sv.name, med(tot), med(api), med(pre), med(post));
    }
    fflush(stdout);
    g_p.tl = tl;
    auto find = [&](const char *name) -> const variant & {
        for (auto &v : vs)
            if (!strcmp(v.name, name))
                return v;
        fprintf(stderr, "no variant %s\n", name);
        exit(1);
    };
    const char *tl_names[] = {"lib (grid,ldg,U8,256x4)", "lib, finish unrolled", "lib, finish acq_rel",
                              "lib, host merges", "block,U8,4 waves, host merges", "two,ldg,U8,256x4", "block,ldg,U8,256x4",
                              "block,ldg,U8,256x4,8 waves", "tma 8K x4, 256x4"};
    timeline(vs[0], 100000000, 15, true);
    timeline(vs[0], 1000000, 15, true);
    for (const char *nm : tl_names)
        timeline(find(nm), 100000000, 5, true);
    g_p.tl = NULL;
    timeline(vs[0], 100000000, 15, false);
    g_p.tl_host = NULL;
    fflush(stdout);
    for (int pass = 0; pass < 3; pass++)
        for (auto &v : vs) {
            if (only && !strstr(v.name, only))
                continue;
            measure(v, 100000000, 10);
        }
    drv_roundtrip(vs[0], 100000000, 30);
    drv_roundtrip(vs[0], 10000, 200);
    for (const char *nm : tl_names)
        measure(find(nm), 250000000, 5);
    measure(find("grid,evict_first,U8,256x4"), 250000000, 5);
    for (const char *nm : tl_names) {
        measure(find(nm), 1000000, 30);
        measure(find(nm), 10000, 30);
    }
    CK(cudaDeviceSynchronize());
    printf("done\n");
    return 0;
}
