/* SPDX-License-Identifier: MIT */
/* report.h - gkbench's results and their output as a text table, CSV and JSON. */
#ifndef GKBENCH_REPORT_H
#define GKBENCH_REPORT_H

#include <stdio.h>

#include "cases.h"

typedef enum bench_status {
    RESULT_OK,
    RESULT_SKIPPED,     /* does not fit in memory, or a limit of this machine */
    RESULT_UNSUPPORTED, /* the backend does not implement the op (GK_E_UNSUPPORTED) */
    RESULT_ERROR        /* a call failed: a bug to look at; gkbench exits nonzero */
} bench_status;

typedef struct bench_result {
    bench_case c;
    gk_backend backend;
    bench_status status;
    char note[256];
    double median_s, min_s; /* seconds per call */
    int calls, reps, sets;  /* calls per timed repetition, repetitions, rotating operand sets */
} bench_result;

/* What the JSON says about the run as a whole. */
typedef struct bench_meta {
    const char *version, *date, *host;
    const char *loadavg;   /* /proc/loadavg's 1, 5, 15 minute figures: how busy the host was */
    const char *device[3]; /* by gk_backend; NULL when the backend was not used */
    int quick, tf32, cpu_threads;
    double min_rep_s;
} bench_meta;

const char *bench_status_name(bench_status s);
void report_table_header(FILE *f);
void report_table_row(FILE *f, const bench_result *r);
void report_csv(FILE *f, const bench_result *r, size_t n);
void report_json(FILE *f, const bench_meta *meta, const bench_result *r, size_t n);

#endif /* GKBENCH_REPORT_H */
