/* cgpath: open a cgroup named in a message, safely.
 *
 * A message from the network names a task's cgroup relative to the configured cgroup root (or
 * absolute, below it). Before anything is written, the name is checked (no NUL, no control
 * characters, no "..", "." or empty components, bounded lengths), then the directory is opened
 * below the root WITHOUT following any symlink: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS) where the kernel has it, an O_NOFOLLOW walk one component at a time
 * from the root's descriptor otherwise. Every read and write of its cpu.* files then goes
 * through that descriptor (limits.c). The directory opened must be a task cgroup: a leaf (no
 * child cgroup directory), or, when task_depth is set, a cgroup exactly task_depth levels below
 * the root whose children are leaves (a pod and its containers; never a QoS slice that holds
 * pods, whatever its depth); and
 * not protected: a configured protected name as any component of the resolved path, the
 * enforcer's own cgroup or an ancestor of it, a protected_cgroups directory, its ancestors or
 * its descendants. */
#ifndef CPI2_ENFORCER_CGPATH_H
#define CPI2_ENFORCER_CGPATH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CGPATH_MAX_TASK 1024 /* longest task path accepted from a message */
#define CGPATH_MAX_NAME 255  /* longest path component */
#define CGPATH_MAX_PROTECTED 32

struct cgpath_policy {
	const char *root;				   /* cgroup root the task is relative to */
	const char *protected_names[CGPATH_MAX_PROTECTED]; /* e.g. "system.slice" */
	int n_protected;
	const char *own_cgroup; /* absolute dir of the enforcer's own cgroup, or NULL */
	const char
	    *also_protected[CGPATH_MAX_PROTECTED]; /* absolute dirs never capped (collector) */
	int n_also;
	int task_depth; /* 0: only leaf cgroups are tasks; N: only those exactly N levels below root
			 * whose children are leaves */
};

/* A cgroup directory opened for a cap: its canonical path, descriptor and identity. */
struct cgpath_target {
	char dir[PATH_MAX];
	size_t rel_at; /* dir + rel_at: the path relative to the root */
	int fd;	       /* O_RDONLY | O_DIRECTORY; the caller closes it */
	dev_t dev;
	ino_t ino;
};

/* Tests: true forces the O_NOFOLLOW component walk instead of openat2. */
extern bool cgpath_no_openat2;

/* Check a task name from a message (len bytes, may contain NUL), open its directory below
 * policy->root and check that it is an unprotected task cgroup. Returns 0 with *t, or -EINVAL /
 * -ENOENT / -EPERM / -ENAMETOOLONG with a reason in err. */
int cgpath_open(const struct cgpath_policy *policy, const char *task, size_t len,
		struct cgpath_target *t, char *err, size_t errsz);

/* Open again a directory opened by cgpath_open before (its canonical path dir), the same way
 * (below the root, no symlink). When ino is not 0 it must still be the same directory: a cgroup
 * removed and created again under the name is another one. Returns 0 with *fd, -ENOENT when it
 * is gone, -ESTALE when it was replaced (another directory, or a symlink on its path now),
 * -EPERM when dir is not below the root, or -errno; err says why. */
int cgpath_reopen(const struct cgpath_policy *policy, const char *dir, dev_t dev, ino_t ino,
		  int *fd, char *err, size_t errsz);

/* Whether the cgroup opened as fd holds a process, itself or a cgroup below it (two levels: a pod
 * and its containers): v2's cgroup.events "populated", else v1's cgroup.procs of it and its
 * children. Returns 1 (it does), 0 (no process: what ran there has ended), -1 when the files do
 * not say (not a cgroup file system). */
int cgpath_populated(int fd);

/* Split a comma-separated list in place into items (spaces around each item removed, empty
 * items skipped). Returns the number of items, or -E2BIG when there are more than max. */
int cgpath_split_list(char *buf, const char **items, int max);

/* Parse a comma-separated list into policy->protected_names (pointers into buf, which is
 * modified). Returns 0 or -E2BIG. */
int cgpath_set_protected(struct cgpath_policy *policy, char *buf);

#endif
