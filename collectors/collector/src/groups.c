/* groups: see groups.h. */
#include "groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_key(int root_a, const char *task_a, int root_b, const char *task_b)
{
	return root_a != root_b ? (root_a > root_b) - (root_a < root_b) : strcmp(task_a, task_b);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct pgroup *x = a, *y = b;

	return cmp_key(x->root, x->task, y->root, y->task);
}

struct pgroup *groups_find(struct groups *g, int root, const char *task)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_key(g->v[mid].root, g->v[mid].task, root, task);

		if (c == 0)
			return &g->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void entry_free(struct pgroup *e, const struct perf_spec *spec, int ncpu)
{
	perf_group_close(spec, e->fds, ncpu);
	res_files_close(e->res);
	free(e->res);
	free(e->fds);
	free(e->base);
	free(e->task);
}

struct pgroup *groups_open(struct groups *g, const struct perf_spec *spec, int root,
			   const char *task, int cgroup_fd, const int *cpus, int ncpu, bool enabled,
			   int *rc)
{
	struct pgroup e = {.root = root, .seen = true};
	struct stat st = {0};

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		struct pgroup *v = realloc(g->v, cap * sizeof(*v));

		if (!v) {
			*rc = -ENOMEM;
			return NULL;
		}
		g->v = v;
		g->cap = cap;
	}
	e.task = strdup(task);
	e.fds = malloc((size_t)(ncpu * spec->n_events) * sizeof(*e.fds));
	e.base = calloc((size_t)ncpu, sizeof(*e.base));
	e.res = malloc(sizeof(*e.res));
	if (!e.task || !e.fds || !e.base || !e.res) {
		free(e.task);
		free(e.fds);
		free(e.base);
		free(e.res);
		*rc = -ENOMEM;
		return NULL;
	}
	res_files_open(e.res, "", ""); /* nothing open until the caller opens them */
	*rc = fstat(cgroup_fd, &st) ? -errno : 0;
	if (*rc == 0)
		*rc = perf_group_open(spec, cgroup_fd, cpus, ncpu, enabled, e.fds);
	e.ino = (unsigned long)st.st_ino;
	if (*rc) {
		free(e.task);
		free(e.fds);
		free(e.base);
		free(e.res);
		return NULL;
	}
	g->v[g->n] = e;
	return &g->v[g->n++];
}

void groups_sort(struct groups *g)
{
	if (g->n > 1)
		qsort(g->v, g->n, sizeof(*g->v), cmp_entry);
}

void groups_close_unseen(struct groups *g, const struct perf_spec *spec, int ncpu)
{
	size_t kept = 0;

	for (size_t i = 0; i < g->n; i++) {
		if (!g->v[i].seen) {
			entry_free(&g->v[i], spec, ncpu);
			continue;
		}
		g->v[i].seen = false;
		g->v[kept++] = g->v[i];
	}
	g->n = kept;
}

void groups_free(struct groups *g, const struct perf_spec *spec, int ncpu)
{
	for (size_t i = 0; i < g->n; i++)
		entry_free(&g->v[i], spec, ncpu);
	free(g->v);
	memset(g, 0, sizeof(*g));
}
