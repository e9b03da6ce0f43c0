/* SPDX-License-Identifier: MIT */
/* test_team.c - the CPU backend's free-core estimate (cpu/cpu_team.c) on a machine made busy, and
 * the rule for its parallel regions' thread counts (gk__cpu_region). */
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cpu_internal.h"

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static atomic_int spin_stop;

static void *spin(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
        ;
    return NULL;
}

/* Runnable tasks on the machine now, from /proc/loadavg's fourth field; -1 if unreadable. */
static int runnable_now(void)
{
    FILE *f = fopen("/proc/loadavg", "re");
    int running = -1, total = 0;
    if (f != NULL) {
        if (fscanf(f, "%*s %*s %*s %d/%d", &running, &total) != 2)
            running = -1;
        fclose(f);
    }
    return running;
}

/* The first estimate of a process (before a 100 ms window has passed) must not count the
 * process's own threads: a program that links OpenBLAS starts with its pool spinning, and
 * counted, it cut every process's first 100 ms to one thread. Must run first in the process:
 * cpus - 1 spinning threads of ours and this one are runnable, nothing else may be. */
static void test_own_threads_are_not_load(void **state)
{
    (void)state;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    assert_int_equal(sched_getaffinity(0, sizeof mask, &mask), 0);
    int cpus = CPU_COUNT(&mask);
    if (cpus < 2)
        skip();
    if (cpus > 64)
        cpus = 64;
    pthread_t th[64];
    int started = 0;
    atomic_store(&spin_stop, 0);
    for (int i = 0; i < cpus - 1; i++)
        started += pthread_create(&th[started], NULL, spin, NULL) == 0;
    sleep_ms(50);
    int before = runnable_now();
    int est = gk__cpu_free_cores();
    int after = runnable_now();
    atomic_store(&spin_stop, 1);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (started < cpus - 1 || before != started + 1 || after != started + 1)
        skip(); /* another process was runnable too: nothing to compare with */
    if (est != CPU_COUNT(&mask))
        fail_msg("%d spinning threads of this process on %d CPUs, nothing else runnable: the "
                 "first estimate was %d free cores, not %d",
                 started, CPU_COUNT(&mask), est, CPU_COUNT(&mask));
}

/* With a busy-looping child process on every CPU this process may use, no core is free: the
 * estimate must come down to one thread (within a few 100 ms windows), whatever else the
 * machine runs. At 1.1.0 a default context would have put a thread on every core. */
static void test_busy_machine_gives_one_thread(void **state)
{
    (void)state;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    assert_int_equal(sched_getaffinity(0, sizeof mask, &mask), 0);
    int cpus = CPU_COUNT(&mask);
    if (cpus < 2)
        skip();
    if (cpus > 64)
        cpus = 64; /* enough to show it; a bigger host keeps the rest */
    int before = gk__cpu_free_cores();
    assert_true(before >= 1);
    pid_t kids[64];
    int started = 0;
    for (int i = 0; i < cpus; i++) {
        pid_t p = fork();
        if (p == 0) {
            for (volatile unsigned long v = 0;; v++)
                ;
        }
        if (p > 0)
            kids[started++] = p;
    }
    int seen = 0, last = 0;
    sleep_ms(250);
    for (int tries = 0; tries < 100 && !seen; tries++) {
        last = gk__cpu_free_cores();
        seen = last == 1;
        sleep_ms(20);
    }
    for (int i = 0; i < started; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    if (started == CPU_COUNT(&mask) && !seen)
        fail_msg("%d busy processes on %d CPUs: the estimate stayed at %d free cores (was %d)",
                 started, CPU_COUNT(&mask), last, before);
    if (started < CPU_COUNT(&mask))
        skip(); /* could not fork enough to load every CPU */
}

/* Regions of fewer tasks than the team still open the whole team, and one task opens none. */
static void test_region_is_the_team_or_one_thread(void **state)
{
    (void)state;
    assert_int_equal(gk__cpu_region(16, 6), 16);
    assert_int_equal(gk__cpu_region(16, 2), 16);
    assert_int_equal(gk__cpu_region(16, 100), 16);
    assert_int_equal(gk__cpu_region(16, 1), 1);
    assert_int_equal(gk__cpu_region(16, 0), 1);
    assert_int_equal(gk__cpu_region(1, 100), 1);
}

#define REGION_TEAM 4
#define MAX_TIDS 256

/* Regions of changing task counts, as one op's packing and tiles, then the next op's, ask for:
 * opened through gk__cpu_region they run on the same REGION_TEAM threads throughout. Opened with
 * min(tasks, team) threads, libgomp ended the threads a smaller region left out and created new
 * ones (new thread ids) for the next larger one: 0.5 ms a call on a 16-core host. */
static void test_regions_keep_their_threads(void **state)
{
    (void)state;
    static const size_t tasks[] = {4, 2, 3, 1, 2, 4, 3, 2, 4};
    long tids[MAX_TIDS];
    int seen = 0, overflow = 0;
    for (size_t r = 0; r < sizeof tasks / sizeof tasks[0]; r++) {
        int nt = gk__cpu_region(REGION_TEAM, tasks[r]);
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            long me = (long)syscall(SYS_gettid);
#pragma omp critical
            {
                int known = 0;
                for (int i = 0; i < seen; i++)
                    known |= tids[i] == me;
                if (!known && seen < MAX_TIDS)
                    tids[seen++] = me;
                overflow |= !known && seen == MAX_TIDS;
            }
        }
    }
    assert_false(overflow);
    if (seen > REGION_TEAM)
        fail_msg("regions of %d threads or one ran on %d distinct threads: the pool was cut and "
                 "refilled",
                 REGION_TEAM, seen);
    assert_int_equal(seen, REGION_TEAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_threads_are_not_load), /* first: the first estimate */
        cmocka_unit_test(test_busy_machine_gives_one_thread),
        cmocka_unit_test(test_region_is_the_team_or_one_thread),
        cmocka_unit_test(test_regions_keep_their_threads),
    };
    return cmocka_run_group_tests_name("team", tests, NULL, NULL);
}
