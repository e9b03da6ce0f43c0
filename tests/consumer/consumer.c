/* SPDX-License-Identifier: MIT */
/* consumer.c - a program built against an installed libgpukern: version check and one checked op.
 */
#include <gpukern.h>
#include <stdio.h>

static int fail(const char *what, gk_status st)
{
    fprintf(stderr, "consumer: %s failed: %s: %s\n", what, gk_status_string(st), gk_last_error());
    return 1;
}

int main(void)
{
    if (gk_version_number() != GK_VERSION_NUMBER) {
        fprintf(stderr, "consumer: built against %s, running %s\n", GK_VERSION_STRING,
                gk_version_string());
        return 1;
    }
    gk_context *ctx = NULL;
    gk_status st = gk_context_create(GK_BACKEND_AUTO, &ctx);
    if (st != GK_OK)
        return fail("gk_context_create", st);
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {10, 20, 30, 40, 50}, c[5] = {0};
    gk_buffer *x = NULL, *y = NULL;
    if ((st = gk_buffer_create(ctx, GK_FLOAT32, 5, &x)) != GK_OK ||
        (st = gk_buffer_create(ctx, GK_FLOAT32, 5, &y)) != GK_OK ||
        (st = gk_buffer_write(x, 0, 5, a)) != GK_OK ||
        (st = gk_buffer_write(y, 0, 5, b)) != GK_OK || (st = gk_add(ctx, x, y, y)) != GK_OK ||
        (st = gk_buffer_read(y, 0, 5, c)) != GK_OK)
        return fail("add", st);
    double sum = 0;
    if ((st = gk_sum(ctx, y, &sum)) != GK_OK)
        return fail("gk_sum", st);
    for (int i = 0; i < 5; i++)
        if (c[i] != a[i] + b[i]) {
            fprintf(stderr, "consumer: c[%d] = %g, expected %g\n", i, c[i], a[i] + b[i]);
            return 1;
        }
    if (sum != 165.0) {
        fprintf(stderr, "consumer: sum = %g, expected 165\n", sum);
        return 1;
    }
    printf("consumer OK: libgpukern %s, %s\n", gk_version_string(), gk_context_device_name(ctx));
    gk_buffer_destroy(x);
    gk_buffer_destroy(y);
    gk_context_destroy(ctx);
    return 0;
}
