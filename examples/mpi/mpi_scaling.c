/* SPDX-License-Identifier: MIT */
/* mpi_scaling.c - times gk_mpi_rbf_matvec on n points split evenly over the ranks (strong
 * scaling), and prints one JSON line; --save writes the gathered product for comparison.
 *
 *   mpiexec -n 4 mpi_scaling --n 200000 --d 3 --backend cpu --threads 4 --reps 3
 *
 * The points and weights come from the counter-based generator (element i depends only on the
 * seed and i), so every rank count multiplies the same matrix by the same vector. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_common.h"

static int rank_, size_;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    size_t n = 200000, d = 3;
    int reps = 3, warmup = 1, threads = 0;
    gk_dtype t = GK_FLOAT32;
    gk_backend be = GK_BACKEND_CPU;
    const char *save = NULL;
    double gamma = 1.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--n"))
            n = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--d"))
            d = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--gamma"))
            gamma = atof(v);
        else if (!strcmp(a, "--reps"))
            reps = atoi(v);
        else if (!strcmp(a, "--warmup"))
            warmup = atoi(v);
        else if (!strcmp(a, "--threads"))
            threads = atoi(v);
        else if (!strcmp(a, "--dtype"))
            t = strcmp(v, "f64") == 0 ? GK_FLOAT64 : GK_FLOAT32;
        else if (!strcmp(a, "--backend"))
            be = strcmp(v, "cuda") == 0   ? GK_BACKEND_CUDA
                 : strcmp(v, "auto") == 0 ? GK_BACKEND_AUTO
                                          : GK_BACKEND_CPU;
        else if (!strcmp(a, "--save"))
            save = v;
        else {
            if (rank_ == 0)
                fprintf(stderr, "usage: mpi_scaling [--n N] [--d D] [--gamma G] [--dtype f32|f64] "
                                "[--backend cpu|cuda|auto] [--threads T] [--reps R] [--warmup W] "
                                "[--save FILE]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;

    gk_context *ctx = mpx_open_context(be, threads);

    size_t first = n * (size_t)rank_ / (size_t)size_;
    size_t count = n * (size_t)(rank_ + 1) / (size_t)size_ - first;
    gk_buffer *x = NULL, *w = NULL, *out = NULL;
    MPX_CHECK(gk_buffer_create(ctx, t, count * d, &x));
    MPX_CHECK(gk_buffer_create(ctx, t, count, &w));
    MPX_CHECK(gk_buffer_create(ctx, t, count, &out));
    MPX_CHECK(gk_rng_uniform(ctx, 7, first * d, x));
    MPX_CHECK(gk_rng_uniform(ctx, 8, first, w));
    MPX_CHECK(gk_context_synchronize(ctx));

    double *times = malloc((size_t)reps * sizeof *times);
    for (int r = -warmup; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = mpx_now();
        MPX_CHECK(gk_mpi_rbf_matvec(ctx, MPI_COMM_WORLD, count, count, d, gamma, x, x, w, out));
        double mine = mpx_now() - t0, slowest = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0)
            times[r] = slowest;
    }
    qsort(times, (size_t)reps, sizeof *times, cmp);

    /* The gathered product, in float64, on rank 0. */
    double *mine = malloc((count + 1) * sizeof *mine),
           *all = rank_ == 0 ? malloc((n + 1) * sizeof *all) : NULL;
    void *raw = malloc((count + 1) * (t == GK_FLOAT32 ? 4 : 8));
    MPX_CHECK(gk_buffer_read(out, 0, count, raw));
    double sum = 0;
    for (size_t i = 0; i < count; i++) {
        mine[i] = t == GK_FLOAT32 ? ((float *)raw)[i] : ((double *)raw)[i];
        sum += mine[i];
    }
    int *counts = malloc((size_t)size_ * sizeof *counts),
        *displs = malloc((size_t)size_ * sizeof *displs);
    for (int r = 0; r < size_; r++) {
        displs[r] = (int)(n * (size_t)r / (size_t)size_);
        counts[r] = (int)(n * (size_t)(r + 1) / (size_t)size_) - displs[r];
    }
    MPI_Gatherv(mine, (int)count, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
        if (save != NULL) {
            FILE *f = fopen(save, "wb");
            if (f == NULL || fwrite(all, sizeof *all, n, f) != n || fclose(f) != 0) {
                fprintf(stderr, "mpi_scaling: cannot write %s\n", save);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        printf("{\"ranks\": %d, \"backend\": \"%s\", \"device\": \"%s\", \"threads\": %d, "
               "\"n\": %zu, \"d\": %zu, \"dtype\": \"%s\", \"reps\": %d, \"seconds_median\": %.6g, "
               "\"seconds_min\": %.6g, \"seconds_max\": %.6g, \"cuda_aware\": %d, "
               "\"sum_out\": %.17g}\n",
               size_, gk_context_backend(ctx) == GK_BACKEND_CUDA ? "cuda" : "cpu",
               gk_context_device_name(ctx), threads, n, d, t == GK_FLOAT32 ? "f32" : "f64", reps,
               reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]), times[0],
               times[reps - 1], gk_mpi_cuda_aware(), total);
    }
    free(times);
    free(mine);
    free(all);
    free(raw);
    free(counts);
    free(displs);
    gk_buffer_destroy(x);
    gk_buffer_destroy(w);
    gk_buffer_destroy(out);
    gk_context_destroy(ctx);
    MPI_Finalize();
    return 0;
}
