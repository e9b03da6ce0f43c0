/* SPDX-License-Identifier: MIT */
/* mpi_comm.c - the library's private communicator per user communicator, CUDA awareness, and
 * point-to-point messages of any size. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* After mpi.h, which it builds on: Open MPI's extensions, MPIX_Query_cuda_support among them. */
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

/* The attribute key under which a user communicator caches our duplicate of it. */
static int keyval = MPI_KEYVAL_INVALID;
static int keyval_error = MPI_SUCCESS;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;

/* Frees our duplicate when the user frees (or MPI finalizes) the communicator it was made of. */
static int delete_private(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)extra;
    MPI_Comm *priv = value;
    int err = MPI_Comm_free(priv);
    free(priv);
    return err;
}

static void create_keyval(void)
{
    keyval_error = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_private, &keyval, NULL);
}

gk_status gk_mpi__private_comm(const char *fn, MPI_Comm comm, MPI_Comm *out)
{
    pthread_once(&keyval_once, create_keyval);
    if (keyval_error != MPI_SUCCESS)
        return gk_mpi__fail_mpi(fn, "MPI_Comm_create_keyval", keyval_error);
    void *value = NULL;
    int found = 0;
    int err = MPI_Comm_get_attr(comm, keyval, &value, &found);
    if (err != MPI_SUCCESS)
        return gk_mpi__fail_mpi(fn, "MPI_Comm_get_attr", err);
    if (found) {
        *out = *(MPI_Comm *)value;
        return GK_OK;
    }
    /* Every rank reaches this point on its first call with comm, so the collective dup is
     * entered by all; the ranks then agree on whether each could cache it, so that a rank
     * short of memory fails with the others instead of leaving them waiting. */
    MPI_Comm dup = MPI_COMM_NULL;
    err = MPI_Comm_dup(comm, &dup);
    if (err != MPI_SUCCESS)
        return gk_mpi__fail_mpi(fn, "MPI_Comm_dup", err);
    if ((err = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)) != MPI_SUCCESS) {
        MPI_Comm_free(&dup);
        return gk_mpi__fail_mpi(fn, "MPI_Comm_set_errhandler", err);
    }
    MPI_Comm *priv = malloc(sizeof *priv);
    gk_status local = GK_OK;
    int cached = 0;
    if (priv == NULL) {
        local = gk_mpi__fail(GK_E_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", fn, sizeof *priv);
    } else {
        *priv = dup;
        err = MPI_Comm_set_attr(comm, keyval, priv);
        if (err == MPI_SUCCESS)
            cached = 1;
        else
            local = gk_mpi__fail_mpi(fn, "MPI_Comm_set_attr", err);
    }
    gk_status st = gk_mpi__agree(fn, dup, local);
    if (st != GK_OK) {
        if (cached) {
            MPI_Comm_delete_attr(comm, keyval); /* frees dup and priv */
        } else {
            MPI_Comm_free(&dup);
            free(priv);
        }
        return st;
    }
    *out = dup;
    return GK_OK;
}

gk_status gk_mpi__cuda_aware_switch(const char *fn, int *staged)
{
    const char *env = getenv("GK_MPI_CUDA_AWARE");
    *staged = 0;
    if (env == NULL || env[0] == '\0' || strcmp(env, "1") == 0)
        return GK_OK;
    if (strcmp(env, "0") == 0) {
        *staged = 1;
        return GK_OK;
    }
    /* Quoted in printable characters: the value may hold any byte. */
    char shown[64 * 4 + 4];
    size_t n = 0, i = 0;
    for (; env[i] != '\0' && i < 64; i++) {
        unsigned char c = (unsigned char)env[i];
        if (c < 0x20 || c > 0x7e)
            n += (size_t)snprintf(shown + n, sizeof shown - n, "\\x%02x", c);
        else
            shown[n++] = (char)c;
    }
    shown[n] = '\0';
    return gk_mpi__fail(GK_E_INVALID_ARGUMENT,
                        "%s: GK_MPI_CUDA_AWARE=%s%s is not one of: 0, 1 (or unset)", fn, shown,
                        env[i] != '\0' ? "..." : "");
}

int gk_mpi__mpi_cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

GK_MPI_API int gk_mpi_cuda_aware(void)
{
    int staged = 0;
    if (gk_mpi__cuda_aware_switch("gk_mpi_cuda_aware", &staged) != GK_OK || staged)
        return 0;
    return gk_mpi__mpi_cuda_aware();
}

/* Elements per block when a message is longer than an int can count. */
#define GK_MPI_BLOCK ((size_t)1 << 24)

int gk_mpi__post(int send, void *buf, size_t count, size_t esize, MPI_Datatype t, int peer, int tag,
                 MPI_Comm comm, MPI_Request *req, int *nreq)
{
    size_t blocks = 0, rest = count;
    if (count > INT_MAX) {
        blocks = count / GK_MPI_BLOCK;
        rest = count % GK_MPI_BLOCK;
    }
    int err = MPI_SUCCESS;
    if (blocks > 0) {
        MPI_Datatype block;
        if ((err = MPI_Type_contiguous((int)GK_MPI_BLOCK, t, &block)) != MPI_SUCCESS)
            return err;
        if ((err = MPI_Type_commit(&block)) == MPI_SUCCESS) {
            err = send ? MPI_Isend(buf, (int)blocks, block, peer, tag, comm, &req[*nreq])
                       : MPI_Irecv(buf, (int)blocks, block, peer, tag, comm, &req[*nreq]);
            if (err == MPI_SUCCESS)
                (*nreq)++;
        }
        /* A pending request keeps what it needs of a freed datatype. */
        MPI_Type_free(&block);
        if (err != MPI_SUCCESS)
            return err;
    }
    char *tail = (char *)buf + blocks * GK_MPI_BLOCK * esize;
    err = send ? MPI_Isend(tail, (int)rest, t, peer, tag + 1, comm, &req[*nreq])
               : MPI_Irecv(tail, (int)rest, t, peer, tag + 1, comm, &req[*nreq]);
    if (err == MPI_SUCCESS)
        (*nreq)++;
    return err;
}
