/* SPDX-License-Identifier: MIT */
/* cuda_rng.cu - uniform and normal Philox4x32-10 streams, element for element as src/philox.h. */
#include "cuda_internal.h"
#include "normal_f32.h"
#include "normal_f64.h"
#include "philox.h"

/* Every variant turns one Philox block (four 32-bit words) into exactly 16 bytes of output:
 * four float32 elements or two float64 elements. The arithmetic on the words is that of
 * src/philox.h (the same helpers where they exist), so uniform values are bit-identical to the
 * CPU backend. Normal values are evaluated in double as defined, except float32 with a finite
 * stddev: src/normal_f32.h's float32 arithmetic, within 2.8125 u |stddev z| + u |mean| of the
 * definition (u = 2^-24, proved there), in less than half the time; and
 * float64 with src/normal_f64.h's log, sqrt and sincos instead of CUDA's (its log table in
 * shared memory, loaded by each thread block). */
__device__ __forceinline__ void cuda_rng_uniform_block(float (&v)[4], const gk_philox_key &key,
                                                       uint64_t b)
{
    gk_philox_words w = gk__philox4x32_10_keyed(&key, b);
#pragma unroll
    for (int q = 0; q < 4; q++)
        v[q] = gk__u24_to_float(w.x[q]);
}

__device__ __forceinline__ void cuda_rng_uniform_block(double (&v)[2], const gk_philox_key &key,
                                                       uint64_t b)
{
    gk_philox_words w = gk__philox4x32_10_keyed(&key, b);
#pragma unroll
    for (int j = 0; j < 2; j++)
        v[j] = gk__u53_to_double(w.x[2 * j], w.x[2 * j + 1]);
}

/* Box-Muller for one (u1, u2) pair, both outputs at once: gk__box_muller's arithmetic, with
 * sincos sharing the argument reduction that separate sin and cos calls would repeat. Then
 * mean + stddev * z in double without contraction, rounded once to the dtype. */
__device__ __forceinline__ void cuda_rng_pair(double u1, double u2, double mean, double stddev,
                                              double &even, double &odd)
{
    double r = sqrt(-2.0 * log(u1));
    double theta = 6.283185307179586476925286766559 * u2;
    double s, c;
    sincos(theta, &s, &c);
    even = __dadd_rn(mean, __dmul_rn(stddev, r * c));
    odd = __dadd_rn(mean, __dmul_rn(stddev, r * s));
}

/* float32 normal: block e / 4, pair j = (e % 4) / 2 from words x_{2j}, x_{2j+1}. */
__device__ __forceinline__ void cuda_rng_normal_block(float (&v)[4], const gk_philox_key &key,
                                                      uint64_t b, double mean, double stddev)
{
    gk_philox_words w = gk__philox4x32_10_keyed(&key, b);
#pragma unroll
    for (int j = 0; j < 2; j++) {
        double u1 = ((double)(w.x[2 * j] >> 8) + 1.0) * 0x1p-24;
        double u2 = (double)(w.x[2 * j + 1] >> 8) * 0x1p-24;
        double z0, z1;
        cuda_rng_pair(u1, u2, mean, stddev, z0, z1);
        v[2 * j] = (float)z0;
        v[2 * j + 1] = (float)z1;
    }
}

/* The same elements in float32 arithmetic (normal_f32.h); mean and stddev are floats already. */
__device__ __forceinline__ void cuda_rng_normal_f32_block(float (&v)[4], const gk_philox_key &key,
                                                          uint64_t b, float mean, float stddev)
{
    gk_philox_words w = gk__philox4x32_10_keyed(&key, b);
    gk__normal_pair_f32(w.x[0], w.x[1], mean, stddev, &v[0], &v[1]);
    gk__normal_pair_f32(w.x[2], w.x[3], mean, stddev, &v[2], &v[3]);
}

/* float64 normal: block e / 2, by normal_f64.h's arithmetic (its log table at tab; mean +
 * stddev z as one fma where fused). */
__device__ __forceinline__ void cuda_rng_normal_f64_block(double (&v)[2], const gk_philox_key &key,
                                                          uint64_t b, double mean, double stddev,
                                                          const gk_log_entry *tab, int fused)
{
    gk_philox_words w = gk__philox4x32_10_keyed(&key, b);
    gk__normal_pair_f64(w.x, mean, stddev, tab, fused, &v[0], &v[1]);
}

static __device__ const gk_log_entry cuda_log_table[256] = {GK_LOG_TABLE};

/* CUDA_RNG_NORMAL_F64_WIDE: float64 normals whose stddev z can overflow (normal_f64.h, fused = 0).
 */
enum cuda_rng_kind {
    CUDA_RNG_UNIFORM,
    CUDA_RNG_NORMAL,
    CUDA_RNG_NORMAL_F32,
    CUDA_RNG_NORMAL_F64,
    CUDA_RNG_NORMAL_F64_WIDE
};
template <int KIND> struct cuda_rng_is_f64 {
    static constexpr bool value = KIND == CUDA_RNG_NORMAL_F64 || KIND == CUDA_RNG_NORMAL_F64_WIDE;
};

/* normal_f64.h's log table in shared memory, where the kind needs it: loaded by the whole block
 * before any value (every thread reaches the barrier). */
template <int KIND> struct cuda_rng_table {
    static constexpr int size = cuda_rng_is_f64<KIND>::value ? 256 : 1;
};

template <int KIND> __device__ __forceinline__ void cuda_rng_load_table(gk_log_entry *tab)
{
    if constexpr (cuda_rng_is_f64<KIND>::value) {
        for (int i = threadIdx.x; i < 256; i += blockDim.x)
            tab[i] = cuda_log_table[i];
        __syncthreads();
    }
}

/* The elements of Philox block b, by kind. */
template <typename T, int KIND>
__device__ __forceinline__ void
cuda_rng_values(T (&v)[gk_cuda_vec<T>::width], const gk_philox_key &key, uint64_t b, float meanf,
                float stddevf, double mean, double stddev, const gk_log_entry *tab)
{
    if constexpr (cuda_rng_is_f64<KIND>::value)
        cuda_rng_normal_f64_block(v, key, b, mean, stddev, tab, KIND == CUDA_RNG_NORMAL_F64);
    else if constexpr (KIND == CUDA_RNG_NORMAL_F32)
        cuda_rng_normal_f32_block(v, key, b, meanf, stddevf);
    else if constexpr (KIND == CUDA_RNG_NORMAL)
        cuda_rng_normal_block(v, key, b, mean, stddev);
    else
        cuda_rng_uniform_block(v, key, b);
}

/* General form: thread t computes Philox blocks b0 + t, b0 + t + stride, ... covering elements
 * [offset, offset + n) and writes the elements of each that fall in the range, so a value
 * depends only on (seed, element index), never on the launch shape or on how a range is split
 * into calls. Used where x minus offset elements is not 16-byte aligned (a view at an odd
 * position), so that whole blocks cannot go out as one vector store. */
template <typename T, int KIND>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_rng(size_t n, gk_philox_key key, uint64_t offset, double mean, double stddev, T *x)
{
    const int EPB = gk_cuda_vec<T>::width;
    __shared__ gk_log_entry tab[cuda_rng_table<KIND>::size];
    cuda_rng_load_table<KIND>(tab);
    const uint64_t b0 = offset / EPB;
    const uint64_t nblocks = (offset + n - 1) / EPB - b0 + 1;
    for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t < nblocks;
         t += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t b = b0 + t, e0 = b * EPB;
        T v[EPB];
        cuda_rng_values<T, KIND>(v, key, b, (float)mean, (float)stddev, mean, stddev, tab);
#pragma unroll
        for (int q = 0; q < EPB; q++) {
            uint64_t e = e0 + q;
            if (e >= offset && e - offset < n)
                x[e - offset] = v[q];
        }
    }
}

/* One launch of the aligned form: whole Philox blocks (b_hi, b_lo + i) for i in [0, count),
 * block i going to whole[i] as one 16-byte store, with b_lo + count <= 2^32 and count < 2^31
 * so that the loop runs on 32-bit counters and the counter's high word is the same for the
 * whole launch; and at most two partial blocks (the range's first and last): elements
 * [head_i0, head_i0 + head_len) of head_block to head[0, head_len), written by thread 0, and
 * [0, tail_len) of tail_block to tail[0, tail_len), by thread 1. */
template <typename T> struct cuda_rng_span {
    gk_philox_key key;
    uint32_t b_lo, b_hi, count;
    typename gk_cuda_vec<T>::type *whole;
    T *head, *tail;
    uint64_t head_block, tail_block;
    uint32_t head_i0, head_len, tail_len;
    float meanf, stddevf;
    double mean, stddev;
};

/* How a kind's aligned kernel runs: Philox blocks per loop iteration (two independent ones give
 * the scheduler more to choose from) and the resident thread blocks per SM that its register
 * budget must allow (1: no bound). Float32 normals: two blocks at 32 registers (full occupancy),
 * 3 % faster than one block; float64 normals: two blocks, no bound (75 registers, 3 thread
 * blocks per SM), up to 6 % faster than one block at 32 registers. */
template <int KIND> struct cuda_rng_shape {
    static constexpr bool f64 = cuda_rng_is_f64<KIND>::value;
    static constexpr int per_iteration = KIND == CUDA_RNG_NORMAL_F32 || f64 ? 2 : 1;
    static constexpr int min_blocks = KIND == CUDA_RNG_NORMAL_F32 ? 2048 / GK_CUDA_THREADS : 1;
};

/* Thread t makes whole blocks t, t + stride, ...: the per-block work is Philox, the values and
 * one store, with no bounds or alignment tests (rng_normal is limited by instruction issue). */
template <typename T, int KIND>
__global__ void __launch_bounds__(GK_CUDA_THREADS, (cuda_rng_shape<KIND>::min_blocks))
    cuda_rng_aligned(cuda_rng_span<T> a)
{
    typedef gk_cuda_vec<T> V;
    __shared__ gk_log_entry tab[cuda_rng_table<KIND>::size];
    cuda_rng_load_table<KIND>(tab);
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    const uint64_t hi = (uint64_t)a.b_hi << 32;
    uint32_t i = t;
    if constexpr (cuda_rng_shape<KIND>::per_iteration == 2) {
        for (; i + stride < a.count; i += 2 * stride) {
            T v[V::width], w[V::width];
            cuda_rng_values<T, KIND>(v, a.key, hi | (a.b_lo + i), a.meanf, a.stddevf, a.mean,
                                     a.stddev, tab);
            cuda_rng_values<T, KIND>(w, a.key, hi | (a.b_lo + i + stride), a.meanf, a.stddevf,
                                     a.mean, a.stddev, tab);
            a.whole[i] = V::pack(v);
            a.whole[i + stride] = V::pack(w);
        }
    }
    for (; i < a.count; i += stride) {
        T v[V::width];
        cuda_rng_values<T, KIND>(v, a.key, hi | (a.b_lo + i), a.meanf, a.stddevf, a.mean, a.stddev,
                                 tab);
        a.whole[i] = V::pack(v);
    }
    const uint32_t len = t == 0 ? a.head_len : t == 1 ? a.tail_len : 0;
    if (len != 0) {
        const uint32_t i0 = t == 0 ? a.head_i0 : 0;
        T v[V::width], *p = t == 0 ? a.head : a.tail;
        cuda_rng_values<T, KIND>(v, a.key, t == 0 ? a.head_block : a.tail_block, a.meanf, a.stddevf,
                                 a.mean, a.stddev, tab);
#pragma unroll
        for (uint32_t q = 0; q < (uint32_t)V::width; q++)
            if (q >= i0 && q - i0 < len)
                p[q - i0] = v[q];
    }
}

/* Splits [offset, offset + n) into a partial first block, whole blocks and a partial last block;
 * the whole blocks go in launches of at most 2^31 blocks that do not cross a multiple of 2^32
 * (one launch below 2^33 elements), the first launch taking the first partial block, the last
 * the last one. */
template <typename T, int KIND>
static gk_status cuda_rng_run(gk_cuda_state *s, size_t n, uint64_t seed, uint64_t offset,
                              double mean, double stddev, T *x)
{
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    const char *name = KIND == CUDA_RNG_UNIFORM ? "cuda_rng<uniform>" : "cuda_rng<normal>";
    const uint64_t epb = gk_cuda_vec<T>::width;
    const uint32_t head_i0 = (uint32_t)(offset % epb);
    const uint64_t head = head_i0 == 0 ? 0 : (n < epb - head_i0 ? n : epb - head_i0);
    /* Whole blocks land on 16-byte boundaries iff x + head is 16-byte aligned. */
    if ((uintptr_t)(x + head) % 16 != 0) {
        uint64_t nblocks = (offset + n - 1) / epb - offset / epb + 1;
        unsigned int blocks = gk__cuda_blocks(nblocks, GK_CUDA_THREADS, (size_t)s->sm_count * 32);
        cuda_rng<T, KIND><<<blocks, GK_CUDA_THREADS, 0, s->stream>>>(n, gk__philox_key(seed),
                                                                     offset, mean, stddev, x);
        return gk__cuda_launched(name);
    }
    uint64_t b = (offset + head) / epb, left = (n - head) / epb;
    const uint32_t tail = (uint32_t)((n - head) % epb);
    cuda_rng_span<T> a;
    a.key = gk__philox_key(seed);
    a.meanf = (float)mean;
    a.stddevf = (float)stddev;
    a.mean = mean;
    a.stddev = stddev;
    a.whole = (typename gk_cuda_vec<T>::type *)(x + head);
    a.head = x;
    a.head_block = offset / epb;
    a.head_i0 = head_i0;
    a.head_len = (uint32_t)head;
    do {
        uint64_t room = ((uint64_t)1 << 32) - (b & 0xffffffffu), cap = (uint64_t)1 << 31;
        uint64_t count = left < room ? left : room;
        count = count < cap ? count : cap;
        a.b_lo = (uint32_t)b;
        a.b_hi = (uint32_t)(b >> 32);
        a.count = (uint32_t)count;
        left -= count;
        b += count;
        a.tail = x + (n - tail);
        a.tail_block = b;
        a.tail_len = left == 0 ? tail : 0;
        unsigned int blocks = gk__cuda_blocks(count, GK_CUDA_THREADS, (size_t)s->sm_count * 32);
        cuda_rng_aligned<T, KIND><<<blocks, GK_CUDA_THREADS, 0, s->stream>>>(a);
        r = gk__cuda_launched(name);
        if (r != GK_OK)
            return r;
        a.whole += count;
        a.head_len = 0;
    } while (left != 0);
    return GK_OK;
}

gk_status gk__cuda_rng_uniform(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                               void *x)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    if (t == GK_FLOAT32)
        return cuda_rng_run<float, CUDA_RNG_UNIFORM>(s, n, seed, offset, 0.0, 0.0, (float *)x);
    if (t == GK_FLOAT64)
        return cuda_rng_run<double, CUDA_RNG_UNIFORM>(s, n, seed, offset, 0.0, 0.0, (double *)x);
    return gk__cuda_bad_dtype(t);
}

gk_status gk__cuda_rng_normal(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                              double mean, double stddev, void *x)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    /* normal_f32.h's fmas never overflow before their last rounding and carry an infinite or
     * NaN mean through as the definition does; an infinite stddev times a zero low part would
     * give NaN where the definition gives inf, so that case keeps the double evaluation. */
    if (t == GK_FLOAT32 && isfinite(stddev))
        return cuda_rng_run<float, CUDA_RNG_NORMAL_F32>(s, n, seed, offset, mean, stddev,
                                                        (float *)x);
    if (t == GK_FLOAT32)
        return cuda_rng_run<float, CUDA_RNG_NORMAL>(s, n, seed, offset, mean, stddev, (float *)x);
    if (t == GK_FLOAT64)
        return fabs(stddev) > 0x1p1020
                   ? cuda_rng_run<double, CUDA_RNG_NORMAL_F64_WIDE>(s, n, seed, offset, mean,
                                                                    stddev, (double *)x)
                   : cuda_rng_run<double, CUDA_RNG_NORMAL_F64>(s, n, seed, offset, mean, stddev,
                                                               (double *)x);
    return gk__cuda_bad_dtype(t);
}
