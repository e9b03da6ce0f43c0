/* SPDX-License-Identifier: MIT */
/* error.c - status strings, the per-thread last-error message and GK_LOG diagnostics. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "status_list.h"

/* Long enough for the CUDA module's list of every path tried with its dlerror() text. */
#define GK_ERROR_CAPACITY 4096

static _Thread_local char last_error[GK_ERROR_CAPACITY];

#define GK_STATUS_TEXT(name, text) #name ": " text,
static const char *const status_texts[] = {GK_STATUS_LIST(GK_STATUS_TEXT)};
#undef GK_STATUS_TEXT

GK_API const char *gk_status_string(gk_status s)
{
    size_t n = sizeof status_texts / sizeof status_texts[0];
    if ((unsigned)s < n)
        return status_texts[s];
    return "unknown gk_status";
}

GK_API const char *gk_last_error(void)
{
    return last_error;
}

int gk__log_enabled(void)
{
    const char *v = gk__env("GK_LOG");
    return v != NULL && strcmp(v, "1") == 0;
}

static void print_line(const char *fmt, va_list ap)
{
    fputs("gpukern: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void gk__log(const char *fmt, ...)
{
    if (!gk__log_enabled())
        return;
    va_list ap;
    va_start(ap, fmt);
    print_line(fmt, ap);
    va_end(ap);
}

void gk__log_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_line(fmt, ap);
    va_end(ap);
}

gk_status gk__error(gk_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    gk__log("error %d: %s", (int)status, last_error);
    return status;
}

gk_status gk__error_in(gk_status status, const char *fn)
{
    size_t len = strlen(fn);
    if (strncmp(last_error, fn, len) == 0 && last_error[len] == ':')
        return status;
    char detail[GK_ERROR_CAPACITY];
    memcpy(detail, last_error, sizeof detail);
    return gk__error(status, "%s: %s", fn, detail);
}

void gk__error_restore(const char *saved)
{
    if (saved != last_error)
        snprintf(last_error, sizeof last_error, "%s", saved);
}
