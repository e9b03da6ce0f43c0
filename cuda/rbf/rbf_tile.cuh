/* SPDX-License-Identifier: MIT */
/* rbf_tile.cuh - the register-tiled distance block of rbf_matrix and rbf_matvec, and the
 * double-buffered loop that stages its operands. */
#ifndef GK_CUDA_RBF_TILE_CUH
#define GK_CUDA_RBF_TILE_CUH

#include "backend_math.h"
#include "cuda_internal.h"

/* exp2 on the special-function unit: about 2 ulp relative, and exactly 1 for +-0 (PTX ISA).
 * The rbf contract is absolute (1e-5 per float32 entry, which this meets by over an order of
 * magnitude), and for rbf_matvec the exponential is the throughput limit, so the float32
 * kernels use it rather than the longer precise expf. Results below 2^-126 flush to 0. */
__device__ __forceinline__ float cuda_ex2(float a)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}

/* The kernel value from a squared distance, under the exponent rule of src/backend_math.h. c is
 * -gamma * log2(e) for float32 (folding the base change into one constant) and -gamma for
 * float64. Identical rows give exactly 1, also where dist * c would be 0 * inf = NaN; NaN
 * distances stay NaN. Callers set CHECK where gk__rbf_needs_zero_test(c) says so: otherwise
 * 0 * c is +-0, and ex2(+-0) and exp(+-0) are exactly 1. */
template <bool CHECK = true> __device__ __forceinline__ float cuda_rbf_value(float dist, float c)
{
    return CHECK && dist == 0.0f ? 1.0f : cuda_ex2(dist * c);
}
template <bool CHECK = true> __device__ __forceinline__ double cuda_rbf_value(double dist, double c)
{
    return CHECK && dist == 0.0 ? 1.0 : exp(dist * c);
}

/* The host side of that constant. */
static inline float cuda_rbf_constant(double gamma, float)
{
    return (float)(-gamma * 1.4426950408889634074);
}
static inline double cuda_rbf_constant(double gamma, double)
{
    return -gamma;
}

/* Asynchronous global-to-shared copy of one element (sm_80+): the data never occupies
 * registers, which the tile's accumulators need. valid = false copies nothing and fills the
 * element with zeros; src must still be a mapped address. */
template <typename T>
__device__ __forceinline__ void cuda_cp_async(T *dst, const T *src, bool valid)
{
    unsigned int d = (unsigned int)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d),
                 "l"(__cvta_generic_to_global(src)), "n"((int)sizeof(T)),
                 "r"(valid ? (unsigned int)sizeof(T) : 0u)
                 : "memory");
}
/* The same with the byte count in a register: sizeof(T) copies the element, 0 fills it with
 * zeros (src must still be a mapped address). */
template <typename T>
__device__ __forceinline__ void cuda_cp_async_bytes(T *dst, const T *src, unsigned int bytes)
{
    unsigned int a = (unsigned int)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(a),
                 "l"(__cvta_generic_to_global(src)), "n"((int)sizeof(T)), "r"(bytes)
                 : "memory");
}

/* Closes the group of copies issued so far. */
__device__ __forceinline__ void cuda_cp_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
/* Waits for all of this thread's copies; a barrier must follow before others read them. */
__device__ __forceinline__ void cuda_cp_wait_all()
{
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

/* The tiled kernels' thread layout: a block is GK_RBF_SIDE x GK_RBF_SIDE threads, thread
 * (ty, tx) = (threadIdx.x / GK_RBF_SIDE, threadIdx.x % GK_RBF_SIDE). */
#define GK_RBF_SIDE 16
static_assert(GK_RBF_SIDE * GK_RBF_SIDE == GK_CUDA_THREADS, "the tile's threads are the block");

/* Tile shapes, per thread TM x TN: float32 8 x 8 (128 x 128 tiles), float64 4 x 4 (64 x 64),
 * which keeps the float64 accumulators and operands within the register file at two blocks per
 * SM. */
/* ||x - y||^2 of one float32 pair from differences of the raw rows, in the order the tiles sum
 * them: the inner-product forms' fallback for the entries their bounds cannot resolve
 * (identical rows among them, which must give exactly 1). Out of line: a tile's registers need
 * not survive it. */
static __device__ __noinline__ float cuda_rbf_exact_distance(const float *__restrict__ x,
                                                             const float *__restrict__ y, size_t d)
{
    float s = 0.0f;
    for (size_t l = 0; l < d; l++) {
        float t = x[l] - y[l];
        s = fmaf(t, t, s);
    }
    return s;
}

template <typename T> struct cuda_rbf_shape;
template <> struct cuda_rbf_shape<float> {
    enum { TM = 8, TN = 8, BM = GK_RBF_SIDE * TM, BN = GK_RBF_SIDE * TN };
};
template <> struct cuda_rbf_shape<double> {
    enum { TM = 4, TN = 4, BM = GK_RBF_SIDE * TM, BN = GK_RBF_SIDE * TN };
};

/* Feature chunk: 4 for d <= 4 (low-dimensional data such as points in space would otherwise
 * stage mostly zeros), else 16. */
#define GK_RBF_SMALL_BK 4
#define GK_RBF_BK 16

/* A block computes a BM x BN tile of squared distances ||x_i - y_j||^2 directly from
 * differences (accumulate: ||x||^2 + ||y||^2 - 2 x.y would cancel on data far from the origin),
 * or of inner products x_i.y_j (accumulate_dot, for rbf_matrix's centered form, which bounds
 * that cancellation), TM x TN per thread in registers. x and y rows are staged through shared
 * memory in chunks of BK features, transposed (feature-major) so each thread reads its TM
 * x-values and TN y-values as 16-byte vectors; two buffers let the next chunk be copied in
 * (cp.async) while the current one is used, with one barrier per chunk (cuda_rbf_steps).
 * Thread (ty, tx) owns rows {g*SIDE*W + ty*W + v} and columns {g*SIDE*W + tx*W + v}, so a
 * warp's output stores cover SIDE consecutive vectors of a row. */
template <typename T, int TM, int TN, int BK> struct cuda_rbf_tile {
    typedef gk_cuda_vec<T> V;
    enum {
        W = V::width,
        BM = GK_RBF_SIDE * TM,
        BN = GK_RBF_SIDE * TN,
        /* One vector of padding per row keeps rows 16-byte aligned and spreads the transposed
         * stores over more banks. */
        XLD = BM + W,
        YLD = BN + W,
        XPER = BM * BK / GK_CUDA_THREADS,
        YPER = BN * BK / GK_CUDA_THREADS
    };
    static_assert(GK_CUDA_THREADS % BK == 0, "a thread copies one feature of several rows");
    static_assert(TM % W == 0 && TN % W == 0, "a thread's rows and columns come in vectors");
    static_assert(XPER * GK_CUDA_THREADS == BM * BK && YPER * GK_CUDA_THREADS == BN * BK,
                  "every thread stages the same number of elements");

    struct smem {
        __align__(16) T xs[2][BK][XLD];
        __align__(16) T ys[2][BK][YLD];
    };

    static __device__ __forceinline__ int tx()
    {
        return (int)threadIdx.x % GK_RBF_SIDE;
    }
    static __device__ __forceinline__ int ty()
    {
        return (int)threadIdx.x / GK_RBF_SIDE;
    }

    /* The tile row (or column) of a thread's i-th row (column); t is its ty (tx). */
    static __device__ __forceinline__ int lane_index(int i, int t)
    {
        return (i / W) * GK_RBF_SIDE * W + t * W + i % W;
    }

    /* The thread's TN values of a row of BN (w in rbf_matvec), as 16-byte loads. */
    static __device__ __forceinline__ void columns(T (&v)[TN], const T *row, int tx)
    {
#pragma unroll
        for (int g = 0; g < TN / W; g++)
            V::unpack(*(const typename V::type *)&row[g * GK_RBF_SIDE * W + tx * W], v + g * W);
    }

    /* Starts asynchronous copies (cp.async, no registers involved) of features [l0, l0 + BK)
     * of rows [row0, row0 + BM or BN) of a row-major matrix of nrows rows of d features into
     * the transposed shared buffer dst; zeros outside the matrix. Thread t copies feature
     * t % BK of rows t / BK + s * RS (RS = 256 / BK), so consecutive threads read consecutive
     * features of a row and the loads coalesce; its addresses are one base pointer plus
     * multiples of one stride, computed once per call rather than row * d + col per element. */
    template <int PER, int LD>
    static __device__ __forceinline__ void issue(T (*dst)[LD], const T *p, size_t row0,
                                                 size_t nrows, size_t d, size_t l0)
    {
        enum { RS = GK_CUDA_THREADS / BK };
        const int l = (int)threadIdx.x % BK, r0 = (int)threadIdx.x / BK;
        const size_t col = l0 + l;
        const bool colok = col < d;
        /* A thread whose feature is outside the matrix copies zeros from p for every row. */
        const T *src = colok ? p + (row0 + r0) * d + col : p;
        const size_t stride = colok ? (size_t)RS * d : 0;
        T *out = &dst[l][r0];
        if (row0 + PER * RS <= nrows && stride <= 0xffffffffu / sizeof(T)) {
            /* Every row inside the matrix and the stride in bytes within 32 bits: each address
             * is one 32 x 32 -> 64-bit multiply-add off src. */
            const unsigned int sb = (unsigned int)(stride * sizeof(T));
            const unsigned int bytes = colok ? (unsigned int)sizeof(T) : 0u;
#pragma unroll
            for (int s = 0; s < PER; s++)
                cuda_cp_async_bytes(out + s * RS, (const T *)((const char *)src + (size_t)s * sb),
                                    bytes);
        } else {
            /* The last row tile (or column tile) of the matrix: rows past nrows copy zeros. */
            const size_t left = nrows > row0 ? nrows - row0 : 0;
#pragma unroll
            for (int s = 0; s < PER; s++) {
                const bool ok = colok && (size_t)(r0 + s * RS) < left;
                cuda_cp_async_bytes(out + s * RS, ok ? src + s * stride : p,
                                    ok ? (unsigned int)sizeof(T) : 0u);
            }
        }
    }

    /* issue() for a tile whose addresses were worked out once (stage, at its first chunk)
     * rather than at every chunk: what issue() computes per call is most of a chunk's copy
     * instructions. For a tile with every row inside the matrix and a stride whose bytes fit
     * 32 bits (ok; issue() otherwise). */
    struct staged {
        const T *src;    /* p + (row0 + r0) * d + l: this thread's first row, feature l */
        unsigned int sb; /* RS rows in bytes */
        bool ok;
    };
    template <int PER>
    static __device__ __forceinline__ staged stage(const T *p, size_t row0, size_t nrows, size_t d)
    {
        enum { RS = GK_CUDA_THREADS / BK };
        const int l = (int)threadIdx.x % BK, r0 = (int)threadIdx.x / BK;
        staged st;
        st.ok = row0 + PER * RS <= nrows && (size_t)RS * d <= 0xffffffffu / sizeof(T);
        st.src = st.ok ? p + (row0 + r0) * d + l : p;
        st.sb = (unsigned int)((size_t)RS * d * sizeof(T));
        return st;
    }
    template <int PER, int LD>
    static __device__ __forceinline__ void issue_staged(T (*dst)[LD], const staged &st, const T *p,
                                                        size_t d, size_t l0)
    {
        enum { RS = GK_CUDA_THREADS / BK };
        const int l = (int)threadIdx.x % BK, r0 = (int)threadIdx.x / BK;
        const bool colok = l0 + l < d;
        const char *src = colok ? (const char *)(st.src + l0) : (const char *)p;
        const unsigned int sb = colok ? st.sb : 0u, bytes = colok ? (unsigned int)sizeof(T) : 0u;
        T *out = &dst[l][r0];
#pragma unroll
        for (int s = 0; s < PER; s++)
            cuda_cp_async_bytes(out + s * RS, (const T *)(src + (size_t)s * sb), bytes);
    }

    /* The TM x-values and TN y-values of feature l, as 16-byte shared-memory loads. */
    static __device__ __forceinline__ void operands(T (&xv)[TM], T (&yv)[TN], const T *xl,
                                                    const T *yl, int tx, int ty)
    {
#pragma unroll
        for (int g = 0; g < TM / W; g++)
            V::unpack(*(const typename V::type *)&xl[g * GK_RBF_SIDE * W + ty * W], xv + g * W);
        columns(yv, yl, tx);
    }

    static __device__ __forceinline__ void zero(T (&acc)[TM][TN])
    {
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++)
                acc[i][j] = T(0);
    }

    /* acc[i][j] += sum over the chunk's first lmax features of (x_i - y_j)^2; with init, acc
     * starts from this chunk instead (the first feature's square is assigned, which saves
     * zeroing TM x TN registers per tile). */
    static __device__ __forceinline__ void accumulate(T (&acc)[TM][TN], const T (*xs)[XLD],
                                                      const T (*ys)[YLD], int lmax, int tx, int ty,
                                                      bool init)
    {
        int l = 0;
        if (init && lmax > 0) {
            T xv[TM], yv[TN];
            operands(xv, yv, xs[0], ys[0], tx, ty);
#pragma unroll
            for (int i = 0; i < TM; i++) {
#pragma unroll
                for (int j = 0; j < TN; j++) {
                    T t = xv[i] - yv[j];
                    acc[i][j] = t * t;
                }
            }
            l = 1;
        } else if (init) {
            zero(acc);
        }
#pragma unroll 2
        for (; l < lmax; l++) {
            T xv[TM], yv[TN];
            operands(xv, yv, xs[l], ys[l], tx, ty);
#pragma unroll
            for (int i = 0; i < TM; i++) {
#pragma unroll
                for (int j = 0; j < TN; j++) {
                    T t = xv[i] - yv[j];
                    acc[i][j] = fma(t, t, acc[i][j]);
                }
            }
        }
    }

    /* acc[i][j] += sum over the chunk's first lmax features of x_i * y_j (init: from zero):
     * the inner-product form of rbf_matrix, one FMA per pair and feature where the
     * differences take two. */
    static __device__ __forceinline__ void accumulate_dot(T (&acc)[TM][TN], const T (*xs)[XLD],
                                                          const T (*ys)[YLD], int lmax, int tx,
                                                          int ty, bool init)
    {
        if (init)
            zero(acc);
#pragma unroll 2
        for (int l = 0; l < lmax; l++) {
            T xv[TM], yv[TN];
            operands(xv, yv, xs[l], ys[l], tx, ty);
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] = fma(xv[i], yv[j], acc[i][j]);
        }
    }
};

/* The staging loop of the tiled kernels. A block walks a stream of steps (tile t, feature
 * chunk), double-buffered: step s + 1's copies are in flight while step s is computed, across
 * tiles too, so one tile's epilogue hides the load latency of the next tile's first chunk.
 * The form f says which tiles are the block's and what a step copies, computes and stores:
 *   bool has(size_t t)                 t is one of the block's tiles (t0 is its first);
 *   size_t next(size_t t)              the tile after t;
 *   void issue(int b, size_t t, size_t l0, bool first)  starts the copies of features
 *                                      [l0, l0 + BK) of tile t into buffer b (l0 = 0: the
 *                                      tile's first chunk; first: the block's first step);
 *   void compute(int b, int lmax, bool init)  accumulates buffer b's first lmax features
 *                                      (init: the tile's first chunk, the sums start afresh);
 *   void finish(int b, size_t t)       the epilogue of tile t, whose last chunk was in b. */
template <int BK, typename Form>
__device__ __forceinline__ void cuda_rbf_steps(Form &f, size_t t0, size_t d)
{
    const size_t nchunks = d == 0 ? 1 : (d + BK - 1) / BK;
    if (!f.has(t0))
        return;
    size_t t = t0, ch = 0;
    f.issue(0, t, 0, true);
    cuda_cp_commit();
    for (int buf = 0; f.has(t); buf ^= 1) {
        size_t next_t = t, next_ch = ch + 1;
        if (next_ch == nchunks) {
            next_ch = 0;
            next_t = f.next(t);
        }
        /* Step s has landed for every thread, and every thread is done with step s - 1, whose
         * buffer the next copies overwrite. */
        cuda_cp_wait_all();
        __syncthreads();
        if (f.has(next_t)) {
            f.issue(buf ^ 1, next_t, next_ch * BK, false);
            cuda_cp_commit();
        }
        size_t left = d - ch * BK;
        f.compute(buf, d == 0 ? 0 : (left < (size_t)BK ? (int)left : BK), ch == 0);
        if (next_ch == 0)
            f.finish(buf, t);
        t = next_t;
        ch = next_ch;
    }
}

#endif /* GK_CUDA_RBF_TILE_CUH */
