/* clock: the time of a clock (CLOCK_REALTIME for timestamps that leave the host, CLOCK_MONOTONIC
 * for intervals and deadlines) as one integer. */
#ifndef CPI2_CLOCK_H
#define CPI2_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Microseconds of clock (since the epoch for CLOCK_REALTIME). */
int64_t cpi2_clock_us(clockid_t clock);

/* Nanoseconds of clock. */
int64_t cpi2_clock_ns(clockid_t clock);

#endif
