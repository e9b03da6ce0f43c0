/* SPDX-License-Identifier: MIT */
/* test_normal_f32.c - all inputs of src/normal_f32.h against the double definition of normals. */
#include "gk_test.h"

#include <math.h>
#include <stdio.h>

#include "normal_f32.h"

/* u = 2^-24: the unit in which normal_f32.h states its bounds. */
#define U 0x1p-24L

/* The bounds normal_f32.h's proof assumes (relative errors of r and of cos/sin theta, and the
 * largest |lo / hi| of each): this test is what makes them true. */
#define RHO_R 0x1.6p-26L
#define RHO_T 0x1.6p-26L
#define GAMMA_R 0x1p-22L
#define GAMMA_T 0x1.ap-4L

/* r = sqrt(-2 ln(m 2^-24)) for every m in [1, 2^24], against the double evaluation. */
static void test_radius_every_u1(void **state)
{
    (void)state;
    long double worst = 0, gamma = 0;
    uint32_t worst_m = 0;
    for (uint32_t m = 1; m <= (1u << 24); m++) {
        double want = sqrt(-2.0 * log((double)m * 0x1p-24));
        gk_ff r = gk__bm_radius(gk__neg2ln_u24(m));
        long double got = (long double)r.hi + r.lo;
        if (want == 0) {
            if (r.hi != 0 || r.lo != 0)
                fail_msg("m = %u: r = %.9g + %.9g, expected 0", m, r.hi, r.lo);
            continue;
        }
        long double e = fabsl(got - want) / want;
        if (e > worst) {
            worst = e;
            worst_m = m;
        }
        long double g = fabsl((long double)r.lo / r.hi);
        if (g > gamma)
            gamma = g;
    }
    printf("# r: largest relative error %.3Lg u (m = %u), largest |lo/hi| 2^%.1Lf\n", worst / U,
           worst_m, log2l(gamma));
    if (worst > RHO_R || gamma > GAMMA_R)
        fail_msg("r: relative error %.3Lg u or |lo/hi| %.3Lg beyond the bounds normal_f32.h "
                 "assumes",
                 worst / U, gamma);
}

/* cos and sin of 2 pi k 2^-24 for every k in [0, 2^24), against cos/sin of the double
 * 6.283185307179586 * u2; where the definition gives exactly 0, exactly 0. */
static void test_sincos_every_u2(void **state)
{
    (void)state;
    long double worst = 0, gamma = 0;
    uint32_t worst_k = 0;
    for (uint32_t k = 0; k < (1u << 24); k++) {
        double theta = 6.283185307179586476925286766559 * ((double)k * 0x1p-24);
        double want[2] = {cos(theta), sin(theta)};
        gk_ff got[2];
        gk__bm_sincos(k, &got[0], &got[1]);
        for (int i = 0; i < 2; i++) {
            long double v = (long double)got[i].hi + got[i].lo;
            if (want[i] == 0) {
                if (v != 0)
                    fail_msg("k = %u: %s = %.9Lg, expected 0", k, i ? "sin" : "cos", v);
                continue;
            }
            long double e = fabsl(v - want[i]) / fabsl(want[i]);
            if (e > worst) {
                worst = e;
                worst_k = k;
            }
            long double g = fabsl((long double)got[i].lo / got[i].hi);
            if (g > gamma)
                gamma = g;
        }
    }
    printf("# cos/sin: largest relative error %.3Lg u (k = %u), largest |lo/hi| 2^%.1Lf\n",
           worst / U, worst_k, log2l(gamma));
    if (worst > RHO_T || gamma > GAMMA_T)
        fail_msg("cos/sin: relative error %.3Lg u or |lo/hi| %.3Lg beyond the bounds "
                 "normal_f32.h assumes",
                 worst / U, gamma);
}

/* Whole values for random words and parameters: within the proof's bound of the exact
 * mean + stddev z_definition, 2.8125 u |stddev z| + u |mean| (+ the smallest subnormal),
 * hence within 4 ulp of |mean| + |stddev z|. Also counts the values that differ from the
 * definition rounded once (what release 1.1.0 returned on every backend). */
static void test_values(void **state)
{
    (void)state;
    static const float params[][2] = {{0.0f, 1.0f},   {3.0f, 2.0f},   {-1e3f, 0.1f}, {0.1f, 1e-3f},
                                      {1e30f, 1e29f}, {0.0f, 1e-30f}, {-2.5f, 1e4f}};
    const size_t n = 1000000;
    for (size_t p = 0; p < sizeof params / sizeof params[0]; p++) {
        float mean = params[p][0], sd = params[p][1];
        size_t differ = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t w = gk_test_rand64();
            uint32_t a = (uint32_t)w, b = (uint32_t)(w >> 32);
            double u1 = ((double)(a >> 8) + 1.0) * 0x1p-24, u2 = (double)(b >> 8) * 0x1p-24;
            float got[2];
            gk__normal_pair_f32(a, b, mean, sd, &got[0], &got[1]);
            for (int odd = 0; odd < 2; odd++) {
                double z = gk__box_muller(u1, u2, odd);
                long double want = (long double)mean + (long double)sd * z;
                long double s = fabsl((long double)sd * z), m = fabsl((long double)mean);
                long double bound = 2.8125L * U * s + U * m + 0x1p-149L;
                if (!(fabsl(got[odd] - want) <= bound) ||
                    !(fabsl(got[odd] - want) <= 4 * gk_test_ulp(GK_FLOAT32, m + s)))
                    fail_msg("mean %g stddev %g words %08x %08x: %s value %.9g, expected "
                             "%.12Lg (bound %.3Lg)",
                             mean, sd, a, b, odd ? "odd" : "even", got[odd], want, bound);
                differ += got[odd] != (float)(mean + sd * z);
            }
        }
        printf("# mean %g stddev %g: %.2f%% of %zu values differ from the double evaluation "
               "rounded once\n",
               mean, sd, 100.0 * differ / (2.0 * n), 2 * n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_radius_every_u1),
        cmocka_unit_test(test_sincos_every_u2),
        cmocka_unit_test(test_values),
    };
    return cmocka_run_group_tests_name("normal_f32", tests, gk_test_group_setup, NULL);
}
