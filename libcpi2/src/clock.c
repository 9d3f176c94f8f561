/* clock: see cpi2/clock.h. */
#include <cpi2/clock.h>

int64_t cpi2_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t cpi2_clock_us(clockid_t clock)
{
	return cpi2_clock_ns(clock) / 1000;
}
