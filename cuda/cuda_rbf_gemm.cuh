/* SPDX-License-Identifier: MIT */
/* cuda_rbf_gemm.cuh - rbf_matrix's tensor-core form with the products on cuBLASLt: scaled fp16
 * split operands, one GEMM into the output, one in-place epilogue under the rounding bound
 * (derivation in cuda_rbf_gemm.cu). Called by cuda_rbf_tc.cu, which centers the rows, chooses
 * the form from its sample and computes the listed tiles from differences afterwards. */
#ifndef GK_CUDA_RBF_GEMM_CUH
#define GK_CUDA_RBF_GEMM_CUH

#include <cublasLt.h>

#include "cuda_internal.h"
#include "cuda_rbf_tc_bound.cuh"

/* The cuBLASLt algorithm of one call's products. */
struct cuda_gemm_plan {
    cublasLtMatmulAlgo_t algo;
};

/* Whether the GEMM form takes a float32 call of m x n entries with d features that the
 * tensor-core form takes with dp padded features (GK_RBF_TC not "fused", d from
 * GK_RBF_GEMM_MIN_D, GK_RBF_GEMM_MIN_ENTRIES entries unless forced, cuBLASLt offering an algorithm
 * for the products without workspace, for operands at xs and ys, gk__cuda_rbf_gemm_operand_bytes
 * each): then *plan holds the algorithms. Host only; nothing is queued. */
bool gk__cuda_rbf_gemm_plan(gk_cuda_state *s, size_t m, size_t n, size_t d, size_t dp, bool forced,
                            const void *xs, const void *ys, const float *k, cuda_gemm_plan *plan);

/* Bytes of workspace the form's operands of `rows` rows take (at most 8 dp a row, the space the
 * fused form's operands take). */
size_t gk__cuda_rbf_gemm_operand_bytes(size_t rows, size_t dp);

/* The form where gate says tensor cores: the split of the centered rows (center) into xs and
 * ys (gk__cuda_rbf_gemm_operand_bytes each), their norms into nx and ny, the products into k,
 * and the epilogue in place; tiles of 128 x 128 (ntn = ceil(n / 128) to a row) with more than
 * 1 / GK_RBF_TC_TILE_SHARE of their entries failing the bound are listed from flags[2] on
 * (count in flags[1]) for cuda_tc_differences. Where gate says differences nothing runs (the
 * products through a conditional graph node). */
gk_status gk__cuda_rbf_gemm(gk_cuda_state *s, size_t m, size_t dp, const cuda_tc_params &p,
                            const cuda_gemm_plan &plan, const float *center, void *xs, void *ys,
                            float *nx, float *ny, float *k, unsigned int *flags, cuda_tc_gate gate);

#endif /* GK_CUDA_RBF_GEMM_CUH */
