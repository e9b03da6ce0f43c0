/* SPDX-License-Identifier: MIT */
/* core.h - the handles (contexts, storages, buffers) and the core's private functions. */
#ifndef GK_CORE_H
#define GK_CORE_H

#include <stdatomic.h>
#include <stddef.h>

#include "backend.h"
#include "error.h"
#include "gpukern.h"
#include "placement.h"

/* Magic numbers catch foreign pointers, and destroyed handles while they are quarantined
 * (quarantine.c): a destroy poisons the magic before retiring the handle. */
#define GK_CONTEXT_MAGIC 0x474b4358u      /* "GKCX" */
#define GK_BUFFER_MAGIC 0x474b4246u       /* "GKBF" */
#define GK_DEAD_CONTEXT_MAGIC 0x6764636bu /* "kcdg": a destroyed context */
#define GK_DEAD_BUFFER_MAGIC 0x6662626bu  /* "kbbf": a destroyed buffer */

/* The largest gk_context_options.cpu_threads accepted, as gpukern.h documents. */
#define GK_CPU_THREADS_MAX 1024

/* One instance of a backend: its table and its per-context state. */
typedef struct gk_engine {
    const gk_backend_ops *ops;
    void *state;
} gk_engine;

struct gk_context {
    uint32_t magic;
    /* One reference for the caller's handle, one per live storage. */
    atomic_uint refs;
    gk_engine primary; /* where buffers live and ops on them run */
    /* AUTO on a GPU host also keeps the CPU backend, for calls whose operands are all host
     * buffers; model says where such a call finishes first. */
    int hybrid;
    gk_engine secondary;
    gk_cost_model model;
    /* What the model's placements measured (86 KB): hybrid contexts only, NULL otherwise. */
    gk_placement_history *history;
    /* GK_LOG as it was when the context was created: each timed AUTO call is printed. Read
     * once, since a lookup walks the environment and placed calls can take half a microsecond. */
    int log;
    gk_backend last_backend;
    /* A hybrid context's work on host data is complete when its call returns; only work on
     * device memory can be pending, so gk_context_synchronize skips the device while this is 0
     * (it costs tens of microseconds even on an idle stream). */
    int device_queued;
    uint32_t flags;
    /* 1 while the caller's CUDA stream is set (gk_context_set_stream): synchronize waits for
     * it even when the context queued nothing, since the caller's own work is on it. */
    int caller_stream;
};

/* Memory shared by a buffer and its views; freed with the last of them. */
typedef struct gk_storage {
    atomic_uint refs;
    gk_context *ctx;
    void *ptr;    /* backend memory, or the caller's memory when host or borrowed is set */
    int host;     /* 1: caller memory from gk_buffer_wrap_host, never freed by us */
    int borrowed; /* 1: caller device memory from gk_buffer_wrap_device, never freed by us */
    size_t bytes;
} gk_storage;

struct gk_buffer {
    uint32_t magic;
    gk_storage *storage;
    gk_dtype dtype;
    size_t offset; /* in elements, from the start of the storage */
    size_t count;
};

/* A backend slot, or NULL when the table is too short to hold it or leaves it empty. */
#define GK_SLOT(ops, field)                                                                        \
    ((offsetof(gk_backend_ops, field) + sizeof((ops)->field) <= (ops)->struct_size) ? (ops)->field \
                                                                                    : NULL)

/* --- context.c ---------------------------------------------------------------------------- */
void gk__context_retain(gk_context *ctx);
void gk__context_release(gk_context *ctx);

/* --- device.c ----------------------------------------------------------------------------- */
/* The table a context asked for backend `requested` runs on (AUTO: GK_BACKEND, else CUDA when
 * usable, else CPU); *hybrid is set when AUTO chose CUDA and keeps the CPU backend too. */
gk_status gk__resolve_backend(const char *fn, gk_backend requested, const gk_backend_ops **ops,
                              int *hybrid);
/* options->device is an ordinal below gk_device_count of the backend chosen (ignored by AUTO
 * falling back to the CPU). */
gk_status gk__check_device(const char *fn, const gk_backend_ops *ops, gk_backend requested,
                           int32_t device);

/* --- interop.c ---------------------------------------------------------------------------- */
/* Returns a context on the caller's stream to its own (at gk_context_destroy: the caller may
 * destroy its stream then, while buffers still keep the context's state). */
void gk__context_leave_stream(gk_context *ctx);

/* --- calibrate.c -------------------------------------------------------------------------- */
/* Loads a hybrid context's cost model: GK_CALIBRATION=off gives the defaults, an absolute path
 * names the cache file, else the per-device, per-host file in the XDG cache directory; a cache
 * file that cannot be used leaves the defaults (GK_LOG=1 says why). Any other GK_CALIBRATION
 * is GK_E_INVALID_ARGUMENT. */
gk_status gk__load_cost_model(const char *fn, gk_context *ctx);

/* --- clock.c ------------------------------------------------------------------------------ */
/* Seconds on CLOCK_MONOTONIC: AUTO times its placed calls and its calibration with it. */
double gk__now(void);

/* --- plugin.c ----------------------------------------------------------------------------- */
/* The CUDA backend's table if its module loaded and reports a device, else NULL; then, when
 * report is set, the reasons are recorded as this thread's last error, prefixed with fn (AUTO
 * falling back to the CPU is no failure, so it passes 0). */
const gk_backend_ops *gk__cuda_backend(const char *fn, int report);

/* --- quarantine.c ------------------------------------------------------------------------- */
/* How many destroyed handles of each kind stay allocated (gpukern.h promises the numbers). */
#define GK_QUARANTINE_CONTEXTS 16
#define GK_QUARANTINE_BUFFERS 256
typedef enum gk_handle_kind { GK_HANDLE_CONTEXT, GK_HANDLE_BUFFER } gk_handle_kind;
/* Takes the place of gk__free for a handle the caller has seen: it stays allocated, its
 * poisoned magic readable, until enough later handles of its kind have been retired. */
void gk__retire(gk_handle_kind kind, void *handle);

/* --- buffer.c ----------------------------------------------------------------------------- */
/* Inline, as every call asks them of each operand: out of line they were some 60 of a tiny
 * call's thousand instructions (callgrind, add 100 on a CPU context). */
static inline size_t gk__dtype_size(gk_dtype t)
{
    return t == GK_FLOAT32 ? 4 : 8; /* float64 and int64 */
}
/* Address of the buffer's element 0 in its storage's memory (NULL for empty storage). */
static inline void *gk__buffer_data(const gk_buffer *b)
{
    if (b->storage->ptr == NULL)
        return NULL;
    return (char *)b->storage->ptr + b->offset * gk__dtype_size(b->dtype);
}
#endif /* GK_CORE_H */
