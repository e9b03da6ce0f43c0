/* SPDX-License-Identifier: MIT */
/* mpi_test.h - what the MPI tests share: one seed for all ranks, failures agreed on by all. */
#ifndef GK_MPI_TEST_H
#define GK_MPI_TEST_H

#include <mpi.h>

#include "gk_test.h"
#include "gpukern_mpi.h"

extern int mpt_rank, mpt_size;

/* MPI_Init, then one seed for every rank (rank 0's, printed), so that every rank draws the same
 * global data from gk_test's generator. Returns 0. */
int mpt_init(int *argc, char ***argv);
/* Runs the cmocka group, then MPI_Finalize; the exit status is the same on every rank. */
int mpt_run(const char *name, const struct CMUnitTest *tests, size_t count);

/* Records a failure on this rank (printed with the rank and the seed) without leaving the test:
 * an assertion that jumps out on one rank would leave the others waiting in a collective. */
void mpt_check(int ok, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Collective: fails the test on every rank if any rank recorded a failure since the last call. */
void mpt_agree(void);

/* How a global count of rows is split over the ranks. */
typedef enum mpt_layout {
    MPT_EVEN,     /* as even as can be */
    MPT_UNEVEN,   /* rank 1 (the last rank at 2 ranks) gets nothing, rank 0 twice the rest */
    MPT_ALL_LAST, /* everything on the last rank */
} mpt_layout;
/* This rank's first row and row count of `total` under layout l. */
void mpt_share(mpt_layout l, size_t total, size_t *first, size_t *count);
const char *mpt_layout_name(mpt_layout l);

#endif /* GK_MPI_TEST_H */
