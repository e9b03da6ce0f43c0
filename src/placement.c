/* SPDX-License-Identifier: MIT */
/* placement.c - predicting CPU and GPU time of a host-data call, and the model's cache file. */
#include "placement.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const class_names[GK_WORK_CLASSES] = {"stream", "exp", "gemm", "rbf_rows",
                                                         "rbf_pairs"};

void gk__cost_model_defaults(gk_cost_model *m)
{
    /* Pessimistic for the GPU (PCIe 3 x8 rates, a slow call) and modest for the CPU (a few
     * cores), so an uncalibrated AUTO context leaves small and medium work on the CPU. */
    static const double cpu[GK_WORK_CLASSES][2] = {
        {10e9, 10e9}, {4e9, 4e9}, {100e9, 50e9}, {8e9, 8e9}, {4e9, 2e9}};
    static const double gpu[GK_WORK_CLASSES][2] = {
        {1e12, 1e12}, {1e12, 1e12}, {20e12, 10e12}, {1e12, 1e12}, {500e9, 100e9}};
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

int gk__cpu_wins_outright(const gk_cost_model *m, const gk_workload *w)
{
    /* cpu_call_s + work / rate < gpu_call_s, multiplied through by the (positive) rate. */
    return w->work < (m->gpu_call_s - m->cpu_call_s) * m->cpu_rate[w->cls][w->f64];
}

static int octave_of(const gk_workload *w)
{
    int octave = w->work >= 1.0 ? ilogb(w->work) : 0;
    return octave < GK_WORK_OCTAVES ? octave : GK_WORK_OCTAVES - 1;
}

static gk_placement_bucket *bucket_of(gk_placement_history *h, const gk_workload *w)
{
    return &h->bucket[w->cls][w->f64 != 0][octave_of(w)];
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
    /* The lower middle of an even count: a retry keeps two calls, and one slow copy among
     * them should not count as the typical cost. */
    return v[(n - 1) / 2];
}

static void remember(gk_placement_bucket *b, int i, double r)
{
    b->seen[i][b->next[i]] = (float)r;
    b->next[i] = (uint8_t)((b->next[i] + 1) % GK_RATIO_WINDOW);
    if (b->count[i] < GK_RATIO_WINDOW)
        b->count[i]++;
}

/* A bucket's ratio for backend i; one not measured yet borrows the nearest measured octave's
 * (within GK_PRIOR_OCTAVES, smaller sizes first: workloads usually grow), since the ratio
 * changes slowly with size; 0 without any. */
#define GK_PRIOR_OCTAVES 4
static double ratio_of(const gk_placement_history *h, const gk_workload *w, int i)
{
    const gk_placement_bucket *row = h->bucket[w->cls][w->f64 != 0];
    int o = octave_of(w);
    for (int dist = 0; dist <= GK_PRIOR_OCTAVES; dist++)
        for (int side = -1; side <= 1; side += 2) {
            int at = o + side * dist;
            if (at >= 0 && at < GK_WORK_OCTAVES && row[at].count[i] > 0)
                return gk__bucket_ratio(&row[at], i);
        }
    return 0.0;
}

gk_placement gk__place_learned(const gk_cost_model *m, gk_placement_history *h,
                               const gk_workload *w, double bytes_in, double bytes_out)
{
    gk_placement p = {GK_BACKEND_CPU, 0.0, 0, 0, {0.0, 0.0}};
    if (gk__cpu_wins_outright(m, w))
        return p;
    gk_placement_bucket *b = bucket_of(h, w);
    double predicted[2] = {gk__predict_cpu(m, w), gk__predict_gpu(m, w, bytes_in, bytes_out)};
    for (int i = 0; i < 2; i++) {
        double ratio = ratio_of(h, w, i);
        p.expected_s[i] = predicted[i] * (ratio > 0.0 ? ratio : 1.0);
    }
    int best = p.expected_s[1] < p.expected_s[0], other = !best, run = best;
    b->calls++;
    if (b->retry_left > 0) {
        b->retry_left--;
        run = b->retry_backend;
        p.retry = 1;
    } else if (b->count[other] < 2 ? p.expected_s[other] < GK_EXPLORE_NEW_BAND * p.expected_s[best]
                                   : p.expected_s[other] < GK_EXPLORE_BAND * p.expected_s[best] &&
                                         b->calls % GK_EXPLORE_EVERY == 0) {
        b->retry_left = GK_RETRY_CALLS - 1;
        b->retry_backend = (uint8_t)other;
        run = other;
        p.retry = p.cold = 1;
    }
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
    remember(bucket_of(h, w), p.backend == GK_BACKEND_CUDA, r < 1e-3 ? 1e-3 : r > 1e3 ? 1e3 : r);
}

int gk__cost_model_save(const gk_cost_model *m, const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return 0;
    fprintf(f, "# libgpukern AUTO calibration: rates in work units per second\n");
    fprintf(f, "h2d_bytes_per_s %.6g\nd2h_bytes_per_s %.6g\n", m->h2d_bytes_per_s,
            m->d2h_bytes_per_s);
    fprintf(f, "gpu_call_s %.6g\ncpu_call_s %.6g\n", m->gpu_call_s, m->cpu_call_s);
    for (int c = 0; c < GK_WORK_CLASSES; c++)
        for (int d = 0; d < 2; d++)
            fprintf(f, "cpu_%s_%s %.6g\ngpu_%s_%s %.6g\n", class_names[c], d ? "f64" : "f32",
                    m->cpu_rate[c][d], class_names[c], d ? "f64" : "f32", m->gpu_rate[c][d]);
    return fclose(f) == 0;
}

/* The field a key names, or NULL. */
static double *field(gk_cost_model *m, const char *key)
{
    if (strcmp(key, "h2d_bytes_per_s") == 0)
        return &m->h2d_bytes_per_s;
    if (strcmp(key, "d2h_bytes_per_s") == 0)
        return &m->d2h_bytes_per_s;
    if (strcmp(key, "gpu_call_s") == 0)
        return &m->gpu_call_s;
    if (strcmp(key, "cpu_call_s") == 0)
        return &m->cpu_call_s;
    for (int c = 0; c < GK_WORK_CLASSES; c++)
        for (int d = 0; d < 2; d++) {
            char name[64];
            snprintf(name, sizeof name, "cpu_%s_%s", class_names[c], d ? "f64" : "f32");
            if (strcmp(key, name) == 0)
                return &m->cpu_rate[c][d];
            snprintf(name, sizeof name, "gpu_%s_%s", class_names[c], d ? "f64" : "f32");
            if (strcmp(key, name) == 0)
                return &m->gpu_rate[c][d];
        }
    return NULL;
}

int gk__cost_model_load(gk_cost_model *m, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    gk_cost_model read = *m;
    char line[256];
    int ok = 1;
    while (ok && fgets(line, sizeof line, f) != NULL) {
        char key[64];
        double value;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        double *slot = NULL;
        ok = sscanf(line, "%63s %lf", key, &value) == 2 && (slot = field(&read, key)) != NULL &&
             value > 0.0;
        if (ok)
            *slot = value;
    }
    fclose(f);
    if (ok)
        *m = read;
    return ok;
}
