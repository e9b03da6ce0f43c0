/* SPDX-License-Identifier: MIT */
/* test_elementwise.c - fill, copy, add, sub, mul, div, axpy, scale and exp: results, aliasing,
 * errors. */
#include "gk_test.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gk_dtype dtypes[] = {GK_FLOAT32, GK_FLOAT64};
static const size_t sizes[] = {0, 1, 7, 1000, 1025, 1000003};
#define NSIZES (sizeof sizes / sizeof sizes[0])

enum op { OP_FILL, OP_COPY, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_AXPY, OP_SCALE, OP_EXP, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"gk_fill", "gk_copy", "gk_add",   "gk_sub", "gk_mul",
                                               "gk_div",  "gk_axpy", "gk_scale", "gk_exp"};
/* Which operands an op reads besides z: x for all but fill/scale, y for add/sub/mul/div. */
static int uses_x(enum op op)
{
    return op != OP_FILL && op != OP_SCALE;
}
static int uses_y(enum op op)
{
    return op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV;
}

/* Runs op with output (or in/out operand) z. */
static gk_status run_op(gk_context *c, enum op op, double s, const gk_buffer *x, const gk_buffer *y,
                        gk_buffer *z)
{
    switch (op) {
    case OP_FILL:
        return gk_fill(c, s, z);
    case OP_COPY:
        return gk_copy(c, x, z);
    case OP_ADD:
        return gk_add(c, x, y, z);
    case OP_SUB:
        return gk_sub(c, x, y, z);
    case OP_MUL:
        return gk_mul(c, x, y, z);
    case OP_DIV:
        return gk_div(c, x, y, z);
    case OP_AXPY:
        return gk_axpy(c, s, x, z);
    case OP_SCALE:
        return gk_scale(c, s, z);
    case OP_EXP:
        return gk_exp(c, x, z);
    default:
        return GK_E_INTERNAL;
    }
}

/* The exact result of the bit-exact ops, computed in the dtype as plain C does it; float32
 * division in float64 and then rounded, which is the correctly rounded float32 quotient (a
 * quotient of 24-bit numbers rounded to 53 bits, then to 24, rounds as once) and so a reference
 * independent of the float32 division it checks. */
static double exact_f32(enum op op, float s, float x, float y, float z)
{
    switch (op) {
    case OP_FILL:
        return s;
    case OP_COPY:
        return x;
    case OP_ADD:
        return x + y;
    case OP_SUB:
        return x - y;
    case OP_MUL:
        return x * y;
    case OP_DIV:
        return (float)((double)x / (double)y);
    case OP_SCALE:
        return z * s;
    default:
        return NAN;
    }
}

static double exact_f64(enum op op, double s, double x, double y, double z)
{
    switch (op) {
    case OP_FILL:
        return s;
    case OP_COPY:
        return x;
    case OP_ADD:
        return x + y;
    case OP_SUB:
        return x - y;
    case OP_MUL:
        return x * y;
    case OP_DIV:
        return x / y;
    case OP_SCALE:
        return z * s;
    default:
        return NAN;
    }
}

/* |got - (y + a x)| exactly enough for any dtype without relying on long double: a x and its
 * rounding error come from fma, y + a x and its rounding error from Knuth's two-sum. */
static long double axpy_error(double got, double a, double x, double y)
{
    double p = a * x, ep = fma(a, x, -p);
    double s = y + p, bb = s - y, es = (y - (s - bb)) + (p - bb);
    return fabsl(((long double)got - s) - ((long double)es + ep));
}

/* Checks z_out against op applied to (s, x, y, z_in) elementwise, by the contract's measure:
 * bit-exact for fill/copy/add/sub/mul/div/scale (a NaN matches any NaN: IEEE 754 leaves the
 * sign and payload of a quotient's NaN open), 1 ulp of |a x| + |y| for axpy, 2 ulp for exp. */
static void check_result(gk_dtype t, enum op op, double s, const void *x, const void *y,
                         const void *z_in, const void *z_out, size_t n, const char *what)
{
    double sr = gk_test_round(t, s);
    for (size_t i = 0; i < n; i++) {
        double xi = x ? gk_test_get(t, x, i) : 0, yi = y ? gk_test_get(t, y, i) : 0;
        double zi = gk_test_get(t, z_in, i), got = gk_test_get(t, z_out, i);
        if (op == OP_AXPY) {
            long double err = axpy_error(got, sr, xi, zi);
            long double tol = gk_test_ulp(t, fabsl((long double)sr * xi) + fabsl((long double)zi));
            if (!(err <= tol))
                GK_FAIL("%s %s n=%zu: y[%zu] = %.17g + %.17g * %.17g gave %.17g, off by %Lg ulp",
                        what, gk_test_dtype_name(t), n, i, zi, sr, xi, got, err / tol);
        } else if (op == OP_EXP) {
            long double ref = gk_test_exp_ref((long double)xi);
            long double err = fabsl((long double)got - ref) / gk_test_ulp(t, ref);
            if (!(err <= 2.0L + gk_test_exp_ref_ulps(t)))
                GK_FAIL("%s %s n=%zu: exp(%.17g) gave %.17g, expected %.17Lg: %Lg ulp", what,
                        gk_test_dtype_name(t), n, xi, got, ref, err);
        } else {
            double want = t == GK_FLOAT32
                              ? exact_f32(op, (float)sr, (float)xi, (float)yi, (float)zi)
                              : exact_f64(op, sr, xi, yi, zi);
            if (!gk_test_same_bits(t, got, want) && !(isnan(got) && isnan(want)))
                GK_FAIL("%s %s %s n=%zu: element %zu is %.17g, expected %.17g (x=%.17g y=%.17g "
                        "s=%.17g)",
                        what, op_names[op], gk_test_dtype_name(t), n, i, got, want, xi, yi, sr);
        }
    }
}

/* Input range per op: exp stays clear of overflow and underflow to subnormals. */
static void input_range(gk_dtype t, enum op op, double *lo, double *hi)
{
    if (op == OP_EXP) {
        *hi = t == GK_FLOAT32 ? 80.0 : 700.0;
        *lo = -*hi;
    } else {
        *lo = -100.0;
        *hi = 100.0;
    }
}

/* Every op, dtype and size, into a fresh output and into a view of a padded parent. */
static void test_ops(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        for (size_t si = 0; si < NSIZES; si++) {
            size_t n = sizes[si];
            for (int op = 0; op < OP_COUNT; op++) {
                double lo, hi;
                input_range(t, (enum op)op, &lo, &hi);
                double s = gk_test_uniform(-3, 3);
                void *hx = NULL, *hy = NULL, *hz = NULL;
                gk_buffer *x = gk_test_buffer_random(ctx, t, n, lo, hi, &hx);
                gk_buffer *y = gk_test_buffer_random(ctx, t, n, lo, hi, &hy);
                gk_buffer *z = gk_test_buffer_random(ctx, t, n, lo, hi, &hz);
                GK_CHECK_OK(run_op(ctx, (enum op)op, s, x, y, z));
                void *out = gk_test_read_all(z);
                check_result(t, (enum op)op, s, hx, hy, hz, out, n, "plain");
                /* inputs are not modified */
                GK_EXPECT_CONTENTS(x, hx);
                GK_EXPECT_CONTENTS(y, hy);
                free(out);
                gk_buffer_destroy(x);
                gk_buffer_destroy(y);
                gk_buffer_destroy(z);
                free(hx);
                free(hy);
                free(hz);
            }
        }
    }
}

/* Scalars are rounded to the dtype first: fill with 0.1 gives (float)0.1, and scale multiplies
 * by (float)alpha in float, which differs from rounding x * alpha computed in double. */
static void test_scalar_rounding(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_buffer *b = gk_test_buffer_const(ctx, GK_FLOAT32, 5, 0.0);
    GK_CHECK_OK(gk_fill(ctx, 0.1, b));
    float h[5];
    GK_CHECK_OK(gk_buffer_read(b, 0, 5, h));
    for (int i = 0; i < 5; i++)
        assert_true(h[i] == 0.1f);

    /* an alpha for which the two roundings disagree at x = 3 */
    double alpha = 0;
    for (int k = 0; k < 100000; k++) {
        alpha = gk_test_uniform(0.1, 10);
        if ((float)(3.0 * alpha) != 3.0f * (float)alpha)
            break;
    }
    assert_true((float)(3.0 * alpha) != 3.0f * (float)alpha);
    float three[5] = {3, 3, 3, 3, 3};
    GK_CHECK_OK(gk_buffer_write(b, 0, 5, three));
    GK_CHECK_OK(gk_scale(ctx, alpha, b));
    GK_CHECK_OK(gk_buffer_read(b, 0, 5, h));
    for (int i = 0; i < 5; i++)
        if (h[i] != 3.0f * (float)alpha)
            GK_FAIL("gk_scale(%.17g) of 3.0f gave %.9g, expected %.9g", alpha, h[i],
                    3.0f * (float)alpha);
    gk_buffer_destroy(b);
}

static void test_exp_special(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        double big = t == GK_FLOAT32 ? 80.0 : 700.0;
        const double vals[] = {0.0,   -0.0,  1.0, -1.0, 0.5,  1e-7,
                               -1e-7, 1e-30, big, -big, 20.0, -20.0};
        size_t n = sizeof vals / sizeof vals[0];
        void *h = gk_test_alloc(t, n);
        for (size_t i = 0; i < n; i++)
            gk_test_set(t, h, i, vals[i]);
        gk_buffer *x = gk_test_buffer_from(ctx, t, n, h);
        gk_buffer *y = gk_test_buffer_const(ctx, t, n, GK_TEST_SENTINEL);
        GK_CHECK_OK(gk_exp(ctx, x, y));
        void *out = gk_test_read_all(y);
        check_result(t, OP_EXP, 0, h, NULL, h, out, n, "special");
        assert_true(gk_test_get(t, out, 0) == 1.0);
        assert_true(gk_test_get(t, out, 1) == 1.0);
        free(out);
        free(h);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
    }
}

/* exp over every exponent and the edges test_ops keeps clear of: float32 inputs at every 4093rd
 * bit pattern (1.05 million, both signs, every exponent, NaNs, subnormal inputs), float64 at as
 * many patterns from a multiplicative hash, plus the thresholds where results overflow or become
 * subnormal or zero. The contract: within 2 ulp of exp (a subnormal result's ulp is the smallest
 * subnormal), +inf where exp exceeds the largest finite value by more than that, NaN for NaN. */
static void test_exp_every_exponent(void **state)
{
    gk_context *ctx = gk_test_context(state);
    const size_t n = ((size_t)1 << 32) / 4093;
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        int f32 = t == GK_FLOAT32;
        const double edges[] = {INFINITY, -INFINITY, NAN, 88.72283935546875, 88.7228317,
                                -87.33654, -103.972084, -103.27893, -104.0, 89.0,
                                709.782712893384, 709.7827128933841, -708.3964185322641,
                                -745.1332191019411, -745.1332191019412, -744.44007192138122};
        const size_t ne = sizeof edges / sizeof edges[0];
        void *h = gk_test_alloc(t, n + ne);
        for (size_t i = 0; i < n; i++) {
            if (f32) {
                uint32_t w = (uint32_t)(i * 4093);
                memcpy((float *)h + i, &w, sizeof w);
            } else {
                uint64_t w = (uint64_t)i * 0x9e3779b97f4a7c15u;
                memcpy((double *)h + i, &w, sizeof w);
            }
        }
        for (size_t i = 0; i < ne; i++)
            gk_test_set(t, h, n + i, edges[i]);
        gk_buffer *x = gk_test_buffer_from(ctx, t, n + ne, h);
        gk_buffer *y = gk_test_buffer_const(ctx, t, n + ne, GK_TEST_SENTINEL);
        GK_CHECK_OK(gk_exp(ctx, x, y));
        void *out = gk_test_read_all(y);
        long double top = f32 ? FLT_MAX : DBL_MAX, tol = 2.0L + gk_test_exp_ref_ulps(t);
        for (size_t i = 0; i < n + ne; i++) {
            double xi = gk_test_get(t, h, i), got = gk_test_get(t, out, i);
            if (isnan(xi)) {
                if (!isnan(got))
                    GK_FAIL("%s: exp(NaN) gave %.17g", gk_test_dtype_name(t), got);
                continue;
            }
            long double ref = gk_test_exp_ref((long double)xi);
            /* ref - top, not ref against top + tol ulp: valgrind's long double is double, where
             * that sum overflows */
            if (got == INFINITY && ref - top > tol * gk_test_ulp(t, top))
                continue;
            long double err = fabsl((long double)got - ref) / gk_test_ulp(t, ref);
            if (!(err <= tol))
                GK_FAIL("%s: exp(%a) gave %a, expected %.17Lg: %Lg ulp", gk_test_dtype_name(t),
                        xi, got, ref, err);
        }
        free(out);
        free(h);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
    }
}

/* exp of outputs large enough to be written past the cache (8 MiB and more on the CPU,
 * cpu_elementwise.c), in place and into views 0 to 3 elements into their buffer (so the
 * aligned vectors start at every position), an odd count: the same bits as the same inputs
 * in pieces below that size, every value within the contract, nothing outside the view
 * written. */
static void test_exp_large_outputs(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t es = gk_test_esize(t);
        const size_t n = ((size_t)8 << 20) / es + 37, piece = ((size_t)1 << 20) / es;
        void *hp = NULL;
        gk_buffer *p = gk_test_buffer_random(ctx, t, n + 3, -80.0, 80.0, &hp);
        void *at1 = NULL;
        for (size_t off = 0; off < 4; off++) {
            gk_buffer *x = gk_test_view(p, 3 - off, n);
            gk_buffer *whole = gk_test_buffer_const(ctx, t, n + 3, GK_TEST_SENTINEL);
            gk_buffer *wv = gk_test_view(whole, off, n);
            gk_buffer *pieces = gk_test_buffer_const(ctx, t, n, GK_TEST_SENTINEL);
            GK_CHECK_OK(gk_exp(ctx, x, wv));
            for (size_t i = 0; i < n; i += piece) {
                size_t cnt = n - i < piece ? n - i : piece;
                gk_buffer *xi = gk_test_view(p, 3 - off + i, cnt);
                gk_buffer *yi = gk_test_view(pieces, i, cnt);
                GK_CHECK_OK(gk_exp(ctx, xi, yi));
                gk_buffer_destroy(xi);
                gk_buffer_destroy(yi);
            }
            void *a = gk_test_read_all(whole), *b = gk_test_read_all(pieces);
            if (memcmp((char *)a + off * es, b, n * es) != 0)
                GK_FAIL("%s offset %zu: exp of %zu elements differs from the same in pieces",
                        gk_test_dtype_name(t), off, n);
            for (size_t i = 0; i < n + 3; i++)
                if ((i < off || i >= off + n) &&
                    !gk_test_same_bits(t, gk_test_get(t, a, i), GK_TEST_SENTINEL))
                    GK_FAIL("%s offset %zu: element %zu outside the view was written",
                            gk_test_dtype_name(t), off, i);
            if (off == 0) /* the pieces' values (equal for every offset) */
                check_result(t, OP_EXP, 0, (char *)hp + 3 * es, NULL, b, b, n, "large");
            free(a);
            if (off == 2)
                at1 = b; /* inputs from element 1 on, as in place below */
            else
                free(b);
            gk_buffer_destroy(x);
            gk_buffer_destroy(wv);
            gk_buffer_destroy(whole);
            gk_buffer_destroy(pieces);
        }
        /* in place: y is x */
        gk_buffer *x = gk_test_view(p, 1, n);
        GK_CHECK_OK(gk_exp(ctx, x, x));
        void *in = gk_test_read_all(p);
        if (memcmp((char *)in + es, at1, n * es) != 0)
            GK_FAIL("%s: exp of %zu elements in place differs from the same in pieces",
                    gk_test_dtype_name(t), n);
        free(in);
        free(at1);
        free(hp);
        gk_buffer_destroy(x);
        gk_buffer_destroy(p);
    }
}

/* gk_div at the edges of IEEE 754: every pair of a list of special values (zeros of both signs,
 * infinities, NaN, the smallest and largest normals, subnormals, ties at the bottom of the
 * subnormal range), then random bit patterns spanning every exponent, against the reference;
 * and the cases users meet spelled out: division by zero, overflow, gradual underflow. */
static void test_div_special(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        int f32 = t == GK_FLOAT32;
        double tmin = f32 ? FLT_TRUE_MIN : DBL_TRUE_MIN, nmin = f32 ? FLT_MIN : DBL_MIN;
        double big = f32 ? FLT_MAX : DBL_MAX;
        enum {
            ZERO,
            NZERO,
            ONE,
            NONE,
            INF,
            NINF,
            QNAN,
            NMIN,
            NNMIN,
            TMIN,
            NTMIN,
            TMIN3,
            HALF,
            TWO,
            BIG,
            NBIG,
            THREE,
            NSEVEN,
            TENTH,
            SUB,
            TINY,
            K
        };
        const double vals[K] = {
            [ZERO] = 0.0,     [NZERO] = -0.0,     [ONE] = 1.0,     [NONE] = -1.0,
            [INF] = INFINITY, [NINF] = -INFINITY, [QNAN] = NAN,    [NMIN] = nmin,
            [NNMIN] = -nmin,  [TMIN] = tmin,      [NTMIN] = -tmin, [TMIN3] = 3 * tmin,
            [HALF] = 0.5,     [TWO] = 2.0,        [BIG] = big,     [NBIG] = -big,
            [THREE] = 3.0,    [NSEVEN] = -7.0,    [TENTH] = 0.1,   [SUB] = nmin / 4,
            [TINY] = 1e-30};
        const size_t k = K;
        const size_t n = k * k + 100003;
        void *hx = gk_test_alloc(t, n), *hy = gk_test_alloc(t, n);
        for (size_t i = 0; i < k * k; i++) {
            gk_test_set(t, hx, i, vals[i / k]);
            gk_test_set(t, hy, i, vals[i % k]);
        }
        for (size_t i = k * k; i < n; i++) {
            uint64_t bx = gk_test_rand64(), by = gk_test_rand64();
            if (f32) {
                uint32_t wx = (uint32_t)bx, wy = (uint32_t)by;
                memcpy((float *)hx + i, &wx, sizeof wx);
                memcpy((float *)hy + i, &wy, sizeof wy);
            } else {
                memcpy((double *)hx + i, &bx, sizeof bx);
                memcpy((double *)hy + i, &by, sizeof by);
            }
        }
        gk_buffer *x = gk_test_buffer_from(ctx, t, n, hx);
        gk_buffer *y = gk_test_buffer_from(ctx, t, n, hy);
        gk_buffer *z = gk_test_buffer_const(ctx, t, n, GK_TEST_SENTINEL);
        GK_CHECK_OK(gk_div(ctx, x, y, z));
        void *out = gk_test_read_all(z);
        check_result(t, OP_DIV, 0, hx, hy, hx, out, n, "special");
        GK_EXPECT_CONTENTS(x, hx);
        GK_EXPECT_CONTENTS(y, hy);

        /* The value of x[i] / y[i] for the list's entries a and b. */
#define Q(a, b) gk_test_get(t, out, (size_t)(a)*k + (size_t)(b))
        assert_true(Q(ONE, ZERO) == INFINITY && Q(NONE, ZERO) == -INFINITY);
        assert_true(Q(ONE, NZERO) == -INFINITY && Q(NONE, NZERO) == INFINITY);
        assert_true(Q(INF, ZERO) == INFINITY && Q(NINF, NZERO) == INFINITY);
        assert_true(isnan(Q(ZERO, ZERO)) && isnan(Q(NZERO, ZERO)) && isnan(Q(INF, NINF)));
        assert_true(isnan(Q(QNAN, ONE)) && isnan(Q(ONE, QNAN)) && isnan(Q(QNAN, ZERO)));
        assert_true(Q(ONE, INF) == 0 && !signbit(Q(ONE, INF)));
        assert_true(Q(NONE, INF) == 0 && signbit(Q(NONE, INF)));
        /* overflow, and gradual underflow: a subnormal quotient is kept, ties go to even */
        assert_true(Q(BIG, HALF) == INFINITY && Q(NBIG, HALF) == -INFINITY);
        assert_true(Q(NMIN, TWO) == nmin / 2 && Q(SUB, TWO) == nmin / 8);
        assert_true(Q(TMIN, TWO) == 0 && !signbit(Q(TMIN, TWO)));
        assert_true(Q(NTMIN, TWO) == 0 && signbit(Q(NTMIN, TWO)));
        assert_true(Q(TMIN3, TWO) == 2 * tmin);
        assert_true(Q(ONE, THREE) == gk_test_round(t, 1.0 / 3.0));
#undef Q
        free(out);
        free(hx);
        free(hy);
        gk_buffer_destroy(x);
        gk_buffer_destroy(y);
        gk_buffer_destroy(z);
    }
}

/* An output may alias an input. */
static void test_aliasing(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t n = 1025;
        for (int op = 0; op < OP_COUNT; op++) {
            if (!uses_x((enum op)op))
                continue;
            double lo, hi;
            input_range(t, (enum op)op, &lo, &hi);
            double s = gk_test_uniform(-3, 3);
            /* z aliases x; then (for binary ops) z aliases y; then all three are one buffer */
            for (int pattern = 0; pattern < 3; pattern++) {
                if (pattern > 0 && !uses_y((enum op)op))
                    continue;
                void *hx = NULL, *hy = NULL;
                gk_buffer *x = gk_test_buffer_random(ctx, t, n, lo, hi, &hx);
                gk_buffer *y = gk_test_buffer_random(ctx, t, n, lo, hi, &hy);
                void *out;
                if (pattern == 0) {
                    /* for axpy z is the in/out y: y = y + a*y */
                    GK_CHECK_OK(run_op(ctx, (enum op)op, s, x, y, x));
                    out = gk_test_read_all(x);
                    check_result(t, (enum op)op, s, hx, hy, hx, out, n, "z==x");
                    GK_EXPECT_CONTENTS(y, hy);
                } else if (pattern == 1) {
                    GK_CHECK_OK(run_op(ctx, (enum op)op, s, x, y, y));
                    out = gk_test_read_all(y);
                    check_result(t, (enum op)op, s, hx, hy, hy, out, n, "z==y");
                    GK_EXPECT_CONTENTS(x, hx);
                } else {
                    GK_CHECK_OK(run_op(ctx, (enum op)op, s, x, x, x));
                    out = gk_test_read_all(x);
                    check_result(t, (enum op)op, s, hx, hx, hx, out, n, "x==y==z");
                }
                free(out);
                free(hx);
                free(hy);
                gk_buffer_destroy(x);
                gk_buffer_destroy(y);
            }
        }
    }
}

/* An output that partially overlaps an input (x = p[0:n], z = p[1:n+1], either way round, or
 * through two wraps of one host array) is refused and nothing is written; the same elements
 * through two views are still allowed, and so are inputs that overlap each other. At eaa3a2f
 * these calls ran (gk_copy's memcpy on overlapping ranges, results of no defined order). */
static void test_partial_overlap(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t es = gk_test_esize(t), n = 1025;
        for (int op = 0; op < OP_COUNT; op++) {
            if (!uses_x((enum op)op))
                continue;
            double lo, hi;
            input_range(t, (enum op)op, &lo, &hi);
            double s = gk_test_uniform(-3, 3);
            void *hp = NULL, *hq = NULL;
            gk_buffer *p = gk_test_buffer_random(ctx, t, n + 2, lo, hi, &hp);
            gk_buffer *q = gk_test_buffer_random(ctx, t, n, lo, hi, &hq);
            gk_buffer *head = gk_test_view(p, 0, n), *tail = gk_test_view(p, 1, n);
            gk_buffer *tail2 = gk_test_view(p, 1, n);
            /* the output one element after x, then one element before it */
            GK_EXPECT(run_op(ctx, (enum op)op, s, head, q, tail), GK_E_INVALID_ARGUMENT,
                      op_names[op]);
            if (strstr(gk_last_error(), "partially overlaps input x") == NULL)
                GK_FAIL("%s: message \"%s\" should name the overlap", op_names[op],
                        gk_last_error());
            GK_EXPECT(run_op(ctx, (enum op)op, s, tail, q, head), GK_E_INVALID_ARGUMENT,
                      op_names[op]);
            if (uses_y((enum op)op)) {
                GK_EXPECT(run_op(ctx, (enum op)op, s, q, head, tail), GK_E_INVALID_ARGUMENT,
                          op_names[op]);
                if (strstr(gk_last_error(), "partially overlaps input y") == NULL)
                    GK_FAIL("%s: message \"%s\" should name y", op_names[op], gk_last_error());
            }
            GK_EXPECT_CONTENTS(p, hp);
            GK_EXPECT_CONTENTS(q, hq);

            /* the same elements through two views: z is x */
            GK_CHECK_OK(run_op(ctx, (enum op)op, s, tail, q, tail2));
            void *out = gk_test_read_all(tail2);
            const char *x1 = (const char *)hp + es;
            check_result(t, (enum op)op, s, x1, hq, x1, out, n,
                         "z is x through another view");
            free(out);
            /* inputs may overlap each other */
            if (uses_y((enum op)op)) {
                void *hr = gk_test_read_all(p);
                GK_CHECK_OK(run_op(ctx, (enum op)op, s, head, tail, q));
                out = gk_test_read_all(q);
                check_result(t, (enum op)op, s, hr, (const char *)hr + es, hq, out, n,
                             "overlapping inputs");
                free(out);
                free(hr);
            }
            gk_buffer_destroy(head);
            gk_buffer_destroy(tail);
            gk_buffer_destroy(tail2);
            gk_buffer_destroy(p);
            gk_buffer_destroy(q);
            free(hp);
            free(hq);
        }
        /* two wraps of one host array, one element apart */
        char *host = gk_test_random_array(t, n + 1, -1, 1);
        void *before = malloc((n + 1) * es);
        assert_non_null(before);
        memcpy(before, host, (n + 1) * es);
        gk_buffer *wa = NULL, *wb = NULL;
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, n, host, &wa));
        GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, n, host + es, &wb));
        GK_EXPECT(gk_copy(ctx, wa, wb), GK_E_INVALID_ARGUMENT, "gk_copy");
        GK_EXPECT(gk_exp(ctx, wb, wa), GK_E_INVALID_ARGUMENT, "gk_exp");
        assert_memory_equal(host, before, (n + 1) * es);
        gk_buffer_destroy(wa);
        gk_buffer_destroy(wb);
        free(before);
        free(host);
    }
}

/* Views with offsets, into padded parents and into disjoint parts of one parent; nothing
 * outside the output view changes. */
static void test_views(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t es = gk_test_esize(t);
        static const size_t ns[] = {1, 7, 1000, 1025};
        for (size_t si = 0; si < 4; si++) {
            size_t n = ns[si];
            for (int op = 0; op < OP_COUNT; op++) {
                double lo, hi;
                input_range(t, (enum op)op, &lo, &hi);
                double s = gk_test_uniform(-3, 3);
                for (int shared = 0; shared < 2; shared++) {
                    size_t total = shared ? 3 * n + 10 : n + 20;
                    void *hp = NULL, *hq = NULL, *hr = NULL;
                    gk_buffer *p = gk_test_buffer_random(ctx, t, total, lo, hi, &hp);
                    gk_buffer *q =
                        shared ? NULL : gk_test_buffer_random(ctx, t, total, lo, hi, &hq);
                    gk_buffer *r =
                        shared ? NULL : gk_test_buffer_random(ctx, t, total, lo, hi, &hr);
                    size_t ox = 3, oy = shared ? n + 5 : 11, oz = shared ? 2 * n + 9 : 7;
                    gk_buffer *x = gk_test_view(p, ox, n);
                    gk_buffer *y = gk_test_view(shared ? p : q, oy, n);
                    gk_buffer *z = gk_test_view(shared ? p : r, oz, n);
                    const char *yh = (const char *)(shared ? hp : hq) + oy * es;
                    char *zh = (char *)(shared ? hp : hr) + oz * es;
                    GK_CHECK_OK(run_op(ctx, (enum op)op, s, x, y, z));
                    void *out = gk_test_read_all(z);
                    check_result(t, (enum op)op, s, (char *)hp + ox * es, yh, zh, out, n,
                                 shared ? "views of one parent" : "views");
                    /* outside z nothing changed; inside it, the result */
                    memcpy(zh, out, n * es);
                    GK_EXPECT_CONTENTS(p, hp);
                    if (!shared) {
                        GK_EXPECT_CONTENTS(q, hq);
                        GK_EXPECT_CONTENTS(r, hr);
                    }
                    free(out);
                    free(hp);
                    free(hq);
                    free(hr);
                    gk_buffer_destroy(x);
                    gk_buffer_destroy(y);
                    gk_buffer_destroy(z);
                    gk_buffer_destroy(p);
                    gk_buffer_destroy(q);
                    gk_buffer_destroy(r);
                }
            }
        }
    }
}

/* Host-wrapped operands (staged on CUDA), mixed with backend buffers. */
static void test_host_wrapped(void **state)
{
    gk_context *ctx = gk_test_context(state);
    for (size_t di = 0; di < 2; di++) {
        gk_dtype t = dtypes[di];
        size_t n = 1025;
        for (int op = 0; op < OP_COUNT; op++) {
            double lo, hi;
            input_range(t, (enum op)op, &lo, &hi);
            double s = gk_test_uniform(-3, 3);
            void *hx = gk_test_random_array(t, n, lo, hi);
            void *hy = NULL;
            void *hz = gk_test_random_array(t, n, lo, hi);
            void *hz0 = gk_test_alloc(t, n);
            memcpy(hz0, hz, n * gk_test_esize(t));
            gk_buffer *x = NULL, *z = NULL;
            GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, n, hx, &x));
            GK_CHECK_OK(gk_buffer_wrap_host(ctx, t, n, hz, &z));
            gk_buffer *y = gk_test_buffer_random(ctx, t, n, lo, hi, &hy);
            GK_CHECK_OK(run_op(ctx, (enum op)op, s, x, y, z));
            /* the result is in the caller's memory when the call returns */
            check_result(t, (enum op)op, s, hx, hy, hz0, hz, n, "host-wrapped");
            gk_buffer_destroy(x);
            gk_buffer_destroy(y);
            gk_buffer_destroy(z);
            free(hx);
            free(hy);
            free(hz);
            free(hz0);
        }
    }
}

/* Every documented status of every element-wise op, with the output left untouched. */
static void test_errors(void **state)
{
    gk_context *ctx = gk_test_context(state);
    gk_context *other = NULL;
    GK_CHECK_OK(gk_context_create(gk_test_backend_of(state), &other));
    for (int op = 0; op < OP_COUNT; op++) {
        const char *fn = op_names[op];
        enum op o = (enum op)op;
        gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, 10, 1.5);
        gk_buffer *y = gk_test_buffer_const(ctx, GK_FLOAT32, 10, 2.5);
        gk_buffer *z = gk_test_buffer_const(ctx, GK_FLOAT32, 10, GK_TEST_SENTINEL);
        gk_buffer *x64 = gk_test_buffer_const(ctx, GK_FLOAT64, 10, 1.5);
        gk_buffer *x11 = gk_test_buffer_const(ctx, GK_FLOAT32, 11, 1.5);
        gk_buffer *z64 = gk_test_buffer_const(ctx, GK_FLOAT64, 10, GK_TEST_SENTINEL);
        gk_buffer *xo = gk_test_buffer_const(other, GK_FLOAT32, 10, 1.5);
        gk_buffer *zo = gk_test_buffer_const(other, GK_FLOAT32, 10, GK_TEST_SENTINEL);

        GK_EXPECT(run_op(NULL, o, 2.0, x, y, z), GK_E_INVALID_ARGUMENT, fn);
        GK_EXPECT(run_op(ctx, o, 2.0, x, y, NULL), GK_E_INVALID_ARGUMENT, fn);
        if (uses_x(o)) {
            GK_EXPECT(run_op(ctx, o, 2.0, NULL, y, z), GK_E_INVALID_ARGUMENT, fn);
            GK_EXPECT(run_op(ctx, o, 2.0, x64, y, z), GK_E_DTYPE, fn);
            GK_EXPECT(run_op(ctx, o, 2.0, x, y, z64), GK_E_DTYPE, fn);
            GK_EXPECT(run_op(ctx, o, 2.0, x11, y, z), GK_E_SHAPE, fn);
            GK_EXPECT(run_op(ctx, o, 2.0, xo, y, z), GK_E_CONTEXT_MISMATCH, fn);
        }
        if (uses_y(o)) {
            GK_EXPECT(run_op(ctx, o, 2.0, x, NULL, z), GK_E_INVALID_ARGUMENT, fn);
            GK_EXPECT(run_op(ctx, o, 2.0, x, x64, z), GK_E_DTYPE, fn);
            GK_EXPECT(run_op(ctx, o, 2.0, x, x11, z), GK_E_SHAPE, fn);
            GK_EXPECT(run_op(ctx, o, 2.0, x, xo, z), GK_E_CONTEXT_MISMATCH, fn);
        }
        /* the output belongs to another context */
        GK_EXPECT(run_op(ctx, o, 2.0, x, y, zo), GK_E_CONTEXT_MISMATCH, fn);
        GK_EXPECT_SENTINEL(z);
        GK_EXPECT_SENTINEL(z64);
        GK_EXPECT_SENTINEL(zo);

        gk_buffer *all[] = {x, y, z, x64, x11, z64, xo, zo};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            gk_buffer_destroy(all[i]);
    }
    gk_context_destroy(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        GK_TEST_BOTH(test_ops),         GK_TEST_BOTH(test_scalar_rounding),
        GK_TEST_BOTH(test_exp_special), GK_TEST_BOTH(test_aliasing),
        GK_TEST_BOTH(test_views),       GK_TEST_BOTH(test_host_wrapped),
        GK_TEST_BOTH(test_errors),      GK_TEST_BOTH(test_partial_overlap),
        GK_TEST_BOTH(test_div_special), GK_TEST_BOTH(test_exp_every_exponent),
        GK_TEST_BOTH(test_exp_large_outputs),
    };
    return cmocka_run_group_tests_name("elementwise", tests, gk_test_group_setup, NULL);
}
