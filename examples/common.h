/* SPDX-License-Identifier: MIT */
/* common.h - helpers shared by the examples and gkbench: checked calls, clock, flags, backends. */
#ifndef GK_EXAMPLES_COMMON_H
#define GK_EXAMPLES_COMMON_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpukern.h>

/* A demonstration has nothing better to do with a failed call than say exactly what failed
 * (gk_last_error names the function, the argument and the values) and stop with a nonzero
 * status, so scripts and CI notice. */
#define GKX_CHECK(call) gkx_check((call), #call, __FILE__, __LINE__)

static inline void gkx_check(gk_status st, const char *what, const char *file, int line)
{
    if (st == GK_OK)
        return;
    fprintf(stderr, "%s:%d: %s failed: %s\n  %s\n", file, line, what, gk_status_string(st),
            gk_last_error());
    exit(EXIT_FAILURE);
}

/* malloc that stops the program when host memory runs out (sizes come from flags). */
static inline void *gkx_malloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(EXIT_FAILURE);
    }
    return p;
}

/* A context on backend be with the caller's CPU thread count (0: OpenMP's) and TF32 choice. */
static inline gk_status gkx_open(gk_backend be, int cpu_threads, int tf32, gk_context **out)
{
    gk_context_options opt;
    gk_context_options_init(&opt);
    opt.backend = be;
    opt.cpu_threads = cpu_threads;
    opt.flags = tf32 ? GK_FLAG_ALLOW_TF32 : 0;
    *out = NULL;
    return gk_context_create_ex(&opt, out);
}

/* Seconds on a clock that never jumps; callers synchronize the context before reading it,
 * because CUDA ops only queue work. */
static inline double gkx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int gkx_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (n > 0); sorts v in place. The median, not the mean, because one
 * preempted repetition on a shared machine must not move the result. */
static inline double gkx_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, gkx_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A time as people read it: "5.4 us", "23.4 ms", "2.23 s". */
static inline const char *gkx_seconds(double s, char *buf, size_t size)
{
    if (s < 1e-3)
        snprintf(buf, size, "%.1f us", s * 1e6);
    else if (s < 1.0)
        snprintf(buf, size, "%.1f ms", s * 1e3);
    else
        snprintf(buf, size, "%.2f s", s);
    return buf;
}

/* The line an example ends with: which of two runs of `work` was faster, and by how much. */
static inline void gkx_summary(const char *work, const char *a, double a_s, const char *b,
                               double b_s)
{
    char fast[32], slow[32];
    if (b == NULL) {
        printf("Summary: %s took %s on %s (one backend here, nothing to compare with)\n", work,
               gkx_seconds(a_s, fast, sizeof fast), a);
        return;
    }
    int a_wins = a_s <= b_s;
    printf("Summary: %s: %s was %.2fx faster than %s (%s against %s)\n", work, a_wins ? a : b,
           a_wins ? b_s / a_s : a_s / b_s, a_wins ? b : a,
           gkx_seconds(a_wins ? a_s : b_s, fast, sizeof fast),
           gkx_seconds(a_wins ? b_s : a_s, slow, sizeof slow));
}

/* Bit mask of backends a run asks for; GKX_AUTO (an AUTO context) only where a program takes
 * GKX_BACKENDS_AUTO flags. */
enum { GKX_CPU = 1u, GKX_CUDA = 2u, GKX_ALL = 3u, GKX_AUTO = 4u };

static inline const char *gkx_backend_name(gk_backend b)
{
    return b == GK_BACKEND_CUDA ? "cuda" : b == GK_BACKEND_CPU ? "cpu" : "auto";
}

/* Fills out[] (room for one backend per bit of mask) with the backends to run, CPU first, AUTO
 * last, and returns how many. CUDA asked for explicitly but unusable is an error (exit); with
 * "all" it is skipped with the reason, so the same command works on machines without a GPU. */
static inline int gkx_backends(unsigned mask, gk_backend *out)
{
    int n = 0;
    if (mask & GKX_CPU)
        out[n++] = GK_BACKEND_CPU;
    if (mask & GKX_CUDA) {
        if (gk_backend_available(GK_BACKEND_CUDA)) {
            out[n++] = GK_BACKEND_CUDA;
        } else if (mask == GKX_CUDA) {
            fprintf(stderr, "CUDA backend unavailable: %s\n", gk_last_error());
            exit(EXIT_FAILURE);
        } else {
            printf("note: CUDA backend unavailable, running on the CPU only (%s)\n",
                   gk_last_error());
        }
    }
    if (mask & GKX_AUTO)
        out[n++] = GK_BACKEND_AUTO;
    return n;
}

/* ------------------------------------------------------------------------------------------
 * Command-line flags: a table per program, "--name value" or "--name=value".
 * ---------------------------------------------------------------------------------------- */

typedef enum gkx_flag_kind {
    GKX_SIZE,         /* size_t; accepts 1e7 so article sizes can be typed as written */
    GKX_INT,          /* int */
    GKX_STRING,       /* const char * */
    GKX_SWITCH,       /* int set to 1, takes no value */
    GKX_BACKENDS,     /* unsigned mask from cpu|cuda|all */
    GKX_BACKENDS_AUTO /* the same, plus auto; all is cpu, cuda and auto */
} gkx_flag_kind;

typedef struct gkx_flag {
    const char *name; /* with the leading "--" */
    gkx_flag_kind kind;
    void *dst;
    const char *help;
} gkx_flag;

/* Parses a non-negative integer that may be written as 1e7 or 2.5e8. */
static inline int gkx_parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= 0) || v > 9007199254740992.0 ||
        v != floor(v))
        return 0;
    *out = (size_t)v;
    return 1;
}

static inline void gkx_usage(FILE *f, const char *prog, const char *what, const gkx_flag *flags,
                             int nflags)
{
    fprintf(f, "usage: %s [flags]\n%s\n", prog, what);
    for (int i = 0; i < nflags; i++)
        fprintf(f, "  %-16s %s\n", flags[i].name, flags[i].help);
    fprintf(f, "  %-16s %s\n", "--help", "print this and exit");
}

static inline int gkx_set_flag(const gkx_flag *f, const char *v)
{
    switch (f->kind) {
    case GKX_SIZE:
        return gkx_parse_size(v, (size_t *)f->dst);
    case GKX_INT: {
        size_t s;
        if (!gkx_parse_size(v, &s) || s > 1000000000u)
            return 0;
        *(int *)f->dst = (int)s;
        return 1;
    }
    case GKX_STRING:
        *(const char **)f->dst = v;
        return 1;
    case GKX_BACKENDS:
    case GKX_BACKENDS_AUTO: {
        int with_auto = f->kind == GKX_BACKENDS_AUTO;
        if (strcmp(v, "cpu") == 0)
            *(unsigned *)f->dst = GKX_CPU;
        else if (strcmp(v, "cuda") == 0)
            *(unsigned *)f->dst = GKX_CUDA;
        else if (with_auto && strcmp(v, "auto") == 0)
            *(unsigned *)f->dst = GKX_AUTO;
        else if (strcmp(v, "all") == 0)
            *(unsigned *)f->dst = with_auto ? GKX_ALL | GKX_AUTO : GKX_ALL;
        else
            return 0;
        return 1;
    }
    case GKX_SWITCH:
        break;
    }
    return 0;
}

/* Applies argv to the flag table; --help prints usage and exits 0, a bad flag exits 2. */
static inline void gkx_parse_flags(int argc, char **argv, const char *what, const gkx_flag *flags,
                                   int nflags)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            gkx_usage(stdout, argv[0], what, flags, nflags);
            exit(EXIT_SUCCESS);
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const gkx_flag *f = NULL;
        for (int j = 0; j < nflags && f == NULL; j++)
            if (strlen(flags[j].name) == len && strncmp(flags[j].name, arg, len) == 0)
                f = &flags[j];
        int ok = f != NULL;
        if (ok && f->kind == GKX_SWITCH) {
            ok = eq == NULL;
            if (ok)
                *(int *)f->dst = 1;
        } else if (ok) {
            const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            ok = v != NULL && gkx_set_flag(f, v);
        }
        if (!ok) {
            fprintf(stderr, "%s: bad or unknown flag '%s'\n", argv[0], arg);
            gkx_usage(stderr, argv[0], what, flags, nflags);
            exit(2);
        }
    }
}

#endif /* GK_EXAMPLES_COMMON_H */
