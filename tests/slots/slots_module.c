/* SPDX-License-Identifier: MIT */
/* slots_module.c - a backend module for test_slots: the CPU backend's code under the name
 * "slots-test", whose table the test shortens or empties slot by slot. */
#include <stdarg.h>
#include <stdio.h>

#include "backend.h"
#include "error.h"

static const gk_host_services *services;
static gk_backend_ops table;

/* The CPU backend's sources, linked into this module, report through the core's services. */
gk_status gk__error(gk_status status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return services->error(status, "%s", msg);
}

void gk__log_line(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    services->log("%s", msg);
}

__attribute__((visibility("default"))) gk_status
gk_module_entry(uint32_t abi_version, const gk_host_services *svc, const gk_backend_ops **ops)
{
    if (abi_version != GK_BACKEND_ABI_VERSION)
        return svc->error(GK_E_UNSUPPORTED, "slots-test: ABI version %u, not %u",
                          (unsigned)abi_version, (unsigned)GK_BACKEND_ABI_VERSION);
    services = svc;
    table = *gk__cpu_backend();
    table.kind = GK_BACKEND_CUDA;
    table.name = "slots-test";
    *ops = &table;
    return GK_OK;
}

/* The table the core holds, for the test to edit between contexts. */
__attribute__((visibility("default"))) gk_backend_ops *gk_slots_test_table(void)
{
    return &table;
}
