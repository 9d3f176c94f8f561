/* kernels: the work of each kernel in chunks of tens of microseconds, the duty-cycled loop that
 * runs them, and the buffers they work on. */
#ifndef IBENCH_KERNELS_H
#define IBENCH_KERNELS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cpi2/clock.h>

#include "plan.h"

/* What the threads of one run share: when to stop, and how sleepers are woken for it. */
struct ibench_run {
	atomic_int stop;      /* set once: every worker returns */
	atomic_int finished;  /* workers that returned */
	int64_t deadline_ns;  /* CLOCK_MONOTONIC; INT64_MAX for none */
	pthread_mutex_t lock; /* with wake: sleepers wait here, ibench_run_stop wakes them */
	pthread_cond_t wake;  /* CLOCK_MONOTONIC */
};

/* One thread of a kernel. buf/lines: the lines it works on (its own footprint, or its share of
 * a shared one; membw: the source, dst the destination, as many lines). */
struct ibench_worker {
	const struct ibench_plan *plan;
	uint64_t *buf, *dst;
	size_t lines;
	size_t pos;	   /* next line of a sweep, next function of l1i */
	size_t page_lines; /* memcap: lines in a page; it visits one line per page */
	size_t visited;	   /* memcap: lines of its share visited at least once */
	size_t l1i_funcs;  /* l1i: functions called round-robin */
	uint64_t rng;	   /* random line choice (l2, llc) */
	uint64_t acc[8];   /* results, kept so that no work is optimised away */
	double facc[8];
	uint64_t ops, bytes; /* done so far */
};

/* The unit an op counts, for reports ("cache line read-modify-write"). */
const char *ibench_op_unit(int kernel);

/* Set up the run: deadline after duration_ns from now (0: none). Returns 0 or -errno. */
int ibench_run_init(struct ibench_run *run, int64_t duration_ns);

/* Tell every worker to return, waking those that sleep. */
void ibench_run_stop(struct ibench_run *run);

void ibench_run_destroy(struct ibench_run *run);

/* Prepare a worker of plan: seed, l1i function count; buf/dst/lines are the caller's. */
void ibench_worker_init(struct ibench_worker *w, const struct ibench_plan *plan, int index);

/* One chunk of the worker's kernel (tens of microseconds), counted in w->ops and w->bytes. */
void ibench_kernel_chunk(struct ibench_worker *w);

/* The duty-cycled loop: in each period, chunks for plan->work_us, then sleep to the period's
 * end; until run->stop or the deadline. */
void ibench_worker_loop(struct ibench_worker *w, struct ibench_run *run);

enum { IBENCH_MAP_TOUCH = 1, IBENCH_MAP_HUGE = 2 };

/* Anonymous private memory of bytes. IBENCH_MAP_HUGE asks for transparent huge pages when it is
 * 2 MiB or more (fewer TLB misses to blur the caches; advice, it works without); IBENCH_MAP_TOUCH
 * writes it once so that its pages really exist. NULL with errno on failure. */
void *ibench_map(size_t bytes, unsigned flags);

void ibench_unmap(void *p, size_t bytes);

#endif
