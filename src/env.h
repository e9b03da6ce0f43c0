/* SPDX-License-Identifier: MIT */
/* env.h - the library's environment switches: the one place that reads the environment. */
#ifndef GK_ENV_H
#define GK_ENV_H

#include <stddef.h>

#include "backend.h"
#include "gpukern.h"

/* The value of var, NULL when unset: every read of the environment goes through here, so that
 * docs/environment.md can list them all from one place. */
const char *gk__env(const char *var);

/* Up to max characters of text into out (size bytes), printable: a tab as \t, any other byte
 * that is not printable ASCII as \xNN, and "..." when text is longer (values quoted in
 * messages). */
void gk__printable(const char *text, size_t max, char *out, size_t size);

/* var's value as an index into values[0..count-1]; *index is -1 when var is unset or empty.
 * Any other value is GK_E_INVALID_ARGUMENT, the message naming fn, the variable, its value and
 * the accepted values. */
gk_status gk__env_choice(const char *fn, const char *var, const char *const *values, size_t count,
                         int *index);

/* The switches a backend reads at context creation (GK_LOG, GK_RBF_ISA, GK_RBF_FORM) into cfg;
 * an unknown value is GK_E_INVALID_ARGUMENT. A form name is checked by the backend's planner,
 * which knows its forms. */
gk_status gk__env_read_config(const char *fn, gk_backend_config *cfg);

#endif /* GK_ENV_H */
