/* SPDX-License-Identifier: MIT */
/* sweep.h - gkbench --sweep: CPU, CUDA and AUTO timed on host data over sizes, and the plot. */
#ifndef GKBENCH_SWEEP_H
#define GKBENCH_SWEEP_H

#include <signal.h>

typedef struct sweep_opts {
    int quick;       /* sizes up to 1e6 elements, so a 2-core machine finishes in under a minute */
    int cpu_threads; /* CPU backend threads of every context; 0 = OpenMP's default */
    int tf32;        /* let float32 gemm use TF32 on CUDA (and so in AUTO's CUDA calls) */
    unsigned long ops;    /* bit mask over bench_op; ops outside the sweep's five are ignored */
    const char *csv;      /* where the CSV goes (never NULL) */
    const char *png;      /* if not NULL, sweep_plot.py draws the CSV into this file */
    const char *reps_csv; /* if not NULL, every timed batch goes here: what ran before it too */
    const char *loadavg;  /* /proc/loadavg at the start: a sweep on a busy host says so */
    const volatile sig_atomic_t *stop; /* set by a signal: stop after the point in progress */
} sweep_opts;

/* Runs the sweep, prints the table, writes the CSV and the plot; returns the exit status. */
int sweep_main(const sweep_opts *o);

#endif /* GKBENCH_SWEEP_H */
