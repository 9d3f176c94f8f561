/* decide: incidents, operator commands, expiry, the kill switch and recovery after a crash,
 * against a fake cgroup v2 tree; and the rules against hostile requests: the floor, caps that
 * would raise a limit, parents, the rate limits, the daily bound per task, the stale check,
 * releasing every one of 200 caps, a cgroup replaced while the enforcer was down. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "../src/decide.h"
#include "../src/messages.h"
#include <cpi2/wire.h>
#include "check.h"
#include "faketree.h"
#include "testhost.h"

static char root[PATH_MAX], state[PATH_MAX + 16], prot[PATH_MAX + 16];
static bool cluster_off;

static void init(struct host_enforcer *h)
{
	test_host_init(h, "host-1", root, state, prot, &cluster_off);
}

static void freshness(void)
{
	const struct freshness f = {.stale_after_s = 600, .max_age_s = 3600, .skew_s = 60};
	const int64_t now = 1700000000LL * 1000000,
		      own_now = now + 5000000; /* own clock may differ */
	struct {
		const char *name;
		int64_t kafka_ms, own_us;
		const char *why; /* NULL: fresh */
	} rows[] = {
	    {"fresh", now / 1000 - 2000, own_now - 30000000, NULL},
	    {"no Kafka timestamp", -1, own_now, "no Kafka timestamp"},
	    {"zero Kafka timestamp", 0, own_now, "no Kafka timestamp"},
	    {"Kafka timestamp in the future", now / 1000 + 3600000, own_now, "future"},
	    {"Kafka timestamp within the skew", now / 1000 + 30000, own_now, NULL},
	    {"stale in Kafka", now / 1000 - 601000, own_now, "reached Kafka"},
	    {"no own timestamp", now / 1000, 0, "no detected_at_us"},
	    {"own timestamp in the future", now / 1000, own_now + 3600000000LL, "future"},
	    {"own timestamp too old (a re-sent old incident)", now / 1000, own_now - 3601000000LL,
	     "old"},
	};
	char why[256];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int rc = decide_check_fresh(&f, rows[i].kafka_ms, now, "detected_at_us",
					    rows[i].own_us, own_now, why, sizeof(why));

		if ((rc == 0) != (rows[i].why == NULL) ||
		    (rows[i].why && !strstr(why, rows[i].why)))
			fprintf(stderr, "freshness %s: rc %d (%s)\n", rows[i].name, rc,
				rc ? why : "");
		CHECK((rc == 0) == (rows[i].why == NULL));
		CHECK(!rows[i].why || (rc == -ESTALE && strstr(why, rows[i].why)));
	}
}

/* 200 caps in force on cgroups with varied limits: every one is released and restored. */
static void release_all_200(void)
{
	static struct host_enforcer h;
	static struct action a[CAPS_MAX + 1];
	char dir[PATH_MAX], name[64], want[64];
	int n;

	init(&h);
	h.caps.max_caps = 256;
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "many/t%d", i);
		fake_cgroup(root, name, 2, dir, sizeof(dir));
		if (i % 3) {
			snprintf(want, sizeof(want), "%d %d\n", 20000 + 1000 * i,
				 100000 + 1000 * (i % 50));
			fake_write(dir, "cpu.max", want);
		}
		struct incident_in in = test_incident(name, 0.01, 300);
		CHECK(decide_incident(&h, &in, 1000000000, &a[0]) == 1 &&
		      a[0].kind == CPI2_ACTION_KIND_APPLIED);
	}
	CHECK(h.caps.n == 200);
	n = decide_release_all(&h, CPI2_ACTION_CAUSE_SHUTDOWN, a, CAPS_MAX + 1);
	CHECK(n == 200 && h.caps.n == 0);
	for (int i = 0; i < 200; i++) {
		CHECK(a[i].kind == CPI2_ACTION_KIND_RELEASED);
		snprintf(name, sizeof(name), "many/t%d", i);
		snprintf(dir, sizeof(dir), "%s/%s", root, name);
		if (i % 3)
			snprintf(want, sizeof(want), "%d %d", 20000 + 1000 * i,
				 100000 + 1000 * (i % 50));
		else
			snprintf(want, sizeof(want), "max 100000");
		CHECK(strcmp(fake_read(dir, "cpu.max"), want) == 0);
	}
}

/* An incident whose antagonist has ended by the time it arrives caps nothing: a v2 cgroup whose
 * cgroup.events says populated 0, a v1 task with an empty cgroup.procs, a v1 pod whose
 * containers hold no process; a renewal after the task ended is refused too. One that still
 * holds a process (v2 populated 1; v1 procs in the task, or in a pod's container) is capped,
 * and so is a tree that says neither (no such files). An operator's cap is not an incident:
 * it is written on an empty cgroup as asked. */
static void ended_tasks(void)
{
	static struct host_enforcer h;
	struct action a;
	char v2[PATH_MAX], v1[PATH_MAX], pod[PATH_MAX], ctr[PATH_MAX];
	const int64_t t = 1000000000;

	init(&h);
	h.caps.max_caps = 16;
	fake_cgroup(root, "ended/v2", 2, v2, sizeof(v2));
	fake_write(v2, "cgroup.events", "populated 0\nfrozen 0\n");
	struct incident_in in = test_incident("ended/v2", 0.1, 300);
	CHECK(decide_incident(&h, &in, t, &a) == 1 && a.kind == CPI2_ACTION_KIND_REFUSED &&
		  strstr(a.reason, "holds no process"),
	      "%d %s", a.kind, a.reason);
	CHECK(strcmp(fake_read(v2, "cpu.max"), "max 100000") == 0);
	fake_write(v2, "cgroup.events", "populated 1\nfrozen 0\n");
	CHECK(decide_incident(&h, &in, t, &a) == 1 && a.kind == CPI2_ACTION_KIND_APPLIED);
	/* it ends while capped: the renewal is refused, the cap runs out as it was */
	fake_write(v2, "cgroup.events", "populated 0\nfrozen 0\n");
	CHECK(decide_incident(&h, &in, t + 1000000, &a) == 1 &&
	      a.kind == CPI2_ACTION_KIND_REFUSED && strstr(a.reason, "holds no process"));

	fake_cgroup(root, "ended/v1", 2, v1, sizeof(v1));
	fake_write(v1, "cgroup.procs", "");
	in = test_incident("ended/v1", 0.1, 300);
	CHECK(decide_incident(&h, &in, t, &a) == 1 && a.kind == CPI2_ACTION_KIND_REFUSED &&
	      strstr(a.reason, "holds no process"));
	fake_write(v1, "cgroup.procs", "4242\n");
	CHECK(decide_incident(&h, &in, t, &a) == 1 && a.kind == CPI2_ACTION_KIND_APPLIED);

	/* a pod (task_cgroup_depth 2) whose processes are in its containers' cgroups */
	h.policy.task_depth = 2;
	fake_cgroup(root, "pods/web-1", 2, pod, sizeof(pod));
	fake_cgroup(root, "pods/web-1/ctr", 2, ctr, sizeof(ctr));
	fake_write(pod, "cgroup.procs", "");
	fake_write(ctr, "cgroup.procs", "");
	in = test_incident("pods/web-1", 0.1, 300);
	CHECK(decide_incident(&h, &in, t, &a) == 1 && a.kind == CPI2_ACTION_KIND_REFUSED &&
		  strstr(a.reason, "holds no process"),
	      "%d %s", a.kind, a.reason);
	fake_write(ctr, "cgroup.procs", "77\n");
	CHECK(decide_incident(&h, &in, t, &a) == 1 && a.kind == CPI2_ACTION_KIND_APPLIED, "%d %s",
	      a.kind, a.reason);
	h.policy.task_depth = 0;

	/* an operator caps an empty cgroup when asked */
	char empty[PATH_MAX];

	fake_cgroup(root, "ended/operator", 2, empty, sizeof(empty));
	fake_write(empty, "cgroup.events", "populated 0\n");
	struct command_in cap = {.command_id = "c9",
				 .command = CPI2_COMMAND_KIND_CAP,
				 .host = "host-1",
				 .task = "ended/operator",
				 .task_len = 14};
	struct action ops[8];

	CHECK(decide_command(&h, &cap, t, ops, 8) == 1 && ops[0].kind == CPI2_ACTION_KIND_APPLIED,
	      "%d %s", ops[0].kind, ops[0].reason);

	/* files that say neither: capped as before */
	char unknown[PATH_MAX];

	fake_cgroup(root, "ended/unknown", 2, unknown, sizeof(unknown));
	in = test_incident("ended/unknown", 0.1, 300);
	CHECK(decide_incident(&h, &in, t, &a) == 1 && a.kind == CPI2_ACTION_KIND_APPLIED);
}

/* Task names of multi-byte characters too long for the action's task or reason: cut at a
 * character boundary, so the published action is UTF-8 and decodes. */
static void long_names(void)
{
	static struct host_enforcer h;
	static char task[1200];
	struct cpi2_codec *codec;
	struct action a;
	avro_value_t *dec;
	char buf[8192], err[256];
	size_t len, n = 0;

	init(&h);
	CHECK(cpi2_codec_open(&codec, "EnforcementAction", err, sizeof(err)) == 0);
	for (int over = 0; over < 2; over++) {
		/* over 1024 bytes: refused by length, the task cut; under it, a missing cgroup
		 * whose name fills the reason */
		n = snprintf(task, sizeof(task), "batch/x");
		while (n + 2 < (over ? 1101u : 1000u))
			n += snprintf(task + n, sizeof(task) - n, "\xc3\xa9");
		struct incident_in in = test_incident(task, 0.1, 300);
		CHECK(decide_incident(&h, &in, 1000000000, &a) == 1 &&
		      a.kind == CPI2_ACTION_KIND_REFUSED);
		CHECK(cpi2_utf8_valid(a.task, strlen(a.task)) && strlen(a.task) > 990);
		CHECK(messages_action(cpi2_codec_value(codec), &a, "host-1", "act-1", 1) == 0);
		CHECK(cpi2_codec_encode(codec, cpi2_codec_value(codec), buf, sizeof(buf), &len) ==
		      0);
		CHECK(cpi2_codec_decode(codec, buf, len, &dec, err, sizeof(err)) == 0);
	}
	cpi2_codec_close(codec);
}

/* The state file cannot be rewritten at a release (a full disk, a folder made read-only: here a
 * directory where its temporary file goes): the release journal records it, the cap is lifted,
 * and the restart does not put it back. Shutdown, an operator's uncap, an expiry, the kill
 * switch. With neither the state file nor the journal, nothing is lifted. */
static void lifted_caps_stay_lifted(void)
{
	static struct host_enforcer h, h2;
	static struct action a[CAPS_MAX + 1];
	char dir[3][PATH_MAX], name[32], err[256], tmp[PATH_MAX + 32], journal[PATH_MAX + 32];
	const int64_t t = 1000000000;
	int n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", state);
	snprintf(journal, sizeof(journal), "%s.released", state);
	for (int how = 0; how < 5; how++) {
		init(&h);
		CHECK(decide_recover(&h, t, a, CAPS_MAX + 1, err, sizeof(err)) == 0); /* at start */
		for (int i = 0; i < 3; i++) {
			snprintf(name, sizeof(name), "full/t%d", i);
			fake_cgroup(root, name, 2, dir[i], sizeof(dir[i]));
			struct incident_in in = test_incident(name, 0.1, 300);
			in.incident_id = name;
			CHECK(decide_incident(&h, &in, t, &a[0]) == 1 &&
			      a[0].kind == CPI2_ACTION_KIND_APPLIED);
		}
		fake_sh("mkdir '%s'", tmp); /* every state file write fails from now on */
		if (how == 4)
			fake_sh("rm -f '%s' && mkdir '%s'", journal, journal); /* and the journal */
		if (how == 0) {
			n = decide_release_all(&h, CPI2_ACTION_CAUSE_SHUTDOWN, a, CAPS_MAX + 1);
		} else if (how == 1) {
			n = 0;
			for (int i = 0; i < 3; i++) {
				snprintf(name, sizeof(name), "full/t%d", i);
				struct command_in un = {.command_id = name,
							.command = CPI2_COMMAND_KIND_UNCAP,
							.host = "host-1",
							.task = name,
							.task_len = strlen(name)};
				n += decide_command(&h, &un, t, &a[n], 8);
			}
		} else if (how == 2) {
			for (n = 0; decide_expiry(&h, t + 301000000, &a[n]) == 1; n++)
				;
		} else {
			struct command_in off = {.command_id = "off",
						 .command = CPI2_COMMAND_KIND_PROTECTION_OFF,
						 .host = NULL};
			cluster_off = true; /* the cluster's switch: its file is elsewhere */
			n = decide_command(&h, &off, t, a, CAPS_MAX + 1);
			cluster_off = false;
		}
		for (int i = 0; i < n; i++)
			CHECK(a[i].kind ==
				  (how == 4 ? CPI2_ACTION_KIND_FAILED : CPI2_ACTION_KIND_RELEASED),
			      "%d: %s", how, a[i].reason);
		CHECK(n == 3, "%d: %d actions", how, n);
		for (int i = 0; i < 3; i++)
			CHECK(strcmp(fake_read(dir[i], "cpu.max"),
				     how == 4 ? "25000 250000" : "max 100000") == 0);
		if (how < 4)
			CHECK(strstr(a[0].reason, "release journal holds"), "%s", a[0].reason);
		else
			CHECK(strstr(a[0].reason, "stays in force") && h.caps.n == 3, "%s",
			      a[0].reason);
		/* space again; a restart: what was lifted stays lifted (what was not, resumes) */
		fake_sh("rmdir '%s'", tmp);
		if (how == 4)
			fake_sh("rmdir '%s'", journal);
		init(&h2);
		n = decide_recover(&h2, t + 1000000, a, CAPS_MAX + 1, err, sizeof(err));
		CHECK(n == 3, "%d: %d", how, n);
		for (int i = 0; i < 3; i++) {
			CHECK(a[i].kind ==
				  (how == 4 ? CPI2_ACTION_KIND_RENEWED : CPI2_ACTION_KIND_RELEASED),
			      "%d: %s", how, a[i].reason);
			CHECK(strcmp(fake_read(dir[i], "cpu.max"),
				     how == 4 ? "25000 250000" : "max 100000") == 0,
			      "%d: %s", how, fake_read(dir[i], "cpu.max"));
		}
		CHECK(decide_release_all(&h2, CPI2_ACTION_CAUSE_SHUTDOWN, a, CAPS_MAX + 1) ==
		      (how == 4 ? 3 : 0));
		fake_sh("rm -rf '%s/full'", root);
	}
}

int main(void)
{
	static struct host_enforcer h, h2;
	struct action a[8];
	char dir[PATH_MAX], dir2[PATH_MAX], sys[PATH_MAX], held[PATH_MAX], rep[PATH_MAX], err[256];
	int64_t t = 1000000000;
	int n;

	freshness();
	fake_root(root, sizeof(root));
	snprintf(state, sizeof(state), "%s/state", root);
	snprintf(prot, sizeof(prot), "%s/protection", root);
	fake_cgroup(root, "batch/video-3", 2, dir, sizeof(dir));
	fake_cgroup(root, "be/crawler-1", 2, dir2, sizeof(dir2));
	fake_cgroup(root, "system.slice/sshd", 2, sys, sizeof(sys));
	fake_cgroup(root, "held/task", 2, held, sizeof(held));
	fake_write(held, "cpu.max", "50000 100000\n"); /* held at 0.5 CPU by its orchestrator */
	init(&h);

	/* THROTTLE → APPLIED at the incident's cap; repeat → RENEWED, not stacked */
	struct incident_in in = test_incident("batch/video-3", 0.1, 300);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1);
	CHECK(a[0].kind == CPI2_ACTION_KIND_APPLIED && a[0].cause == CPI2_ACTION_CAUSE_INCIDENT);
	CHECK(strcmp(fake_read(dir, "cpu.max"), "25000 250000") == 0);
	CHECK(strcmp(a[0].previous_limit, "max 100000") == 0 &&
	      a[0].expires_at_us == t + 300000000);
	CHECK(decide_incident(&h, &in, t + 1000000, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_RENEWED);
	CHECK(h.caps.n == 1 && a[0].expires_at_us == t + 301000000);

	/* not a THROTTLE decision: nothing to do */
	struct incident_in no = in;
	no.throttle = false;
	CHECK(decide_incident(&h, &no, t, &a[0]) == 0);

	/* a protected slice is refused with a reason */
	struct incident_in bad = test_incident("system.slice/sshd", 0.1, 300);
	CHECK(decide_incident(&h, &bad, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED &&
	      strstr(a[0].reason, "protected"));
	CHECK(strcmp(fake_read(sys, "cpu.max"), "max 100000") == 0);

	/* a parent (every task under it) is refused */
	struct incident_in parent = test_incident("batch", 0.1, 300);
	CHECK(decide_incident(&h, &parent, t, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_REFUSED && strstr(a[0].reason, "leaf"));

	/* a cap of 1024 CPUs on a task held at 0.5: nothing written, reported */
	struct incident_in raise = test_incident("held/task", 1024, 300);
	CHECK(decide_incident(&h, &raise, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED);
	CHECK(strstr(a[0].reason, "already at or below") &&
	      strcmp(fake_read(held, "cpu.max"), "50000 100000") == 0);
	CHECK(h.caps.n == 1);

	/* operator cap with defaults, then uncap */
	struct command_in cap = {.command_id = "c1",
				 .command = CPI2_COMMAND_KIND_CAP,
				 .host = "host-1",
				 .task = "be/crawler-1",
				 .task_len = 12};
	CHECK(decide_command(&h, &cap, t, a, 8) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED &&
	      a[0].cause == CPI2_ACTION_CAUSE_OPERATOR);
	CHECK(strcmp(a[0].command_id, "c1") == 0 && h.caps.n == 2);
	struct command_in uncap = cap;
	uncap.command = CPI2_COMMAND_KIND_UNCAP;
	CHECK(decide_command(&h, &uncap, t, a, 8) == 1 && a[0].kind == CPI2_ACTION_KIND_RELEASED);
	CHECK(strcmp(fake_read(dir2, "cpu.max"), "max 100000") == 0 && h.caps.n == 1);
	CHECK(decide_command(&h, &uncap, t, a, 8) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED &&
	      strstr(a[0].reason, "no cap"));

	/* a CAP that names no host (the task on every host) is refused, nothing written */
	struct command_in everywhere = cap;
	everywhere.host = NULL;
	CHECK(decide_command(&h, &everywhere, t, a, 8) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_REFUSED && strstr(a[0].reason, "names no host"));
	CHECK(strcmp(fake_read(dir2, "cpu.max"), "max 100000") == 0 && h.caps.n == 1);

	/* a request under the floor is capped at the floor, and says so */
	struct command_in tiny = cap;
	tiny.has_cap = true;
	tiny.cap_cpu = 0.0001;
	CHECK(decide_command(&h, &tiny, t, a, 8) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED &&
	      strstr(a[0].reason, "min_cap_cpu"));
	CHECK(strcmp(fake_read(dir2, "cpu.max"), "2500 250000") == 0);
	CHECK(decide_command(&h, &uncap, t, a, 8) == 1 && a[0].kind == CPI2_ACTION_KIND_RELEASED);

	/* expiry releases exactly when due */
	CHECK(decide_expiry(&h, t + 300999999, &a[0]) == 0);
	CHECK(decide_expiry(&h, t + 301000000, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_RELEASED && a[0].cause == CPI2_ACTION_CAUSE_EXPIRY);
	CHECK(strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0 && h.caps.n == 0);

	/* the wall clock set back an hour under a cap: the monotonic clock ends it on time, in the
	 * enforcer and after a restart on the same boot */
	int64_t mono = 5000000, back = t - 3600000000LL;
	h.caps.mono_clock_us = &mono;
	for (int restart = 0; restart < 2; restart++) {
		CHECK(decide_incident(&h, &in, t, &a[0]) == 1 &&
		      a[0].kind == CPI2_ACTION_KIND_APPLIED);
		mono += 300000000 - 1;
		CHECK(decide_expiry(&h, back + 300000000, &a[0]) == 0);
		mono += 1;
		if (!restart) {
			CHECK(decide_expiry(&h, back + 300000000, &a[0]) == 1 &&
			      a[0].kind == CPI2_ACTION_KIND_RELEASED &&
			      a[0].cause == CPI2_ACTION_CAUSE_EXPIRY);
			continue;
		}
		init(&h2);
		h2.caps.mono_clock_us = &mono;
		CHECK(decide_recover(&h2, back + 300000000, a, 8, err, sizeof(err)) == 1 &&
		      a[0].kind == CPI2_ACTION_KIND_RELEASED &&
		      a[0].cause == CPI2_ACTION_CAUSE_RECOVERY && h2.caps.n == 0);
		init(&h);
	}
	CHECK(strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0);
	h.caps.mono_clock_us = NULL;

	/* cluster kill switch refuses incidents; host switch releases caps in force */
	cluster_off = true;
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED &&
	      a[0].cause == CPI2_ACTION_CAUSE_PROTECTION_OFF);
	cluster_off = false;
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	struct command_in off = {
	    .command_id = "c2", .command = CPI2_COMMAND_KIND_PROTECTION_OFF, .host = "host-1"};
	CHECK(decide_command(&h, &off, t, a, 8) == 1 && a[0].kind == CPI2_ACTION_KIND_RELEASED &&
	      a[0].cause == CPI2_ACTION_CAUSE_PROTECTION_OFF);
	CHECK(h.protection_off && h.caps.n == 0 &&
	      strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED);
	init(&h2); /* the kill switch survives a restart */
	decide_load_protection(&h2);
	CHECK(h2.protection_off);
	struct command_in on = off;
	on.command = CPI2_COMMAND_KIND_PROTECTION_ON;
	CHECK(decide_command(&h, &on, t, a, 8) == 0 && !h.protection_off);

	/* the kill switch off on disk (a crash after the switch was saved, before every cap was
	 * lifted; or the cluster's set while the enforcer was down): a restart lifts the caps,
	 * resumes none */
	for (int off_host = 1; off_host >= 0; off_host--) {
		CHECK(decide_incident(&h, &in, t, &a[0]) == 1 &&
		      a[0].kind == CPI2_ACTION_KIND_APPLIED);
		h.protection_off = off_host;
		cluster_off = !off_host;
		CHECK(decide_save_protection(&h) == 0);
		init(&h2);
		decide_load_protection(&h2);
		n = decide_recover(&h2, t + 1000000, a, 8, err, sizeof(err));
		CHECK(n == 1 && a[0].kind == CPI2_ACTION_KIND_RELEASED &&
		      a[0].cause == CPI2_ACTION_CAUSE_PROTECTION_OFF &&
		      strstr(a[0].reason, off_host ? "this host" : "the cluster"));
		CHECK(h2.caps.n == 0 && strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0);
		h.protection_off = false;
		cluster_off = false;
		CHECK(decide_save_protection(&h) == 0);
		init(&h);
	}

	/* crash with two caps in force: a new enforcer releases the expired one, resumes the other
	 */
	struct incident_in in2 = test_incident("be/crawler-1", 0.01, 10);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	CHECK(decide_incident(&h, &in2, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	fake_write(dir, "cpu.max",
		   "max 100000\n"); /* as if the crash came before the cgroup write */
	init(&h2);
	n = decide_recover(&h2, t + 20000000, a, 8, err, sizeof(err));
	CHECK(n == 2 && err[0] == '\0');
	CHECK(a[0].kind == CPI2_ACTION_KIND_RELEASED && a[0].cause == CPI2_ACTION_CAUSE_RECOVERY &&
	      strcmp(a[0].task, "be/crawler-1") == 0);
	CHECK(strcmp(fake_read(dir2, "cpu.max"), "max 100000") == 0);
	CHECK(a[1].kind == CPI2_ACTION_KIND_RENEWED && a[1].cause == CPI2_ACTION_CAUSE_RECOVERY &&
	      strcmp(fake_read(dir, "cpu.max"), "25000 250000") == 0);
	CHECK(decide_release_all(&h2, CPI2_ACTION_CAUSE_SHUTDOWN, a, 8) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_RELEASED && a[0].cause == CPI2_ACTION_CAUSE_SHUTDOWN);
	CHECK(strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0);

	/* crash, then the capped cgroup is removed and made again under its name: the new one is
	 * not touched at recovery (released: replaced) */
	fake_cgroup(root, "be/replaced", 2, rep, sizeof(rep));
	struct incident_in in3 = test_incident("be/replaced", 0.1, 300);
	CHECK(decide_incident(&h2, &in3, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	fake_sh("mkdir '%s.new' && rm -rf '%s' && mv '%s.new' '%s'", rep, rep, rep, rep);
	fake_write(rep, "cpu.max", "max 100000\n");
	init(&h);
	n = decide_recover(&h, t + 1000000, a, 8, err, sizeof(err));
	CHECK(n == 1 && a[0].kind == CPI2_ACTION_KIND_RELEASED && strstr(a[0].reason, "replaced") &&
	      h.caps.n == 0);
	CHECK(strcmp(fake_read(rep, "cpu.max"), "max 100000") == 0);

	/* the per-host limit */
	h.caps.max_caps = 1;
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	CHECK(decide_incident(&h, &in2, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED &&
	      strstr(a[0].reason, "max_caps"));
	CHECK(decide_release_all(&h, CPI2_ACTION_CAUSE_SHUTDOWN, a, 8) == 1);
	h.caps.max_caps = 3;

	/* rate limits: one new cap a second (burst 1), renewals on their own bucket */
	int64_t clock = 5000000;
	h.rate_clock_us = &clock;
	decide_bucket_init(&h.new_caps, 1, 1);
	decide_bucket_init(&h.renewals, 1, 1);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	CHECK(decide_incident(&h, &in2, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED &&
	      strstr(a[0].reason, "rate limit"));
	CHECK(strcmp(fake_read(dir2, "cpu.max"), "max 100000") == 0);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_RENEWED);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED &&
	      strstr(a[0].reason, "renewals"));
	clock += 1000000;
	CHECK(decide_incident(&h, &in2, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	/* a refusal that writes nothing costs no token */
	CHECK(decide_incident(&h, &raise, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED);
	clock += 1000000;
	CHECK(decide_incident(&h, &raise, t, &a[0]) == 1 &&
	      strstr(a[0].reason, "already at or below"));
	CHECK(decide_release_all(&h, CPI2_ACTION_CAUSE_SHUTDOWN, a, 8) == 2);
	h.rate_clock_us = NULL;
	decide_bucket_init(&h.new_caps, 0, 1);
	decide_bucket_init(&h.renewals, 0, 1);

	/* a day's bound on capped time (600 s): renewals count their extension; across a restart */
	h.max_cap_us_per_day = 600000000;
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_APPLIED); /* 300 */
	CHECK(decide_incident(&h, &in, t + 100000000, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_RENEWED); /* 400 */
	CHECK(decide_incident(&h, &in, t + 250000000, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_RENEWED); /* 550 */
	CHECK(decide_incident(&h, &in, t + 320000000, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_RENEWED); /* 600 */
	CHECK(strstr(a[0].reason, "shortened") && a[0].expires_at_us == t + 600000000);
	CHECK(decide_incident(&h, &in, t + 350000000, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_REFUSED);
	CHECK(strstr(a[0].reason, "max_cap_s_per_task_day"));
	init(&h2);
	h2.max_cap_us_per_day = 600000000;
	CHECK(decide_recover(&h2, t + 360000000, a, 8, err, sizeof(err)) == 1);
	CHECK(decide_expiry(&h2, t + 600000000, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_RELEASED);
	CHECK(decide_incident(&h2, &in, t + 700000000, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_REFUSED);
	CHECK(decide_incident(&h2, &in, t + 86400000000LL + 1, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_APPLIED); /* next day */
	CHECK(decide_release_all(&h2, CPI2_ACTION_CAUSE_SHUTDOWN, a, 8) == 1);

	/* Another writer (the kubelet's resize) changes the limit under a cap: the periodic check
	 * drops it with nothing written, RELEASED (EXPIRY: it ends early) with no previous limit
	 * (none written back); so does a renewal (INCIDENT) and a restart (RECOVERY). */
	init(&h);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	CHECK(decide_check_limits(&h, a, 8) == 0 && h.caps.n == 1);
	fake_write(dir, "cpu.max", "150000 100000\n");
	CHECK(decide_check_limits(&h, a, 8) == 1 && a[0].kind == CPI2_ACTION_KIND_RELEASED &&
	      a[0].cause == CPI2_ACTION_CAUSE_EXPIRY && !a[0].previous_limit[0] &&
	      strcmp(a[0].task, "batch/video-3") == 0 && a[0].has_cap &&
	      strstr(a[0].reason, "another writer"));
	CHECK(strcmp(fake_read(dir, "cpu.max"), "150000 100000") == 0 && h.caps.n == 0);
	CHECK(decide_expiry(&h, t + 400000000, &a[0]) == 0);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	fake_write(dir, "cpu.max", "max 100000\n");
	CHECK(decide_incident(&h, &in, t + 1000000, &a[0]) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_RELEASED && a[0].cause == CPI2_ACTION_CAUSE_INCIDENT &&
	      !a[0].previous_limit[0] && strstr(a[0].reason, "now max 100000"));
	CHECK(strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0 && h.caps.n == 0);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	fake_write(dir, "cpu.max", "90000 100000\n");
	init(&h2);
	CHECK(decide_recover(&h2, t + 1000000, a, 8, err, sizeof(err)) == 1 &&
	      a[0].kind == CPI2_ACTION_KIND_RELEASED && a[0].cause == CPI2_ACTION_CAUSE_RECOVERY &&
	      !a[0].previous_limit[0]);
	CHECK(strcmp(fake_read(dir, "cpu.max"), "90000 100000") == 0 && h2.caps.n == 0);
	fake_write(dir, "cpu.max", "max 100000\n");

	/* dry run: decides and reports, writes nothing */
	h2.caps.dry_run = true;
	CHECK(decide_incident(&h2, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_DRY_RUN &&
	      strstr(a[0].reason, "dry run"));
	CHECK(strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0 && h2.caps.n == 0);

	lifted_caps_stay_lifted();
	long_names();
	ended_tasks();
	release_all_200();
	fake_rm(root);
	printf("test-decide: ok\n");
	return 0;
}
