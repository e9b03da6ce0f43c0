/* SPDX-License-Identifier: MIT */
/* ops_gemm.c - the public row-major gemm: shape, leading-dimension and aliasing checks. */
#include "check.h"
#include "dispatch.h"

static gk_status check_transpose(const char *fn, const char *arg, gk_transpose t)
{
    GK_CHECK(t == GK_NO_TRANS || t == GK_TRANS, GK_E_INVALID_ARGUMENT,
             "%s: %s (%d) is not a gk_transpose (GK_NO_TRANS = 0, GK_TRANS = 1)", fn, arg, (int)t);
    return GK_OK;
}

GK_API gk_status gk_gemm(gk_context *c, gk_transpose ta, gk_transpose tb, size_t m, size_t n,
                         size_t k, double alpha, const gk_buffer *a, size_t lda,
                         const gk_buffer *b, size_t ldb, double beta, gk_buffer *cc, size_t ldc)
{
    static const char fn[] = "gk_gemm";
    GK_FORWARD(gk__check_context(fn, c));
    GK_FORWARD(check_transpose(fn, "ta", ta));
    GK_FORWARD(check_transpose(fn, "tb", tb));
    GK_FORWARD(gk__check_operand(fn, "a", c, a));
    GK_FORWARD(gk__check_operand(fn, "b", c, b));
    GK_FORWARD(gk__check_operand(fn, "c", c, cc));
    GK_FORWARD(gk__check_same_dtype(fn, "b", b, "a", a));
    GK_FORWARD(gk__check_same_dtype(fn, "c", cc, "a", a));

    /* Stored shapes: A is m x k (k x m when transposed), B is k x n (n x k). */
    size_t need_a, need_b, need_c;
    GK_FORWARD(gk__matrix_extent(fn, "A", ta ? k : m, ta ? m : k, lda,
                                 ta ? "lda (A transposed)" : "lda (A not transposed)", &need_a));
    GK_FORWARD(gk__matrix_extent(fn, "B", tb ? n : k, tb ? k : n, ldb,
                                 tb ? "ldb (B transposed)" : "ldb (B not transposed)", &need_b));
    GK_FORWARD(gk__matrix_extent(fn, "C", m, n, ldc, "ldc", &need_c));
    GK_FORWARD(gk__check_holds(fn, "a", a, need_a));
    GK_FORWARD(gk__check_holds(fn, "b", b, need_b));
    GK_FORWARD(gk__check_holds(fn, "c", cc, need_c));
    GK_FORWARD(gk__check_disjoint(fn, "c", cc, "a", a));
    GK_FORWARD(gk__check_disjoint(fn, "c", cc, "b", b));
    if (need_c == 0)
        return GK_OK;

    gk_dtype t = a->dtype;
    /* With beta = 0, C is only written; staging still uploads it so row padding survives. */
    gk_operand operands[] = {{a, GK_ROLE_IN, need_a}, {b, GK_ROLE_IN, need_b},
                             {cc, GK_ROLE_INOUT, need_c}};
    gk_workload w = {GK_WORK_GEMM, t == GK_FLOAT64, 2.0 * (double)m * (double)n * (double)k};
    gk_call call;
    GK_FORWARD(gk__call_begin(&call, c, fn, operands, 3, &w));
    return gk__call_end(&call, GK_CALL(&call, gemm, t, ta, tb, m, n, k, gk__round_scalar(t, alpha),
                                       call.ptr[0], lda, call.ptr[1], ldb,
                                       gk__round_scalar(t, beta), call.ptr[2], ldc));
}
