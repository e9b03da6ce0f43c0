/* SPDX-License-Identifier: MIT */
/* test_placement.c - AUTO's cost model with injected cost tables: runs without a GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache_file.h"
#include "placement.h"

/* A machine whose figures make the arithmetic easy to follow: 1 GB/s each way, a 1 ms device
 * call, a 1 us CPU call, the CPU 1e9 units/s and the GPU 1e12 units/s for every class. */
static gk_cost_model injected(void)
{
    gk_cost_model m;
    gk__cost_model_defaults(&m);
    m.h2d_bytes_per_s = 1e9;
    m.d2h_bytes_per_s = 1e9;
    m.gpu_call_s = 1e-3;
    m.cpu_call_s = 1e-6;
    for (int c = 0; c < GK_WORK_CLASSES; c++)
        for (int d = 0; d < 2; d++) {
            m.cpu_rate[c][d] = 1e9;
            m.gpu_rate[c][d] = 1e12;
        }
    return m;
}

/* The model's own choice, before any measurement corrects it. */
static gk_backend model_choice(const gk_cost_model *m, const gk_workload *w, double bytes_in,
                               double bytes_out)
{
    return gk__predict_gpu(m, w, bytes_in, bytes_out) < gk__predict_cpu(m, w) ? GK_BACKEND_CUDA
                                                                              : GK_BACKEND_CPU;
}

static void test_predictions_follow_the_table(void **state)
{
    (void)state;
    gk_cost_model m = injected();
    gk_workload w = {GK_WORK_GEMM, 0, 2e9};
    assert_float_equal(gk__predict_cpu(&m, &w), 1e-6 + 2.0, 1e-12);
    /* 1 ms call + 3e6 bytes in at 1 GB/s + 1e6 bytes out + 2e9 / 1e12 s of work */
    assert_float_equal(gk__predict_gpu(&m, &w, 3e6, 1e6), 1e-3 + 3e-3 + 1e-3 + 2e-3, 1e-12);
}

static void test_small_work_stays_on_cpu_large_goes_to_gpu(void **state)
{
    (void)state;
    gk_cost_model m = injected();
    gk_workload small = {GK_WORK_STREAM, 0, 1e4};
    assert_int_equal(model_choice(&m, &small, 1e4, 1e4), GK_BACKEND_CPU);
    /* Compute-heavy work with little data: 1e10 units take 10 s on the CPU, 10 ms on the GPU. */
    gk_workload heavy = {GK_WORK_RBF_PAIRS, 0, 1e10};
    assert_int_equal(model_choice(&m, &heavy, 1e6, 1e6), GK_BACKEND_CUDA);
    /* Streaming work whose transfers cost more than the CPU's pass: stays on the CPU. */
    gk_workload stream = {GK_WORK_STREAM, 0, 3e9};
    assert_int_equal(model_choice(&m, &stream, 2e9, 1e9), GK_BACKEND_CPU);
}

static void test_dtype_selects_its_rate(void **state)
{
    (void)state;
    gk_cost_model m = injected();
    m.gpu_rate[GK_WORK_GEMM][1] = 1e6; /* a GPU without float64 units */
    gk_workload f32 = {GK_WORK_GEMM, 0, 1e10}, f64 = {GK_WORK_GEMM, 1, 1e10};
    assert_int_equal(model_choice(&m, &f32, 1e6, 1e6), GK_BACKEND_CUDA);
    assert_int_equal(model_choice(&m, &f64, 1e6, 1e6), GK_BACKEND_CPU);
}

/* The shortcut for tiny calls agrees with the full prediction: it claims the CPU only where the
 * CPU's whole time is under the GPU's fixed call cost (here 1 ms - 1 us at 1e9 units/s: just
 * under 999000 units), and every call it lets through is decided by the prediction. */
static void test_outright_cpu_wins_match_the_prediction(void **state)
{
    (void)state;
    gk_cost_model m = injected();
    gk_workload below = {GK_WORK_STREAM, 0, 998999}, above = {GK_WORK_STREAM, 0, 999001};
    assert_true(gk__cpu_wins_outright(&m, &below));
    assert_false(gk__cpu_wins_outright(&m, &above));
    for (double work = 1; work <= 1e12; work *= 3) {
        gk_workload w = {GK_WORK_RBF_PAIRS, 0, work};
        if (gk__cpu_wins_outright(&m, &w)) {
            /* No transfer at all, and still the GPU is slower. */
            assert_true(gk__predict_cpu(&m, &w) < gk__predict_gpu(&m, &w, 0.0, 0.0));
            assert_int_equal(model_choice(&m, &w, 0.0, 0.0), GK_BACKEND_CPU);
        }
    }
    /* A GPU call cheaper than a CPU call: nothing is won outright. */
    m.gpu_call_s = 0.5e-6;
    gk_workload tiny = {GK_WORK_STREAM, 0, 1};
    assert_false(gk__cpu_wins_outright(&m, &tiny));
}

/* A call the model sends to the GPU, 0.9 s there against 1 s on the CPU (within the band
 * where the other backend is worth a try). */
static gk_workload close_call(gk_cost_model *m)
{
    *m = injected();
    m->gpu_call_s = 0.9 - 1e-3 - 1e-6; /* predict_gpu: call + 1 us of copies + 1e-3 s of work */
    gk_workload w = {GK_WORK_RBF_PAIRS, 0, 1e9 - 1e3};
    return w;
}

/* The time a simulated call takes: the GPU `gpu` and the CPU `cpu` times its prediction, a
 * retry's cold first call `cold` times. */
static double simulated(gk_placement p, double cpu, double gpu, double cold)
{
    double factor = p.backend == GK_BACKEND_CUDA ? gpu : cpu;
    return (p.cold ? cold * factor : factor) * p.predicted_s;
}

/* Measurements correct the model: a GPU that turns out 3x slower than predicted loses the
 * bucket to the CPU, which then keeps it. */
static void test_measured_times_correct_the_model(void **state)
{
    (void)state;
    gk_cost_model m;
    gk_workload w = close_call(&m);
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    /* The first calls retry the CPU, not measured yet and within the band: one cold, two kept. */
    for (int i = 0; i < GK_RETRY_CALLS; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 500, 500);
        assert_int_equal(p.backend, GK_BACKEND_CPU);
        assert_true(p.retry);
        assert_int_equal(p.cold, i == 0);
        gk__placement_observe(&h, &w, p, simulated(p, 1.0, 3.0, 2.0));
    }
    /* Then the GPU, as the model prefers; it measures 3x its prediction. */
    int on_gpu = 0;
    for (int i = 0; i < 4 * GK_EXPLORE_EVERY; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 500, 500);
        assert_float_equal(p.predicted_s,
                           p.backend == GK_BACKEND_CUDA ? gk__predict_gpu(&m, &w, 500, 500)
                                                        : gk__predict_cpu(&m, &w),
                           1e-12);
        on_gpu += i >= 4 && p.backend == GK_BACKEND_CUDA;
        gk__placement_observe(&h, &w, p, simulated(p, 1.0, 3.0, 2.0));
    }
    /* Expected 2.7 s on the GPU against 1 s: outside the band, never retried. */
    assert_int_equal(on_gpu, 0);
    /* The next octave of work starts from these measurements, which prefer the CPU; the GPU,
     * not measured there and within GK_EXPLORE_NEW_BAND, is retried once. */
    gk_workload bigger = w;
    bigger.work = 1.1e9;
    gk_placement p = gk__place_learned(&m, &h, &bigger, 500, 500);
    assert_true(p.expected_s[0] < p.expected_s[1]);
    assert_int_equal(p.backend, GK_BACKEND_CUDA);
    assert_true(p.retry && p.cold);
}

/* A neighbour's measurements can mislead: the CPU ran 1.6x its prediction one octave down but
 * runs 0.75x here. The retry of the CPU at the new size finds it, and AUTO keeps it. */
static void test_a_misleading_neighbour_is_checked(void **state)
{
    (void)state;
    gk_cost_model m = injected();
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    gk_workload below = {GK_WORK_RBF_PAIRS, 0, 1e9 - 1e3}; /* CPU 1 s, GPU 0.9 s */
    for (int i = 0; i < 12; i++) {
        gk_placement p = gk__place_learned(&m, &h, &below, 0.9e9 - 1e6, 0);
        gk__placement_observe(&h, &below, p, simulated(p, 1.6, 1.0, 1.5));
    }
    gk_workload here = {GK_WORK_RBF_PAIRS, 0, 2.2e9}; /* CPU 2.2 s, GPU 2.0 s predicted */
    int on_cpu = 0, n = 40;
    for (int i = 0; i < n; i++) {
        gk_placement p = gk__place_learned(&m, &h, &here, 2.0e9 - 2.2e6, 0);
        if (i == 0)
            assert_true(p.expected_s[1] < p.expected_s[0]); /* borrowed: the GPU looks faster */
        gk__placement_observe(&h, &here, p, simulated(p, 0.75, 1.0, 1.5));
        on_cpu += i >= 8 && p.backend == GK_BACKEND_CPU;
    }
    assert_true(on_cpu >= n - 8 - 2 * GK_RETRY_CALLS);
}

/* A neighbour's measurements can mislead by more than the band: the CPU ran 10x its prediction
 * one octave down (a bad moment), which would put it 11x behind the GPU here, where it runs 0.75x
 * its prediction. The model's own prediction has the two within GK_EXPLORE_NEW_BAND, so the CPU
 * is retried at the new size, and AUTO keeps it. */
static void test_a_neighbour_far_off_is_checked(void **state)
{
    (void)state;
    gk_cost_model m = injected();
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    gk_workload below = {GK_WORK_RBF_PAIRS, 0, 1e9 - 1e3}; /* CPU 1 s, GPU 0.9 s */
    for (int i = 0; i < 12; i++) {
        gk_placement p = gk__place_learned(&m, &h, &below, 0.9e9 - 1e6, 0);
        gk__placement_observe(&h, &below, p, simulated(p, 10.0, 1.0, 1.5));
    }
    gk_workload here = {GK_WORK_RBF_PAIRS, 0, 2.2e9}; /* CPU 2.2 s, GPU 2.0 s predicted */
    int on_cpu = 0, n = 40;
    for (int i = 0; i < n; i++) {
        gk_placement p = gk__place_learned(&m, &h, &here, 2.0e9 - 2.2e6, 0);
        if (i == 0)
            assert_true(p.expected_s[0] > GK_EXPLORE_NEW_BAND * p.expected_s[1]);
        gk__placement_observe(&h, &here, p, simulated(p, 0.75, 1.0, 1.5));
        on_cpu += i >= 8 && p.backend == GK_BACKEND_CPU;
    }
    assert_true(on_cpu >= n - 8 - 2 * GK_RETRY_CALLS);
}

/* Far from the crossover nothing is retried, and outright CPU calls are not timed. */
static void test_clear_calls_are_not_explored(void **state)
{
    (void)state;
    gk_cost_model m = injected();
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    gk_workload heavy = {GK_WORK_RBF_PAIRS, 0, 1e10}; /* 10 s on the CPU, 13 ms on the GPU */
    for (int i = 0; i < 2 * GK_EXPLORE_EVERY; i++)
        assert_int_equal(gk__place_learned(&m, &h, &heavy, 1e6, 1e6).backend, GK_BACKEND_CUDA);
    gk_workload tiny = {GK_WORK_STREAM, 0, 100};
    gk_placement p = gk__place_learned(&m, &h, &tiny, 1e2, 1e2);
    assert_int_equal(p.backend, GK_BACKEND_CPU);
    assert_true(p.predicted_s == 0.0);
    gk_placement_history before = h;
    gk__placement_observe(&h, &tiny, p, 1.0);
    assert_memory_equal(&before, &h, sizeof h);
}

/* A bucket's ratio is the lower tercile of its latest measurements: an outlier among them is
 * ignored, three slow calls among five are too, and a new, slower steady ratio takes over once it
 * holds four of the five (a faster one, once it holds two). */
static void test_one_outlier_is_ignored(void **state)
{
    (void)state;
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    gk_workload w = {GK_WORK_GEMM, 1, 1e6};
    const gk_placement_bucket *b = &h.bucket[GK_WORK_GEMM][1][ilogb(1e6)];
    gk_placement p = {GK_BACKEND_CUDA, 1e-3, 0, 0, {0, 0}, 0};
    gk__placement_observe(&h, &w, p, 1e-3);
    gk__placement_observe(&h, &w, p, 1e-3);
    gk__placement_observe(&h, &w, p, 1.0); /* preempted: 1000x */
    assert_float_equal(gk__bucket_ratio(b, 1), 1.0, 1e-6);
    assert_true(gk__bucket_ratio(b, 0) == 0.0);
    for (int i = 0; i < 2; i++)
        gk__placement_observe(&h, &w, p, 3e-3);
    assert_float_equal(gk__bucket_ratio(b, 1), 1.0, 1e-6); /* {1, 1, 1000, 3, 3} */
    gk__placement_observe(&h, &w, p, 3e-3);
    assert_float_equal(gk__bucket_ratio(b, 1), 3.0, 1e-6); /* {3, 1, 1000, 3, 3} */
    for (int i = 0; i < 2; i++)
        gk__placement_observe(&h, &w, p, 0.5e-3);
    assert_float_equal(gk__bucket_ratio(b, 1), 0.5, 1e-6); /* {3, 0.5, 0.5, 3, 3} */
}

/* A retry's cold first call is not kept; its later calls are. */
static void test_a_cold_call_is_not_kept(void **state)
{
    (void)state;
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    gk_workload w = {GK_WORK_STREAM, 0, 1e6};
    const gk_placement_bucket *b = &h.bucket[GK_WORK_STREAM][0][ilogb(1e6)];
    gk_placement cold = {GK_BACKEND_CPU, 1e-3, 1, 1, {0, 0}, 0};
    gk_placement warm = {GK_BACKEND_CPU, 1e-3, 1, 0, {0, 0}, 0};
    gk__placement_observe(&h, &w, cold, 5e-3);
    assert_int_equal(b->count[0], 0);
    gk__placement_observe(&h, &w, warm, 0.5e-3);
    assert_float_equal(gk__bucket_ratio(b, 0), 0.5, 1e-6);
    gk__placement_observe(&h, &w, warm, 2.5e-3); /* {0.5, 2.5}: the lower middle */
    assert_float_equal(gk__bucket_ratio(b, 0), 0.5, 1e-6);
}

/* The model prefers the GPU by 10 %, the GPU measures 20 % over its prediction and the CPU's
 * cold calls take 1.5x: AUTO settles on the CPU, which call after call is faster, and retries
 * the GPU for a few calls every GK_EXPLORE_EVERY. */
static void test_cold_retries_do_not_hide_the_faster_backend(void **state)
{
    (void)state;
    gk_cost_model m;
    gk_workload w = close_call(&m);
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    int n = 8 * GK_EXPLORE_EVERY, on_cpu = 0;
    for (int i = 0; i < n; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 500, 500);
        gk__placement_observe(&h, &w, p, simulated(p, 1.0, 1.2, 1.5));
        on_cpu += i >= 8 && p.backend == GK_BACKEND_CPU;
    }
    assert_true(on_cpu >= n - 8 - GK_RETRY_CALLS * (n / GK_EXPLORE_EVERY + 1));
}

/* Pageable copies as a GPU host measured them: a staged GPU call takes 1.05 s but every fifth
 * one 2.4 s, the CPU 1.2 s, against predictions of 1.3 s and 1 s. AUTO learns the GPU and keeps it
 * (a running mean would follow each slow copy to the CPU). */
static void test_occasional_slow_copies_keep_the_gpu(void **state)
{
    (void)state;
    gk_cost_model m = injected();
    gk_workload w = {GK_WORK_RBF_PAIRS, 0, 1e9 - 1e3};
    const double in = 1.298e9; /* GPU: 1 ms call + 1.298 s of copies + 1 ms of work */
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    int gpu_calls = 0, on_gpu = 0, n = 8 * GK_EXPLORE_EVERY;
    for (int i = 0; i < n; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, in, 0);
        double took = 1.2;
        if (p.backend == GK_BACKEND_CUDA)
            took = ++gpu_calls % 5 == 0 ? 2.4 : 1.05;
        gk__placement_observe(&h, &w, p, took);
        on_gpu += i >= 10 && p.backend == GK_BACKEND_CUDA;
    }
    /* All but the CPU's periodic retries. */
    assert_true(on_gpu >= n - 10 - GK_RETRY_CALLS * (n / GK_EXPLORE_EVERY + 1));
}

/* An octave not measured yet starts from its nearest measured neighbour: a GPU found 3x slower
 * than predicted at one size is expected 3x slower at the next. */
static void test_new_sizes_borrow_the_nearest_measurement(void **state)
{
    (void)state;
    gk_cost_model m;
    gk_workload w = close_call(&m);
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    for (int i = 0; i < 8; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 500, 500);
        gk__placement_observe(&h, &w, p, simulated(p, 1.0, 3.0, 1.0));
    }
    gk_workload next = w;
    next.work = 2.2e9; /* two octaves up */
    gk_placement p = gk__place_learned(&m, &h, &next, 500, 500);
    assert_float_equal(p.expected_s[1], 3.0 * gk__predict_gpu(&m, &next, 500, 500), 1e-9);
    assert_float_equal(p.expected_s[0], gk__predict_cpu(&m, &next), 1e-9);
    gk_workload far = w;
    far.work = 64e9; /* six octaves up: no neighbour within reach, the model as it stands */
    p = gk__place_learned(&m, &h, &far, 500, 500);
    assert_float_equal(p.expected_s[1], gk__predict_gpu(&m, &far, 500, 500), 1e-9);
    assert_int_equal(p.backend, GK_BACKEND_CUDA);
}

/* Growing one workload moves it to the GPU once and never back: one crossover. */
static void test_single_crossover(void **state)
{
    (void)state;
    gk_cost_model m = injected();
    int switched = 0;
    for (double n = 16; n <= 65536; n *= 2) {
        gk_workload w = {GK_WORK_RBF_PAIRS, 0, n * n * 20};
        gk_backend b = model_choice(&m, &w, 2 * n * 20 * 4, n * n * 4);
        if (switched)
            assert_int_equal(b, GK_BACKEND_CUDA);
        switched |= b == GK_BACKEND_CUDA;
    }
    assert_true(switched);
}

static void temp_path(char *path, size_t size)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/gk_placement_%ld.txt", dir ? dir : "/tmp", (long)getpid());
}

static void test_save_then_load_round_trips(void **state)
{
    (void)state;
    char path[512];
    temp_path(path, sizeof path);
    gk_cost_model m = injected(), back;
    m.gpu_rate[GK_WORK_EXP][1] = 1.25e11;
    char why[256] = "";
    if (!gk__cost_model_save(&m, path, 0, why, sizeof why))
        fail_msg("cannot save: %s", why);
    gk__cost_model_defaults(&back);
    if (!gk__cost_model_load(&back, path, why, sizeof why))
        fail_msg("the saved file is refused: %s", why);
    remove(path);
    assert_float_equal(back.gpu_call_s, m.gpu_call_s, 1e-15);
    assert_float_equal(back.h2d_bytes_per_s, m.h2d_bytes_per_s, 1.0);
    for (int c = 0; c < GK_WORK_CLASSES; c++)
        for (int d = 0; d < 2; d++) {
            assert_float_equal(back.cpu_rate[c][d], m.cpu_rate[c][d], m.cpu_rate[c][d] * 1e-5);
            assert_float_equal(back.gpu_rate[c][d], m.gpu_rate[c][d], m.gpu_rate[c][d] * 1e-5);
        }
}

/* path holds a complete, valid cache file with line `replace` (a key's name) swapped for
 * `with` (NULL: dropped), and `extra` appended. */
static void write_variant(const char *path, const char *replace, const char *with,
                          const char *extra)
{
    gk_cost_model m = injected();
    char why[256];
    assert_true(gk__cost_model_save(&m, path, 0, why, sizeof why));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    f = fopen(path, "w");
    assert_non_null(f);
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        if (replace != NULL && strncmp(line, replace, strlen(replace)) == 0 &&
            line[strlen(replace)] == ' ') {
            if (with != NULL)
                fprintf(f, "%s\n", with);
        } else {
            fprintf(f, "%s\n", line);
        }
    }
    fputs(extra, f);
    fclose(f);
}

/* The file is refused, the model unchanged, and the reason names what is wrong. */
static void expect_refused(const char *path, const char *reason_part, const char *what)
{
    gk_cost_model m, before;
    gk__cost_model_defaults(&m);
    before = m;
    char why[256] = "";
    if (gk__cost_model_load(&m, path, why, sizeof why))
        fail_msg("%s: the file was accepted", what);
    assert_memory_equal(&m, &before, sizeof m);
    if (strstr(why, reason_part) == NULL)
        fail_msg("%s: the reason \"%s\" should mention \"%s\"", what, why, reason_part);
}

/* A file with a malformed or implausible line, or with a key missing, is refused as a whole and
 * changes nothing: "1e-" is not 1, inf and subnormal rates are no rates, and the tail of a
 * comment line over 255 characters is no key. */
static void test_malformed_file_is_refused(void **state)
{
    (void)state;
    static const struct {
        const char *replace, *with, *extra, *reason;
    } cases[] = {
        {NULL, NULL, "foo_bar 7\n", "unknown key \"foo_bar\""},
        {"gpu_call_s", "gpu_call_s -1", "", "outside"},
        {"cpu_gemm_f32", "cpu_gemm_f32", "", "not \"key value\""},
        {"gpu_call_s", "gpu_call_s 1e-", "", "is not a finite, normal number"},
        {"gpu_call_s", "gpu_call_s 0.001s", "", "is not a finite, normal number"},
        {"cpu_gemm_f32", "cpu_gemm_f32 inf", "", "is not a finite, normal number"},
        {"cpu_gemm_f32", "cpu_gemm_f32 nan", "", "is not a finite, normal number"},
        {"cpu_gemm_f32", "cpu_gemm_f32 1e999", "", "is not a finite, normal number"},
        {"cpu_gemm_f32", "cpu_gemm_f32 4.9e-324", "", "is not a finite, normal number"},
        {"cpu_gemm_f32", "cpu_gemm_f32 1e-300", "", "outside"},
        {"h2d_bytes_per_s", "h2d_bytes_per_s 1e30", "", "outside"},
        {"cpu_call_s", "cpu_call_s 0", "", "outside"},
        {"cpu_call_s", "cpu_call_s 5e-6 7", "", "not \"key value\""},
        {NULL, NULL, "gpu_call_s 1e-4\n", "appears twice"},
        {"gpu_exp_f64", NULL, "", "1 of its 32 keys are missing, gpu_exp_f64 the first"},
    };
    char path[512];
    temp_path(path, sizeof path);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_variant(path, cases[i].replace, cases[i].with, cases[i].extra);
        expect_refused(path, cases[i].reason, cases[i].with ? cases[i].with : cases[i].extra);
    }
    /* a comment over 255 characters whose tail reads like a key: a comment all the same */
    char comment[300];
    memset(comment, 'x', sizeof comment);
    comment[0] = '#';
    memcpy(comment + 255, "gpu_call_s 0.5\n", 16);
    write_variant(path, NULL, NULL, comment);
    gk_cost_model m;
    gk__cost_model_defaults(&m);
    char why[256] = "";
    if (!gk__cost_model_load(&m, path, why, sizeof why))
        fail_msg("a long comment refused the file: %s", why);
    assert_float_equal(m.gpu_call_s, injected().gpu_call_s, 1e-15);
    /* a line over 255 characters that is not a comment */
    char longline[400];
    memset(longline, ' ', sizeof longline);
    memcpy(longline + 350, "gpu_call_s 1e-3\n", 17);
    longline[0] = 'c';
    write_variant(path, NULL, NULL, longline);
    expect_refused(path, "longer than 255 characters", "a long line");
    remove(path);
    gk__cost_model_defaults(&m);
    assert_false(gk__cost_model_load(&m, "/nonexistent/gpukern/calibration.txt", why, sizeof why));
    assert_non_null(strstr(why, "No such file"));
}

/* A directory or a FIFO is no cache file: refused at once, without blocking on the FIFO (a
 * directory once loaded as an empty model, and a FIFO blocked forever). Saving into a FIFO
 * fails at once too. */
static void test_special_files_are_refused(void **state)
{
    (void)state;
    char dir[] = "/tmp/gk_placement_dir_XXXXXX";
    assert_non_null(mkdtemp(dir));
    expect_refused(dir, "not a regular file", "a directory");
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(20); /* a blocking open would otherwise hang the test for good */
    expect_refused(fifo, "not a regular file", "a FIFO");
    gk_cost_model m = injected();
    char why[256] = "";
    assert_false(gk__cost_model_save(&m, fifo, 0, why, sizeof why));
    assert_non_null(strstr(why, "not a regular file"));
    alarm(0);
    remove(fifo);
    rmdir(dir);
}

/* A NUL byte in a short line, or CRLF line ends, is refused for what it is, in printable
 * characters (once: "longer than 254 characters", and a raw carriage return). */
static void test_control_characters_are_named(void **state)
{
    (void)state;
    char path[512];
    temp_path(path, sizeof path);
    static const char nul_line[] = "gpu_call_s 1e-3\0x\n";
    write_variant(path, "gpu_call_s", NULL, "");
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fwrite(nul_line, 1, sizeof nul_line - 1, f);
    fclose(f);
    expect_refused(path, "holds byte 0x00 at column 16", "a NUL byte");
    write_variant(path, "gpu_call_s", "gpu_call_s 1e-3\r", "");
    expect_refused(path, "ends in a carriage return (CRLF line ends?)", "a CRLF line");
    write_variant(path, "gpu_call_s", "gpu_call_s\t1e-3\t7", "");
    expect_refused(path, "is not \"key value\": \"gpu_call_s\\t1e-3\\t7\"", "tabs shown as \\t");
    write_variant(path, "gpu_call_s", "gpu_call_s\x1b[2J 1e-3", "");
    expect_refused(path, "holds byte 0x1b at column 11", "an escape sequence");
    gk_cost_model m;
    char why[256] = "";
    assert_false(gk__cost_model_load(&m, path, why, sizeof why));
    for (const char *c = why; *c; c++)
        assert_true(*c >= 0x20 && *c <= 0x7e);
    remove(path);
}

/* A link planted where the cache file goes is neither followed nor replaced, and a file that
 * another user owns or may write is not read; a saved file is the user's alone (0600), written
 * whole through a rename (once a save truncated a link's target and a load read it, and a
 * world-writable file was loaded). */
static void test_cache_file_is_kept_safe(void **state)
{
    (void)state;
    char dir[] = "/tmp/gk_cache_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char target[600], link[600], file[600], why[256] = "";
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(link, sizeof link, "%s/sub/gpukern/calibration.txt", dir);
    snprintf(file, sizeof file, "%s/own.txt", dir);
    gk_cost_model m = injected();

    /* a save creates the directories (0700) and a file of mode 0600 */
    if (!gk__cost_model_save(&m, link, 1, why, sizeof why))
        fail_msg("cannot save into new directories: %s", why);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/sub/gpukern", dir);
    assert_int_equal(stat(sub, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(remove(link), 0);

    /* a link to a file: the target is neither overwritten nor read */
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    assert_int_equal(symlink(target, link), 0);
    assert_false(gk__cost_model_save(&m, link, 1, why, sizeof why));
    assert_non_null(strstr(why, "symbolic link"));
    f = fopen(target, "r");
    char text[64] = "";
    assert_non_null(fgets(text, sizeof text, f));
    fclose(f);
    assert_string_equal(text, "precious\n");
    assert_int_equal(unlink(link), 0);
    assert_true(gk__cost_model_save(&m, target, 0, why, sizeof why));
    chmod(target, 0600);
    assert_int_equal(symlink(target, link), 0);
    expect_refused(link, "a symbolic link, which is not followed", "a link to a valid file");

    /* writable by the group or by others */
    assert_true(gk__cost_model_save(&m, file, 0, why, sizeof why));
    assert_int_equal(chmod(file, 0666), 0);
    expect_refused(file, "writable by users other than its owner (mode 0666)", "mode 0666");
    assert_int_equal(chmod(file, 0620), 0);
    expect_refused(file, "writable by users other than its owner (mode 0620)", "mode 0620");
    assert_int_equal(chmod(file, 0644), 0);
    gk_cost_model back;
    gk__cost_model_defaults(&back);
    if (!gk__cost_model_load(&back, file, why, sizeof why))
        fail_msg("a file of mode 0644 is refused: %s", why);

    /* another user's file: only root can make one here */
    if (geteuid() == 0) {
        assert_int_equal(chown(file, 65534, 65534), 0);
        expect_refused(file, "owned by uid 65534, not by this user", "another user's file");
        assert_false(gk__cost_model_save(&m, file, 0, why, sizeof why));
        assert_non_null(strstr(why, "owned by uid 65534"));
    }
    unlink(file);
    unlink(link);
    unlink(target);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    rmdir(sub);
    assert_int_equal(rmdir(dir), 0);
}

/* GK_CALIBRATION: off and empty as documented, an absolute path taken whole, anything else (a
 * relative path, "OFF", which once wrote ./OFF) refused naming the value; XDG_CACHE_HOME used
 * whole however long, up to what a path may be, and refused beyond (one of ~505 characters was
 * once cut short and the file written elsewhere). */
static void test_cache_file_path(void **state)
{
    (void)state;
    char path[GK_CACHE_PATH_MAX], why[256];
    assert_int_equal(
        gk__cache_file_path("off", "/x", "/h", "d", "h", path, sizeof path, why, sizeof why),
        GK_CACHE_NONE);
    assert_int_equal(
        gk__cache_file_path("/a/cal.txt", "/x", "/h", "d", "h", path, sizeof path, why, sizeof why),
        GK_CACHE_NAMED);
    assert_string_equal(path, "/a/cal.txt");
    const char *bad[] = {"OFF", "cal.txt", "./cal.txt", "Off"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(
            gk__cache_file_path(bad[i], "/x", "/h", "d", "h", path, sizeof path, why, sizeof why),
            GK_CACHE_INVALID);
        char want[128];
        snprintf(want, sizeof want, "GK_CALIBRATION=%s is neither off, empty nor an absolute path",
                 bad[i]);
        assert_string_equal(why, want);
        assert_string_equal(path, "");
    }
    /* the value is shown in printable characters, and cut */
    assert_int_equal(gk__cache_file_path("a\x1b[2Jb\tc", "/x", "/h", "d", "h", path, sizeof path,
                                         why, sizeof why),
                     GK_CACHE_INVALID);
    assert_string_equal(why,
                        "GK_CALIBRATION=a\\x1b[2Jb\\tc is neither off, empty nor an absolute path");
    char long_value[100];
    memset(long_value, 'v', sizeof long_value - 1);
    long_value[sizeof long_value - 1] = '\0';
    assert_int_equal(
        gk__cache_file_path(long_value, "/x", "/h", "d", "h", path, sizeof path, why, sizeof why),
        GK_CACHE_INVALID);
    assert_non_null(strstr(why, "vvv... is neither off"));
    assert_int_equal(gk__cache_file_path("", "/x/c", "/h", "NVIDIA H1 (x)", "node-1", path,
                                         sizeof path, why, sizeof why),
                     GK_CACHE_DEFAULT);
    assert_string_equal(path, "/x/c/gpukern/calibration-NVIDIA_H1__x_-node_1.txt");
    assert_int_equal(
        gk__cache_file_path(NULL, "relative", "/h", "d", "h", path, sizeof path, why, sizeof why),
        GK_CACHE_DEFAULT);
    assert_string_equal(path, "/h/.cache/gpukern/calibration-d-h.txt");
    assert_int_equal(
        gk__cache_file_path(NULL, NULL, NULL, "d", "h", path, sizeof path, why, sizeof why),
        GK_CACHE_NONE);
    static char xdg[GK_CACHE_PATH_MAX + 100];
    memset(xdg, 'a', sizeof xdg - 1);
    xdg[0] = '/';
    xdg[505] = '\0';
    assert_int_equal(
        gk__cache_file_path(NULL, xdg, "/h", "d", "h", path, sizeof path, why, sizeof why),
        GK_CACHE_DEFAULT);
    assert_int_equal(strncmp(path, xdg, 505), 0);
    assert_string_equal(path + 505, "/gpukern/calibration-d-h.txt");
    xdg[505] = 'a';
    xdg[GK_CACHE_PATH_MAX - 20] = '\0';
    assert_int_equal(
        gk__cache_file_path(NULL, xdg, "/h", "d", "h", path, sizeof path, why, sizeof why),
        GK_CACHE_UNUSABLE);
    assert_non_null(strstr(why, "under XDG_CACHE_HOME (4076 characters) would be 4104 "
                                "characters, longer than a path can be (4095)"));
    assert_string_equal(path, "");
    assert_int_equal(
        gk__cache_file_path(xdg, NULL, NULL, "d", "h", path, sizeof path, why, sizeof why),
        GK_CACHE_NAMED);
    xdg[GK_CACHE_PATH_MAX - 20] = 'a';
    assert_int_equal(
        gk__cache_file_path(xdg, NULL, NULL, "d", "h", path, sizeof path, why, sizeof why),
        GK_CACHE_INVALID);
    assert_non_null(strstr(why, "GK_CALIBRATION (4195 characters) is longer than a path can be"));
}

/* The built-in figures keep tiny calls on the CPU and send very large compute to the GPU. */
/* A call the model gives the CPU outright (0.5 ms of CPU work against a 1 ms GPU call) on a CPU
 * that takes `cpu` times its prediction; the GPU as predicted. Returns the calls of the first
 * `n` that ran on the GPU from call `from` on, and how many were timed. */
static int run_outright(gk_placement_history *h, double cpu, int from, int n, int *timed)
{
    gk_cost_model m = injected();
    gk_workload w = {GK_WORK_RBF_PAIRS, 0, 5e5};
    assert_true(gk__cpu_wins_outright(&m, &w));
    int on_gpu = 0;
    *timed = 0;
    for (int i = 0; i < n; i++) {
        gk_placement p = gk__place_learned(&m, h, &w, 1e4, 1e4);
        *timed += p.predicted_s > 0.0;
        on_gpu += i >= from && p.backend == GK_BACKEND_CUDA;
        gk__placement_observe(h, &w, p, simulated(p, cpu, 1.0, 1.0));
    }
    return on_gpu;
}

/* Outright CPU calls whose CPU runs as predicted: all stay on the CPU, and only the audits,
 * GK_AUDIT_CALLS every GK_AUDIT_EVERY from the GK_AUDIT_AT-th, are timed (not the first calls:
 * they run cold). */
static void test_outright_calls_are_audited_now_and_then(void **state)
{
    (void)state;
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    int timed, n = 8 * GK_AUDIT_EVERY;
    assert_int_equal(run_outright(&h, 1.0, 0, n, &timed), 0);
    assert_int_equal(timed, 8 * GK_AUDIT_CALLS);
    gk_cost_model m = injected();
    gk_workload w = {GK_WORK_RBF_PAIRS, 0, 5e5};
    memset(&h, 0, sizeof h);
    for (int i = 0; i < GK_AUDIT_AT; i++)
        assert_true(gk__place_learned(&m, &h, &w, 1e4, 1e4).predicted_s == 0.0);
    assert_true(gk__place_learned(&m, &h, &w, 1e4, 1e4).audit);
}

/* A call the model gives the CPU outright, on a CPU that takes 9x its prediction, the GPU 7x
 * faster (as rbf_matrix 316^2 x 20 once measured). The audits see it, the bucket's calls
 * are then placed by the estimates and go to the GPU, and one slow audit alone does not. */
static void test_an_outright_cpu_measured_slow_loses_the_call(void **state)
{
    (void)state;
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    int timed, n = 4 * GK_AUDIT_EVERY;
    /* a full window of audits' measurements (the second round's second), and the call after
     * them is placed by the estimates */
    int from = GK_AUDIT_EVERY + GK_AUDIT_AT + GK_RATIO_WINDOW - GK_AUDIT_CALLS;
    int on_gpu = run_outright(&h, 9.0, from, n, &timed);
    assert_int_equal(on_gpu, n - from);
    /* A CPU at 1.5x the GPU's fixed call cost (3x its 0.5 ms prediction), under the 2x that
     * takes a bucket off the shortcut: still outright. */
    memset(&h, 0, sizeof h);
    assert_int_equal(run_outright(&h, 3.0, 0, n, &timed), 0);
    /* One audit's call preempted (40x), the others as predicted: still outright. */
    gk_cost_model m = injected();
    gk_workload w = {GK_WORK_RBF_PAIRS, 0, 5e5};
    memset(&h, 0, sizeof h);
    for (int i = 0; i < 4 * GK_AUDIT_EVERY; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 1e4, 1e4);
        assert_int_equal(p.backend, GK_BACKEND_CPU);
        gk__placement_observe(&h, &w, p, p.predicted_s * (i == GK_AUDIT_AT ? 40.0 : 1.0));
    }
}

/* The CPU measured slow by its audits (9x), later as predicted: the CPU is retried every
 * GK_RECHECK_EVERY calls however slow its estimate, and the shortcut comes back. */
static void test_a_cpu_measured_slow_is_rechecked(void **state)
{
    (void)state;
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    int timed;
    run_outright(&h, 9.0, 0, 2 * GK_AUDIT_EVERY, &timed);
    int n = 6 * GK_RECHECK_EVERY;
    int on_gpu = run_outright(&h, 1.0, 2 * GK_RECHECK_EVERY + GK_RETRY_CALLS, n, &timed);
    assert_int_equal(on_gpu, 0);
    assert_true(timed < n / 2); /* outright again: timed only in audits */
}

/* A CPU whose first calls at a size take 1.8x what its later ones do (as gemm 256^3 once did),
 * which put the GPU (1.2x its prediction, 0.9 s against the CPU's 1 s) 1.7x ahead, outside
 * GK_EXPLORE_BAND. The retries within GK_EXPLORE_WIDE_BAND every GK_EXPLORE_WIDE_EVERY calls find
 * the CPU faster, and AUTO keeps it. */
static void test_a_stale_slow_estimate_is_retried(void **state)
{
    (void)state;
    gk_cost_model m;
    gk_workload w = close_call(&m);
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    int cpu_calls = 0, on_cpu = 0, n = 4 * GK_EXPLORE_WIDE_EVERY;
    for (int i = 0; i < n; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 500, 500);
        double cpu = p.backend == GK_BACKEND_CPU && ++cpu_calls <= GK_RETRY_CALLS ? 1.8 : 1.0;
        gk__placement_observe(&h, &w, p, simulated(p, cpu, 1.2, 1.0));
        on_cpu += i >= 2 * GK_EXPLORE_WIDE_EVERY && p.backend == GK_BACKEND_CPU;
    }
    assert_true(on_cpu >= 2 * GK_EXPLORE_WIDE_EVERY - GK_RETRY_CALLS * (n / GK_EXPLORE_EVERY + 1));
}

/* Periodic retries that confirm the choice back off: the CPU 1.3x slower than the GPU call
 * after call is retried some 12 times in 8192 calls, not 256 (one every GK_EXPLORE_EVERY). */
static void test_confirmed_retries_back_off(void **state)
{
    (void)state;
    gk_cost_model m;
    gk_workload w = close_call(&m);
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    int retries = 0, n = 8192;
    for (int i = 0; i < n; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 500, 500);
        retries += p.cold;
        gk__placement_observe(&h, &w, p, simulated(p, 1.3 * 0.9, 1.0, 1.0));
    }
    int most = 2 + GK_EXPLORE_BACKOFF_MAX + n / (GK_EXPLORE_EVERY << GK_EXPLORE_BACKOFF_MAX);
    if (retries > most)
        fail_msg("%d retries of the CPU in %d calls, at most %d expected", retries, n, most);
}

/* Backed off, AUTO still follows a crossover that moves: the CPU, 1.3x slower for 4096 calls,
 * then 0.8x the GPU's time, has the calls within the longest period, the periods start again,
 * and it keeps them. */
static void test_a_backed_off_bucket_follows_a_change(void **state)
{
    (void)state;
    gk_cost_model m;
    gk_workload w = close_call(&m);
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    for (int i = 0; i < 4096; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 500, 500);
        gk__placement_observe(&h, &w, p, simulated(p, 1.3 * 0.9, 1.0, 1.0));
    }
    assert_int_equal(h.bucket[w.cls][0][ilogb(w.work)].backoff, GK_EXPLORE_BACKOFF_MAX);
    int period = GK_EXPLORE_EVERY << GK_EXPLORE_BACKOFF_MAX, on_cpu = 0, n = 8 * period;
    int switched = -1;
    for (int i = 0; i < n; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 500, 500);
        gk__placement_observe(&h, &w, p, simulated(p, 0.8 * 0.9, 1.0, 1.0));
        on_cpu += i >= 2 * period && p.backend == GK_BACKEND_CPU;
        if (switched < 0 && p.backend == GK_BACKEND_CPU && !p.retry) {
            switched = i; /* the first call the CPU has by choice: the periods start again */
            assert_int_equal(h.bucket[w.cls][0][ilogb(w.work)].backoff, 0);
        }
    }
    assert_true(switched >= 0 && switched <= period + GK_RETRY_CALLS);
    assert_true(on_cpu >= n - 2 * period - GK_RETRY_CALLS * (n / GK_EXPLORE_EVERY));
}

/* A machine of microsecond calls: a 0.2 us GPU call whose copies run at 10 GB/s, a 0.1 us CPU
 * call at 1e10 units/s. Work of 2000 units is not the CPU's outright (1000 would be) but takes
 * 0.3 us there, against 20 us of copies on the GPU. */
static gk_cost_model quick_machine(void)
{
    gk_cost_model m = injected();
    m.h2d_bytes_per_s = m.d2h_bytes_per_s = 1e10;
    m.gpu_call_s = 0.2e-6;
    m.cpu_call_s = 0.1e-6;
    for (int c = 0; c < GK_WORK_CLASSES; c++)
        for (int d = 0; d < 2; d++)
            m.cpu_rate[c][d] = 1e10;
    return m;
}

/* Placed on the estimates, measured there twice and no retry due: the bucket settles, and the
 * same call again takes the same backend untimed, one in GK_SETTLED_MAX timed (its 0.3 us expected
 * over 0.25 us of timing is GK_SETTLED_MAX at most). Another size in the octave, or the same work
 * with other bytes, is placed afresh. */
static void test_settled_calls_are_not_timed(void **state)
{
    (void)state;
    gk_cost_model m = quick_machine();
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    gk_workload w = {GK_WORK_STREAM, 0, 2000};
    assert_false(gk__cpu_wins_outright(&m, &w));
    int timed = 0, n = 20 * GK_SETTLED_MAX;
    for (int i = 0; i < n; i++) {
        gk_placement p = gk__place_learned(&m, &h, &w, 1e5, 1e5);
        assert_int_equal(p.backend, GK_BACKEND_CPU);
        assert_false(p.retry);
        /* the first two measure the CPU here, and the third settles the bucket */
        assert_int_equal(p.predicted_s > 0.0, i < 2 || (i - 2) % GK_SETTLED_MAX == 0);
        timed += p.predicted_s > 0.0;
        gk__placement_observe(&h, &w, p, simulated(p, 1.0, 1.0, 1.0));
    }
    assert_int_equal(timed, 2 + n / GK_SETTLED_MAX);
    gk_placement p = gk__place_learned(&m, &h, &w, 1e5, 1e5);
    assert_true(p.predicted_s == 0.0);
    gk_workload other = {GK_WORK_STREAM, 0, 2001};
    assert_true(gk__place_learned(&m, &h, &other, 1e5, 1e5).predicted_s > 0.0);
    assert_true(gk__place_learned(&m, &h, &w, 1e5, 2e5).predicted_s > 0.0);
    assert_true(gk__place_learned(&m, &h, &w, 1e5, 2e5).predicted_s == 0.0);
    /* The dispatcher's shortcut says the same, and counts as a call of the bucket. */
    uint32_t calls = h.bucket[GK_WORK_STREAM][0][ilogb(2000)].calls;
    gk_placement q = {GK_BACKEND_CUDA, 0.0, 0, 0, {0, 0}, 0};
    assert_true(gk__place_settled(&h, &w, 1e5, 2e5, &q));
    assert_int_equal(q.backend, GK_BACKEND_CPU);
    assert_int_equal(h.bucket[GK_WORK_STREAM][0][ilogb(2000)].calls, calls + 1);
    assert_false(gk__place_settled(&h, &w, 1e5, 3e5, &q));
}

/* Backends of n calls of w, with the GPU `gpu` times its prediction; settled: whether calls may
 * repeat a settled placement (else each is placed afresh, as before settling). Returns the
 * calls timed. */
static int run_close(const gk_cost_model *m, const gk_workload *w, double gpu, int settled, int n,
                     gk_backend *on, int *cold)
{
    static gk_placement_history h;
    memset(&h, 0, sizeof h);
    int timed = 0;
    for (int i = 0; i < n; i++) {
        if (!settled)
            h.bucket[w->cls][w->f64][ilogb(w->work)].settled_left = 0;
        gk_placement p = gk__place_learned(m, &h, w, 1e3, 1e3);
        on[i] = p.backend;
        cold[i] = p.cold;
        timed += p.predicted_s > 0.0;
        gk__placement_observe(&h, w, p, simulated(p, 1.0, gpu, 1.5));
    }
    return timed;
}

/* Settling changes where no call runs: on sub-microsecond calls with the GPU 1.2x the CPU, then
 * 0.9x, the retries (within GK_EXPLORE_BAND, every GK_EXPLORE_EVERY calls and backing off) come
 * at the very calls they come at when every call is placed afresh, and the choice follows the
 * same way; only fewer calls are timed. */
static void test_settling_keeps_the_retries(void **state)
{
    (void)state;
    gk_cost_model m = quick_machine();
    gk_workload w = {GK_WORK_STREAM, 0, 2000};    /* CPU 0.3 us */
    m.h2d_bytes_per_s = m.d2h_bytes_per_s = 1e11; /* GPU 0.2 us + 0.02 us of copies */
    enum { n = 6000 };
    static gk_backend on[2][n];
    static int cold[2][n];
    for (int k = 0; k < 2; k++) {
        double gpu = k == 0 ? 0.3 * 1.2 / 0.22 : 0.3 * 0.9 / 0.22;
        int fresh = run_close(&m, &w, gpu, 0, n, on[0], cold[0]);
        int settled = run_close(&m, &w, gpu, 1, n, on[1], cold[1]);
        assert_memory_equal(on[0], on[1], sizeof on[0]);
        assert_memory_equal(cold[0], cold[1], sizeof cold[0]);
        assert_int_equal(fresh, n);
        assert_true(settled < n / 8);
        int retries = 0;
        for (int i = 0; i < n; i++)
            retries += cold[1][i];
        assert_true(retries > 2);
    }
}

static void test_defaults_are_conservative(void **state)
{
    (void)state;
    gk_cost_model m;
    gk__cost_model_defaults(&m);
    gk_workload tiny = {GK_WORK_STREAM, 0, 3 * 1000 * 4};
    assert_int_equal(model_choice(&m, &tiny, 8000, 4000), GK_BACKEND_CPU);
    gk_workload gemm = {GK_WORK_GEMM, 0, 2.0 * 8192 * 8192 * 8192};
    double bytes = 3.0 * 8192 * 8192 * 4;
    assert_int_equal(model_choice(&m, &gemm, bytes, bytes / 3), GK_BACKEND_CUDA);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predictions_follow_the_table),
        cmocka_unit_test(test_small_work_stays_on_cpu_large_goes_to_gpu),
        cmocka_unit_test(test_dtype_selects_its_rate),
        cmocka_unit_test(test_outright_cpu_wins_match_the_prediction),
        cmocka_unit_test(test_single_crossover),
        cmocka_unit_test(test_measured_times_correct_the_model),
        cmocka_unit_test(test_clear_calls_are_not_explored),
        cmocka_unit_test(test_one_outlier_is_ignored),
        cmocka_unit_test(test_occasional_slow_copies_keep_the_gpu),
        cmocka_unit_test(test_a_cold_call_is_not_kept),
        cmocka_unit_test(test_new_sizes_borrow_the_nearest_measurement),
        cmocka_unit_test(test_a_misleading_neighbour_is_checked),
        cmocka_unit_test(test_a_neighbour_far_off_is_checked),
        cmocka_unit_test(test_cold_retries_do_not_hide_the_faster_backend),
        cmocka_unit_test(test_outright_calls_are_audited_now_and_then),
        cmocka_unit_test(test_an_outright_cpu_measured_slow_loses_the_call),
        cmocka_unit_test(test_a_cpu_measured_slow_is_rechecked),
        cmocka_unit_test(test_a_stale_slow_estimate_is_retried),
        cmocka_unit_test(test_confirmed_retries_back_off),
        cmocka_unit_test(test_a_backed_off_bucket_follows_a_change),
        cmocka_unit_test(test_settled_calls_are_not_timed),
        cmocka_unit_test(test_settling_keeps_the_retries),
        cmocka_unit_test(test_save_then_load_round_trips),
        cmocka_unit_test(test_malformed_file_is_refused),
        cmocka_unit_test(test_special_files_are_refused),
        cmocka_unit_test(test_control_characters_are_named),
        cmocka_unit_test(test_cache_file_is_kept_safe),
        cmocka_unit_test(test_cache_file_path),
        cmocka_unit_test(test_defaults_are_conservative),
    };
    return cmocka_run_group_tests_name("placement", tests, NULL, NULL);
}
