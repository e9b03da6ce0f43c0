/* SPDX-License-Identifier: MIT */
/* env.c - the library's one read of the environment (below the error layer, which reads GK_LOG
 * through it). */
#include "env.h"

#include <stdlib.h>

const char *gk__env(const char *var)
{
    return getenv(var);
}
