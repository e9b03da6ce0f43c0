/* SPDX-License-Identifier: MIT */
/* plan.cu - the CUDA backend's RBF planner: each call's form from its dtype, shape and gamma,
 * by the table of thresholds below; GK_RBF_FORM may force a form (tests, measurements). */
#include "rbf/plan.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "rbf/rbf_center.cuh"
#include "rbf/rbf_matvec_center.h"
#include "rbf/rbf_tile.cuh"

/* The thresholds, measured on the workload suite (bench/workloads.py, docs/forms.md). Below the
 * size limits a form's set-up passes (centring, splitting, the sample) cost more than it saves. */
static const struct {
    size_t tc_min_d;       /* matrix_tc from this many features */
    size_t tc_wide_d;      /* below it, matrix_tc needs tc_min_entries_narrow */
    double tc_min_entries; /* matrix_tc: outputs of at least this many entries */
    double tc_min_entries_narrow;
    size_t dot_max_d;       /* matrix_dot and matvec_dot up to this many features: beyond,
                               their bound fails on data of ordinary spread */
    double dot_min_entries; /* matrix_dot: outputs of at least this many entries */
    double matvec_dot_min_pairs;
    double taylor_min_pairs; /* matvec_taylor: where its bound fails, its box pass and plan
                                (some tens of microseconds) are lost; from here that is a
                                few percent of the direct sum */
    double fgt_min_pairs;    /* matvec_fgt: its binning, plans and two waits for the device cost
                                about a millisecond; from here direct summation takes some 25 ms */
} limits = {64, 128, 0x1p24, 0x1p26, 128, 0x1p20, 0x1p20, 0x1p30, 0x1p36};

static const char *const form_names[CUDA_RBF_FORM_COUNT] = {
    "cuda_rows",         "cuda_matrix_tiled", "cuda_matrix_dot",    "cuda_matrix_tc",
    "cuda_matvec_small", "cuda_matvec_fact",  "cuda_matvec_taylor", "cuda_matvec_tiled",
    "cuda_matvec_dot",   "cuda_matvec_fgt"};

const char *gk__cuda_rbf_form_name(cuda_rbf_form f)
{
    return f >= 0 && f < CUDA_RBF_FORM_COUNT ? form_names[f] : "?";
}

gk_status gk__cuda_rbf_form_of(const char *name, int *form)
{
    *form = -1;
    if (name[0] == '\0')
        return GK_OK;
    for (int f = 0; f < CUDA_RBF_FORM_COUNT; f++)
        if (strcmp(name, form_names[f]) == 0) {
            *form = f;
            return GK_OK;
        }
    /* A form of the CPU backend's (those do not start with cuda_): that backend checks it, this
     * one plans as usual. */
    if (strncmp(name, "cuda_", 5) != 0)
        return GK_OK;
    char list[256] = "";
    for (int f = 0; f < CUDA_RBF_FORM_COUNT; f++) {
        strncat(list, form_names[f], sizeof list - strlen(list) - 3);
        strncat(list, f + 1 < CUDA_RBF_FORM_COUNT ? ", " : "", sizeof list - strlen(list) - 1);
    }
    char shown[41];
    size_t i = 0;
    for (; name[i] != '\0' && i + 1 < sizeof shown; i++)
        shown[i] = name[i] >= 0x20 && name[i] <= 0x7e ? name[i] : '?'; /* printable in messages */
    shown[i] = '\0';
    return gk__cuda_error(GK_E_INVALID_ARGUMENT,
                          "GK_RBF_FORM=%s is not a form: the CUDA backend's are %s", shown, list);
}

static cuda_rbf_plan make(cuda_rbf_form f, bool forced, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cuda_rbf_plan make(cuda_rbf_form f, bool forced, const char *fmt, ...)
{
    cuda_rbf_plan p;
    p.form = f;
    p.forced = forced;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p.why, sizeof p.why, fmt, ap);
    va_end(ap);
    return p;
}

/* Whether GK_RBF_FORM forced a form of this op, one of lo..hi. */
static bool forced_is(const gk_cuda_state *s, cuda_rbf_form lo, cuda_rbf_form hi)
{
    return s->rbf_form >= (int)lo && s->rbf_form <= (int)hi;
}

cuda_rbf_plan gk__cuda_rbf_plan_rows(const gk_cuda_state *, size_t, size_t)
{
    return make(CUDA_RBF_ROWS, false, "the only form");
}

/* gamma > 0 with exp's constant finite in float32: the inner-product forms' bounds need it. */
static bool finite_positive(double gamma)
{
    const float c = cuda_rbf_constant(gamma, 0.0f);
    return gamma > 0.0 && std::isfinite(c) && std::isfinite((float)gamma);
}

/* matrix_tc's hard limits (what it can run, whatever the size): its tile count in 32 bits and
 * its scratch (operands of dp floats a row, norms, factors, column sums) no larger than the
 * output, the rule of the CPU's packed forms. */
static bool tc_can_run(size_t m, size_t n, size_t d, double gamma)
{
    const double entries = (double)m * (double)n;
    const double dp = (double)((d + GK_RBF_TC_BK - 1) / GK_RBF_TC_BK * GK_RBF_TC_BK);
    return d >= 1 && finite_positive(gamma) &&
           (double)((m + 127) / 128) * (double)((n + 63) / 64) < 4294901760.0 &&
           (double)(m + n) * (dp + 4.0) + (double)GK_TC_SUM_CHUNKS * (double)d * 3.0 + (double)d +
                   entries / 4096.0 + 64.0 <=
               entries;
}

static bool dot_can_run(size_t m, size_t n, size_t d, double gamma)
{
    const double bound = (2.0 * (double)d + 8.0) * 0x1p-24 * gamma;
    const size_t groups =
        (m + GK_RBF_GROUP - 1) / GK_RBF_GROUP + (n + GK_RBF_GROUP - 1) / GK_RBF_GROUP;
    return d > GK_RBF_SMALL_BK && finite_positive(gamma) && bound < 1.0 &&
           groups <= GK_CUDA_GRID_X_MAX;
}

cuda_rbf_plan gk__cuda_rbf_plan_matrix(const gk_cuda_state *s, gk_dtype t, size_t m, size_t n,
                                       size_t d, double gamma)
{
    const double entries = (double)m * (double)n;
    const bool f32 = t == GK_FLOAT32;
    if (forced_is(s, CUDA_RBF_MATRIX_TILED, CUDA_RBF_MATRIX_TC)) {
        const cuda_rbf_form f = (cuda_rbf_form)s->rbf_form;
        if (f == CUDA_RBF_MATRIX_TILED ||
            (f32 && f == CUDA_RBF_MATRIX_TC && tc_can_run(m, n, d, gamma)) ||
            (f32 && f == CUDA_RBF_MATRIX_DOT && dot_can_run(m, n, d, gamma)))
            return make(f, true, "GK_RBF_FORM");
    }
    if (!f32)
        return make(CUDA_RBF_MATRIX_TILED, false,
                    "float64: the inner-product forms would lose "
                    "more accuracy than they save time");
    const bool tc_size =
        entries >= (d < limits.tc_wide_d ? limits.tc_min_entries_narrow : limits.tc_min_entries);
    if (d >= limits.tc_min_d && tc_size && tc_can_run(m, n, d, gamma))
        return make(CUDA_RBF_MATRIX_TC, false, "d >= %zu, %.3g entries", limits.tc_min_d, entries);
    if (d <= limits.dot_max_d && entries >= limits.dot_min_entries && dot_can_run(m, n, d, gamma))
        return make(CUDA_RBF_MATRIX_DOT, false, "%d < d <= %zu, %.3g entries", GK_RBF_SMALL_BK,
                    limits.dot_max_d, entries);
    return make(CUDA_RBF_MATRIX_TILED, false,
                !finite_positive(gamma) ? "gamma not finite and > 0"
                : d <= GK_RBF_SMALL_BK  ? "d <= 4"
                : entries < limits.dot_min_entries
                    ? "small output"
                    : "d too large for matrix_dot and too small or scratch too large for tc");
}

static bool matvec_dot_can_run(size_t m, size_t n, size_t d, double gamma)
{
    return d > 4 && finite_positive(gamma) &&
           gk__cuda_matvec_center_floats(m, n, d) <= GK_MATVEC_DOT_MAX_FLOATS;
}

static cuda_rbf_plan matvec_plan(const gk_cuda_state *s, gk_dtype t, size_t m, size_t n, size_t d,
                                 double gamma);

cuda_rbf_plan gk__cuda_rbf_plan_matvec(const gk_cuda_state *s, gk_dtype t, size_t m, size_t n,
                                       size_t d, double gamma)
{
    const double pairs = (double)m * (double)n;
    const bool fgt = d >= 1 && d <= 4 && gamma > 0.0 && std::isfinite(gamma);
    if (s->rbf_form == (int)CUDA_RBF_MATVEC_FGT && fgt)
        return make(CUDA_RBF_MATVEC_FGT, true, "GK_RBF_FORM");
    /* float64 runs the transform only when forced: its speed on the device is not measured */
    if (fgt && t == GK_FLOAT32 && s->rbf_form < 0 && pairs >= limits.fgt_min_pairs)
        return make(CUDA_RBF_MATVEC_FGT, false, "%.3g pairs", pairs);
    return gk__cuda_rbf_plan_matvec_after_fgt(s, t, m, n, d, gamma, NULL);
}

cuda_rbf_plan gk__cuda_rbf_plan_matvec_after_fgt(const gk_cuda_state *s, gk_dtype t, size_t m,
                                                 size_t n, size_t d, double gamma,
                                                 const char *declined)
{
    cuda_rbf_plan p = matvec_plan(s, t, m, n, d, gamma);
    if (declined != NULL) { /* "<declined>; <the form's why>", cut short where full */
        char why[sizeof p.why];
        size_t k = strnlen(declined, sizeof why - 3);
        memcpy(why, declined, k);
        memcpy(why + k, "; ", 3);
        strncat(why, p.why, sizeof why - k - 3);
        memcpy(p.why, why, sizeof why);
    }
    return p;
}

static cuda_rbf_plan matvec_plan(const gk_cuda_state *s, gk_dtype t, size_t m, size_t n, size_t d,
                                 double gamma)
{
    const double pairs = (double)m * (double)n;
    const bool f32 = t == GK_FLOAT32, fact = f32 && d >= 1 && d <= 4 && finite_positive(gamma);
    if (forced_is(s, CUDA_RBF_MATVEC_SMALL, CUDA_RBF_MATVEC_DOT)) {
        const cuda_rbf_form f = (cuda_rbf_form)s->rbf_form;
        if ((f == CUDA_RBF_MATVEC_SMALL && d <= 4) || (f == CUDA_RBF_MATVEC_TILED && d > 4) ||
            ((f == CUDA_RBF_MATVEC_FACT || f == CUDA_RBF_MATVEC_TAYLOR) && fact) ||
            (f == CUDA_RBF_MATVEC_DOT && f32 && matvec_dot_can_run(m, n, d, gamma)))
            return make(f, true, "GK_RBF_FORM");
    }
    if (d <= 4) {
        if (fact && pairs >= limits.taylor_min_pairs)
            return make(CUDA_RBF_MATVEC_TAYLOR, false,
                        "d <= 4, %.3g pairs: one expansion if its bound holds, else fact", pairs);
        if (fact)
            return make(CUDA_RBF_MATVEC_FACT, false, "float32, 1 <= d <= 4");
        return make(CUDA_RBF_MATVEC_SMALL, false, "d <= 4");
    }
    if (f32 && d <= limits.dot_max_d && pairs >= limits.matvec_dot_min_pairs &&
        matvec_dot_can_run(m, n, d, gamma))
        return make(CUDA_RBF_MATVEC_DOT, false, "float32, 4 < d <= %zu, %.3g pairs",
                    limits.dot_max_d, pairs);
    return make(CUDA_RBF_MATVEC_TILED, false, "d > 4");
}

void gk__cuda_rbf_log(const gk_cuda_state *s, const char *op, size_t m, size_t n, size_t d,
                      const cuda_rbf_plan &p)
{
    if (s->log)
        gk__cuda_log("%s: form %s (%zu x %zu x %zu; %s)", op, gk__cuda_rbf_form_name(p.form), m, n,
                     d, p.why);
}
