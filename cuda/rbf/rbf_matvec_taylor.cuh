/* SPDX-License-Identifier: MIT */
/* rbf_matvec_taylor.cuh - the kernels of float32 rbf_matvec's single-expansion Taylor form
 * (fast Gauss transform, 1 <= d <= 4): box pass, plan, moments, their reduction, evaluation. */
#ifndef GK_CUDA_RBF_MATVEC_TAYLOR_CUH
#define GK_CUDA_RBF_MATVEC_TAYLOR_CUH

#include <cfloat>

#include "cuda_internal.h"

/* The form (Greengard and Strain). c = the midpoint of the bounding box of all x and y rows,
 * a = x_i - c, b = y_j - c (double). exp(-g ||a - b||^2) = exp(-g||a||^2) exp(-g||b||^2)
 * exp(2g a.b), and exp(2g a.b) = sum over multi-indices alpha of (2g)^|alpha| / alpha! a^alpha
 * b^alpha; grouped by k = |alpha| that is sum_k (2g a.b)^k / k! (multinomial theorem), so
 * truncating at |alpha| <= p leaves at most S^(p+1) / (p+1)! e^S per pair, S = 2 g Ra Ry >=
 * 2g |a.b| (Ra, Ry: bounds on ||a||, ||b|| from the box), and per output at most sum |w| times
 * that. The factor (2g)^|alpha| is split as sa^|alpha| sb^|alpha| (sa sb = 2g, sa / sb = Ry / Ra),
 * so the scaled coordinates a sa and b sb are at most sqrt(S) and no power overflows:
 *     out_i = exp(-g ||a_i||^2) sum_alpha (sa a_i)^alpha M_alpha,
 *     M_alpha = 1/alpha! sum_j w_j exp(-g ||b_j||^2) (sb b_j)^alpha.
 * Rounding (double, u = 2^-53), relative to sum |w|: every term of either sum is a product of
 * at most p + D + 2 rounded factors, the sum over alpha of |terms| is at most sum|w| e^S, and
 * the sums run over at most L_y points (a block's), L_b blocks and T terms in sequence: at most
 * e^S u (L_y + L_b + T + 2p + 4D + 64); the rounded centered coordinates move ||x - y||^2 by at
 * most 2u (Ra + Ry)^2, the kernel value by g times that. The plan takes the smallest p whose
 * truncation plus rounding is at most GK_TAYLOR_TOL = 1e-8 (the float result's rounding, 6e-8
 * sum|w|, and that stay far inside the 1e-5 sum |w| contract; and with one nonzero weight at an
 * identical row the error is below half an ulp of w_j, so the output is exactly w_j). */
#define GK_TAYLOR_TOL 1e-8
/* Beyond this S the rounding term alone (e^S u L) fails for any useful size. */
#define GK_TAYLOR_MAX_S 32.0
/* Points of y staged per round of the moments kernel. */
#define GK_TAYLOR_CHUNK 32

__host__ __device__ constexpr int cuda_taylor_binom(int n, int k)
{
    int r = 1;
    for (int i = 1; i <= k; i++)
        r = r * (n - k + i) / i;
    return r;
}

/* Highest degree per D: the moments (TERMS = C(PMAX + D, D) doubles) fit in shared memory
 * (<= 2048 doubles); for D <= 2, 48 reaches the tolerance up to S ~ 10, past which the rounding
 * term fails anyway. */
template <int D> struct cuda_taylor_shape;
template <> struct cuda_taylor_shape<1> {
    enum { PMAX = 48 };
};
template <> struct cuda_taylor_shape<2> {
    enum { PMAX = 48 };
};
template <> struct cuda_taylor_shape<3> {
    enum { PMAX = 21 };
};
template <> struct cuda_taylor_shape<4> {
    enum { PMAX = 12 };
};
template <int D> __host__ __device__ constexpr int cuda_taylor_terms()
{
    return cuda_taylor_binom(cuda_taylor_shape<D>::PMAX + D, D);
}

/* What the plan kernel decides, read by the others. taylor first: its address is the skip flag
 * of the difference kernels. */
struct cuda_taylor_plan {
    int taylor, p, terms, pad;
    double g, sa, sb;
    double c[4];
};

/* NaN-propagating min and max: a NaN anywhere makes the box NaN, which fails the bound. */
__device__ __forceinline__ double cuda_taylor_lo(double a, double b)
{
    return (b < a || b != b) ? b : a;
}
__device__ __forceinline__ double cuda_taylor_hi(double a, double b)
{
    return (b > a || b != b) ? b : a;
}

/* Value k of a reduction whose first nlo values take lows, the next nhi highs, the rest sums. */
__device__ __forceinline__ double cuda_taylor_combine(int k, int nlo, int nhi, double a, double b)
{
    if (k < nlo)
        return cuda_taylor_lo(a, b);
    return k < nlo + nhi ? cuda_taylor_hi(a, b) : a + b;
}

/* Term t of the enumeration alpha_0 outermost, each alpha_k from 0 to what the outer ones
 * leave of p (the evaluation's nested loops): exponents into a. */
template <int D> __device__ __forceinline__ void cuda_taylor_alpha(int t, int p, int (&a)[D])
{
    int r = p;
#pragma unroll
    for (int k = 0; k < D - 1; k++) {
        const int q = D - 1 - k;
        int e = 0;
        for (;;) {
            const int cnt = cuda_taylor_binom(r - e + q, q);
            if (t < cnt)
                break;
            t -= cnt;
            e++;
        }
        a[k] = e;
        r -= e;
    }
    a[D - 1] = t;
}

/* Block reduction of NV values (the first NLO by lo, the next NHI by hi, the rest summed) in a
 * fixed order; thread 0 holds the result. */
template <int NV, int NLO, int NHI>
__device__ __forceinline__ void cuda_taylor_reduce(double (&v)[NV], double (*slot)[NV])
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const double o = __shfl_down_sync(0xffffffffu, v[k], off);
            v[k] = cuda_taylor_combine(k, NLO, NHI, v[k], o);
        }
    if (threadIdx.x % 32 == 0)
#pragma unroll
        for (int k = 0; k < NV; k++)
            slot[threadIdx.x / 32][k] = v[k];
    __syncthreads();
    if (threadIdx.x == 0)
        for (int wi = 1; wi < GK_CUDA_THREADS / 32; wi++)
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const double o = slot[wi][k];
                v[k] = cuda_taylor_combine(k, NLO, NHI, v[k], o);
            }
}

/* The box of no rows: lows +inf, highs -inf, sum |w| 0 (the identities of the box reduction). */
template <int D> __device__ __forceinline__ void cuda_taylor_box_empty(double *v)
{
#pragma unroll
    for (int k = 0; k < 2 * D; k++) {
        v[k] = INFINITY;
        v[2 * D + k] = -INFINITY;
    }
    v[4 * D] = 0.0;
}

/* (1) Per block, over a grid-stride share of the rows: the lows of x's and y's features, their
 * highs, and sum |w|, at partial[block * (4D + 1)]. */
template <int D>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_taylor_box(size_t m, size_t n, const float *__restrict__ x, const float *__restrict__ y,
                    const float *__restrict__ w, double *__restrict__ partial)
{
    const int NV = 4 * D + 1;
    __shared__ double slot[GK_CUDA_THREADS / 32][NV];
    double v[NV];
    cuda_taylor_box_empty<D>(v);
    const size_t rows = m > n ? m : n;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
         i += (size_t)gridDim.x * blockDim.x) {
        if (i < m)
#pragma unroll
            for (int l = 0; l < D; l++) {
                const double t = (double)x[i * D + l];
                v[l] = cuda_taylor_lo(v[l], t);
                v[2 * D + l] = cuda_taylor_hi(v[2 * D + l], t);
            }
        if (i < n) {
#pragma unroll
            for (int l = 0; l < D; l++) {
                const double t = (double)y[i * D + l];
                v[D + l] = cuda_taylor_lo(v[D + l], t);
                v[3 * D + l] = cuda_taylor_hi(v[3 * D + l], t);
            }
            v[4 * D] += fabs((double)w[i]);
        }
    }
    cuda_taylor_reduce<NV, 2 * D, 2 * D>(v, slot);
    if (threadIdx.x == 0)
#pragma unroll
        for (int k = 0; k < NV; k++)
            partial[(size_t)blockIdx.x * NV + k] = v[k];
}

/* (2) One block: the box partials reduced in a fixed order, then thread 0 picks c, the scales
 * and p (see the top of the file) and writes the plan; taylor = 0 wherever the bound fails or
 * cannot be evaluated (non-finite box or sum |w|, sum |w| = 0, S too large). ly, lb: points per
 * moments block and moments blocks (the rounding term's sequence lengths). */
template <int D>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_taylor_plan_kernel(unsigned int blocks, const double *__restrict__ partial, double g,
                            double ly, double lb, cuda_taylor_plan *__restrict__ plan)
{
    const int NV = 4 * D + 1;
    __shared__ double slot[GK_CUDA_THREADS / 32][NV];
    double v[NV];
    cuda_taylor_box_empty<D>(v);
    for (unsigned int b = threadIdx.x; b < blocks; b += GK_CUDA_THREADS) {
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const double o = partial[(size_t)b * NV + k];
            v[k] = cuda_taylor_combine(k, 2 * D, 2 * D, v[k], o);
        }
    }
    cuda_taylor_reduce<NV, 2 * D, 2 * D>(v, slot);
    if (threadIdx.x != 0)
        return;
    const double u = 0x1p-53;
    bool finite = true;
    double ra2 = 0.0, ry2 = 0.0;
    cuda_taylor_plan pl;
    for (int l = 0; l < 4; l++)
        pl.c[l] = 0.0;
#pragma unroll
    for (int l = 0; l < D; l++) {
        const double lo = cuda_taylor_lo(v[l], v[D + l]);
        const double hi = cuda_taylor_hi(v[2 * D + l], v[3 * D + l]);
        /* NaN and infinities fail here (the combine above propagates them). */
        finite = finite && lo >= -DBL_MAX && hi <= DBL_MAX;
        const double c = 0.5 * lo + 0.5 * hi;
        pl.c[l] = c;
        const double ex = fmax(fabs(v[l] - c), fabs(v[2 * D + l] - c));
        const double ey = fmax(fabs(v[D + l] - c), fabs(v[3 * D + l] - c));
        ra2 += ex * ex;
        ry2 += ey * ey;
    }
    /* Rounded up, so that the bound is never below the exact one. */
    const double ra = sqrt(ra2) * (1.0 + 8.0 * u), ry = sqrt(ry2) * (1.0 + 8.0 * u);
    const double wsum = v[4 * D];
    const double s = 2.0 * g * ra * ry * (1.0 + 8.0 * u);
    const double ecenter = 2.01 * u * g * (ra + ry) * (ra + ry);
    int p = -1;
    if (finite && wsum > 0.0 && wsum <= DBL_MAX && s <= GK_TAYLOR_MAX_S) {
        const double es = exp(s) * (1.0 + 4.0 * u);
        double t = s; /* S^(q+1) / (q+1)! */
        for (int q = 0; q <= cuda_taylor_shape<D>::PMAX; q++) {
            const double terms = (double)cuda_taylor_binom(q + D, D);
            const double bound = t * es * 1.01 +
                                 1.01 * es * u * (ly + lb + terms + 2.0 * q + 4.0 * D + 64.0) +
                                 ecenter;
            if (bound <= GK_TAYLOR_TOL) {
                p = q;
                break;
            }
            t *= s / (double)(q + 2);
        }
    }
    pl.taylor = p >= 0;
    pl.p = p >= 0 ? p : 0;
    pl.terms = cuda_taylor_binom(pl.p + D, D);
    pl.pad = 0;
    pl.g = g;
    if (ra > 0.0 && ry > 0.0 && pl.taylor) {
        pl.sa = sqrt(2.0 * g * (ry / ra));
        pl.sb = sqrt(2.0 * g * (ra / ry));
    } else {
        pl.sa = pl.sb = 1.0; /* S = 0: p = 0, the scales multiply nothing */
    }
    *plan = pl;
}

/* (3) Block b: moments over points [b span, (b + 1) span) of y, in order, a thread per term
 * (t = threadIdx.x + 256 r); each round stages GK_TAYLOR_CHUNK points' powers, per feature,
 * of sb b_k (feature 0's times w_j exp(-g ||b_j||^2)). partial[b * TERMS + t]. */
template <int D>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_taylor_moments(size_t n, size_t span, const float *__restrict__ y,
                        const float *__restrict__ w, const cuda_taylor_plan *__restrict__ plan,
                        double *__restrict__ partial)
{
    const int PM = cuda_taylor_shape<D>::PMAX, TERMS = cuda_taylor_terms<D>();
    const int RT = (TERMS + GK_CUDA_THREADS - 1) / GK_CUDA_THREADS;
    __shared__ double tab[GK_TAYLOR_CHUNK][D][PM + 1];
    if (!plan->taylor)
        return;
    const int p = plan->p, terms = plan->terms;
    const double g = plan->g, sb = plan->sb;
    double c[D];
#pragma unroll
    for (int l = 0; l < D; l++)
        c[l] = plan->c[l];
    int al[RT][D];
    double acc[RT];
#pragma unroll
    for (int r = 0; r < RT; r++) {
        acc[r] = 0.0;
        const int t = threadIdx.x + r * GK_CUDA_THREADS;
        cuda_taylor_alpha<D>(t < terms ? t : 0, p, al[r]);
    }
    const size_t j0 = (size_t)blockIdx.x * span, j1 = j0 + span < n ? j0 + span : n;
    for (size_t jb = j0; jb < j1; jb += GK_TAYLOR_CHUNK) {
        const int jn = j1 - jb < GK_TAYLOR_CHUNK ? (int)(j1 - jb) : GK_TAYLOR_CHUNK;
        __syncthreads();
        if ((int)threadIdx.x < jn * D) {
            const int jj = threadIdx.x / D, k = threadIdx.x % D;
            const size_t j = jb + jj;
            double nb = 0.0, bk = 0.0;
#pragma unroll
            for (int l = 0; l < D; l++) {
                const double b = (double)y[j * D + l] - c[l];
                nb += b * b;
                bk = l == k ? b : bk;
            }
            double f = k == 0 ? (double)w[j] * exp(-g * nb) : 1.0;
            const double bs = bk * sb;
            for (int e = 0; e <= p; e++) {
                tab[jj][k][e] = f;
                f *= bs;
            }
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < RT; r++) {
            if ((int)threadIdx.x + r * GK_CUDA_THREADS >= terms)
                continue;
            for (int jj = 0; jj < jn; jj++) {
                double v = tab[jj][0][al[r][0]];
#pragma unroll
                for (int k = 1; k < D; k++)
                    v *= tab[jj][k][al[r][k]];
                acc[r] += v;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < RT; r++) {
        const int t = threadIdx.x + r * GK_CUDA_THREADS;
        if (t < terms)
            partial[(size_t)blockIdx.x * TERMS + t] = acc[r];
    }
}

/* (4) M[t] = (sum over the moments blocks, in block order) / alpha!. */
template <int D>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_taylor_reduce_moments(unsigned int blocks, const double *__restrict__ partial,
                               const cuda_taylor_plan *__restrict__ plan, double *__restrict__ mom)
{
    const int TERMS = cuda_taylor_terms<D>();
    if (!plan->taylor)
        return;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= plan->terms)
        return;
    double s = 0.0;
    unsigned int b = 0;
    /* Eight loads in flight, the adds still in block order. */
    for (; b + 8 <= blocks; b += 8) {
        double q[8];
#pragma unroll
        for (int h = 0; h < 8; h++)
            q[h] = partial[(size_t)(b + h) * TERMS + t];
#pragma unroll
        for (int h = 0; h < 8; h++)
            s += q[h];
    }
    for (; b < blocks; b++)
        s += partial[(size_t)b * TERMS + t];
    int a[D];
    cuda_taylor_alpha<D>(t, plan->p, a);
    double f = 1.0;
#pragma unroll
    for (int k = 0; k < D; k++)
        for (int i = 2; i <= a[k]; i++)
            f *= (double)i;
    mom[t] = s / f;
}

/* The nested loops of the enumeration: feature K's exponent from 0 to r, its power as a running
 * product. */
template <int K, int D, bool LAST = (K == D - 1)> struct cuda_taylor_series {
    static __device__ __forceinline__ void add(const double (&at)[D], int r, double f,
                                               const double *mom, int &t, double &s)
    {
        for (int e = 0; e <= r; e++) {
            cuda_taylor_series<K + 1, D>::add(at, r - e, f, mom, t, s);
            f *= at[K];
        }
    }
};
template <int K, int D> struct cuda_taylor_series<K, D, true> {
    static __device__ __forceinline__ void add(const double (&at)[D], int r, double f,
                                               const double *mom, int &t, double &s)
    {
        for (int e = 0; e <= r; e++) {
            s = fma(f, mom[t++], s);
            f *= at[K];
        }
    }
};

/* (5) A thread per row of x: out_i = exp(-g ||a_i||^2) sum_alpha (sa a_i)^alpha M_alpha. */
template <int D>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_taylor_eval(size_t m, const float *__restrict__ x,
                     const cuda_taylor_plan *__restrict__ plan, const double *__restrict__ mom,
                     float *__restrict__ out)
{
    __shared__ double sm[cuda_taylor_terms<D>()];
    if (!plan->taylor)
        return;
    const int p = plan->p, terms = plan->terms;
    const double g = plan->g, sa = plan->sa;
    double c[D];
#pragma unroll
    for (int l = 0; l < D; l++)
        c[l] = plan->c[l];
    for (int t = threadIdx.x; t < terms; t += GK_CUDA_THREADS)
        sm[t] = mom[t];
    __syncthreads();
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (size_t)gridDim.x * blockDim.x) {
        double at[D], na = 0.0;
#pragma unroll
        for (int l = 0; l < D; l++) {
            const double a = (double)x[i * D + l] - c[l];
            na += a * a;
            at[l] = a * sa;
        }
        int t = 0;
        double s = 0.0;
        cuda_taylor_series<0, D>::add(at, p, 1.0, sm, t, s);
        out[i] = (float)(exp(-g * na) * s);
    }
}

#endif /* GK_CUDA_RBF_MATVEC_TAYLOR_CUH */
