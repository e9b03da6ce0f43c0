/* SPDX-License-Identifier: MIT */
/* test_team.c - the CPU backend's free-core estimate (cpu/cpu_team.c) on a machine made busy. */
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busy_machine_gives_one_thread),
    };
    return cmocka_run_group_tests_name("team", tests, NULL, NULL);
}
