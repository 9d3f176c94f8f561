/* groups: the perf event groups the collector holds open across windows, one set per cgroup
 * (one group per CPU), so a cgroup counted in consecutive windows is opened once, not once a
 * window; a cgroup that leaves the counted set has its descriptors closed at the next window. */
#ifndef COLLECTOR_GROUPS_H
#define COLLECTOR_GROUPS_H

#include "perf.h"
#include "resources.h"

#include <stdbool.h>
#include <stddef.h>

/* One cgroup's groups: fds (ncpu * n_events, leader first) and the readings at the start of the
 * current window (base, ncpu). Both buffers stay where they are while the entry lives. */
struct pgroup {
	char *task; /* owned copy of the task path */
	int root;
	unsigned long ino; /* the cgroup directory's inode when opened */
	int *fds;
	struct perf_reading *base;
	struct res_files *res; /* its signals' files, opened by the caller */
	bool seen;	       /* counted in the current window */
};

/* The table, sorted by (root, task) after groups_sort. */
struct groups {
	struct pgroup *v;
	size_t n, cap;
};

/* The entry of (root, task), or NULL. The table must be sorted. */
struct pgroup *groups_find(struct groups *g, int root, const char *task);

/* Open a cgroup's groups (cgroup_fd: its directory in the perf_event hierarchy), enabled or
 * not, and add them, unsorted, as seen. Returns the entry, or NULL with *rc = -errno. */
struct pgroup *groups_open(struct groups *g, const struct perf_spec *spec, int root,
			   const char *task, int cgroup_fd, const int *cpus, int ncpu, bool enabled,
			   int *rc);

/* Sort the table by (root, task). */
void groups_sort(struct groups *g);

/* Close and remove every entry not seen (and keep the table sorted); clear seen on the rest. */
void groups_close_unseen(struct groups *g, const struct perf_spec *spec, int ncpu);

/* Close everything and free the table. */
void groups_free(struct groups *g, const struct perf_spec *spec, int ncpu);

#endif
