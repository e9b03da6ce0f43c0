/* SPDX-License-Identifier: MIT */
/* backend.h - the private, versioned table through which the core calls a backend. */
#ifndef GK_BACKEND_H
#define GK_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "gpukern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a slot changes meaning; appending slots only grows struct_size. */
#define GK_BACKEND_ABI_VERSION 3u

/* Services the core lends a backend, so a dlopen'ed module can report errors into the
 * thread-local message of the core without the core exporting private symbols. */
typedef struct gk_host_services {
    uint32_t struct_size;
    /* Records "fmt..." as this thread's last error and returns status. */
    gk_status (*error)(gk_status status, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
    /* 1 when GK_LOG is set: the backend may print diagnostics to stderr. */
    int log_enabled;
    /* Counts an allocation point of the backend; 1 when it must fail. Set only by a core built
     * with GK_FAULT_INJECTION for its allocation sweep (src/alloc.h), NULL otherwise. */
    int (*fault_next)(void);
    /* Prints "gpukern: fmt..." to stderr (the backend calls it only when its context logs). */
    void (*log)(const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 1, 2)))
#endif
        ;
} gk_host_services;

/* GK_RBF_ISA: the CPU's kernels for the RBF forms. */
typedef enum gk_isa { GK_ISA_AUTO = 0, GK_ISA_GENERIC = 1, GK_ISA_AVX512 = 2 } gk_isa;

/* Everything a backend needs to create its per-context state. The environment switches are read
 * once, by the core, when the context is created (src/env.c). */
typedef struct gk_backend_config {
    int32_t device;
    int32_t cpu_threads;
    uint32_t flags;
    int32_t log;       /* GK_LOG=1: each RBF call prints the form it ran and why */
    int32_t cpu_isa;   /* GK_RBF_ISA, a gk_isa */
    char rbf_form[32]; /* GK_RBF_FORM: a form of the backend's planner to force; "" = planner */
} gk_backend_config;

/* The table. The core calls an operation's slot only through GK_CALL (src/dispatch.h), so the
 * contract of every op slot is:
 * - Its arguments are validated: dtype is GK_FLOAT32 or GK_FLOAT64, operands are large enough
 *   and an output shares no memory with the inputs (copy's and the element-wise ops' x, y, z
 *   may be the very same array), scalars are rounded to the dtype.
 * - Its work is not empty: every count and every dimension of an output is at least 1. Only a
 *   feature count d and gemm's k may be 0; an operand that then addresses no element is NULL.
 * - Every pointer named x, y, z, a, b, k, w, c, out is memory of this backend (host memory for
 *   the CPU backend, device memory for CUDA), already offset to element 0 of the operand.
 * - `st` is the per-context state returned by context_create.
 * - A slot reports only failures of its own (device errors, out of memory), never in terms of
 *   the public API: it is not told which public function called it, and the core prefixes its
 *   message with that function's name.
 * A NULL slot, or one past an older module's struct_size, means GK_E_UNSUPPORTED: the core
 * reports it naming the function, the backend and the slot. A module must fill every slot up to
 * mem_read. */
typedef struct gk_backend_ops {
    uint32_t abi_version;
    uint32_t struct_size;
    gk_backend kind;
    const char *name;

    /* Number of usable devices; a failure's message carries the backend's error text. */
    gk_status (*device_count)(int *count);
    gk_status (*context_create)(const gk_backend_config *cfg, void **st);
    void (*context_destroy)(void *st);
    const char *(*device_name)(void *st);
    gk_status (*synchronize)(void *st);

    /* The memory slots, too, get bytes > 0 and non-NULL pointers. */
    gk_status (*mem_alloc)(void *st, size_t bytes, void **ptr);
    /* bytes is what mem_alloc was asked for, so a backend can recycle blocks by size. */
    void (*mem_free)(void *st, void *ptr, size_t bytes);
    /* host -> backend memory; returns once src may be reused. */
    gk_status (*mem_write)(void *st, void *dst, const void *src, size_t bytes);
    /* backend memory -> host; waits for queued work first. */
    gk_status (*mem_read)(void *st, void *dst, const void *src, size_t bytes);

    gk_status (*fill)(void *st, gk_dtype t, size_t n, double value, void *x);
    gk_status (*copy)(void *st, gk_dtype t, size_t n, const void *x, void *y);
    gk_status (*add)(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
    gk_status (*sub)(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
    gk_status (*mul)(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
    gk_status (*axpy)(void *st, gk_dtype t, size_t n, double alpha, const void *x, void *y);
    gk_status (*scale)(void *st, gk_dtype t, size_t n, double alpha, void *x);
    gk_status (*exp)(void *st, gk_dtype t, size_t n, const void *x, void *y);

    /* Reductions wait and write a host double. */
    gk_status (*sum)(void *st, gk_dtype t, size_t n, const void *x, double *result);
    gk_status (*dot)(void *st, gk_dtype t, size_t n, const void *x, const void *y, double *result);
    gk_status (*nrm2)(void *st, gk_dtype t, size_t n, const void *x, double *result);

    /* Row-major, as gk_gemm; k may be 0 (C = beta * C). */
    gk_status (*gemm)(void *st, gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m, size_t n,
                      size_t k, double alpha, const void *a, size_t lda, const void *b, size_t ldb,
                      double beta, void *c, size_t ldc);

    gk_status (*rbf_rows)(void *st, gk_dtype t, size_t n, size_t d, double gamma, const void *a,
                          const void *b, void *k);
    gk_status (*rbf_matrix)(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                            const void *x, const void *y, void *k);
    /* n > 0: the core writes the zeros of empty sums itself. */
    gk_status (*rbf_matvec)(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                            const void *x, const void *y, const void *w, void *out);

    gk_status (*rng_uniform)(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                             void *x);
    gk_status (*rng_normal)(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                            double mean, double stddev, void *x);

    /* Since 1.2 (interop). GK_OK when [ptr, ptr + bytes) is memory of the context's device,
     * else GK_E_INVALID_ARGUMENT saying what ptr points to; bytes > 0. */
    gk_status (*mem_check_device)(void *st, const void *ptr, size_t bytes);
    /* Queues the context's later work on stream (a cudaStream_t; NULL: the context's own),
     * ordered after the work it queued before; does not wait. */
    gk_status (*set_stream)(void *st, void *stream);
    /* The stream the context queues its work on now. */
    void *(*stream)(void *st);

    /* Since 1.2: z = x / y, the IEEE quotient rounded to nearest (no reciprocal, no flush of
     * subnormals), so that every backend gives the same bits. */
    gk_status (*div)(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);

    /* Since 1.3: the kernel family, distances and k-NN. t is GK_FLOAT32 or GK_FLOAT64 (never
     * GK_INT64); *k is validated (a known kind, its parameters usable, gamma rounded to t);
     * metric is a gk_metric. x is m×d, y n×d, w n×r, out m×n (m×r for kernel_matmul), dist and
     * index m×k with 1 <= k <= n; index is int64_t in the backend's memory. */
    gk_status (*kernel_matrix)(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                               size_t d, const void *x, const void *y, void *out);
    gk_status (*kernel_matmul)(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                               size_t d, size_t r, const void *x, const void *y, const void *w,
                               void *out);
    gk_status (*distance_matrix)(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n,
                                 size_t d, const void *x, const void *y, void *out);
    gk_status (*knn)(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n, size_t d,
                     size_t k, const void *x, const void *y, void *dist, int64_t *index);
} gk_backend_ops;

/* The one symbol a backend module exports. It checks abi_version, keeps svc, and hands back
 * its table. */
#define GK_MODULE_ENTRY_SYMBOL "gk_module_entry"
typedef gk_status (*gk_module_entry_fn)(uint32_t abi_version, const gk_host_services *svc,
                                        const gk_backend_ops **ops);

/* The CPU backend, linked into the core. */
const gk_backend_ops *gk__cpu_backend(void);
/* The CPU planner's form that GK_RBF_FORM names (-1 for "" and for the CUDA backend's names,
 * cuda_*); another name is GK_E_INVALID_ARGUMENT naming the accepted ones (cpu/rbf/plan.c). */
gk_status gk__cpu_rbf_form_parse(const char *name, int *form);

#ifdef __cplusplus
}
#endif

#endif /* GK_BACKEND_H */
