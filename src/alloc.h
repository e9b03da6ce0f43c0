/* SPDX-License-Identifier: MIT */
/* alloc.h - every host allocation of the core and the CPU backend, and the failure injector. */
#ifndef GK_ALLOC_H
#define GK_ALLOC_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/* Test builds (-DGK_FAULT_INJECTION=ON) count allocation points so that a sweep can make the
 * Nth one fail, SQLite-style, and check each failure path. The hooks are hidden symbols: only a
 * test that links the core's objects itself (tests/fault/) can reach them, so the library's
 * exported ABI is the same in every build. Without the option the wrappers are plain libc calls
 * and cost nothing. */
#ifdef GK_FAULT_INJECTION

/* Counts one allocation point; 1 when it is the one gk__fault_arm chose, which must fail. */
int gk__fault_next(void);
/* Records a successful allocation or a release of one, for gk__fault_live. */
void gk__fault_track(long delta);

/* Test hooks. The nth allocation point from now fails, once (0 disarms); the count restarts. */
void gk__fault_arm(unsigned long n);
/* Allocation points counted since the last gk__fault_arm. */
unsigned long gk__fault_count(void);
/* 1 once the armed point has failed. */
int gk__fault_fired(void);
/* Host allocations of the core and CPU backend not yet released. */
long gk__fault_live(void);

#else

static inline int gk__fault_next(void)
{
    return 0;
}

static inline void gk__fault_track(long delta)
{
    (void)delta;
}

#endif

static inline void *gk__malloc(size_t size)
{
    void *p = gk__fault_next() ? NULL : malloc(size);
    if (p != NULL)
        gk__fault_track(1);
    return p;
}

static inline void *gk__calloc(size_t count, size_t size)
{
    void *p = gk__fault_next() ? NULL : calloc(count, size);
    if (p != NULL)
        gk__fault_track(1);
    return p;
}

/* posix_memalign's contract: 0, or an errno value with *p unchanged. */
static inline int gk__aligned_alloc(void **p, size_t alignment, size_t size)
{
    if (gk__fault_next())
        return ENOMEM;
    int e = posix_memalign(p, alignment, size);
    if (e == 0)
        gk__fault_track(1);
    return e;
}

/* Releases memory from any of the above; NULL is ignored. */
static inline void gk__free(void *p)
{
    if (p != NULL)
        gk__fault_track(-1);
    free(p);
}

#endif /* GK_ALLOC_H */
