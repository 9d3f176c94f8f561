/* discover: the cgroups under a root directory, walked afresh every window so that cgroups
 * which appear or disappear between windows are picked up or let go. */
#ifndef COLLECTOR_DISCOVER_H
#define COLLECTOR_DISCOVER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* Where one configured root's cgroups are read from. */
struct cg_root {
	char path[PATH_MAX];	   /* the root directory that task paths are relative to */
	int version;		   /* 2: unified (cgroup.controllers in the root), 1: v1 */
	char usage_base[PATH_MAX]; /* directory of cpu.stat / cpuacct.usage for the root */
	char perf_base[PATH_MAX];  /* the root's directory in the perf_event hierarchy, or "" */
	char v2_base[PATH_MAX];	   /* the root's directory in the v2 hierarchy (PSI), or "" */
	char unified[PATH_MAX];	   /* the v2 mount, or "" */
	char mem_base[PATH_MAX];   /* the root's directory in the v1 memory hierarchy, or "" */
};

/* One discovered cgroup. */
struct cg_entry {
	char *task; /* path relative to the root, no leading '/' (owned by the list) */
	int root;   /* index of its root */
};

struct cg_list {
	struct cg_entry *v;
	size_t n, cap;
	size_t truncated; /* cgroups left out because the list reached its limit */
};

/* Describe the root at path: its version and where its usage and perf_event directories are,
 * given the mounts (perf_event v1 mount, else the unified one for v1 roots; cpuacct mount for
 * v1 roots without cpuacct.usage), and its v2 directory (a v1 root's path below its mount, under
 * the unified mount: the systemd hybrid layout). Returns 0 or -errno (-ENOTDIR: not a directory).
 */
struct cpi2_cgroup_mounts;
int cg_root_init(struct cg_root *r, const char *path, const struct cpi2_cgroup_mounts *m);

/* Append every cgroup (directory) strictly below root r down to max_depth levels, in sorted
 * order, at most max_entries in the list. A directory that vanishes during the walk is
 * skipped. Returns 0 or -errno (the root itself unreadable, or out of memory). */
int cg_discover(struct cg_list *l, const struct cg_root *r, int root_index, int max_depth,
		size_t max_entries);

/* Whether entry i has a descendant in the walk. cg_discover lists a cgroup's subtree right
 * after it, so that is whether entry i+1 is under it (same root, path "TASK/..."). A cgroup
 * whose children were not walked (at max_depth, or cut by max_entries) is not a parent here:
 * none of its descendants is in the list, so nothing else counts what it counts. */
bool cg_is_parent(const struct cg_list *l, size_t i);

/* The first descendant j of entry i in the list with mark[j] true, or l->n if there is none
 * (mark: one flag per entry). */
size_t cg_marked_descendant(const struct cg_list *l, size_t i, const bool *mark);

/* Empty the list (keeps its memory). */
void cg_list_clear(struct cg_list *l);

/* Free the list. */
void cg_list_free(struct cg_list *l);

#endif
