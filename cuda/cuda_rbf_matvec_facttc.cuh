/* SPDX-License-Identifier: MIT */
/* cuda_rbf_matvec_facttc.cuh - float32 rbf_matvec for d = 3 in the factorized form of
 * cuda_rbf_matvec_fact.cuh with the exponents on TF32 tensor cores (3xTF32), chunk by chunk
 * under its rounding bound; else that kernel's FMA form under its bound, else differences. */
#ifndef GK_CUDA_RBF_MATVEC_FACTTC_CUH
#define GK_CUDA_RBF_MATVEC_FACTTC_CUH

#include "cuda_rbf_matvec_fact.cuh"

/* The form. As in cuda_rbf_matvec_fact.cuh (block center c, x~, y~, k, a_i, b_j, x'_i), a pair's
 * value is 2^(a_i) * 2^(t_ij) with t_ij = b_j + x'_i . y~_j, but t is one entry of the product
 * of X (rows (x'_0, x'_1, x'_2, 1)) and Y (columns (y~_0, y~_1, y~_2, b_j)) on the tensor cores:
 * each entry v of X and Y is split into hi = tf32(v) and lo = tf32(v - hi) (round to nearest,
 * low 13 bits zero: exact products, and the tensor core's own conversion leaves them as they
 * are), and per 16 x 8 pairs three m16n8k4 MMAs from zero sum hi.lo, lo.hi, then hi.hi (lo.lo
 * dropped). The exp2s and the weights stay on the CUDA cores, one row tile in GK_FTC_MT on the
 * polynomial exp2, which balances the special-function unit against the issue slots.
 *
 * The bound (first order in u = 2^-24, N = nx + ny as computed, S = sum |X_l Y_l| <= 2 k N):
 * centering 4 u k N, k rounded 2 u k N, a_i and b_j (d + 1) u k N, x' rounded u k N, as in the
 * FMA form; then, the tensor cores' additions taken to err by 2u of their results with a block
 * FMA of b products costing b + 2 of them (cuda/cuda_rbf_tc.cu's model, a sum of L leaves
 * erring by at most 2u (1.5 L + 2) of their magnitude):
 *   - splitting: v = hi + lo + r, |r| <= 2^-22 |v|; the dropped terms are at most
 *     3.001 * 2^-22 |X_l Y_l| each, 12.004 u S <= 24.01 u k N;
 *   - the two cross MMAs (8 leaves below 2^-10.99 S): 0.06 u k N; hi.hi with their sum as a
 *     fifth leaf: 19 * 1.002 u S <= 38.1 u k N;
 *   - underflow (subnormal products or lo parts flushed): 2 u k N;
 * so t errs by at most (d + 72.2) u k N, and the kernel value by (d + 72.2) u gamma N relative
 * (1.001 times that for the second-order terms). A chunk takes the form where that is at most
 * GK_MATVEC_FACT_MAX_ERROR for the block's largest nx and the chunk's largest ny, under the
 * exponent-range conditions of the FMA form; else the FMA form where its own bound
 * (3d + 8) u gamma N allows, else differences of the raw rows. Exact duplicates (of the hash
 * table in cuda_rbf_matvec_fact.cuh) are summed again from differences, so identical rows give
 * exactly 1. */
#define GK_FTC_COEF(d) (1.001 * ((double)(d) + 72.2) * 0x1p-24)

/* Shapes: a warp holds GK_FTC_MT 16-row MMA tiles (lane (g, t) rows g and g + 8 of each, its
 * A fragments x'_t in registers), so a block holds GK_FTC_ROWS rows; a chunk of 1024 points is
 * 16 groups of eight 8-column tiles, lane (g, t) summing columns 2t and 2t + 1 of each (16
 * float terms per row and group, then double). */
#define GK_FTC_MT 4
#define GK_FTC_ROWS (GK_CUDA_THREADS / 32 * GK_FTC_MT * 16)
#define GK_FTC_CHUNK 1024
#define GK_FTC_GROUP 64

__device__ __forceinline__ float cuda_ftc_tf32(float v)
{
    unsigned int r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return __uint_as_float(r);
}

/* d += a.b on a 16 x 8 x 4 TF32 tile: a0, a1 rows g, g + 8 at feature t; b0 column g at t;
 * d0, d1 row g at columns 2t, 2t + 1, d2, d3 row g + 8. */
__device__ __forceinline__ void cuda_ftc_mma(float (&dd)[4], float a0, float a1, float b0)
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, "
                 "{%6}, {%0,%1,%2,%3};\n"
                 : "+f"(dd[0]), "+f"(dd[1]), "+f"(dd[2]), "+f"(dd[3])
                 : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(b0)));
}

/* Point q (of 16) of a lane's columns in a group: tile q / 2, column 2t + q % 2. */
__device__ __forceinline__ int cuda_ftc_col(int q, int t)
{
    return (q / 2) * 8 + 2 * t + q % 2;
}

/* One row's sum over this lane's 16 points of the group at jg, from differences of the raw
 * rows in global memory: the groups that hold a duplicate of the row. */
__device__ __noinline__ float cuda_ftc_redo(const float *__restrict__ xrow,
                                            const float *__restrict__ y,
                                            const float *__restrict__ w, size_t jg, size_t n,
                                            int t, float c)
{
    float p = 0.0f;
    for (int q = 0; q < GK_FTC_GROUP / 4; q++) {
        const size_t j = jg + cuda_ftc_col(q, t);
        if (j >= n)
            continue;
        float dist = 0.0f;
        for (int l = 0; l < 3; l++) {
            float u = xrow[l] - y[j * 3 + l];
            dist = fmaf(u, u, dist);
        }
        p = fmaf(cuda_rbf_value<false>(dist, c), w[j], p);
    }
    return p;
}

/* The blocks, splits and outputs of cuda_rbf_matvec_fact with GK_FTC_ROWS rows a block. c =
 * -gamma log2(e), k = -c (finite, > 0), tcoef = GK_FTC_COEF(3) gamma, ecoef = the FMA form's
 * (3d + 8) u gamma. */
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matvec_fact_tc(size_t m, size_t n, float c, float k, float tcoef, float ecoef,
                            const float *__restrict__ x, const float *__restrict__ y,
                            const float *__restrict__ w, unsigned int splits, size_t cps,
                            float *__restrict__ out, double *__restrict__ partial)
{
    const int D = 3, MT = GK_FTC_MT, CH = GK_FTC_CHUNK;
    /* A chunk's points as B fragments (hi, lo), or for the other forms as float4s:
     * (y~_0, y~_1, y~_2, b) or raw (y_0, y_1, y_2, w). */
    __shared__ float2 yp[CH / 8][32];
    __shared__ __align__(8) float ws[CH];
    __shared__ float slots[3][GK_CUDA_THREADS / 32];
    __shared__ unsigned int dup[GK_MATVEC_DUP_SLOTS];
    float4 *pts = reinterpret_cast<float4 *>(&yp[0][0]);

    const int tid = threadIdx.x, lane = tid % 32, wp = tid / 32, g = lane / 4, t = lane % 4;
    const size_t rt = blockIdx.x / splits;
    const unsigned int sp = blockIdx.x % splits;
    const size_t rw = rt * GK_FTC_ROWS + (size_t)wp * 64;
    auto row_of = [&](int mt, int h) { return rw + mt * 16 + h * 8 + g; };

    /* The center (midrange of the block's rows), the A fragments, 2^(a_i), the largest nx. */
    float ctr[D], ah[MT][2], al[MT][2], fa[MT][2], nx_max;
    {
        float xr[MT][2][D], lo[D], hi[D];
#pragma unroll
        for (int l = 0; l < D; l++) {
            lo[l] = INFINITY;
            hi[l] = -INFINITY;
        }
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const size_t row = row_of(mt, h);
#pragma unroll
                for (int l = 0; l < D; l++) {
                    xr[mt][h][l] = row < m ? x[row * D + l] : 0.0f;
                    if (row < m) {
                        lo[l] = fminf(lo[l], xr[mt][h][l]);
                        hi[l] = fmaxf(hi[l], xr[mt][h][l]);
                    }
                }
            }
#pragma unroll
        for (int l = 0; l < D; l++) {
            const float nlo = cuda_matvec_block_max(-lo[l], slots[0]);
            const float nhi = cuda_matvec_block_max(hi[l], slots[1]);
            ctr[l] = 0.5f * nhi - 0.5f * nlo;
        }
        float nxb = 0.0f;
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float nx = 0.0f, xt = 1.0f;
#pragma unroll
                for (int l = 0; l < D; l++) {
                    const float u = __fsub_rn(xr[mt][h][l], ctr[l]);
                    nx = fmaf(u, u, nx);
                    if (l == t)
                        xt = __fmul_rn(2.0f * k, u);
                }
                ah[mt][h] = cuda_ftc_tf32(xt);
                al[mt][h] = cuda_ftc_tf32(__fsub_rn(xt, ah[mt][h]));
                fa[mt][h] = cuda_ex2(__fmul_rn(-k, nx));
                if (row_of(mt, h) < m)
                    nxb = fmaxf(nxb, nx <= FLT_MAX ? nx : INFINITY);
            }
        nx_max = cuda_matvec_block_max(nxb, slots[2]);
    }
    const float fact_cap = exp2f(119.0f - k * nx_max);
    for (int i = tid; i < GK_MATVEC_DUP_SLOTS; i += GK_CUDA_THREADS)
        dup[i] = 0u;

    double s[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
        s[mt][0] = s[mt][1] = 0.0;

    const size_t nchunks = (n + CH - 1) / CH;
    const size_t ch0 = sp * cps, ch1 = ch0 + cps < nchunks ? ch0 + cps : nchunks;
    for (size_t ch = ch0; ch < ch1; ch++) {
        const size_t j0 = ch * CH;
        const int jn = n - j0 < (size_t)CH ? (int)(n - j0) : CH;
        /* Everyone is done with the previous chunk, and the table is clear. */
        __syncthreads();
        /* B fragments of the whole chunk (points past jn: y~ = 0, b = -100, w = 0, values
         * 2^-100 times 0), the keys into the table, the largest ny and |w|. */
        float nyb = 0.0f, wb = 0.0f;
        for (int j = tid; j < CH; j += GK_CUDA_THREADS) {
            float v[4] = {0.0f, 0.0f, 0.0f, -100.0f}, wj = 0.0f;
            if (j < jn) {
                float ny = 0.0f, yc[D];
#pragma unroll
                for (int l = 0; l < D; l++) {
                    v[l] = yc[l] = __fsub_rn(__ldg(y + (j0 + j) * D + l), ctr[l]);
                    ny = fmaf(v[l], v[l], ny);
                }
                cuda_matvec_dup_insert(dup, cuda_matvec_dup_hash<D>(yc), j / 32);
                v[3] = __fmul_rn(-k, ny);
                wj = __ldg(w + j0 + j);
                nyb = fmaxf(nyb, ny <= FLT_MAX ? ny : INFINITY);
                wb = fmaxf(wb, fabsf(wj) <= FLT_MAX ? fabsf(wj) : INFINITY);
            }
#pragma unroll
            for (int f = 0; f < 4; f++) {
                const float hv = cuda_ftc_tf32(v[f]);
                yp[j / 8][(j % 8) * 4 + f] = make_float2(hv, cuda_ftc_tf32(__fsub_rn(v[f], hv)));
            }
            ws[j] = wj;
        }
        const float ny_max = cuda_matvec_block_max(nyb, slots[0]);
        const float w_max = cuda_matvec_block_max(wb, slots[1]);
        /* Uniform over the block (the same values everywhere); NaN fails every test. */
        const float nsum = nx_max + ny_max;
        const bool range = 2.0f * k * nsum <= GK_MATVEC_FACT_MAX_EXPONENT && w_max <= fact_cap;
        const bool tc = range && tcoef * nsum <= GK_MATVEC_FACT_MAX_ERROR;
        const bool fmaform = !tc && range && ecoef * nsum <= GK_MATVEC_FACT_MAX_ERROR;
        /* The groups of the chunk that hold a duplicate of each row (differences need none). */
        unsigned int dmask[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const size_t row = row_of(mt, h);
                float xc[D];
#pragma unroll
                for (int l = 0; l < D; l++)
                    xc[l] = __fsub_rn(row < m ? x[row * D + l] : 0.0f, ctr[l]);
                dmask[mt][h] =
                    tc || fmaform ? cuda_matvec_dup_groups(dup, cuda_matvec_dup_hash<D>(xc)) : 0u;
            }
        /* Every probe is done, and every staging write, before the table is cleared and the
         * points are restaged. */
        __syncthreads();
        for (int i = tid; i < GK_MATVEC_DUP_SLOTS; i += GK_CUDA_THREADS)
            dup[i] = 0u;
        if (!tc) {
            for (int j = tid; j < CH; j += GK_CUDA_THREADS) {
                float v[4] = {0.0f, 0.0f, 0.0f, fmaform ? -100.0f : 0.0f};
                if (j < jn) {
                    float ny = 0.0f;
#pragma unroll
                    for (int l = 0; l < D; l++) {
                        const float yl = __ldg(y + (j0 + j) * D + l);
                        v[l] = fmaform ? __fsub_rn(yl, ctr[l]) : yl;
                        ny = fmaf(v[l], v[l], ny);
                    }
                    v[3] = fmaform ? __fmul_rn(-k, ny) : __ldg(w + j0 + j);
                }
                pts[j] = make_float4(v[0], v[1], v[2], v[3]);
            }
            __syncthreads();
        }
        /* The FMA form's x' and the raw rows, for those forms. */
        float xo[MT][2][D];
        if (!tc) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const size_t row = row_of(mt, h);
#pragma unroll
                    for (int l = 0; l < D; l++) {
                        const float xv = row < m ? x[row * D + l] : 0.0f;
                        xo[mt][h][l] = fmaform ? __fmul_rn(2.0f * k, __fsub_rn(xv, ctr[l])) : xv;
                    }
                }
        }
        const int ngroups = (jn + GK_FTC_GROUP - 1) / GK_FTC_GROUP;
        for (int grp = 0; grp < ngroups; grp++) {
            float p[MT][2];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
                p[mt][0] = p[mt][1] = 0.0f;
            if (tc) {
#pragma unroll
                for (int q = 0; q < GK_FTC_GROUP / 8; q++) {
                    const int nt = grp * (GK_FTC_GROUP / 8) + q;
                    const float2 yv = yp[nt][lane];
                    const float2 wv = *reinterpret_cast<const float2 *>(&ws[nt * 8 + 2 * t]);
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        float d4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                        cuda_ftc_mma(d4, ah[mt][0], ah[mt][1], yv.y);
                        cuda_ftc_mma(d4, al[mt][0], al[mt][1], yv.x);
                        cuda_ftc_mma(d4, ah[mt][0], ah[mt][1], yv.x);
#pragma unroll
                        for (int r = 0; r < 4; r++) {
                            const float e = mt == 0 ? cuda_exp2_poly(d4[r]) : cuda_ex2(d4[r]);
                            p[mt][r / 2] = fmaf(e, r % 2 ? wv.y : wv.x, p[mt][r / 2]);
                        }
                    }
                }
            } else {
                /* The same 16 points of the group per lane, one at a time. */
                for (int q = 0; q < GK_FTC_GROUP / 4; q++) {
                    const int j = grp * GK_FTC_GROUP + cuda_ftc_col(q, t);
                    const float4 pv = pts[j];
                    const float wj = fmaform ? ws[j] : pv.w;
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            float e;
                            if (fmaform) {
                                const float tt = fmaf(
                                    xo[mt][h][0], pv.x,
                                    fmaf(xo[mt][h][1], pv.y, fmaf(xo[mt][h][2], pv.z, pv.w)));
                                e = cuda_ex2(tt);
                            } else {
                                float dist = 0.0f;
                                const float dv[3] = {xo[mt][h][0] - pv.x, xo[mt][h][1] - pv.y,
                                                     xo[mt][h][2] - pv.z};
#pragma unroll
                                for (int l = 0; l < D; l++)
                                    dist = fmaf(dv[l], dv[l], dist);
                                e = j < jn ? cuda_rbf_value<false>(dist, c) : 0.0f;
                            }
                            p[mt][h] = fmaf(e, wj, p[mt][h]);
                        }
                }
            }
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    float v = tc || fmaform ? p[mt][h] * fa[mt][h] : p[mt][h];
                    if ((dmask[mt][h] >> (2 * grp)) & 3u) {
                        const size_t row = row_of(mt, h);
                        v = row < m ? cuda_ftc_redo(x + row * D, y, w, j0 + grp * GK_FTC_GROUP,
                                                    n, t, c)
                                    : 0.0f;
                    }
                    s[mt][h] += (double)v;
                }
        }
    }

    /* The four lanes of a row (fixed butterfly). */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            double v = s[mt][h];
            v += __shfl_xor_sync(0xffffffffu, v, 1);
            v += __shfl_xor_sync(0xffffffffu, v, 2);
            const size_t row = row_of(mt, h);
            if (t == 0 && row < m) {
                if (splits == 1)
                    out[row] = (float)v;
                else
                    partial[(size_t)sp * m + row] = v;
            }
        }
}

#endif /* GK_CUDA_RBF_MATVEC_FACTTC_CUH */
