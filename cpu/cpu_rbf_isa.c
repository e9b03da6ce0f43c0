/* SPDX-License-Identifier: MIT */
/* cpu_rbf_isa.c - picks the rbf kernels written for an ISA (cpu/rbf/) that this CPU runs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "cpu_rbf.h"

static const gk_cpu_rbf_isa *chosen;

#if defined(__x86_64__) && defined(GK_HAVE_RBF_AMX)
static gk_cpu_rbf_isa with_amx; /* AVX-512's kernels, the fused form on AMX tiles */

/* AMX tiles usable: the CPU has AMX-TILE and AMX-BF16, the OS saves tile state (XCR0 bits 17,
 * 18), and Linux grants this process the tile data (arch_prctl ARCH_REQ_XCOMP_PERM, needed
 * since 5.16; it can be refused, e.g. where a thread's sigaltstack is too small). */
static int amx_usable(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 22)))
        return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
        return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & (3u << 17)) != (3u << 17))
        return 0;
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
}
#endif
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

/* GK_RBF_ISA=generic keeps the portable kernels; =amx puts the fused form's dot products on AMX
 * tiles where they are usable. AVX-512 alone is the default: on the 16-vCPU H200 host, 16
 * threads ran 4096^2 x 256 float32 in 6.8 ms with AVX-512 FMAs and in 8.9 ms with AMX (x 20:
 * 1.6 against 2.0 ms; bench/RESULTS.md, 2026-12-01), although one thread on the 2-core VM is 13%
 * faster with AMX (13.1 against 15.3 ms at 2048^2 x 256): the AMX passes are bound by L2 (about
 * 29 cycles per TDPBF16PS there, 17 with data in L1), and the host's vCPUs seem to share cores
 * (its sgemm runs at half the VM's rate per vCPU). The tests run each way. */
static void choose(void)
{
    const char *env = getenv("GK_RBF_ISA");
    if (env != NULL && strcmp(env, "generic") == 0)
        return;
#if defined(__x86_64__) && defined(GK_HAVE_RBF_AVX512)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        chosen = &gk__cpu_rbf_avx512;
#if defined(GK_HAVE_RBF_AMX)
    if (chosen != NULL && env != NULL && strcmp(env, "amx") == 0 && amx_usable()) {
        with_amx = gk__cpu_rbf_avx512;
        with_amx.name = gk__cpu_rbf_amx.name;
        with_amx.mr = gk__cpu_rbf_amx.mr;
        with_amx.nr = gk__cpu_rbf_amx.nr;
        with_amx.ip_panel_bytes = gk__cpu_rbf_amx.ip_panel_bytes;
        with_amx.ip_pack = gk__cpu_rbf_amx.ip_pack;
        with_amx.ip_dot_err = gk__cpu_rbf_amx.ip_dot_err;
        with_amx.ip_f32 = gk__cpu_rbf_amx.ip_f32;
        with_amx.ip_mirrors = gk__cpu_rbf_amx.ip_mirrors;
        chosen = &with_amx;
    }
#endif
#endif
}

const gk_cpu_rbf_isa *gk__cpu_rbf_isa(void)
{
    pthread_once(&choose_once, choose);
    return chosen;
}
