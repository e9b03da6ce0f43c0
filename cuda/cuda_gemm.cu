/* SPDX-License-Identifier: MIT */
/* cuda_gemm.cu - row-major gemm through column-major cuBLAS, and C = beta*C for k = 0. */
#include "cuda_internal.h"

/* C = beta * C over the m x n addressed part; beta = 0 writes zeros without reading C (BLAS
 * convention: C may hold NaN). Rows advance by ldc, so padding is never written. */
template <typename T>
__global__ void __launch_bounds__(GK_CUDA_THREADS)
    cuda_gemm_scale(size_t m, size_t n, T beta, T *c, size_t ldc)
{
    for (size_t i = blockIdx.y; i < m; i += gridDim.y) {
        T *row = c + i * ldc;
        for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
             j += (size_t)gridDim.x * blockDim.x)
            row[j] = beta == T(0) ? T(0) : beta * row[j];
    }
}

template <typename T>
static gk_status cuda_gemm_scale_launch(gk_cuda_state *s, size_t m, size_t n, T beta, T *c,
                                        size_t ldc)
{
    /* beta = 1 leaves every element as it is (x * 1 == x, NaN included). */
    if (beta == T(1))
        return GK_OK;
    unsigned int rows = (unsigned int)(m < GK_CUDA_GRID_Y_MAX ? m : GK_CUDA_GRID_Y_MAX);
    size_t across = (size_t)s->sm_count * 8 / rows;
    dim3 grid(gk__cuda_blocks(n, GK_CUDA_THREADS, across > 0 ? across : 1), rows);
    cuda_gemm_scale<T><<<grid, GK_CUDA_THREADS, 0, s->stream>>>(m, n, beta, c, ldc);
    return gk__cuda_launched("cuda_gemm_scale");
}

static cublasStatus_t cuda_gemm_call(cublasHandle_t h, cublasOperation_t ob, cublasOperation_t oa,
                                     int64_t n, int64_t m, int64_t k, const float *alpha,
                                     const float *b, int64_t ldb, const float *a, int64_t lda,
                                     const float *beta, float *c, int64_t ldc)
{
    return cublasSgemm_64(h, ob, oa, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
}

static cublasStatus_t cuda_gemm_call(cublasHandle_t h, cublasOperation_t ob, cublasOperation_t oa,
                                     int64_t n, int64_t m, int64_t k, const double *alpha,
                                     const double *b, int64_t ldb, const double *a, int64_t lda,
                                     const double *beta, double *c, int64_t ldc)
{
    return cublasDgemm_64(h, ob, oa, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
}

template <typename T>
static gk_status cuda_gemm_run(gk_cuda_state *s, gk_transpose ta, gk_transpose tb, size_t m,
                               size_t n, size_t k, T alpha, const T *a, size_t lda, const T *b,
                               size_t ldb, T beta, T *c, size_t ldc)
{
    if (k == 0)
        return cuda_gemm_scale_launch<T>(s, m, n, beta, c, ldc);
    /* A row-major matrix with row length ld is the column-major transpose with the same ld, so
     * row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands and
     * the roles of m and n, keep each operand's own transpose flag. */
    cublasOperation_t oa = ta == GK_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t ob = tb == GK_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
    return gk__cublas_check(cuda_gemm_call(s->blas, ob, oa, (int64_t)n, (int64_t)m, (int64_t)k,
                                           &alpha, b, (int64_t)ldb, a, (int64_t)lda, &beta, c,
                                           (int64_t)ldc),
                            sizeof(T) == 4 ? "cublasSgemm_64" : "cublasDgemm_64");
}

gk_status gk__cuda_gemm(void *st, gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m, size_t n,
                        size_t k, double alpha, const void *a, size_t lda, const void *b,
                        size_t ldb, double beta, void *c, size_t ldc)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    if (t == GK_FLOAT32)
        return cuda_gemm_run<float>(s, ta, tb, m, n, k, (float)alpha, (const float *)a, lda,
                                    (const float *)b, ldb, (float)beta, (float *)c, ldc);
    if (t == GK_FLOAT64)
        return cuda_gemm_run<double>(s, ta, tb, m, n, k, alpha, (const double *)a, lda,
                                     (const double *)b, ldb, beta, (double *)c, ldc);
    return gk__cuda_bad_dtype(t);
}
