/* SPDX-License-Identifier: MIT */
/* cpu_rbf_fused.c - float32 rbf_matrix as ||x||^2 + ||y||^2 - 2 x.y in one fused pass per tile. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "cpu_internal.h"
#include "cpu_rbf.h"
#include "error.h"

/* Why not OpenBLAS here (cpu_rbf_gemm.c's form): its GEMM writes G = xc.yc^T to memory and the
 * epilogue reads it back (that pass cost half as much as the GEMM at 2048^2 x 256), and on many
 * cores OpenBLAS's own threads, which spin after each call, and the OpenMP team of the epilogue
 * then share the cores (six times the GEMM's time at 16 threads). An ISA kernel (cpu/rbf/) computes
 * a tile of dot products in registers and finishes it there; everything runs on the context's team.
 * It also pays at small d, where GEMM did not: one multiply-add per pair and feature where the
 * difference form has a subtraction too.
 *
 * The rounding bound is cpu_rbf_gemm.c's, |t - D| <= beta s with s = nx + ny, plus what the
 * tile's float arithmetic adds: nx and ny rounded to float (u s), their sum (u (1 + u) s) and
 * t = fl(s - 2 G) in one FMA (u |s - 2 G| <= u s (2 + 3u + g_d(u)))), 4.01 u s in all for
 * d u <= 1e-3; so the kernel uses beta + 4.01 u. The test itself is evaluated in float: e = beta s
 * and gamma e K coef are each at most four roundings below their exact values, which the
 * factors (1 + 8u) below cover, so no entry passes that the exact test would fail. */
/* x and y the same rows (scikit-learn's rbf_kernel(X)): from this many features, the entries
 * below the diagonal are the mirror images of those above instead of computed; the ISA kernel
 * writes them from its tiles (a quarter faster than x != y at d = 256). At d = 20 a pass over
 * memory that copied them took longer than the computing it saves. */
#define GK_RBF_FUSED_MIRROR_D ((size_t)128)
/* Tiles up to this many rows and columns are mirrored. */
#define GK_RBF_MIRROR_MAX 32
/* Panels per task: a task's x panels (8 x 14 rows with AVX-512) stay in L2 while its y panels
 * pass. */
#define GK_RBF_FUSED_PANELS ((size_t)8)

/* Packs all panels of src (per rows each) with the ISA's ip_pack; the sum of all norms, or -1
 * where a panel could not be packed. */
static double pack_all(const gk_cpu_rbf_isa *isa, int nt, int side, size_t rows, size_t d,
                       size_t per, size_t sh, const float *src, const float *c, void *dst,
                       float *norms, float *nmax)
{
    size_t panels = (rows + sh + per - 1) / per;
    double total = 0.0;
    int ok = 1;
#pragma omp parallel for num_threads(nt) if (nt > 1 && panels > 4) schedule(static)             \
    reduction(+ : total) reduction(& : ok)
    for (size_t p = 0; p < panels; p++) {
        double s = isa->ip_pack(side, rows, d, sh, p, src, c, dst, norms, &nmax[p]);
        ok &= s >= 0.0;
        total += s;
    }
    return ok ? total : -1.0;
}

int gk__cpu_rbf_matrix_fused(void *st, size_t m, size_t n, size_t d, double gamma, int sample,
                             const float *x, const float *y, float *k, gk_status *r, size_t *redone,
                             const char **declined)
{
    const gk_cpu_rbf_isa *isa = ((const gk_cpu_state *)st)->rbf_isa;
    const double u = 0x1p-24;
    /* The planner (cpu/rbf/plan.c) took the form for (m + n) d <= m n (the packed copies are no
     * larger than the output), d <= 1024 and gamma <= 2^100: float arithmetic in the subnormal
     * range errs by up to 2^-150 absolute per operation, which the relative bound does not cover;
     * (2 d + 8) such errors in t move an entry by at most gamma (2 d + 8) 2^-150 < 1e-9, taken
     * off the bound's budget below. */
    size_t mr = isa->mr, nr = isa->nr;
    /* Output rows of whole cache lines: y's panels are shifted so that theirs start on one. */
    int stream = n % 16 == 0 && (uintptr_t)k % sizeof(float) == 0;
    size_t sh = stream ? (uintptr_t)k / sizeof(float) % 16 : 0;
    size_t pm = (m + mr - 1) / mr, pn = (n + sh + nr - 1) / nr;
    size_t cbytes = (d * sizeof(double) + 63) / 64 * 64,
           cfbytes = (d * sizeof(float) + 63) / 64 * 64;
    size_t xpb = isa->ip_panel_bytes(0, d), ypb = isa->ip_panel_bytes(1, d);
    size_t xbytes = (pm * xpb + 63) / 64 * 64, ybytes = (pn * ypb + 63) / 64 * 64;
    size_t nybytes = (pn * nr * sizeof(float) + 63) / 64 * 64;
    size_t bytes =
        cbytes + cfbytes + xbytes + ybytes + nybytes + (pm * mr + pn + pm) * sizeof(float);
    void *scratch = NULL;
    if (gk__aligned_alloc(&scratch, 64, bytes) != 0) {
        *r = gk__error(GK_E_OUT_OF_MEMORY, "cannot allocate %zu bytes of scratch", bytes);
        return 1;
    }
    double *cd = scratch;
    float *c = (float *)((char *)scratch + cbytes);
    char *xp = (char *)c + cfbytes, *yp = xp + xbytes;
    float *ny = (float *)(yp + ybytes), *nx = (float *)((char *)ny + nybytes);
    float *nymax = nx + pm * mr, *nxmax = nymax + pn; /* nxmax: written, not needed */
    int nt = gk__cpu_threads(st);
    gk__cpu_rbf_mean(GK_FLOAT32, m, n, d, x, y, cd, c);
    double beta = gk__cpu_rbf_beta(d, u, isa->ip_dot_err(d)), tol = GK_RBF_GEMM_ERR_F32 - 1e-9;
    double sx = pack_all(isa, nt, 0, m, d, mr, 0, x, c, xp, nx, nxmax);
    double sy = sx < 0.0 ? -1.0 : pack_all(isa, nt, 1, n, d, nr, sh, y, c, yp, ny, nymax);
    double mx = sx / (double)m, my = sy / (double)n;
    /* Not finite, too large, or data where many entries fail the bound: differences. */
    if (sy < 0.0 || !gk__cpu_rbf_typical_passes(gamma, beta, tol, &mx, 1, &my, 1) ||
        (sample && !gk__cpu_rbf_sample_passes(GK_FLOAT32, m, n, d, gamma, beta, tol, x, y, c))) {
        *declined = sy < 0.0 ? "rows not finite or too large for float dot products"
                             : "sampled entries fail the rounding bound";
        gk__free(scratch);
        return 0;
    }
    float tolf = (float)tol;
    const double v = 0x1p-53;
    gk_cpu_rbf_ip_f32 a = {
        .m = m,
        .n = n,
        .d = d,
        .xp = xp,
        .yp = yp,
        .xbytes = xpb,
        .ybytes = ypb,
        .sh = sh,
        .nx = nx,
        .ny = ny,
        .nymax = nymax,
        .gamma = (float)gamma,
        .zscale = (float)(-(double)(float)gamma * 1.4426950408889634),
        .beta = gk__cpu_rbf_round_up_f32((beta + 4.01 * u) * (1.0 + 8.0 * u)),
        .coef = gk__cpu_rbf_round_up_f32(1.0101 * (1.0 + 4.0 * u) * (1.0 + 8.0 * u) * (1.0 + 2e-5)),
        .tol = (double)tolf > tol ? nextafterf(tolf, 0.0f) : tolf,
        /* zscale (t - e) errs by at most 4u relative: 5e-6 absolute near far, within its 0.01 */
        .zfar = (float)(-gk__cpu_rbf_far(tol) * 1.4426950408889634),
        .beta_d = (beta + 4.01 * u) * (1.0 + 4.0 * v),
        .coef_d = 1.0101 * (1.0 + 4.0 * u) * (1.0 + 4.0 * v),
        .tol_d = tol,
        .x = x,
        .y = y,
        .k = k,
        .stream = stream,
        .upper = x == y && m == n && m <= ((size_t)1 << 26) && d >= GK_RBF_FUSED_MIRROR_D &&
                 mr <= GK_RBF_MIRROR_MAX && nr <= GK_RBF_MIRROR_MAX,
    };
    /* Fewer tasks than threads (316^2 x 20: 6 on 16), smaller ones: every region opens the
     * whole team (gk__cpu_region), and tiles are computed alike in a task of any size. */
    size_t g = GK_RBF_FUSED_PANELS;
    while (g > 1 && ((pm + g - 1) / g) * ((pn + g - 1) / g) < (size_t)nt)
        g /= 2;
    size_t row_blocks = (pm + g - 1) / g, col_blocks = (pn + g - 1) / g;
    size_t tasks = row_blocks * col_blocks;
    int team = gk__cpu_region(nt, tasks);
    size_t again = 0;
    /* Every entry is computed the same way whichever thread takes its tile. */
#pragma omp parallel for num_threads(team) if (team > 1) schedule(dynamic, 1) reduction(+ : again)
    for (size_t t = 0; t < tasks; t++) {
        size_t p0 = t % row_blocks * g, q0 = t / row_blocks * g;
        size_t p1 = pm - p0 < g ? pm : p0 + g, q1 = pn - q0 < g ? pn : q0 + g;
        again += isa->ip_f32(&a, p0, p1, q0, q1);
    }
    *redone = again;
    gk__free(scratch);
    *r = GK_OK;
    return 1;
}
