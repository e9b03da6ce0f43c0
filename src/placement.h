/* SPDX-License-Identifier: MIT */
/* placement.h - the cost model that places an AUTO context's host-data operations. */
#ifndef GK_PLACEMENT_H
#define GK_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpukern.h"

/* Classes of work that share a rate; each has its own unit of work (see gk_workload). A class
 * is also where a context's measurements of its calls are kept (gk_placement_history), so ops
 * whose costs per unit differ need classes of their own: a CPU's rng_uniform can cost several
 * times what add does per byte touched, and in one class, whose measured ratios a size's calls
 * share, one op's measurements would place the other's calls. */
typedef enum gk_work_class {
    GK_WORK_STREAM,      /* element-wise, reductions: bytes touched */
    GK_WORK_EXP,         /* exp: bytes touched */
    GK_WORK_GEMM,        /* gemm: floating-point operations */
    GK_WORK_RBF_ROWS,    /* rbf_rows: bytes of a and b */
    GK_WORK_RBF_PAIRS,   /* rbf_matrix, rbf_matvec: row pairs times features */
    GK_WORK_RNG_UNIFORM, /* rng_uniform: bytes written */
    GK_WORK_RNG_NORMAL,  /* rng_normal: bytes written */
    GK_WORK_CLASSES
} gk_work_class;

/* What one call asks of a backend, in the units of its class. */
typedef struct gk_workload {
    gk_work_class cls;
    int f64; /* 1 for float64: rates differ by dtype */
    double work;
} gk_workload;

/* Measured (or default) parameters of one host and one device. Rates are units per second. */
typedef struct gk_cost_model {
    double h2d_bytes_per_s, d2h_bytes_per_s;
    double gpu_call_s; /* fixed cost of a device call on host data: staging, launch, wait */
    double cpu_call_s; /* fixed cost of a CPU call: the thread team's start */
    double cpu_rate[GK_WORK_CLASSES][2];
    double gpu_rate[GK_WORK_CLASSES][2];
} gk_cost_model;

/* Conservative built-in parameters: a GPU is chosen only for clearly large work. */
void gk__cost_model_defaults(gk_cost_model *m);

/* Predicted seconds of the call on each backend. */
double gk__predict_cpu(const gk_cost_model *m, const gk_workload *w);
double gk__predict_gpu(const gk_cost_model *m, const gk_workload *w, double bytes_in,
                       double bytes_out);

/* 1 when the CPU finishes w before the GPU's fixed call cost alone has passed, so the CPU wins
 * whatever the call moves: a multiply and a compare, no division, which keeps AUTO's decision
 * on sub-microsecond calls cheaper than the call. */
static inline int gk__cpu_wins_outright(const gk_cost_model *m, const gk_workload *w)
{
    /* cpu_call_s + work / rate < gpu_call_s, multiplied through by the (positive) rate. */
    return w->work < (m->gpu_call_s - m->cpu_call_s) * m->cpu_rate[w->cls][w->f64];
}

/* What an AUTO context has measured, by class of work, dtype and octave of work (the binary
 * exponent of w->work): per backend, the latest ratios of a call's measured to predicted
 * seconds, whose lower tercile (gk__bucket_ratio) scales later predictions in the same bucket.
 * The calibration is a few seconds on quiet buffers; a program's own conditions (pageable copies
 * of its arrays, its other threads, the clock) can differ enough to move a crossover, and only
 * its calls show it. Neither a mean nor the median: copies of pageable memory take twice as long
 * now and then, and a busy moment slows several calls in a row; interference only ever slows a
 * call, so a slowdown counts once it holds four of the last five calls, a speed-up once it holds
 * two. With the median, three slow calls in five would count, and could put a backend's
 * estimate beyond the bands that retry it. */
#define GK_WORK_OCTAVES 64
#define GK_RATIO_WINDOW 5
typedef struct gk_placement_bucket {
    float seen[2][GK_RATIO_WINDOW]; /* [0] CPU, [1] GPU; the latest first filled */
    float typical[2];               /* gk__bucket_ratio of each, kept as seen changes */
    uint8_t count[2], next[2];
    uint8_t retry_left, retry_backend; /* calls left of a retry in progress, and where */
    uint8_t backoff;                   /* periodic retries' periods are shifted by this */
    uint8_t judging, last_best;        /* a retry ended and is to be judged; the last choice */
    uint32_t calls;                    /* calls the model placed in this bucket */
    /* The settled placement (gk__place_settled): calls left that repeat the last choice
     * untimed, and the work and bytes in and out (their bits) of the call they repeat. */
    uint32_t settled_left;
    uint64_t settled_key[3];
} gk_placement_bucket;

typedef struct gk_placement_history {
    gk_placement_bucket bucket[GK_WORK_CLASSES][2][GK_WORK_OCTAVES];
    uint64_t off[GK_WORK_CLASSES][2]; /* bit o: octave o's CPU measured too slow to be outright */
    uint32_t outright;                /* calls placed outright on the CPU */
} gk_placement_history;

/* ilogb(work) for work >= 1 (0 below), from the double's exponent bits: the placement of a
 * call of 150 ns must cost a few, and a libm call is more. */
static inline int gk__work_octave(const gk_workload *w)
{
    if (!(w->work >= 1.0))
        return 0;
    uint64_t bits;
    memcpy(&bits, &w->work, sizeof bits);
    int octave = (int)(bits >> 52 & 0x7ff) - 1023;
    return octave < GK_WORK_OCTAVES ? octave : GK_WORK_OCTAVES - 1;
}

static inline gk_placement_bucket *gk__bucket_of(gk_placement_history *h, const gk_workload *w)
{
    return &h->bucket[w->cls][w->f64 != 0][gk__work_octave(w)];
}

/* The lower tercile of a bucket's ratios for backend i (0: CPU, 1: GPU): the sorted ratios'
 * element (n - 1) / 3, the smaller of two, the second smallest of five; 0 when none was
 * measured. */
double gk__bucket_ratio(const gk_placement_bucket *b, int i);

/* A placed call: where it runs, the model's seconds for it there (0: placed outright, so
 * nothing to learn from its time), whether it is a retry of the backend the estimates do not
 * prefer and, if so, whether it is the retry's first (cold) call. */
typedef struct gk_placement {
    gk_backend backend;
    double predicted_s;
    int retry, cold;
    double expected_s[2]; /* CPU, GPU: the predictions as measurements corrected them */
    int audit;            /* placed outright on the CPU and timed (gk__place_outright) */
} gk_placement;

/* Calls that gk__cpu_wins_outright gives the CPU are not timed, so that AUTO costs them no more
 * than a CPU context does (a bit test and a counter), except GK_AUDIT_CALLS in a row of every
 * GK_AUDIT_EVERY of the context's, from the GK_AUDIT_AT-th on (a size's first calls run cold),
 * which are timed against the CPU's prediction like any placed call. Rarely: a timed call
 * costs two clock reads and the bucket's ratio kept (GK_TIMED_COST_S), as much as a whole tiny
 * call. So a model wrong for the CPU at some size (a slow thread team there) is seen: once the
 * lower tercile of a bucket's last GK_RATIO_WINDOW CPU measurements puts the CPU's time at twice
 * the GPU's fixed call cost or above, the shortcut is off for that bucket (a bit in
 * history->off) and gk__place_learned places and times its calls, until measurements say
 * otherwise. Returns 1
 * when the call is placed outright on the CPU, with *p (which the caller initialized as an
 * untimed placement) set only for an audit (p->predicted_s > 0: time it); 0 when
 * gk__place_learned must place it. */
#define GK_AUDIT_EVERY 256
#define GK_AUDIT_AT 128
#define GK_AUDIT_CALLS 3
/* The audit's part of gk__place_outright, out of line: 1 with *p set for the timed call, 0 (the
 * bucket taken off the shortcut) where its CPU measured slow. */
int gk__place_audit(const gk_cost_model *m, gk_placement_history *h, const gk_workload *w,
                    gk_placement *p);

static inline int gk__place_outright(const gk_cost_model *m, gk_placement_history *h,
                                     const gk_workload *w, gk_placement *p)
{
    uint64_t off = h->off[w->cls][w->f64 != 0]; /* almost always 0: no octave to work out */
    if (!gk__cpu_wins_outright(m, w) || (off != 0 && off >> gk__work_octave(w) & 1))
        return 0;
    uint32_t k = h->outright++ % GK_AUDIT_EVERY;
    return k - GK_AUDIT_AT >= GK_AUDIT_CALLS || gk__place_audit(m, h, w, p);
}

/* Where a call on host data runs: outright on the CPU (gk__place_outright), or the backend
 * whose measured-corrected prediction is lower (a bucket not measured yet takes a nearby
 * octave's ratios). The other backend is retried for GK_RETRY_CALLS calls in a row while this
 * bucket has fewer than two measurements of it and its estimate is within GK_EXPLORE_NEW_BAND
 * of the preferred one's, every GK_EXPLORE_EVERY-th call while within GK_EXPLORE_BAND, and every
 * GK_EXPLORE_WIDE_EVERY-th while within GK_EXPLORE_WIDE_BAND, so that a borrowed, stale or
 * unlucky estimate cannot keep a call on the slower device for long (a CPU's first calls at a
 * size can take twice what its later ones do). A retry's slower calls cost at most
 * GK_RETRY_CALLS x (band - 1) / every of the calls' time: 4.7 % and 3.5 %, and a short batch of
 * calls that holds one is that much slower. So each retry that leaves the choice as it
 * was doubles both periods (up to GK_EXPLORE_BACKOFF_MAX doublings: every 1024 and 4096 calls),
 * and a change of choice, a retry's or not, takes them back to the start.
 * The first call of a retry runs cold (its caches, the CPU's sleeping thread team, the
 * device's staging memory) and is not kept: it would overstate what the backend costs call
 * after call.
 * For a bucket that has not measured the other backend, "within GK_EXPLORE_NEW_BAND" holds for
 * its estimate as measurements corrected it or for the model's own prediction, whichever is
 * closer: a corrected estimate there is borrowed from a nearby octave, whose calls may have run
 * in a bad moment, and would otherwise keep the CPU from ever being tried at sizes where the
 * model's own prediction has it ahead. */
#define GK_EXPLORE_NEW_BAND 3.0
#define GK_EXPLORE_BAND 1.5
#define GK_EXPLORE_EVERY 32
#define GK_EXPLORE_WIDE_BAND 2.5
#define GK_EXPLORE_WIDE_EVERY 128
#define GK_EXPLORE_BACKOFF_MAX 5
#define GK_RETRY_CALLS 3
/* A bucket that gk__place_outright's measurements took off the shortcut retries the CPU every
 * GK_RECHECK_EVERY-th call whatever its estimate (measured 9x slower: 2.3 % of the calls' time). */
#define GK_RECHECK_EVERY 1024
/* A placed call is timed: two clock reads and the bucket's ratio kept up to date, some 1200
 * instructions (callgrind), 0.25 us (GK_TIMED_COST_S), as much as a whole add of 1000 floats on
 * the CPU. So a call that gk__place_learned leaves where the estimates put it (no retry begun
 * or under way), once its bucket has measured that backend twice, settles the bucket: the next
 * calls of the same work and bytes take the same backend untimed (gk__place_settled: a bucket, a
 * counter and three integer compares), and only one in P is placed and timed, P the calls whose
 * expected time GK_TIMED_COST_S is GK_TIMED_SHARE of (at most GK_SETTLED_MAX): 1 for calls of 25 us
 * and more, 64 below 0.4 us. A settled stretch ends before the call at which the estimates it was
 * placed on would retry the other backend, so retries come when they would have come. */
#define GK_TIMED_COST_S 0.25e-6
#define GK_TIMED_SHARE 0.01
#define GK_SETTLED_MAX 64
gk_placement gk__place_learned(const gk_cost_model *m, gk_placement_history *h,
                               const gk_workload *w, double bytes_in, double bytes_out);

/* What makes two calls of a bucket the same for a settled placement: the bits of their work and
 * bytes, compared as integers. */
static inline void gk__settled_key(const gk_workload *w, double bytes_in, double bytes_out,
                                   uint64_t key[3])
{
    memcpy(&key[0], &w->work, sizeof key[0]);
    memcpy(&key[1], &bytes_in, sizeof key[1]);
    memcpy(&key[2], &bytes_out, sizeof key[2]);
}

/* A call in a settled bucket (see GK_TIMED_COST_S) of the same work and bytes as the call that
 * settled it: 1 with p->backend set (untimed, as the caller initialized it), 0 when
 * gk__place_learned must place it. */
static inline int gk__place_settled(gk_placement_history *h, const gk_workload *w, double bytes_in,
                                    double bytes_out, gk_placement *p)
{
    gk_placement_bucket *b = gk__bucket_of(h, w);
    uint64_t key[3];
    gk__settled_key(w, bytes_in, bytes_out, key);
    if (b->settled_left == 0 || key[0] != b->settled_key[0] || key[1] != b->settled_key[1] ||
        key[2] != b->settled_key[2])
        return 0;
    b->settled_left--;
    b->calls++;
    p->backend = b->last_best ? GK_BACKEND_CUDA : GK_BACKEND_CPU;
    return 1;
}

/* Records that a call placed as p took seconds. */
void gk__placement_observe(gk_placement_history *h, const gk_workload *w, gk_placement p,
                           double seconds);

#endif /* GK_PLACEMENT_H */
