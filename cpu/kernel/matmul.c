/* SPDX-License-Identifier: MIT */
/* matmul.c - kernel_matmul: each tile of K finished in place and multiplied into its rows of
 * out by a dgemm, so that only a tile of K ever exists. */
#include "alloc.h"
#include "cpu_internal.h"
#include "error.h"
#include "kernel/kernel.h"

static void finish_row(void *arg, const gk_cpu_job *j, size_t r, double *v)
{
    size_t nb = *(const size_t *)arg;
    gk__cpu_finish_row(j, nb, r, 0, v);
}

gk_status gk__cpu_kernel_matmul(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                                size_t d, size_t r, const void *x, const void *y, const void *w,
                                void *out)
{
    if (t != GK_FLOAT32 && t != GK_FLOAT64)
        return gk__cpu_bad_dtype(t);
    gk_cpu_job j = {0};
    gk__cpu_job_kernel(&j, k);
    gk_status s = gk__cpu_job_begin(st, &j, t, m, n, d, x, y, m);
    if (s != GK_OK)
        return s;
    /* The panel's sums (mb x r) and the block of w (nb x r), in double: the products and sums
     * of the contract's Σ_j |K_ij| |w_jc| bound keep double's rounding. */
    size_t bytes = (j.mb + j.nb) * r * sizeof(double);
    double *acc = NULL;
    if (gk__aligned_alloc((void **)&acc, 64, bytes) != 0) {
        gk__cpu_job_end(&j);
        return gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %zu bytes of scratch", bytes);
    }
    double *wd = acc + j.mb * r;
    for (size_t i0 = 0; s == GK_OK && i0 < m; i0 += j.mb) {
        size_t mb = m - i0 < j.mb ? m - i0 : j.mb;
        gk__cpu_job_rows(&j, i0, mb);
        for (size_t j0 = 0; s == GK_OK && j0 < n; j0 += j.nb) {
            size_t nb = n - j0 < j.nb ? n - j0 : j.nb;
            for (size_t e = 0; e < nb * r; e++)
                wd[e] = t == GK_FLOAT32 ? (double)((const float *)w)[j0 * r + e]
                                        : ((const double *)w)[j0 * r + e];
            s = gk__cpu_job_tile(st, &j, i0, mb, j0, nb, finish_row, &nb);
            if (s == GK_OK)
                s = gk__cpu_gemm(st, GK_FLOAT64, GK_NO_TRANS, GK_NO_TRANS, mb, r, nb, 1.0, j.v, nb,
                                 wd, r, j0 == 0 ? 0.0 : 1.0, acc, r);
        }
        for (size_t e = 0; s == GK_OK && e < mb * r; e++) {
            if (t == GK_FLOAT32)
                ((float *)out)[i0 * r + e] = (float)acc[e];
            else
                ((double *)out)[i0 * r + e] = acc[e];
        }
    }
    gk__free(acc);
    gk__cpu_job_end(&j);
    return s;
}
