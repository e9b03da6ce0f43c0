/* SPDX-License-Identifier: MIT */
/* plan.c - the CPU's rbf planner: which form runs rbf_rows, rbf_matrix, rbf_matvec and the
 * Gaussian kernel's kernel_matmul at d <= 4, and why. */
#include "plan.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "env.h"
#include "error.h"
#include "fgt_params.h"

static const char *const form_names[GK_CPU_RBF_FORMS] = {"fused", "gemm", "diff", "wide", "fgt"};
static const char *const op_names[] = {"rbf_rows", "rbf_matrix", "rbf_matvec", "kernel_matmul"};

/* Every threshold the planner decides by, in one table. "fits" limits are what a form needs to
 * be right (a forced form obeys them too); "pays" limits are where it is faster than the
 * difference form (measured on the workload suite: docs/forms.md). */
static const struct {
    size_t ip_min_entries; /* pays: m n from which packing centred rows costs little enough */
    size_t fused_min_d;    /* pays: below, the tile's epilogue outweighs its d multiply-adds */
    size_t fused_max_d;    /* fits: the subnormal allowance of cpu_rbf_fused.c holds to here */
    /* pays: below this many features, data where sampled entries fail the bound (clustered data
     * about its global mean) takes differences: the fused form's recompute of 3% of the
     * entries (pairs within a cluster) cost more than differences for all (2048^2 x 64, one
     * thread: 12.4 ms against 6.9; U[0,1) fused 5.3); from here on it costs less (x 256: 56
     * ms against 60 on two threads, 31 against 61 where x is y, the mirrored tiles) */
    size_t fused_sample_max_d;
    double fused_max_gamma; /* fits: likewise */
    size_t gemm_min_d; /* pays: below, writing G and reading it back costs more than GEMM saves */
    size_t gemm_matvec_max_d; /* fits: rbf_matvec's centred tiles are scratch of d columns */
    double gemm_max_du;       /* fits: d u, for the bound's g_d(u) = d u / (1 - d u) */
    /* pays: float32 rbf_matvec through GEMM where the ISA's difference blocks exist (they
     * measured four times faster at 4096^2 x 64) */
    int gemm_matvec_with_isa;
    size_t fgt_max_d;       /* fits: the transform's tensors are written for d <= 4 */
    size_t fgt_min_entries; /* pays: below, choosing the grid (binning the points for each
                               candidate side) costs as much as direct summation (2048^2 x 3:
                               a few ms either way) */
} limits = {
    .ip_min_entries = (size_t)1 << 16,
    .fused_min_d = 8,
    .fused_max_d = 1024,
    .fused_sample_max_d = 128,
    .fused_max_gamma = 0x1p100,
    .gemm_min_d = 64,
    .gemm_matvec_max_d = 4096,
    .gemm_max_du = 1e-3,
    .gemm_matvec_with_isa = 0,
    .fgt_max_d = GK_FGT_MAX_D,
    .fgt_min_entries = (size_t)1 << 22,
};

const char *gk__cpu_rbf_form_name(gk_cpu_rbf_form f)
{
    return (unsigned)f < GK_CPU_RBF_FORMS ? form_names[f] : "?";
}

gk_status gk__cpu_rbf_form_parse(const char *name, int *form)
{
    *form = -1;
    if (name == NULL || name[0] == '\0')
        return GK_OK;
    for (int f = 0; f < GK_CPU_RBF_FORMS; f++)
        if (strcmp(name, form_names[f]) == 0) {
            *form = f;
            return GK_OK;
        }
    /* A form of the CUDA backend's: that backend checks it, this one plans as usual. */
    if (strncmp(name, "cuda_", 5) == 0)
        return GK_OK;
    char shown[200];
    gk__printable(name, 40, shown, sizeof shown);
    return gk__error(GK_E_INVALID_ARGUMENT,
                     "GK_RBF_FORM=%s is not a form: the CPU backend's are %s, %s, %s, %s, %s; the "
                     "CUDA backend's start with cuda_",
                     shown, form_names[0], form_names[1], form_names[2], form_names[3],
                     form_names[4]);
}

/* Appends to p->why (cut short where it is full). */
static void say(gk_cpu_rbf_plan *p, const char *fmt, ...)
{
    size_t used = strlen(p->why);
    if (used + 1 >= sizeof p->why)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why + used, sizeof p->why - used, fmt, ap);
    va_end(ap);
}

/* m n, or SIZE_MAX where it does not fit. */
static size_t entries(size_t m, size_t n)
{
    return n != 0 && m > SIZE_MAX / n ? SIZE_MAX : m * n;
}

/* The scratch of the inner-product forms of rbf_matrix (centred copies of x and y) is no larger
 * than the output: (m + n) d <= m n. */
static int copies_fit(size_t m, size_t n, size_t d)
{
    return d != 0 && m + n >= m && m + n <= entries(m, n) / d;
}

/* Whether form f can compute this call right; if not, the reason goes to p->why. */
static int fits(const gk_cpu_state *s, gk_cpu_rbf_form f, gk_dtype t, size_t m, size_t n, size_t d,
                double gamma, gk_cpu_rbf_plan *p)
{
    size_t es = t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
    const char *name = form_names[f];
    if (p->op == GK_CPU_RBF_ROWS_OP && f != GK_CPU_RBF_DIFF) {
        say(p, "%s: not a form of rbf_rows", name);
        return 0;
    }
    switch (f) {
    case GK_CPU_RBF_FUSED:
        if (p->op != GK_CPU_RBF_MATRIX_OP || t != GK_FLOAT32)
            say(p, "%s: float32 rbf_matrix only", name);
        else if (s->rbf_isa == NULL || s->rbf_isa->ip_f32 == NULL)
            say(p, "%s: no ISA kernel (GK_RBF_ISA=generic or no AVX-512)", name);
        else if (d == 0 || d > limits.fused_max_d)
            say(p, "%s: d %zu not in [1, %zu]", name, d, limits.fused_max_d);
        else if (!(gamma > 0.0) || !(gamma <= limits.fused_max_gamma))
            say(p, "%s: gamma %g not in (0, 2^100]", name, gamma);
        else if (!copies_fit(m, n, d))
            say(p, "%s: (m + n) d > m n", name);
        else
            return 1;
        return 0;
    case GK_CPU_RBF_GEMM:
        if (!(gamma > 0.0) || !isfinite(gamma))
            say(p, "%s: gamma %g not positive and finite", name, gamma);
        else if (d == 0 || (double)d * (t == GK_FLOAT32 ? 0x1p-24 : 0x1p-53) > limits.gemm_max_du)
            say(p, "%s: d %zu too large for the rounding bound", name, d);
        else if (m > INT_MAX || n > INT_MAX || d > INT_MAX)
            say(p, "%s: a size above INT_MAX (32-bit BLAS)", name);
        else if (p->op == GK_CPU_RBF_MATRIX_OP && !copies_fit(m, n, d))
            say(p, "%s: (m + n) d > m n", name);
        else if (p->op == GK_CPU_RBF_MATVEC_OP && d > limits.gemm_matvec_max_d)
            say(p, "%s: d %zu > %zu", name, d, limits.gemm_matvec_max_d);
        else
            return 1;
        return 0;
    case GK_CPU_RBF_DIFF:
        if (p->op != GK_CPU_RBF_ROWS_OP && !gk__cpu_rbf_packs(d, es)) {
            say(p, "%s: rows of %zu features too wide to pack", name, d);
            return 0;
        }
        return 1;
    case GK_CPU_RBF_FGT:
        if (p->op != GK_CPU_RBF_MATVEC_OP && p->op != GK_CPU_RBF_MATMUL_OP)
            say(p, "%s: rbf_matvec and kernel_matmul only", name);
        else if (d == 0 || d > limits.fgt_max_d)
            say(p, "%s: d %zu not in [1, %zu]", name, d, limits.fgt_max_d);
        else if (!(gamma > 0.0) || !isfinite(gamma))
            say(p, "%s: gamma %g not positive and finite", name, gamma);
        else
            return 1;
        return 0;
    case GK_CPU_RBF_WIDE:
    case GK_CPU_RBF_FORMS:
        break;
    }
    return 1;
}

/* Whether form f (which fits) is worth running instead of the difference form. */
static int pays(const gk_cpu_state *s, gk_cpu_rbf_form f, gk_dtype t, size_t m, size_t n, size_t d,
                gk_cpu_rbf_plan *p)
{
    size_t e = entries(m, n);
    switch (f) {
    case GK_CPU_RBF_FUSED:
    case GK_CPU_RBF_GEMM: {
        if (f == GK_CPU_RBF_GEMM && p->op == GK_CPU_RBF_MATVEC_OP && t == GK_FLOAT32 &&
            s->rbf_isa != NULL && !limits.gemm_matvec_with_isa) {
            say(p, "gemm: float32 rbf_matvec with ISA kernels, which diff runs faster");
            return 0;
        }
        size_t min_d = f == GK_CPU_RBF_FUSED ? limits.fused_min_d : limits.gemm_min_d;
        if (e < limits.ip_min_entries)
            say(p, "%s: %zu entries < %zu", form_names[f], e, limits.ip_min_entries);
        else if (d < min_d)
            say(p, "%s: d %zu < %zu", form_names[f], d, min_d);
        else {
            say(p, "%s: d %zu >= %zu, %zu entries >= %zu", form_names[f], d, min_d, e,
                limits.ip_min_entries);
            return 1;
        }
        return 0;
    }
    case GK_CPU_RBF_FGT:
        if (e < limits.fgt_min_entries) {
            say(p, "fgt: %zu entries < %zu", e, limits.fgt_min_entries);
            return 0;
        }
        say(p, "fgt: %zu entries >= %zu, its cost model decides", e, limits.fgt_min_entries);
        return 1;
    case GK_CPU_RBF_DIFF:
    case GK_CPU_RBF_WIDE:
    case GK_CPU_RBF_FORMS:
        break;
    }
    return 1;
}

/* The planner's own choice: the fast Gauss transform or the inner-product forms where they fit
 * and pay, else differences. */
static gk_cpu_rbf_form choose(const gk_cpu_state *s, gk_dtype t, size_t m, size_t n, size_t d,
                              double gamma, gk_cpu_rbf_plan *p)
{
    if (p->op == GK_CPU_RBF_MATVEC_OP && d <= limits.fgt_max_d) {
        if (fits(s, GK_CPU_RBF_FGT, t, m, n, d, gamma, p) && pays(s, GK_CPU_RBF_FGT, t, m, n, d, p))
            return GK_CPU_RBF_FGT;
        say(p, "; ");
    }
    for (int f = GK_CPU_RBF_FUSED; f <= GK_CPU_RBF_GEMM; f++) {
        if (p->op == GK_CPU_RBF_ROWS_OP || (f == GK_CPU_RBF_FUSED && p->op != GK_CPU_RBF_MATRIX_OP))
            continue;
        if (fits(s, (gk_cpu_rbf_form)f, t, m, n, d, gamma, p) &&
            pays(s, (gk_cpu_rbf_form)f, t, m, n, d, p))
            return (gk_cpu_rbf_form)f;
        say(p, "; ");
    }
    if (fits(s, GK_CPU_RBF_DIFF, t, m, n, d, gamma, p)) {
        say(p, "diff%s", s->rbf_isa != NULL ? "" : " (portable kernels)");
        return GK_CPU_RBF_DIFF;
    }
    say(p, "; wide");
    return GK_CPU_RBF_WIDE;
}

void gk__cpu_rbf_plan(const gk_cpu_state *s, gk_cpu_rbf_op op, gk_dtype t, size_t m, size_t n,
                      size_t d, double gamma, gk_cpu_rbf_plan *p)
{
    p->op = op;
    p->sample = d < limits.fused_sample_max_d;
    p->why[0] = '\0';
    say(p, "%s %zux%zux%zu, gamma %.3g, isa %s: ", t == GK_FLOAT32 ? "float32" : "float64", m, n, d,
        gamma, s->rbf_isa != NULL ? s->rbf_isa->name : "generic");
    if (s->rbf_form >= 0) {
        gk_cpu_rbf_form f = (gk_cpu_rbf_form)s->rbf_form;
        if (fits(s, f, t, m, n, d, gamma, p)) {
            p->form = f;
            say(p, "forced by GK_RBF_FORM=%s", form_names[f]);
            return;
        }
        say(p, ", so not the forced GK_RBF_FORM=%s but the planner's choice: ", form_names[f]);
    }
    p->form = choose(s, t, m, n, d, gamma, p);
}

void gk__cpu_rbf_plan_matmul(const gk_cpu_state *s, gk_dtype t, size_t m, size_t n, size_t d,
                             size_t r, double gamma, gk_cpu_rbf_plan *p)
{
    p->op = GK_CPU_RBF_MATMUL_OP;
    p->sample = 0;
    p->why[0] = '\0';
    p->form = GK_CPU_RBF_DIFF;
    say(p, "%s %zux%zux%zu, %zu columns, gamma %.3g: ", t == GK_FLOAT32 ? "float32" : "float64", m,
        n, d, r, gamma);
    if (s->rbf_form == GK_CPU_RBF_FGT && fits(s, GK_CPU_RBF_FGT, t, m, n, d, gamma, p)) {
        p->form = GK_CPU_RBF_FGT;
        say(p, "forced by GK_RBF_FORM=fgt");
        return;
    }
    if (s->rbf_form == GK_CPU_RBF_DIFF) {
        say(p, "forced by GK_RBF_FORM=diff, direct summation");
        return;
    }
    if (s->rbf_form >= 0)
        say(p, "GK_RBF_FORM=%s is not a form of kernel_matmul, so the planner's choice: ",
            form_names[s->rbf_form]);
    if (fits(s, GK_CPU_RBF_FGT, t, m, n, d, gamma, p) && pays(s, GK_CPU_RBF_FGT, t, m, n, d, p))
        p->form = GK_CPU_RBF_FGT;
    else
        say(p, "; tiles");
}

void gk__cpu_rbf_plan_decline(gk_cpu_rbf_plan *p, gk_dtype t, size_t d, const char *reason)
{
    size_t es = t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
    say(p, "; %s declined: %s", form_names[p->form], reason);
    p->form = gk__cpu_rbf_packs(d, es) ? GK_CPU_RBF_DIFF : GK_CPU_RBF_WIDE;
}

void gk__cpu_rbf_plan_note(gk_cpu_rbf_plan *p, const char *text)
{
    say(p, "; %s", text);
}

void gk__cpu_rbf_plan_log(const gk_cpu_state *s, const gk_cpu_rbf_plan *p)
{
    /* kernel_matmul's other form is the kernel family's tiles (cpu/kernel/matmul.c) */
    const char *form =
        p->op == GK_CPU_RBF_MATMUL_OP && p->form != GK_CPU_RBF_FGT ? "tiles" : form_names[p->form];
    if (s->log)
        gk__log_line("%s: form %s (%s)", op_names[p->op], form, p->why);
}
