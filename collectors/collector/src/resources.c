/* resources: see resources.h. */
#include "resources.h"

#include <cpi2/cgroup.h>
#include <cpi2/textfile.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PIDS 4096 /* processes compared when a v1 task's v2 cgroup is looked for */

static bool is_dir(const char *path)
{
	struct stat st;

	return path[0] && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* the pids of a cgroup.procs text, sorted; -EINVAL if malformed or more than max */
static int parse_pids(const char *text, long *pids, int max)
{
	int n = 0;

	for (const char *p = text; *p;) {
		char *end;
		long v;

		if (*p < '0' || *p > '9' || n == max)
			return -EINVAL;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v <= 0 || (*end != '\n' && *end != '\0'))
			return -EINVAL;
		pids[n++] = v;
		p = *end ? end + 1 : end;
	}
	qsort(pids, (size_t)n, sizeof(*pids), cmp_long);
	return n;
}

/* the v2 cgroup path ("/a/b") of process pid from /proc/PID/cgroup's "0::" line */
static int v2_path_of(long pid, char *out, size_t size)
{
	static char text[16384];
	char path[64];
	const char *line;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", pid);
	if (cpi2_read_text(path, text, sizeof(text)) < 0)
		return -ENOENT;
	if (!(line = cpi2_text_find_line(text, "0::")))
		return -ENOENT;
	n = strcspn(line, "\n");
	if (line[0] != '/' || n >= size || strstr(line, "/../"))
		return -EINVAL;
	memcpy(out, line, n);
	out[n] = '\0';
	return 0;
}

void res_find_v2_dir(const char *psi_base, const char *task, const char *v1_dir,
		     const char *unified, char *out, size_t size)
{
	static char text[65536];
	static long v1[MAX_PIDS], v2[MAX_PIDS];
	char rel[PATH_MAX], path[PATH_MAX];
	int n1, n2;

	out[0] = '\0';
	if (psi_base[0] && snprintf(out, size, "%s/%s", psi_base, task) < (int)size && is_dir(out))
		return;
	out[0] = '\0';
	if (!v1_dir || !unified[0])
		return;
	if (snprintf(path, sizeof(path), "%s/cgroup.procs", v1_dir) >= (int)sizeof(path) ||
	    cpi2_read_text(path, text, sizeof(text)) < 0 ||
	    (n1 = parse_pids(text, v1, MAX_PIDS)) <= 0 || v2_path_of(v1[0], rel, sizeof(rel)) ||
	    !strcmp(rel, "/"))
		return;
	if (snprintf(path, sizeof(path), "%s%s/cgroup.procs", unified, rel) >= (int)sizeof(path) ||
	    cpi2_read_text(path, text, sizeof(text)) < 0 ||
	    (n2 = parse_pids(text, v2, MAX_PIDS)) <= 0)
		return;
	for (int i = 0; i < n2; i++)
		if (!bsearch(&v2[i], v1, (size_t)n1, sizeof(*v1), cmp_long))
			return; /* the v2 cgroup holds other tasks' processes too */
	snprintf(out, size, "%s%s", unified, rel);
}

void res_find_mon_dir(const char *resctrl, const char *task, char *out, size_t size)
{
	int n;

	out[0] = '\0';
	if (!resctrl[0])
		return;
	n = snprintf(out, size, "%s/mon_groups/", resctrl);
	if (n < 0 || (size_t)n + strlen(task) + sizeof("/mon_data") > size) {
		out[0] = '\0';
		return;
	}
	for (const char *t = task; *t; t++)
		out[n++] = *t == '/' ? ':' : *t;
	strcpy(out + n, "/mon_data");
	if (!is_dir(out))
		out[0] = '\0';
}

/* one resctrl counter file: a decimal number ("Unavailable", "Error": -EIO) */
static int read_counter(int dirfd, const char *name, uint64_t *v)
{
	char text[64], *end;
	int rc = cpi2_read_text_at(dirfd, name, O_NOFOLLOW, text, sizeof(text));

	if (rc < 0)
		return rc;
	if (text[0] < '0' || text[0] > '9')
		return text[0] ? -EIO : -EINVAL;
	errno = 0;
	*v = strtoull(text, &end, 10);
	if (errno || (*end != '\n' && *end != '\0'))
		return -EINVAL;
	return 0;
}

/* sum llc_occupancy and mbm_total_bytes over every mon_L3_* domain of mon_data */
static int read_resctrl(const char *mon_dir, struct res_reading *r)
{
	int dfd = open(mon_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW), rc = 0;
	uint64_t llc = 0, mbm = 0, v;
	bool llc_ok = true, mbm_ok = true;
	int domains = 0;
	DIR *d;
	struct dirent *e;

	if (dfd < 0)
		return -errno;
	if (!(d = fdopendir(dfd))) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	while ((e = readdir(d))) {
		int fd;

		if (strncmp(e->d_name, "mon_L3_", 7) != 0)
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			rc = rc ? rc : -errno;
			llc_ok = mbm_ok = false;
			continue;
		}
		domains++;
		int a = read_counter(fd, "llc_occupancy", &v);

		if (a == 0 && llc + v >= llc)
			llc += v;
		else
			llc_ok = false, rc = rc ? rc : a ? a : -ERANGE;
		int b = read_counter(fd, "mbm_total_bytes", &v);

		if (b == 0 && mbm + v >= mbm)
			mbm += v;
		else
			mbm_ok = false, rc = rc ? rc : b ? b : -ERANGE;
		close(fd);
	}
	closedir(d);
	if (!domains)
		return -ENOENT;
	if (llc_ok && llc <= (uint64_t)INT64_MAX)
		r->has_llc = true, r->llc_bytes = (int64_t)llc;
	if (mbm_ok)
		r->has_mbm = true, r->mbm_bytes = mbm;
	return rc;
}

void res_files_open(struct res_files *f, const char *psi_dir, const char *mon_dir)
{
	int dfd;

	f->cpu_fd = f->mem_fd = -1;
	f->psi_err = 0;
	f->mon_dir = mon_dir[0] ? strdup(mon_dir) : NULL;
	if (!psi_dir[0])
		return;
	if ((dfd = open(psi_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		f->psi_err = -errno;
		return;
	}
	if ((f->cpu_fd = openat(dfd, "cpu.pressure", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		f->psi_err = -errno;
	if ((f->mem_fd = openat(dfd, "memory.pressure", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0 &&
	    !f->psi_err)
		f->psi_err = -errno;
	close(dfd);
}

void res_files_close(struct res_files *f)
{
	if (f->cpu_fd >= 0)
		close(f->cpu_fd);
	if (f->mem_fd >= 0)
		close(f->mem_fd);
	free(f->mon_dir);
	f->cpu_fd = f->mem_fd = -1;
	f->mon_dir = NULL;
}

/* one pressure file, read again from its start */
static int read_psi(int fd, struct cpi2_psi *psi)
{
	char text[512];
	int rc = cpi2_pread_text(fd, text, sizeof(text));

	return rc < 0 ? rc : cpi2_cgroup_parse_psi(text, psi);
}

void res_read(const struct res_files *f, struct res_reading *r, struct res_errors *err)
{
	struct cpi2_psi psi;
	int rc;

	memset(r, 0, sizeof(*r));
	err->psi = f->psi_err;
	if (f->cpu_fd >= 0) {
		if ((rc = read_psi(f->cpu_fd, &psi)) == 0)
			r->has_cpu_some = true, r->cpu_some_us = psi.some_us;
		else if (!err->psi)
			err->psi = rc;
	}
	if (f->mem_fd >= 0) {
		if ((rc = read_psi(f->mem_fd, &psi)) == 0) {
			r->has_mem_some = true, r->mem_some_us = psi.some_us;
			r->has_mem_full = psi.has_full, r->mem_full_us = psi.full_us;
		} else if (!err->psi) {
			err->psi = rc;
		}
	}
	err->resctrl = f->mon_dir ? read_resctrl(f->mon_dir, r) : 0;
}

/* increase of a total over the window as a share of it, at most 1; false if it went back */
static bool share(bool has_a, uint64_t a, bool has_b, uint64_t b, int64_t window_us, double *out)
{
	if (!has_a || !has_b || b < a || window_us <= 0)
		return false;
	*out = (double)(b - a) / (double)window_us;
	if (*out > 1.0)
		*out = 1.0; /* the reads are a little apart from the window's clock */
	return true;
}

void res_apply(const struct res_reading *a, const struct res_reading *b, int64_t window_us,
	       struct cpi2_sample *s)
{
	s->has_cpu_pressure = share(a->has_cpu_some, a->cpu_some_us, b->has_cpu_some,
				    b->cpu_some_us, window_us, &s->cpu_pressure);
	s->has_memory_pressure = share(a->has_mem_some, a->mem_some_us, b->has_mem_some,
				       b->mem_some_us, window_us, &s->memory_pressure);
	s->has_memory_pressure_full = share(a->has_mem_full, a->mem_full_us, b->has_mem_full,
					    b->mem_full_us, window_us, &s->memory_pressure_full);
	s->has_llc_occupancy_bytes = b->has_llc;
	s->llc_occupancy_bytes = b->llc_bytes;
	s->has_memory_bandwidth =
	    a->has_mbm && b->has_mbm && b->mbm_bytes >= a->mbm_bytes && window_us > 0;
	s->memory_bandwidth_bytes_per_s =
	    s->has_memory_bandwidth
		? (double)(b->mbm_bytes - a->mbm_bytes) * 1e6 / (double)window_us
		: 0.0;
}
