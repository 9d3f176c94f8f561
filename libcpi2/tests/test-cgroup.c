/* cgroup: mountinfo and cpu.stat parsers on real-looking, odd and malformed input. */
#include <cpi2/cgroup.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static const char *file(const char *text)
{
	static char path[64];
	int fd;

	strcpy(path, "/tmp/cpi2-cgroup-test-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	return path;
}

int main(void)
{
	struct cpi2_cgroup_mounts m;
	uint64_t us, ns;
	const char *f;

	f = file("25 30 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755\n"
		 "26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec shared:5 - cgroup2 cgroup2 rw\n"
		 "30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:12 - cgroup cgroup rw,cpu,cpuacct\n"
		 "31 25 0:28 / /sys/fs/cgroup/perf_event rw,nosuid shared:13 - cgroup cgroup rw,perf_event\n");
	CHECK(cpi2_cgroup_mounts(f, &m) == 0);
	CHECK(!strcmp(m.unified, "/sys/fs/cgroup/unified") && !strcmp(m.cpu, "/sys/fs/cgroup/cpu,cpuacct"));
	CHECK(!strcmp(m.cpuacct, "/sys/fs/cgroup/cpu,cpuacct") && !strcmp(m.perf_event, "/sys/fs/cgroup/perf_event"));
	unlink(f);
	const char *bad[] = {"garbage without separator\n", "1 2 - cgroup2\n", "1 2 3 4 5 6 - cgroup\n", ""};
	for (size_t i = 0; i < 3; i++) {
		f = file(bad[i]);
		CHECK(cpi2_cgroup_mounts(f, &m) == -EINVAL);
		unlink(f);
	}
	CHECK(cpi2_cgroup_mounts("/nonexistent", &m) == -ENOENT);
	CHECK(cpi2_cgroup_mounts(NULL, &m) == 0); /* this machine's own */

	CHECK(cpi2_cgroup_parse_cpu_stat("usage_usec 123\nuser_usec 100\n", &us) == 0 && us == 123);
	CHECK(cpi2_cgroup_parse_cpu_stat("user_usec 1\nusage_usec 77", &us) == 0 && us == 77);
	const char *bad_stat[] = {"", "usage_usec\n", "usage_usec x\n", "usage_usec 12x\n", "usage_usec -\n",
				  "nothing here", "usage_usec 99999999999999999999999\n"};
	for (size_t i = 0; i < sizeof(bad_stat) / sizeof(bad_stat[0]); i++)
		CHECK(cpi2_cgroup_parse_cpu_stat(bad_stat[i], &us) == -EINVAL);
	/* random bytes never crash the parsers */
	char junk[256];
	srand(3);
	for (int r = 0; r < 20000; r++) {
		int n = rand() % 255;
		for (int k = 0; k < n; k++)
			junk[k] = (char)(1 + rand() % 255);
		junk[n] = '\0';
		(void)cpi2_cgroup_parse_cpu_stat(junk, &us);
		if (r % 100 == 0) {
			f = file(junk);
			(void)cpi2_cgroup_mounts(f, &m);
			unlink(f);
		}
	}
	CHECK(cpi2_cgroup_cpu_usage_ns("/nonexistent", &ns) < 0);
	printf("test-cgroup: ok\n");
	return 0;
}
