/* SPDX-License-Identifier: MIT */
/* cpu_team.c - how many threads an op gets: the context's count, capped by the cores free now. */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_internal.h"

/* Why: an OpenMP team ends in a barrier, so an op lasts as long as its slowest thread. When
 * another process keeps a core busy, the team's thread on that core gets a share of it, and at
 * each wake-up may wait a whole scheduler slice for it; measured on two cores with one busy, a
 * default context took 2-3x the time of a one-thread one (fill 1e6, rbf_matrix 1024^2 x 20),
 * with 8 ms plateaus for 1e6-element ops. OMP_WAIT_POLICY=passive recovered only part of it,
 * and no schedule can help: the
 * barrier waits for every thread of the team, also one that is not running. So no thread is
 * put where no core is free: the team is the context's thread count
 * capped by the cores that other processes leave idle, measured from /proc/stat (their CPU
 * time over the cores this process may run on, minus this process's own) over windows of
 * GK_TEAM_WINDOW_NS. Work is still partitioned by the context's count where results depend
 * on the partition (rbf_matvec's column splits), so results never depend on the load. */
#define GK_TEAM_WINDOW_NS ((int64_t)100 * 1000 * 1000)

/* A core counts as free when at least this much of it is idle: a thread on a core that
 * another process holds 75% of the time is slower than leaving its share to the others. */
#define GK_TEAM_FREE_MIN 0.75

static struct {
    pthread_once_t once;
    pthread_mutex_t lock;
    int cpus;                /* CPUs in this process's affinity mask */
    cpu_set_t mask;          /* which /proc/stat lines count */
    int64_t tick_ns;         /* one clock tick of /proc/stat */
    int64_t wall_ns;         /* the last sample: CLOCK_MONOTONIC, */
    int64_t busy_ns;         /* all CPUs' non-idle time over the mask, */
    int64_t own_ns;          /* this process's CPU time; */
    int valid;               /* a sample exists */
    _Atomic int free;        /* the estimate: free cores, at least 1 */
    _Atomic int64_t next_ns; /* when to sample again (CLOCK_MONOTONIC_COARSE) */
} team = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static int64_t clock_ns(clockid_t c)
{
    struct timespec t;
    if (clock_gettime(c, &t) != 0)
        return 0;
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void team_init(void)
{
    CPU_ZERO(&team.mask);
    if (sched_getaffinity(0, sizeof team.mask, &team.mask) != 0)
        CPU_ZERO(&team.mask);
    team.cpus = CPU_COUNT(&team.mask);
    long hz = sysconf(_SC_CLK_TCK);
    team.tick_ns = hz > 0 ? 1000000000 / hz : 10000000;
    atomic_store(&team.free, team.cpus > 0 ? team.cpus : 1);
}

/* Non-idle time of the CPUs in the mask since boot, from /proc/stat's "cpuN" lines (user,
 * nice, system, irq, softirq, steal: steal is a VM's core taken by the host); -1 if unreadable. */
static int64_t read_busy_ns(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (f == NULL)
        return -1;
    char line[512];
    int64_t ticks = 0;
    int seen = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned cpu;
        unsigned long long v[8];
        if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
            continue;
        if (sscanf(line + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 9)
            continue;
        if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &team.mask))
            continue;
        ticks += (int64_t)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
        seen++;
    }
    fclose(f);
    return seen > 0 ? ticks * team.tick_ns : -1;
}

/* Threads of this process that are runnable now (state R in /proc/self/task/N/stat), this
 * one included; 1 if unreadable. */
static int own_running(void)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return 1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[64], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
            snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name) >= (int)sizeof path)
            continue;
        FILE *f = fopen(path, "re");
        if (f == NULL)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
        n += p != NULL && p[1] == ' ' && p[2] == 'R';
    }
    closedir(d);
    return n > 0 ? n : 1;
}

/* Before a window has passed: the tasks runnable now (/proc/loadavg's fourth field) that are
 * not this process's. Its own threads are not load, as in the windows: a process that links
 * OpenBLAS starts with OpenBLAS's pool spinning for some 0.1 s (2^28 cycles), and counted,
 * they made the first 100 ms of every process run on one thread (gkbench --quick on two cores:
 * its first 45 calls). Read once per process, so the cost of listing the threads does not
 * matter. */
static int first_estimate(void)
{
    FILE *f = fopen("/proc/loadavg", "re");
    int running = 0, total = 0, n = 0;
    if (f != NULL) {
        n = fscanf(f, "%*s %*s %*s %d/%d", &running, &total);
        fclose(f);
    }
    if (n != 2 || running < 1)
        return team.cpus;
    int others = running - own_running();
    return team.cpus - (others > 0 ? others : 0);
}

static void sample(void)
{
    int64_t wall = clock_ns(CLOCK_MONOTONIC), own = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    int64_t busy = read_busy_ns();
    int est;
    if (busy < 0) {
        est = team.cpus; /* no /proc: nothing to go by, so trust the configuration */
    } else if (!team.valid || wall - team.wall_ns <= 0) {
        est = first_estimate();
    } else {
        double others =
            (double)((busy - team.busy_ns) - (own - team.own_ns)) / (double)(wall - team.wall_ns);
        others = others < 0.0 ? 0.0 : others;
        est = (int)((double)team.cpus - others + (1.0 - GK_TEAM_FREE_MIN));
    }
    if (busy >= 0) {
        team.wall_ns = wall;
        team.busy_ns = busy;
        team.own_ns = own;
        team.valid = 1;
    }
    atomic_store(&team.free, est < 1 ? 1 : est);
}

int gk__cpu_free_cores(void)
{
    pthread_once(&team.once, team_init);
    int64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
    if (now >= atomic_load_explicit(&team.next_ns, memory_order_relaxed) &&
        pthread_mutex_trylock(&team.lock) == 0) {
        if (now >= atomic_load(&team.next_ns)) {
            sample();
            atomic_store(&team.next_ns, now + GK_TEAM_WINDOW_NS);
        }
        pthread_mutex_unlock(&team.lock);
    }
    return atomic_load_explicit(&team.free, memory_order_relaxed);
}
