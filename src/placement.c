/* SPDX-License-Identifier: MIT */
/* placement.c - the placement policy: predicting CPU and GPU time of a host-data call, corrected
 * by what earlier calls measured. */
#include "placement.h"

#include <string.h>

void gk__cost_model_defaults(gk_cost_model *m)
{
    /* Pessimistic for the GPU (PCIe 3 x8 rates, a slow call) and modest for the CPU (a few
     * cores), so an uncalibrated AUTO context leaves small and medium work on the CPU. */
    static const double cpu[GK_WORK_CLASSES][2] = {
        {10e9, 10e9}, {4e9, 4e9}, {100e9, 50e9}, {8e9, 8e9}, {4e9, 2e9}, {4e9, 4e9}, {2e9, 2e9}};
    static const double gpu[GK_WORK_CLASSES][2] = {{1e12, 1e12}, {1e12, 1e12},   {20e12, 10e12},
                                                   {1e12, 1e12}, {500e9, 100e9}, {1e12, 1e12},
                                                   {1e12, 1e12}};
    m->h2d_bytes_per_s = 6e9;
    m->d2h_bytes_per_s = 6e9;
    m->gpu_call_s = 100e-6;
    m->cpu_call_s = 5e-6;
    memcpy(m->cpu_rate, cpu, sizeof cpu);
    memcpy(m->gpu_rate, gpu, sizeof gpu);
}

double gk__predict_cpu(const gk_cost_model *m, const gk_workload *w)
{
    return m->cpu_call_s + w->work / m->cpu_rate[w->cls][w->f64];
}

double gk__predict_gpu(const gk_cost_model *m, const gk_workload *w, double bytes_in,
                       double bytes_out)
{
    return m->gpu_call_s + bytes_in / m->h2d_bytes_per_s + bytes_out / m->d2h_bytes_per_s +
           w->work / m->gpu_rate[w->cls][w->f64];
}

double gk__bucket_ratio(const gk_placement_bucket *b, int i)
{
    int n = b->count[i];
    if (n == 0)
        return 0.0;
    float v[GK_RATIO_WINDOW];
    memcpy(v, b->seen[i], sizeof v);
    for (int a = 1; a < n; a++)
        for (int c = a; c > 0 && v[c - 1] > v[c]; c--) {
            float t = v[c];
            v[c] = v[c - 1];
            v[c - 1] = t;
        }
    /* Low, not middle (placement.h): a retry keeps two calls, and one slow copy among them
     * should not count as the typical cost; of five, three slow ones should not either. */
    return v[(n - 1) / 3];
}

static void remember(gk_placement_bucket *b, int i, double r)
{
    b->seen[i][b->next[i]] = (float)r;
    b->next[i] = (uint8_t)((b->next[i] + 1) % GK_RATIO_WINDOW);
    if (b->count[i] < GK_RATIO_WINDOW)
        b->count[i]++;
    b->typical[i] = (float)gk__bucket_ratio(b, i);
}

/* A bucket's ratio for backend i; one not measured yet borrows the nearest measured octave's
 * (within GK_PRIOR_OCTAVES, smaller sizes first: workloads usually grow), since the ratio
 * changes slowly with size; 0 without any. */
#define GK_PRIOR_OCTAVES 4
static double ratio_of(const gk_placement_history *h, const gk_workload *w, int i)
{
    const gk_placement_bucket *row = h->bucket[w->cls][w->f64 != 0];
    int o = gk__work_octave(w);
    for (int dist = 0; dist <= GK_PRIOR_OCTAVES; dist++)
        for (int side = -1; side <= 1; side += 2) {
            int at = o + side * dist;
            if (at >= 0 && at < GK_WORK_OCTAVES && row[at].count[i] > 0)
                return row[at].typical[i];
        }
    return 0.0;
}

/* Whether the CPU's measurements in bucket b put its time for w at twice the GPU's fixed call
 * cost or above: (cpu_call_s r + work r / rate) >= 2 gpu_call_s, multiplied through by the rate
 * as in gk__cpu_wins_outright. Only on a full window (two audits' worth, GK_RATIO_WINDOW calls):
 * the first calls after the GPU's, or a busy moment, can take several times a
 * short CPU call's time, and a bucket taken off the shortcut on them would go to the GPU for up
 * to GK_RECHECK_EVERY calls. */
static int cpu_measured_slow(const gk_cost_model *m, const gk_workload *w,
                             const gk_placement_bucket *b)
{
    double r = b->typical[0], rate = m->cpu_rate[w->cls][w->f64];
    return b->count[0] >= GK_RATIO_WINDOW &&
           !(w->work * r < (2.0 * m->gpu_call_s - m->cpu_call_s * r) * rate);
}

int gk__place_audit(const gk_cost_model *m, gk_placement_history *h, const gk_workload *w,
                    gk_placement *p)
{
    if (cpu_measured_slow(m, w, gk__bucket_of(h, w))) {
        h->off[w->cls][w->f64 != 0] |= (uint64_t)1 << gk__work_octave(w);
        return 0;
    }
    p->backend = GK_BACKEND_CPU;
    p->predicted_s = p->expected_s[0] = gk__predict_cpu(m, w);
    p->expected_s[1] = m->gpu_call_s; /* at least */
    p->audit = 1;
    return 1;
}

/* Calls from this one (0: this one) until the backend the estimates do not prefer is retried
 * (placement.h's bands), UINT32_MAX when it is not while the estimates stay as they are. */
static uint32_t to_mult(uint32_t calls, uint32_t period)
{
    return calls % period == 0 ? 0 : period - calls % period;
}

static uint32_t retry_in(const gk_cost_model *m, const gk_workload *w, const gk_placement_bucket *b,
                         const double predicted[2], const double expected_s[2], int best)
{
    int other = !best;
    double ahead = expected_s[other] / expected_s[best];
    if (b->count[other] < 2) {
        double ahead_model = predicted[other] / expected_s[best];
        return ahead < GK_EXPLORE_NEW_BAND || ahead_model < GK_EXPLORE_NEW_BAND ? 0 : UINT32_MAX;
    }
    uint32_t every = (uint32_t)GK_EXPLORE_EVERY << b->backoff,
             wide = (uint32_t)GK_EXPLORE_WIDE_EVERY << b->backoff, in = UINT32_MAX, k;
    if (ahead < GK_EXPLORE_BAND && (k = to_mult(b->calls, every)) < in)
        in = k;
    if (ahead < GK_EXPLORE_WIDE_BAND && (k = to_mult(b->calls, wide)) < in)
        in = k;
    /* The model gives the CPU these calls outright, and only its measurements here said no: they
     * may have been unlucky, and nothing else would measure the CPU here again. */
    if (other == 0 && gk__cpu_wins_outright(m, w) && (k = to_mult(b->calls, GK_RECHECK_EVERY)) < in)
        in = k;
    return in;
}

/* Settles bucket b on the call w just placed on its estimates' choice, expected to take
 * expected_s, with the next retry (at least) retry calls away (placement.h's GK_TIMED_COST_S). */
static void settle(gk_placement_bucket *b, const gk_workload *w, double bytes_in, double bytes_out,
                   double expected_s, uint32_t retry)
{
    double share = GK_TIMED_COST_S / (GK_TIMED_SHARE * expected_s);
    uint32_t timed_every = !(share < GK_SETTLED_MAX) ? GK_SETTLED_MAX
                           : share > 1.0             ? (uint32_t)share
                                                     : 1;
    b->settled_left = (timed_every < retry ? timed_every : retry) - 1;
    gk__settled_key(w, bytes_in, bytes_out, b->settled_key);
}

gk_placement gk__place_learned(const gk_cost_model *m, gk_placement_history *h,
                               const gk_workload *w, double bytes_in, double bytes_out)
{
    gk_placement p = {GK_BACKEND_CPU, 0.0, 0, 0, {0.0, 0.0}, 0};
    if (gk__place_outright(m, h, w, &p) || gk__place_settled(h, w, bytes_in, bytes_out, &p))
        return p;
    gk_placement_bucket *b = gk__bucket_of(h, w);
    /* A bucket that its audits took off the shortcut goes back on it once its CPU measures fast
     * again (the retries below every GK_RECHECK_EVERY calls). */
    if (gk__cpu_wins_outright(m, w) && !cpu_measured_slow(m, w, b)) {
        h->off[w->cls][w->f64 != 0] &= ~((uint64_t)1 << gk__work_octave(w));
        if (gk__place_outright(m, h, w, &p))
            return p;
    }
    double predicted[2] = {gk__predict_cpu(m, w), gk__predict_gpu(m, w, bytes_in, bytes_out)};
    for (int i = 0; i < 2; i++) {
        double ratio = ratio_of(h, w, i);
        p.expected_s[i] = predicted[i] * (ratio > 0.0 ? ratio : 1.0);
    }
    int best = p.expected_s[1] < p.expected_s[0], run = best;
    uint32_t retry = 0;
    b->calls++;
    if (best != b->last_best) {
        b->backoff = 0;
        b->last_best = (uint8_t)best;
    } else if (b->judging && b->retry_left == 0 && best != b->retry_backend &&
               b->backoff < GK_EXPLORE_BACKOFF_MAX) {
        b->backoff++; /* the retry ended, and the backend it tried is still not the choice */
    }
    b->judging = b->retry_left > 0;
    if (b->retry_left > 0) {
        b->retry_left--;
        run = b->retry_backend;
        p.retry = 1;
    } else if ((retry = retry_in(m, w, b, predicted, p.expected_s, best)) == 0) {
        b->retry_left = GK_RETRY_CALLS - 1;
        b->judging = 1;
        b->retry_backend = (uint8_t)!best;
        run = !best;
        p.retry = p.cold = 1;
    }
    /* Only on the bucket's own measurements of the choice: a borrowed or unmeasured estimate is
     * what timed calls are there to correct. */
    if (p.retry || b->count[best] < 2)
        b->settled_left = 0;
    else
        settle(b, w, bytes_in, bytes_out, p.expected_s[best], retry);
    p.backend = run ? GK_BACKEND_CUDA : GK_BACKEND_CPU;
    p.predicted_s = predicted[run];
    return p;
}

void gk__placement_observe(gk_placement_history *h, const gk_workload *w, gk_placement p,
                           double seconds)
{
    if (!(p.predicted_s > 0.0) || !(seconds >= 0.0) || p.cold)
        return;
    double r = seconds / p.predicted_s;
    remember(gk__bucket_of(h, w), p.backend == GK_BACKEND_CUDA,
             r < 1e-3  ? 1e-3
             : r > 1e3 ? 1e3
                       : r);
}
