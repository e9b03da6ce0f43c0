/* SPDX-License-Identifier: MIT */
/* cuda_rbf_gemm.cu - float32 rbf_matrix's tensor-core form with the products on cuBLASLt (Hopper
 * wgmma kernels) straight into the output, then one in-place epilogue under a rounding bound. */
#include "cuda_rbf_gemm.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <cuda_fp16.h>

#include "cuda_rbf_tc_mma.cuh"
#include "cuda_rbf_tile.cuh"

/* ------------------------------------------------------------------------------------------
 * The form. cuda_rbf_tc.cu centers the rows (x~ = fl(x - c), y~ = fl(y - c), squared norms
 * nx, ny in double, rounded to float). Each centered row v is scaled by 2^e, e = 14 -
 * ilogb(max_l |v_l|) (exact: a power of two, the largest scaled value in [2^14, 2^15)), and
 * each scaled value w split into fp16 numbers h = fp16(w), l = fp16(w - h) (round to nearest;
 * w - h is exact in float32), 22 significant bits together, as 3xTF32, at twice tf32's rate;
 * fp16 products are exact in float32. The operand rows (3 dp halves each, d padded with zeros
 * to dp, a multiple of 32) are [h | l | h] for x and [l | h | h] for y, so one GEMM over the 3 dp
 * features (fp16 in, float32 accumulation and output) writes the output K (row-major m x n,
 * i.e. column-major n x m: D = Y^T X) as
 *     K = sum over [0, 2 dp) (h_x l_y + l_x h_y) + sum over [2 dp, 3 dp) (h_x h_y),
 * the cross terms first. Then one pass over K in place (cuda_gemm_epilogue): G = 2^-(e_x + e_y)
 * K, D = nx + ny - 2 G, the bound's test, exp2. The algorithm is cuBLASLt's first without
 * workspace, split-K or a reduction scheme (CUBLASLT_ALGO_CONFIG_SPLITK_NUM <= 1,
 * CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME none: checked), so each entry is one chain of wgmma
 * block FMAs over its CTA's k-blocks, which the bound takes in ascending order (as GEMM main
 * loops run; cuBLAS does not document it): the cross terms sum in the accumulator before the
 * hi.hi products enter, and the hi.hi sum sees the cross sum as one leaf, as in the fused
 * kernel's separate accumulators. An order-independent bound (hi.hi products through every
 * cross addition, kappa ~ 9 dp) fails every entry at gamma = 1 / d on U[0, 1) rows at d = 256
 * (float64 model of the bound); two GEMMs (hi.hi, then the cross terms with beta = 1: order-free)
 * took 1.99 ms there against 1.43 for one (H200, bench/RESULTS.md): the second GEMM reads and
 * writes the output again.
 *
 * Rounding bound (u = 2^-24, s = nx + ny; the model of cuda_rbf_tc.cu: every addition errs by
 * up to 2u relative to its result, a block FMA of b >= 4 products costs b + 2 additions, so a
 * sum of N leaves in any order or tree, split-K and stream-K reductions in float32 included,
 * errs by at most 2u (1.5 N + 2) times the sum of their magnitudes):
 *  - centering: 4u (1 + u) s;
 *  - splitting: w = h + l + r with |r| <= 2^-22 |w| + 2^-25 (fp16 subnormals); were the tensor
 *    cores to flush subnormal inputs, at most 2^-14 (1 + 2^-9) more per value; scaled back, the
 *    absolute part is at most 1.002 2^-28 max|v| <= 1.002 2^-28 |v| per feature. The dropped
 *    and lost terms of G are then at most 3.003 2^-22 sum |x~_l||y~_l| + 1.005 2^-28 sqrt(d)
 *    (|x~||y~| twice), in D 12.012 u s + 0.126 sqrt(dp) u s;
 *  - accumulation: the cross terms, N = 2 dp leaves of magnitude <= 2^-10 1.003 s / 2: 2u (3 dp
 *    + 2) 2^-10 1.003 s in D; then hi.hi, N = dp + 1 leaves (the cross sum one of them) of total
 *    magnitude <= 1.002 s / 2: 2u (1.5 dp + 3.5) 1.002 s. No underflow inside the GEMM (scaled
 *    products are at least 2^-48 or 0) and no overflow (scaled sums below dp 2^31);
 *  - the scale 2^-(e_x + e_y): exact, or an underflow of at most 2^-149;
 *  - the epilogue in float: nx, ny rounded, t = nx + ny, D = fma(-2, G, t): 4.01 u s.
 * Hence kappa = 3.02 dp + 0.13 sqrt(dp) + 30, below the fused fp16 kernel's 3.02 dp + 31 +
 * 0.25 sqrt(dp), which cuda_rbf_tc.cu applies to both, with its eabs and keep test
 * (cuda_tc_keep).
 * Every entry failing the test, every entry of a row with a non-finite norm (its operands are
 * written as zeros) and every entry with D^ <= e (identical rows: exactly 1) is computed again
 * from differences of the raw rows: one warp per entry, or the whole tile by
 * cuda_tc_differences where more than 1 / GK_RBF_TC_TILE_SHARE of its entries fail.
 * ---------------------------------------------------------------------------------------- */
/* From this many features (d = 128 measured slower than the fused kernel with two GEMMs, not
 * yet with one) and this many entries (16384^2 x 256 faster, 4096^2 x 256 slower: 0.28 against
 * 0.22 ms, the host's 0.27 ms a call building the graph), unless GK_RBF_TC=gemm-forced. */
#define GK_RBF_GEMM_MIN_D 256
#define GK_RBF_GEMM_MIN_ENTRIES ((double)(1u << 28))
/* The epilogue's tile, as cuda_tc_differences takes it (bn = 128), and the rows a thread
 * loads at once. */
#define GK_GEMM_TILE 128
#define GK_GEMM_ROWS 4

size_t gk__cuda_rbf_gemm_operand_bytes(size_t rows, size_t dp)
{
    /* 3 dp halves a row (a multiple of 192 bytes), then one int exponent a row. */
    return rows * 3 * dp * sizeof(__half) + rows * sizeof(int);
}

/* One warp per row of x, then of y: the centered row's maximum and squared norm (double), then
 * its scaled split operands and exponent. A row whose norm is not finite (NaN or inf in the
 * data, or a norm overflowing float32) gets zero operands: its entries fail the bound. Nothing
 * where the sample chose differences. */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_gemm_split(size_t m, size_t n, size_t d, size_t dp, const float *__restrict__ x,
                    const float *__restrict__ y, const float *__restrict__ center,
                    __half *__restrict__ xs, __half *__restrict__ ys, int *__restrict__ ex,
                    int *__restrict__ ey, float *__restrict__ nx, float *__restrict__ ny,
                    cuda_tc_gate gate)
{
    const cuda_split_row row = cuda_split_row_of(m, n, d, x, y, gate);
    if (!row.ok)
        return; /* the whole warp */
    const int lane = threadIdx.x % 32;
    __half *dst = (row.is_x ? xs : ys) + row.r * 3 * dp;
    double acc = 0.0;
    float most = 0.0f;
    for (size_t l = lane; l < d; l += 32) {
        const float v = row.src[l] - center[l];
        acc = fma((double)v, (double)v, acc);
        most = fmaxf(most, fabsf(v));
    }
    for (int off = 16; off > 0; off /= 2) {
        acc += __shfl_xor_sync(0xffffffffu, acc, off);
        most = fmaxf(most, __shfl_xor_sync(0xffffffffu, most, off));
    }
    const float norm = (float)acc;
    const bool finite = isfinite(norm);
    const int e = finite && most > 0.0f ? 14 - ilogbf(most) : 0;
    /* x: [h | l | h], y: [l | h | h] */
    __half *dh0 = dst + (row.is_x ? 0 : dp), *dl = dst + (row.is_x ? dp : 0), *dh1 = dst + 2 * dp;
    for (size_t l = lane; l < dp; l += 32) {
        const float w = finite && l < d ? ldexpf(row.src[l] - center[l], e) : 0.0f;
        const __half h = __float2half_rn(w);
        const __half lo = __float2half_rn(w - __half2float(h));
        dh0[l] = h;
        dl[l] = lo;
        dh1[l] = h;
    }
    if (lane == 0) {
        (row.is_x ? nx : ny)[row.r] = norm;
        (row.is_x ? ex : ey)[row.r] = e;
    }
}

/* 2^-e g: one exact multiplication where 2^-e is a normal float, else ldexpf (underflow). */
__device__ __forceinline__ float cuda_gemm_unscale(float g, int e)
{
    return e >= -126 && e <= 126 ? g * __int_as_float((127 - e) << 23) : ldexpf(g, -e);
}

/* One block per 128 x 128 tile of K in place: the products to kernel values under the bound;
 * a tile with more than 1 / GK_RBF_TC_TILE_SHARE of its entries failing is listed for
 * cuda_tc_differences, otherwise each failing entry is recomputed by one warp from
 * differences. Thread t takes the 4 columns 4 (t % 32) .. of rows t / 32 + 8 i. */
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_gemm_epilogue(cuda_tc_params p, size_t m, unsigned int ntn, const int *__restrict__ ex,
                       const int *__restrict__ ey, float *__restrict__ k, bool vec4,
                       unsigned int *__restrict__ redo_tiles, unsigned int *redo_count,
                       cuda_tc_gate gate)
{
    enum { MOST = GK_GEMM_TILE * GK_GEMM_TILE / GK_RBF_TC_TILE_SHARE };
    __shared__ unsigned short failed[MOST];
    __shared__ unsigned int nfailed;
    if (!gate.tensor_cores())
        return;
    if (threadIdx.x == 0)
        nfailed = 0;
    __syncthreads();
    const unsigned int t = blockIdx.x;
    const size_t row0 = (size_t)(t / ntn) * GK_GEMM_TILE;
    const size_t col0 = (size_t)(t % ntn) * GK_GEMM_TILE;
    const int tc = (int)threadIdx.x % 32 * 4, tr = (int)threadIdx.x / 32;
    float nyv[4];
    int eyv[4];
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const size_t col = col0 + tc + e;
        nyv[e] = col < p.n ? p.ny[col] : 0.0f;
        eyv[e] = col < p.n ? ey[col] : 0;
    }
    const bool full = vec4 && col0 + tc + 4 <= p.n;
    /* GK_GEMM_ROWS rows at a time, their loads issued together. */
    for (int i0 = tr; i0 < GK_GEMM_TILE; i0 += GK_GEMM_ROWS * (GK_CUDA_THREADS / 32)) {
        float v[GK_GEMM_ROWS][4];
#pragma unroll
        for (int q = 0; q < GK_GEMM_ROWS; q++) {
            const size_t row = row0 + i0 + q * (GK_CUDA_THREADS / 32);
            const float *src = k + row * p.n + col0 + tc;
            if (row < m && full) {
                const float4 f = __ldcs((const float4 *)src);
                v[q][0] = f.x;
                v[q][1] = f.y;
                v[q][2] = f.z;
                v[q][3] = f.w;
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    v[q][e] = row < m && col0 + tc + e < p.n ? __ldcs(src + e) : 0.0f;
            }
        }
#pragma unroll
        for (int q = 0; q < GK_GEMM_ROWS; q++) {
            const int i = i0 + q * (GK_CUDA_THREADS / 32);
            const size_t row = row0 + i;
            if (row >= m)
                break;
            const float nxv = p.nx[row];
            const int exv = ex[row];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float tn = nxv + nyv[e];
                const float dh = fmaf(-2.0f, cuda_gemm_unscale(v[q][e], exv + eyv[e]), tn);
                const float kv = cuda_ex2(dh * p.c);
                if (!cuda_tc_keep(p, dh, tn, kv) && col0 + tc + e < p.n) {
                    const unsigned int at = atomicAdd(&nfailed, 1u);
                    if (at < MOST)
                        failed[at] = (unsigned short)(i * GK_GEMM_TILE + tc + e);
                }
                v[q][e] = kv;
            }
            float *dst = k + row * p.n + col0 + tc;
            if (full) {
                __stcs((float4 *)dst, make_float4(v[q][0], v[q][1], v[q][2], v[q][3]));
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (col0 + tc + e < p.n)
                        __stcs(dst + e, v[q][e]);
            }
        }
    }
    __syncthreads(); /* the failures are listed, the tile's values stored */
    const unsigned int count = nfailed;
    if (count > MOST) {
        if (threadIdx.x == 0)
            redo_tiles[atomicAdd(redo_count, 1u)] = t;
        return;
    }
    const int lane = (int)threadIdx.x % 32;
    for (unsigned int f = threadIdx.x / 32; f < count; f += GK_CUDA_THREADS / 32) {
        const size_t row = row0 + failed[f] / GK_GEMM_TILE, col = col0 + failed[f] % GK_GEMM_TILE;
        const float dist = cuda_tc_warp_distance(p.x + row * p.d, p.y + col * p.d, p.d, lane);
        if (lane == 0)
            k[row * p.n + col] = cuda_rbf_value<false>(dist, p.c);
    }
}

/* The largest power of two (at most 256) dividing the address: cuBLASLt's heuristics assume
 * 256-byte aligned operands unless told. */
static uint32_t cuda_gemm_alignment(const void *ptr)
{
    uint32_t a = 256;
    while (a > 1 && (uintptr_t)ptr % a != 0)
        a /= 2;
    return a;
}

/* The descriptors of one product: D (column-major n x m, ld n, float32) = A^T B with A and B
 * column-major kd x n and kd x m fp16 (rows of the operands, ld 3 dp), float32 accumulation. */
struct cuda_gemm_desc {
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t a = NULL, b = NULL, c = NULL;
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    cuda_gemm_desc(size_t m, size_t n, size_t kd, size_t ld)
    {
        const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        status = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
        if (status == CUBLAS_STATUS_SUCCESS)
            status =
                cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
        if (status == CUBLAS_STATUS_SUCCESS)
            status =
                cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
        if (status == CUBLAS_STATUS_SUCCESS)
            status = cublasLtMatrixLayoutCreate(&a, CUDA_R_16F, kd, n, (int64_t)ld);
        if (status == CUBLAS_STATUS_SUCCESS)
            status = cublasLtMatrixLayoutCreate(&b, CUDA_R_16F, kd, m, (int64_t)ld);
        if (status == CUBLAS_STATUS_SUCCESS)
            status = cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, n, m, (int64_t)n);
    }
    ~cuda_gemm_desc()
    {
        if (c != NULL)
            cublasLtMatrixLayoutDestroy(c);
        if (b != NULL)
            cublasLtMatrixLayoutDestroy(b);
        if (a != NULL)
            cublasLtMatrixLayoutDestroy(a);
        if (op != NULL)
            cublasLtMatmulDescDestroy(op);
    }
};

/* The value of an algorithm's configuration attribute (an integer of at most 8 bytes). */
static uint64_t cuda_gemm_config(const cublasLtMatmulAlgo_t &algo,
                                 cublasLtMatmulAlgoConfigAttributes_t at)
{
    uint64_t v = 0;
    size_t got = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, at, NULL, 0, &got) == CUBLAS_STATUS_SUCCESS &&
        got <= sizeof v)
        (void)cublasLtMatmulAlgoConfigGetAttribute(&algo, at, &v, got, &got);
    return v;
}

/* cuBLASLt's first algorithm for the product without workspace and without split-K (one chain
 * of accumulation per entry, as the bound takes it), for operands aligned as align_ab and k;
 * false where it offers none. */
static bool cuda_gemm_algo(gk_cuda_state *s, size_t m, size_t n, size_t kd, size_t ld,
                           uint32_t align_ab, const float *k, cublasLtMatmulAlgo_t *algo)
{
    cuda_gemm_desc g(m, n, kd, ld);
    if (g.status != CUBLAS_STATUS_SUCCESS)
        return false;
    cublasLtMatmulPreference_t pref = NULL;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS)
        return false;
    const uint64_t ws = 0;
    const uint32_t ac = cuda_gemm_alignment(k);
    bool ok = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &ws, sizeof ws) == CUBLAS_STATUS_SUCCESS;
    const cublasLtMatmulPreferenceAttributes_t al[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && ok; i++) {
        const uint32_t v = i < 2 ? align_ab : ac;
        ok = cublasLtMatmulPreferenceSetAttribute(pref, al[i], &v, sizeof v) ==
             CUBLAS_STATUS_SUCCESS;
    }
    enum { WANT = 8 };
    cublasLtMatmulHeuristicResult_t res[WANT];
    int found = 0;
    if (ok)
        ok = cublasLtMatmulAlgoGetHeuristic((cublasLtHandle_t)s->blas, g.op, g.a, g.b, g.c, g.c,
                                            pref, WANT, res, &found) == CUBLAS_STATUS_SUCCESS;
    cublasLtMatmulPreferenceDestroy(pref);
    for (int i = 0; ok && i < found; i++)
        if (res[i].state == CUBLAS_STATUS_SUCCESS && res[i].workspaceSize == 0 &&
            cuda_gemm_config(res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM) <= 1 &&
            cuda_gemm_config(res[i].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME) ==
                CUBLASLT_REDUCTION_SCHEME_NONE) {
            *algo = res[i].algo;
            return true;
        }
    return false;
}

/* Only on request, GK_RBF_TC=gemm or gemm-forced (README): the fused kernel of cuda_rbf_tc_mma.cuh
 * takes these calls otherwise. On the H200 this form is the faster (16384^2 x 256: 1.50 against
 * 1.77 ms), but compute-sanitizer's racecheck reports a shared-memory hazard inside every kernel
 * cuBLASLt offers for the product (its eight heuristic nvjet_sm90_hss kernels, 480-520 instances
 * each, at 1200^2 x 768), and the one family it does not flag (algorithm id 21) takes 1.14 ms for
 * the GEMM alone against nvjet's 0.58-0.69 (bench/RESULTS.md, 2026-12-02): the default stays on
 * the kernel the sanitizers pass. */
static bool cuda_gemm_env(void)
{
    const char *v = getenv("GK_RBF_TC");
    return v != NULL && (strcmp(v, "gemm") == 0 || strcmp(v, "gemm-forced") == 0);
}

bool gk__cuda_rbf_gemm_plan(gk_cuda_state *s, size_t m, size_t n, size_t d, size_t dp, bool forced,
                            const void *xs, const void *ys, const float *k, cuda_gemm_plan *plan)
{
    if (d < GK_RBF_GEMM_MIN_D || !cuda_gemm_env() ||
        (!forced && (double)m * (double)n < GK_RBF_GEMM_MIN_ENTRIES))
        return false;
    const uint32_t a = std::min(cuda_gemm_alignment(xs), cuda_gemm_alignment(ys));
    return cuda_gemm_algo(s, m, n, 3 * dp, 3 * dp, a, k, &plan->algo);
}

/* The condition of the products' graph: whether the sample chose the tensor cores. */
__global__ void cuda_gemm_condition(cudaGraphConditionalHandle h, cuda_tc_gate gate)
{
    cudaGraphSetConditional(h, gate.tensor_cores() ? 1u : 0u);
}

/* k (column-major n x m) = a^T b on s's stream, as planned. */
static cublasStatus_t cuda_gemm_matmul(gk_cuda_state *s, const cuda_gemm_desc &g,
                                       const cuda_gemm_plan &plan, const __half *a, const __half *b,
                                       float *k)
{
    const float alpha = 1.0f, beta = 0.0f;
    return cublasLtMatmul((cublasLtHandle_t)s->blas, g.op, &alpha, a, g.a, b, g.b, &beta, k, g.c, k,
                          g.c, &plan.algo, NULL, 0, s->stream);
}

/* The products where the gate says tensor cores: with a sample, a graph of the condition's
 * kernel and an IF node around the GEMM captured from s's stream (the host cannot wait for the
 * sample, and the GEMM's cost is what a rejected call must not pay); without one, the GEMM. */
static gk_status cuda_gemm_products(gk_cuda_state *s, size_t m, size_t n, size_t dp,
                                    const cuda_gemm_plan &plan, const __half *xh, const __half *yh,
                                    float *k, cuda_tc_gate gate)
{
    cuda_gemm_desc g(m, n, 3 * dp, 3 * dp);
    if (g.status != CUBLAS_STATUS_SUCCESS)
        return gk__cublas_check(g.status, "cublasLt descriptors (rbf_matrix products)");
    /* A stream that cannot be captured (the legacy default stream, or one a caller is
     * capturing) takes the GEMM directly: correct, the rejected call then pays for it. */
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    const bool plain = gate.fallbacks == NULL || s->stream == NULL ||
                       s->stream == cudaStreamLegacy || s->stream == cudaStreamPerThread ||
                       cudaStreamIsCapturing(s->stream, &capturing) != cudaSuccess ||
                       capturing != cudaStreamCaptureStatusNone;
    if (plain)
        return gk__cublas_check(cuda_gemm_matmul(s, g, plan, yh, xh, k),
                                "cublasLtMatmul(rbf_matrix products)");
    cudaGraph_t graph = NULL, body = NULL;
    cudaGraphExec_t exec = NULL;
    cudaGraphConditionalHandle h;
    cudaGraphNode_t cond, node;
    gk_status r = gk__cuda_check(cudaGraphCreate(&graph, 0), "cudaGraphCreate");
    if (r == GK_OK)
        r = gk__cuda_check(cudaGraphConditionalHandleCreate(&h, graph, 0, 0),
                           "cudaGraphConditionalHandleCreate");
    if (r == GK_OK) {
        void *args[2] = {&h, &gate};
        cudaKernelNodeParams kp = {};
        kp.func = (void *)cuda_gemm_condition;
        kp.gridDim = dim3(1);
        kp.blockDim = dim3(1);
        kp.kernelParams = args;
        r = gk__cuda_check(cudaGraphAddKernelNode(&cond, graph, NULL, 0, &kp),
                           "cudaGraphAddKernelNode");
    }
    if (r == GK_OK) {
        cudaGraphNodeParams np = {};
        np.type = cudaGraphNodeTypeConditional;
        np.conditional.handle = h;
        np.conditional.type = cudaGraphCondTypeIf;
        np.conditional.size = 1;
        r = gk__cuda_check(cudaGraphAddNode(&node, graph, &cond, NULL, 1, &np), "cudaGraphAddNode");
        body = np.conditional.phGraph_out[0];
    }
    if (r == GK_OK)
        r = gk__cuda_check(cudaStreamBeginCaptureToGraph(s->stream, body, NULL, NULL, 0,
                                                         cudaStreamCaptureModeThreadLocal),
                           "cudaStreamBeginCaptureToGraph");
    if (r == GK_OK) {
        const cublasStatus_t e = cuda_gemm_matmul(s, g, plan, yh, xh, k);
        const gk_status c =
            gk__cuda_check(cudaStreamEndCapture(s->stream, &body), "cudaStreamEndCapture");
        r = gk__cublas_check(e, "cublasLtMatmul(rbf_matrix products, captured)");
        if (r == GK_OK)
            r = c;
    }
    if (r == GK_OK)
        r = gk__cuda_check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    if (r == GK_OK)
        r = gk__cuda_check(cudaGraphLaunch(exec, s->stream), "cudaGraphLaunch");
    /* An executable graph destroyed while it runs is freed when it completes. */
    if (exec != NULL)
        (void)cudaGraphExecDestroy(exec);
    if (graph != NULL)
        (void)cudaGraphDestroy(graph);
    return r;
}

gk_status gk__cuda_rbf_gemm(gk_cuda_state *s, size_t m, size_t dp, const cuda_tc_params &p,
                            const cuda_gemm_plan &plan, const float *center, void *xs, void *ys,
                            float *nx, float *ny, float *k, unsigned int *flags, cuda_tc_gate gate)
{
    const size_t n = p.n, ld = 3 * dp;
    __half *xh = (__half *)xs, *yh = (__half *)ys;
    int *ex = (int *)(xh + m * ld), *ey = (int *)(yh + n * ld);
    const size_t warps = GK_CUDA_THREADS / 32;
    cuda_gemm_split<<<(unsigned int)((m + n + warps - 1) / warps), GK_CUDA_THREADS, 0, s->stream>>>(
        m, n, p.d, dp, p.x, p.y, center, xh, yh, ex, ey, nx, ny, gate);
    gk_status r = gk__cuda_launched("cuda_gemm_split");
    if (r == GK_OK)
        r = cuda_gemm_products(s, m, n, dp, plan, xh, yh, k, gate);
    if (r != GK_OK)
        return r;
    const size_t ntn = (n + GK_GEMM_TILE - 1) / GK_GEMM_TILE;
    const size_t tiles = (m + GK_GEMM_TILE - 1) / GK_GEMM_TILE * ntn;
    cuda_gemm_epilogue<<<(unsigned int)tiles, GK_CUDA_THREADS, 0, s->stream>>>(
        p, m, (unsigned int)ntn, ex, ey, k, n % 4 == 0 && (uintptr_t)k % 16 == 0, flags + 2,
        flags + 1, gate);
    return gk__cuda_launched("cuda_gemm_epilogue");
}
