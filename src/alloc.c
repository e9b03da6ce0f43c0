/* SPDX-License-Identifier: MIT */
/* alloc.c - the allocation-failure injector of GK_FAULT_INJECTION test builds. */
#include "alloc.h"

#ifdef GK_FAULT_INJECTION

#include <stdatomic.h>

/* Atomic, since contexts may allocate on several threads at once; a sweep itself is serial. */
static atomic_ulong fault_at;
static atomic_ulong fault_count;
static atomic_int fault_fired;
static atomic_long fault_live;

int gk__fault_next(void)
{
    unsigned long n = atomic_fetch_add_explicit(&fault_count, 1, memory_order_relaxed) + 1;
    if (n != atomic_load_explicit(&fault_at, memory_order_relaxed))
        return 0;
    atomic_store(&fault_fired, 1);
    return 1;
}

void gk__fault_track(long delta)
{
    atomic_fetch_add_explicit(&fault_live, delta, memory_order_relaxed);
}

void gk__fault_arm(unsigned long n)
{
    atomic_store(&fault_at, n);
    atomic_store(&fault_count, 0);
    atomic_store(&fault_fired, 0);
}

unsigned long gk__fault_count(void)
{
    return atomic_load(&fault_count);
}

int gk__fault_fired(void)
{
    return atomic_load(&fault_fired);
}

long gk__fault_live(void)
{
    return atomic_load(&fault_live);
}

#else

/* ISO C wants at least one declaration in a translation unit. */
typedef int gk__alloc_unused;

#endif
