/* discover: see discover.h. */
#include "discover.h"

#include <cpi2/cgroup.h>

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool exists(const char *dir, const char *file)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/%s", dir, file) >= (int)sizeof(p))
		return false;
	return access(p, F_OK) == 0;
}

/* path relative to mount when path lies under mount ("" for the mount itself), else NULL */
static const char *under(const char *path, const char *mount)
{
	size_t n = strlen(mount);

	if (!n || strncmp(path, mount, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return NULL;
	return path + n;
}

static void join(char *out, size_t size, const char *base, const char *rel)
{
	if (snprintf(out, size, "%s%s", base, rel) >= (int)size)
		out[0] = '\0';
}

int cg_root_init(struct cg_root *r, const char *path, const struct cpi2_cgroup_mounts *m)
{
	struct stat st;
	const char *rel;
	size_t n = strlen(path);

	memset(r, 0, sizeof(*r));
	if (n == 0 || n >= sizeof(r->path))
		return -ENAMETOOLONG;
	if (stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	memcpy(r->path, path, n + 1);
	while (n > 1 && r->path[n - 1] == '/')
		r->path[--n] = '\0';
	snprintf(r->unified, sizeof(r->unified), "%s", m->unified);
	if (exists(r->path, "cgroup.controllers")) {
		r->version = 2;
		strcpy(r->usage_base, r->path);
		strcpy(r->perf_base, r->path);
		strcpy(r->v2_base, r->path);
		if ((rel = under(r->path, m->unified)) && m->memory[0]) /* systemd hybrid layout */
			join(r->mem_base, sizeof(r->mem_base), m->memory, rel);
		return 0;
	}
	r->version = 1;
	strcpy(r->usage_base, r->path);
	if (!exists(r->path, "cpuacct.usage") && (rel = under(r->path, m->cpu)))
		join(r->usage_base, sizeof(r->usage_base), m->cpuacct, rel);
	rel = under(r->path, m->cpu);
	if (!rel)
		rel = under(r->path, m->cpuacct);
	if (rel && m->perf_event[0])
		join(r->perf_base, sizeof(r->perf_base), m->perf_event, rel);
	else if (rel && m->unified[0]) /* hybrid systemd layout: the same paths in v2 */
		join(r->perf_base, sizeof(r->perf_base), m->unified, rel);
	if (rel && m->unified[0])
		join(r->v2_base, sizeof(r->v2_base), m->unified, rel);
	if (rel && m->memory[0])
		join(r->mem_base, sizeof(r->mem_base), m->memory, rel);
	return 0;
}

static int push(struct cg_list *l, const char *task, int root, size_t max_entries)
{
	if (l->n >= max_entries) {
		l->truncated++;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct cg_entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].task = strdup(task);
	if (!l->v[l->n].task)
		return -ENOMEM;
	l->v[l->n++].root = root;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* walk dir (= root/rel) depth-first in sorted order */
static int walk(struct cg_list *l, const char *root, const char *rel, int root_index, int depth,
		size_t max_entries)
{
	char dir[PATH_MAX], child[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *d;
	DIR *dp;
	int rc = 0;

	if (snprintf(dir, sizeof(dir), "%s%s%s", root, rel[0] ? "/" : "", rel) >= (int)sizeof(dir))
		return 0; /* deeper than PATH_MAX: not a cgroup the kernel lets anyone use */
	dp = opendir(dir);
	if (!dp)
		return rel[0] ? 0 : -errno; /* a child that vanished is no error */
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.' &&
		    (!d->d_name[1] || (d->d_name[1] == '.' && !d->d_name[2])))
			continue;
		if (d->d_type == DT_UNKNOWN) {
			struct stat st;

			if (snprintf(child, sizeof(child), "%s/%s", dir, d->d_name) >=
				(int)sizeof(child) ||
			    lstat(child, &st) || !S_ISDIR(st.st_mode))
				continue;
		} else if (d->d_type != DT_DIR) {
			continue;
		}
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*v));

			if (!v) {
				rc = -ENOMEM;
				goto out;
			}
			names = v;
		}
		if (!(names[n] = strdup(d->d_name))) {
			rc = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n && !rc; i++) {
		if (snprintf(child, sizeof(child), "%s%s%s", rel, rel[0] ? "/" : "", names[i]) >=
		    (int)sizeof(child))
			continue;
		rc = push(l, child, root_index, max_entries);
		if (!rc && depth > 1)
			rc = walk(l, root, child, root_index, depth - 1, max_entries);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(dp);
	return rc;
}

int cg_discover(struct cg_list *l, const struct cg_root *r, int root_index, int max_depth,
		size_t max_entries)
{
	if (max_depth < 1)
		return 0;
	return walk(l, r->path, "", root_index, max_depth, max_entries);
}

/* entry j is in the subtree of entry i */
static bool descends(const struct cg_list *l, size_t i, size_t j)
{
	const struct cg_entry *a = &l->v[i], *b = &l->v[j];
	size_t n = strlen(a->task);

	return b->root == a->root && strncmp(b->task, a->task, n) == 0 && b->task[n] == '/';
}

bool cg_is_parent(const struct cg_list *l, size_t i)
{
	return i + 1 < l->n && descends(l, i, i + 1);
}

size_t cg_marked_descendant(const struct cg_list *l, size_t i, const bool *mark)
{
	for (size_t j = i + 1; j < l->n && descends(l, i, j); j++)
		if (mark[j])
			return j;
	return l->n;
}

void cg_list_clear(struct cg_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].task);
	l->n = 0;
	l->truncated = 0;
}

void cg_list_free(struct cg_list *l)
{
	cg_list_clear(l);
	free(l->v);
	l->v = NULL;
	l->cap = 0;
}
