/* SPDX-License-Identifier: MIT */
/* gpukern_mpi.h - the whole public API of libgpukern_mpi: libgpukern's kernels over MPI ranks. */
#ifndef GPUKERN_MPI_H
#define GPUKERN_MPI_H

#include <mpi.h>

#include "gpukern.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef GK_MPI_API
#if defined(__GNUC__) && defined(GK_MPI_BUILDING_LIBRARY)
#define GK_MPI_API __attribute__((visibility("default")))
#else
#define GK_MPI_API
#endif
#endif

/* ==========================================================================================
 * Conventions
 *
 * libgpukern_mpi.so.1 is built on libgpukern's public C API alone; link it with -lgpukern_mpi
 * -lgpukern and your MPI (pkg-config gpukern-mpi, or the CMake target gpukern::mpi). One rank
 * per GPU is the intended layout; any number of ranks may share a device or the CPU.
 *
 * Calls taking a communicator are collective: every rank of comm calls them, in the same
 * order, with the same comm, and MPI must be initialized and not yet finalized. Errors are
 * collective too: when the arguments are wrong on any rank, or the ranks disagree on what must
 * be common (d, gamma, the dtype), every rank returns the same status before any data moves,
 * and gk_mpi_last_error() gives every rank the same message, which names the rank that failed.
 * An error during the computation (out of memory, a device fault) is agreed on the same way
 * once the exchange has finished, so no rank waits forever for one that gave up. The only
 * failures that stay on one rank are those that make communication impossible: comm is
 * MPI_COMM_NULL, or MPI is not initialized (GK_E_INVALID_ARGUMENT on that rank). An
 * intercommunicator is refused by every rank on its own, before any communication
 * (GK_E_INVALID_ARGUMENT; MPI_Intercomm_merge gives an intracommunicator over both groups).
 * ======================================================================================== */

/* This thread's last failure of a gk_mpi_ call, in detail; "" if none. It is separate from
 * gk_last_error(): when the failure came from a libgpukern call on some rank, this message
 * quotes that call's gk_last_error() text from the failing rank, on every rank. */
GK_MPI_API const char *gk_mpi_last_error(void);

/* 1 when the MPI library reports that it can send and receive CUDA device memory
 * (MPIX_Query_cuda_support), else 0. gk_mpi_rbf_matvec then exchanges device buffers of CUDA
 * contexts directly; otherwise it stages them through host memory. The environment variable
 * GK_MPI_CUDA_AWARE=0 forces host staging; 1, empty or unset leave the choice to MPI's report.
 * Any other value gives 0 here, with gk_mpi_last_error() saying why, and makes
 * gk_mpi_rbf_matvec fail with GK_E_INVALID_ARGUMENT on every rank. */
GK_MPI_API int gk_mpi_cuda_aware(void);

/* ==========================================================================================
 * Gaussian (RBF) kernel matrix-vector product over ranks
 * ======================================================================================== */

/* Collective over comm. Rank r holds m_r rows of x and n_r rows of y and w (any m_r, n_r, zero
 * allowed); out_local[i] = sum over all ranks' rows j of exp(-gamma*|x_i - y_j|^2) w_j.
 *
 * x_local holds m_local x d row-major, y_local n_local x d, w_local n_local, out_local m_local,
 * all of one dtype and in ctx; out_local must not overlap the inputs. d, gamma and the dtype
 * must be the same on every rank (gamma by value: 0.0 and -0.0 are the same, as are NaNs);
 * m_local and n_local may differ. The shards of y and w travel
 * round a ring of the ranks while each rank computes on the shard it holds, so communication
 * overlaps computation; each rank needs memory for two shards of the largest n_r and m_local
 * elements of scratch. Accuracy is gk_rbf_matvec's (abs err <= 1e-5 * sum|w| for float32,
 * 1e-12 for float64), the partial products being added in ring order.
 *
 * Statuses (the same on every rank): GK_E_INVALID_ARGUMENT (NULL ctx or buffer, out_local
 * overlapping an input, d or gamma differing between ranks, comm an intercommunicator, an
 * unknown GK_MPI_CUDA_AWARE value on a rank), GK_E_DTYPE (mixed dtypes on a
 * rank, or the dtype differing between ranks), GK_E_SHAPE (a buffer smaller than its rows need),
 * GK_E_OVERFLOW (m_local*d or n_local*d wraps), GK_E_CONTEXT_MISMATCH, GK_E_OUT_OF_MEMORY,
 * GK_E_DEVICE, GK_E_INTERNAL (MPI itself reported an error; the message gives MPI's text).
 * Waits: out_local is complete on return, on every backend. */
GK_MPI_API gk_status gk_mpi_rbf_matvec(gk_context *ctx, MPI_Comm comm, size_t m_local,
                                       size_t n_local, size_t d, double gamma,
                                       const gk_buffer *x_local, const gk_buffer *y_local,
                                       const gk_buffer *w_local, gk_buffer *out_local);

#ifdef __cplusplus
}
#endif

#endif /* GPUKERN_MPI_H */
