/* SPDX-License-Identifier: MIT */
/* mpi_error.c - this thread's last gk_mpi_ failure message, kept apart from gk_last_error(). */
#include <stdarg.h>
#include <stdio.h>

#include "mpi_internal.h"

/* Per thread, as gk_last_error() is: a message agreed on by the ranks belongs to the thread
 * that made the collective call. */
static _Thread_local char message[GK_MPI_MESSAGE_MAX];

char *gk_mpi__message(void)
{
    return message;
}

GK_MPI_API const char *gk_mpi_last_error(void)
{
    return message;
}

gk_status gk_mpi__fail(gk_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return s;
}

gk_status gk_mpi__fail_mpi(const char *fn, const char *call, int mpi_err)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(mpi_err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", mpi_err);
    return gk_mpi__fail(GK_E_INTERNAL, "%s: %s failed: %s", fn, call, text);
}
