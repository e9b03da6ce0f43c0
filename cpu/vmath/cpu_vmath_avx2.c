/* SPDX-License-Identifier: MIT */
/* cpu_vmath_avx2.c - the vector math table over SLEEF's AVX2 functions (built -mavx2 -mfma). */
#include <immintrin.h>
#include <sleef.h>

#define VM_NAME gk__cpu_vmath_avx2
#define VM_ISA "avx2"
#define VF_N 8
#define VF __m256
#define VD_N 4
#define VD __m256d
#define VD_SC Sleef___m256d_2
#define VF_LOAD _mm256_loadu_ps
#define VF_STREAM _mm256_stream_ps
#define VF_STORE _mm256_storeu_ps
#define VD_LOAD _mm256_loadu_pd
#define VD_SQRT _mm256_sqrt_pd
#define VD_STREAM _mm256_stream_pd
#define VD_STORE _mm256_storeu_pd
#define VF_EXP Sleef_expf8_u10avx2
#define VD_EXP Sleef_expd4_u10avx2
#define VD_LOG Sleef_logd4_u10avx2
#define VD_GT_MASK(v, c) _mm256_movemask_pd(_mm256_cmp_pd(v, _mm256_set1_pd(c), _CMP_GT_OQ))
#define VD_SINCOS Sleef_sincosd4_u10avx2

#include "cpu_vmath_isa.h"
