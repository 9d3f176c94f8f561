/* probe: a sensitive workload for measuring interference. It repeats fixed units of work and
 * times each one: a pointer chase over a buffer that fits the LLC but not L2 (cache), one over
 * a buffer well beyond the LLC (mem), or a dependent chain of integer multiply-adds (cpu). */
#ifndef IBENCH_PROBE_H
#define IBENCH_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"
#include "machine.h"

enum { IBENCH_PROBE_CACHE, IBENCH_PROBE_CPU, IBENCH_PROBE_MEM, IBENCH_PROBE_KINDS };

#define IBENCH_PROBE_CACHE_L2_MULTIPLE 4u /* cache: 4 x L2, at most half the LLC */
#define IBENCH_PROBE_MEM_LLC_MULTIPLE 2u  /* mem: twice the LLC */
#define IBENCH_PROBE_MAX_UNITS (1u << 24) /* unit times kept at most */

struct ibench_probe {
	int kind;
	uint64_t footprint; /* bytes chased (0 for cpu) */
	uint64_t unit_ops;  /* dependent loads or multiply-adds per unit */
	void **buf;	    /* the chase: each line holds the address of the next */
	void **cursor;
	uint64_t x;	     /* the cpu chain */
	uint64_t max_units;  /* stop after this many (0: until the run stops) */
	uint64_t *unit_ns;   /* time of each unit */
	uint64_t units, cap; /* units done, room in unit_ns */
};

/* "cache", "cpu", "mem" to IBENCH_PROBE_*; -1 for an unknown name. */
int ibench_probe_kind_from_name(const char *name);

const char *ibench_probe_kind_name(int kind);

/* Size the probe (unit_ops 0: the kind's default) and refuse, with -EINVAL and the reason, a
 * buffer above IBENCH_MEM_MAX_FRACTION of mem_available (0: unknown, not checked). */
int ibench_probe_plan(struct ibench_probe *p, int kind, uint64_t unit_ops, uint64_t max_units,
		      const struct ibench_caches *caches, uint64_t mem_available, char *err,
		      size_t errsz);

/* Build the chase (a random cycle through every line, walked once to warm it) and the list
 * of unit times. Returns 0 or -ENOMEM. */
int ibench_probe_setup(struct ibench_probe *p);

/* One unit of work, untimed (the lab's victim does a fixed number per request). */
void ibench_probe_unit(struct ibench_probe *p);

/* Run timed units until the run stops, its deadline passes or max_units are done. */
void ibench_probe_loop(struct ibench_probe *p, struct ibench_run *run);

/* Percentile q (0-100, nearest rank) of the unit times, in ns; sorts unit_ns. 0 without units. */
uint64_t ibench_probe_percentile(struct ibench_probe *p, double q);

void ibench_probe_free(struct ibench_probe *p);

#endif
