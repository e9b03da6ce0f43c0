/* SPDX-License-Identifier: MIT */
/* cuda_reduce.cu - sum, dot and nrm2 as one-pass, deterministic reductions with a host result:
 * every block leaves its partial in mapped host memory, the host merges them in block order. */
#include "backend_math.h"
#include "cuda_internal.h"

#include <string.h>
#include <time.h>

/* An accumulator is K doubles, so one warp-shuffle and shared-memory tree serves every
 * reduction; each reducer says how two accumulators merge. */
template <int K> struct cuda_acc {
    double v[K];
};

/* TwoSum on either side: the device's _rn intrinsics, the host's plain IEEE doubles (no
 * -ffast-math in this module, so the host compiler keeps the error term). */
__host__ __device__ __forceinline__ void cuda_two_sum_hd(double a, double b, double &s, double &e)
{
#ifdef __CUDA_ARCH__
    cuda_two_sum(a, b, s, e);
#else
    s = a + b;
    double bp = s - a;
    e = (a - (s - bp)) + (b - bp);
#endif
}

__host__ __device__ __forceinline__ double cuda_comp_value_hd(double s, double c)
{
    return isfinite(s) ? s + c : s;
}

/* (s, c) += x, compensated: the accumulated error stays near 2 ulp of the sum however many
 * terms one thread adds, which the float64 contract (1e-13 of sum |terms|) needs for long
 * inputs. */
__device__ __forceinline__ void cuda_comp_add(double &s, double &c, double x)
{
    double e;
    cuda_two_sum(s, x, s, e);
    c += e;
}

/* float32 data: every term is exact in double (a float's square or product has at most 48
 * significant bits), so a plain double sum is far inside the 1e-6 contract. */
struct cuda_sum_f32 {
    typedef float T;
    enum { K = 1, ACC = 8 };
    static __device__ void add(cuda_acc<1> &a, float x, float)
    {
        a.v[0] += (double)x;
    }
    static __host__ __device__ void merge(cuda_acc<1> &a, const cuda_acc<1> &b)
    {
        a.v[0] += b.v[0];
    }
    static __host__ __device__ double finish(const cuda_acc<1> &a)
    {
        return a.v[0];
    }
};
struct cuda_dot_f32 {
    typedef float T;
    enum { K = 1, ACC = 4 };
    static __device__ void add(cuda_acc<1> &a, float x, float y)
    {
        a.v[0] = fma((double)x, (double)y, a.v[0]);
    }
    static __host__ __device__ void merge(cuda_acc<1> &a, const cuda_acc<1> &b)
    {
        a.v[0] += b.v[0];
    }
    static __host__ __device__ double finish(const cuda_acc<1> &a)
    {
        return a.v[0];
    }
};
/* A float32 square is at most 1.2e77 and at least 2e-90 in double: no scaling needed. */
struct cuda_nrm2_f32 {
    typedef float T;
    enum { K = 1, ACC = 8 };
    static __device__ void add(cuda_acc<1> &a, float x, float)
    {
        a.v[0] = fma((double)x, (double)x, a.v[0]);
    }
    static __host__ __device__ void merge(cuda_acc<1> &a, const cuda_acc<1> &b)
    {
        a.v[0] += b.v[0];
    }
    static __host__ __device__ double finish(const cuda_acc<1> &a)
    {
        return sqrt(a.v[0]);
    }
};

/* float64: compensated (sum, correction) pairs. */
__host__ __device__ __forceinline__ void cuda_comp_merge(cuda_acc<2> &a, const cuda_acc<2> &b)
{
    double e;
    cuda_two_sum_hd(a.v[0], b.v[0], a.v[0], e);
    a.v[1] += b.v[1] + e;
}
struct cuda_sum_f64 {
    typedef double T;
    enum { K = 2, ACC = 2 };
    static __device__ void add(cuda_acc<2> &a, double x, double)
    {
        cuda_comp_add(a.v[0], a.v[1], x);
    }
    static __host__ __device__ void merge(cuda_acc<2> &a, const cuda_acc<2> &b)
    {
        cuda_comp_merge(a, b);
    }
    static __host__ __device__ double finish(const cuda_acc<2> &a)
    {
        return cuda_comp_value_hd(a.v[0], a.v[1]);
    }
};
struct cuda_dot_f64 {
    typedef double T;
    enum { K = 2, ACC = 2 };
    static __device__ void add(cuda_acc<2> &a, double x, double y)
    {
        /* TwoProduct: p + e == x * y exactly (Ogita, Rump, Oishi's Dot2). */
        double p = __dmul_rn(x, y);
        double e = fma(x, y, -p);
        cuda_comp_add(a.v[0], a.v[1], p);
        a.v[1] += e;
    }
    static __host__ __device__ void merge(cuda_acc<2> &a, const cuda_acc<2> &b)
    {
        cuda_comp_merge(a, b);
    }
    static __host__ __device__ double finish(const cuda_acc<2> &a)
    {
        return cuda_comp_value_hd(a.v[0], a.v[1]);
    }
};

/* float64 nrm2 by Blue's algorithm (src/backend_math.h): three sums for tiny, medium and huge
 * magnitudes, each scaled by a fixed power of two so no square overflows or underflows. Fixed
 * scales make the sums associative across threads, so one pass suffices. The medium sum, where
 * nearly all data lands, is compensated. v = {small, med, med_c, big}. */
struct cuda_nrm2_f64 {
    typedef double T;
    enum { K = 4, ACC = 1 };
    static __device__ void add(cuda_acc<4> &a, double x, double)
    {
        double ax = fabs(x);
        if (ax > GK_NRM2_TBIG) {
            double t = ax * GK_NRM2_SBIG;
            a.v[3] = fma(t, t, a.v[3]);
        } else if (ax < GK_NRM2_TSML) {
            double t = ax * GK_NRM2_SSML;
            a.v[0] = fma(t, t, a.v[0]);
        } else {
            /* NaN lands here too and propagates through the medium sum. */
            double p = __dmul_rn(ax, ax);
            double e = fma(ax, ax, -p);
            cuda_comp_add(a.v[1], a.v[2], p);
            a.v[2] += e;
        }
    }
    static __host__ __device__ void merge(cuda_acc<4> &a, const cuda_acc<4> &b)
    {
        double e;
        a.v[0] += b.v[0];
        cuda_two_sum_hd(a.v[1], b.v[1], a.v[1], e);
        a.v[2] += b.v[2] + e;
        a.v[3] += b.v[3];
    }
    static __host__ __device__ double finish(const cuda_acc<4> &a)
    {
        return gk__nrm2_join(a.v[0], cuda_comp_value_hd(a.v[1], a.v[2]), a.v[3]);
    }
};

/* Vectors per thread and round, all loaded before the first use: 8 for one input, 4 for two,
 * so every thread keeps 128 bytes of loads in flight. */
#define GK_CUDA_REDUCE_UNROLL(nin) ((nin) >= 2 ? 4 : 8)
/* Blocks resident per multiprocessor (the register budget says at most 64 per thread): the
 * grid is one wave of them, so no block waits for another to leave. */
#define GK_CUDA_REDUCE_BLOCKS_PER_SM 4

/* Block-wide merge in a fixed order (shuffle tree, then warp 0 over the warp totals), so the
 * result depends only on the data and the launch shape; thread 0 gets the total. */
template <typename R> __device__ cuda_acc<R::K> cuda_block_merge(cuda_acc<R::K> a)
{
    __shared__ cuda_acc<R::K> warp_total[GK_CUDA_THREADS / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        cuda_acc<R::K> o;
#pragma unroll
        for (int q = 0; q < R::K; q++)
            o.v[q] = __shfl_down_sync(0xffffffffu, a.v[q], off);
        R::merge(a, o);
    }
    if (lane == 0)
        warp_total[warp] = a;
    __syncthreads();
    if (warp == 0) {
        const int nwarps = GK_CUDA_THREADS / 32;
        a = warp_total[lane < nwarps ? lane : 0];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            cuda_acc<R::K> o;
#pragma unroll
            for (int q = 0; q < R::K; q++)
                o.v[q] = __shfl_down_sync(0xffffffffu, a.v[q], off);
            if (lane + off < nwarps)
                R::merge(a, o);
        }
    }
    return a;
}

/* Each block's part: its merged partial, K doubles, stored by thread 0 straight into the host's
 * partials (mapped host memory) over the sentinels the host left there, one 8-byte store per
 * double (the host sees the old bits or the new ones, never a mix). No block waits for another:
 * the host merges (cuda_reduce_merge), which keeps a ticket, fences and a last block's loads of
 * the partials off the end of the kernel. */
template <typename R>
__device__ __forceinline__ void cuda_reduce_finish(cuda_acc<R::K> a,
                                                   unsigned long long *host_partials)
{
    a = cuda_block_merge<R>(a);
    if (threadIdx.x == 0) {
        volatile unsigned long long *hp = host_partials + (size_t)blockIdx.x * R::K;
#pragma unroll
        for (int q = 0; q < R::K; q++)
            hp[q] = __double_as_longlong(a.v[q]);
    }
}

/* U vectors of each input per thread, loaded together, then added into R::ACC independent
 * accumulators, so neither the loads nor the additions wait on one dependent chain. */
template <typename R, int NIN, int U>
__device__ __forceinline__ void
cuda_reduce_batch(cuda_acc<R::K> (&a)[R::ACC], const typename gk_cuda_vec<typename R::T>::type *xv,
                  const typename gk_cuda_vec<typename R::T>::type *yv, size_t i, size_t stride,
                  size_t nvec, bool check)
{
    typedef typename R::T T;
    typedef gk_cuda_vec<T> V;
    const int W = V::width;
    T xs[U][W], ys[U][W];
#pragma unroll
    for (int u = 0; u < U; u++) {
        size_t k = i + (size_t)u * stride;
        /* A missing vector reads as zeros, which add nothing to any of the sums. */
        typename V::type vx = {}, vy = {};
        if (!check || k < nvec) {
            vx = __ldg(xv + k);
            if (NIN >= 2)
                vy = __ldg(yv + k);
        }
        V::unpack(vx, xs[u]);
        V::unpack(vy, ys[u]);
    }
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int w = 0; w < W; w++)
            R::add(a[u % R::ACC], xs[u][w], NIN >= 2 ? ys[u][w] : T(0));
}

/* One pass over n elements: a scalar head and tail (misaligned ends), then 16-byte vectors,
 * vector k to thread k mod (grid threads), so every thread's share differs by at most one
 * vector. A thread takes U of them a round while U remain, then the last few at once. The
 * grid is one wave (GK_CUDA_REDUCE_BLOCKS_PER_SM per multiprocessor), so no block waits for
 * another to leave before it starts. */
template <typename R, int NIN, int U>
__global__ void __launch_bounds__(GK_CUDA_THREADS, GK_CUDA_REDUCE_BLOCKS_PER_SM)
    cuda_reduce(size_t n, size_t head, size_t nvec, const typename R::T *x, const typename R::T *y,
                unsigned long long *host_partials)
{
    typedef typename R::T T;
    typedef gk_cuda_vec<T> V;
    const int W = V::width;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;

    cuda_acc<R::K> a[R::ACC];
#pragma unroll
    for (int c = 0; c < R::ACC; c++)
#pragma unroll
        for (int q = 0; q < R::K; q++)
            a[c].v[q] = 0.0;

    const size_t body_end = head + nvec * W;
    const size_t nscalar = head + (n - body_end);
    for (size_t s = tid; s < nscalar; s += nthreads) {
        size_t i = s < head ? s : body_end + (s - head);
        R::add(a[0], x[i], NIN >= 2 ? y[i] : T(0));
    }

    const typename V::type *xv = (const typename V::type *)(x + head);
    const typename V::type *yv = NIN >= 2 ? (const typename V::type *)(y + head) : NULL;
    const size_t round = nthreads * U;
    size_t i = tid;
    /* Below `full`, all U vectors of a round exist: no bounds checks in the main loop. */
    const size_t full = nvec >= round ? nvec - (round - nthreads) : 0;
    for (; i < full; i += round)
        cuda_reduce_batch<R, NIN, U>(a, xv, yv, i, nthreads, nvec, false);
    if (i < nvec)
        cuda_reduce_batch<R, NIN, U>(a, xv, yv, i, nthreads, nvec, true);

#pragma unroll
    for (int c = 1; c < R::ACC; c++)
        R::merge(a[0], a[c]);
    cuda_reduce_finish<R>(a[0], host_partials);
}

/* What the host leaves in each partial's doubles before a launch: a signalling NaN, which no
 * arithmetic produces (a NaN partial is quiet), so other bits mean the partial has arrived.
 * Even a partial with these bits is read correctly, only later (see the wait). */
#define GK_CUDA_SLOT_EMPTY 0x7ff4dead5eed0001ULL

/* While the host waits for the partials it asks the stream every GK_CUDA_SLOT_QUERY_NS
 * whether the work failed; past GK_CUDA_SLOT_SPIN_NS it stops spinning. */
#define GK_CUDA_SLOT_QUERY_NS 20000LL
#define GK_CUDA_SLOT_SPIN_NS 20000000LL

static long long cuda_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Waits for every block's partial, in block order, merging partial b into accumulator b mod 8
 * as it arrives (8 independent chains keep the host's additions off the critical path), then
 * the 8 in order: a fixed order, so the bits repeat. Each block stores its partial before it
 * retires, so spinning on the partials saves the wait for the kernel's end to be signalled;
 * the stream is asked only now and then: a fault (some partial never arrives) ends the wait
 * with the stream's error within GK_CUDA_SLOT_QUERY_NS, and so does a finished stream, after
 * which every partial is in place whatever its bits. A wait longer than GK_CUDA_SLOT_SPIN_NS
 * is the queued work's, not the signal's: cudaStreamSynchronize takes over, with the
 * runtime's own spin-or-yield policy. */
template <typename R>
static gk_status cuda_reduce_merge(gk_cuda_state *s, unsigned int blocks, double *out)
{
    volatile unsigned long long *hp = s->host_partials;
    cuda_acc<R::K> acc[8];
    for (int c = 0; c < 8; c++)
        for (int q = 0; q < R::K; q++)
            acc[c].v[q] = 0.0;
    const long long start = cuda_now_ns();
    long long asked = start;
    int finished = 0;
    for (unsigned int b = 0; b < blocks; b++) {
        cuda_acc<R::K> p;
        for (int q = 0; q < R::K; q++) {
            unsigned long long bits;
            for (;;) {
                int spins = 0;
                while ((bits = __atomic_load_n(&hp[(size_t)b * R::K + q], __ATOMIC_ACQUIRE)) ==
                           GK_CUDA_SLOT_EMPTY &&
                       !finished && ++spins < 64)
                    ;
                if (bits != GK_CUDA_SLOT_EMPTY || finished)
                    break;
                long long now = cuda_now_ns();
                if (now - asked < GK_CUDA_SLOT_QUERY_NS)
                    continue;
                asked = now;
                const char *what = "cudaStreamQuery";
                cudaError_t e = cudaStreamQuery(s->stream);
                if (e == cudaErrorNotReady && now - start > GK_CUDA_SLOT_SPIN_NS) {
                    what = "cudaStreamSynchronize";
                    e = cudaStreamSynchronize(s->stream);
                }
                if (e != cudaErrorNotReady) {
                    gk_status r = gk__cuda_check(e, what);
                    if (r != GK_OK)
                        return r;
                    /* The stream is done, so the kernel's stores to host memory are visible. */
                    finished = 1;
                }
            }
            memcpy(&p.v[q], &bits, sizeof bits);
        }
        R::merge(acc[b & 7], p);
    }
    for (int c = 1; c < 8; c++)
        R::merge(acc[0], acc[c]);
    *out = R::finish(acc[0]);
    return GK_OK;
}

template <typename R, int NIN>
static gk_status cuda_reduce_run(gk_cuda_state *s, size_t n, const typename R::T *x,
                                 const typename R::T *y, double *result)
{
    typedef typename R::T T;
    static_assert(R::K <= GK_CUDA_PARTIAL_DOUBLES, "the host holds too few doubles per partial");
    const int U = GK_CUDA_REDUCE_UNROLL(NIN);
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    gk_cuda_split sp = gk__cuda_split(n, sizeof(T), x, NIN >= 2 ? y : NULL, NULL);
    size_t work = sp.nvec > 0 ? sp.nvec : n;
    size_t per_block = sp.nvec > 0 ? (size_t)GK_CUDA_THREADS * U : GK_CUDA_THREADS;
    size_t cap = (size_t)s->sm_count * GK_CUDA_REDUCE_BLOCKS_PER_SM;
    if (cap > GK_CUDA_MAX_PARTIALS)
        cap = GK_CUDA_MAX_PARTIALS;
    unsigned int blocks = gk__cuda_blocks(work, per_block, cap);
    /* Before the launch, whose doorbell write the driver fences, so these stores land first. */
    for (size_t i = 0; i < (size_t)blocks * R::K; i++)
        s->host_partials[i] = GK_CUDA_SLOT_EMPTY;
    /* Through the context's graphs: the host waits for this kernel (cuda_launch_graph.h). */
    size_t head = sp.head, nvec = sp.nvec;
    unsigned long long *partials = s->host_partials_dev;
    void *args[] = {&n, &head, &nvec, (void *)&x, (void *)&y, &partials};
    /* All 8-byte fields: no padding bytes to compare. */
    struct {
        size_t n, head, nvec;
        const void *x, *y;
        size_t blocks;
    } fields = {n, head, nvec, x, y, blocks};
    unsigned char key[GK_CUDA_LAUNCH_KEY_BYTES] = {0};
    static_assert(sizeof fields <= sizeof key, "the launch key holds the arguments");
    memcpy(key, &fields, sizeof fields);
    r = gk__cuda_check(gk__cuda_graph_launch(&s->graphs, s->stream,
                                             (const void *)cuda_reduce<R, NIN, U>, blocks,
                                             GK_CUDA_THREADS, args, key),
                       "launch of cuda_reduce");
    if (r != GK_OK)
        return r;
    return cuda_reduce_merge<R>(s, blocks, result);
}

template <typename R32, typename R64, int NIN>
static gk_status cuda_reduce_dispatch(void *st, gk_dtype t, size_t n, const void *x, const void *y,
                                      double *result)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    if (t == GK_FLOAT32)
        return cuda_reduce_run<R32, NIN>(s, n, (const float *)x, (const float *)y, result);
    if (t == GK_FLOAT64)
        return cuda_reduce_run<R64, NIN>(s, n, (const double *)x, (const double *)y, result);
    return gk__cuda_bad_dtype(t);
}

gk_status gk__cuda_sum(void *st, gk_dtype t, size_t n, const void *x, double *result)
{
    return cuda_reduce_dispatch<cuda_sum_f32, cuda_sum_f64, 1>(st, t, n, x, NULL, result);
}

gk_status gk__cuda_dot(void *st, gk_dtype t, size_t n, const void *x, const void *y, double *result)
{
    return cuda_reduce_dispatch<cuda_dot_f32, cuda_dot_f64, 2>(st, t, n, x, y, result);
}

gk_status gk__cuda_nrm2(void *st, gk_dtype t, size_t n, const void *x, double *result)
{
    return cuda_reduce_dispatch<cuda_nrm2_f32, cuda_nrm2_f64, 1>(st, t, n, x, NULL, result);
}
