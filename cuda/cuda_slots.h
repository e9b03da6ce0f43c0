/* SPDX-License-Identifier: MIT */
/* cuda_slots.h - the CUDA module's backend-table slots and error services, in plain C for
 * cuda_backend.c. */
#ifndef GK_CUDA_SLOTS_H
#define GK_CUDA_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Remembers the core's services for every later error report. */
void gk__cuda_set_services(const gk_host_services *svc);
/* 1 when the core has GK_LOG set. */
int gk__cuda_log_enabled(void);
/* Prints "gpukern: fmt..." through the core (callers check their context's log flag). */
void gk__cuda_log(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Records a formatted message through the core and returns status. */
gk_status gk__cuda_error(gk_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The backend table's slots (cuda_backend.c), one file per concern. */
gk_status gk__cuda_device_count(int *count);
gk_status gk__cuda_context_create(const gk_backend_config *cfg, void **st);
void gk__cuda_context_destroy(void *st);
const char *gk__cuda_device_name(void *st);
gk_status gk__cuda_synchronize(void *st);

gk_status gk__cuda_mem_alloc(void *st, size_t bytes, void **ptr);
void gk__cuda_mem_free(void *st, void *ptr, size_t bytes);
gk_status gk__cuda_mem_write(void *st, void *dst, const void *src, size_t bytes);
gk_status gk__cuda_mem_read(void *st, void *dst, const void *src, size_t bytes);

gk_status gk__cuda_fill(void *st, gk_dtype t, size_t n, double value, void *x);
gk_status gk__cuda_copy(void *st, gk_dtype t, size_t n, const void *x, void *y);
gk_status gk__cuda_add(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
gk_status gk__cuda_sub(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
gk_status gk__cuda_mul(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
gk_status gk__cuda_div(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
gk_status gk__cuda_axpy(void *st, gk_dtype t, size_t n, double alpha, const void *x, void *y);
gk_status gk__cuda_scale(void *st, gk_dtype t, size_t n, double alpha, void *x);
gk_status gk__cuda_exp(void *st, gk_dtype t, size_t n, const void *x, void *y);

gk_status gk__cuda_sum(void *st, gk_dtype t, size_t n, const void *x, double *result);
gk_status gk__cuda_dot(void *st, gk_dtype t, size_t n, const void *x, const void *y,
                       double *result);
gk_status gk__cuda_nrm2(void *st, gk_dtype t, size_t n, const void *x, double *result);

gk_status gk__cuda_gemm(void *st, gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m, size_t n,
                        size_t k, double alpha, const void *a, size_t lda, const void *b,
                        size_t ldb, double beta, void *c, size_t ldc);

gk_status gk__cuda_rbf_rows(void *st, gk_dtype t, size_t n, size_t d, double gamma, const void *a,
                            const void *b, void *k);
gk_status gk__cuda_rbf_matrix(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                              const void *x, const void *y, void *k);
gk_status gk__cuda_rbf_matvec(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                              const void *x, const void *y, const void *w, void *out);

gk_status gk__cuda_mem_check_device(void *st, const void *ptr, size_t bytes);
gk_status gk__cuda_set_stream(void *st, void *stream);
void *gk__cuda_stream(void *st);

gk_status gk__cuda_rng_uniform(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                               void *x);
gk_status gk__cuda_rng_normal(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                              double mean, double stddev, void *x);

/* The kernel family, distances and k-NN (cuda/kernel/). */
gk_status gk__cuda_kernel_matrix(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                                 size_t d, const void *x, const void *y, void *out);
gk_status gk__cuda_kernel_matmul(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                                 size_t d, size_t r, const void *x, const void *y, const void *w,
                                 void *out);
gk_status gk__cuda_distance_matrix(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n,
                                   size_t d, const void *x, const void *y, void *out);
gk_status gk__cuda_knn(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n, size_t d,
                       size_t k, const void *x, const void *y, void *dist, int64_t *index);

#ifdef __cplusplus
}
#endif

#endif /* GK_CUDA_SLOTS_H */
