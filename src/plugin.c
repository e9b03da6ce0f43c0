/* SPDX-License-Identifier: MIT */
/* plugin.c - finds, loads and vets the CUDA backend module, once per process. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "core.h"
#include "env.h"

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
    int len =
        vsnprintf(plugin.attempts + plugin.used, sizeof plugin.attempts - plugin.used, fmt, ap);
    va_end(ap);
    if (len > 0)
        plugin.used += (size_t)len;
    if (plugin.used >= sizeof plugin.attempts)
        plugin.used = sizeof plugin.attempts;
}

/* A path as the attempts show it: long ones are cut in the middle, so that one attempt cannot
 * crowd the others out of the message. */
static const char *shown(const char *path, char *buf, size_t size)
{
    size_t len = strlen(path);
    if (len <= 200)
        return path;
    snprintf(buf, size, "%.80s...%s (%zu characters)", path, path + len - 100, len);
    return buf;
}

/* Records (and, under GK_LOG, prints) why the candidate `what` (a path as shown) was not used. */
static void reject(const char *what, const char *fmt, ...)
{
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    note("\n  %s: %s", what, why);
    gk__log("CUDA module %s: %s", what, why);
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

/* The machine libgpukern.so itself was built for, from its ELF header in memory. */
static int own_machine(void)
{
    Dl_info info;
    if (dladdr(&library_anchor, &info) == 0 || info.dli_fbase == NULL)
        return -1;
    return ((const ElfW(Ehdr) *)info.dli_fbase)->e_machine;
}

/* Why the file at path cannot be handed to dlopen, or NULL when it can. dlopen maps a file's
 * segments without checking them against its size, and touching a page past the end of a
 * truncated file is SIGBUS; it also opens a FIFO for reading, which blocks until a writer comes.
 * So: a regular file (opened without blocking), an ELF shared object of this process's class,
 * byte order and machine, whose program headers and every segment lie inside the file. */
static const char *vet_file(const char *path, char *why, size_t size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(why, size, "cannot open: %s", strerror(errno));
        return why;
    }
    struct stat st;
    ElfW(Ehdr) eh;
    ElfW(Phdr) ph;
    const char *bad = NULL;
    if (fstat(fd, &st) != 0) {
        snprintf(why, size, "cannot stat: %s", strerror(errno));
        bad = why;
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(why, size, "not a regular file (%s)",
                 S_ISDIR(st.st_mode)    ? "a directory"
                 : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISCHR(st.st_mode)  ? "a character device"
                 : S_ISSOCK(st.st_mode) ? "a socket"
                 : S_ISBLK(st.st_mode)  ? "a block device"
                                        : "a special file");
        bad = why;
    } else if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
               memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        snprintf(why, size, "not an ELF file (%lld bytes)", (long long)st.st_size);
        bad = why;
    } else if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
               eh.e_ident[EI_DATA] !=
                   (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
               eh.e_type != ET_DYN || (int)eh.e_machine != own_machine()) {
        snprintf(why, size,
                 "not a shared object for this machine (ELF class %d, data %d, type %d, "
                 "machine %d; this process: class %d, machine %d)",
                 eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA], eh.e_type, eh.e_machine,
                 sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32, own_machine());
        bad = why;
    } else if (eh.e_phentsize != sizeof ph || eh.e_phoff > (uint64_t)st.st_size ||
               (uint64_t)eh.e_phnum * sizeof ph > (uint64_t)st.st_size - eh.e_phoff) {
        snprintf(why, size, "its %u program headers at offset %llu are not inside its %lld bytes",
                 eh.e_phnum, (unsigned long long)eh.e_phoff, (long long)st.st_size);
        bad = why;
    }
    for (unsigned i = 0; bad == NULL && i < eh.e_phnum; i++) {
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph) {
            snprintf(why, size, "cannot read program header %u: %s", i, strerror(errno));
            bad = why;
        } else if (ph.p_filesz > 0 && (ph.p_offset > (uint64_t)st.st_size ||
                                       ph.p_filesz > (uint64_t)st.st_size - ph.p_offset)) {
            snprintf(why, size,
                     "segment %u (%llu bytes at offset %llu) runs past the end of the file "
                     "(%lld bytes): truncated?",
                     i, (unsigned long long)ph.p_filesz, (unsigned long long)ph.p_offset,
                     (long long)st.st_size);
            bad = why;
        }
    }
    close(fd);
    return bad;
}

/* Why the file at real (a resolved path) is not to be trusted, or NULL when it is: the file
 * and every directory above it must belong to this user (the effective uid) or root, and none
 * may be writable by every user, except a directory with the sticky bit (/tmp), where only an
 * entry's owner may rename or remove it. Otherwise another user could put code of theirs into
 * this process, through the file or by swapping it between these checks and dlopen. Group write
 * is accepted: with umask 002 every file a user makes is group-writable. */
static const char *vet_owner(const char *real, char *why, size_t size)
{
    char path[PATH_MAX], buf[256];
    snprintf(path, sizeof path, "%s", real);
    uid_t me = geteuid();
    for (int file = 1;; file = 0) {
        const char *name = path[0] != '\0' ? path : "/";
        const char *kind = file ? "the file" : "its directory";
        struct stat st;
        if (lstat(name, &st) != 0) {
            snprintf(why, size, "cannot stat %s %s: %s", kind, shown(name, buf, sizeof buf),
                     strerror(errno));
            return why;
        }
        if (st.st_uid != me && st.st_uid != 0) {
            snprintf(why, size, "%s %s is owned by uid %u, neither this user (uid %u) nor root",
                     kind, shown(name, buf, sizeof buf), (unsigned)st.st_uid, (unsigned)me);
            return why;
        }
        if ((st.st_mode & S_IWOTH) != 0 && (file || (st.st_mode & S_ISVTX) == 0)) {
            snprintf(why, size, "%s %s is writable by every user (mode %04o%s)", kind,
                     shown(name, buf, sizeof buf), (unsigned)(st.st_mode & 07777),
                     file ? "" : ", no sticky bit");
            return why;
        }
        if (path[0] == '\0')
            return NULL;
        *strrchr(path, '/') = '\0';
    }
}

/* Tries one path; 1 when the module loaded and handed over a table we can use. A module that
 * loads is kept (never dlclose'd: its CUDA runtime may have registered exit handlers). A path
 * from the environment (from_env) must also pass vet_owner; the others are the library's own
 * directories, which whoever could write there could replace libgpukern.so in as well. */
static int try_module(const char *path, int from_env)
{
    char why[1024], buf[256], real[PATH_MAX];
    const char *what = shown(path, buf, sizeof buf);
    gk__log("trying CUDA module %s", path);
    /* dlopen is given the resolved path that was checked, so no link can be swapped after. */
    if (realpath(path, real) == NULL) {
        reject(what, "cannot resolve: %s", strerror(errno));
        return 0;
    }
    if ((from_env && vet_owner(real, why, sizeof why) != NULL) ||
        vet_file(real, why, sizeof why) != NULL) {
        reject(what, "%s", why);
        return 0;
    }
    void *handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        reject(what, "dlopen failed: %s", dlerror());
        return 0;
    }
    gk_module_entry_fn entry;
    *(void **)&entry = dlsym(handle, GK_MODULE_ENTRY_SYMBOL);
    if (entry == NULL) {
        reject(what, "no symbol %s: %s", GK_MODULE_ENTRY_SYMBOL, dlerror());
        return 0;
    }
    const gk_backend_ops *ops = NULL;
    gk_status st = entry(GK_BACKEND_ABI_VERSION, &services, &ops);
    if (st != GK_OK || ops == NULL) {
        reject(what, "module refused to start: %s", gk_last_error());
        return 0;
    }
    if (ops->abi_version != GK_BACKEND_ABI_VERSION ||
        ops->struct_size < offsetof(gk_backend_ops, mem_read) + sizeof ops->mem_read) {
        reject(what, "backend table version %u size %u, expected version %u", ops->abi_version,
               ops->struct_size, GK_BACKEND_ABI_VERSION);
        return 0;
    }
    int count = 0;
    st = ops->device_count(&count);
    if (st != GK_OK) {
        reject(what, "loaded, but no usable device: %s", gk_last_error());
        return 1;
    }
    if (count < 1) {
        reject(what, "loaded, but it reports no CUDA device");
        return 1;
    }
    gk__log("CUDA module %s: %d device(s)", path, count);
    plugin.ops = ops;
    return 1;
}

/* path = dir + "/" + name, or 0 (with the reason recorded) when that is not shorter than
 * PATH_MAX: such a path cannot be opened, and a cut one would name another file. */
static int join(char *path, const char *dir, const char *name)
{
    if (snprintf(path, PATH_MAX, "%s/%s", dir, name) < PATH_MAX)
        return 1;
    char buf[256], what[512];
    snprintf(what, sizeof what, "%s/%s", shown(dir, buf, sizeof buf), name);
    reject(what, "ignored, longer than PATH_MAX (%d)", PATH_MAX);
    return 0;
}

static void load_once(void)
{
    /* The attempts go into plugin.attempts; this thread's own message stays as it was. */
    static char saved[4096];
    snprintf(saved, sizeof saved, "%s", gk_last_error());
    services.struct_size = sizeof services;
    services.error = gk__error;
    services.log_enabled = gk__log_enabled();
    services.log = gk__log_line;
#ifdef GK_FAULT_INJECTION
    services.fault_next = gk__fault_next;
#endif
    note("CUDA backend unavailable; tried:");

    /* GK_CUDA_PLUGIN is used as it is, never copied into a fixed buffer (a cut copy could name
     * another module). */
    static char paths[3][PATH_MAX];
    const char *candidates[4];
    int n = 0;
    const char *env = gk__env("GK_CUDA_PLUGIN");
    if (env != NULL && env[0] != '\0') {
        char buf[256], what[512];
        snprintf(what, sizeof what, "GK_CUDA_PLUGIN=%s", shown(env, buf, sizeof buf));
        if (env[0] != '/')
            reject(what, "ignored, not an absolute path");
        else if (strlen(env) >= PATH_MAX)
            reject(what, "ignored, longer than PATH_MAX (%d)", PATH_MAX);
        else
            candidates[n++] = env;
    }
    char dir[PATH_MAX];
    if (library_dir(dir, sizeof dir) && strlen(dir) + sizeof "/gpukern" < sizeof dir) {
        strcat(dir, "/gpukern");
        if (join(paths[0], dir, GK_MODULE_NAME))
            candidates[n++] = paths[0];
    }
    /* Each compiled in only where the build asked for it (CMakeLists.txt): packages have no
     * build tree, wheels no fixed install directory. */
#ifdef GK_BUILD_MODULE_DIR
    if (join(paths[1], GK_BUILD_MODULE_DIR, GK_MODULE_NAME))
        candidates[n++] = paths[1];
#endif
#ifdef GK_INSTALL_MODULE_DIR
    if (join(paths[2], GK_INSTALL_MODULE_DIR, GK_MODULE_NAME))
        candidates[n++] = paths[2];
#endif

    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= strcmp(candidates[i], candidates[j]) == 0;
        if (!seen && try_module(candidates[i], candidates[i] == env))
            break;
    }
    gk__error_restore(saved);
}

const gk_backend_ops *gk__cuda_backend(const char *fn, int report)
{
    pthread_once(&plugin.once, load_once);
    if (plugin.ops == NULL && report)
        gk__error(GK_E_BACKEND_UNAVAILABLE, "%s: %s", fn, plugin.attempts);
    return plugin.ops;
}
