/* On this machine's real cgroup v1 cpu controller: a busy process in a fresh cgroup is capped
 * to 0.1 CPU by the cap engine, its CPU usage measured by cpuacct drops to about 0.1, and it
 * returns to about 1 CPU once the cap expires and the previous limit is restored. Then, under a
 * test parent limited to 0.5 CPU, the kernel's rules for the two files: a cap above the child's
 * own limit writes nothing; a cap the kernel refuses (over the parent's, or under the child's
 * burst) leaves the child's own limit exactly as it was and no cap remembered; a cap that needs
 * the period written first, and its restore, go through; a limit the kubelet writes under a cap
 * (a resize, a quota lowered) is left in force, neither fought nor replaced at expiry. The CPU
 * weight (cpu.shares) a cap lowers to 2, and cpu.idle it sets where the kernel has it (which
 * resets the weight when cleared), are back exactly at expiry; the kubelet's weight is left; a
 * release that stopped between clearing cpu.idle and writing the weight back is finished at the
 * restart.
 * Exit 77 (ctest: skipped) with the reason where this cannot run. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/caps.h"
#include "check.h"
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

/* CPU-sec/sec used by the cgroup acct over secs seconds, and by the cgroup ctl (a control task
 * beside it) over the same seconds into *control. */
static double usage2(const char *acct, const char *ctl, double secs, double *control)
{
	long long a = acct_ns(acct), c = acct_ns(ctl);
	double t = now_s(), dt;

	usleep((useconds_t)(secs * 1e6));
	dt = now_s() - t;
	*control = (double)(acct_ns(ctl) - c) / 1e9 / dt;
	return (double)(acct_ns(acct) - a) / 1e9 / dt;
}

/* A busy process in new cgroups cpu and acct (their paths), of CPU weight shares. */
static pid_t busy_in(const char *cpu, const char *acct, const char *shares)
{
	char pidbuf[32];
	pid_t pid;

	CHECK(mkdir(cpu, 0755) == 0 && mkdir(acct, 0755) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		for (;;)
			;
	snprintf(pidbuf, sizeof(pidbuf), "%d\n", pid);
	fake_write(cpu, "cgroup.procs", pidbuf);
	fake_write(acct, "cgroup.procs", pidbuf);
	fake_write(cpu, "cpu.shares", shares);
	return pid;
}

static int skip(const char *why)
{
	printf("test-real-v1: SKIPPED: %s\n", why);
	return 77;
}

static int apply(struct capset *s, struct cgpath_policy *p, const char *task, double cpu,
		 long period, enum caps_outcome *out, char *err, size_t errsz)
{
	struct cgpath_target t;
	struct cap_request r;
	struct cap *cap;
	int rc = cgpath_open(p, task, strlen(task), &t, err, errsz);

	CHECK(rc == 0);
	r = (struct cap_request){.task = task,
				 .task_len = strlen(task),
				 .target = &t,
				 .version = LIMITS_V1,
				 .cpu = cpu,
				 .period_us = period,
				 .expires_us = INT64_MAX / 2,
				 .incident_id = "real"};
	rc = caps_apply(s, &r, out, &cap, err, errsz);
	close(t.fd);
	return rc;
}

static void limit(const char *dir, const char *quota, const char *period, const char *burst)
{
	char q[32], p[32];

	fake_write(dir, "cpu.cfs_quota_us", "-1\n");
	fake_write(dir, "cpu.cfs_period_us", period);
	snprintf(q, sizeof(q), "%s\n", quota);
	fake_write(dir, "cpu.cfs_quota_us", q);
	if (burst) {
		snprintf(p, sizeof(p), "%s\n", burst);
		fake_write(dir, "cpu.cfs_burst_us", p);
	}
}

static bool is(const char *dir, const char *quota, const char *period)
{
	char q[32];
	bool ok;

	snprintf(q, sizeof(q), "%s", fake_read(dir, "cpu.cfs_quota_us"));
	ok = strcmp(q, quota) == 0 && strcmp(fake_read(dir, "cpu.cfs_period_us"), period) == 0;
	if (!ok)
		fprintf(stderr, "%s: quota %s period %s, want %s %s\n", dir, q,
			fake_read(dir, "cpu.cfs_period_us"), quota, period);
	return ok;
}

/* Children of a parent limited to 0.5 CPU (50 ms in 100 ms). */
static void hierarchy(void)
{
	char parent[PATH_MAX], c[4][PATH_MAX + 8], name[4][64], state[PATH_MAX], err[512],
	    idle[PATH_MAX + 32];
	static struct capset s;
	struct cgpath_policy p = {0};
	enum caps_outcome out;
	bool has_burst;

	snprintf(parent, sizeof(parent), CPU_ROOT "/cpi2-enforcer-test-%d-parent", getpid());
	CHECK(mkdir(parent, 0755) == 0);
	limit(parent, "50000", "100000\n", NULL);
	for (int i = 0; i < 4; i++) {
		snprintf(name[i], sizeof(name[i]), "c%d", i);
		snprintf(c[i], sizeof(c[i]), "%s/c%d", parent, i);
		CHECK(mkdir(c[i], 0755) == 0);
	}
	has_burst = access(CPU_ROOT "/cpu.cfs_burst_us", F_OK) == 0;
	p.root = parent;
	snprintf(state, sizeof(state), "/tmp/cpi2-enforcer-real-v1-%d.state", getpid());
	memset(&s, 0, sizeof(s));
	s.max_caps = 8;
	s.state_path = state;
	s.policy = &p;

	/* c0 holds its own 0.3 CPU: a cap of 0.8 would raise it (and the kernel would refuse it
	 * over the parent's 0.5): nothing is written */
	limit(c[0], "30000", "100000\n", NULL);
	CHECK(apply(&s, &p, name[0], 0.8, 250000, &out, err, sizeof(err)) == 0 &&
	      out == CAPS_AT_OR_BELOW);
	CHECK(is(c[0], "30000", "100000") && s.n == 0);

	/* c1 has no limit of its own (the parent's applies): 0.8 is refused by the kernel after
	 * the period was written; the period is put back, exactly, and no cap is remembered */
	CHECK(apply(&s, &p, name[1], 0.8, 250000, &out, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "unchanged") != NULL);
	CHECK(is(c[1], "-1", "100000") && s.n == 0);

	/* c2: 0.4 CPU with a burst of 30 ms; a cap of 0.1 over 250 ms (quota 25 ms, under the
	 * burst) is refused by the kernel: the old limit stays */
	if (has_burst) {
		limit(c[2], "40000", "100000\n", "30000");
		CHECK(apply(&s, &p, name[2], 0.1, 250000, &out, err, sizeof(err)) == -EINVAL);
		CHECK(is(c[2], "40000", "100000") && s.n == 0);
	}

	/* c3: 0.4 CPU; a cap of 0.2 over 250 ms has a larger quota (50 ms): period first, then
	 * quota; the restore goes the other way; both accepted, exact */
	limit(c[3], "40000", "100000\n", NULL);
	CHECK(apply(&s, &p, name[3], 0.2, 250000, &out, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED);
	CHECK(is(c[3], "50000", "250000") && s.n == 1);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 && s.n == 0);
	CHECK(is(c[3], "40000", "100000"));

	/* the kubelet resizes c3 under a new cap (period first, then quota, as runc writes them):
	 * the check drops the cap and writes nothing; then a quota alone lowered under a cap: its
	 * expiry leaves it, and the 0.45 CPU from before that cap is not restored */
	CHECK(apply(&s, &p, name[3], 0.2, 250000, &out, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED && is(c[3], "50000", "250000"));
	fake_write(c[3], "cpu.cfs_period_us", "100000\n");
	fake_write(c[3], "cpu.cfs_quota_us", "45000\n");
	CHECK(caps_check(&s, 0, NULL, err, sizeof(err)) == 1 && s.n == 0);
	CHECK(strstr(err, "now 45000 100000") != NULL && is(c[3], "45000", "100000"));
	CHECK(apply(&s, &p, name[3], 0.2, 250000, &out, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED && is(c[3], "50000", "250000"));
	fake_write(c[3], "cpu.cfs_quota_us", "10000\n");
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 1 && s.n == 0);
	CHECK(is(c[3], "10000", "250000"));

	/* the kubelet sets c3's cpu.shares under a cap that lowered them (clearing cpu.idle first
	 * where the cap set it: the kernel takes no weight while it is set): its weight stays, the
	 * one from before the cap is not put back over it */
	s.cap_weight = true;
	s.cap_idle = true;
	limit(c[3], "40000", "100000\n", NULL);
	fake_write(c[3], "cpu.shares", "1024\n");
	CHECK(apply(&s, &p, name[3], 0.2, 250000, &out, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED && s.caps[0].weight.written == 2);
	if (s.caps[0].idle.written)
		fake_write(c[3], "cpu.idle", "0\n");
	else
		CHECK(strcmp(fake_read(c[3], "cpu.shares"), "2") == 0);
	fake_write(c[3], "cpu.shares", "512\n");
	CHECK(caps_check(&s, 0, NULL, err, sizeof(err)) == 0 && s.n == 1);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 && s.n == 0);
	CHECK(is(c[3], "40000", "100000") && strcmp(fake_read(c[3], "cpu.shares"), "512") == 0);

	/* a release that stopped after it cleared cpu.idle (the kernel then gives the default
	 * weight: 8192 -> 1024) and before it wrote the weight back: the restart finishes it */
	snprintf(idle, sizeof(idle), "%s/cpu.idle", c[3]);
	if (access(idle, F_OK) == 0) {
		static struct capset again;

		fake_write(c[3], "cpu.shares", "8192\n");
		CHECK(apply(&s, &p, name[3], 0.2, 250000, &out, err, sizeof(err)) == 0 &&
		      out == CAPS_APPLIED && s.caps[0].idle.written == 1);
		s.caps[0].releasing = true; /* what caps_release records before its first write */
		CHECK(caps_save(&s, err, sizeof(err)) == 0);
		fake_write(c[3], "cpu.idle", "0\n");
		CHECK(strcmp(fake_read(c[3], "cpu.shares"), "1024") == 0);
		memset(&again, 0, sizeof(again));
		again.max_caps = 8;
		again.state_path = state;
		again.policy = &p;
		CHECK(caps_load(&again, err, sizeof(err)) == 0 && again.n == 1 &&
		      again.caps[0].releasing);
		CHECK(caps_release(&again, 0, NULL, err, sizeof(err)) == 0 && again.n == 0);
		CHECK(is(c[3], "40000", "100000") &&
			  strcmp(fake_read(c[3], "cpu.shares"), "8192") == 0,
		      "cpu.shares %s", fake_read(c[3], "cpu.shares"));
		s.n = 0;
	}

	for (int i = 3; i >= 0; i--)
		rmdir(c[i]);
	rmdir(parent);
	unlink(state);
	snprintf(idle, sizeof(idle), "%s.released", state);
	unlink(idle);
	printf("test-real-v1: under a parent at 0.5 CPU: no raise, refused caps leave the limit "
	       "exact%s, "
	       "period-first cap and its restore, the kubelet's limits left in force\n",
	       has_burst ? " (over the parent, under the burst)" : "");
}

int main(void)
{
	char cpu[PATH_MAX], acct[PATH_MAX], err[512];
	static struct capset s;
	enum caps_outcome out;
	struct cap *cap;
	pid_t busy, control;
	double before, capped, after, c_before, c_capped, c_after;
	char ctl_cpu[PATH_MAX + 16], ctl_acct[PATH_MAX + 16];
	char idle[PATH_MAX + 16];
	bool has_idle;

	if (geteuid() != 0)
		return skip("needs root to create cgroups under " CPU_ROOT);
	if (access(CPU_ROOT "/cpu.cfs_quota_us", W_OK) != 0 ||
	    access(ACCT_ROOT "/cpuacct.usage", R_OK) != 0)
		return skip("no writable cgroup v1 cpu and cpuacct controllers at " CPU_ROOT
			    ", " ACCT_ROOT);
	snprintf(cpu, sizeof(cpu), CPU_ROOT "/cpi2-enforcer-test-%d", getpid());
	snprintf(acct, sizeof(acct), ACCT_ROOT "/cpi2-enforcer-test-%d", getpid());
	snprintf(idle, sizeof(idle), "%s/cpu.idle", cpu);
	if (mkdir(cpu, 0755) != 0 || mkdir(acct, 0755) != 0)
		return skip("cannot create a cgroup under " CPU_ROOT);

	/* a pod requesting 8 CPUs, and a control beside it with the same weight: what the task
	 * gets before and after the cap is judged against what the control gets over the same
	 * second (other agents load this machine, and how much they leave varies) */
	rmdir(cpu);
	rmdir(acct);
	busy = busy_in(cpu, acct, "8192\n");
	snprintf(ctl_cpu, sizeof(ctl_cpu), "%s-control", cpu);
	snprintf(ctl_acct, sizeof(ctl_acct), "%s-control", acct);
	control = busy_in(ctl_cpu, ctl_acct, "8192\n");
	before = usage2(acct, ctl_acct, 1.0, &c_before);
	memset(&s, 0, sizeof(s));
	s.max_caps = 4;
	s.cap_weight = true;
	s.cap_idle = true;
	struct cgpath_policy pol = {.root = CPU_ROOT};
	struct cgpath_target t;
	char task[64];
	snprintf(task, sizeof(task), "cpi2-enforcer-test-%d", getpid());
	s.policy = &pol;
	CHECK(cgpath_open(&pol, task, strlen(task), &t, err, sizeof(err)) == 0);
	CHECK(limits_detect(t.fd) == LIMITS_V1);
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	int64_t t0 = (int64_t)rt.tv_sec * 1000000 + rt.tv_nsec / 1000;
	struct cap_request r = {.task = task,
				.task_len = strlen(task),
				.target = &t,
				.version = LIMITS_V1,
				.cpu = 0.1,
				.period_us = 100000,
				.expires_us = t0 + 3000000,
				.incident_id = "real-test"};
	CHECK(caps_apply(&s, &r, &out, &cap, err, sizeof(err)) == 0);
	close(t.fd);
	/* the kernel takes the lowest weight with the cap, and cpu.idle where it has it (then it
	 * reports its own idle weight) */
	has_idle = access(idle, F_OK) == 0;
	CHECK(cap->weight.previous == 8192 && cap->weight.written == 2);
	if (has_idle) {
		char shares[PATH_MAX + 16];
		int fd;

		CHECK(strcmp(fake_read(cpu, "cpu.idle"), "1") == 0 && cap->idle.written == 1 &&
		      strcmp(fake_read(cpu, "cpu.shares"), "2") != 0);
		/* while cpu.idle is set the kernel refuses every weight write: a kubelet's in-place
		 * resize of this pod fails until the cap ends (enforcer/README.md, cap_idle) */
		snprintf(shares, sizeof(shares), "%s/cpu.shares", cpu);
		fd = open(shares, O_WRONLY);
		CHECK(fd >= 0 && write(fd, "4096\n", 5) == -1 && errno == EINVAL);
		close(fd);
	} else
		CHECK(strcmp(fake_read(cpu, "cpu.shares"), "2") == 0);
	usleep(200000); /* within a period or two the cap bites */
	capped = usage2(acct, ctl_acct, 2.0, &c_capped);
	/* the cap written is exactly 0.1 CPU; what the task gets under it may be far less: with
	 * cpu.idle it runs only on CPU time no other task wants (none, on a loaded machine) */
	CHECK(strcmp(fake_read(cpu, "cpu.cfs_quota_us"), "10000") == 0 &&
	      strcmp(fake_read(cpu, "cpu.cfs_period_us"), "100000") == 0);
	/* wait for the expiry, then release as the enforcer's loop does */
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &rt);
		if (caps_next_expired(&s, (int64_t)rt.tv_sec * 1000000 + rt.tv_nsec / 1000) >= 0)
			break;
		usleep(50000);
	}
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0);
	CHECK(strcmp(fake_read(cpu, "cpu.cfs_quota_us"), "-1") == 0);
	CHECK(strcmp(fake_read(cpu, "cpu.shares"), "8192") == 0, "%s",
	      fake_read(cpu, "cpu.shares"));
	CHECK(!has_idle || strcmp(fake_read(cpu, "cpu.idle"), "0") == 0);
	after = usage2(acct, ctl_acct, 1.0, &c_after);

	kill(busy, SIGKILL);
	kill(control, SIGKILL);
	waitpid(busy, NULL, 0);
	waitpid(control, NULL, 0);
	rmdir(cpu);
	rmdir(acct);
	rmdir(ctl_cpu);
	rmdir(ctl_acct);
	printf("test-real-v1: CPU usage (the control beside it) before %.3f (%.3f), capped to 0.1: "
	       "%.3f (%.3f), after expiry %.3f (%.3f); cpu.shares 8192 -> 2%s while capped -> "
	       "8192\n",
	       before, c_before, capped, c_capped, after, c_after,
	       has_idle ? " and cpu.idle 0 -> 1" : "");
	CHECK(before > 0.5 * c_before && c_before > 0.05);
	CHECK(capped < 0.15 && (has_idle || capped > 0.05));
	CHECK(after > 0.5 * c_after && c_after > 0.05);
	hierarchy();
	return 0;
}
