/* SPDX-License-Identifier: MIT */
/* kernel_ref.h - long double references of the kernel family and the distances, written from
 * the formulas of include/gpukern.h, and the entry check against them (test_kernel.c and
 * test_kernel_cuda.c). */
#ifndef GK_KERNEL_REF_H
#define GK_KERNEL_REF_H

#include <stddef.h>

#include "gpukern.h"

/* The contract's unit: 1e-5 float32, 1e-12 float64. */
long double gk_ref_tol(gk_dtype t);

/* The sums every kernel and metric of rows x_i and y_j is made of, from the stored values. */
typedef struct gk_ref_sums {
    long double ip, aip, sq, l1, nx, ny; /* <x,y>, <|x|,|y|>, |x-y|^2, |x-y|_1, |x|^2, |y|^2 */
} gk_ref_sums;

/* The sums of row i of x and row j of y (d features of dtype t, row-major). */
gk_ref_sums gk_ref_sums_of(gk_dtype t, const void *x, size_t i, const void *y, size_t j, size_t d);

/* The kernel's value; *scale is what the contract's unit multiplies: 1 for the bounded kernels,
 * the same kernel on |x|, |y| for linear and polynomial. */
long double gk_ref_kernel(const gk_kernel *k, gk_dtype t, const gk_ref_sums *s, long double *scale);

/* The metric's value; *scale: gk_ref_distance_scale of it. */
long double gk_ref_distance(gk_metric metric, const gk_ref_sums *s, long double *scale);

/* What the contract's unit multiplies for a distance of that metric: the distance itself (the
 * contract is relative), or 0.1 for cosine, whose contract is absolute, 1e-6 in float32. */
long double gk_ref_distance_scale(gk_metric metric, long double distance);

/* 1 when row i of x and row j of y hold the same bits. */
int gk_ref_rows_equal(gk_dtype t, const void *x, size_t i, const void *y, size_t j, size_t d);

/* Fails the test unless got (of dtype t) is within tol of ref: NaN for NaN, and the infinity
 * of ref's sign where ref is infinite or beyond t's largest value (under valgrind, whose long
 * double is double, powl gives LDBL_MAX for an infinite result). what, i and j name the entry. */
void gk_ref_check(gk_dtype t, const char *what, size_t i, size_t j, double got, long double ref,
                  long double tol);

/* A Gaussian kernel's entry (rbf_rows, rbf_matrix, rbf_matvec): gk_ref_check, what followed by
 * t's name in the messages, and first, where identical (the two rows hold the same bits) and ref
 * is not NaN, that got is exactly 1. */
void gk_ref_check_rbf(gk_dtype t, double got, long double ref, long double tol, int identical,
                      const char *what, size_t i, size_t j);

#endif /* GK_KERNEL_REF_H */
