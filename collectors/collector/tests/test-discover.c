/* discover: fake cgroup v2 and v1 trees in a temporary directory; cgroups that appear and
 * disappear between walks; depth and size limits; root descriptions from fake mounts; which
 * cgroups hold others in the walk (their counts include their descendants'). */
#include "discover.h"

#include <cpi2/cgroup.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char base[64];

static void mk(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	CHECK(mkdir(p, 0755) == 0);
}

static void touch(const char *rel)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	CHECK((f = fopen(p, "w")) != NULL);
	fputs("0\n", f);
	fclose(f);
}

static void path(char *out, const char *rel)
{
	snprintf(out, PATH_MAX, "%s/%s", base, rel);
}

static const char *tasks(const struct cg_list *l)
{
	static char s[4096];

	s[0] = '\0';
	for (size_t i = 0; i < l->n; i++)
		snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%s", i ? " " : "", l->v[i].task);
	return s;
}

/* the entries of l that hold others in the walk, as "a b" */
static const char *parents(const struct cg_list *l)
{
	static char s[4096];

	s[0] = '\0';
	for (size_t i = 0; i < l->n; i++)
		if (cg_is_parent(l, i))
			snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%s", s[0] ? " " : "",
				 l->v[i].task);
	return s;
}

/* the task of the first descendant of entry i whose name contains mark, or "-" */
static const char *marked(const struct cg_list *l, size_t i, const char *mark)
{
	bool m[64] = {0};
	size_t j;

	CHECK(l->n <= 64);
	for (j = 0; j < l->n; j++)
		m[j] = strstr(l->v[j].task, mark) != NULL;
	j = cg_marked_descendant(l, i, m);
	return j == l->n ? "-" : l->v[j].task;
}

/* parents: "a" holds "a/b"; "a-b" and "ab" sort right after a's subtree but are not under it */
static void check_parents(void)
{
	struct cg_root r;
	struct cg_list l = {0};
	struct cpi2_cgroup_mounts m = {0};
	char p[PATH_MAX];

	mk("p");
	touch("p/cgroup.controllers");
	mk("p/a");
	mk("p/a/b");
	mk("p/a/b/leaf.task");
	mk("p/a/c.task");
	mk("p/a-b");
	mk("p/ab");
	mk("p/ab.task");
	path(p, "p");
	CHECK(cg_root_init(&r, p, &m) == 0);
	CHECK(cg_discover(&l, &r, 0, 8, 1000) == 0);
	CHECK(!strcmp(tasks(&l), "a a/b a/b/leaf.task a/c.task a-b ab ab.task"));
	CHECK(!strcmp(parents(&l), "a a/b"));
	/* the first marked descendant, within the subtree only */
	CHECK(!strcmp(marked(&l, 0, ".task"), "a/b/leaf.task"));
	CHECK(!strcmp(marked(&l, 0, "c.task"), "a/c.task"));
	CHECK(!strcmp(marked(&l, 1, "c.task"), "-")); /* a sibling of a/b, not under it */
	CHECK(!strcmp(marked(&l, 0, "ab"), "-"));     /* "ab" and "ab.task" follow a's subtree */
	CHECK(!strcmp(marked(&l, 5, ".task"), "-"));  /* ab: a leaf */
	CHECK(!strcmp(marked(&l, 6, ".task"), "-"));  /* the last entry */
	/* at the depth limit the children are not walked: a/b is a leaf there, a still a parent */
	cg_list_clear(&l);
	CHECK(cg_discover(&l, &r, 0, 2, 1000) == 0);
	CHECK(!strcmp(tasks(&l), "a a/b a/c.task a-b ab ab.task"));
	CHECK(!strcmp(parents(&l), "a"));
	cg_list_clear(&l);
	CHECK(cg_discover(&l, &r, 0, 1, 1000) == 0);
	CHECK(!strcmp(parents(&l), ""));
	/* cut by the size limit: a keeps the one child that made it */
	cg_list_clear(&l);
	CHECK(cg_discover(&l, &r, 0, 8, 2) == 0 && l.truncated == 5);
	CHECK(!strcmp(parents(&l), "a"));
	cg_list_clear(&l);
	CHECK(cg_discover(&l, &r, 0, 8, 1) == 0);
	CHECK(!strcmp(parents(&l), ""));
	/* the same path under another root is not a descendant: two roots walked into one list,
	 * the second's "a/b" right after the first's "a" */
	cg_list_clear(&l);
	path(p, "p/a");
	strcpy(r.path, p);
	CHECK(cg_discover(&l, &r, 0, 8, 1000) == 0); /* b b/leaf.task c.task */
	path(p, "p");
	strcpy(r.path, p);
	CHECK(cg_discover(&l, &r, 1, 1, 1000) == 0); /* a a-b ab ab.task */
	CHECK(!strcmp(tasks(&l), "b b/leaf.task c.task a a-b ab ab.task"));
	free(l.v[4].task);
	CHECK((l.v[4].task = strdup("a/b")) != NULL);
	CHECK(cg_is_parent(&l, 3));
	l.v[4].root = 0;
	CHECK(!cg_is_parent(&l, 3) && !strcmp(marked(&l, 3, "/"), "-"));
	CHECK(!strcmp(parents(&l), "b"));
	cg_list_free(&l);
}

int main(void)
{
	struct cpi2_cgroup_mounts m;
	struct cg_root v2, v1;
	struct cg_list l = {0};
	char p[PATH_MAX];

	strcpy(base, "/tmp/cpi2-discover-XXXXXX");
	CHECK(mkdtemp(base));
	/* a v2 tree: cgroup.controllers marks the root; files are not cgroups */
	mk("v2");
	touch("v2/cgroup.controllers");
	touch("v2/cpu.stat");
	mk("v2/system.slice");
	mk("v2/system.slice/nginx.service");
	mk("v2/kubepods.slice");
	mk("v2/kubepods.slice/kubepods-besteffort.slice");
	mk("v2/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podab12.slice");
	mk("v2/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podab12.slice/"
	   "cri-containerd-1.scope");
	touch("v2/system.slice/nginx.service/cpu.stat");
	/* a v1 hybrid layout: cpu and cpuacct mounted apart, perf_event nowhere but v2 */
	mk("cpu");
	mk("cpu/batch");
	mk("cpu/batch/job1");
	mk("cpuacct");
	memset(&m, 0, sizeof(m));
	path(m.unified, "v2");
	path(m.cpu, "cpu");
	path(m.cpuacct, "cpuacct");

	path(p, "v2");
	CHECK(cg_root_init(&v2, p, &m) == 0);
	CHECK(v2.version == 2 && !strcmp(v2.perf_base, p) && !strcmp(v2.usage_base, p));
	CHECK(!strcmp(v2.v2_base, p) && !strcmp(v2.unified, p));
	path(p, "cpu/batch");
	CHECK(cg_root_init(&v1, p, &m) == 0);
	CHECK(v1.version == 1);
	path(p, "cpuacct/batch");
	CHECK(!strcmp(v1.usage_base, p)); /* no cpuacct.usage beside cpu: the cpuacct mount */
	path(p, "v2/batch");
	CHECK(!strcmp(v1.perf_base, p)); /* no v1 perf_event mount: the same path in v2 */
	CHECK(!strcmp(v1.v2_base, p));	 /* pressure: the same path in v2 */
	path(m.perf_event, "perf");
	path(p, "cpu/batch");
	CHECK(cg_root_init(&v1, p, &m) == 0);
	path(p, "perf/batch");
	CHECK(!strcmp(v1.perf_base, p));
	path(p, "v2/batch");
	CHECK(!strcmp(v1.v2_base, p)); /* with a v1 perf_event mount too */
	path(p, "v2/cpu.stat");
	CHECK(cg_root_init(&v1, p, &m) == -ENOTDIR);
	CHECK(cg_root_init(&v1, "/nonexistent/cgroup", &m) == -ENOENT);
	CHECK(cg_root_init(&v1, "", &m) == -ENAMETOOLONG);

	/* walk: sorted, depth-limited, directories only */
	CHECK(cg_discover(&l, &v2, 0, 6, 1000) == 0);
	CHECK(!strcmp(tasks(&l),
		      "kubepods.slice kubepods.slice/kubepods-besteffort.slice "
		      "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podab12.slice "
		      "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podab12.slice/"
		      "cri-containerd-1.scope system.slice system.slice/nginx.service"));
	cg_list_clear(&l);
	CHECK(cg_discover(&l, &v2, 0, 1, 1000) == 0);
	CHECK(!strcmp(tasks(&l), "kubepods.slice system.slice"));
	cg_list_clear(&l);
	CHECK(cg_discover(&l, &v2, 0, 6, 3) == 0 && l.n == 3 && l.truncated == 3);
	cg_list_clear(&l);

	/* a cgroup appears, another disappears between windows */
	mk("v2/system.slice/new.service");
	unlink(strcat(strcpy(p, base), "/v2/system.slice/nginx.service/cpu.stat"));
	CHECK(rmdir(strcat(strcpy(p, base), "/v2/system.slice/nginx.service")) == 0);
	CHECK(cg_discover(&l, &v2, 0, 2, 1000) == 0);
	CHECK(!strcmp(tasks(&l),
		      "kubepods.slice kubepods.slice/kubepods-besteffort.slice system.slice "
		      "system.slice/new.service"));
	CHECK(l.v[0].root == 0);
	/* two roots into one list keep their index */
	cg_list_clear(&l);
	path(p, "cpu");
	CHECK(cg_root_init(&v1, p, &m) == 0);
	CHECK(cg_discover(&l, &v2, 0, 1, 1000) == 0 && cg_discover(&l, &v1, 1, 3, 1000) == 0);
	CHECK(l.n == 4 && l.v[2].root == 1 && !strcmp(l.v[3].task, "batch/job1"));
	cg_list_clear(&l);
	/* an unreadable root is an error, a vanished root too */
	path(p, "gone");
	strcpy(v1.path, p);
	CHECK(cg_discover(&l, &v1, 0, 3, 1000) == -ENOENT);
	cg_list_free(&l);
	check_parents();
	CHECK(system(strcat(strcpy(p, "rm -rf "), base)) == 0);
	printf("test-discover: ok\n");
	return 0;
}
