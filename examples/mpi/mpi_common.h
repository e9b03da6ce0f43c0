/* SPDX-License-Identifier: MIT */
/* mpi_common.h - what the MPI examples share: checked calls that stop every rank, a clock, and
 * one context per rank. */
#ifndef GK_EXAMPLES_MPI_COMMON_H
#define GK_EXAMPLES_MPI_COMMON_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <gpukern_mpi.h>

/* A collective call failed on every rank (gk_mpi_ errors are agreed on) or a local one failed:
 * say what, and stop every rank. */
#define MPX_CHECK(call) mpx_check((call), #call, __FILE__, __LINE__)
static inline void mpx_check(gk_status st, const char *what, const char *file, int line)
{
    if (st == GK_OK)
        return;
    const char *base = strrchr(file, '/');
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *detail = strncmp(what, "gk_mpi_", 7) == 0 ? gk_mpi_last_error() : gk_last_error();
    fprintf(stderr, "rank %d: %s:%d: %s failed: %s\n  %s\n", rank, base ? base + 1 : file, line,
            what, gk_status_string(st), detail);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static inline double mpx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* This rank's context on backend with cpu_threads threads (0: the library's default). One GPU
 * per rank: ranks on one node take its devices in turn, ranks beyond the GPU count share them. */
static inline gk_context *mpx_open_context(gk_backend backend, int cpu_threads)
{
    int rank = 0, node_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_free(&node);
    gk_context_options opt;
    gk_context_options_init(&opt);
    opt.backend = backend;
    opt.cpu_threads = cpu_threads;
    int devices = backend == GK_BACKEND_CPU ? 1 : gk_device_count(backend);
    opt.device = devices > 0 ? node_rank % devices : 0;
    gk_context *ctx = NULL;
    MPX_CHECK(gk_context_create_ex(&opt, &ctx));
    return ctx;
}

#endif /* GK_EXAMPLES_MPI_COMMON_H */
