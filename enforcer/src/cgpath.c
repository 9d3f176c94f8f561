/* cgpath: see cgpath.h. */
#include "cgpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

bool cgpath_no_openat2;

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

/* The part of an absolute task name below root (configured or canonical), or NULL. */
static const char *below(const char *task, size_t len, const char *root)
{
	size_t rl = strlen(root);

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (len <= rl + 1 || strncmp(task, root, rl) != 0 || task[rl] != '/')
		return NULL;
	return task + rl + 1;
}

/* The name's syntax; *rel and *rellen: the part relative to the root. */
static int check_name(const struct cgpath_policy *p, const char *root_real, const char *task,
		      size_t len, const char **rel, size_t *rellen, char *err, size_t errsz)
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
			return fail(err, errsz, -EINVAL,
				    "%scgroup path contains a control character", "");
	*rel = task;
	if (task[0] == '/') {
		/* An absolute path is accepted only when it names something below the root. */
		*rel = below(task, len, p->root);
		if (!*rel)
			*rel = below(task, len, root_real);
		if (!*rel)
			return fail(err, errsz, -EPERM, "absolute cgroup path outside the root %s",
				    p->root);
	}
	*rellen = len - (size_t)(*rel - task);
	start = *rel;
	for (c = *rel;; c++) {
		if (c == *rel + *rellen || *c == '/') {
			size_t n = (size_t)(c - start);

			if (n == 0)
				return fail(err, errsz, -EINVAL, "%sempty component in cgroup path",
					    "");
			if (n > CGPATH_MAX_NAME)
				return fail(err, errsz, -ENAMETOOLONG,
					    "%scgroup path component longer than 255 bytes", "");
			if ((n == 1 && start[0] == '.') ||
			    (n == 2 && start[0] == '.' && start[1] == '.'))
				return fail(err, errsz, -EPERM,
					    "%scgroup path has a '.' or '..' component", "");
			if (c == *rel + *rellen)
				break;
			start = c + 1;
		}
	}
	return 0;
}

/* Open rel (relative, checked) below rootfd without following symlinks. Returns fd or -errno. */
static int open_beneath(int rootfd, const char *rel)
{
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			       .resolve =
				   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	char comp[CGPATH_MAX_NAME + 1];
	const char *s = rel, *slash;
	int fd, next;

	if (!cgpath_no_openat2) {
		fd = (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno == ENOTDIR) {
			/* O_DIRECTORY said so first: tell a symlink (refused as one) from a file */
			struct stat st;
			int e;

			how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
			fd = (int)syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
			e = fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode) ? -ELOOP
										  : -ENOTDIR;
			if (fd >= 0)
				close(fd);
			return e;
		}
		if (errno != ENOSYS)
			return errno == EXDEV ? -ELOOP : -errno;
	}
	/* No openat2: one component at a time, each refused if it is a symlink. */
	fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	for (;;) {
		size_t n;

		slash = strchr(s, '/');
		n = slash ? (size_t)(slash - s) : strlen(s);
		if (n == 0 || n > CGPATH_MAX_NAME || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.')) {
			close(fd);
			return -EINVAL;
		}
		memcpy(comp, s, n);
		comp[n] = '\0';
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int rc = -errno;
			struct stat st;

			if (rc == -ENOTDIR && fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				rc = -ELOOP;

			close(fd);
			return rc;
		}
		close(fd);
		fd = next;
		if (!slash)
			return fd;
		s = slash + 1;
	}
}

static int open_err(int rc, const char *path, char *err, size_t errsz)
{
	if (rc == -ELOOP)
		return fail(err, errsz, -EPERM, "cgroup path goes through a symlink: %s", path);
	if (rc == -ENOTDIR)
		return fail(err, errsz, -ENOENT, "not a cgroup directory: %s", path);
	if (rc == -ENOENT)
		return fail(err, errsz, -ENOENT, "no such cgroup: %s", path);
	snprintf(err, errsz, "open %s: %s", path, strerror(-rc));
	return rc;
}

/* Does the directory have a descendant directory (a child cgroup) levels below it: 1 a child, 2 a
 * grandchild? Returns 1, 0, or -errno. */
static int has_descendant_dir(int fd, int levels)
{
	struct dirent *de;
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0), found = 0;
	DIR *d;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while (!found && (de = readdir(d)) != NULL) {
		struct stat st;
		int child;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type != DT_DIR &&
		    !(de->d_type == DT_UNKNOWN &&
		      fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		      S_ISDIR(st.st_mode)))
			continue;
		if (levels <= 1) {
			found = 1;
			break;
		}
		child = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (child < 0) {
			found = errno == ENOENT ? 0 : -errno; /* gone meanwhile: not a child */
			continue;
		}
		found = has_descendant_dir(child, levels - 1);
		close(child);
	}
	closedir(d);
	return found;
}

/* The first bytes of the file name below dir: their count (0 when empty), or -1 when it cannot
 * be read. */
static ssize_t read_head(int dir, const char *name, char *buf, size_t n)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -1;
	got = read(fd, buf, n - 1);
	close(fd);
	if (got >= 0)
		buf[got] = '\0';
	return got;
}

static int procs_below(int fd, int levels)
{
	char buf[64];
	struct dirent *de;
	int dfd, found;
	DIR *d;
	ssize_t n = read_head(fd, "cgroup.procs", buf, sizeof(buf));

	if (n < 0)
		return -1;
	if (n > 0 || levels == 0)
		return n > 0;
	/* a descriptor of its own: a dup would share (and start at) the reading position of fd */
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	found = 0;
	while (found != 1 && (de = readdir(d)) != NULL) {
		int child;

		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		child = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (child < 0)
			continue; /* not a directory, or gone meanwhile */
		if (procs_below(child, levels - 1) == 1)
			found = 1;
		close(child);
	}
	closedir(d);
	return found;
}

int cgpath_populated(int fd)
{
	char buf[256], *p;

	if (read_head(fd, "cgroup.events", buf, sizeof(buf)) > 0 &&
	    (p = strstr(buf, "populated ")) != NULL && (p[10] == '0' || p[10] == '1'))
		return p[10] == '1';
	return procs_below(fd, 2);
}

/* Is dir protected by one of the absolute directories in list (itself, an ancestor, inside)? */
static const char *protected_dir(const char *dir, const char *const *list, int n)
{
	char real[PATH_MAX];

	for (int i = 0; i < n; i++) {
		const char *base = realpath(list[i], real) ? real : list[i];

		if (is_within(base, dir) || is_within(dir, base))
			return list[i];
	}
	return NULL;
}

static int open_root(const struct cgpath_policy *p, char *root_real, char *err, size_t errsz)
{
	int fd;

	if (realpath(p->root, root_real) == NULL)
		return fail(err, errsz, -ENOENT, "cgroup root %s does not exist", p->root);
	fd = open(root_real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errsz, -errno, "open the cgroup root %s", root_real);
	return fd;
}

int cgpath_open(const struct cgpath_policy *p, const char *task, size_t len,
		struct cgpath_target *t, char *err, size_t errsz)
{
	char root_real[PATH_MAX], rel[CGPATH_MAX_TASK + 1];
	const char *r, *start, *c;
	size_t rl;
	struct stat st;
	int rootfd, rc, depth = 1;

	t->fd = -1;
	rootfd = open_root(p, root_real, err, errsz);
	if (rootfd < 0)
		return rootfd;
	rc = check_name(p, root_real, task, len, &r, &rl, err, errsz);
	if (rc)
		goto out;
	memcpy(rel, r, rl);
	rel[rl] = '\0';
	if ((size_t)snprintf(t->dir, sizeof(t->dir), "%s%s%s", root_real,
			     strcmp(root_real, "/") ? "/" : "", rel) >= sizeof(t->dir)) {
		rc = fail(err, errsz, -ENAMETOOLONG, "%scgroup path too long", "");
		goto out;
	}
	t->rel_at = strlen(t->dir) - rl;
	/* The protected names, on the path that is opened (no symlink is followed: it is this one).
	 */
	for (start = c = rel;; c++) {
		if (*c == '/' || *c == '\0') {
			size_t n = (size_t)(c - start);

			for (int i = 0; i < p->n_protected; i++)
				if (strlen(p->protected_names[i]) == n &&
				    memcmp(start, p->protected_names[i], n) == 0) {
					rc = fail(err, errsz, -EPERM, "cgroup is in protected %s",
						  p->protected_names[i]);
					goto out;
				}
			if (*c == '\0')
				break;
			depth++;
			start = c + 1;
		}
	}
	rc = open_beneath(rootfd, rel);
	if (rc < 0) {
		rc = open_err(rc, t->dir, err, errsz);
		goto out;
	}
	t->fd = rc;
	rc = 0;
	if (fstat(t->fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		rc = fail(err, errsz, -ENOENT, "not a cgroup directory: %s", t->dir);
		goto out;
	}
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	if (p->own_cgroup && is_within(p->own_cgroup, t->dir)) {
		rc = fail(err, errsz, -EPERM,
			  "refusing to cap the enforcer's own cgroup or its parent %s", t->dir);
		goto out;
	}
	if (protected_dir(t->dir, p->also_protected, p->n_also)) {
		rc = fail(err, errsz, -EPERM, "refusing to cap protected cgroup %s", t->dir);
		goto out;
	}
	if (p->task_depth > 0 && depth != p->task_depth) {
		snprintf(
		    err, errsz,
		    "%s is %d level%s below the root; task cgroups are at task_cgroup_depth %d",
		    t->dir, depth, depth == 1 ? "" : "s", p->task_depth);
		rc = -EPERM;
		goto out;
	}
	/* A task is a leaf; with task_depth, a cgroup whose children are leaves (a pod and its
	 * containers): one that holds a cgroup with children of its own (a QoS slice holding
	 * pods) holds other tasks, whatever its depth. */
	rc = has_descendant_dir(t->fd, p->task_depth > 0 ? 2 : 1);
	if (rc != 0) {
		if (rc > 0 && p->task_depth > 0)
			rc = fail(err, errsz, -EPERM,
				  "%s holds cgroups with cgroups of their own (other tasks): only "
				  "a task cgroup may be capped",
				  t->dir);
		else if (rc > 0)
			rc = fail(err, errsz, -EPERM,
				  "%s holds other cgroups: only a task (leaf) cgroup may be capped",
				  t->dir);
		else
			snprintf(err, errsz, "list %s: %s", t->dir, strerror(-rc));
		goto out;
	}
out:
	close(rootfd);
	if (rc && t->fd >= 0) {
		close(t->fd);
		t->fd = -1;
	}
	return rc;
}

int cgpath_reopen(const struct cgpath_policy *p, const char *dir, dev_t dev, ino_t ino, int *fd,
		  char *err, size_t errsz)
{
	char root_real[PATH_MAX];
	const char *rel;
	struct stat st;
	int rootfd, rc;

	*fd = -1;
	rootfd = open_root(p, root_real, err, errsz);
	if (rootfd < 0)
		return rootfd;
	rel = below(dir, strlen(dir), root_real);
	if (!rel) {
		close(rootfd);
		return fail(err, errsz, -EPERM, "%s is not below the cgroup root", dir);
	}
	rc = open_beneath(rootfd, rel);
	close(rootfd);
	if (rc == -ELOOP)
		return fail(err, errsz, -ESTALE,
			    "cgroup replaced: a symlink is on the path of %s now", dir);
	if (rc < 0)
		return open_err(rc, dir, err, errsz);
	*fd = rc;
	rc = 0;
	if (fstat(*fd, &st) != 0) {
		rc = -errno;
		snprintf(err, errsz, "stat %s: %s", dir, strerror(errno));
	} else if (ino != 0 && (st.st_dev != dev || st.st_ino != ino)) {
		rc = fail(err, errsz, -ESTALE,
			  "cgroup replaced: %s is another directory than the one capped", dir);
	}
	if (rc) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

int cgpath_split_list(char *buf, const char **items, int max)
{
	char *save = NULL, *tok, *end;
	int n = 0;

	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		end = tok + strlen(tok);
		while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (!*tok)
			continue;
		if (n == max)
			return -E2BIG;
		items[n++] = tok;
	}
	return n;
}

int cgpath_set_protected(struct cgpath_policy *p, char *buf)
{
	int n = cgpath_split_list(buf, p->protected_names, CGPATH_MAX_PROTECTED);

	p->n_protected = n < 0 ? CGPATH_MAX_PROTECTED : n;
	return n < 0 ? n : 0;
}
