/* collector: see collector.h. */
#include "collector.h"
#include "procfs.h"

#include <cpi2/cgroup.h>
#include <cpi2/clock.h>
#include <cpi2/log.h>
#include <cpi2/textfile.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define FD_RESERVE 128	   /* descriptors kept for Kafka sockets, files, the cgroup directory */
#define WANT_NOFILE 65536L /* what the collector raises its descriptor limit to, if it may */

static void once_set_free(struct once_set *set);

bool once_set_add(struct once_set *set, const char *s)
{
	size_t lo = 0, hi = set->n;

	if (set->n >= ONCE_SET_MAX) {
		cpi2_log(CPI2_LOG_INFO, "collector",
			 "%zu reports remembered (the most kept): forgetting them, so cgroups "
			 "still unmapped are reported once more",
			 set->n);
		once_set_free(set);
		hi = 0;
	}

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int cmp = strcmp(set->v[mid], s);

		if (cmp == 0)
			return false;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;
		char **v = realloc(set->v, cap * sizeof(*v));

		if (!v)
			return true; /* report again rather than never */
		set->v = v;
		set->cap = cap;
	}
	char *copy = strdup(s);

	if (!copy)
		return true;
	memmove(set->v + lo + 1, set->v + lo, (set->n - lo) * sizeof(*set->v));
	set->v[lo] = copy;
	set->n++;
	return true;
}

static void once_set_free(struct once_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		free(set->v[i]);
	free(set->v);
	memset(set, 0, sizeof(*set));
}

static int init_cpus(struct collector *c, char *err, size_t errsz)
{
	char text[4096];
	int n;

	if (c->conf->cpus[0]) {
		snprintf(text, sizeof(text), "%s", c->conf->cpus);
	} else if ((n = cpi2_read_text("/sys/devices/system/cpu/online", text, sizeof(text))) < 0) {
		snprintf(err, errsz, "/sys/devices/system/cpu/online: %s", strerror(-n));
		return n;
	}
	n = procfs_parse_cpu_list(text, c->cpus, COLLECTOR_MAX_CPUS);
	if (n <= 0) {
		snprintf(err, errsz, "CPU list '%.64s' is malformed (or more than %d CPUs)", text,
			 COLLECTOR_MAX_CPUS);
		return -EINVAL;
	}
	c->ncpu = n;
	return 0;
}

static int init_platform(struct collector *c, char *err, size_t errsz)
{
	static char text[65536];
	int n;

	if (c->conf->platform[0]) {
		snprintf(c->platform, sizeof(c->platform), "%s", c->conf->platform);
		return 0;
	}
	n = cpi2_read_text("/proc/cpuinfo", text, sizeof(text));
	if (n < 0 && n != -EFBIG) { /* a long file: the first processor's block is enough */
		snprintf(err, errsz, "/proc/cpuinfo: %s (set --platform)", strerror(-n));
		return n;
	}
	if (procfs_parse_platform(text, c->platform, sizeof(c->platform))) {
		snprintf(err, errsz,
			 "/proc/cpuinfo: no vendor/family/model found (set --platform)");
		return -EINVAL;
	}
	return 0;
}

static int add_root(struct collector *c, const char *path, const struct cpi2_cgroup_mounts *m,
		    char *err, size_t errsz)
{
	struct cg_root *v = realloc(c->roots, (size_t)(c->n_roots + 1) * sizeof(*v));
	int rc;

	if (!v)
		return -ENOMEM;
	c->roots = v;
	rc = cg_root_init(&c->roots[c->n_roots], path, m);
	if (rc) {
		snprintf(err, errsz, "cgroup root %s: %s", path, strerror(-rc));
		return rc;
	}
	if (!c->roots[c->n_roots].perf_base[0])
		cpi2_log(CPI2_LOG_WARN, "collector",
			 "cgroup root %s (v1) has no perf_event hierarchy to count in: its cgroups "
			 "are not counted",
			 path);
	c->n_roots++;
	return 0;
}

static int init_roots(struct collector *c, char *err, size_t errsz)
{
	struct cpi2_cgroup_mounts m;
	char list[sizeof(c->conf->roots)], *save = NULL;
	int rc = cpi2_cgroup_mounts(c->conf->mountinfo, &m);

	if (rc) {
		snprintf(err, errsz, "%s: %s", c->conf->mountinfo, strerror(-rc));
		return rc;
	}
	if (!strcmp(c->conf->roots, "auto")) {
		const char *root = m.unified[0] ? m.unified : m.cpuacct[0] ? m.cpuacct : m.cpu;

		if (!root[0]) {
			snprintf(err, errsz,
				 "no cgroup v2 or v1 cpu/cpuacct mount in %s (set --roots)",
				 c->conf->mountinfo);
			return -ENOENT;
		}
		return add_root(c, root, &m, err, errsz);
	}
	snprintf(list, sizeof(list), "%s", c->conf->roots);
	for (char *r = strtok_r(list, ",", &save); r; r = strtok_r(NULL, ",", &save))
		if ((rc = add_root(c, r, &m, err, errsz)))
			return rc;
	if (!c->n_roots) {
		snprintf(err, errsz, "roots is empty");
		return -EINVAL;
	}
	return 0;
}

static int init_rules(struct collector *c, char *err, size_t errsz)
{
	int rc;

	if (c->conf->labels_file[0] &&
	    (rc = rules_labels_refresh(&c->rules, c->conf->labels_file, err, errsz)))
		return rc;
	if (c->conf->rules_file[0] && (rc = rules_load(&c->rules, c->conf->rules_file, err, errsz)))
		return rc;
	if (c->conf->default_rules &&
	    (rc = rules_parse(&c->rules, cpi2_default_rules, "default rules", err, errsz)))
		return rc;
	return 0;
}

/* the machine's NUMA topology for the tasks' NUMA scores (null in every sample without it) */
static void init_numa(struct collector *c)
{
	char err[512];

	if (!(c->numa = malloc(sizeof(*c->numa))))
		return;
	if (cpi2_numa_topo_load(NULL, c->numa, err, sizeof(err))) {
		cpi2_log(CPI2_LOG_WARN, "collector", "%s (numa_score null in every sample)", err);
		free(c->numa);
		c->numa = NULL;
	}
}

static void init_budget(struct collector *c)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (rlim_t)WANT_NOFILE) {
			struct rlimit want = {WANT_NOFILE,
					      WANT_NOFILE}; /* root may raise the hard limit */

			if (setrlimit(RLIMIT_NOFILE, &want) == 0)
				rl = want;
		}
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur =
			    rl.rlim_max == RLIM_INFINITY ? (rlim_t)WANT_NOFILE : rl.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &rl))
				getrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	/* a scraped task holds a socket while its scrape is in flight */
	c->fd_budget = c->conf->max_fds ? c->conf->max_fds
					: (long)rl.rlim_cur - FD_RESERVE -
					      (c->conf->scrape ? c->conf->scrape_max_tasks : 0);
}

/* say at start which signals beside the perf counts this host gives */
static void init_signals(struct collector *c)
{
	char path[PATH_MAX];
	struct stat st;

	if (c->conf->llc_misses && c->spec.counter_source != CPI2_COUNTER_SOURCE_SOFTWARE &&
	    !c->spec.llc)
		cpi2_log(CPI2_LOG_INFO, "collector",
			 "LLC misses: the PMU has no cache-misses event: llc_misses and "
			 "llc_mpki are null");
	c->resctrl =
	    c->conf->resctrl[0] &&
	    snprintf(path, sizeof(path), "%s/mon_groups", c->conf->resctrl) < (int)sizeof(path) &&
	    stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	if (c->conf->resctrl[0] && !c->resctrl)
		cpi2_log(CPI2_LOG_INFO, "collector",
			 "resctrl: no monitoring groups at %s: llc_occupancy_bytes and "
			 "memory_bandwidth_bytes_per_s are null",
			 path);
}

/* descriptors one counted cgroup holds: its perf groups and its pressure files */
static long fds_per_cgroup(const struct collector *c)
{
	return (long)c->ncpu * c->spec.n_events + (c->conf->psi ? RES_FDS_PSI : 0);
}

int collector_init(struct collector *c, const struct collector_conf *conf, char *err, size_t errsz)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->conf = conf;
	if (conf->host[0])
		snprintf(c->host, sizeof(c->host), "%s", conf->host);
	else if (gethostname(c->host, sizeof(c->host) - 1))
		strcpy(c->host, "localhost");
	if ((rc = init_cpus(c, err, errsz)) || (rc = init_platform(c, err, errsz)) ||
	    (rc = init_roots(c, err, errsz)) || (rc = init_rules(c, err, errsz)) ||
	    (rc = perf_spec_parse(conf->events, &c->spec, err, errsz)))
		return rc;
	if (conf->llc_misses)
		(void)perf_spec_add_llc(&c->spec); /* -EINVAL for a software event: none to add */
	if ((rc = perf_spec_probe(&c->spec, err, errsz)))
		return rc;
	init_signals(c);
	init_numa(c);
	init_budget(c);
	c->continuous = conf->period_s - conf->window_s <= 1.0;
	if (c->fd_budget < fds_per_cgroup(c)) {
		snprintf(err, errsz, "descriptor budget %ld is below one cgroup's %ld descriptors",
			 c->fd_budget, fds_per_cgroup(c));
		return -EMFILE;
	}
	return 0;
}

static struct counted *add_counted(struct collector *c)
{
	if (c->n_counted == c->cap_counted) {
		size_t cap = c->cap_counted ? c->cap_counted * 2 : 64;
		struct counted *v = realloc(c->counted, cap * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + c->cap_counted, 0, (cap - c->cap_counted) * sizeof(*v));
		c->counted = v;
		c->cap_counted = cap;
	}
	struct counted *t = &c->counted[c->n_counted];

	t->fds = NULL; /* from the groups, in open_groups */
	t->base = NULL;
	c->n_counted++;
	return t;
}

static void report_once(struct collector *c, const char *key, int level, const char *fmt,
			const char *a, const char *b)
{
	if (once_set_add(&c->reported, key))
		cpi2_log(level, "collector", fmt, a, b);
}

/* the once_set key of a report of kind about task: "/kind:task" (unmapped leaves use the bare
 * path, which never starts with '/') */
static void once_key(char *out, size_t size, const char *kind, const char *task)
{
	snprintf(out, size, "/%s:%s", kind, task);
}

/* discover and map: the candidates go into c->counted (descriptors not open yet) */
static int candidates(struct collector *c)
{
	char err[512], key[PATH_MAX + 16];

	if (c->conf->labels_file[0] &&
	    rules_labels_refresh(&c->rules, c->conf->labels_file, err, sizeof(err)))
		report_once(c, err, CPI2_LOG_WARN,
			    "labels: %s%s (keeping the labels loaded before)", err, "");
	cg_list_clear(&c->found);
	for (int r = 0; r < c->n_roots; r++) {
		int rc = cg_discover(&c->found, &c->roots[r], r, (int)c->conf->max_depth,
				     (size_t)c->conf->max_cgroups);

		if (rc)
			cpi2_log(CPI2_LOG_WARN, "collector", "walk %s: %s", c->roots[r].path,
				 strerror(-rc));
	}
	if (c->found.truncated)
		cpi2_log(CPI2_LOG_WARN, "collector",
			 "more than max_cgroups=%ld cgroups: %zu left out", c->conf->max_cgroups,
			 c->found.truncated);
	c->stats.discovered = c->found.n;
	/* published[i]: entry i gets a sample; mapped[i]: by a rule or label */
	bool *published = calloc(2 * c->found.n + 1, sizeof(*published)),
	     *mapped = published + c->found.n;
	int rc = 0;

	if (!published)
		return -ENOMEM;
	for (size_t i = 0; i < c->found.n; i++) {
		struct mapping map;
		const char *task = c->found.v[i].task;
		int kind = rules_map(&c->rules, task, c->host, &map);

		if (kind == MAP_IGNORE) {
			c->stats.ignored++;
			continue;
		}
		if (kind == MAP_NEEDS_LABEL) {
			/* a pod is not a job of its own: without its labels entry there is no job
			 * to publish it under */
			c->stats.unlabelled++;
			once_key(key, sizeof(key), "unlabelled", task);
			report_once(c, key, CPI2_LOG_WARN,
				    "cgroup %s is a task only the labels file maps, and %s has no "
				    "entry for it: not published",
				    task,
				    c->conf->labels_file[0] ? c->conf->labels_file
							    : "(no labels file)");
			continue;
		}
		if (kind == MAP_UNMAPPED && cg_is_parent(&c->found, i)) {
			/* its counts are its children's sum: publishing it would count them twice
			 */
			c->stats.parents++;
			once_key(key, sizeof(key), "parent", task);
			report_once(
			    c, key, CPI2_LOG_WARN,
			    "cgroup %s matches no rule or label and holds other cgroups (%s among "
			    "them): not published, its counts include theirs",
			    task, c->found.v[i + 1].task);
			continue;
		}
		if (kind == MAP_UNMAPPED) {
			c->stats.unmapped++;
			snprintf(map.job, sizeof(map.job), "%s", task);
			snprintf(map.task_id, sizeof(map.task_id), "%s", c->host);
			map.task_class = CPI2_TASK_CLASS_UNKNOWN;
			map.is_protected = false;
			report_once(c, task, CPI2_LOG_WARN,
				    "cgroup %s matches no rule or label: published as job=%s, "
				    "class UNKNOWN",
				    task, task);
		} else {
			mapped[i] = true;
		}
		published[i] = true;
		struct counted *t = add_counted(c);

		if (!t) {
			rc = -ENOMEM;
			goto out;
		}
		t->task = task;
		t->root = c->found.v[i].root;
		t->map = map;
		t->has_usage = false;
	}
	/* a cgroup mapped on purpose is published even with children; say so when one of them is
	 * too */
	for (size_t i = 0; i < c->found.n; i++) {
		size_t j;

		if (!mapped[i] || (j = cg_marked_descendant(&c->found, i, published)) == c->found.n)
			continue;
		once_key(key, sizeof(key), "overlap", c->found.v[i].task);
		report_once(
		    c, key, CPI2_LOG_WARN,
		    "cgroup %s is mapped and %s under it is published too: their counts overlap "
		    "(the first's include the second's)",
		    c->found.v[i].task, c->found.v[j].task);
	}
out:
	free(published);
	return rc;
}

/* keep at most what the descriptor budget allows, starting at the rotation cursor */
static void apply_budget(struct collector *c)
{
	size_t max = (size_t)(c->fd_budget / fds_per_cgroup(c)), n = c->n_counted;

	if (n <= max)
		return;
	size_t first = c->rotate % n;
	struct counted *keep = malloc(max * sizeof(*keep)),
		       *rest = malloc((n - max) * sizeof(*rest));

	if (!keep || !rest) {
		free(keep);
		free(rest);
		c->n_counted = max; /* no rotation this time, still within budget */
		c->stats.deferred = n - max;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = (i + n - first) % n; /* position from the cursor */

		if (k < max)
			keep[k] = c->counted[i];
		else
			rest[k - max] = c->counted[i];
	}
	memcpy(c->counted, keep, max * sizeof(*keep));
	memcpy(c->counted + max, rest,
	       (n - max) * sizeof(*rest)); /* their fds buffers stay owned */
	free(keep);
	free(rest);
	c->n_counted = max;
	c->rotate = first + max;
	c->stats.deferred = n - max;
}

static void join(char *out, size_t size, const char *base, const char *task)
{
	if (snprintf(out, size, "%s/%s", base, task) >= (int)size)
		out[0] = '\0';
}

/* open a new group's pressure and resctrl files */
static void open_res(struct collector *c, const struct counted *t, struct res_files *f)
{
	const struct cg_root *r = &c->roots[t->root];
	char v1_dir[PATH_MAX], psi_dir[PATH_MAX] = "", mon_dir[PATH_MAX] = "";

	if (c->conf->psi) {
		join(v1_dir, sizeof(v1_dir), r->path, t->task);
		res_find_v2_dir(r->v2_base, t->task, r->version == 1 && v1_dir[0] ? v1_dir : NULL,
				r->unified, psi_dir, sizeof(psi_dir));
		if (!psi_dir[0])
			report_once(
			    c, "/psi:nodir", CPI2_LOG_WARN,
			    "pressure of %s: no cgroup v2 directory of its own%s (null in its "
			    "samples; said once)",
			    t->task, "");
	}
	if (c->resctrl)
		res_find_mon_dir(c->conf->resctrl, t->task, mon_dir, sizeof(mon_dir));
	res_files_close(f);
	res_files_open(f, psi_dir, mon_dir);
}

/* the groups of the cgroups counted in this window: those of the last window are kept, the
 * others' closed (first, so their descriptors count for the new ones), new ones opened;
 * cgroups that vanished or cannot be counted leave the list */
static void open_groups(struct collector *c)
{
	char dir[PATH_MAX], key[PATH_MAX + 64];
	size_t kept = 0;

	for (size_t i = 0; i < c->groups.n; i++)
		c->groups.v[i].seen = false;
	for (size_t i = 0; i < c->n_counted; i++) {
		struct counted *t = &c->counted[i];
		struct pgroup *g = groups_find(&c->groups, t->root, t->task);
		struct stat st;

		/* the same directory still (a cgroup made anew under the same name is another) */
		join(dir, sizeof(dir), c->roots[t->root].perf_base, t->task);
		if (g && dir[0] && stat(dir, &st) == 0 && st.st_ino == g->ino) {
			g->seen = true;
			t->fds = g->fds; /* buffers that stay where they are */
			t->base = g->base;
			t->res = g->res;
		}
	}
	groups_close_unseen(&c->groups, &c->spec, c->ncpu);
	for (size_t i = 0; i < c->n_counted; i++) {
		struct counted *t = &c->counted[i];
		const struct cg_root *r = &c->roots[t->root];
		struct pgroup *g = NULL;
		int fd = -1, rc = -ENOENT;

		if (t->fds) {
			rc = 0;
			goto keep;
		}
		if (!r->perf_base[0]) {
			c->stats.failed++;
			goto drop;
		}
		join(dir, sizeof(dir), r->perf_base, t->task);
		fd = dir[0] ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		rc = -errno;
		if (fd >= 0) {
			/* appended unsorted: sorted when this loop is done */
			g = groups_open(&c->groups, &c->spec, t->root, t->task, fd, c->cpus,
					c->ncpu, c->continuous, &rc);
			close(fd); /* the events hold the cgroup */
		}
		if (rc == 0) {
			t->fds = g->fds;
			t->base = g->base;
			t->res = g->res;
			open_res(c, t, g->res);
		}
	keep:
		if (rc == 0) {
			struct counted tmp = c->counted[kept];

			c->counted[kept++] = *t;
			*t = tmp;
			continue;
		}
		if (rc == -ENOENT) {
			c->stats.vanished++;
		} else if (rc == -EMFILE || rc == -ENFILE) {
			c->stats.deferred++;
		} else {
			c->stats.failed++;
			snprintf(key, sizeof(key), "open:%d:%s", rc, r->path);
			report_once(c, key, CPI2_LOG_WARN,
				    "perf_event_open on cgroups of %s: %s (those are not counted)",
				    r->path, strerror(-rc));
		}
	drop:;
	}
	c->n_counted = kept;
	groups_sort(&c->groups);
}

static void read_usage(struct collector *c, struct counted *t, uint64_t *ns, bool *ok)
{
	char dir[PATH_MAX];

	join(dir, sizeof(dir), c->roots[t->root].usage_base, t->task);
	*ok = dir[0] && cpi2_cgroup_cpu_usage_ns(dir, ns) == 0;
}

/* read a task's pressure and resctrl files; a failure is logged once per signal and cause */
static void read_res(struct collector *c, struct counted *t, struct res_reading *out)
{
	struct res_errors e;
	char key[64];

	res_read(t->res, out, &e);
	if (e.psi) {
		snprintf(key, sizeof(key), "/psi:%d", e.psi);
		report_once(c, key, CPI2_LOG_WARN,
			    "pressure of %s: %s (null in its samples; said once for this cause)",
			    t->task, strerror(-e.psi));
	}
	if (e.resctrl) {
		snprintf(key, sizeof(key), "/resctrl:%d", e.resctrl);
		report_once(
		    c, key, CPI2_LOG_WARN,
		    "resctrl monitoring group of %s: %s (null in its samples; said once for "
		    "this cause)",
		    t->task, strerror(-e.resctrl));
	}
}

/* a task's CPU time by node from its v1 cpuacct.usage_percpu (not there for a v2 task) */
static void read_numa_cpu(struct collector *c, struct counted *t, uint64_t *node, bool *ok)
{
	char dir[PATH_MAX];

	join(dir, sizeof(dir), c->roots[t->root].usage_base, t->task);
	*ok = c->numa && dir[0] && tasknuma_read_percpu(c->numa, dir, node) == 0;
}

/* the task's NUMA score over the window into s (left null where it cannot be computed) */
static void set_numa_score(struct collector *c, struct counted *t,
			   const struct perf_reading *readings, struct cpi2_sample *s)
{
	const struct cg_root *r = &c->roots[t->root];
	uint64_t cpu[CPI2_NUMA_MAX_NODES], mem[CPI2_NUMA_MAX_NODES];
	char v2[PATH_MAX] = "", v1[PATH_MAX] = "", key[64];
	const char *dirs[] = {v2, v1};
	bool ok;
	int rc;

	if (!c->numa)
		return;
	if (t->has_numa_cpu0) {
		read_numa_cpu(c, t, cpu, &ok);
		for (int i = 0; ok && i < c->numa->n; i++)
			cpu[i] = cpu[i] >= t->numa_cpu0[i] ? cpu[i] - t->numa_cpu0[i] : 0;
		rc = ok ? 0 : -ENOENT;
	} else {
		rc = tasknuma_perf_by_node(c->numa, c->cpus, c->ncpu, readings, cpu);
	}
	if (r->version == 2)
		join(v2, sizeof(v2), r->path, t->task);
	if (r->mem_base[0])
		join(v1, sizeof(v1), r->mem_base, t->task);
	if (rc == 0 && (rc = tasknuma_read_memory(c->numa, dirs, 2, mem)) != 0) {
		snprintf(key, sizeof(key), "/numa:%d", rc);
		report_once(c, key, CPI2_LOG_INFO,
			    "memory.numa_stat of %s: %s (numa_score null; said once for this "
			    "cause)",
			    t->task, strerror(-rc));
	}
	if (rc == 0 && cpi2_numa_score(c->numa, cpu, mem, &s->numa_score) == 0)
		s->has_numa_score = true;
}

int collector_window_begin(struct collector *c)
{
	int rc;

	if (c->open)
		collector_window_abort(c);
	memset(&c->stats, 0, sizeof(c->stats));
	c->n_counted = 0;
	if ((rc = candidates(c)))
		return rc;
	apply_budget(c);
	open_groups(c);
	if (!c->continuous)
		for (size_t i = 0; i < c->n_counted; i++)
			perf_group_enable(&c->spec, c->counted[i].fds, c->ncpu, true);
	c->start_us = cpi2_clock_us(CLOCK_REALTIME);
	clock_gettime(CLOCK_MONOTONIC, &c->start_mono);
	for (size_t i = 0; i < c->n_counted; i++) {
		struct counted *t = &c->counted[i];

		t->has_base = perf_group_read(&c->spec, t->fds, c->ncpu, t->base) == 0;
	}
	for (size_t i = 0; i < c->n_counted; i++) {
		read_usage(c, &c->counted[i], &c->counted[i].usage0_ns, &c->counted[i].has_usage);
		read_res(c, &c->counted[i], &c->counted[i].res0);
		read_numa_cpu(c, &c->counted[i], c->counted[i].numa_cpu0,
			      &c->counted[i].has_numa_cpu0);
	}
	c->stats.counted = c->n_counted;
	c->open = true;
	services_begin(c);
	return 0;
}

static bool read_threads(struct collector *c, struct counted *t, int32_t *threads)
{
	static char text[65536];
	char path[PATH_MAX];
	const struct cg_root *r = &c->roots[t->root];
	int n;

	if (snprintf(path, sizeof(path), "%s/%s/%s", r->path, t->task,
		     r->version == 2 ? "cgroup.threads" : "tasks") >= (int)sizeof(path))
		return false;
	if (cpi2_read_text(path, text, sizeof(text)) < 0 ||
	    (n = procfs_parse_thread_list(text)) < 0)
		return false;
	*threads = n;
	return true;
}

int collector_window_end(struct collector *c, collector_emit_fn emit, void *arg)
{
	struct perf_reading *readings = calloc((size_t)c->ncpu, sizeof(*readings));
	/* the host's CPUs, not only those counted on (--cpus): its utilisation's denominator */
	long host_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct timespec end;
	int64_t window_us;

	if (!c->open) {
		free(readings);
		return -EINVAL;
	}
	if (!c->continuous)
		for (size_t i = 0; i < c->n_counted; i++)
			perf_group_enable(&c->spec, c->counted[i].fds, c->ncpu, false);
	clock_gettime(CLOCK_MONOTONIC, &end);
	window_us = (int64_t)(end.tv_sec - c->start_mono.tv_sec) * 1000000 +
		    (end.tv_nsec - c->start_mono.tv_nsec) / 1000;
	for (size_t i = 0; i < c->n_counted && readings; i++) {
		struct counted *t = &c->counted[i];
		struct perf_counts counts;
		struct res_reading res1;
		uint64_t usage1;
		bool ok;

		read_usage(c, t, &usage1, &ok);
		read_res(c, t, &res1);
		if (!ok || !t->has_usage || !t->has_base ||
		    perf_group_read(&c->spec, t->fds, c->ncpu, readings)) {
			c->stats
			    .vanished++; /* removed during the window: no whole window to report */
			continue;
		}
		perf_readings_sub(&c->spec, readings, t->base, c->ncpu);
		perf_counts_compute(&c->spec, readings, c->ncpu, &counts);
		struct cpi2_sample s = {
		    .host = c->host,
		    .task = t->task,
		    .job = t->map.job,
		    .task_id = t->map.task_id,
		    .platform = c->platform,
		    .task_class = t->map.task_class,
		    .is_protected = t->map.is_protected,
		    .window_start_us = c->start_us,
		    .window_us = window_us,
		    .cycles = counts.cycles,
		    .instructions = counts.instructions,
		    .counter_source = c->spec.counter_source,
		    .time_running_ratio = counts.time_running_ratio,
		    .cpu_usage =
			window_us > 0 && usage1 >= t->usage0_ns
			    ? (double)(usage1 - t->usage0_ns) / ((double)window_us * 1000.0)
			    : 0.0,
		    .has_cpi = counts.has_cpi,
		    .cpi = counts.cpi,
		    .has_llc_misses = counts.has_llc_misses,
		    .llc_misses = counts.llc_misses,
		    .has_llc_mpki = counts.has_llc_mpki,
		    .llc_mpki = counts.llc_mpki,
		    .has_host_cpus = host_cpus > 0 && host_cpus <= INT32_MAX,
		    .host_cpus = (int32_t)host_cpus,
		};
		res_apply(&t->res0, &res1, window_us, &s);
		set_numa_score(c, t, readings, &s);
		s.has_threads = read_threads(c, t, &s.threads);
		c->stats.samples++;
		if (t->svc)
			services_end(c, t, &s, emit, arg);
		else
			emit(arg, &s);
	}
	free(readings);
	c->n_counted = 0; /* the groups stay open for the next window */
	c->open = false;
	return 0;
}

void collector_window_abort(struct collector *c)
{
	groups_free(&c->groups, &c->spec, c->ncpu);
	c->n_counted = 0;
	c->open = false;
}

void collector_free(struct collector *c)
{
	collector_window_abort(c);
	free(c->counted);
	free(c->roots);
	cg_list_free(&c->found);
	rules_free(&c->rules);
	once_set_free(&c->reported);
	services_free(&c->services);
	free(c->numa);
	memset(c, 0, sizeof(*c));
}
