/* On this machine's real cgroup v1 cpu controller: a busy process in a fresh cgroup is capped
 * to 0.1 CPU by the cap engine, its CPU usage measured by cpuacct drops to about 0.1, and it
 * returns to about 1 CPU once the cap expires and the previous limit is restored.
 * Exit 77 (ctest: skipped) with the reason where this cannot run. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/caps.h"
#include "../../libcpi2/tests/check.h"
#include "faketree.h"

#define CPU_ROOT "/sys/fs/cgroup/cpu"
#define ACCT_ROOT "/sys/fs/cgroup/cpuacct"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long acct_ns(const char *dir)
{
	char *s = fake_read(dir, "cpuacct.usage");

	CHECK(s != NULL);
	return atoll(s);
}

/* CPU-sec/sec used by the cgroup over secs seconds. */
static double usage(const char *acct, double secs)
{
	long long a = acct_ns(acct);
	double t = now_s();

	usleep((useconds_t)(secs * 1e6));
	return (double)(acct_ns(acct) - a) / 1e9 / (now_s() - t);
}

static int skip(const char *why)
{
	printf("test-real-v1: SKIPPED: %s\n", why);
	return 77;
}

int main(void)
{
	char cpu[PATH_MAX], acct[PATH_MAX], pidbuf[32], err[512];
	static struct capset s;
	enum caps_outcome out;
	struct cap *cap;
	pid_t busy;
	double before, capped, after;

	if (geteuid() != 0)
		return skip("needs root to create cgroups under " CPU_ROOT);
	if (access(CPU_ROOT "/cpu.cfs_quota_us", W_OK) != 0 || access(ACCT_ROOT "/cpuacct.usage", R_OK) != 0)
		return skip("no writable cgroup v1 cpu and cpuacct controllers at " CPU_ROOT ", " ACCT_ROOT);
	snprintf(cpu, sizeof(cpu), CPU_ROOT "/cpi2-enforcer-test-%d", getpid());
	snprintf(acct, sizeof(acct), ACCT_ROOT "/cpi2-enforcer-test-%d", getpid());
	if (mkdir(cpu, 0755) != 0 || mkdir(acct, 0755) != 0)
		return skip("cannot create a cgroup under " CPU_ROOT);

	busy = fork();
	CHECK(busy >= 0);
	if (busy == 0)
		for (;;)
			;
	snprintf(pidbuf, sizeof(pidbuf), "%d\n", busy);
	fake_write(cpu, "cgroup.procs", pidbuf);
	fake_write(acct, "cgroup.procs", pidbuf);

	before = usage(acct, 1.0);
	memset(&s, 0, sizeof(s));
	s.max_caps = 4;
	CHECK(limits_detect(cpu) == LIMITS_V1);
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	int64_t t0 = (int64_t)rt.tv_sec * 1000000 + rt.tv_nsec / 1000;
	CHECK(caps_apply(&s, "cpi2-enforcer-test", cpu, LIMITS_V1, 0.1, 100000, t0 + 3000000, "real-test", "",
			 &out, &cap, err, sizeof(err)) == 0);
	usleep(200000); /* within a period or two the cap bites */
	capped = usage(acct, 2.0);
	/* wait for the expiry, then release as the enforcer's loop does */
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &rt);
		if (caps_next_expired(&s, (int64_t)rt.tv_sec * 1000000 + rt.tv_nsec / 1000) >= 0)
			break;
		usleep(50000);
	}
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0);
	CHECK(strcmp(fake_read(cpu, "cpu.cfs_quota_us"), "-1") == 0);
	after = usage(acct, 1.0);

	kill(busy, SIGKILL);
	waitpid(busy, NULL, 0);
	rmdir(cpu);
	rmdir(acct);
	printf("test-real-v1: CPU usage before %.3f, capped to 0.1: %.3f, after expiry %.3f\n", before, capped, after);
	CHECK(before > 0.5);
	CHECK(capped > 0.05 && capped < 0.15);
	CHECK(after > 0.5);
	return 0;
}
