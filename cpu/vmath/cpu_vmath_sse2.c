/* SPDX-License-Identifier: MIT */
/* cpu_vmath_sse2.c - the vector math table over SLEEF's SSE2 functions (x86-64's baseline). */
#include <emmintrin.h>
#include <sleef.h>

#define VM_NAME gk__cpu_vmath_sse2
#define VM_ISA "sse2"
#define VF_N 4
#define VF __m128
#define VD_N 2
#define VD __m128d
#define VD_SC Sleef___m128d_2
#define VF_LOAD _mm_loadu_ps
#define VF_STREAM _mm_stream_ps
#define VF_STORE _mm_storeu_ps
#define VD_LOAD _mm_loadu_pd
#define VD_SQRT _mm_sqrt_pd
#define VD_STREAM _mm_stream_pd
#define VD_STORE _mm_storeu_pd
#define VF_EXP Sleef_expf4_u10sse2
#define VD_EXP Sleef_expd2_u10sse2
#define VD_LOG Sleef_logd2_u10sse2
#define VD_GT_MASK(v, c) _mm_movemask_pd(_mm_cmpgt_pd(v, _mm_set1_pd(c)))
#define VD_SINCOS Sleef_sincosd2_u10sse2

#include "cpu_vmath_isa.h"
