/* SPDX-License-Identifier: MIT */
/* plugin.c - finds, loads and vets the CUDA backend module, once per process. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "core.h"

/* What the one load attempt of this process found: the table, or why there is none. */
static struct {
    pthread_once_t once;
    const gk_backend_ops *ops;
    char attempts[3072];
    size_t used;
} plugin = {PTHREAD_ONCE_INIT, NULL, "", 0};

static gk_host_services services;

static void note(const char *fmt, ...)
{
    if (plugin.used >= sizeof plugin.attempts)
        return;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(plugin.attempts + plugin.used, sizeof plugin.attempts - plugin.used, fmt, ap);
    va_end(ap);
    if (len > 0)
        plugin.used += (size_t)len;
    if (plugin.used >= sizeof plugin.attempts)
        plugin.used = sizeof plugin.attempts;
}

/* Any object inside libgpukern.so: dladdr on it names the file the library was loaded from. */
static const char library_anchor;

/* Directory of the loaded libgpukern.so. */
static int library_dir(char *dir, size_t size)
{
    Dl_info info;
    if (dladdr(&library_anchor, &info) == 0 || info.dli_fname == NULL)
        return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash == NULL)
        return 0;
    size_t len = (size_t)(slash - info.dli_fname);
    if (len + 1 > size)
        return 0;
    memcpy(dir, info.dli_fname, len);
    dir[len] = '\0';
    return 1;
}

/* Tries one path; 1 when the module loaded and handed over a table we can use. A module that
 * loads is kept (never dlclose'd: its CUDA runtime may have registered exit handlers). */
static int try_module(const char *path)
{
    gk__log("trying CUDA module %s", path);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        note("\n  %s: dlopen failed: %s", path, dlerror());
        return 0;
    }
    gk_module_entry_fn entry;
    *(void **)&entry = dlsym(handle, GK_MODULE_ENTRY_SYMBOL);
    if (entry == NULL) {
        note("\n  %s: no symbol %s: %s", path, GK_MODULE_ENTRY_SYMBOL, dlerror());
        return 0;
    }
    const gk_backend_ops *ops = NULL;
    gk_status st = entry(GK_BACKEND_ABI_VERSION, &services, &ops);
    if (st != GK_OK || ops == NULL) {
        note("\n  %s: module refused to start: %s", path, gk_last_error());
        return 0;
    }
    if (ops->abi_version != GK_BACKEND_ABI_VERSION ||
        ops->struct_size < offsetof(gk_backend_ops, mem_read) + sizeof ops->mem_read) {
        note("\n  %s: backend table version %u size %u, expected version %u", path,
             ops->abi_version, ops->struct_size, GK_BACKEND_ABI_VERSION);
        return 0;
    }
    int count = 0;
    st = ops->device_count(&count);
    if (st != GK_OK) {
        note("\n  %s: loaded, but no usable device: %s", path, gk_last_error());
        return 1;
    }
    if (count < 1) {
        note("\n  %s: loaded, but it reports no CUDA device", path);
        return 1;
    }
    gk__log("CUDA module %s: %d device(s)", path, count);
    plugin.ops = ops;
    return 1;
}

static void load_once(void)
{
    /* The attempts go into plugin.attempts; this thread's own message stays as it was. */
    static char saved[4096];
    snprintf(saved, sizeof saved, "%s", gk_last_error());
    services.struct_size = sizeof services;
    services.error = gk__error;
    services.log_enabled = gk__log_enabled();
#ifdef GK_FAULT_INJECTION
    services.fault_next = gk__fault_next;
#endif
    note("CUDA backend unavailable; tried:");

    char paths[4][1024];
    int n = 0;
    const char *env = getenv("GK_CUDA_PLUGIN");
    if (env != NULL && env[0] != '\0') {
        if (env[0] == '/')
            snprintf(paths[n++], sizeof paths[0], "%s", env);
        else
            note("\n  GK_CUDA_PLUGIN=%s: ignored, not an absolute path", env);
    }
    char dir[900];
    if (library_dir(dir, sizeof dir))
        snprintf(paths[n++], sizeof paths[0], "%s/gpukern/%s", dir, GK_MODULE_NAME);
    snprintf(paths[n++], sizeof paths[0], "%s/%s", GK_BUILD_MODULE_DIR, GK_MODULE_NAME);
    snprintf(paths[n++], sizeof paths[0], "%s/%s", GK_INSTALL_MODULE_DIR, GK_MODULE_NAME);

    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= strcmp(paths[i], paths[j]) == 0;
        if (!seen && try_module(paths[i]))
            break;
    }
    if (plugin.ops == NULL)
        gk__log("%s", plugin.attempts);
    gk__error_restore(saved);
}

const gk_backend_ops *gk__cuda_backend(const char *fn, int report)
{
    pthread_once(&plugin.once, load_once);
    if (plugin.ops == NULL && report)
        gk__error(GK_E_BACKEND_UNAVAILABLE, "%s: %s", fn, plugin.attempts);
    return plugin.ops;
}
