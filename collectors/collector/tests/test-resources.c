/* resources: a task's pressure and resctrl signals from fixture trees (a cgroup v2 directory
 * with cpu.pressure and memory.pressure, a resctrl tree with two cache domains): exact values
 * from two readings, and null (never 0) for each signal whose file is absent, malformed or went
 * backwards. */
#include "check.h"
#include "resources.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[64];

static void put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	CHECK((f = fopen(p, "w")) && fputs(text, f) >= 0 && fclose(f) == 0, "%s", p);
}

static void mk(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	CHECK(mkdir(p, 0755) == 0, "%s", p);
}

static void path(char *out, size_t size, const char *rel)
{
	snprintf(out, size, "%s/%s", base, rel);
}

static void psi(const char *rel, unsigned long long some, long long full)
{
	char text[256];
	int n = snprintf(text, sizeof(text), "some avg10=1.00 avg60=0.50 avg300=0.10 total=%llu\n",
			 some);

	if (full >= 0)
		snprintf(text + n, sizeof(text) - (size_t)n,
			 "full avg10=0.00 avg60=0.00 avg300=0.00 total=%lld\n", full);
	put(rel, text);
}

static void domain(const char *dom, const char *llc, const char *mbm)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "resctrl/mon_groups/jobs:web-1/mon_data/%s/llc_occupancy", dom);
	put(rel, llc);
	snprintf(rel, sizeof(rel), "resctrl/mon_groups/jobs:web-1/mon_data/%s/mbm_total_bytes",
		 dom);
	put(rel, mbm);
}

static bool close_to(double a, double b)
{
	return fabs(a - b) <= 1e-12 * (fabs(b) > 1 ? fabs(b) : 1);
}

static pid_t child_in(const char *dir1, const char *dir2)
{
	char p[512], pid[32];
	pid_t c = fork();

	CHECK(c >= 0);
	if (c == 0) {
		alarm(60); /* gone even if the test fails before it kills it */
		pause();
		_exit(0);
	}
	snprintf(pid, sizeof(pid), "%d", (int)c);
	for (const char *d = dir1; d; d = d == dir1 ? dir2 : NULL) {
		FILE *f;

		snprintf(p, sizeof(p), "%s/cgroup.procs", d);
		CHECK((f = fopen(p, "w")) && fputs(pid, f) >= 0 && fclose(f) == 0, "%s", p);
	}
	return c;
}

/* On this machine's hierarchies (root, v1 cpu and v2): a v1 task whose v2 cgroup has another
 * name is found through its processes, and not when that v2 cgroup holds others' too. */
static void real_v1_task(void)
{
	const char *v1 = "/sys/fs/cgroup/cpu", *v2 = "/sys/fs/cgroup/unified";
	char d1[256], d2[256], out[PATH_MAX], name[64];
	struct stat st;

	if (geteuid() != 0 || stat("/sys/fs/cgroup/cpu/cpu.shares", &st) ||
	    stat("/sys/fs/cgroup/unified/cgroup.controllers", &st)) {
		printf("test-resources: the real v1 part skipped (needs root, v1 cpu at %s and "
		       "v2 at %s)\n",
		       v1, v2);
		return;
	}
	snprintf(name, sizeof(name), "cpi2-test-res-%d", (int)getpid());
	snprintf(d1, sizeof(d1), "%s/%s", v1, name);
	snprintf(d2, sizeof(d2), "%s/%s-elsewhere", v2, name);
	CHECK(mkdir(d1, 0755) == 0 && mkdir(d2, 0755) == 0);
	pid_t a = child_in(d1, d2), b;

	res_find_v2_dir(v2, name, d1, v2, out, sizeof(out));
	CHECK(!strcmp(out, d2), "'%s'", out);
	b = child_in(d2, NULL); /* its v2 cgroup now holds a process the v1 one does not */
	res_find_v2_dir(v2, name, d1, v2, out, sizeof(out));
	CHECK(out[0] == '\0', "'%s'", out);
	res_find_v2_dir(v2, name, NULL, v2, out, sizeof(out)); /* a v2 root: no other place */
	CHECK(out[0] == '\0');
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	CHECK(rmdir(d1) == 0 && rmdir(d2) == 0);
	printf("test-resources: a v1 task's v2 cgroup found through its processes: ok\n");
}

int main(void)
{
	struct {
		char psi_dir[PATH_MAX], mon_dir[PATH_MAX];
	} paths;
	struct res_files f;
	struct res_reading a, b;
	struct res_errors e;
	struct cpi2_sample s;
	char p[512];

	snprintf(base, sizeof(base), "/tmp/cpi2-test-resources-XXXXXX");
	CHECK(mkdtemp(base));
	mk("v2");
	mk("v2/jobs");
	mk("v2/jobs/web-1");
	mk("resctrl");
	mk("resctrl/mon_groups");
	mk("resctrl/mon_groups/jobs:web-1");
	mk("resctrl/mon_groups/jobs:web-1/mon_data");
	mk("resctrl/mon_groups/jobs:web-1/mon_data/mon_L3_00");
	mk("resctrl/mon_groups/jobs:web-1/mon_data/mon_L3_01");

	/* where the files are: the task's v2 directory, its monitoring group by name */
	path(p, sizeof(p), "v2");
	res_find_v2_dir(p, "jobs/web-1", NULL, "", paths.psi_dir, sizeof(paths.psi_dir));
	path(p, sizeof(p), "v2/jobs/web-1");
	CHECK(!strcmp(paths.psi_dir, p), "%s", paths.psi_dir);
	path(p, sizeof(p), "v2");
	res_find_v2_dir(p, "jobs/gone", NULL, p, paths.psi_dir, sizeof(paths.psi_dir));
	CHECK(paths.psi_dir[0] == '\0'); /* no such v2 directory and no v1 one to look from */
	res_find_v2_dir("", "jobs/web-1", NULL, "", paths.psi_dir, sizeof(paths.psi_dir));
	CHECK(paths.psi_dir[0] == '\0');
	path(p, sizeof(p), "resctrl");
	res_find_mon_dir(p, "jobs/web-1", paths.mon_dir, sizeof(paths.mon_dir));
	path(p, sizeof(p), "resctrl/mon_groups/jobs:web-1/mon_data");
	CHECK(!strcmp(paths.mon_dir, p), "%s", paths.mon_dir);
	path(p, sizeof(p), "resctrl");
	res_find_mon_dir(p, "jobs/web-2", paths.mon_dir, sizeof(paths.mon_dir));
	CHECK(paths.mon_dir[0] == '\0');
	res_find_mon_dir("", "jobs/web-1", paths.mon_dir, sizeof(paths.mon_dir));
	CHECK(paths.mon_dir[0] == '\0');
	path(paths.psi_dir, sizeof(paths.psi_dir), "v2/jobs/web-1");
	path(paths.mon_dir, sizeof(paths.mon_dir), "resctrl/mon_groups/jobs:web-1/mon_data");

	/* two readings 2 s apart: exact shares, bytes and bytes/s */
	psi("v2/jobs/web-1/cpu.pressure", 1000000, 0);
	psi("v2/jobs/web-1/memory.pressure", 5000, 1000);
	domain("mon_L3_00", "1048576\n", "1000000000\n");
	domain("mon_L3_01", "524288\n", "500000000\n");
	res_files_open(&f, paths.psi_dir, paths.mon_dir); /* then read again through the same */
	CHECK(f.cpu_fd >= 0 && f.mem_fd >= 0 && f.psi_err == 0 && f.mon_dir);
	res_read(&f, &a, &e);
	CHECK(e.psi == 0 && e.resctrl == 0, "%d %d", e.psi, e.resctrl);
	CHECK(a.has_cpu_some && a.cpu_some_us == 1000000 && a.has_mem_full &&
	      a.mem_full_us == 1000);
	CHECK(a.has_llc && a.llc_bytes == 1572864 && a.has_mbm && a.mbm_bytes == 1500000000);
	psi("v2/jobs/web-1/cpu.pressure", 1875000, 0);
	psi("v2/jobs/web-1/memory.pressure", 25000, 6000);
	domain("mon_L3_00", "2097152\n", "3000000000\n");
	domain("mon_L3_01", "1048576\n", "1500000000\n");
	res_read(&f, &b, &e);
	memset(&s, 0, sizeof(s));
	res_apply(&a, &b, 2000000, &s);
	CHECK(s.has_cpu_pressure && close_to(s.cpu_pressure, 0.4375), "%.17g", s.cpu_pressure);
	CHECK(s.has_memory_pressure && close_to(s.memory_pressure, 0.01));
	CHECK(s.has_memory_pressure_full && close_to(s.memory_pressure_full, 0.0025));
	CHECK(s.has_llc_occupancy_bytes && s.llc_occupancy_bytes == 3145728);
	CHECK(s.has_memory_bandwidth && close_to(s.memory_bandwidth_bytes_per_s, 1.5e9), "%.17g",
	      s.memory_bandwidth_bytes_per_s);
	/* more stall than window (reads a little apart): at most 1 */
	psi("v2/jobs/web-1/cpu.pressure", 1000000 + 2000100, 0);
	res_read(&f, &b, &e);
	res_apply(&a, &b, 2000000, &s);
	CHECK(s.has_cpu_pressure && s.cpu_pressure == 1.0);

	/* totals that went backwards (made anew): null, not a negative or a wrapped value */
	psi("v2/jobs/web-1/cpu.pressure", 10, -1);
	domain("mon_L3_00", "4096\n", "10\n");
	domain("mon_L3_01", "1048576\n", "10\n");
	res_read(&f, &b, &e);
	CHECK(e.psi == 0 && e.resctrl == 0);
	CHECK(b.has_cpu_some && b.cpu_some_us == 10 && b.has_mbm && b.mbm_bytes == 20);
	res_apply(&a, &b, 2000000, &s);
	CHECK(!s.has_cpu_pressure && !s.has_memory_bandwidth);
	CHECK(s.has_llc_occupancy_bytes && s.llc_occupancy_bytes == 4096 + 1048576);

	/* hostile files: each leaves its own signal null and says why */
	put("v2/jobs/web-1/cpu.pressure", "some avg10=1.00 total=5\n");
	res_read(&f, &b, &e);
	CHECK(e.psi == -EINVAL && !b.has_cpu_some && b.has_mem_some, "%d", e.psi);
	res_apply(&a, &b, 2000000, &s);
	CHECK(!s.has_cpu_pressure && s.has_memory_pressure);
	psi("v2/jobs/web-1/cpu.pressure", 1875000, 0);
	path(p, sizeof(p), "v2/jobs/web-1/memory.pressure");
	CHECK(unlink(p) == 0);
	res_read(&f, &b, &e); /* the open file is still the one read */
	CHECK(e.psi == 0 && b.has_mem_some);
	res_files_close(&f);
	res_files_open(&f, paths.psi_dir, paths.mon_dir);
	res_read(&f, &b, &e);
	CHECK(e.psi == -ENOENT && b.has_cpu_some && !b.has_mem_some && !b.has_mem_full);
	/* a symlink in place of a pressure file is not followed */
	CHECK(symlink("../../../resctrl/mon_groups/jobs:web-1/mon_data/mon_L3_00/llc_occupancy",
		      p) == 0);
	res_files_close(&f);
	res_files_open(&f, paths.psi_dir, paths.mon_dir);
	res_read(&f, &b, &e);
	CHECK(e.psi == -ELOOP && !b.has_mem_some, "%d", e.psi);
	CHECK(unlink(p) == 0);
	domain("mon_L3_01", "Unavailable\n", "1500000000\n");
	res_read(&f, &b, &e);
	CHECK(e.resctrl == -EIO && !b.has_llc && b.has_mbm, "%d", e.resctrl);
	domain("mon_L3_01", "1048576\n", "15x\n");
	res_read(&f, &b, &e);
	CHECK(e.resctrl == -EINVAL && b.has_llc && !b.has_mbm);
	domain("mon_L3_01", "1048576\n", "18446744073709551615\n"); /* the sum would wrap */
	res_read(&f, &b, &e);
	CHECK(e.resctrl == -ERANGE && b.has_llc && !b.has_mbm);
	domain("mon_L3_01", "", "1\n");
	res_read(&f, &b, &e);
	CHECK(e.resctrl == -EINVAL && !b.has_llc && b.has_mbm);

	/* no files at all: every signal null */
	path(paths.psi_dir, sizeof(paths.psi_dir), "v2/jobs/nothing");
	path(paths.mon_dir, sizeof(paths.mon_dir), "resctrl/mon_groups/nothing/mon_data");
	res_files_close(&f);
	res_files_open(&f, paths.psi_dir, paths.mon_dir);
	CHECK(f.cpu_fd < 0 && f.mem_fd < 0 && f.psi_err == -ENOENT);
	res_read(&f, &b, &e);
	CHECK(e.psi == -ENOENT && e.resctrl == -ENOENT);
	res_apply(&b, &b, 2000000, &s);
	CHECK(!s.has_cpu_pressure && !s.has_memory_pressure && !s.has_memory_pressure_full &&
	      !s.has_llc_occupancy_bytes && !s.has_memory_bandwidth);
	res_files_close(&f);
	res_files_open(&f, "", ""); /* sources switched off: nothing read */
	res_read(&f, &b, &e);
	CHECK(e.psi == 0 && e.resctrl == 0 && !b.has_cpu_some && !b.has_llc);
	res_files_close(&f);

	real_v1_task();
	snprintf(p, sizeof(p), "rm -rf %s", base);
	CHECK(system(p) == 0);
	printf("test-resources: ok\n");
	return 0;
}
