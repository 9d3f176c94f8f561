/* plan: what a kernel does at an intensity, computed before it runs: the share of each period
 * it works (duty) and the bytes it keeps in use (footprint), both from the intensity as iBench
 * does, the footprint from this machine's cache sizes or available memory. The README's
 * intensity table states the same mapping. */
#ifndef IBENCH_PLAN_H
#define IBENCH_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"

enum ibench_kernel {
	IBENCH_CPU_INT,
	IBENCH_CPU_FP,
	IBENCH_L1I,
	IBENCH_L1D, /* the data kernels: l1d and after */
	IBENCH_L2,
	IBENCH_LLC,
	IBENCH_MEMBW,
	IBENCH_MEMCAP,
	IBENCH_KERNELS
};

#define IBENCH_LINE 64u /* bytes a footprint is counted in (a cache line) */
#define IBENCH_LINE_WORDS (IBENCH_LINE / sizeof(uint64_t))
#define IBENCH_MEMBW_LLC_MULTIPLE 4u /* membw streams over this many times the LLC */
#define IBENCH_MEM_MAX_FRACTION 0.8  /* no kernel allocates more of MemAvailable than this */

struct ibench_plan {
	int kernel;	      /* enum ibench_kernel */
	long intensity;	      /* 0-100 */
	long period_us;	      /* duty period */
	long work_us;	      /* worked in each period: period_us * intensity / 100 */
	uint64_t footprint;   /* bytes of data (l1i: of code) the kernel keeps in use */
	bool per_thread;      /* each thread has a footprint of its own (core-private caches) */
	uint64_t alloc_bytes; /* bytes allocated in all: footprint, times threads if per_thread */
};

/* Index of name in names[0..n), or -1. */
int ibench_name_index(const char *const *names, int n, const char *name);

/* "cpu-int", ... "memcap" to enum ibench_kernel; -1 for an unknown name. */
int ibench_kernel_from_name(const char *name);

/* The name of a kernel ("?" out of range). */
const char *ibench_kernel_name(int kernel);

/* The kernels' names as "cpu-int, cpu-fp, ..." for help and errors. */
const char *ibench_kernel_names(void);

/* Plan a kernel: intensity 0-100, period_us > 0, threads >= 1, the machine's caches, its
 * MemAvailable in bytes (0: unknown) and memcap's share of it (0 < f <= 0.8). Refuses, with
 * -EINVAL and the reason, an intensity or period out of range, memcap without MemAvailable, and
 * any plan that would allocate more than IBENCH_MEM_MAX_FRACTION of MemAvailable. */
int ibench_plan_make(int kernel, long intensity, long period_us, long threads,
		     const struct ibench_caches *caches, uint64_t mem_available,
		     double memcap_fraction, struct ibench_plan *plan, char *err, size_t errsz);

/* Bytes of a footprint at an intensity: ceil(size * intensity / 100) in whole lines, 0 at 0. */
uint64_t ibench_scaled_footprint(uint64_t size, long intensity);

#endif
