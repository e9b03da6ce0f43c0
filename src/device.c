/* SPDX-License-Identifier: MIT */
/* device.c - which backend a context runs on and which devices it has. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core.h"
#include "env.h"

GK_API int gk_backend_available(gk_backend b)
{
    switch (b) {
    case GK_BACKEND_AUTO:
    case GK_BACKEND_CPU:
        return 1;
    case GK_BACKEND_CUDA:
        return gk__cuda_backend("gk_backend_available", 1) != NULL;
    }
    gk__error(GK_E_INVALID_ARGUMENT, "gk_backend_available: b (%d) is not a gk_backend", (int)b);
    return 0;
}

/* AUTO becomes what GK_BACKEND says, else CUDA when usable, else CPU; *hybrid is set when AUTO
 * chose CUDA, so the context keeps the CPU backend too. */
gk_status gk__resolve_backend(const char *fn, gk_backend requested, const gk_backend_ops **ops,
                              int *hybrid)
{
    *hybrid = 0;
    if (requested == GK_BACKEND_AUTO) {
        static const char *const names[] = {"auto", "cpu", "cuda"};
        int choice;
        GK_FORWARD(gk__env_choice(fn, "GK_BACKEND", names, 3, &choice));
        if (choice > 0)
            requested = choice == 1 ? GK_BACKEND_CPU : GK_BACKEND_CUDA;
    }
    switch (requested) {
    case GK_BACKEND_CPU:
        *ops = gk__cpu_backend();
        return GK_OK;
    case GK_BACKEND_CUDA:
        *ops = gk__cuda_backend(fn, 1);
        return *ops != NULL ? GK_OK : GK_E_BACKEND_UNAVAILABLE;
    case GK_BACKEND_AUTO:
        *ops = gk__cuda_backend(fn, 0);
        *hybrid = *ops != NULL;
        if (*ops == NULL)
            *ops = gk__cpu_backend();
        return GK_OK;
    }
    return gk__error(GK_E_INVALID_ARGUMENT, "%s: backend (%d) is not a gk_backend", fn,
                     (int)requested);
}

/* The devices of backend table ops: 1 for the CPU, what the module reports otherwise. */
static gk_status backend_devices(const char *fn, const gk_backend_ops *ops, int *count)
{
    if (ops->kind == GK_BACKEND_CPU) {
        *count = 1;
        return GK_OK;
    }
    int n = 0;
    gk_status st = ops->device_count(&n);
    if (st != GK_OK)
        return gk__error_in(st, fn);
    GK_CHECK(n > 0, GK_E_BACKEND_UNAVAILABLE, "%s: the %s backend reports no device", fn,
             ops->name);
    *count = n;
    return GK_OK;
}

GK_API int gk_device_count(gk_backend b)
{
    static const char fn[] = "gk_device_count";
    const gk_backend_ops *ops = NULL;
    int hybrid = 0;
    if (b == GK_BACKEND_CUDA) {
        ops = gk__cuda_backend(fn, 1);
        if (ops == NULL)
            return 0;
    } else if (b == GK_BACKEND_CPU || b == GK_BACKEND_AUTO) {
        if (gk__resolve_backend(fn, b, &ops, &hybrid) != GK_OK)
            return 0;
    } else {
        gk__error(GK_E_INVALID_ARGUMENT, "%s: b (%d) is not a gk_backend", fn, (int)b);
        return 0;
    }
    int count = 0;
    return backend_devices(fn, ops, &count) == GK_OK ? count : 0;
}

gk_status gk__check_device(const char *fn, const gk_backend_ops *ops, gk_backend requested,
                           int32_t device)
{
    /* AUTO falling back to the CPU: the ordinal named a GPU that is not there. */
    if (requested == GK_BACKEND_AUTO && ops->kind == GK_BACKEND_CPU)
        return GK_OK;
    int count = 0;
    GK_FORWARD(backend_devices(fn, ops, &count));
    GK_CHECK(device < count, GK_E_INVALID_ARGUMENT,
             "%s: options->device (%d) is not a device of the %s backend, which has %d "
             "(gk_device_count)",
             fn, (int)device, ops->name, count);
    return GK_OK;
}
