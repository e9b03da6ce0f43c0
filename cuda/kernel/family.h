/* SPDX-License-Identifier: MIT */
/* family.h - the CUDA backend's kernel family, distances and k-NN: one tiled pass (pass.cu)
 * that accumulates inner products, squared or absolute differences, and one epilogue per kernel
 * kind or metric (epilogue.cuh); the slots (matrix.cu, matmul.cu, knn.cu) run it on tiles. */
#ifndef GK_CUDA_KERNEL_FAMILY_H
#define GK_CUDA_KERNEL_FAMILY_H

#include "cuda_internal.h"
#include "epilogue.cuh"

/* A call's pass, epilogue and operands, from its kernel or metric (family.cu). */
template <typename T> struct cuda_family {
    bool rbf;     /* the Gaussian kernel: tiles are rbf_matrix's (its planner and forms) */
    double gamma; /* the kernel's gamma, scaled where the rows are (a tiny gamma) */
    cuda_acc acc;
    cuda_epi epi;
    cuda_epi_params<T> p;
    /* The rows the pass reads: the caller's, or copies: scaled to unit norm (cosine; their
     * norms are p.nx and p.ny), or by a power of 2 (a tiny gamma); buf holds the copies and is
     * freed by gk__cuda_family_release. */
    const T *x, *y;
    void *buf;
};

template <typename T>
gk_status gk__cuda_family_kernel(gk_cuda_state *s, const gk_kernel *k, size_t m, size_t n, size_t d,
                                 const T *x, const T *y, cuda_family<T> *f);
template <typename T>
gk_status gk__cuda_family_metric(gk_cuda_state *s, gk_metric metric, size_t m, size_t n, size_t d,
                                 const T *x, const T *y, cuda_family<T> *f);
template <typename T> void gk__cuda_family_release(gk_cuda_state *s, cuda_family<T> *f);

/* Prints "gpukern: <op>: form <what> (<m> x <n> x <d>; sum <sum>, epilogue <epilogue>)" when
 * the context logs (GK_LOG=1); what names the op's own part (tiles, selection). */
template <typename T>
void gk__cuda_family_log(const gk_cuda_state *s, const char *op, const char *what,
                         const cuda_family<T> &f, size_t m, size_t n, size_t d);

/* out[i * ldo + j] for rows [i0, i0 + mb) of x and [j0, j0 + nb) of y, i and j counted from i0
 * and j0. stream: the output is not read again soon (its stores bypass L2). The Gaussian
 * kernel's tiles need ldo == nb (rbf_matrix writes a dense matrix). */
template <typename T>
gk_status gk__cuda_family_tile(gk_cuda_state *s, const cuda_family<T> &f, size_t i0, size_t mb,
                               size_t j0, size_t nb, size_t d, T *out, size_t ldo, bool stream);

/* The tiled pass itself (pass.cu): out[i * ldo + j] = epi(sum over features of acc(x_i, y_j)),
 * with p.nx and p.ny already offset to x's and y's first rows. */
template <typename T>
gk_status gk__cuda_pass(gk_cuda_state *s, cuda_acc acc, cuda_epi epi, const cuda_epi_params<T> &p,
                        size_t m, size_t n, size_t d, const T *x, const T *y, T *out, size_t ldo,
                        bool stream);

/* Rows of x (rows x d) scaled to unit Euclidean norm into u, and their norms into norm (0 for
 * a zero row, whose copy is zeros; NaN where the row holds a NaN or an infinity) (norms.cu). */
template <typename T>
gk_status gk__cuda_unit_rows(gk_cuda_state *s, size_t rows, size_t d, const T *x, T *u, T *norm);

#endif /* GK_CUDA_KERNEL_FAMILY_H */
