/* SPDX-License-Identifier: MIT */
/* quarantine.c - destroyed handles stay allocated for a while, so a stale one is still detected. */
#include <pthread.h>
#include <stdlib.h>

#include "alloc.h"
#include "core.h"

/* A handle passed again after its destroy (a second destroy, a call on it) can only be caught by
 * its poisoned magic while its memory is still ours: malloc gives a freed block to the next
 * allocation of its size at once, so the stale pointer would name the next context or buffer
 * created, and a second destroy would destroy that one. The latest retired handles of each kind
 * are therefore kept, and freed only when GK_QUARANTINE_* later ones have pushed them out.
 * A context handle is some 400 bytes (a hybrid one frees its placement history when it goes),
 * a buffer handle 40 bytes. */
typedef struct quarantine {
    void **slot;
    size_t size, next;
} quarantine;

static void *context_slots[GK_QUARANTINE_CONTEXTS];
static void *buffer_slots[GK_QUARANTINE_BUFFERS];
static quarantine queues[] = {{context_slots, GK_QUARANTINE_CONTEXTS, 0},
                              {buffer_slots, GK_QUARANTINE_BUFFERS, 0}};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void gk__retire(gk_handle_kind kind, void *handle)
{
    /* Released as far as the library's accounting goes (the fault sweep's leak count): the
     * queue only delays the free. */
    gk__fault_track(-1);
    quarantine *q = &queues[kind];
    pthread_mutex_lock(&lock);
    void *oldest = q->slot[q->next];
    q->slot[q->next] = handle;
    q->next = (q->next + 1) % q->size;
    pthread_mutex_unlock(&lock);
    free(oldest);
}
