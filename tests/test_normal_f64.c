/* SPDX-License-Identifier: MIT */
/* test_normal_f64.c - src/normal_f64.h against the double definition of float64 normals. */
#include "gk_test.h"

#include <math.h>
#include <stdio.h>

#include "normal_f64.h"

static const gk_log_entry log_table[256] = {GK_LOG_TABLE};

/* u = 2^-53 */
#define U 0x1p-53L

/* The definition's z with long double log, sqrt, cos and sin (64-bit significands) on the
 * definition's u1 and double theta: the exact value to about 2^-62. */
static long double exact_z(const uint32_t x[4], int odd)
{
    double u1 = gk__u53_to_double(x[0], x[1]) + 0x1p-53;
    double u2 = gk__u53_to_double(x[2], x[3]);
    double theta = 6.283185307179586476925286766559 * u2;
    long double r = sqrtl(-2.0L * logl((long double)u1));
    return odd ? r * sinl((long double)theta) : r * cosl((long double)theta);
}

/* Largest error of z (mean 0, stddev 1) in u |z|, and how many values differ from the
 * definition evaluated with the host's libm (gk__box_muller, what 1.1.0 returned) and by how
 * many ulp at most; every value within 4 ulp of |mean| + |stddev z| for other parameters. */
static void check_words(const uint32_t x[4], long double *worst, size_t *differ, uint64_t *ulps)
{
    double z[2];
    gk__normal_pair_f64(x, 0.0, 1.0, log_table, 1, &z[0], &z[1]);
    double u1 = gk__u53_to_double(x[0], x[1]) + 0x1p-53;
    double u2 = gk__u53_to_double(x[2], x[3]);
    for (int odd = 0; odd < 2; odd++) {
        long double want = exact_z(x, odd);
        if (want != 0) {
            long double e = fabsl(z[odd] - want) / fabsl(want) / U;
            if (e > *worst)
                *worst = e;
        } else if (z[odd] != 0) {
            fail_msg("words %08x %08x %08x %08x: z = %.17g, expected 0", x[0], x[1], x[2], x[3],
                     z[odd]);
        }
        double old = gk__box_muller(u1, u2, odd);
        if (!gk_test_same_bits(GK_FLOAT64, z[odd], old)) {
            uint64_t d = gk_test_ulp_distance(GK_FLOAT64, z[odd], old);
            ++*differ;
            *ulps = d > *ulps ? d : *ulps;
        }
        if (!(fabsl(z[odd] - want) <= 4 * gk_test_ulp(GK_FLOAT64, fabsl(want))))
            fail_msg("words %08x %08x %08x %08x: %s z = %.17g, expected %.20Lg", x[0], x[1], x[2],
                     x[3], odd ? "odd" : "even", z[odd], want);
    }
}

static void report(const char *what, size_t n, long double worst, size_t differ, uint64_t ulps)
{
    printf("# %s: largest error %.3Lg u |z|; %zu of %zu values differ from the host libm's "
           "double evaluation, by at most %llu ulp\n",
           what, worst, differ, 2 * n, (unsigned long long)ulps);
    /* r, cos/sin and their product each round once (u each), the rest is far smaller */
    if (worst > 3.25L)
        fail_msg("%s: error %.3Lg u beyond 3.25 u", what, worst);
}

static void test_random_words(void **state)
{
    (void)state;
    const size_t n = 4000000;
    long double worst = 0;
    size_t differ = 0;
    uint64_t ulps = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = gk_test_rand64(), b = gk_test_rand64();
        uint32_t x[4] = {(uint32_t)a, (uint32_t)(a >> 32), (uint32_t)b, (uint32_t)(b >> 32)};
        check_words(x, &worst, &differ, &ulps);
    }
    report("random words", n, worst, differ, ulps);
}

/* u1 near 1 and near the table's bucket edges, u1 at its extremes, theta near multiples of
 * pi/2 (where the reduction cancels) and u2 = 0. */
static void test_edges(void **state)
{
    (void)state;
    long double worst = 0;
    size_t differ = 0, n = 0;
    uint64_t ulps = 0;
    /* m = 2^53 - d (u1 = 1 - (d - 1) 2^-53), m = small, and m at every bucket edge +- a few */
    for (uint64_t d = 1; d < 4096; d++) {
        uint64_t ms[3] = {((uint64_t)1 << 53) - d, d, 0};
        /* bucket edges: m = 2^52 f for the edge f of bucket d % 256, shifted by d / 256 - 8 */
        uint32_t hw = 0x3fe80000u - 0x800u + (uint32_t)((d % 256) << 12) + 0x03400000u;
        ms[2] = (uint64_t)(gk__f64_from(hw, 0)) + (d / 256) - 8;
        for (int v = 0; v < 3; v++) {
            uint64_t mm = ms[v] - 1; /* the words' 53-bit value is m - 1 */
            for (uint64_t kk = 0; kk < 5; kk++) {
                /* k near q 2^51 (theta near q pi/2) */
                double kd = (double)kk * 0x1p51 / 1.0;
                uint64_t k = (uint64_t)(kd) + (d % 7) - 3;
                if (kk == 0)
                    k = d % 7;
                if (k >= ((uint64_t)1 << 53))
                    k = ((uint64_t)1 << 53) - 1 - (d % 7);
                uint32_t x[4] = {(uint32_t)(mm >> 26) << 5, (uint32_t)(mm & 0x3ffffff) << 6,
                                 (uint32_t)(k >> 26) << 5, (uint32_t)(k & 0x3ffffff) << 6};
                check_words(x, &worst, &differ, &ulps);
                n++;
            }
        }
    }
    report("edges", n, worst, differ, ulps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_words),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests_name("normal_f64", tests, gk_test_group_setup, NULL);
}
