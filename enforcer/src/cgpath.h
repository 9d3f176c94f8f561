/* cgpath: resolve a cgroup named in a message to a directory, safely.
 *
 * A message from the network names a task's cgroup relative to one of the configured cgroup
 * roots. Before anything is written, the name is checked (no NUL, no control characters, no
 * "..", ".", or empty components, bounded lengths), resolved with realpath(), and the result
 * must lie strictly inside the root, be a directory, and not be protected: a configured
 * protected slice (any component equal to one), the enforcer's own cgroup or an ancestor of it.
 */
#ifndef CPI2_ENFORCER_CGPATH_H
#define CPI2_ENFORCER_CGPATH_H

#include <stddef.h>

#define CGPATH_MAX_TASK 1024 /* longest task path accepted from a message */
#define CGPATH_MAX_NAME 255  /* longest path component */
#define CGPATH_MAX_PROTECTED 32

struct cgpath_policy {
	const char *root;                            /* cgroup root the task is relative to */
	const char *protected_names[CGPATH_MAX_PROTECTED]; /* e.g. "system.slice" */
	int n_protected;
	const char *own_cgroup; /* absolute dir of the enforcer's own cgroup, or NULL */
	const char *also_protected[CGPATH_MAX_PROTECTED]; /* absolute dirs never capped (collector) */
	int n_also;
};

/* Check a task name from a message (len bytes, may contain NUL) and resolve it under
 * policy->root into out. Returns 0, or -EINVAL / -ENOENT / -EPERM / -ENAMETOOLONG with a
 * reason in err. */
int cgpath_resolve(const struct cgpath_policy *policy, const char *task, size_t len, char *out,
		   size_t outsz, char *err, size_t errsz);

/* Parse a comma-separated list into policy->protected_names (pointers into buf, which is
 * modified). Returns 0 or -E2BIG. */
int cgpath_set_protected(struct cgpath_policy *policy, char *buf);

#endif
