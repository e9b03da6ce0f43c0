/* SPDX-License-Identifier: MIT */
/* mpi_internal.h - what the files of libgpukern_mpi share: errors, agreement, transport. */
#ifndef GK_MPI_INTERNAL_H
#define GK_MPI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gpukern_mpi.h"

/* Longest message kept by gk_mpi_last_error(), terminator included. */
#define GK_MPI_MESSAGE_MAX 1024

#if defined(__GNUC__)
#define GK_MPI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GK_MPI_PRINTF(f, a)
#endif

/* Records this thread's message (printf format) and returns s. */
gk_status gk_mpi__fail(gk_status s, const char *fmt, ...) GK_MPI_PRINTF(2, 3);
/* Records an MPI failure: "<fn>: <call> failed: <MPI's error string>"; returns GK_E_INTERNAL. */
gk_status gk_mpi__fail_mpi(const char *fn, const char *call, int mpi_err);
/* This thread's message buffer (GK_MPI_MESSAGE_MAX bytes). */
char *gk_mpi__message(void);

/* A private duplicate of comm (cached on it as an attribute, freed with it) that returns MPI
 * errors instead of aborting and keeps our messages apart from the caller's. Collective on the
 * first call for a comm. */
gk_status gk_mpi__private_comm(const char *fn, MPI_Comm comm, MPI_Comm *out);

/* GK_MPI_CUDA_AWARE, the MPI library's one environment switch (libgpukern's parser is private to
 * it): unset, empty or "1" leave *staged 0 (device memory goes to MPI when MPI reports CUDA
 * support), "0" sets it (always through host memory); any other value is GK_E_INVALID_ARGUMENT,
 * its message recorded. */
gk_status gk_mpi__cuda_aware_switch(const char *fn, int *staged);
/* 1 when the MPI library reports that it can send and receive CUDA device memory. */
int gk_mpi__mpi_cuda_aware(void);

/* What every rank must agree on before data moves, reduced in one MPI_Allreduce. */
typedef struct gk_mpi_params {
    size_t d;
    gk_dtype dtype;
    double gamma;
    size_t n_local;
} gk_mpi_params;

/* Collective: the first failing rank's status and message on every rank, else GK_OK.
 * local is this rank's status, with its message already recorded when not GK_OK. */
gk_status gk_mpi__agree(const char *fn, MPI_Comm comm, gk_status local);
/* Collective: agree() on local, then, when every rank is fine, that d, dtype and gamma are
 * the same everywhere; *n_max gets the largest n_local of any rank. */
gk_status gk_mpi__agree_params(const char *fn, MPI_Comm comm, gk_status local,
                               const gk_mpi_params *p, size_t *n_max);

/* Posts a nonblocking send (send = 1) or receive of count elements of type t (esize bytes
 * each), split so MPI's int counts can express it: at most two requests, stored from
 * req[*nreq] on. Returns MPI's error code. */
int gk_mpi__post(int send, void *buf, size_t count, size_t esize, MPI_Datatype t, int peer, int tag,
                 MPI_Comm comm, MPI_Request *req, int *nreq);

#endif /* GK_MPI_INTERNAL_H */
