/* cgpath: see cgpath.h. */
#include "cgpath.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int fail(char *err, size_t errsz, int rc, const char *fmt, const char *arg)
{
	snprintf(err, errsz, fmt, arg);
	return rc;
}

/* Is dir equal to base or inside it? Both are canonical absolute paths. */
static int is_within(const char *dir, const char *base)
{
	size_t n = strlen(base);

	if (strncmp(dir, base, n) != 0)
		return 0;
	return dir[n] == '\0' || dir[n] == '/' || (n == 1 && base[0] == '/');
}

static int check_name(const struct cgpath_policy *p, const char *task, size_t len, char *err,
		      size_t errsz)
{
	const char *c, *start;

	if (len == 0)
		return fail(err, errsz, -EINVAL, "%sempty cgroup path", "");
	if (len > CGPATH_MAX_TASK)
		return fail(err, errsz, -ENAMETOOLONG, "%scgroup path longer than 1024 bytes", "");
	if (memchr(task, '\0', len) != NULL)
		return fail(err, errsz, -EINVAL, "%scgroup path contains a NUL byte", "");
	for (c = task; c < task + len; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return fail(err, errsz, -EINVAL, "%scgroup path contains a control character", "");
	if (task[0] == '/') {
		size_t rl = strlen(p->root);

		/* An absolute path is accepted only when it names something below the root. */
		if (len <= rl + 1 || strncmp(task, p->root, rl) != 0 || task[rl] != '/')
			return fail(err, errsz, -EPERM, "absolute cgroup path outside the root %s", p->root);
		task += rl + 1;
		len -= rl + 1;
	}
	start = task;
	for (c = task;; c++) {
		if (c == task + len || *c == '/') {
			size_t n = (size_t)(c - start);

			if (n == 0)
				return fail(err, errsz, -EINVAL, "%sempty component in cgroup path", "");
			if (n > CGPATH_MAX_NAME)
				return fail(err, errsz, -ENAMETOOLONG, "%scgroup path component longer than 255 bytes", "");
			if ((n == 1 && start[0] == '.') || (n == 2 && start[0] == '.' && start[1] == '.'))
				return fail(err, errsz, -EPERM, "%scgroup path has a '.' or '..' component", "");
			for (int i = 0; i < p->n_protected; i++)
				if (strlen(p->protected_names[i]) == n && memcmp(start, p->protected_names[i], n) == 0)
					return fail(err, errsz, -EPERM, "cgroup is in protected %s", p->protected_names[i]);
			if (c == task + len)
				break;
			start = c + 1;
		}
	}
	return 0;
}

int cgpath_resolve(const struct cgpath_policy *p, const char *task, size_t len, char *out,
		   size_t outsz, char *err, size_t errsz)
{
	char joined[PATH_MAX], real[PATH_MAX], root[PATH_MAX];
	const char *rel = task;
	struct stat st;
	int rc;

	rc = check_name(p, task, len, err, errsz);
	if (rc)
		return rc;
	if (realpath(p->root, root) == NULL)
		return fail(err, errsz, -ENOENT, "cgroup root %s does not exist", p->root);
	if (task[0] == '/')
		rel = task + strlen(p->root) + 1;
	if (snprintf(joined, sizeof(joined), "%s/%.*s", root, (int)(len - (size_t)(rel - task)), rel) >=
	    (int)sizeof(joined))
		return fail(err, errsz, -ENAMETOOLONG, "%scgroup path too long", "");
	if (realpath(joined, real) == NULL)
		return fail(err, errsz, -ENOENT, "no such cgroup: %s", joined);
	/* realpath followed every symlink: the result must still be strictly below the root. */
	if (!is_within(real, root) || strcmp(real, root) == 0)
		return fail(err, errsz, -EPERM, "cgroup path escapes the root (resolves to %s)", real);
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
		return fail(err, errsz, -ENOENT, "not a cgroup directory: %s", real);
	if (p->own_cgroup && is_within(p->own_cgroup, real))
		return fail(err, errsz, -EPERM, "refusing to cap the enforcer's own cgroup or its parent %s", real);
	for (int i = 0; i < p->n_also; i++)
		if (is_within(p->also_protected[i], real) || is_within(real, p->also_protected[i]))
			return fail(err, errsz, -EPERM, "refusing to cap protected cgroup %s", real);
	if (strlen(real) + 1 > outsz)
		return fail(err, errsz, -ENAMETOOLONG, "%sresolved cgroup path too long", "");
	strcpy(out, real);
	return 0;
}

int cgpath_set_protected(struct cgpath_policy *p, char *buf)
{
	char *save = NULL, *tok;

	p->n_protected = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		if (p->n_protected == CGPATH_MAX_PROTECTED)
			return -E2BIG;
		p->protected_names[p->n_protected++] = tok;
	}
	return 0;
}
