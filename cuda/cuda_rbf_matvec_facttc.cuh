/* SPDX-License-Identifier: MIT */
/* cuda_rbf_matvec_facttc.cuh - EXPERIMENT (round 1): the factorized d = 3 form with the
 * exponents t = b_j + x'_i . y~_j on TF32 tensor cores (3xTF32: one m16n8k4 and one m16n8k8
 * MMA per 16 x 8 pairs), the exp2 and the weights on the CUDA cores. Chunks take the form
 * under cuda_rbf_matvec_fact's decision (no bound of its own yet), else a slow scalar path. */
#ifndef GK_CUDA_RBF_MATVEC_FACTTC_CUH
#define GK_CUDA_RBF_MATVEC_FACTTC_CUH

#include "cuda_rbf_matvec_fact.cuh"

#define GK_FTC_MT 4
#define GK_FTC_ROWS (GK_CUDA_THREADS / 32 * GK_FTC_MT * 16)

__device__ __forceinline__ float ftc_tf32(float v)
{
    unsigned int r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return __uint_as_float(r);
}

__device__ __forceinline__ void ftc_mma4(float (&dd)[4], float a0, float a1, float b0)
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, "
                 "{%6}, {%0,%1,%2,%3};\n"
                 : "+f"(dd[0]), "+f"(dd[1]), "+f"(dd[2]), "+f"(dd[3])
                 : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(b0)));
}
__device__ __forceinline__ void ftc_mma8(float (&dd)[4], float a0, float a1, float a2, float a3,
                                         float b0)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(dd[0]), "+f"(dd[1]), "+f"(dd[2]), "+f"(dd[3])
                 : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)),
                   "r"(__float_as_uint(a3)), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b0)));
}

/* One row's sum over points j0 + q * 8 + 2t + {0, 1}, q < 4, of a group, from differences. */
__device__ __noinline__ float ftc_redo(const float *__restrict__ xrow, const float *__restrict__ y,
                                       const float *__restrict__ w, size_t jg, size_t n, int t,
                                       float c)
{
    float p = 0.0f;
    for (int q = 0; q < 4; q++)
        for (int e = 0; e < 2; e++) {
            const size_t j = jg + q * 8 + 2 * t + e;
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

/* Block: GK_FTC_ROWS rows (warp wp: rows wp * 64 + mt * 16 + h * 8 + g), chunks of 1024 points
 * of y [sp * cps, ...). Lane (g, t) holds A fragments (x'_t, 1 at t = 3) of its rows. */
template <int NPM>
__global__ void __launch_bounds__(GK_CUDA_THREADS, 2)
    cuda_rbf_matvec_fact_tc3(size_t m, size_t n, float c, float k, float ecoef,
                             const float *__restrict__ x, const float *__restrict__ y,
                             const float *__restrict__ w, unsigned int splits, size_t cps,
                             float *__restrict__ out, double *__restrict__ partial)
{
    const int D = 3, MT = GK_FTC_MT, CH = 1024;
    __shared__ float2 yp[CH / 8][32];
    __shared__ __align__(8) float ws[CH];
    __shared__ float slots[3][GK_CUDA_THREADS / 32];
    __shared__ unsigned int dup[GK_MATVEC_DUP_SLOTS];

    const int tid = threadIdx.x, lane = tid % 32, wp = tid / 32, g = lane / 4, t = lane % 4;
    const size_t rt = blockIdx.x / splits;
    const unsigned int sp = blockIdx.x % splits;
    const size_t rw = rt * GK_FTC_ROWS + (size_t)wp * 64;

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
                const size_t row = rw + mt * 16 + h * 8 + g;
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
                    float u = __fsub_rn(xr[mt][h][l], ctr[l]);
                    nx = fmaf(u, u, nx);
                    if (l == t)
                        xt = __fmul_rn(2.0f * k, u);
                }
                ah[mt][h] = ftc_tf32(xt);
                al[mt][h] = ftc_tf32(__fsub_rn(xt, ah[mt][h]));
                fa[mt][h] = cuda_ex2(__fmul_rn(-k, nx));
                if (rw + mt * 16 + h * 8 + g < m)
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
        __syncthreads();
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
                const float hv = ftc_tf32(v[f]);
                yp[j / 8][(j % 8) * 4 + f] = make_float2(hv, ftc_tf32(__fsub_rn(v[f], hv)));
            }
            ws[j] = wj;
        }
        const float ny_max = cuda_matvec_block_max(nyb, slots[0]);
        const float w_max = cuda_matvec_block_max(wb, slots[1]);
        const float nsum = nx_max + ny_max;
        const bool fact = ecoef * nsum <= GK_MATVEC_FACT_MAX_ERROR &&
                          2.0f * k * nsum <= GK_MATVEC_FACT_MAX_EXPONENT && w_max <= fact_cap;
        unsigned int dmask[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const size_t row = rw + mt * 16 + h * 8 + g;
                float xc[D];
#pragma unroll
                for (int l = 0; l < D; l++)
                    xc[l] = __fsub_rn(row < m ? x[row * D + l] : 0.0f, ctr[l]);
                dmask[mt][h] = fact ? cuda_matvec_dup_groups(dup, cuda_matvec_dup_hash<D>(xc)) : 0u;
            }
        __syncthreads();
        for (int i = tid; i < GK_MATVEC_DUP_SLOTS; i += GK_CUDA_THREADS)
            dup[i] = 0u;
        if (!fact) {
            /* Slow path: this lane's rows against points j = t mod 4 of the chunk. */
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const size_t row = rw + mt * 16 + h * 8 + g;
                    if (row >= m)
                        continue;
                    float p = 0.0f;
                    for (int j = t; j < jn; j += 4) {
                        float dist = 0.0f;
                        for (int l = 0; l < D; l++) {
                            float u = x[row * D + l] - y[(j0 + j) * D + l];
                            dist = fmaf(u, u, dist);
                        }
                        p = fmaf(cuda_rbf_value<false>(dist, c), w[j0 + j], p);
                    }
                    s[mt][h] += (double)p;
                }
            continue;
        }
        const int ngroups = (jn + 31) / 32;
        for (int grp = 0; grp < ngroups; grp++) {
            float p[MT][2];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
                p[mt][0] = p[mt][1] = 0.0f;
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int nt = grp * 4 + q;
                const float2 yv = yp[nt][lane];
                const float2 wv = *reinterpret_cast<const float2 *>(&ws[nt * 8 + 2 * t]);
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    float d4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    ftc_mma4(d4, ah[mt][0], ah[mt][1], yv.y);
                    ftc_mma8(d4, ah[mt][0], ah[mt][1], al[mt][0], al[mt][1], yv.x);
#pragma unroll
                    for (int r = 0; r < 4; r++) {
                        const float e = mt < NPM ? cuda_exp2_poly(d4[r]) : cuda_ex2(d4[r]);
                        p[mt][r / 2] = fmaf(e, r % 2 ? wv.y : wv.x, p[mt][r / 2]);
                    }
                }
            }
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    float v = p[mt][h] * fa[mt][h];
                    if ((dmask[mt][h] >> grp) & 1u) {
                        const size_t row = rw + mt * 16 + h * 8 + g;
                        v = row < m ? ftc_redo(x + row * D, y, w, j0 + grp * 32, n, t, c) : 0.0f;
                    }
                    s[mt][h] += (double)v;
                }
        }
    }

#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            double v = s[mt][h];
            v += __shfl_xor_sync(0xffffffffu, v, 1);
            v += __shfl_xor_sync(0xffffffffu, v, 2);
            const size_t row = rw + mt * 16 + h * 8 + g;
            if (t == 0 && row < m) {
                if (splits == 1)
                    out[row] = (float)v;
                else
                    partial[(size_t)sp * m + row] = v;
            }
        }
}

#endif /* GK_CUDA_RBF_MATVEC_FACTTC_CUH */
