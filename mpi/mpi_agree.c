/* SPDX-License-Identifier: MIT */
/* mpi_agree.c - collective errors: the ranks agree on one status and one message before any
 * exchange that a failed rank would leave waiting. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mpi_internal.h"

/* The failing rank's status and message, broadcast so every rank returns both. */
typedef struct failure {
    int32_t status;
    char message[GK_MPI_MESSAGE_MAX];
} failure;

/* root failed with status local (meaningful on root only): every rank records
 * "<fn>: rank <root> of <size>: <root's message less its own "<fn>: ">" and returns it. */
static gk_status broadcast_failure(const char *fn, MPI_Comm comm, int root, int rank, int size,
                                   gk_status local)
{
    failure f;
    memset(&f, 0, sizeof f);
    if (rank == root) {
        const char *text = gk_mpi__message();
        size_t len = strlen(fn);
        if (strncmp(text, fn, len) == 0 && strncmp(text + len, ": ", 2) == 0)
            text += len + 2;
        f.status = (int32_t)local;
        snprintf(f.message, sizeof f.message, "%s", text);
    }
    int err = MPI_Bcast(&f, (int)sizeof f, MPI_BYTE, root, comm);
    if (err != MPI_SUCCESS)
        return gk_mpi__fail_mpi(fn, "MPI_Bcast", err);
    f.message[sizeof f.message - 1] = '\0';
    return gk_mpi__fail((gk_status)f.status, "%s: rank %d of %d: %s", fn, root, size, f.message);
}

gk_status gk_mpi__agree(const char *fn, MPI_Comm comm, gk_status local)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine = local != GK_OK ? rank : size, first = size;
    int err = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (err != MPI_SUCCESS)
        return gk_mpi__fail_mpi(fn, "MPI_Allreduce", err);
    if (first == size)
        return GK_OK;
    return broadcast_failure(fn, comm, first, rank, size, local);
}

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static const char *dtype_name(uint64_t t)
{
    return t == GK_FLOAT32 ? "float32" : t == GK_FLOAT64 ? "float64" : "unknown";
}

/* Slots of the one reduction (MPI_MIN throughout: a maximum travels as its complement). */
enum { FIRST, D_MIN, D_MAX, T_MIN, T_MAX, G_MIN, G_MAX, N_MAX, SLOTS };

gk_status gk_mpi__agree_params(const char *fn, MPI_Comm comm, gk_status local,
                               const gk_mpi_params *p, size_t *n_max)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* Compared by value through their bits: -0.0 is 0.0, and every NaN the same NaN (NaN
     * propagates, as in gk_rbf_matvec, whatever its payload on each rank). */
    double gamma = p->gamma == 0.0 ? 0.0 : isnan(p->gamma) ? NAN : p->gamma;
    uint64_t gamma_bits;
    memcpy(&gamma_bits, &gamma, sizeof gamma_bits);
    uint64_t v[SLOTS], r[SLOTS];
    v[FIRST] = local != GK_OK ? (uint64_t)rank : (uint64_t)size;
    v[D_MIN] = p->d;
    v[D_MAX] = ~(uint64_t)p->d;
    v[T_MIN] = (uint64_t)p->dtype;
    v[T_MAX] = ~(uint64_t)p->dtype;
    v[G_MIN] = gamma_bits;
    v[G_MAX] = ~gamma_bits;
    v[N_MAX] = ~(uint64_t)p->n_local;
    int err = MPI_Allreduce(v, r, SLOTS, MPI_UINT64_T, MPI_MIN, comm);
    if (err != MPI_SUCCESS)
        return gk_mpi__fail_mpi(fn, "MPI_Allreduce", err);
    if (r[FIRST] != (uint64_t)size)
        return broadcast_failure(fn, comm, (int)r[FIRST], rank, size, local);
    /* Every rank sees the same reduction, so every rank takes the same branch below. */
    if (r[D_MIN] != ~r[D_MAX])
        return gk_mpi__fail(GK_E_INVALID_ARGUMENT,
                            "%s: d is not the same on every rank (it ranges from %llu to %llu)", fn,
                            (unsigned long long)r[D_MIN], (unsigned long long)~r[D_MAX]);
    if (r[T_MIN] != ~r[T_MAX])
        return gk_mpi__fail(GK_E_DTYPE,
                            "%s: the dtype is not the same on every rank (%s on some, %s on "
                            "others)",
                            fn, dtype_name(r[T_MIN]), dtype_name(~r[T_MAX]));
    if (r[G_MIN] != ~r[G_MAX])
        return gk_mpi__fail(GK_E_INVALID_ARGUMENT,
                            "%s: gamma is not the same on every rank (%.17g and %.17g differ)", fn,
                            from_bits(r[G_MIN]), from_bits(~r[G_MAX]));
    *n_max = (size_t)~r[N_MAX];
    return GK_OK;
}
