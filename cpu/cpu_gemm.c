/* SPDX-License-Identifier: MIT */
/* cpu_gemm.c - row-major gemm through OpenBLAS's CBLAS interface, its threads sized to the team. */
#include <cblas.h>
#include <pthread.h>

#include "cpu_internal.h"
#include "error.h"

/* OpenBLAS's kernels are picked at load time from the CPU model: Debian 12's 0.3.21 does not
 * know Sapphire Rapids and falls back to "Prescott" (SSE3), 5x slower at sgemm 4096 on a
 * 16-core host than with OPENBLAS_CORETYPE=SkylakeX set in the environment. Sizes pass through
 * blasint, 32 bits in the usual build: m, n and k are cut into pieces that fit, and a matrix
 * whose row length does not fit is cut into pieces of one stored row, whose ld CBLAS never uses
 * (a buffer with two such rows already holds more than 2^31 elements, so the pieces are few). */
#define GK_BLASINT_MAX                                                                             \
    (sizeof(blasint) >= sizeof(size_t) ? (size_t)SIZE_MAX >> 1                                     \
                                       : ((size_t)1 << (8 * sizeof(blasint) - 1)) - 1)

/* Threads. A gemm gets as many threads as any other op (the context's cpu_threads capped by the
 * free cores, cpu_team.c): OpenBLAS's own pool sized to that count for the call. Left to
 * itself the pool takes every core, free or not (on two cores with one busy, sgemm 512^3 took
 * 2.19x a one-thread context). Up to GK_CPU_PAR_MIN_GEMM multiply-adds OpenBLAS runs on the
 * calling thread whatever its setting (interface/gemm.c, 65536 x GEMM_MULTITHREAD_THRESHOLD =
 * 4), and those calls leave the setting alone. OpenBLAS's count is one process-wide variable
 * (blas_cpu_number in its pthread build; 0.3.28's "_local" setting sets the same variable), so
 * it is changed under a lock, saved by the first of our calls in flight and restored by the
 * last: the program's own setting (OPENBLAS_NUM_THREADS, openblas_set_num_threads) holds again
 * whenever no gemm of ours runs; while one does, a BLAS call the program makes on another
 * thread gets our count, and concurrent gemms of two contexts share the later one's. Results
 * do not depend on the count: OpenBLAS splits m and n over its threads, never k. Only the
 * pthread build (openblas_get_parallel() == 1) is touched: the OpenMP build takes the calling
 * thread's OpenMP setting and the serial one has none. Tiling C over our own team with OpenBLAS
 * at one thread packs every tile's panels anew and was no faster. */
#define GK_CPU_PAR_MIN_GEMM ((size_t)1 << 18)

static struct {
    pthread_mutex_t lock;
    int users; /* our gemms in flight */
    int saved; /* OpenBLAS's count before the first of them */
} blas = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void blas_threads_enter(int nt)
{
    if (openblas_get_parallel() != 1)
        return;
    pthread_mutex_lock(&blas.lock);
    int now = openblas_get_num_threads();
    if (blas.users++ == 0)
        blas.saved = now;
    if (now != nt)
        openblas_set_num_threads(nt);
    pthread_mutex_unlock(&blas.lock);
}

static void blas_threads_leave(void)
{
    if (openblas_get_parallel() != 1)
        return;
    pthread_mutex_lock(&blas.lock);
    if (--blas.users == 0 && openblas_get_num_threads() != blas.saved)
        openblas_set_num_threads(blas.saved);
    pthread_mutex_unlock(&blas.lock);
}

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
#define GK_CPU_GEMM_KERNELS(SUFFIX, T, CBLAS_GEMM)                                                 \
    static void cpu_gemm_k0_##SUFFIX(size_t m, size_t n, T beta, T *c, size_t ldc)                 \
    {                                                                                              \
        for (size_t i = 0; i < m; i++)                                                             \
            for (size_t j = 0; j < n; j++)                                                         \
                c[i * ldc + j] = beta == (T)0 ? (T)0 : beta * c[i * ldc + j];                      \
    }                                                                                              \
                                                                                                   \
    static void cpu_gemm_##SUFFIX(gk_transpose ta, gk_transpose tb, size_t m, size_t n, size_t k,  \
                                  T alpha, const T *a, size_t lda, const T *b, size_t ldb, T beta, \
                                  T *c, size_t ldc)                                                \
    {                                                                                              \
        const size_t max = GK_BLASINT_MAX;                                                         \
        size_t pm = ldc > max || (ta == GK_NO_TRANS && lda > max) ? 1 : max;                       \
        size_t pn = tb == GK_TRANS && ldb > max ? 1 : max;                                         \
        size_t pk = (ta == GK_TRANS && lda > max) || (tb == GK_NO_TRANS && ldb > max) ? 1 : max;   \
        for (size_t i0 = 0; i0 < m; i0 += pm) {                                                    \
            size_t mi = m - i0 < pm ? m - i0 : pm;                                                 \
            for (size_t j0 = 0; j0 < n; j0 += pn) {                                                \
                size_t nj = n - j0 < pn ? n - j0 : pn;                                             \
                for (size_t p0 = 0; p0 < k; p0 += pk) {                                            \
                    size_t kp = k - p0 < pk ? k - p0 : pk;                                         \
                    const T *ap = ta == GK_TRANS ? a + p0 * lda + i0 : a + i0 * lda + p0;          \
                    const T *bp = tb == GK_TRANS ? b + j0 * ldb + p0 : b + p0 * ldb + j0;          \
                    CBLAS_GEMM(CblasRowMajor, ta == GK_TRANS ? CblasTrans : CblasNoTrans,          \
                               tb == GK_TRANS ? CblasTrans : CblasNoTrans, (blasint)mi,            \
                               (blasint)nj, (blasint)kp, alpha, ap,                                \
                               piece_ld(lda, ta == GK_TRANS ? mi : kp), bp,                        \
                               piece_ld(ldb, tb == GK_TRANS ? kp : nj), p0 == 0 ? beta : (T)1,     \
                               c + i0 * ldc + j0, piece_ld(ldc, nj));                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

GK_CPU_GEMM_KERNELS(f32, float, cblas_sgemm)
GK_CPU_GEMM_KERNELS(f64, double, cblas_dgemm)

void gk__cpu_gemm_serial(gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m, size_t n, size_t k,
                         double alpha, const void *a, size_t lda, const void *b, size_t ldb,
                         double beta, void *c, size_t ldc)
{
    if (k == 0) {
        if (t == GK_FLOAT32)
            cpu_gemm_k0_f32(m, n, (float)beta, c, ldc);
        else
            cpu_gemm_k0_f64(m, n, beta, c, ldc);
    } else if (t == GK_FLOAT32) {
        cpu_gemm_f32(ta, tb, m, n, k, (float)alpha, a, lda, b, ldb, (float)beta, c, ldc);
    } else {
        cpu_gemm_f64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
}

void gk__cpu_blas_serial_enter(void)
{
    blas_threads_enter(1);
}

void gk__cpu_blas_serial_leave(void)
{
    blas_threads_leave();
}

gk_status gk__cpu_gemm(void *st, gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m, size_t n,
                       size_t k, double alpha, const void *a, size_t lda, const void *b, size_t ldb,
                       double beta, void *c, size_t ldc)
{
    if (t != GK_FLOAT32 && t != GK_FLOAT64)
        return gk__cpu_bad_dtype(t);
    /* In double, as OpenBLAS compares it: m n k may exceed size_t. */
    int team = k != 0 && (double)m * (double)n * (double)k > (double)GK_CPU_PAR_MIN_GEMM;
    if (team)
        blas_threads_enter(gk__cpu_threads(st));
    gk__cpu_gemm_serial(t, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (team)
        blas_threads_leave();
    return GK_OK;
}
