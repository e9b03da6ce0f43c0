/* SPDX-License-Identifier: MIT */
/* error.h - the thread-local detailed message behind gk_last_error, and the checks that set it. */
#ifndef GK_ERROR_H
#define GK_ERROR_H

#include "gpukern.h"

/* Records the formatted message as this thread's last error (printing it when GK_LOG is set)
 * and returns status, so a failure is reported and forwarded in one statement. */
gk_status gk__error(gk_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Makes sure this thread's last message names fn (a backend's message may not know which
 * public function called it) and returns status. */
gk_status gk__error_in(gk_status status, const char *fn);

/* Puts back a message saved from gk_last_error(), after internal attempts that failed without
 * the caller's call failing (looking for the CUDA module), so they leave no trace there. */
void gk__error_restore(const char *saved);

/* 1 when the environment sets GK_LOG to something other than "" or "0". */
int gk__log_enabled(void);

/* Prints a diagnostic line to stderr when GK_LOG is set. */
void gk__log(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Prints a diagnostic line to stderr unconditionally: for callers that decided to log already
 * (a context created under GK_LOG=1). */
void gk__log_line(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Returns from the calling function with `status` and a message when cond is false. */
#define GK_CHECK(cond, status, ...)                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return gk__error((status), __VA_ARGS__);                                               \
    } while (0)

/* Forwards a failing status (the message is already recorded). */
#define GK_FORWARD(expr)                                                                           \
    do {                                                                                           \
        gk_status gk__st = (expr);                                                                 \
        if (gk__st != GK_OK)                                                                       \
            return gk__st;                                                                         \
    } while (0)

#endif /* GK_ERROR_H */
