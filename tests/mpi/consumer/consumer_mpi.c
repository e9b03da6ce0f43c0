/* SPDX-License-Identifier: MIT */
/* consumer_mpi.c - a program built against an installed libgpukern_mpi: one collective product
 * whose exact value is known. */
#include <gpukern_mpi.h>
#include <math.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gk_context *ctx = NULL;
    gk_buffer *x = NULL, *w = NULL, *out = NULL;
    /* Every rank holds one point, the same one, with weight 1: out = size on every rank. */
    double point[2] = {0.5, -1.0}, one = 1.0, got = 0.0;
    gk_status st = gk_context_create(GK_BACKEND_CPU, &ctx);
    if (st == GK_OK)
        st = gk_buffer_wrap_host(ctx, GK_FLOAT64, 2, point, &x);
    if (st == GK_OK)
        st = gk_buffer_wrap_host(ctx, GK_FLOAT64, 1, &one, &w);
    if (st == GK_OK)
        st = gk_buffer_wrap_host(ctx, GK_FLOAT64, 1, &got, &out);
    if (st != GK_OK) {
        fprintf(stderr, "consumer_mpi: set-up failed: %s: %s\n", gk_status_string(st),
                gk_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    st = gk_mpi_rbf_matvec(ctx, MPI_COMM_WORLD, 1, 1, 2, 1.0, x, x, w, out);
    int ok = st == GK_OK && fabs(got - size) <= 1e-12 * size;
    if (!ok)
        fprintf(stderr, "rank %d: gk_mpi_rbf_matvec: %s (%s), out = %.17g, expected %d\n", rank,
                gk_status_string(st), gk_mpi_last_error(), got, size);
    else if (rank == 0)
        printf("consumer_mpi OK: libgpukern %s, %d rank(s)\n", gk_version_string(), size);
    gk_buffer_destroy(x);
    gk_buffer_destroy(w);
    gk_buffer_destroy(out);
    gk_context_destroy(ctx);
    MPI_Finalize();
    return ok ? 0 : 1;
}
