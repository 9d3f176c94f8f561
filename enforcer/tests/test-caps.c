/* caps and limits against fake v1 and v2 trees: apply, renew, expire, restore, uncap, the
 * per-host limit, dry-run, the state file that survives a crash; and the hostile cases: a cap
 * that would raise a limit, a malformed state-file line, a cgroup replaced under its name, a
 * capped directory or limit file swapped for a symlink to a file outside the root; the CPU
 * weight a cap lowers and restores. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "../src/caps.h"
#include "check.h"
#include "faketree.h"

static struct cgpath_policy pol;

static int apply(struct capset *s, const char *task, double cpu, long period, int64_t expires,
		 const char *id, enum caps_outcome *out, struct cap **cap, char *err, size_t errsz)
{
	struct cgpath_target t;
	struct cap_request r;
	int rc = cgpath_open(&pol, task, strlen(task), &t, err, errsz);

	if (rc)
		return rc;
	r = (struct cap_request){.task = task,
				 .task_len = strlen(task),
				 .target = &t,
				 .version = limits_detect(t.fd),
				 .cpu = cpu,
				 .period_us = period,
				 .expires_us = expires,
				 .incident_id = id,
				 .victim_task = "ls/v"};
	rc = caps_apply(s, &r, out, cap, err, errsz);
	close(t.fd);
	return rc;
}

static void set_limit(const char *dir, int version, long quota, long period)
{
	char q[32], p[64];

	if (version == 2) {
		snprintf(p, sizeof(p), quota < 0 ? "max %ld\n" : "%ld %ld\n",
			 quota < 0 ? period : quota, period);
		fake_write(dir, "cpu.max", p);
	} else {
		snprintf(q, sizeof(q), "%ld\n", quota);
		snprintf(p, sizeof(p), "%ld\n", period);
		fake_write(dir, "cpu.cfs_quota_us", q);
		fake_write(dir, "cpu.cfs_period_us", p);
	}
}

static void run(int version)
{
	char root[PATH_MAX], a[PATH_MAX], b[PATH_MAX], c3[PATH_MAX], d[PATH_MAX],
	    state[PATH_MAX + 16], err[512];
	char outside[PATH_MAX + 16];
	static struct capset s, again;
	enum caps_outcome out;
	struct cap *cap, released;
	const char *limit_file = version == 2 ? "cpu.max" : "cpu.cfs_quota_us";
	int i;

	fake_root(root, sizeof(root));
	memset(&pol, 0, sizeof(pol));
	pol.root = root;
	fake_cgroup(root, "batch/a", version, a, sizeof(a));
	fake_cgroup(root, "batch/b", version, b, sizeof(b));
	fake_cgroup(root, "batch/c", version, c3, sizeof(c3));
	fake_cgroup(root, "batch/d", version, d, sizeof(d));
	/* b has a limit of its own before we cap it: it must come back exactly. */
	set_limit(b, version, 50000, 100000);
	snprintf(state, sizeof(state), "%s/state", root);
	memset(&s, 0, sizeof(s));
	s.max_caps = 2;
	s.state_path = state;
	s.policy = &pol;

	/* apply */
	CHECK(apply(&s, "batch/a", 0.1, 250000, 1000, "inc-1", &out, &cap, err, sizeof(err)) == 0);
	CHECK(out == CAPS_APPLIED && s.n == 1);
	CHECK(strcmp(fake_read(a, limit_file), version == 2 ? "25000 250000" : "25000") == 0);
	if (version == 1)
		CHECK(strcmp(fake_read(a, "cpu.cfs_period_us"), "250000") == 0);

	/* renew: no stacking, new expiry, original previous limit kept, the lower cap wins */
	CHECK(apply(&s, "batch/a", 0.01, 250000, 2000, "inc-2", &out, &cap, err, sizeof(err)) == 0);
	CHECK(out == CAPS_RENEWED && s.n == 1 && cap->expires_us == 2000);
	CHECK(strcmp(cap->previous, version == 2 ? "max 100000" : "-1 100000") == 0);
	CHECK(strcmp(fake_read(a, limit_file), version == 2 ? "2500 250000" : "2500") == 0);
	CHECK(apply(&s, "batch/a", 0.5, 250000, 2500, "inc-2b", &out, &cap, err, sizeof(err)) == 0);
	CHECK(out == CAPS_RENEWED && cap->expires_us == 2500 && cap->cpu < 0.011);
	CHECK(strcmp(fake_read(a, limit_file), version == 2 ? "2500 250000" : "2500") == 0);

	/* A cap never raises: b is held at 0.5 CPU; caps of 1024, 0.6 and 0.5 write nothing. */
	CHECK(apply(&s, "batch/b", 1024, 100000, 1500, "raise", &out, &cap, err, sizeof(err)) == 0);
	CHECK(out == CAPS_AT_OR_BELOW && s.n == 1);
	CHECK(apply(&s, "batch/b", 0.6, 250000, 1500, "raise", &out, &cap, err, sizeof(err)) == 0 &&
	      out == CAPS_AT_OR_BELOW);
	CHECK(apply(&s, "batch/b", 0.5, 100000, 1500, "same", &out, &cap, err, sizeof(err)) == 0 &&
	      out == CAPS_AT_OR_BELOW);
	CHECK(strcmp(fake_read(b, limit_file), version == 2 ? "50000 100000" : "50000") == 0);
	if (version == 1)
		CHECK(strcmp(fake_read(b, "cpu.cfs_period_us"), "100000") == 0);

	/* second cap, then the per-host limit */
	CHECK(apply(&s, "batch/b", 0.1, 100000, 1500, "inc-3", &out, &cap, err, sizeof(err)) == 0);
	CHECK(out == CAPS_APPLIED && s.n == 2);
	CHECK(apply(&s, "batch/c", 0.1, 100000, 1500, "inc-4", &out, &cap, err, sizeof(err)) ==
	      -EBUSY);
	CHECK(strstr(err, "max_caps") != NULL);
	CHECK(strcmp(fake_read(c3, limit_file), version == 2 ? "max 100000" : "-1") == 0);

	/* the state file names both caps, with their identity: a restarted enforcer sees them */
	memset(&again, 0, sizeof(again));
	again.state_path = state;
	again.max_caps = 2;
	again.policy = &pol;
	CHECK(caps_load(&again, err, sizeof(err)) == 0);
	CHECK(again.n == 2 && caps_find(&again, a) >= 0 && caps_find(&again, b) >= 0);
	CHECK(strcmp(again.caps[caps_find(&again, b)].previous, "50000 100000") == 0);
	CHECK(again.caps[caps_find(&again, b)].ino == s.caps[caps_find(&s, b)].ino &&
	      again.caps[0].ino != 0);
	CHECK(caps_next_expiry(&again) == 1500);

	/* expire: only b is due at 1500; restore its exact previous limit */
	CHECK(caps_next_expired(&again, 1499) == -1);
	i = caps_next_expired(&again, 1500);
	CHECK(i >= 0 && strcmp(again.caps[i].dir, b) == 0);
	CHECK(caps_release(&again, i, &released, err, sizeof(err)) == 0);
	CHECK(strcmp(released.task, "batch/b") == 0);
	CHECK(strcmp(fake_read(b, limit_file), version == 2 ? "50000 100000" : "50000") == 0);
	if (version == 1)
		CHECK(strcmp(fake_read(b, "cpu.cfs_period_us"), "100000") == 0);

	/* uncap a: back to no limit; state file empty */
	CHECK(caps_release(&again, caps_find(&again, a), NULL, err, sizeof(err)) == 0);
	CHECK(strcmp(fake_read(a, limit_file), version == 2 ? "max 100000" : "-1") == 0);
	CHECK(caps_load(&s, err, sizeof(err)) == 0 && s.n == 0);

	/* a cgroup that vanished while capped is forgotten without error */
	CHECK(apply(&s, "batch/c", 0.1, 100000, 1500, "inc-5", &out, &cap, err, sizeof(err)) == 0);
	fake_sh("rm -rf '%s'", c3);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 && s.n == 0 && strstr(err, "gone"));

	/* Replaced: removed and made again under the same name (another inode) with a limit of
	 * its own. The old limit is not restored onto it: released as replaced. */
	CHECK(apply(&s, "batch/d", 0.1, 100000, 1500, "inc-r", &out, &cap, err, sizeof(err)) == 0 &&
	      s.n == 1);
	fake_sh("mkdir '%s.new' && rm -rf '%s' && mv '%s.new' '%s'", d, d, d, d);
	set_limit(d, version, 70000, 100000);
	memset(&again, 0, sizeof(again));
	again.state_path = state;
	again.max_caps = 2;
	again.policy = &pol;
	CHECK(caps_load(&again, err, sizeof(err)) == 0 && again.n == 1); /* as after a restart */
	CHECK(caps_release(&again, 0, NULL, err, sizeof(err)) == 0 && again.n == 0 &&
	      strstr(err, "replaced"));
	CHECK(strcmp(fake_read(d, limit_file), version == 2 ? "70000 100000" : "70000") == 0);
	CHECK(caps_load(&s, err, sizeof(err)) == 0 && s.n == 0);

	/* Symlinks put where the cap was: the release never writes through them (it once
	 * truncated a file outside the root). First the limit file, then the whole directory. */
	snprintf(outside, sizeof(outside), "%s-outside", root);
	fake_sh("mkdir -p '%s' && printf 'precious\\n' > '%s/%s'", outside, outside, limit_file);
	CHECK(apply(&s, "batch/a", 0.1, 100000, 1500, "inc-s", &out, &cap, err, sizeof(err)) == 0 &&
	      s.n == 1);
	fake_sh("rm '%s/%s' && ln -s '%s/%s' '%s/%s'", a, limit_file, outside, limit_file, a,
		limit_file);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) != 0 && s.n == 1); /* kept, to retry */
	CHECK(strcmp(fake_read(outside, limit_file), "precious") == 0);
	/* the state file named it due before the write was tried: a crash at the write (or after
	 * it) makes the restart release the cap, never resume it */
	memset(&again, 0, sizeof(again));
	again.state_path = state;
	again.max_caps = 2;
	CHECK(caps_load(&again, err, sizeof(err)) == 0 && again.n == 1 &&
	      caps_next_expired(&again, 1) == 0);
	CHECK(s.caps[0].expires_us == 1500); /* in memory, the entry keeps its expiry */
	fake_sh("rm -rf '%s' && ln -s '%s' '%s'", a, outside, a);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 && s.n == 0 &&
	      strstr(err, "symlink"));
	CHECK(strcmp(fake_read(outside, limit_file), "precious") == 0);
	fake_sh("rm -f '%s' && rm -rf '%s'", a, outside);
	fake_cgroup(root, "batch/a", version, a, sizeof(a));

	/* dry-run decides and writes nothing, remembers nothing */
	s.dry_run = true;
	CHECK(apply(&s, "batch/a", 0.1, 100000, 1500, "inc-6", &out, &cap, err, sizeof(err)) == 0);
	CHECK(out == CAPS_DRY_RUN && s.n == 0);
	CHECK(strcmp(fake_read(a, limit_file), version == 2 ? "max 100000" : "-1") == 0);
	s.dry_run = false;

	/* malformed limit files are errors, not crashes */
	fake_write(a, version == 2 ? "cpu.max" : "cpu.cfs_quota_us", "garbage\n");
	CHECK(apply(&s, "batch/a", 0.1, 100000, 1500, "inc-7", &out, &cap, err, sizeof(err)) ==
	      -EINVAL);
	CHECK(s.n == 0);

	/* One malformed state-file line is skipped and named; the caps around it still load (an
	 * older "cap" line without identity too), so none is left in force. */
	char text[PATH_MAX * 3];
	snprintf(text, sizeof(text),
		 "cap2\tbatch/b\t%s\t1\t2\t%d\t50000 100000\t0.100000\t100000\t1500\tinc\tv\n"
		 "cap\tonly\tthree\n"
		 "cap\tbatch/c\t%s\t%d\t%s\t0.1\t100000\t1500\n"
		 "cap2\tbatch/x\t%s/x\t1\t2\t%d\tgarbage\t0.1\t100000\t1500\t\t\n",
		 b, version, c3, version, version == 2 ? "max 100000" : "-1 100000", root, version);
	fake_write(root, "state", text);
	i = caps_load(&s, err, sizeof(err));
	if (i != 2 || s.n != 2)
		fprintf(stderr, "load: %d, n %d: %s\n", i, s.n, err);
	CHECK(i == 2 && s.n == 2);
	CHECK(strstr(err, ":2: malformed") != NULL && strstr(err, ":4: malformed") != NULL);
	CHECK(caps_find(&s, b) >= 0 && caps_find(&s, c3) >= 0 &&
	      s.caps[caps_find(&s, c3)].ino == 0);
	/* older lines: the limit written is the cap's quota over its period */
	CHECK(strcmp(s.caps[caps_find(&s, b)].written, "10000 100000") == 0 &&
	      strcmp(s.caps[caps_find(&s, c3)].written, "10000 100000") == 0);

	fake_rm(root);
}

/* Is dir's limit quota/period (v1: both files)? */
static bool limit_is(const char *dir, int version, long quota, long period)
{
	char want[64], got[64];

	if (version == 2) {
		snprintf(want, sizeof(want), "%ld %ld", quota, period);
		snprintf(got, sizeof(got), "%s", fake_read(dir, "cpu.max"));
	} else {
		snprintf(want, sizeof(want), "%ld %ld", quota, period);
		snprintf(got, sizeof(got), "%s", fake_read(dir, "cpu.cfs_quota_us"));
		snprintf(got + strlen(got), sizeof(got) - strlen(got), " %s",
			 fake_read(dir, "cpu.cfs_period_us"));
	}
	if (strcmp(want, got) != 0)
		fprintf(stderr, "%s: limit '%s', want '%s'\n", dir, got, want);
	return strcmp(want, got) == 0;
}

/* The state file, loaded again as a restart does. */
static struct capset *restarted(const char *state)
{
	static struct capset again;
	char err[512];

	memset(&again, 0, sizeof(again));
	again.state_path = state;
	again.max_caps = 4;
	again.policy = &pol;
	CHECK(caps_load(&again, err, sizeof(err)) == 0, "%s", err);
	return &again;
}

/* Cap kubepods/burstable/pod1 (other_writer's pod): the outcome, or -1 after an error. */
static int pod_cap(struct capset *s, double cpu, long period, int64_t expires, const char *id,
		   struct cap **cap, char *err, size_t errsz)
{
	enum caps_outcome out;

	if (apply(s, "kubepods/burstable/pod1", cpu, period, expires, id, &out, cap, err, errsz) !=
	    0) {
		fprintf(stderr, "cap %s: %s\n", id, err);
		return -1;
	}
	return (int)out;
}

/* Another writer (the kubelet at a pod's start or in-place resize) changes the limit under a
 * cap: at the periodic check, at expiry, at a renewal and at a restart the cap is dropped with
 * nothing written, the other limit is left in force (never fought, never replaced by the stale
 * limit from before the cap), and the note says what changed; raised and lowered further, v1
 * with the quota alone or both files. A restart still finishes its own interrupted writes. */
static void other_writer(int version)
{
	char root[PATH_MAX], a[PATH_MAX], state[PATH_MAX + 16], err[512];
	static struct capset s;
	struct capset *again;
	struct cap *cap, gone;

	fake_root(root, sizeof(root));
	memset(&pol, 0, sizeof(pol));
	pol.root = root;
	fake_cgroup(root, "kubepods/burstable/pod1", version, a, sizeof(a));
	set_limit(a, version, 200000, 100000); /* the kubelet's 2 CPUs */
	snprintf(state, sizeof(state), "%s/state", root);
	memset(&s, 0, sizeof(s));
	s.max_caps = 4;
	s.state_path = state;
	s.policy = &pol;

	/* a cap that holds is left alone by the check */
	CHECK(pod_cap(&s, 0.1, 250000, 1000, "k-1", &cap, err, sizeof(err)) == CAPS_APPLIED &&
	      strcmp(cap->written, "25000 250000") == 0);
	CHECK(caps_check(&s, 0, &gone, err, sizeof(err)) == 0 && s.n == 1);

	/* raised: v1 the quota alone (the period stays the cap's), v2 cpu.max */
	if (version == 1)
		fake_write(a, "cpu.cfs_quota_us", "750000\n");
	else
		set_limit(a, version, 750000, 250000);
	err[0] = '\0';
	CHECK(caps_check(&s, 0, &gone, err, sizeof(err)) == 1 && s.n == 0);
	CHECK(strstr(err, "limit changed by another writer: was 25000 250000 (the cap), now "
			  "750000 250000"),
	      "%s", err);
	CHECK(strcmp(gone.incident_id, "k-1") == 0 && strcmp(gone.previous, "200000 100000") == 0);
	CHECK(limit_is(a, version, 750000, 250000) && restarted(state)->n == 0);
	/* the cap is forgotten: the expiry that comes later restores nothing */
	CHECK(caps_next_expired(&s, INT64_MAX) == -1);

	/* lowered further than the cap, found at expiry: left there, the 3 CPUs not restored */
	CHECK(pod_cap(&s, 0.1, 250000, 1000, "k-2", &cap, err, sizeof(err)) == CAPS_APPLIED);
	set_limit(a, version, 5000, 250000);
	CHECK(caps_release(&s, caps_next_expired(&s, 1000), NULL, err, sizeof(err)) == 1 &&
	      s.n == 0 && strstr(err, "now 5000 250000"));
	CHECK(limit_is(a, version, 5000, 250000) && restarted(state)->n == 0);

	/* at a renewal: nothing written, the cap dropped (CAPS_CHANGED) */
	CHECK(pod_cap(&s, 0.01, 250000, 1000, "k-3", &cap, err, sizeof(err)) == CAPS_APPLIED &&
	      limit_is(a, version, 2500, 250000));
	set_limit(a, version, 50000, 100000);
	err[0] = '\0';
	CHECK(pod_cap(&s, 0.01, 250000, 2000, "k-4", &cap, err, sizeof(err)) == CAPS_CHANGED &&
	      s.n == 0);
	CHECK(strcmp(cap->incident_id, "k-3") == 0 && strstr(err, "now 50000 100000"), "%s", err);
	CHECK(limit_is(a, version, 50000, 100000) && restarted(state)->n == 0);

	/* a writer that puts back the limit from before the cap, while the enforcer runs */
	CHECK(pod_cap(&s, 0.1, 100000, 1000, "k-5", &cap, err, sizeof(err)) == CAPS_APPLIED);
	set_limit(a, version, 50000, 100000);
	CHECK(caps_check(&s, 0, NULL, err, sizeof(err)) == 1 && s.n == 0);
	CHECK(limit_is(a, version, 50000, 100000));

	/* while the enforcer was down: the restart drops the cap, writes nothing */
	CHECK(pod_cap(&s, 0.1, 250000, 1000, "k-6", &cap, err, sizeof(err)) == CAPS_APPLIED);
	set_limit(a, version, 60000, 100000);
	again = restarted(state);
	CHECK(again->n == 1 && again->caps[0].loaded &&
	      strcmp(again->caps[0].written, "25000 250000") == 0);
	CHECK(caps_resume(again, 0, err, sizeof(err)) == 1 && again->n == 0 &&
	      strstr(err, "now 60000 100000"));
	CHECK(limit_is(a, version, 60000, 100000) && restarted(state)->n == 0);
	/* ... and one that expired meanwhile is not restored either */
	s.n = 0;
	CHECK(pod_cap(&s, 0.1, 250000, 1000, "k-7", &cap, err, sizeof(err)) == CAPS_APPLIED);
	set_limit(a, version, 70000, 100000);
	again = restarted(state);
	CHECK(caps_release(again, 0, NULL, err, sizeof(err)) == 1 &&
	      limit_is(a, version, 70000, 100000));

	/* A crash between the state file and the cgroup writes is not another writer: the
	 * restart finds the previous limit (or, v1, the quota written and the old period) and
	 * writes the cap. */
	s.n = 0;
	CHECK(pod_cap(&s, 0.1, 250000, 1000, "k-8", &cap, err, sizeof(err)) == CAPS_APPLIED);
	set_limit(a, version, 70000, 100000);
	again = restarted(state);
	CHECK(caps_resume(again, 0, err, sizeof(err)) == 0 && again->n == 1 &&
	      !again->caps[0].loaded);
	CHECK(limit_is(a, version, 25000, 250000));
	if (version == 1) {
		fake_write(a, "cpu.cfs_period_us",
			   "100000\n"); /* the quota first, then the crash */
		again = restarted(state);
		CHECK(caps_resume(again, 0, err, sizeof(err)) == 0 && again->n == 1);
		CHECK(limit_is(a, version, 25000, 250000));
		/* its release after the restart restores from the same mix */
		fake_write(a, "cpu.cfs_period_us", "100000\n");
		again = restarted(state);
		CHECK(caps_release(again, 0, NULL, err, sizeof(err)) == 0);
		CHECK(limit_is(a, version, 70000, 100000));
	}
	fake_rm(root);
}

/* Does the state file hold text? */
static bool state_has(const char *state, const char *text)
{
	static char buf[8192];
	FILE *f = fopen(state, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

/* An enforcer that lowers weights with its caps, its state in state. */
static void fresh(struct capset *s, const char *state)
{
	memset(s, 0, sizeof(*s));
	s->max_caps = 4;
	s->state_path = state;
	s->policy = &pol;
	s->cap_weight = true;
	s->cap_idle = true;
}

/* The CPU priority with the cap (cap_weight): a new cap lowers the weight to the lowest the
 * kernel takes (v1 cpu.shares 2, v2 cpu.weight 1) and sets cpu.idle, the values found go to the
 * state file (cap6) before the writes, and every end of the cap puts back exactly those values;
 * a weight at or below the lowest is never raised; another writer's value under the cap is left
 * as it is and never fought; a restart puts back a lowering a crash interrupted; cap3 and cap4
 * lines (no weight, no idle flag) still load and lift without touching what they did not write;
 * a kernel without cpu.idle gets the weight alone; --no-cap-weight writes the limit alone. */
static void weights(int version)
{
	char root[PATH_MAX], a[PATH_MAX], state[PATH_MAX + 16], err[512], line[PATH_MAX + 256];
	const char *wfile = version == 2 ? "cpu.weight" : "cpu.shares";
	const char *low = version == 2 ? "1" : "2";
	long found = version == 2 ? 100 : 8192;
	static struct capset s;
	struct capset *again;
	enum caps_outcome out;
	struct cap *cap, gone;
	char text[32];
	FILE *f;

	fake_root(root, sizeof(root));
	memset(&pol, 0, sizeof(pol));
	pol.root = root;
	fake_cgroup(root, "batch/a", version, a, sizeof(a));
	snprintf(text, sizeof(text), "%ld\n", found);
	fake_write(a, wfile, text);
	fake_write(a, "cpu.idle", "0\n");
	snprintf(state, sizeof(state), "%s/state", root);
	fresh(&s, state);

	/* lowered with the cap, the weight found in the state file; a renewal keeps it */
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-1", &out, &cap, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED);
	CHECK(strcmp(fake_read(a, wfile), low) == 0, "%s", fake_read(a, wfile));
	CHECK(cap->weight.previous == found && cap->weight.written == atol(low));
	CHECK(strcmp(fake_read(a, "cpu.idle"), "1") == 0 && cap->idle.previous == 0 &&
	      cap->idle.written == 1);
	CHECK(strstr(err, "lowered") != NULL && strstr(err, "cpu.idle set") != NULL, "%s", err);
	snprintf(text, sizeof(text), "\tw-1\tls/v\t%ld\t%s\t0\t1\t", found, low);
	CHECK(state_has(state, "cap6\t") && state_has(state, text));
	CHECK(apply(&s, "batch/a", 0.1, 10000, 2000, "w-2", &out, &cap, err, sizeof(err)) == 0 &&
	      out == CAPS_RENEWED && cap->weight.written == atol(low));
	CHECK(strcmp(fake_read(a, wfile), low) == 0 && strcmp(fake_read(a, "cpu.idle"), "1") == 0);

	/* a restart: the cap and its weight load; resume keeps the lowest; the release restores
	 * exactly the weight found, and the limit */
	again = restarted(state);
	CHECK(again->n == 1 && again->caps[0].weight.previous == found &&
	      again->caps[0].weight.written == atol(low));
	CHECK(caps_resume(again, 0, err, sizeof(err)) == 0, "%s", err);
	CHECK(strcmp(fake_read(a, wfile), low) == 0);
	CHECK(again->caps[0].idle.written == 1);
	CHECK(caps_release(again, 0, NULL, err, sizeof(err)) == 0, "%s", err);
	CHECK(atol(fake_read(a, wfile)) == found && again->n == 0);
	CHECK(strcmp(fake_read(a, "cpu.idle"), "0") == 0);
	CHECK(version == 2 ? strcmp(fake_read(a, "cpu.max"), "max 100000") == 0
			   : limit_is(a, version, -1, 100000));

	/* a crash in a release after cpu.idle was cleared (the kernel then gives the default
	 * weight) and before the weight found was written back: the restart finishes it */
	fake_write(a, wfile, version == 2 ? "250\n" : "8192\n");
	fresh(&s, state);
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-2b", &out, &cap, err, sizeof(err)) == 0 &&
	      cap->idle.written == 1);
	s.caps[0].releasing = true; /* what caps_release records before its first write */
	CHECK(caps_save(&s, err, sizeof(err)) == 0);
	fake_write(a, "cpu.idle", "0\n");
	fake_write(a, wfile, version == 2 ? "100\n" : "1024\n");
	again = restarted(state);
	CHECK(again->n == 1 && again->caps[0].releasing && caps_next_expired(again, 1) == 0);
	CHECK(caps_release(again, 0, NULL, err, sizeof(err)) == 0, "%s", err);
	CHECK(atol(fake_read(a, wfile)) == (version == 2 ? 250 : 8192), "%s", fake_read(a, wfile));
	CHECK(strcmp(fake_read(a, "cpu.idle"), "0") == 0);
	set_limit(a, version, -1, 100000);
	snprintf(text, sizeof(text), "%ld\n", found);
	fake_write(a, wfile, text);

	/* a crash between the state file and the weight write: the restart lowers it again */
	fresh(&s, state);
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-3", &out, &cap, err, sizeof(err)) == 0);
	snprintf(text, sizeof(text), "%ld\n", found);
	fake_write(a, wfile, text);
	fake_write(a, "cpu.idle", "0\n");
	again = restarted(state);
	CHECK(caps_resume(again, 0, err, sizeof(err)) == 0 && again->caps[0].weight.written);
	CHECK(strcmp(fake_read(a, wfile), low) == 0 && strcmp(fake_read(a, "cpu.idle"), "1") == 0);
	CHECK(caps_release(again, 0, NULL, err, sizeof(err)) == 0 &&
	      atol(fake_read(a, wfile)) == found && strcmp(fake_read(a, "cpu.idle"), "0") == 0);

	/* another writer's weight under the cap: the check leaves it and the cap forgets its own
	 * (state file too), so the release does not put the old one back over it */
	fresh(&s, state);
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-4", &out, &cap, err, sizeof(err)) == 0);
	fake_write(a, wfile, "300\n");
	CHECK(caps_check(&s, 0, &gone, err, sizeof(err)) == 0 && s.n == 1);
	/* (the kernel takes no weight while cpu.idle is set: the weight is not looked at then) */
	CHECK(s.caps[0].weight.written == atol(low));
	fake_write(a, "cpu.idle", "0\n"); /* the writer cleared it first, as it must */
	CHECK(caps_check(&s, 0, &gone, err, sizeof(err)) == 0 && s.n == 1);
	CHECK(s.caps[0].weight.written == 0 && s.caps[0].idle.written == 0 &&
	      state_has(state, "\tw-4\tls/v\t0\t0\t0\t0\t"));
	CHECK(caps_check(&s, 0, &gone, err, sizeof(err)) == 0 &&
	      strcmp(fake_read(a, wfile), "300") == 0);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 &&
	      strcmp(fake_read(a, wfile), "300") == 0 &&
	      strcmp(fake_read(a, "cpu.idle"), "0") == 0);

	/* another writer's cpu.idle under the cap (0 again, which resets the weight): left, and
	 * the cap forgets the idle flag and the weight */
	snprintf(text, sizeof(text), "%ld\n", found);
	fake_write(a, wfile, text);
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-4b", &out, &cap, err, sizeof(err)) == 0 &&
	      cap->idle.written == 1);
	fake_write(a, "cpu.idle", "0\n");
	CHECK(caps_check(&s, 0, &gone, err, sizeof(err)) == 0 && s.caps[0].idle.written == 0 &&
	      s.caps[0].weight.written == 0 && strcmp(fake_read(a, "cpu.idle"), "0") == 0);
	fake_write(a, "cpu.idle", "1\n"); /* and sets it again: the release leaves it */
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 &&
	      strcmp(fake_read(a, "cpu.idle"), "1") == 0);
	fake_write(a, "cpu.idle", "0\n");

	/* another writer's limit under the cap: the cap is dropped and its weight put back */
	snprintf(text, sizeof(text), "%ld\n", found);
	fake_write(a, wfile, text);
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-5", &out, &cap, err, sizeof(err)) == 0);
	CHECK(strcmp(fake_read(a, wfile), low) == 0);
	set_limit(a, version, 70000, 100000);
	CHECK(caps_check(&s, 0, &gone, err, sizeof(err)) == 1 && s.n == 0);
	CHECK(atol(fake_read(a, wfile)) == found && limit_is(a, version, 70000, 100000));
	CHECK(strcmp(fake_read(a, "cpu.idle"), "0") == 0);
	set_limit(a, version, -1, 100000);

	/* never raised: a weight at the lowest is left alone; cpu.idle is still set, and the weight
	 * kept to put back after it (clearing it resets the weight) */
	fake_write(a, wfile, version == 2 ? "1\n" : "2\n");
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-6", &out, &cap, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED && cap->weight.written == atol(low) &&
	      cap->weight.previous == atol(low) && cap->idle.written == 1);
	snprintf(text, sizeof(text), "\tw-6\tls/v\t%s\t%s\t0\t1\t", low, low);
	CHECK(strcmp(fake_read(a, wfile), low) == 0 && state_has(state, text), "%s", text);
	fake_write(a, wfile, "1024\n"); /* what clearing cpu.idle does to the weight */
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 &&
	      strcmp(fake_read(a, wfile), low) == 0 && strcmp(fake_read(a, "cpu.idle"), "0") == 0);

	/* without cpu.idle, a weight at the lowest is not recorded, and another writer's raise
	 * under the cap is left as it is */
	snprintf(line, sizeof(line), "%s/cpu.idle", a);
	CHECK(unlink(line) == 0);
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-6b", &out, &cap, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED && cap->weight.written == 0 && cap->idle.written == 0);
	CHECK(state_has(state, "\tw-6b\tls/v\t0\t0\t0\t0\t"));
	fake_write(a, wfile, "2\n");
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 &&
	      strcmp(fake_read(a, wfile), "2") == 0);
	fake_write(a, "cpu.idle", "0\n");

	/* cap_idle off (--no-cap-idle): the weight alone, cpu.idle left at 0 */
	s.cap_idle = false;
	snprintf(text, sizeof(text), "%ld\n", found);
	fake_write(a, wfile, text);
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-6c", &out, &cap, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED && cap->weight.written == atol(low) && cap->idle.written == 0 &&
	      strcmp(fake_read(a, "cpu.idle"), "0") == 0 && strcmp(fake_read(a, wfile), low) == 0);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 &&
	      atol(fake_read(a, wfile)) == found);
	s.cap_idle = true;

	/* off: the limit alone */
	s.cap_weight = false;
	snprintf(text, sizeof(text), "%ld\n", found);
	fake_write(a, wfile, text);
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-7", &out, &cap, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED && cap->weight.written == 0 && cap->idle.written == 0 &&
	      atol(fake_read(a, wfile)) == found && strcmp(fake_read(a, "cpu.idle"), "0") == 0);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 &&
	      atol(fake_read(a, wfile)) == found);

	/* a kernel without cpu.idle: the weight alone, and the cap goes on */
	s.cap_weight = true;
	s.cap_idle = true;
	snprintf(line, sizeof(line), "%s/cpu.idle", a);
	CHECK(unlink(line) == 0);
	CHECK(apply(&s, "batch/a", 0.1, 10000, 1000, "w-8", &out, &cap, err, sizeof(err)) == 0 &&
	      out == CAPS_APPLIED && cap->weight.written == atol(low) && cap->idle.written == 0);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 &&
	      atol(fake_read(a, wfile)) == found);
	fake_write(a, "cpu.idle", "0\n");

	/* a cap3 line of an older enforcer loads as a cap without a lowered weight: its restart
	 * and release write the limit only; malformed weights in cap4 lines are skipped */
	set_limit(a, version, 1000, 10000);
	f = fopen(state, "w");
	CHECK(f != NULL);
	snprintf(line, sizeof(line),
		 "cap3\tbatch/a\t%s\t0\t0\t%d\t%s\t1000 10000\t0.1\t10000\t1000\told\tls/v\n", a,
		 version, version == 2 ? "max 100000" : "-1 100000");
	fputs(line, f);
	fprintf(
	    f,
	    "cap4\tbatch/x\t%s/x\t0\t0\t%d\t%s\t1000 10000\t0.1\t10000\t1000\tbad\tls/v\t100\t7\n",
	    root, version, version == 2 ? "max 100000" : "-1 100000");
	fprintf(
	    f,
	    "cap4\tbatch/y\t%s/y\t0\t0\t%d\t%s\t1000 10000\t0.1\t10000\t1000\tbad\tls/v\t1\t%s\n",
	    root, version, version == 2 ? "max 100000" : "-1 100000", low);
	fprintf(f,
		"cap4\tbatch/z\t%s/z\t0\t0\t%d\t%s\t1000 "
		"10000\t0.1\t10000\t1000\tbad\tls/v\t999999\t%s\n",
		root, version, version == 2 ? "max 100000" : "-1 100000", low);
	fprintf(f,
		"cap5\tbatch/i\t%s/i\t0\t0\t%d\t%s\t1000 "
		"10000\t0.1\t10000\t1000\tbad\tls/v\t0\t0\t1\t1\n",
		root, version, version == 2 ? "max 100000" : "-1 100000");
	fprintf(f,
		"cap5\tbatch/j\t%s/j\t0\t0\t%d\t%s\t1000 "
		"10000\t0.1\t10000\t1000\tbad\tls/v\t0\t0\t2\t1\n",
		root, version, version == 2 ? "max 100000" : "-1 100000");
	fclose(f);
	fresh(&s, state);
	CHECK(caps_load(&s, err, sizeof(err)) == 5 && s.n == 1 && s.caps[0].weight.written == 0 &&
		  s.caps[0].idle.written == 0,
	      "%s", err);
	fake_write(a, "cpu.idle", "1\n"); /* not the cap3 line's: left at the release */
	CHECK(caps_resume(&s, 0, err, sizeof(err)) == 0 && atol(fake_read(a, wfile)) == found);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0, "%s", err);
	CHECK(atol(fake_read(a, wfile)) == found && strcmp(fake_read(a, "cpu.idle"), "1") == 0);
	if (version == 2)
		CHECK(strcmp(fake_read(a, "cpu.max"), "max 100000") == 0);
	else
		CHECK(limit_is(a, version, -1, 100000));
	fake_rm(root);
}

int main(void)
{
	long q, p;

	CHECK(limits_parse(LIMITS_V2, "max 100000", &q, &p) == 0 && q == -1 && p == 100000);
	CHECK(limits_parse(LIMITS_V1, "-1 100000", &q, &p) == 0 && q == -1);
	CHECK(limits_parse(LIMITS_V2, "-1 100000", &q, &p) == -EINVAL);
	CHECK(limits_parse(LIMITS_V2, "100 100000 7", &q, &p) == -EINVAL);
	CHECK(limits_parse(LIMITS_V2, "12x 100000", &q, &p) == -EINVAL);
	CHECK(limits_parse(LIMITS_V2, "", &q, &p) == -EINVAL);
	CHECK(limits_parse(LIMITS_V1, "1000 99999999", &q, &p) == -EINVAL);

	/* Planning a cap: it only lowers (exactly, in integers), never under the 1 ms quota. */
	CHECK(limits_plan_cap(LIMITS_V2, "max 100000", 0.1, 250000, &q, &p) == 0 && q == 25000 &&
	      p == 250000);
	CHECK(limits_plan_cap(LIMITS_V2, "50000 100000", 1024, 250000, &q, &p) == 1);
	CHECK(limits_plan_cap(LIMITS_V2, "50000 100000", 0.5, 250000, &q, &p) == 1);
	CHECK(limits_plan_cap(LIMITS_V2, "50000 100000", 0.4999, 250000, &q, &p) == 0 &&
	      q * 100000 < 50000 * p);
	CHECK(limits_plan_cap(LIMITS_V1, "1000 1000", 0.5, 1000, &q, &p) == 0 && q >= 1000 &&
	      q * 1000 <= 1000 * p / 2);
	CHECK(limits_plan_cap(LIMITS_V2, "max 100000", 0.01, 1000, &q, &p) == 0 && q == 1000 &&
	      p == 100000);
	CHECK(limits_plan_cap(LIMITS_V2, "max 100000", 0.0001, 100000, &q, &p) == 0 && q == 1000 &&
	      p == 1000000);
	CHECK(limits_plan_cap(LIMITS_V2, "max 100000", 0.29, 100000, &q, &p) == 0 && q == 29000);
	CHECK(limits_plan_cap(LIMITS_V2, "garbage", 0.1, 100000, &q, &p) == -EINVAL);
	CHECK(limits_plan_cap(LIMITS_V2, "max 100000", 0, 100000, &q, &p) == -EINVAL);
	run(2);
	run(1);
	other_writer(2);
	other_writer(1);
	weights(2);
	weights(1);
	printf("test-caps: ok (v1 and v2)\n");
	return 0;
}
