/* SPDX-License-Identifier: MIT */
/* env_check.c - the environment switches' values checked against what they accept
 * (docs/environment.md lists them). */
#include <stdio.h>
#include <string.h>

#include "env.h"
#include "error.h"

gk_status gk__env_choice(const char *fn, const char *var, const char *const *values, size_t count,
                         int *index)
{
    const char *v = gk__env(var);
    *index = -1;
    if (v == NULL || v[0] == '\0')
        return GK_OK;
    char accepted[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(v, values[i]) == 0) {
            *index = (int)i;
            return GK_OK;
        }
        int w = snprintf(accepted + used, sizeof accepted - used, "%s%s", i ? ", " : "", values[i]);
        if (w > 0 && (size_t)w < sizeof accepted - used)
            used += (size_t)w;
    }
    char shown[300];
    gk__printable(v, 64, shown, sizeof shown);
    return gk__error(GK_E_INVALID_ARGUMENT, "%s: %s=%s is not one of: %s", fn, var, shown,
                     accepted);
}

static const char *const log_values[] = {"0", "1"};
static const char *const isa_values[] = {"auto", "generic", "avx512"};

gk_status gk__env_read_config(const char *fn, gk_backend_config *cfg)
{
    int choice;
    GK_FORWARD(gk__env_choice(fn, "GK_LOG", log_values, 2, &choice));
    cfg->log = choice == 1;
    GK_FORWARD(gk__env_choice(fn, "GK_RBF_ISA", isa_values, 3, &choice));
    cfg->cpu_isa = choice < 0 ? GK_ISA_AUTO : choice;
    const char *form = gk__env("GK_RBF_FORM");
    cfg->rbf_form[0] = '\0';
    if (form != NULL) {
        char shown[200];
        gk__printable(form, 40, shown, sizeof shown);
        GK_CHECK(strlen(form) < sizeof cfg->rbf_form, GK_E_INVALID_ARGUMENT,
                 "%s: GK_RBF_FORM=%s is longer than any form's name", fn, shown);
        strcpy(cfg->rbf_form, form);
        /* Names without cuda_ are the CPU planner's: checked here, so that a CUDA context refuses
         * a misspelt one too (the CUDA backend checks its own). */
        int unused;
        if (strncmp(form, "cuda_", 5) != 0)
            GK_FORWARD(gk__cpu_rbf_form_parse(form, &unused));
    }
    return GK_OK;
}
