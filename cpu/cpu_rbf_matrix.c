/* SPDX-License-Identifier: MIT */
/* cpu_rbf_matrix.c - k[i*n + j] = exp(-gamma * ||x_i - y_j||^2), tiled over rows and columns. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "error.h"
#include "rbf/plan.h"

static void cpu_store(size_t es, void *out, size_t i, double v)
{
    if (es == sizeof(float))
        ((float *)out)[i] = (float)v;
    else
        ((double *)out)[i] = v;
}

/* Rows too wide to pack (cpu_rbf.h): each entry from its two rows in place, no scratch; rows of
 * x are split over the team, and a row's columns are walked in order, so x_i stays in cache. */
static void cpu_rbf_matrix_wide(int threads, const gk_cpu_rbf_kernels *kr, size_t m, size_t n,
                                size_t d, double gamma, double gz, const char *x, const char *y,
                                char *k)
{
    size_t es = kr->elem_size;
    int nt = gk__cpu_region(threads, m);
    GK_CPU_PARALLEL_IF(
        nt > 1, "omp parallel for num_threads(nt) schedule(dynamic, 1)",
        for (size_t i = 0; i < m; i++) for (size_t j = 0; j < n; j++)
            cpu_store(es, k, i * n + j, kr->pair(d, gamma, gz, x + i * d * es, y + j * d * es)););
}

/* Row tiles are GK_RBF_TILE_ROWS rows, or shorter (down to GK_RBF_MIN_TILE_ROWS) where more
 * than one task but fewer than the team's threads would leave threads without a task: every
 * region opens the whole team (gk__cpu_region), so the idle ones would cost their wake-up for
 * nothing. A single task stays whole, on the calling thread, where splitting costs more than the
 * work. Each entry is computed the same way in a tile of any height, so results do not depend
 * on the team. */
#define GK_RBF_MIN_TILE_ROWS ((size_t)8)

static size_t tile_rows(int threads, size_t m, size_t col_blocks)
{
    size_t tasks = (m + GK_RBF_TILE_ROWS - 1) / GK_RBF_TILE_ROWS * col_blocks;
    if (tasks >= (size_t)threads || tasks == 1)
        return GK_RBF_TILE_ROWS;
    size_t want = ((size_t)threads + col_blocks - 1) / col_blocks; /* row tiles */
    size_t rows = (m + want - 1) / want;
    return rows > GK_RBF_MIN_TILE_ROWS ? rows : GK_RBF_MIN_TILE_ROWS;
}

/* Task t covers column block t / row_tiles and row tile t % row_tiles: under the static
 * schedule a thread's consecutive tasks share a column block, which it then packs once. */
static gk_status cpu_rbf_matrix(int threads, const gk_cpu_rbf_isa *isa,
                                const gk_cpu_rbf_kernels *kr, size_t m, size_t n, size_t d,
                                double gamma, const char *x, const char *y, char *k)
{
    size_t es = kr->elem_size;
    double gz = gk__rbf_zero_exponent(gamma);
    if (es != sizeof(float) || (isa != NULL && isa->rows_f32 == NULL))
        isa = NULL;
    /* The ISA kernel streams whole cache lines of the output past the cache (written once, not
     * read: a store that misses would first read its line, twice the memory traffic where the
     * team is bound by it), so the blocks' columns lie on the output's lines: block 0 starts
     * after sh lanes of padding, the others at a line. */
    int stream = isa != NULL && n % 16 == 0 && (uintptr_t)k % sizeof(float) == 0;
    size_t sh = stream ? (uintptr_t)k / sizeof(float) % 16 : 0;
    size_t cols = gk__cpu_rbf_block_cols(n + sh, d, es);
    size_t col_blocks = (n + sh + cols - 1) / cols;
    /* Blocks of even width, so that tasks are too (4096 columns at d = 20 were blocks of 1632,
     * 1632 and 832, and the threads given the last finished early). */
    cols = ((n + sh + col_blocks - 1) / col_blocks + GK_RBF_COLS - 1) / GK_RBF_COLS * GK_RBF_COLS;
    col_blocks = (n + sh + cols - 1) / cols;
    size_t rows = tile_rows(threads, m, col_blocks);
    size_t row_tiles = (m + rows - 1) / rows;
    size_t tasks = row_tiles * col_blocks;
    int nt = gk__cpu_region(threads, tasks);
    /* One packed block per thread (at most 128 KiB, or GK_RBF_COLS rows of y, at most
     * GK_RBF_PACK_MAX_BYTES, when rows are longer than 4 KiB), in whole cache lines plus one,
     * so no two threads share a line and d = 0 still gets a pointer. */
    size_t per = (d * cols * es + 63) / 64 * 64 + 64, bytes = (size_t)nt * per;
    void *scratch = NULL;
    if (bytes / per != (size_t)nt || gk__aligned_alloc(&scratch, 64, bytes) != 0)
        return gk__error(GK_E_OUT_OF_MEMORY,
                         "cannot allocate %zu bytes of scratch (%d threads x %zu)", bytes, nt, per);
    GK_CPU_PARALLEL_IF(nt > 1, "omp parallel num_threads(nt)", {
        char *yt = (char *)scratch + (size_t)omp_get_thread_num() * per;
        size_t packed = SIZE_MAX;
        _Pragma("omp for schedule(static)") for (size_t t = 0; t < tasks; t++)
        {
            size_t cb = t / row_tiles, i0 = t % row_tiles * rows;
            size_t i1 = m - i0 < rows ? m : i0 + rows;
            /* block cb: lanes cb cols .. of the padded columns (sh < cols) */
            size_t lead = cb == 0 ? sh : 0, j0 = cb == 0 ? 0 : cb * cols - sh;
            size_t j1 = (cb + 1) * cols - sh < n ? (cb + 1) * cols - sh : n, nb = j1 - j0;
            if (packed != cb)
                kr->pack(d, nb, cols, lead, y + j0 * d * es, yt);
            packed = cb;
            const char *xr = x + i0 * d * es;
            char *kr0 = k + (i0 * n + j0) * es;
            if (isa != NULL)
                isa->rows_f32(d, i1 - i0, nb, cols, lead, stream, (float)gamma, (float)gz,
                              (const float *)xr, (const float *)yt, (float *)kr0, n);
            else
                kr->rows(d, i1 - i0, nb, cols, gamma, gz, xr, yt, kr0, n);
        }
    });
    gk__free(scratch);
    return GK_OK;
}

gk_status gk__cpu_rbf_matrix(void *st, gk_dtype t, size_t m, size_t n, size_t d, double gamma,
                             const void *x, const void *y, void *k)
{
    const gk_cpu_state *s = st;
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
    gk_cpu_rbf_plan p;
    gk__cpu_rbf_plan(s, GK_CPU_RBF_MATRIX_OP, t, m, n, d, gamma, &p);
    gk_status r = GK_OK;
    const char *declined = NULL;
    int ran = 0;
    size_t redone = 0;
    if (p.form == GK_CPU_RBF_FUSED)
        ran =
            gk__cpu_rbf_matrix_fused(st, m, n, d, gamma, p.sample, x, y, k, &r, &redone, &declined);
    else if (p.form == GK_CPU_RBF_GEMM)
        ran = gk__cpu_rbf_matrix_gemm(st, t, m, n, d, gamma, x, y, k, &r, &redone, &declined);
    if (ran && r == GK_OK) {
        char said[64];
        snprintf(said, sizeof said, "%zu entries from differences", redone);
        gk__cpu_rbf_plan_note(&p, said);
    }
    if (declined != NULL)
        gk__cpu_rbf_plan_decline(&p, t, d, declined);
    gk__cpu_rbf_plan_log(s, &p);
    if (ran)
        return r;
    int threads = gk__cpu_threads(st);
    if (p.form == GK_CPU_RBF_WIDE) {
        cpu_rbf_matrix_wide(threads, kr, m, n, d, gamma, gk__rbf_zero_exponent(gamma), x, y, k);
        return GK_OK;
    }
    return cpu_rbf_matrix(threads, s->rbf_isa, kr, m, n, d, gamma, x, y, k);
}
