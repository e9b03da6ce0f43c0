/* SPDX-License-Identifier: MIT */
/* test_exp2_poly.c - every float of [-1/2, 1/2] through src/exp2_poly.h against double exp2. */
#include "gk_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exp2_poly.h"

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* |t| <= 1/2 has j = 0 and f = t, so this is the polynomial at every float it can see. */
static void test_every_fraction(void **state)
{
    (void)state;
    double worst = 0;
    float worst_t = 0;
    for (uint32_t sign = 0; sign < 2; sign++)
        for (uint32_t u = 0; u <= 0x3f000000u; u++) {
            const float t = from_bits(u | sign << 31);
            const double e = fabs((double)gk_exp2_poly(t) / exp2((double)t) - 1.0);
            if (e > worst) {
                worst = e;
                worst_t = t;
            }
        }
    printf("# 2^f, every float f of [-1/2, 1/2]: largest relative error %.4g (%.3g u) at %a\n",
           worst, worst / 0x1p-24, (double)worst_t);
    if (worst > GK_EXP2_POLY_MAX_REL)
        fail_msg("relative error %.4g at t = %a beyond GK_EXP2_POLY_MAX_REL", worst,
                 (double)worst_t);
}

/* The range reduction and the exponent: t = j + f over [-125, 125] in steps of 2^-12, with the
 * ties j + 1/2 and the ends, where the result must be the polynomial's value times 2^j exactly. */
static void test_composition(void **state)
{
    (void)state;
    double worst = 0;
    for (int32_t i = -125 * 4096; i <= 125 * 4096; i++) {
        const float t = (float)i * 0x1p-12f;
        const float j = rintf(t), got = gk_exp2_poly(t);
        const float want = ldexpf(gk_exp2_poly(t - j), (int)j);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("t = %a: %a, not 2^%d times the polynomial at %a (%a)", (double)t,
                     (double)got, (int)j, (double)(t - j), (double)want);
        const double e = fabs((double)got / exp2((double)t) - 1.0);
        if (e > worst)
            worst = e;
    }
    static const float edges[] = {125.0f, -125.0f, 0x1.f3fffep6f, -0x1.f3fffep6f, 100.0f, -100.0f,
                                  0.5f, -0.5f, 1.5f, -1.5f, 0x1p-149f, -0x1p-149f, 0.0f, -0.0f};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++) {
        const double e = fabs((double)gk_exp2_poly(edges[k]) / exp2((double)edges[k]) - 1.0);
        if (!(e <= GK_EXP2_POLY_MAX_REL))
            fail_msg("t = %a: relative error %.4g", (double)edges[k], e);
    }
    printf("# 2^t, t in [-125, 125] by 2^-12: largest relative error %.4g\n", worst);
    if (worst > GK_EXP2_POLY_MAX_REL)
        fail_msg("relative error %.4g beyond GK_EXP2_POLY_MAX_REL", worst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fraction),
        cmocka_unit_test(test_composition),
    };
    return cmocka_run_group_tests_name("exp2_poly", tests, NULL, NULL);
}
