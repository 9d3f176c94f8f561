/* tasknuma: a task's NUMA score over a window (seed 004, libcpi2's numa.h): its CPU time per
 * node from cpuacct.usage_percpu (cgroup v1) or, where there is none, from its per-CPU perf
 * counts (the group's first event: cycles or the software event's time), and its memory per
 * node at the window's end from memory.numa_stat (its cgroup v2 directory, else the same path
 * in the v1 memory hierarchy). No score (null) where either is missing or zero. */
#ifndef COLLECTOR_TASKNUMA_H
#define COLLECTOR_TASKNUMA_H

#include "perf.h"

#include <cpi2/numa.h>
#include <stdbool.h>
#include <stdint.h>

/* Per-node CPU time of a cgroup from DIR/cpuacct.usage_percpu (ns, by node index of t).
 * Returns 0, -ENOENT (no such file: a v2 cgroup) or -errno/-EINVAL. */
int tasknuma_read_percpu(const struct cpi2_numa_topo *t, const char *dir, uint64_t *node);

/* Per-node counts of the window's per-CPU perf readings (CPU cpus[k] for readings[k], the first
 * event scaled by enabled / running). Returns 0 or -EINVAL (a CPU with counts but no node). */
int tasknuma_perf_by_node(const struct cpi2_numa_topo *t, const int *cpus, int ncpu,
			  const struct perf_reading *readings, uint64_t *node);

/* Per-node memory of a cgroup: DIR/memory.numa_stat for the first of dirs[0..n) that has one
 * (a "" entry is skipped). Returns 0, -ENOENT (none has the file) or -errno/-EINVAL. */
int tasknuma_read_memory(const struct cpi2_numa_topo *t, const char *const *dirs, int n,
			 uint64_t *mem);

#endif
