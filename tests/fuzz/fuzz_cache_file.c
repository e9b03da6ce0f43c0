/* SPDX-License-Identifier: MIT */
/* fuzz_cache_file.c - libFuzzer harness: the input is the text of an AUTO calibration cache
 * file, read by the library's private reader (src/cache_file.c). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_file.h"

/* A file is accepted whole or refused whole: on refusal the model is untouched and the reason
 * is printable text; on acceptance every figure is finite and positive. Any breach aborts. */

static char path[64];

static void fail(const char *what, const char *why)
{
    fprintf(stderr, "fuzz_cache_file: %s (why: \"%s\")\n", what, why);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (path[0] == '\0') {
        snprintf(path, sizeof path, "/tmp/gk_fuzz_cache_%ld.txt", (long)getpid());
        unlink(path);
    }
    /* mode 0600: the reader refuses a file that others may write */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        fail("cannot write the input file", "");
    gk_cost_model m, before;
    gk__cost_model_defaults(&m);
    before = m;
    char why[256] = "";
    if (!gk__cost_model_load(&m, path, why, sizeof why)) {
        if (memcmp(&m, &before, sizeof m) != 0)
            fail("a refused file changed the model", why);
        if (why[0] == '\0')
            fail("a refused file has no reason", why);
        for (const char *c = why; *c; c++)
            if (*c < 0x20 || *c > 0x7e)
                fail("the reason is not printable", why);
        return 0;
    }
    const double *v = (const double *)(const void *)&m;
    for (size_t i = 0; i < sizeof m / sizeof *v; i++)
        if (!(v[i] > 0.0 && v[i] < 1e30))
            fail("an accepted file holds a figure out of range", "");
    return 0;
}
