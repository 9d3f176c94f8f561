/* stats: order statistics of measured times, for the programs that report percentiles (the
 * ibench probe, the lab's victim). */
#ifndef CPI2_STATS_H
#define CPI2_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Percentile q (0-100, nearest rank) of v[0..n); sorts v. 0 when n is 0. */
uint64_t cpi2_percentile_u64(uint64_t *v, size_t n, double q);

#endif
