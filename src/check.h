/* SPDX-License-Identifier: MIT */
/* check.h - argument checks shared by every public function; backends never repeat them. */
#ifndef GK_CHECK_H
#define GK_CHECK_H

#include "core.h"

/* c is a live context handle. */
gk_status gk__check_context(const char *fn, const gk_context *c);
/* b is a live buffer handle of context c (c NULL: any context). */
gk_status gk__check_buffer(const char *fn, const char *arg, const gk_context *c,
                           const gk_buffer *b);
/* A pointer argument is not NULL. */
gk_status gk__check_pointer(const char *fn, const char *arg, const void *p);
/* t is a gk_dtype a buffer can have: GK_FLOAT32, GK_FLOAT64 or GK_INT64. */
gk_status gk__check_dtype(const char *fn, const char *arg, int t);
/* b is a live buffer of context c that an operation computes on: not GK_INT64, which only the
 * buffer calls, gk_copy and gk_knn's index take (GK_E_INVALID_ARGUMENT naming the dtype). */
gk_status gk__check_operand(const char *fn, const char *arg, const gk_context *c,
                            const gk_buffer *b);
/* b has the dtype of ref. */
gk_status gk__check_same_dtype(const char *fn, const char *arg, const gk_buffer *b,
                               const char *ref_arg, const gk_buffer *ref);
/* b has exactly count elements. */
gk_status gk__check_count(const char *fn, const char *arg, const gk_buffer *b, const char *ref_arg,
                          size_t count);
/* b holds at least need elements. */
gk_status gk__check_holds(const char *fn, const char *arg, const gk_buffer *b, size_t need);
/* *out = a * b, or GK_E_OVERFLOW naming what. */
gk_status gk__mul_size(const char *fn, const char *what, size_t a, size_t b, size_t *out);
/* *need = (rows - 1) * ld + cols elements addressed by a row-major matrix; 0 if rows or cols
 * is 0. ld must be at least cols (GK_E_INVALID_ARGUMENT). */
gk_status gk__matrix_extent(const char *fn, const char *arg, size_t rows, size_t cols, size_t ld,
                            const char *ld_arg, size_t *need);
/* Output out shares no memory with input in (GK_E_INVALID_ARGUMENT). */
gk_status gk__check_disjoint(const char *fn, const char *out_arg, const gk_buffer *out,
                             const char *in_arg, const gk_buffer *in);
/* Output out of an element-wise op is either exactly input in (the same first element: both
 * have the same count and dtype) or shares no memory with it (GK_E_INVALID_ARGUMENT): kernels
 * that read and write in chunks, in parallel or with memcpy give partial overlap no meaning. */
gk_status gk__check_same_or_disjoint(const char *fn, const char *out_arg, const gk_buffer *out,
                                     const char *in_arg, const gk_buffer *in);
/* The value as the dtype would store it: scalars are rounded once, the same on every backend. */
double gk__round_scalar(gk_dtype t, double v);

#endif /* GK_CHECK_H */
