/* SPDX-License-Identifier: MIT */
/* test_cross_backend.c - the same inputs on a CPU and a CUDA context agree as the contract says. */
#include "gk_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};
static const size_t sizes[] = {1, 7, 1000, 1025, 1000003};

/* Both contexts of a test; skips without CUDA. */
typedef struct pair {
    gk_context *cpu, *gpu;
} pair;

static pair open_pair(void)
{
    gk_test_require_cuda();
    pair p = {NULL, NULL};
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CPU, &p.cpu));
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CUDA, &p.gpu));
    return p;
}

static void close_pair(pair *p)
{
    gk_context_destroy(p->cpu);
    gk_context_destroy(p->gpu);
}

enum op {
    OP_FILL,
    OP_COPY,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_SCALE,
    OP_AXPY,
    OP_EXP,
    OP_UNIFORM,
    OP_NORMAL,
    OP_COUNT
};
static const char *const op_names[OP_COUNT] = {"fill",  "copy", "add", "sub",     "mul",   "div",
                                               "scale", "axpy", "exp", "uniform", "normal"};

/* Runs op on ctx over host inputs x, y and initial output z (n elements); returns the output. */
static void *run_op(gk_context *ctx, enum op op, gk_dtype t, size_t n, double s, uint64_t seed,
                    const void *hx, const void *hy, const void *hz)
{
    gk_buffer *x = gk_test_buffer_from(ctx, t, n, hx);
    gk_buffer *y = gk_test_buffer_from(ctx, t, n, hy);
    gk_buffer *z = gk_test_buffer_from(ctx, t, n, hz);
    switch (op) {
    case OP_FILL:
        GK_CHECK_OK(gk_fill(ctx, s, z));
        break;
    case OP_COPY:
        GK_CHECK_OK(gk_copy(ctx, x, z));
        break;
    case OP_ADD:
        GK_CHECK_OK(gk_add(ctx, x, y, z));
        break;
    case OP_SUB:
        GK_CHECK_OK(gk_sub(ctx, x, y, z));
        break;
    case OP_MUL:
        GK_CHECK_OK(gk_mul(ctx, x, y, z));
        break;
    case OP_DIV:
        GK_CHECK_OK(gk_div(ctx, x, y, z));
        break;
    case OP_SCALE:
        GK_CHECK_OK(gk_scale(ctx, s, z));
        break;
    case OP_AXPY:
        GK_CHECK_OK(gk_axpy(ctx, s, x, z));
        break;
    case OP_EXP:
        GK_CHECK_OK(gk_exp(ctx, x, z));
        break;
    case OP_UNIFORM:
        GK_CHECK_OK(gk_rng_uniform(ctx, seed, seed >> 40, z));
        break;
    default:
        GK_CHECK_OK(gk_rng_normal(ctx, seed, seed >> 40, s, 1.5, z));
        break;
    }
    void *out = gk_test_read_all(z);
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_buffer_destroy(z);
    return out;
}

/* Allowed distance between the two backends' element i, per the contract. */
static long double allowed(enum op op, gk_dtype t, double s, const void *hx, const void *hz,
                           double cpu, size_t i)
{
    double sr = gk_test_round(t, s);
    switch (op) {
    case OP_AXPY: /* each within 1 ulp of |a x| + |y| of the exact value */
        return 2 * gk_test_ulp(t, fabsl((long double)sr * gk_test_get(t, hx, i)) +
                                      fabsl((long double)gk_test_get(t, hz, i)));
    case OP_EXP: /* each within 2 ulp of the exact value */
        return 4 * gk_test_ulp(t, expl((long double)gk_test_get(t, hx, i)));
    case OP_NORMAL: /* 4 ulp across backends (of |mean| + |stddev z|) */
        return 4 * gk_test_ulp(t, fabsl((long double)sr) + fabsl((long double)cpu - sr));
    default: /* bit-identical */
        return 0;
    }
}

static void test_elementwise_and_rng(void **state)
{
    (void)state;
    pair p = open_pair();
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            for (int op = 0; op < OP_COUNT; op++) {
                double lim = op == OP_EXP ? (t == GK_FLOAT32 ? 80 : 700) : 100;
                void *hx = gk_test_random_array(t, n, -lim, lim);
                void *hy = gk_test_random_array(t, n, -lim, lim);
                void *hz = gk_test_random_array(t, n, -lim, lim);
                double s = gk_test_uniform(-3, 3);
                uint64_t seed = gk_test_rand64();
                void *a = run_op(p.cpu, (enum op)op, t, n, s, seed, hx, hy, hz);
                void *b = run_op(p.gpu, (enum op)op, t, n, s, seed, hx, hy, hz);
                for (size_t i = 0; i < n; i++) {
                    double ca = gk_test_get(t, a, i), cb = gk_test_get(t, b, i);
                    long double tol = allowed((enum op)op, t, s, hx, hz, ca, i);
                    int ok = tol == 0 ? gk_test_same_bits(t, ca, cb)
                                      : fabsl((long double)ca - cb) <= tol;
                    if (!ok)
                        GK_FAIL("%s %s n=%zu: element %zu is %.17g on CPU, %.17g on CUDA",
                                op_names[op], gk_test_dtype_name(t), n, i, ca, cb);
                }
                free(a);
                free(b);
                free(hx);
                free(hy);
                free(hz);
            }
        }
    }
    close_pair(&p);
}

/* gk_div over the whole range of each dtype: random bit patterns (every exponent, subnormals,
 * infinities, NaNs) and zero divisors give the same bits on both backends; a NaN matches any
 * NaN, since IEEE 754 leaves a quotient's NaN sign and payload open (x86 and CUDA differ). */
static void test_div_bits(void **state)
{
    (void)state;
    pair p = open_pair();
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t n = 1000003, es = gk_test_esize(t);
        char *hx = gk_test_alloc(t, n), *hy = gk_test_alloc(t, n);
        int f32 = t == GK_FLOAT32;
        uint64_t sign = f32 ? 0x80000000u : 0x8000000000000000u;
        uint64_t mantissa = f32 ? 0x007fffffu : 0x000fffffffffffffu;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = gk_test_rand64(), bx = gk_test_rand64(), by = gk_test_rand64();
            if (f32) {
                bx &= 0xffffffffu;
                by &= 0xffffffffu;
            }
            /* a divisor in 16 is a signed zero, one a subnormal; a dividend in 16 is a zero */
            switch (r & 15) {
            case 0:
                by &= sign;
                break;
            case 1:
                by &= sign | mantissa;
                break;
            case 2:
                bx &= sign;
                break;
            }
            if (f32) {
                uint32_t wx = (uint32_t)bx, wy = (uint32_t)by;
                memcpy(hx + i * es, &wx, es);
                memcpy(hy + i * es, &wy, es);
            } else {
                memcpy(hx + i * es, &bx, es);
                memcpy(hy + i * es, &by, es);
            }
        }
        void *a = run_op(p.cpu, OP_DIV, t, n, 0, 0, hx, hy, hx);
        void *b = run_op(p.gpu, OP_DIV, t, n, 0, 0, hx, hy, hx);
        for (size_t i = 0; i < n; i++) {
            double ca = gk_test_get(t, a, i), cb = gk_test_get(t, b, i);
            if (!gk_test_same_bits(t, ca, cb) && !(isnan(ca) && isnan(cb)))
                GK_FAIL("div %s: %.17g / %.17g is %.17g on CPU, %.17g on CUDA",
                        gk_test_dtype_name(t), gk_test_get(t, hx, i), gk_test_get(t, hy, i), ca,
                        cb);
        }
        free(a);
        free(b);
        free(hx);
        free(hy);
    }
    close_pair(&p);
}

static void test_reductions(void **state)
{
    (void)state;
    pair p = open_pair();
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        double rel = t == GK_FLOAT32 ? 1e-6 : 1e-13;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            void *hx = gk_test_random_array(t, n, -1, 1), *hy = gk_test_random_array(t, n, -1, 1);
            long double mag_sum = 0, mag_dot = 0, sq = 0;
            for (size_t i = 0; i < n; i++) {
                long double x = gk_test_get(t, hx, i), y = gk_test_get(t, hy, i);
                mag_sum += fabsl(x);
                mag_dot += fabsl(x * y);
                sq += x * x;
            }
            double r[2][3];
            gk_context *ctxs[2] = {p.cpu, p.gpu};
            for (int c = 0; c < 2; c++) {
                gk_buffer *x = gk_test_buffer_from(ctxs[c], t, n, hx);
                gk_buffer *y = gk_test_buffer_from(ctxs[c], t, n, hy);
                GK_CHECK_OK(gk_sum(ctxs[c], x, &r[c][0]));
                GK_CHECK_OK(gk_dot(ctxs[c], x, y, &r[c][1]));
                GK_CHECK_OK(gk_nrm2(ctxs[c], x, &r[c][2]));
                gk_buffer_destroy(x);
                gk_buffer_destroy(y);
            }
            long double bound[3] = {2 * rel * mag_sum, 2 * rel * mag_dot, 2 * rel * sqrtl(sq)};
            for (int k = 0; k < 3; k++)
                if (!(fabsl((long double)r[0][k] - r[1][k]) <= bound[k]))
                    GK_FAIL("%s reduction %d n=%zu: CPU %.17g, CUDA %.17g", gk_test_dtype_name(t),
                            k, n, r[0][k], r[1][k]);
            free(hx);
            free(hy);
        }
    }
    close_pair(&p);
}

static void test_gemm(void **state)
{
    (void)state;
    pair p = open_pair();
    static const size_t shapes[][3] = {{1, 1, 1}, {7, 33, 65}, {130, 65, 33}, {256, 256, 256}};
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        double rel = t == GK_FLOAT32 ? 1e-5 : 1e-13;
        for (size_t s = 0; s < 4; s++) {
            for (int tr = 0; tr < 4; tr++) {
                gk_transpose ta = (gk_transpose)(tr & 1), tb = (gk_transpose)(tr >> 1);
                size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                void *ha = gk_test_random_array(t, m * k, -1, 1);
                void *hb = gk_test_random_array(t, k * n, -1, 1);
                void *hc = gk_test_random_array(t, m * n, -1, 1);
                double alpha = gk_test_uniform(-2, 2), beta = gk_test_uniform(-2, 2);
                void *out[2];
                gk_context *ctxs[2] = {p.cpu, p.gpu};
                for (int c = 0; c < 2; c++) {
                    gk_buffer *a = gk_test_buffer_from(ctxs[c], t, m * k, ha);
                    gk_buffer *b = gk_test_buffer_from(ctxs[c], t, k * n, hb);
                    gk_buffer *cc = gk_test_buffer_from(ctxs[c], t, m * n, hc);
                    GK_CHECK_OK(gk_gemm(ctxs[c], ta, tb, m, n, k, alpha, a, ta ? m : k, b,
                                        tb ? k : n, beta, cc, n));
                    out[c] = gk_test_read_all(cc);
                    gk_buffer_destroy(a);
                    gk_buffer_destroy(b);
                    gk_buffer_destroy(cc);
                }
                /* ||C_cpu - C_cuda||_F <= 2 tol ||alpha |A||B| + |beta C0| ||_F */
                long double d2 = 0, s2 = 0, ar = fabsl((long double)gk_test_round(t, alpha)),
                            br = fabsl((long double)gk_test_round(t, beta));
                for (size_t i = 0; i < m; i++)
                    for (size_t j = 0; j < n; j++) {
                        long double mag = 0;
                        for (size_t l = 0; l < k; l++) {
                            double av = gk_test_get(t, ha, ta ? l * m + i : i * k + l);
                            double bv = gk_test_get(t, hb, tb ? j * k + l : l * n + j);
                            mag += fabsl((long double)av * bv);
                        }
                        mag = ar * mag + br * fabsl((long double)gk_test_get(t, hc, i * n + j));
                        long double diff = (long double)gk_test_get(t, out[0], i * n + j) -
                                           gk_test_get(t, out[1], i * n + j);
                        d2 += diff * diff;
                        s2 += mag * mag;
                    }
                if (!(sqrtl(d2) <= 2 * rel * sqrtl(s2)))
                    GK_FAIL("%s gemm %zux%zux%zu ta=%d tb=%d: ||CPU - CUDA|| = %Lg > %Lg",
                            gk_test_dtype_name(t), m, n, k, ta, tb, sqrtl(d2), 2 * rel * sqrtl(s2));
                free(out[0]);
                free(out[1]);
                free(ha);
                free(hb);
                free(hc);
            }
        }
    }
    close_pair(&p);
}

static void test_rbf(void **state)
{
    (void)state;
    pair p = open_pair();
    /* {2100, 2052, 20}: more output tiles than a GPU of up to 132 multiprocessors keeps
     * resident, so rbf_matrix blocks walk several row tiles; n a multiple of 4 with a partial
     * last tile. {4096, 4100, 256}: CUDA's float32 tensor-core form (cuda/cuda_rbf_tc.cu, 2^24
     * entries or more) against the CPU's GEMM form. */
    static const size_t cases[][3] = {{1, 1, 1},        {7, 1025, 3},  {1025, 7, 20},
                                      {100, 100, 33},   {65, 33, 256}, {2100, 2052, 20},
                                      {4096, 4100, 256}};
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        double tol = t == GK_FLOAT32 ? 1e-5 : 1e-12;
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            for (int off = 0; off < 2; off++) {
                size_t m = cases[ci][0], n = cases[ci][1], d = cases[ci][2];
                double o = off ? 1e3 : 0, gamma = gk_test_uniform(0.5, 6) / (double)d;
                void *hx = gk_test_random_array(t, m * d, o, o + 1);
                void *hy = gk_test_random_array(t, n * d, o, o + 1);
                void *hw = gk_test_random_array(t, n, -1, 1);
                long double wsum = 0;
                for (size_t j = 0; j < n; j++)
                    wsum += fabsl((long double)gk_test_get(t, hw, j));
                void *km[2], *mv[2], *rw[2];
                gk_context *ctxs[2] = {p.cpu, p.gpu};
                size_t r = m < n ? m : n;
                for (int c = 0; c < 2; c++) {
                    gk_buffer *x = gk_test_buffer_from(ctxs[c], t, m * d, hx);
                    gk_buffer *y = gk_test_buffer_from(ctxs[c], t, n * d, hy);
                    gk_buffer *w = gk_test_buffer_from(ctxs[c], t, n, hw);
                    gk_buffer *k = gk_test_buffer_const(ctxs[c], t, m * n, 0);
                    gk_buffer *out = gk_test_buffer_const(ctxs[c], t, m, 0);
                    gk_buffer *rows = gk_test_buffer_const(ctxs[c], t, r, 0);
                    GK_CHECK_OK(gk_rbf_matrix(ctxs[c], m, n, d, gamma, x, y, k));
                    GK_CHECK_OK(gk_rbf_matvec(ctxs[c], m, n, d, gamma, x, y, w, out));
                    GK_CHECK_OK(gk_rbf_rows(ctxs[c], r, d, gamma, x, y, rows));
                    km[c] = gk_test_read_all(k);
                    mv[c] = gk_test_read_all(out);
                    rw[c] = gk_test_read_all(rows);
                    gk_buffer *bufs[] = {x, y, w, k, out, rows};
                    for (int b = 0; b < 6; b++)
                        gk_buffer_destroy(bufs[b]);
                }
                for (size_t i = 0; i < m * n; i++)
                    if (!(fabs(gk_test_get(t, km[0], i) - gk_test_get(t, km[1], i)) <= 2 * tol))
                        GK_FAIL("%s rbf_matrix %zux%zux%zu: entry %zu CPU %.17g CUDA %.17g",
                                gk_test_dtype_name(t), m, n, d, i, gk_test_get(t, km[0], i),
                                gk_test_get(t, km[1], i));
                for (size_t i = 0; i < m; i++)
                    if (!(fabsl((long double)gk_test_get(t, mv[0], i) - gk_test_get(t, mv[1], i)) <=
                          2 * tol * wsum))
                        GK_FAIL("%s rbf_matvec %zux%zux%zu: entry %zu CPU %.17g CUDA %.17g",
                                gk_test_dtype_name(t), m, n, d, i, gk_test_get(t, mv[0], i),
                                gk_test_get(t, mv[1], i));
                for (size_t i = 0; i < r; i++)
                    if (!(fabs(gk_test_get(t, rw[0], i) - gk_test_get(t, rw[1], i)) <= 2 * tol))
                        GK_FAIL("%s rbf_rows %zux%zu: entry %zu CPU %.17g CUDA %.17g",
                                gk_test_dtype_name(t), r, d, i, gk_test_get(t, rw[0], i),
                                gk_test_get(t, rw[1], i));
                for (int c = 0; c < 2; c++) {
                    free(km[c]);
                    free(mv[c]);
                    free(rw[c]);
                }
                free(hx);
                free(hy);
                free(hw);
            }
        }
    }
    close_pair(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise_and_rng),
        cmocka_unit_test(test_div_bits),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_rbf),
    };
    return cmocka_run_group_tests_name("cross_backend", tests, gk_test_group_setup, NULL);
}
