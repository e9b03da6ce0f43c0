/* SPDX-License-Identifier: MIT */
/* cuda_elementwise.cu - fill, copy, add, sub, mul, div, axpy, scale and exp as streaming
 * kernels. */
#include "cuda_internal.h"

/* Each operation is one IEEE operation per element (axpy: one fma; exp: the precise exp/expf,
 * this module is never built with --use_fast_math), so add, sub, mul, div, fill and scale round
 * exactly like the CPU's `z = x + y` and agree bit for bit. */
template <typename T> struct cuda_fill_op {
    T v;
    __device__ T operator()(T, T) const
    {
        return v;
    }
};
template <typename T> struct cuda_add_op {
    __device__ T operator()(T a, T b) const
    {
        return a + b;
    }
};
template <typename T> struct cuda_sub_op {
    __device__ T operator()(T a, T b) const
    {
        return a - b;
    }
};
template <typename T> struct cuda_mul_op {
    __device__ T operator()(T a, T b) const
    {
        return a * b;
    }
};
/* `/` compiles to the IEEE quotient rounded to nearest (div.rn, subnormals kept) because the
 * module keeps nvcc's -prec-div=true -ftz=false: an approximate or flushing division would
 * differ from the CPU's in the last bit. */
template <typename T> struct cuda_div_op {
    __device__ T operator()(T a, T b) const
    {
        return a / b;
    }
};
template <typename T> struct cuda_axpy_op {
    T alpha;
    __device__ T operator()(T a, T b) const
    {
        return fma(alpha, a, b);
    }
};
template <typename T> struct cuda_scale_op {
    T alpha;
    __device__ T operator()(T a, T) const
    {
        return alpha * a;
    }
};
template <typename T> struct cuda_exp_op {
    __device__ T operator()(T a, T) const
    {
        return exp(a);
    }
};

/* z[i] = op(x[i], y[i]) for the NIN inputs used. Elements [head, head + nvec * W) are handled as
 * aligned 16-byte vectors, the rest one by one. No __restrict__: z may alias x or y, which is
 * safe because each element is read and then written by the same thread. */
template <typename T, int NIN, typename Op>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_map(size_t n, size_t head, size_t nvec, const T *x, const T *y, T *z, Op op)
{
    typedef gk_cuda_vec<T> V;
    const int W = V::width;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t nthreads = (size_t)gridDim.x * blockDim.x;

    const size_t body_end = head + nvec * W;
    const size_t nscalar = head + (n - body_end);
    for (size_t s = tid; s < nscalar; s += nthreads) {
        size_t i = s < head ? s : body_end + (s - head);
        T a = NIN >= 1 ? x[i] : T(0);
        T b = NIN >= 2 ? y[i] : T(0);
        z[i] = op(a, b);
    }

    const typename V::type *xv = NIN >= 1 ? (const typename V::type *)(x + head) : NULL;
    const typename V::type *yv = NIN >= 2 ? (const typename V::type *)(y + head) : NULL;
    typename V::type *zv = (typename V::type *)(z + head);
    for (size_t i = tid; i < nvec; i += nthreads) {
        T a[W], b[W], r[W];
        if (NIN >= 1)
            V::unpack(xv[i], a);
        if (NIN >= 2)
            V::unpack(yv[i], b);
#pragma unroll
        for (int w = 0; w < W; w++)
            r[w] = op(NIN >= 1 ? a[w] : T(0), NIN >= 2 ? b[w] : T(0));
        zv[i] = V::pack(r);
    }
}

template <typename T, int NIN, typename Op>
static gk_status cuda_map_launch(gk_cuda_state *s, size_t n, const T *x, const T *y, T *z, Op op)
{
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    gk_cuda_split sp = gk__cuda_split(n, sizeof(T), z, NIN >= 1 ? x : NULL, NIN >= 2 ? y : NULL);
    size_t work = sp.nvec > 0 ? sp.nvec : n;
    /* One pass, one 16-byte vector per thread: the grid-stride loop only serves sizes beyond a
     * grid. That ran add and scale (f32 2.5e8) some 5-7 % faster than grid-stride grids (8
     * blocks per SM or exactly the resident ones) and than 2 to 16 vectors per thread: more
     * threads keep as many bytes in flight as more loads per thread, without the registers. */
    unsigned int blocks = gk__cuda_blocks(work, GK_CUDA_THREADS, (size_t)1 << 30);
    cuda_map<T, NIN, Op>
        <<<blocks, GK_CUDA_THREADS, 0, s->stream>>>(n, sp.head, sp.nvec, x, y, z, op);
    return gk__cuda_launched(sizeof(T) == 4 ? "cuda_map<float>" : "cuda_map<double>");
}

/* Dispatches on dtype; Op<T> is built from the already-rounded scalar. */
template <template <typename> class Op, int NIN>
static gk_status cuda_map_dispatch(void *st, gk_dtype t, size_t n, double scalar, const void *x,
                                   const void *y, void *z)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    if (t == GK_FLOAT32)
        return cuda_map_launch<float, NIN>(s, n, (const float *)x, (const float *)y, (float *)z,
                                           Op<float>::make((float)scalar));
    if (t == GK_FLOAT64)
        return cuda_map_launch<double, NIN>(s, n, (const double *)x, (const double *)y, (double *)z,
                                            Op<double>::make(scalar));
    return gk__cuda_bad_dtype(t);
}

/* Adapters giving every op the same construction from one scalar. */
template <typename T> struct cuda_fill_mk {
    static cuda_fill_op<T> make(T v)
    {
        return cuda_fill_op<T>{v};
    }
};
template <typename T> struct cuda_add_mk {
    static cuda_add_op<T> make(T)
    {
        return cuda_add_op<T>{};
    }
};
template <typename T> struct cuda_sub_mk {
    static cuda_sub_op<T> make(T)
    {
        return cuda_sub_op<T>{};
    }
};
template <typename T> struct cuda_mul_mk {
    static cuda_mul_op<T> make(T)
    {
        return cuda_mul_op<T>{};
    }
};
template <typename T> struct cuda_div_mk {
    static cuda_div_op<T> make(T)
    {
        return cuda_div_op<T>{};
    }
};
template <typename T> struct cuda_axpy_mk {
    static cuda_axpy_op<T> make(T a)
    {
        return cuda_axpy_op<T>{a};
    }
};
template <typename T> struct cuda_scale_mk {
    static cuda_scale_op<T> make(T a)
    {
        return cuda_scale_op<T>{a};
    }
};
template <typename T> struct cuda_exp_mk {
    static cuda_exp_op<T> make(T)
    {
        return cuda_exp_op<T>{};
    }
};

gk_status gk__cuda_fill(void *st, gk_dtype t, size_t n, double value, void *x)
{
    return cuda_map_dispatch<cuda_fill_mk, 0>(st, t, n, value, NULL, NULL, x);
}

gk_status gk__cuda_copy(void *st, gk_dtype t, size_t n, const void *x, void *y)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK || x == y)
        return r;
    /* The runtime's device-to-device copy already runs at the memory system's copy rate. */
    size_t bytes = n * (t == GK_FLOAT32 ? sizeof(float) : sizeof(double));
    return gk__cuda_check(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, s->stream),
                          "cudaMemcpyAsync(device to device)");
}

gk_status gk__cuda_add(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z)
{
    return cuda_map_dispatch<cuda_add_mk, 2>(st, t, n, 0.0, x, y, z);
}

gk_status gk__cuda_sub(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z)
{
    return cuda_map_dispatch<cuda_sub_mk, 2>(st, t, n, 0.0, x, y, z);
}

gk_status gk__cuda_mul(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z)
{
    return cuda_map_dispatch<cuda_mul_mk, 2>(st, t, n, 0.0, x, y, z);
}

gk_status gk__cuda_div(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z)
{
    return cuda_map_dispatch<cuda_div_mk, 2>(st, t, n, 0.0, x, y, z);
}

gk_status gk__cuda_axpy(void *st, gk_dtype t, size_t n, double alpha, const void *x, void *y)
{
    return cuda_map_dispatch<cuda_axpy_mk, 2>(st, t, n, alpha, x, y, y);
}

gk_status gk__cuda_scale(void *st, gk_dtype t, size_t n, double alpha, void *x)
{
    return cuda_map_dispatch<cuda_scale_mk, 1>(st, t, n, alpha, x, NULL, x);
}

gk_status gk__cuda_exp(void *st, gk_dtype t, size_t n, const void *x, void *y)
{
    return cuda_map_dispatch<cuda_exp_mk, 1>(st, t, n, 0.0, x, NULL, y);
}
