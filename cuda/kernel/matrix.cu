/* SPDX-License-Identifier: MIT */
/* matrix.cu - the kernel_matrix and distance_matrix slots: the family's pass over the whole
 * output, whose stores stream past L2. */
#include "family.h"

template <typename T>
static gk_status cuda_family_matrix(gk_cuda_state *s, const char *op, cuda_family<T> &f,
                                    gk_status prepared, size_t m, size_t n, size_t d, T *out)
{
    if (prepared != GK_OK)
        return prepared;
    gk__cuda_family_log(s, op, "cuda_pass", f, m, n, d);
    gk_status r = gk__cuda_family_tile<T>(s, f, 0, m, 0, n, d, out, n, true);
    gk__cuda_family_release(s, &f);
    return r;
}

template <typename T>
static gk_status cuda_kernel_matrix_run(gk_cuda_state *s, const gk_kernel *k, size_t m, size_t n,
                                        size_t d, const T *x, const T *y, T *out)
{
    cuda_family<T> f;
    return cuda_family_matrix(s, "kernel_matrix", f,
                              gk__cuda_family_kernel<T>(s, k, m, n, d, x, y, &f), m, n, d, out);
}

template <typename T>
static gk_status cuda_distance_matrix_run(gk_cuda_state *s, gk_metric metric, size_t m, size_t n,
                                          size_t d, const T *x, const T *y, T *out)
{
    cuda_family<T> f;
    return cuda_family_matrix(s, "distance_matrix", f,
                              gk__cuda_family_metric<T>(s, metric, m, n, d, x, y, &f), m, n, d,
                              out);
}

gk_status gk__cuda_kernel_matrix(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                                 size_t d, const void *x, const void *y, void *out)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    if (t == GK_FLOAT32)
        return cuda_kernel_matrix_run<float>(s, k, m, n, d, (const float *)x, (const float *)y,
                                             (float *)out);
    if (t == GK_FLOAT64)
        return cuda_kernel_matrix_run<double>(s, k, m, n, d, (const double *)x, (const double *)y,
                                              (double *)out);
    return gk__cuda_bad_dtype(t);
}

gk_status gk__cuda_distance_matrix(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n,
                                   size_t d, const void *x, const void *y, void *out)
{
    gk_cuda_state *s = (gk_cuda_state *)st;
    gk_status r = gk__cuda_enter(s);
    if (r != GK_OK)
        return r;
    if (t == GK_FLOAT32)
        return cuda_distance_matrix_run<float>(s, metric, m, n, d, (const float *)x,
                                               (const float *)y, (float *)out);
    if (t == GK_FLOAT64)
        return cuda_distance_matrix_run<double>(s, metric, m, n, d, (const double *)x,
                                                (const double *)y, (double *)out);
    return gk__cuda_bad_dtype(t);
}
