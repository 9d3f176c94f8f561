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
		 "26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec shared:5 - cgroup2 "
		 "cgroup2 rw\n"
		 "30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:12 - cgroup cgroup "
		 "rw,cpu,cpuacct\n"
		 "31 25 0:28 / /sys/fs/cgroup/perf_event rw,nosuid shared:13 - cgroup cgroup "
		 "rw,perf_event\n"
		 "32 25 0:29 / /sys/fs/cgroup/memory rw,nosuid shared:14 - cgroup cgroup "
		 "rw,memory\n");
	CHECK(cpi2_cgroup_mounts(f, &m) == 0);
	CHECK(!strcmp(m.memory, "/sys/fs/cgroup/memory"), "memory mount '%s'", m.memory);
	CHECK(!strcmp(m.unified, "/sys/fs/cgroup/unified") &&
	      !strcmp(m.cpu, "/sys/fs/cgroup/cpu,cpuacct"));
	CHECK(!strcmp(m.cpuacct, "/sys/fs/cgroup/cpu,cpuacct") &&
	      !strcmp(m.perf_event, "/sys/fs/cgroup/perf_event"));
	unlink(f);
	const char *bad[] = {"garbage without separator\n", "1 2 - cgroup2\n",
			     "1 2 3 4 5 6 - cgroup\n", ""};
	for (size_t i = 0; i < 3; i++) {
		f = file(bad[i]);
		CHECK(cpi2_cgroup_mounts(f, &m) == -EINVAL);
		unlink(f);
	}
	CHECK(cpi2_cgroup_mounts("/nonexistent", &m) == -ENOENT);
	CHECK(cpi2_cgroup_mounts(NULL, &m) == 0); /* this machine's own */

	CHECK(cpi2_cgroup_parse_cpu_stat("usage_usec 123\nuser_usec 100\n", &us) == 0 && us == 123);
	CHECK(cpi2_cgroup_parse_cpu_stat("user_usec 1\nusage_usec 77", &us) == 0 && us == 77);
	const char *bad_stat[] = {"",
				  "usage_usec\n",
				  "usage_usec x\n",
				  "usage_usec 12x\n",
				  "usage_usec -\n",
				  "usage_usec -5\n",
				  "usage_usec  5\n",
				  "nothing here",
				  "usage_usec 99999999999999999999999\n"};
	for (size_t i = 0; i < sizeof(bad_stat) / sizeof(bad_stat[0]); i++)
		CHECK(cpi2_cgroup_parse_cpu_stat(bad_stat[i], &us) == -EINVAL);
	/* PSI: some and full totals, in either order, full optional */
	struct cpi2_psi psi;
	CHECK(cpi2_cgroup_parse_psi("some avg10=0.00 avg60=1.50 avg300=100.00 total=123\n"
				    "full avg10=0.00 avg60=0.00 avg300=0.00 total=45\n",
				    &psi) == 0);
	CHECK(psi.has_some && psi.some_us == 123 && psi.has_full && psi.full_us == 45);
	CHECK(cpi2_cgroup_parse_psi("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
				    "some avg10=3.52 avg60=2.22 avg300=7.10 total=5963599330",
				    &psi) == 0);
	CHECK(psi.some_us == 5963599330ULL && psi.has_full && psi.full_us == 0);
	CHECK(cpi2_cgroup_parse_psi(
		  "some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551615\n", &psi) ==
	      0);
	CHECK(psi.has_some && !psi.has_full && psi.some_us == UINT64_MAX);
	const char *bad_psi[] = {
	    "",
	    "\n",
	    "full avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", /* no some */
	    "some avg10=0.00 avg60=0.00 avg300=0.00\n",		/* no total */
	    "some avg10=0.00 avg60=0.00 avg300=0.00 total=\n",
	    "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n",
	    "some avg10=0.00 avg60=0.00 avg300=0.00 total=12x\n",
	    "some avg10=0.00 avg60=0.00 avg300=0.00 total=99999999999999999999999\n",
	    "some avg10=101.00 avg60=0.00 avg300=0.00 total=1\n",
	    "some avg10=nan avg60=0.00 avg300=0.00 total=1\n",
	    "some avg60=0.00 avg10=0.00 avg300=0.00 total=1\n",
	    "some  avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
	    "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nsome avg10=0.00 avg60=0.00 "
	    "avg300=0.00 total=2\n",
	    "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nhalf avg10=0.00\n",
	    "Some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
	};
	for (size_t i = 0; i < sizeof(bad_psi) / sizeof(bad_psi[0]); i++)
		CHECK(cpi2_cgroup_parse_psi(bad_psi[i], &psi) == -EINVAL, "psi '%s'", bad_psi[i]);
	/* random bytes never crash the parsers */
	char junk[256];
	srand(3);
	for (int r = 0; r < 20000; r++) {
		int n = rand() % 255;
		for (int k = 0; k < n; k++)
			junk[k] = (char)(1 + rand() % 255);
		junk[n] = '\0';
		(void)cpi2_cgroup_parse_cpu_stat(junk, &us);
		(void)cpi2_cgroup_parse_psi(junk, &psi);
		/* and mutations of a real PSI text */
		char mut[160] = "some avg10=0.10 avg60=2.00 avg300=7.10 total=5963599330\nfull "
				"avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
		size_t len = strlen(mut);
		for (int k = 0; k < 3; k++)
			mut[rand() % len] = (char)(1 + rand() % 255);
		(void)cpi2_cgroup_parse_psi(mut, &psi);
		if (r % 100 == 0) {
			f = file(junk);
			(void)cpi2_cgroup_mounts(f, &m);
			unlink(f);
		}
	}
	CHECK(cpi2_cgroup_cpu_usage_ns("/nonexistent", &ns) < 0);
	/* a cgroup directory: v2 cpu.stat first, else v1 cpuacct.usage; malformed content is
	 * -EINVAL */
	char dir[64], p[128];
	strcpy(dir, "/tmp/cpi2-cgroup-dir-XXXXXX");
	CHECK(mkdtemp(dir));
	const struct {
		const char *file, *text;
		int rc;
		uint64_t ns;
	} usage[] = {
	    {"cpuacct.usage", "123456789\n", 0, 123456789},
	    {"cpuacct.usage", "", -EINVAL, 0},
	    {"cpuacct.usage", "12 34\n", -EINVAL, 0},
	    {"cpuacct.usage", "-5\n", -EINVAL, 0},
	    {"cpuacct.usage", "99999999999999999999999\n", -EINVAL, 0},
	    {"cpu.stat", "usage_usec 7\n", 0, 7000},
	    {"cpu.stat", "garbage\n", 0, 7000000000ULL}}; /* falls back to cpuacct.usage below */
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		FILE *uf;

		if (i == 6) {
			snprintf(p, sizeof(p), "%s/cpuacct.usage", dir);
			CHECK((uf = fopen(p, "w")) && fputs("7000000000\n", uf) >= 0 &&
			      fclose(uf) == 0);
		}
		snprintf(p, sizeof(p), "%s/%s", dir, usage[i].file);
		CHECK((uf = fopen(p, "w")) && fputs(usage[i].text, uf) >= 0 && fclose(uf) == 0);
		ns = 0;
		CHECK(cpi2_cgroup_cpu_usage_ns(dir, &ns) == usage[i].rc);
		CHECK(usage[i].rc || ns == usage[i].ns);
	}
	snprintf(p, sizeof(p), "%s/cpu.stat", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/cpuacct.usage", dir);
	unlink(p);
	rmdir(dir);
	/* CPU limits: v2 cpu.max and v1 quota / period texts */
	static const struct {
		const char *text;
		int rc;
		long quota, period;
	} cpu_max[] = {
	    {"max 100000\n", 0, -1, 100000},
	    {"max", 0, -1, 100000},
	    {"25000 250000\n", 0, 25000, 250000},
	    {" 200000 ", 0, 200000, 100000},
	    {"", -EINVAL, 0, 0},
	    {"-1 100000", -EINVAL, 0, 0},
	    {"0 100000", -EINVAL, 0, 0},
	    {"1000 0", -EINVAL, 0, 0},
	    {"1000 100000 7", -EINVAL, 0, 0},
	    {"maxx 100000", -EINVAL, 0, 0},
	    {"12x 100000", -EINVAL, 0, 0},
	    {"1000 100000\n\n", -EINVAL, 0, 0},
	    {"99999999999999999999999 1", -EINVAL, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cpu_max) / sizeof(cpu_max[0]); i++) {
		long q = 7, per = 7;
		int rc = cpi2_cgroup_parse_cpu_max(cpu_max[i].text, &q, &per);

		CHECK(rc == cpu_max[i].rc, "cpu.max '%s': rc %d", cpu_max[i].text, rc);
		CHECK(rc || (q == cpu_max[i].quota && per == cpu_max[i].period),
		      "cpu.max '%s': %ld %ld", cpu_max[i].text, q, per);
	}
	long q, per;
	CHECK(cpi2_cgroup_parse_cfs("-1\n", "100000\n", &q, &per) == 0 && q == -1 && per == 100000);
	CHECK(cpi2_cgroup_parse_cfs("25000", "250000", &q, &per) == 0 && q == 25000 &&
	      per == 250000);
	CHECK(cpi2_cgroup_parse_cfs("-2", "100000", &q, &per) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cfs("0", "100000", &q, &per) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cfs("1000", "", &q, &per) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cfs("1000", "1000 1", &q, &per) == -EINVAL);
	/* CPU weights: v1 cpu.shares 2..262144, v2 cpu.weight 1..10000, one integer */
	CHECK(cpi2_cgroup_parse_cpu_weight("1024\n", false, &q) == 0 && q == 1024);
	CHECK(cpi2_cgroup_parse_cpu_weight("2", false, &q) == 0 && q == 2);
	CHECK(cpi2_cgroup_parse_cpu_weight("1", false, &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_weight("262145", false, &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_weight(" 100 \n", true, &q) == 0 && q == 100);
	CHECK(cpi2_cgroup_parse_cpu_weight("1", true, &q) == 0 && q == 1);
	CHECK(cpi2_cgroup_parse_cpu_weight("0", true, &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_weight("10001", true, &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_weight("100 1", true, &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_weight("", true, &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_weight("12x", false, &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_idle("0\n", &q) == 0 && q == 0);
	CHECK(cpi2_cgroup_parse_cpu_idle(" 1 ", &q) == 0 && q == 1);
	CHECK(cpi2_cgroup_parse_cpu_idle("2", &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_idle("-1", &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_idle("", &q) == -EINVAL);
	CHECK(cpi2_cgroup_parse_cpu_idle("1 1", &q) == -EINVAL);
	printf("test-cgroup: ok\n");
	return 0;
}
