/* SPDX-License-Identifier: MIT */
/* mpi_test.c - the MPI tests' shared seed, agreed failures and row layouts. */
#include "mpi_test.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int mpt_rank, mpt_size;
static int local_failures;

int mpt_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpt_size);
    uint64_t seed = mpt_rank == 0 ? gk_test_seed() : 0;
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (mpt_rank != 0) {
        char text[32];
        snprintf(text, sizeof text, "%" PRIu64, seed);
        setenv("GK_TEST_SEED", text, 1);
    }
    if (gk_test_seed() != seed) {
        fprintf(stderr, "rank %d: seed %" PRIu64 " is not rank 0's %" PRIu64 "\n", mpt_rank,
                gk_test_seed(), seed);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return 0;
}

int mpt_run(const char *name, const struct CMUnitTest *tests, size_t count)
{
    int failed = _cmocka_run_group_tests(name, tests, count, gk_test_group_setup, NULL);
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any != 0;
}

void mpt_check(int ok, const char *fmt, ...)
{
    if (ok)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    print_error("rank %d of %d: %s (GK_TEST_SEED=%" PRIu64 ")\n", mpt_rank, mpt_size, text,
                gk_test_seed());
    local_failures++;
}

void mpt_agree(void)
{
    int total = 0;
    MPI_Allreduce(&local_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    local_failures = 0;
    if (total != 0)
        fail_msg("%d check(s) failed over %d ranks (printed above by the ranks that saw them)",
                 total, mpt_size);
}

void mpt_share(mpt_layout l, size_t total, size_t *first, size_t *count)
{
    size_t r = (size_t)mpt_rank, p = (size_t)mpt_size;
    if (l == MPT_ALL_LAST) {
        *first = 0;
        *count = r + 1 == p ? total : 0;
        return;
    }
    /* Weights: even 1 each; uneven rank 0 weighs 2 and rank 1 nothing (with one rank, 1). */
    size_t w_total = 0, w_before = 0, w_mine = 0;
    for (size_t i = 0; i < p; i++) {
        size_t w = l == MPT_EVEN || p == 1 ? 1 : i == 0 ? 2 : i == 1 ? 0 : 1;
        if (i < r)
            w_before += w;
        if (i == r)
            w_mine = w;
        w_total += w;
    }
    *first = total * w_before / w_total;
    *count = total * (w_before + w_mine) / w_total - *first;
}

const char *mpt_layout_name(mpt_layout l)
{
    return l == MPT_EVEN ? "even" : l == MPT_UNEVEN ? "uneven" : "all on the last rank";
}
