/* SPDX-License-Identifier: MIT */
/* cpu_rbf_isa.c - picks the rbf kernels written for an ISA (cpu/rbf/) that this CPU runs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_rbf.h"

static const gk_cpu_rbf_isa *chosen;
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

/* GK_RBF_ISA=generic keeps the generic kernels (the tests run both ways; a user never needs it). */
static void choose(void)
{
    const char *env = getenv("GK_RBF_ISA");
    if (env != NULL && strcmp(env, "generic") == 0)
        return;
#if defined(__x86_64__) && defined(GK_HAVE_RBF_AVX512)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        chosen = &gk__cpu_rbf_avx512;
#endif
}

const gk_cpu_rbf_isa *gk__cpu_rbf_isa(void)
{
    pthread_once(&choose_once, choose);
    return chosen;
}
