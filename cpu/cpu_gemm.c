/* SPDX-License-Identifier: MIT */
/* cpu_gemm.c - row-major gemm through OpenBLAS's CBLAS interface, and the k = 0 case. */
#include <cblas.h>

#include "cpu_internal.h"
#include "error.h"

/* OpenBLAS runs its own thread pool, sized by OPENBLAS_NUM_THREADS; the context's cpu_threads
 * is not forced on it (openblas_set_num_threads is process-wide and would race with other
 * contexts). Its kernels are picked at load time from the CPU model: Debian 12's 0.3.21 does
 * not know Sapphire Rapids and falls back to "Prescott" (SSE3), 5x slower at sgemm 4096 on a
 * 16-core host than with OPENBLAS_CORETYPE=SkylakeX set in the environment. Sizes pass through
 * blasint, 32 bits in the usual build: m, n and k are cut into pieces that fit, and a matrix
 * whose row length does not fit is cut into pieces of one stored row, whose ld CBLAS never uses
 * (a buffer with two such rows already holds more than 2^31 elements, so the pieces are few). */
#define GK_BLASINT_MAX                                                                             \
    (sizeof(blasint) >= sizeof(size_t) ? (size_t)SIZE_MAX >> 1                                     \
                                       : ((size_t)1 << (8 * sizeof(blasint) - 1)) - 1)

/* The leading dimension to pass for a piece of `cols` columns: ld itself when it fits, else the
 * piece has one stored row and its ld only has to satisfy CBLAS's ld >= max(1, cols). */
static blasint piece_ld(size_t ld, size_t cols)
{
    return (blasint)(ld <= GK_BLASINT_MAX ? ld : cols);
}

/* The two dtypes' kernels, written once (BLIS-style) since they differ only in type and in
 * which CBLAS routine they call.
 * k = 0: C = beta * C over the m x n addressed elements. Not left to CBLAS: its argument
 * checks want lda >= max(1, k), which a valid k = 0 call need not meet, and it reports a
 * violation by printing. beta = 0 stores zeros without reading C, which may hold NaN.
 * k > 0: pieces of m (rows of C and of A not transposed), n (columns of C, rows of B
 * transposed) and k (rows of A transposed and of B not transposed); pieces of k after the
 * first accumulate into C. */
#define GK_CPU_GEMM_KERNELS(SUFFIX, T, CBLAS_GEMM)                                               \
    static void cpu_gemm_k0_##SUFFIX(size_t m, size_t n, T beta, T *c, size_t ldc)               \
    {                                                                                            \
        for (size_t i = 0; i < m; i++)                                                           \
            for (size_t j = 0; j < n; j++)                                                       \
                c[i * ldc + j] = beta == (T)0 ? (T)0 : beta * c[i * ldc + j];                    \
    }                                                                                            \
                                                                                                 \
    static void cpu_gemm_##SUFFIX(gk_transpose ta, gk_transpose tb, size_t m, size_t n, size_t k,\
                                  T alpha, const T *a, size_t lda, const T *b, size_t ldb,       \
                                  T beta, T *c, size_t ldc)                                      \
    {                                                                                            \
        const size_t max = GK_BLASINT_MAX;                                                       \
        size_t pm = ldc > max || (ta == GK_NO_TRANS && lda > max) ? 1 : max;                     \
        size_t pn = tb == GK_TRANS && ldb > max ? 1 : max;                                       \
        size_t pk = (ta == GK_TRANS && lda > max) || (tb == GK_NO_TRANS && ldb > max) ? 1 : max; \
        for (size_t i0 = 0; i0 < m; i0 += pm) {                                                  \
            size_t mi = m - i0 < pm ? m - i0 : pm;                                               \
            for (size_t j0 = 0; j0 < n; j0 += pn) {                                              \
                size_t nj = n - j0 < pn ? n - j0 : pn;                                           \
                for (size_t p0 = 0; p0 < k; p0 += pk) {                                          \
                    size_t kp = k - p0 < pk ? k - p0 : pk;                                       \
                    const T *ap = ta == GK_TRANS ? a + p0 * lda + i0 : a + i0 * lda + p0;        \
                    const T *bp = tb == GK_TRANS ? b + j0 * ldb + p0 : b + p0 * ldb + j0;        \
                    CBLAS_GEMM(CblasRowMajor, ta == GK_TRANS ? CblasTrans : CblasNoTrans,        \
                               tb == GK_TRANS ? CblasTrans : CblasNoTrans, (blasint)mi,          \
                               (blasint)nj, (blasint)kp, alpha, ap,                              \
                               piece_ld(lda, ta == GK_TRANS ? mi : kp), bp,                      \
                               piece_ld(ldb, tb == GK_TRANS ? kp : nj), p0 == 0 ? beta : (T)1,   \
                               c + i0 * ldc + j0, piece_ld(ldc, nj));                            \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }

GK_CPU_GEMM_KERNELS(f32, float, cblas_sgemm)
GK_CPU_GEMM_KERNELS(f64, double, cblas_dgemm)

gk_status gk__cpu_gemm(void *st, gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m, size_t n,
                       size_t k, double alpha, const void *a, size_t lda, const void *b, size_t ldb,
                       double beta, void *c, size_t ldc)
{
    (void)st;
    switch (t) {
    case GK_FLOAT32:
        if (k == 0)
            cpu_gemm_k0_f32(m, n, (float)beta, c, ldc);
        else
            cpu_gemm_f32(ta, tb, m, n, k, (float)alpha, a, lda, b, ldb, (float)beta, c, ldc);
        return GK_OK;
    case GK_FLOAT64:
        if (k == 0)
            cpu_gemm_k0_f64(m, n, beta, c, ldc);
        else
            cpu_gemm_f64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return GK_OK;
    }
    return gk__cpu_bad_dtype(t);
}
