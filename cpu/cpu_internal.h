/* SPDX-License-Identifier: MIT */
/* cpu_internal.h - the CPU backend's per-context state and the entry points its table holds. */
#ifndef GK_CPU_INTERNAL_H
#define GK_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* Per-context state: contexts never share a team size, so two contexts created with different
 * cpu_threads run side by side without touching a global OpenMP setting. */
typedef struct gk_cpu_state {
    int threads;   /* OpenMP team size for this context's ops (>= 1) */
    char name[48]; /* "CPU (N threads)" */
    /* The rbf switches, read when the context was created (src/env.c): the ISA kernels (NULL:
     * the portable ones), a form to force (-1: the planner's choice, cpu/rbf/plan.h), and
     * whether each rbf call logs its form (GK_LOG=1). */
    const struct gk_cpu_rbf_isa *rbf_isa;
    int rbf_form;
    int log;
} gk_cpu_state;

/* Below these element counts an op stays on the calling thread: waking an OpenMP team costs a
 * few microseconds, more than a memory-bound loop of 32 Ki elements takes, and the AUTO cost
 * model is built on the CPU being fast for small work. Loops that spend tens of cycles per
 * element (Philox, Box-Muller) pay for the team much earlier. exp is vectorized (cpu_vmath.h,
 * about 0.3 ns an element on one AVX-512 core, 1e5 float32 in 30 us) and counts as streaming. */
#define GK_CPU_PAR_MIN_STREAM ((size_t)1 << 15)
#define GK_CPU_PAR_MIN_MATH ((size_t)1 << 11)

/* The build targets baseline x86-64 (SSE2), which leaves 3/4 of an AVX-512 core's vector width
 * unused. The compute-bound kernels (the rbf distance-and-exp loops, Philox blocks) are
 * therefore compiled also for AVX2 and AVX-512 and picked at load time by the CPU (GCC's
 * target_clones, an ifunc): 1.5-3x on rbf_matrix. Their loops are lane-wise, so every clone
 * computes bit-identical results. Building with -DGK_CPU_CLONES= turns this off. */
#ifndef GK_CPU_CLONES
#if defined(__x86_64__) && defined(__linux__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define GK_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#endif
#ifndef GK_CPU_CLONES
#define GK_CPU_CLONES
#endif

/* cpu_team.c: the cores of this process's affinity mask that other processes leave free now
 * (at least 1), re-measured every 100 ms. */
int gk__cpu_free_cores(void);

/* The context's thread count: what partitions whose results depend on them are built from,
 * never the load. */
static inline int gk__cpu_threads_max(const void *st)
{
    return ((const gk_cpu_state *)st)->threads;
}

/* The team an op runs on: the context's thread count capped by the free cores. */
static inline int gk__cpu_threads(const void *st)
{
    int max = gk__cpu_threads_max(st);
    if (max <= 1)
        return 1;
    int free = gk__cpu_free_cores();
    return free < max ? free : max;
}

/* The team for n units of work that pays for a team only above min_n units (the
 * GK_CPU_PAR_MIN_* figures): one thread below, else gk__cpu_threads. */
static inline int gk__cpu_team(const void *st, size_t n, size_t min_n)
{
    return n > min_n ? gk__cpu_threads(st) : 1;
}

/* The threads a parallel region over `tasks` units of work opens on a team of `team`: one
 * thread for a single task, else the whole team, even where it has fewer tasks than threads (the
 * idle ones arrive at the end barrier at once). Never a team of 2 .. team - 1: libgomp ends the
 * pooled threads that a smaller team leaves out and creates them again for the next larger one
 * (10 clone() calls per 16 -> 6 -> 16 cycle), which made float32 rbf_matrix 316^2 x 20 (packed
 * on 16 threads, then 6 tasks on 6) some 8x slower than the larger 562^2. Serial regions leave
 * the pool as it is. Every region of an op uses this on the same team. */
static inline int gk__cpu_region(int team, size_t tasks)
{
    return tasks > 1 && team > 1 ? team : 1;
}

/* Runs the statement (a for loop, or a block of orphaned `omp for` loops) under
 * `_Pragma(clauses)` when parallel holds, else on the calling thread outside any region. An
 * `if` clause that comes out false still opens a region, a team of one that libgomp allocates
 * (memalign) and frees each time: add 100 took 4-13x as long a call that way, pinned to one
 * core, as with its serial loop outside any region. */
#define GK_CPU_PARALLEL_IF(parallel, clauses, ...)                                                 \
    do {                                                                                           \
        if (parallel) {                                                                            \
            _Pragma(clauses) __VA_ARGS__                                                           \
        } else {                                                                                   \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    } while (0)

/* Records GK_E_INTERNAL for a dtype the core should have rejected. */
gk_status gk__cpu_bad_dtype(gk_dtype t);

/* cpu_elementwise.c */
gk_status gk__cpu_fill(void *st, gk_dtype t, size_t n, double value, void *x);
gk_status gk__cpu_copy(void *st, gk_dtype t, size_t n, const void *x, void *y);
gk_status gk__cpu_add(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
gk_status gk__cpu_sub(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
gk_status gk__cpu_mul(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
gk_status gk__cpu_div(void *st, gk_dtype t, size_t n, const void *x, const void *y, void *z);
gk_status gk__cpu_axpy(void *st, gk_dtype t, size_t n, double alpha, const void *x, void *y);
gk_status gk__cpu_scale(void *st, gk_dtype t, size_t n, double alpha, void *x);
gk_status gk__cpu_exp(void *st, gk_dtype t, size_t n, const void *x, void *y);

/* cpu_backend.c: a memcpy split over the context's team, for large copies. */
void gk__cpu_memcpy(int threads, void *dst, const void *src, size_t bytes);

/* cpu_reduce.c */
gk_status gk__cpu_sum(void *st, gk_dtype t, size_t n, const void *x, double *result);
gk_status gk__cpu_dot(void *st, gk_dtype t, size_t n, const void *x, const void *y, double *result);
gk_status gk__cpu_nrm2(void *st, gk_dtype t, size_t n, const void *x, double *result);

/* cpu_gemm.c */
gk_status gk__cpu_gemm(void *st, gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m, size_t n,
                       size_t k, double alpha, const void *a, size_t lda, const void *b, size_t ldb,
                       double beta, void *c, size_t ldc);
/* For a product split over the caller's own team: between gk__cpu_blas_serial_enter and _leave
 * OpenBLAS's pthread pool is held at one thread, so that each member's gk__cpu_gemm_serial (t a
 * float dtype) runs on its own thread, with no BLAS threads spinning beside the team. */
void gk__cpu_blas_serial_enter(void);
void gk__cpu_blas_serial_leave(void);
void gk__cpu_gemm_serial(gk_dtype t, gk_transpose ta, gk_transpose tb, size_t m, size_t n, size_t k,
                         double alpha, const void *a, size_t lda, const void *b, size_t ldb,
                         double beta, void *c, size_t ldc);

/* cpu_rbf_rows.c, cpu_rbf_matrix.c, cpu_rbf_matvec.c */
gk_status gk__cpu_rbf_rows(void *st, gk_dtype t, size_t n, size_t d, double gamma, const void *a,
                           const void *b, void *k);
gk_status gk__cpu_rbf_matrix(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                             const void *x, const void *y, void *k);
gk_status gk__cpu_rbf_matvec(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                             const void *x, const void *y, const void *w, void *out);

/* kernel/matrix.c, kernel/matmul.c, kernel/knn.c: the kernel family, distances and k-NN */
gk_status gk__cpu_kernel_matrix(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                                size_t d, const void *x, const void *y, void *out);
gk_status gk__cpu_kernel_matmul(void *st, gk_dtype t, const gk_kernel *k, size_t m, size_t n,
                                size_t d, size_t r, const void *x, const void *y, const void *w,
                                void *out);
gk_status gk__cpu_distance_matrix(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n,
                                  size_t d, const void *x, const void *y, void *out);
gk_status gk__cpu_knn(void *st, gk_dtype t, gk_metric metric, size_t m, size_t n, size_t d,
                      size_t k, const void *x, const void *y, void *dist, int64_t *index);

/* cpu_rng.c */
gk_status gk__cpu_rng_uniform(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                              void *x);
gk_status gk__cpu_rng_normal(void *st, gk_dtype t, size_t n, uint64_t seed, uint64_t offset,
                             double mean, double stddev, void *x);

#endif /* GK_CPU_INTERNAL_H */
