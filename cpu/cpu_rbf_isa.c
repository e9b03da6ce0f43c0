/* SPDX-License-Identifier: MIT */
/* cpu_rbf_isa.c - picks the rbf kernels written for an ISA (cpu/rbf/) that a context runs. */
#include "cpu_rbf.h"
#include "error.h"

/* GK_RBF_ISA=generic keeps the portable kernels (the tests run each way); auto and avx512 take
 * the AVX-512 kernels where the CPU has them. */
gk_status gk__cpu_rbf_isa_choose(int isa, const gk_cpu_rbf_isa **out)
{
    *out = NULL;
    if (isa == GK_ISA_GENERIC)
        return GK_OK;
#if defined(__x86_64__) && defined(GK_HAVE_RBF_AVX512)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        *out = &gk__cpu_rbf_avx512;
        return GK_OK;
    }
#endif
    if (isa == GK_ISA_AVX512)
        return gk__error(GK_E_UNSUPPORTED,
                         "GK_RBF_ISA=avx512, but this CPU or build has no AVX-512 rbf kernels "
                         "(accepted here: auto, generic)");
    return GK_OK;
}
