/* decide: incidents, operator commands, expiry, the kill switch and recovery after a crash,
 * against a fake cgroup v2 tree. */
#include <string.h>

#include "../src/decide.h"
#include "../../libcpi2/tests/check.h"
#include "faketree.h"

static char root[PATH_MAX], state[PATH_MAX + 16], prot[PATH_MAX + 16];
static bool cluster_off;

static void init(struct host_enforcer *h)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->host, sizeof(h->host), "host-1");
	h->policy.root = root;
	h->policy.protected_names[0] = "system.slice";
	h->policy.n_protected = 1;
	h->caps.max_caps = 3;
	h->caps.state_path = state;
	h->period_us = 250000;
	h->default_duration_s = 300;
	h->default_cap_cpu = 0.1;
	h->cluster_protection_off = &cluster_off;
	snprintf(h->protection_path, sizeof(h->protection_path), "%s", prot);
}

static struct incident_in incident(const char *task, double cap, int dur)
{
	struct incident_in in = {.incident_id = "inc", .host = "host-1", .throttle = true, .antagonist_task = task,
				 .antagonist_len = strlen(task), .victim_task = "ls/v", .victim_job = "ls",
				 .has_cap = true, .cap_cpu = cap, .has_duration = true, .cap_duration_s = dur};
	return in;
}

int main(void)
{
	static struct host_enforcer h, h2;
	struct action a[8];
	char dir[PATH_MAX], dir2[PATH_MAX], sys[PATH_MAX];
	int64_t t = 1000000000;

	fake_root(root, sizeof(root));
	snprintf(state, sizeof(state), "%s/state", root);
	snprintf(prot, sizeof(prot), "%s/protection", root);
	fake_cgroup(root, "batch/video-3", 2, dir, sizeof(dir));
	fake_cgroup(root, "be/crawler-1", 2, dir2, sizeof(dir2));
	fake_cgroup(root, "system.slice/sshd", 2, sys, sizeof(sys));
	init(&h);

	/* THROTTLE → APPLIED at the incident's cap; repeat → RENEWED, not stacked */
	struct incident_in in = incident("batch/video-3", 0.1, 300);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1);
	CHECK(a[0].kind == ACT_APPLIED && a[0].cause == CAUSE_INCIDENT);
	CHECK(strcmp(fake_read(dir, "cpu.max"), "25000 250000") == 0);
	CHECK(strcmp(a[0].previous_limit, "max 100000") == 0 && a[0].expires_at_us == t + 300000000);
	CHECK(decide_incident(&h, &in, t + 1000000, &a[0]) == 1 && a[0].kind == ACT_RENEWED);
	CHECK(h.caps.n == 1 && a[0].expires_at_us == t + 301000000);

	/* not a THROTTLE decision: nothing to do */
	struct incident_in no = in;
	no.throttle = false;
	CHECK(decide_incident(&h, &no, t, &a[0]) == 0);

	/* a protected slice is refused with a reason */
	struct incident_in bad = incident("system.slice/sshd", 0.1, 300);
	CHECK(decide_incident(&h, &bad, t, &a[0]) == 1 && a[0].kind == ACT_REFUSED && strstr(a[0].reason, "protected"));
	CHECK(strcmp(fake_read(sys, "cpu.max"), "max 100000") == 0);

	/* operator cap with defaults, then uncap */
	struct command_in cap = {.command_id = "c1", .command = CMD_CAP, .host = "host-1", .task = "be/crawler-1",
				 .task_len = 12};
	CHECK(decide_command(&h, &cap, t, a, 8) == 1 && a[0].kind == ACT_APPLIED && a[0].cause == CAUSE_OPERATOR);
	CHECK(strcmp(a[0].command_id, "c1") == 0 && h.caps.n == 2);
	struct command_in uncap = cap;
	uncap.command = CMD_UNCAP;
	CHECK(decide_command(&h, &uncap, t, a, 8) == 1 && a[0].kind == ACT_RELEASED);
	CHECK(strcmp(fake_read(dir2, "cpu.max"), "max 100000") == 0 && h.caps.n == 1);
	CHECK(decide_command(&h, &uncap, t, a, 8) == 1 && a[0].kind == ACT_REFUSED && strstr(a[0].reason, "no cap"));

	/* expiry releases exactly when due */
	CHECK(decide_expiry(&h, t + 300999999, &a[0]) == 0);
	CHECK(decide_expiry(&h, t + 301000000, &a[0]) == 1 && a[0].kind == ACT_RELEASED && a[0].cause == CAUSE_EXPIRY);
	CHECK(strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0 && h.caps.n == 0);

	/* cluster kill switch refuses incidents; host switch releases caps in force */
	cluster_off = true;
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == ACT_REFUSED && a[0].cause == CAUSE_PROTECTION_OFF);
	cluster_off = false;
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == ACT_APPLIED);
	struct command_in off = {.command_id = "c2", .command = CMD_PROTECTION_OFF, .host = "host-1"};
	CHECK(decide_command(&h, &off, t, a, 8) == 1 && a[0].kind == ACT_RELEASED && a[0].cause == CAUSE_PROTECTION_OFF);
	CHECK(h.protection_off && h.caps.n == 0 && strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == ACT_REFUSED);
	init(&h2); /* the kill switch survives a restart */
	decide_load_protection(&h2);
	CHECK(h2.protection_off);
	struct command_in on = off;
	on.command = CMD_PROTECTION_ON;
	CHECK(decide_command(&h, &on, t, a, 8) == 0 && !h.protection_off);

	/* crash with two caps in force: a new enforcer releases the expired one, resumes the other */
	struct incident_in in2 = incident("be/crawler-1", 0.01, 10);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == ACT_APPLIED);
	CHECK(decide_incident(&h, &in2, t, &a[0]) == 1 && a[0].kind == ACT_APPLIED);
	fake_write(dir, "cpu.max", "max 100000\n"); /* as if the crash came before the cgroup write */
	init(&h2);
	char err[256];
	int n = decide_recover(&h2, t + 20000000, a, 8, err, sizeof(err));
	CHECK(n == 2);
	CHECK(a[0].kind == ACT_RELEASED && a[0].cause == CAUSE_RECOVERY && strcmp(a[0].task, "be/crawler-1") == 0);
	CHECK(strcmp(fake_read(dir2, "cpu.max"), "max 100000") == 0);
	CHECK(a[1].kind == ACT_RENEWED && a[1].cause == CAUSE_RECOVERY && strcmp(fake_read(dir, "cpu.max"), "25000 250000") == 0);
	CHECK(decide_release_all(&h2, CAUSE_SHUTDOWN, a, 8) == 1 && a[0].kind == ACT_RELEASED && a[0].cause == CAUSE_SHUTDOWN);
	CHECK(strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0);

	/* the per-host limit (h2 is the enforcer now; h crashed) */
	h2.caps.max_caps = 1;
	CHECK(decide_incident(&h2, &in, t, &a[0]) == 1 && a[0].kind == ACT_APPLIED);
	CHECK(decide_incident(&h2, &in2, t, &a[0]) == 1 && a[0].kind == ACT_REFUSED && strstr(a[0].reason, "max_caps"));
	CHECK(decide_release_all(&h2, CAUSE_SHUTDOWN, a, 8) == 1);

	/* dry run: decides and reports, writes nothing */
	h2.caps.dry_run = true;
	CHECK(decide_incident(&h2, &in, t, &a[0]) == 1 && a[0].kind == ACT_DRY_RUN && strstr(a[0].reason, "dry run"));
	CHECK(strcmp(fake_read(dir, "cpu.max"), "max 100000") == 0 && h2.caps.n == 0);
	fake_rm(root);
	printf("test-decide: ok\n");
	return 0;
}
