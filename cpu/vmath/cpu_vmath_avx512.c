/* SPDX-License-Identifier: MIT */
/* cpu_vmath_avx512.c - the vector math table over SLEEF's AVX-512 functions (built -mavx512f). */
#include <immintrin.h>
#include <sleef.h>

#define VM_NAME gk__cpu_vmath_avx512
#define VM_ISA "avx512"
#define VF_N 16
#define VD_N 8
#define VD __m512d
#define VD_SC Sleef___m512d_2
#define VF_LOAD _mm512_loadu_ps
#define VF_STORE _mm512_storeu_ps
#define VD_LOAD _mm512_loadu_pd
#define VD_SQRT _mm512_sqrt_pd
#define VD_STORE _mm512_storeu_pd
#define VF_EXP Sleef_expf16_u10avx512f
#define VD_EXP Sleef_expd8_u10avx512f
#define VD_LOG Sleef_logd8_u10avx512f
#define VD_SINCOS Sleef_sincosd8_u10avx512f

#include "cpu_vmath_isa.h"
