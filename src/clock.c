/* SPDX-License-Identifier: MIT */
/* clock.c - seconds on a clock that never jumps, for AUTO's timed calls and its calibration. */
#include <time.h>

#include "core.h"

double gk__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
