/* SPDX-License-Identifier: MIT */
/* cpu_rbf_matvec.c - out[i] = sum_j exp(-gamma * ||x_i - y_j||^2) w[j], one tile at a time. */
#include <math.h>
#include <omp.h>
#include <stdint.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "error.h"
#include "rbf/plan.h"

/* Rows of x whose kernel values an ISA kernel computes at once (12 register rows, cpu/rbf/). */
#define GK_RBF_KT_ROWS ((size_t)12)
/* Rows of x per task: each task packs every block of y in its share once; at 64 rows the packing
 * was half the time of 4096^2 x 64 float32, and 384 rows halved the call's time. */
#define GK_RBF_MATVEC_ROWS ((size_t)384)

static void cpu_store(size_t es, void *out, size_t i, double v)
{
    if (es == sizeof(float))
        ((float *)out)[i] = (float)v;
    else
        ((double *)out)[i] = v;
}

/* out[i] = the sum of the column shares' partial sums partial[s * m + i], added in the order
 * s = 0, 1, ... whatever the schedule was. */
static void cpu_add_partials(size_t es, void *out, size_t m, size_t splits, const double *partial)
{
    for (size_t i = 0; i < m; i++) {
        double v = 0.0;
        for (size_t s = 0; s < splits; s++)
            v += partial[s * m + i];
        cpu_store(es, out, i, v);
    }
}

/* Rows too wide to pack (cpu_rbf.h): each entry from its two rows in place. Task t is row
 * t % m and column share t / m of `splits` (built from the context's thread count, as below);
 * the only scratch is the shares' partial sums, splits x m doubles. */
static gk_status cpu_rbf_matvec_wide(int threads, int team, const gk_cpu_rbf_kernels *kr, size_t m,
                                     size_t n, size_t d, double gamma, double gz, const char *x,
                                     const char *y, const char *w, void *out)
{
    size_t es = kr->elem_size, want = 2 * (size_t)threads;
    size_t splits = m >= want ? 1 : (want + m - 1) / m;
    splits = splits < n ? splits : n;
    double *partial = NULL;
    if (splits > 1 && (gk__aligned_alloc((void **)&partial, 64, splits * m * sizeof *partial) != 0))
        return gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %zu x %zu doubles of scratch", splits,
                         m);
    size_t tasks = m * splits;
    int nt = gk__cpu_region(team, tasks);
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, 1)
    for (size_t t = 0; t < tasks; t++) {
        size_t i = t % m, s = t / m, j0 = s * n / splits, j1 = (s + 1) * n / splits;
        const char *xi = x + i * d * es;
        double v = 0.0;
        for (size_t j = j0; j < j1; j++) {
            double kv = kr->pair(d, gamma, gz, xi, y + j * d * es);
            v +=
                kv * (es == sizeof(float) ? (double)((const float *)w)[j] : ((const double *)w)[j]);
        }
        if (splits == 1)
            cpu_store(es, out, i, v);
        else
            partial[s * m + i] = v;
    }
    if (splits > 1) {
        cpu_add_partials(es, out, m, splits, partial);
        gk__free(partial);
    }
    return GK_OK;
}

/* Each task owns a tile of rows and a contiguous share of the column blocks; its row sums are
 * kept in double in thread scratch, never as an m x n matrix. When there are too few row tiles
 * to occupy the team (small m, large n) the columns are split into `splits` shares whose
 * partial sums are added in a fixed order afterwards. Results depend on the inputs and, through
 * `splits`, on the context's thread count (threads), never on the schedule or on the team that
 * runs the tasks (team: fewer when cores are busy, cpu_team.c). */
static gk_status cpu_rbf_matvec(int threads, int team, const gk_cpu_rbf_isa *isa,
                                const gk_cpu_rbf_kernels *kr, size_t m, size_t n, size_t d,
                                double gamma, const char *x, const char *y, const char *w,
                                void *out)
{
    size_t es = kr->elem_size;
    double gz = gk__rbf_zero_exponent(gamma);
    size_t cols = gk__cpu_rbf_block_cols(n, d, es);
    size_t row_tiles = (m + GK_RBF_MATVEC_ROWS - 1) / GK_RBF_MATVEC_ROWS;
    size_t col_blocks = (n + cols - 1) / cols;
    size_t want = 2 * (size_t)threads, splits = 1;
    if (row_tiles < want) {
        splits = (want + row_tiles - 1) / row_tiles;
        splits = splits < col_blocks ? splits : col_blocks;
    }
    size_t tasks = row_tiles * splits;
    int nt = gk__cpu_region(team, tasks);
    /* Per thread: a packed y block, one row of kernel values, the tile's row sums; in whole
     * cache lines so no two threads share one. */
    /* float32 with an ISA kernel: its row blocks (GK_RBF_KT_ROWS rows of x at a time, many
     * independent accumulators) where the row kernel has two chains per row; the same values
     * within the contract (cpu/rbf/cpu_rbf_avx512.c). */
    if (es != sizeof(float) || (isa != NULL && isa->rows_f32 == NULL))
        isa = NULL;
    size_t kt_rows = isa != NULL ? GK_RBF_KT_ROWS : 1;
    size_t pack_bytes = (d * cols * es + 63) / 64 * 64,
           kt_bytes = (kt_rows * cols * es + 63) / 64 * 64;
    size_t per = pack_bytes + kt_bytes + GK_RBF_MATVEC_ROWS * sizeof(double);
    size_t bytes = (size_t)nt * per, partial_bytes = splits > 1 ? splits * m * sizeof(double) : 0;
    void *scratch = NULL;
    if (bytes / per != (size_t)nt || partial_bytes > SIZE_MAX - bytes ||
        gk__aligned_alloc(&scratch, 64, bytes + partial_bytes) != 0)
        return gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %d x %zu + %zu bytes of scratch", nt,
                         per, partial_bytes);
    double *partial = (double *)((char *)scratch + bytes);
#pragma omp parallel num_threads(nt)
    {
        char *yt = (char *)scratch + (size_t)omp_get_thread_num() * per;
        char *kt = yt + pack_bytes;
        double *rsum = (double *)(kt + kt_bytes);
#pragma omp for schedule(dynamic, 1)
        for (size_t t = 0; t < tasks; t++) {
            size_t s = t / row_tiles, i0 = t % row_tiles * GK_RBF_MATVEC_ROWS;
            size_t i1 = m - i0 < GK_RBF_MATVEC_ROWS ? m : i0 + GK_RBF_MATVEC_ROWS;
            size_t cb0 = s * col_blocks / splits, cb1 = (s + 1) * col_blocks / splits;
            for (size_t i = i0; i < i1; i++)
                rsum[i - i0] = 0.0;
            for (size_t cb = cb0; cb < cb1; cb++) {
                size_t j0 = cb * cols, nb = n - j0 < cols ? n - j0 : cols;
                kr->pack(d, nb, cols, 0, y + j0 * d * es, yt);
                for (size_t i = i0; i < i1; i += kt_rows) {
                    size_t r = i1 - i < kt_rows ? i1 - i : kt_rows;
                    if (isa != NULL)
                        isa->rows_f32(d, r, nb, cols, 0, 0, (float)gamma, (float)gz,
                                      (const float *)(x + i * d * es), (const float *)yt,
                                      (float *)kt, cols);
                    else
                        kr->row(d, nb, cols, gamma, gz, x + i * d * es, yt, kt);
                    for (size_t q = 0; q < r; q++)
                        rsum[i + q - i0] += kr->wdot(nb, kt + q * cols * es, w + j0 * es);
                }
            }
            for (size_t i = i0; i < i1; i++) {
                if (splits == 1)
                    cpu_store(es, out, i, rsum[i - i0]);
                else
                    partial[s * m + i] = rsum[i - i0];
            }
        }
    }
    if (splits > 1)
        cpu_add_partials(es, out, m, splits, partial);
    gk__free(scratch);
    return GK_OK;
}

gk_status gk__cpu_rbf_matvec(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                             const void *x, const void *y, const void *w, void *out)
{
    const gk_cpu_rbf_kernels *kr;
    switch (t) {
    case GK_FLOAT32:
        kr = &gk__cpu_rbf_f32;
        break;
    case GK_FLOAT64:
        kr = &gk__cpu_rbf_f64;
        break;
    default:
        return gk__cpu_bad_dtype(t);
    }
    x = gk__cpu_rbf_rows_of(x);
    y = gk__cpu_rbf_rows_of(y);
    const gk_cpu_state *s = st;
    gk_cpu_rbf_plan p;
    gk__cpu_rbf_plan(s, GK_CPU_RBF_MATVEC_OP, t, m, n, d, gamma, &p);
    gk_status r = GK_OK;
    const char *declined = NULL;
    char said[256];
    int ran = p.form == GK_CPU_RBF_GEMM &&
              gk__cpu_rbf_matvec_gemm(st, t, m, n, d, gamma, x, y, w, out, &r, &declined);
    if (p.form == GK_CPU_RBF_FGT) {
        ran = gk__cpu_rbf_matvec_fgt(st, t, m, n, d, 1, gamma, s->rbf_form == GK_CPU_RBF_FGT,
                                     "rbf_matvec", x, y, w, out, &r, said, sizeof said);
        if (ran)
            gk__cpu_rbf_plan_note(&p, said);
        else
            declined = said;
    }
    if (declined != NULL)
        gk__cpu_rbf_plan_decline(&p, t, d, declined);
    gk__cpu_rbf_plan_log(s, &p);
    if (ran)
        return r;
    int threads = gk__cpu_threads_max(st), team = gk__cpu_threads(st);
    if (p.form == GK_CPU_RBF_WIDE)
        return cpu_rbf_matvec_wide(threads, team, kr, m, n, d, gamma, gk__rbf_zero_exponent(gamma),
                                   x, y, w, out);
    return cpu_rbf_matvec(threads, team, s->rbf_isa, kr, m, n, d, gamma, x, y, w, out);
}
