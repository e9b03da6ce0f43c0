/* SPDX-License-Identifier: MIT */
/* cpu_backend.c - the CPU backend's table, its per-context state and its (host) memory. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "error.h"
#include "rbf/plan.h"

/* Buffers start on a cache line, which is also the widest vector (AVX-512) the kernels use. */
#define GK_CPU_ALIGN ((size_t)64)

/* One thread copies about 10 GB/s; a server needs several to reach its memory bandwidth. Below
 * this size the team's wake-up costs more than it saves. */
#define GK_CPU_PAR_MIN_BYTES ((size_t)1 << 20)

gk_status gk__cpu_bad_dtype(gk_dtype t)
{
    return gk__error(GK_E_INTERNAL,
                     "the CPU backend got dtype %d, which the core should have rejected", (int)t);
}

void gk__cpu_memcpy(int threads, void *dst, const void *src, size_t bytes)
{
    if (dst == src)
        return;
    if (threads <= 1 || bytes < GK_CPU_PAR_MIN_BYTES) {
        memcpy(dst, src, bytes);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        /* Chunks are whole cache lines so no two threads write into the same line. */
        size_t team = (size_t)omp_get_num_threads(), me = (size_t)omp_get_thread_num();
        size_t lines = (bytes + GK_CPU_ALIGN - 1) / GK_CPU_ALIGN;
        size_t q = lines / team, r = lines % team;
        size_t lo = (me * q + (me < r ? me : r)) * GK_CPU_ALIGN;
        size_t hi = lo + (q + (me < r)) * GK_CPU_ALIGN;
        if (hi > bytes)
            hi = bytes;
        if (lo < hi)
            memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
    }
}

static gk_status cpu_device_count(int *count)
{
    *count = 1;
    return GK_OK;
}

static gk_status cpu_context_create(const gk_backend_config *cfg, void **st)
{
    gk_cpu_state *s = gk__malloc(sizeof *s);
    if (s == NULL)
        return gk__error(GK_E_OUT_OF_MEMORY,
                         "cannot allocate %zu bytes for the CPU backend's state", sizeof *s);
    s->threads = cfg->cpu_threads > 0 ? cfg->cpu_threads : omp_get_max_threads();
    if (s->threads < 1)
        s->threads = 1;
    snprintf(s->name, sizeof s->name, "CPU (%d thread%s)", s->threads, s->threads == 1 ? "" : "s");
    s->log = cfg->log;
    gk_status r = gk__cpu_rbf_isa_choose(cfg->cpu_isa, &s->rbf_isa);
    if (r == GK_OK)
        r = gk__cpu_rbf_form_parse(cfg->rbf_form, &s->rbf_form);
    if (r != GK_OK) {
        gk__free(s);
        return r;
    }
    *st = s;
    return GK_OK;
}

static void cpu_context_destroy(void *st)
{
    gk__free(st);
}

static const char *cpu_device_name(void *st)
{
    return ((const gk_cpu_state *)st)->name;
}

static gk_status cpu_synchronize(void *st)
{
    (void)st; /* every CPU op has finished when it returns */
    return GK_OK;
}

static gk_status cpu_mem_alloc(void *st, size_t bytes, void **ptr)
{
    (void)st;
    /* Whole cache lines: no other allocation shares the buffer's last line. */
    void *p = NULL;
    if (bytes > SIZE_MAX - (GK_CPU_ALIGN - 1) ||
        gk__aligned_alloc(&p, GK_CPU_ALIGN, (bytes + GK_CPU_ALIGN - 1) & ~(GK_CPU_ALIGN - 1)) != 0)
        return gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory", bytes);
    *ptr = p;
    return GK_OK;
}

static void cpu_mem_free(void *st, void *ptr, size_t bytes)
{
    (void)st;
    (void)bytes;
    gk__free(ptr);
}

static gk_status cpu_mem_write(void *st, void *dst, const void *src, size_t bytes)
{
    gk__cpu_memcpy(gk__cpu_threads(st), dst, src, bytes);
    return GK_OK;
}

static gk_status cpu_mem_read(void *st, void *dst, const void *src, size_t bytes)
{
    gk__cpu_memcpy(gk__cpu_threads(st), dst, src, bytes);
    return GK_OK;
}

static const gk_backend_ops cpu_ops = {
    .abi_version = GK_BACKEND_ABI_VERSION,
    .struct_size = sizeof(gk_backend_ops),
    .kind = GK_BACKEND_CPU,
    .name = "cpu",
    .device_count = cpu_device_count,
    .context_create = cpu_context_create,
    .context_destroy = cpu_context_destroy,
    .device_name = cpu_device_name,
    .synchronize = cpu_synchronize,
    .mem_alloc = cpu_mem_alloc,
    .mem_free = cpu_mem_free,
    .mem_write = cpu_mem_write,
    .mem_read = cpu_mem_read,
    .fill = gk__cpu_fill,
    .copy = gk__cpu_copy,
    .add = gk__cpu_add,
    .sub = gk__cpu_sub,
    .mul = gk__cpu_mul,
    .axpy = gk__cpu_axpy,
    .scale = gk__cpu_scale,
    .exp = gk__cpu_exp,
    .sum = gk__cpu_sum,
    .dot = gk__cpu_dot,
    .nrm2 = gk__cpu_nrm2,
    .gemm = gk__cpu_gemm,
    .rbf_rows = gk__cpu_rbf_rows,
    .rbf_matrix = gk__cpu_rbf_matrix,
    .rbf_matvec = gk__cpu_rbf_matvec,
    .rng_uniform = gk__cpu_rng_uniform,
    .rng_normal = gk__cpu_rng_normal,
    .div = gk__cpu_div,
    .kernel_matrix = gk__cpu_kernel_matrix,
    .kernel_matmul = gk__cpu_kernel_matmul,
    .distance_matrix = gk__cpu_distance_matrix,
    .knn = gk__cpu_knn,
};

const gk_backend_ops *gk__cpu_backend(void)
{
    return &cpu_ops;
}
