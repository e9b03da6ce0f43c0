/* SPDX-License-Identifier: MIT */
/* version.c - the version of the library actually loaded. */
#include "gpukern.h"

GK_API uint32_t gk_version_number(void)
{
    return GK_VERSION_NUMBER;
}

GK_API const char *gk_version_string(void)
{
    return GK_VERSION_STRING;
}
