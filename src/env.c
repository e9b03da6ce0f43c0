/* SPDX-License-Identifier: MIT */
/* env.c - the library's one read of the environment (below the error layer, which reads GK_LOG
 * through it). */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>

const char *gk__env(const char *var)
{
    return getenv(var);
}

/* Up to max characters of text into out (size bytes), printable: a tab as \t, any other byte
 * that is not printable ASCII as \xNN, and "..." when text is longer. */
void gk__printable(const char *text, size_t max, char *out, size_t size)
{
    size_t n = 0, i = 0;
    for (; text[i] != '\0' && i < max && n + 8 < size; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\t')
            n += (size_t)snprintf(out + n, size - n, "\\t");
        else if (c < 0x20 || c > 0x7e)
            n += (size_t)snprintf(out + n, size - n, "\\x%02x", c);
        else
            out[n++] = (char)c;
    }
    out[n] = '\0';
    if (text[i] != '\0')
        snprintf(out + n, size - n, "...");
}
