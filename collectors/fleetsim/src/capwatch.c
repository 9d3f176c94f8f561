#include "capwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cpi2/cgroup.h>
#include <cpi2/log.h>
#include <cpi2/textfile.h>

struct capwatch {
	char *root;
	int fd; /* inotify descriptor, -1 when inotify is unavailable */
	int ntasks;
	char **dirs;  /* per task: its folder, owned */
	double *caps; /* per task: cap last reported */
	int *wd_task; /* inotify watch descriptor -> task */
	int nwd;
	int *stat_tasks; /* tasks without a watch */
	int nstat;
	struct timespec *stat_mtime; /* per entry of stat_tasks: newest cap file mtime seen */
	long long *stat_size;	     /* per entry of stat_tasks: total size of the cap files */
	bool *dirty;
	int *dirty_list;
	int ndirty;
	bool overflowed;
};

/* CPU-sec/sec of a limit: INFINITY when quota is -1 (no limit). */
static double cap_of(long quota, long period)
{
	return quota < 0 ? INFINITY : (double)quota / (double)period;
}

int capfile_parse_cpu_max(const char *text, double *cap)
{
	long quota, period;

	if (cpi2_cgroup_parse_cpu_max(text, &quota, &period))
		return -EINVAL;
	*cap = cap_of(quota, period);
	return 0;
}

int capfile_parse_cfs(const char *quota_text, const char *period_text, double *cap)
{
	long quota, period;

	if (cpi2_cgroup_parse_cfs(quota_text, period_text, &quota, &period))
		return -EINVAL;
	*cap = cap_of(quota, period);
	return 0;
}

/* dir/file into buf, and its modification time when mtime is not NULL. 0 or -errno. */
static int read_small(const char *dir, const char *file, char *buf, size_t bufsz,
		      struct timespec *mtime)
{
	char path[PATH_MAX];
	struct stat st;
	int n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	if (mtime) {
		if (stat(path, &st))
			return -errno;
		*mtime = st.st_mtim;
	}
	n = cpi2_read_text(path, buf, bufsz);
	return n < 0 ? n : 0;
}

static bool newer(struct timespec a, struct timespec b)
{
	return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

int capfile_read_dir(const char *dir, double *cap)
{
	char v2[128], quota[128], period[128];
	struct timespec t2 = {0}, t1 = {0};
	int rc2, rc1;

	rc2 = read_small(dir, "cpu.max", v2, sizeof(v2), &t2);
	rc1 = read_small(dir, "cpu.cfs_quota_us", quota, sizeof(quota), &t1);
	if (rc2 && rc1)
		return rc2;
	if (!rc1 && (rc2 || newer(t1, t2))) {
		if (read_small(dir, "cpu.cfs_period_us", period, sizeof(period), NULL))
			snprintf(period, sizeof(period), "%d", CPI2_CGROUP_DEFAULT_PERIOD_US);
		return capfile_parse_cfs(quota, period, cap);
	}
	return capfile_parse_cpu_max(v2, cap);
}

static int write_file(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];
	int fd, rc = 0;
	size_t n = strlen(text);

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		rc = -EIO;
	close(fd);
	return rc;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *c = buf + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*c = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int capwatch_new(struct capwatch **out, const char *root, int ntasks, int flags, char *err,
		 size_t errsz)
{
	struct capwatch *cw;
	int rc;

	*out = NULL;
	if ((rc = mkdir_p(root))) {
		snprintf(err, errsz, "mkdir %s: %s", root, strerror(-rc));
		return rc;
	}
	cw = calloc(1, sizeof(*cw));
	if (!cw)
		return -ENOMEM;
	cw->fd = -1;
	cw->root = strdup(root);
	cw->ntasks = ntasks;
	cw->dirs = calloc((size_t)ntasks + 1, sizeof(char *));
	cw->caps = malloc(((size_t)ntasks + 1) * sizeof(double));
	cw->dirty = calloc((size_t)ntasks + 1, sizeof(bool));
	cw->dirty_list = malloc(((size_t)ntasks + 1) * sizeof(int));
	cw->stat_tasks = malloc(((size_t)ntasks + 1) * sizeof(int));
	cw->stat_mtime = calloc((size_t)ntasks + 1, sizeof(struct timespec));
	cw->stat_size = calloc((size_t)ntasks + 1, sizeof(long long));
	if (!cw->root || !cw->dirs || !cw->caps || !cw->dirty || !cw->dirty_list ||
	    !cw->stat_tasks || !cw->stat_mtime || !cw->stat_size) {
		capwatch_delete(cw);
		return -ENOMEM;
	}
	for (int i = 0; i < ntasks; i++)
		cw->caps[i] = INFINITY;
	cw->fd = flags & CAPWATCH_STAT_ONLY ? -2 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (cw->fd == -1)
		cpi2_log(CPI2_LOG_WARN, "fleetsim",
			 "inotify_init1: %s; checking cap files with stat once a period",
			 strerror(errno));
	*out = cw;
	return 0;
}

/* Newest mtime and total size of the cap files: file times are as coarse as the kernel tick,
 * so a rewrite within one tick is still seen when its length differs. */
static void newest_mtime(const char *dir, struct timespec *t, long long *size)
{
	static const char *files[] = {"cpu.max", "cpu.cfs_quota_us", "cpu.cfs_period_us"};
	char path[PATH_MAX];
	struct stat st;

	t->tv_sec = 0, t->tv_nsec = 0;
	*size = 0;
	for (int i = 0; i < 3; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, files[i]) >= sizeof(path))
			continue;
		if (stat(path, &st))
			continue;
		*size += st.st_size;
		if (newer(st.st_mtim, *t))
			*t = st.st_mtim;
	}
}

int capwatch_add(struct capwatch *cw, int task, const char *rel_dir, char *err, size_t errsz)
{
	char dir[PATH_MAX];
	int rc, wd;

	if (task < 0 || task >= cw->ntasks || cw->dirs[task])
		return -EINVAL;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", cw->root, rel_dir) >= sizeof(dir))
		return -ENAMETOOLONG;
	if ((rc = mkdir_p(dir)) || (rc = write_file(dir, "cpu.max", "max 100000\n")) ||
	    (rc = write_file(dir, "cpu.cfs_period_us", "100000\n")) ||
	    (rc = write_file(dir, "cpu.cfs_quota_us", "-1\n"))) {
		snprintf(err, errsz, "create %s: %s", dir, strerror(-rc));
		return rc;
	}
	cw->dirs[task] = strdup(dir);
	if (!cw->dirs[task])
		return -ENOMEM;
	wd = cw->fd >= 0 ? inotify_add_watch(cw->fd, dir, IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO)
			 : -1;
	if (wd < 0) {
		if (cw->fd >= 0 && !cw->nstat) /* say it once */
			cpi2_log(CPI2_LOG_WARN, "fleetsim",
				 "inotify_add_watch %s: %s; this and later tasks are "
				 "checked with stat once a period (raise "
				 "fs.inotify.max_user_watches)",
				 dir, strerror(errno));
		newest_mtime(dir, &cw->stat_mtime[cw->nstat], &cw->stat_size[cw->nstat]);
		cw->stat_tasks[cw->nstat++] = task;
		return 0;
	}
	if (wd >= cw->nwd) {
		int n = wd + 1024, *a = realloc(cw->wd_task, (size_t)n * sizeof(int));
		if (!a)
			return -ENOMEM;
		for (int i = cw->nwd; i < n; i++)
			a[i] = -1;
		cw->wd_task = a;
		cw->nwd = n;
	}
	cw->wd_task[wd] = task;
	return 0;
}

static void mark_dirty(struct capwatch *cw, int task)
{
	if (task < 0 || cw->dirty[task])
		return;
	cw->dirty[task] = true;
	cw->dirty_list[cw->ndirty++] = task;
}

static void drain_inotify(struct capwatch *cw)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t n = read(cw->fd, buf, sizeof(buf));
		if (n <= 0)
			return;
		for (char *c = buf; c < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)c;
			if (ev->mask & IN_Q_OVERFLOW)
				cw->overflowed = true;
			else if (ev->wd >= 0 && ev->wd < cw->nwd)
				mark_dirty(cw, cw->wd_task[ev->wd]);
			c += sizeof(*ev) + ev->len;
		}
	}
}

int capwatch_poll(struct capwatch *cw, capwatch_cb cb, void *ctx)
{
	int changes = 0;

	if (cw->fd >= 0)
		drain_inotify(cw);
	if (cw->overflowed) { /* events were lost: look at every task once */
		cw->overflowed = false;
		for (int t = 0; t < cw->ntasks; t++)
			if (cw->dirs[t])
				mark_dirty(cw, t);
	}
	for (int i = 0; i < cw->nstat; i++) {
		struct timespec t;
		long long size;
		newest_mtime(cw->dirs[cw->stat_tasks[i]], &t, &size);
		if (newer(t, cw->stat_mtime[i]) || size != cw->stat_size[i]) {
			cw->stat_mtime[i] = t;
			cw->stat_size[i] = size;
			mark_dirty(cw, cw->stat_tasks[i]);
		}
	}
	for (int i = 0; i < cw->ndirty; i++) {
		int task = cw->dirty_list[i];
		double cap;
		int rc;

		cw->dirty[task] = false;
		rc = capfile_read_dir(cw->dirs[task], &cap);
		if (rc) {
			cpi2_log(CPI2_LOG_WARN, "fleetsim",
				 "cap files in %s: %s; keeping the previous cap", cw->dirs[task],
				 rc == -EINVAL ? "malformed" : strerror(-rc));
			continue;
		}
		if (cap == cw->caps[task])
			continue;
		cw->caps[task] = cap;
		cb(ctx, task, cap);
		changes++;
	}
	cw->ndirty = 0;
	return changes;
}

int capwatch_write_clock(struct capwatch *cw, int64_t now_us)
{
	char tmp[PATH_MAX], path[PATH_MAX], text[32];
	int rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.clock.tmp", cw->root) >= sizeof(tmp) ||
	    (size_t)snprintf(path, sizeof(path), "%s/clock", cw->root) >= sizeof(path))
		return -ENAMETOOLONG;
	snprintf(text, sizeof(text), "%lld\n", (long long)now_us);
	rc = write_file(cw->root, ".clock.tmp", text);
	if (!rc && rename(tmp, path))
		rc = -errno;
	return rc;
}

int capwatch_polled_by_stat(const struct capwatch *cw)
{
	return cw->nstat;
}

void capwatch_delete(struct capwatch *cw)
{
	if (!cw)
		return;
	if (cw->fd >= 0)
		close(cw->fd);
	if (cw->dirs)
		for (int i = 0; i < cw->ntasks; i++)
			free(cw->dirs[i]);
	free(cw->dirs);
	free(cw->caps);
	free(cw->wd_task);
	free(cw->stat_tasks);
	free(cw->stat_mtime);
	free(cw->stat_size);
	free(cw->dirty);
	free(cw->dirty_list);
	free(cw->root);
	free(cw);
}
