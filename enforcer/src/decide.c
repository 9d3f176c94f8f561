/* decide: see decide.h. */
#include "decide.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *const action_kind_names[] = {"APPLIED", "RENEWED", "RELEASED", "REFUSED", "FAILED", "DRY_RUN"};
const char *const action_cause_names[] = {"INCIDENT", "OPERATOR", "EXPIRY", "SHUTDOWN", "RECOVERY", "PROTECTION_OFF"};

static void begin(struct action *a, enum action_kind kind, enum action_cause cause, const char *task, size_t len)
{
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->cause = cause;
	if (task) {
		if (len > CGPATH_MAX_TASK)
			len = CGPATH_MAX_TASK;
		/* Keep what can be shown of a hostile name: stop at a NUL, blank control chars. */
		for (size_t i = 0; i < len && task[i]; i++)
			a->task[i] = ((unsigned char)task[i] < 0x20) ? '?' : task[i];
	}
}

static void from_cap(struct action *a, const struct cap *c)
{
	a->has_cap = true;
	a->cap_cpu = c->cpu;
	a->period_us = c->period_us;
	a->expires_at_us = c->expires_us;
	snprintf(a->previous_limit, sizeof(a->previous_limit), "%s", c->previous);
}

/* Cap task (from a message) for duration_s: the common path of incidents and operator caps. */
static void cap_task(struct host_enforcer *h, enum action_cause cause, const char *task, size_t len,
		     double cpu, int duration_s, const char *id, const char *victim, int64_t now_us,
		     struct action *out)
{
	char dir[PATH_MAX];
	enum caps_outcome outcome;
	struct cap *c;
	int version, rc;

	begin(out, ACT_REFUSED, cause, task, len);
	if (!task || len == 0) {
		snprintf(out->reason, sizeof(out->reason), "the message names no task to cap");
		return;
	}
	if (!(cpu > 0) || cpu > 1024) {
		snprintf(out->reason, sizeof(out->reason), "cap of %g CPU-sec/sec is out of range", cpu);
		return;
	}
	if (duration_s <= 0 || duration_s > 86400) {
		snprintf(out->reason, sizeof(out->reason), "cap duration of %d s is out of range (1..86400)", duration_s);
		return;
	}
	rc = cgpath_resolve(&h->policy, task, len, dir, sizeof(dir), out->reason, sizeof(out->reason));
	if (rc)
		return;
	version = h->version != LIMITS_AUTO ? h->version : limits_detect(dir);
	if (version < 0) {
		out->kind = ACT_FAILED;
		snprintf(out->reason, sizeof(out->reason), "%s has neither cpu.max nor cpu.cfs_quota_us", dir);
		return;
	}
	rc = caps_apply(&h->caps, out->task, dir, version, cpu, h->period_us, now_us + (int64_t)duration_s * 1000000,
			id, victim, &outcome, &c, out->reason, sizeof(out->reason));
	if (rc == -EBUSY)
		return; /* REFUSED: too many caps, reason set */
	if (rc) {
		out->kind = ACT_FAILED;
		return;
	}
	out->kind = outcome == CAPS_APPLIED ? ACT_APPLIED : outcome == CAPS_RENEWED ? ACT_RENEWED : ACT_DRY_RUN;
	from_cap(out, c);
	if (outcome == CAPS_DRY_RUN) {
		out->previous_limit[0] = '\0';
		snprintf(out->reason, sizeof(out->reason), "dry run: would cap %s", dir);
	}
}

int decide_incident(struct host_enforcer *h, const struct incident_in *in, int64_t now_us, struct action *out)
{
	if (!in->throttle)
		return 0;
	if (h->protection_off || (h->cluster_protection_off && *h->cluster_protection_off)) {
		begin(out, ACT_REFUSED, CAUSE_PROTECTION_OFF, in->antagonist_task, in->antagonist_len);
		snprintf(out->reason, sizeof(out->reason), "protection is off for %s",
			 h->protection_off ? "this host" : "the cluster");
	} else if (!in->has_cap) {
		begin(out, ACT_REFUSED, CAUSE_INCIDENT, in->antagonist_task, in->antagonist_len);
		snprintf(out->reason, sizeof(out->reason), "THROTTLE incident without cap_cpu");
	} else {
		cap_task(h, CAUSE_INCIDENT, in->antagonist_task, in->antagonist_len, in->cap_cpu,
			 in->has_duration ? in->cap_duration_s : h->default_duration_s, in->incident_id,
			 in->victim_task, now_us, out);
	}
	out->incident_id = in->incident_id;
	out->victim_task = in->victim_task;
	out->victim_job = in->victim_job;
	return 1;
}

static int release(struct host_enforcer *h, int i, enum action_cause cause, struct action *out)
{
	struct cap c;
	int rc;

	c = h->caps.caps[i];
	begin(out, ACT_RELEASED, cause, c.task, strlen(c.task));
	from_cap(out, &c);
	rc = caps_release(&h->caps, i, NULL, out->reason, sizeof(out->reason));
	if (rc) {
		out->kind = ACT_FAILED;
		/* Do not retry forever on a broken cgroup: the entry is kept in the state file and
		 * retried at the next expiry check or restart. */
		h->caps.caps[i].expires_us += 10 * 1000000;
	}
	return 1;
}

int decide_expiry(struct host_enforcer *h, int64_t now_us, struct action *out)
{
	int i = caps_next_expired(&h->caps, now_us);

	if (i < 0)
		return 0;
	return release(h, i, CAUSE_EXPIRY, out);
}

int decide_release_all(struct host_enforcer *h, enum action_cause cause, struct action *out, int max)
{
	int n = 0, failed = 0;

	while (h->caps.n > failed && n < max) {
		release(h, failed, cause, &out[n]);
		if (out[n].kind == ACT_FAILED)
			failed++;
		n++;
	}
	return n;
}

int decide_command(struct host_enforcer *h, const struct command_in *in, int64_t now_us, struct action *out, int max)
{
	int n = 0, i;

	if (max < 1)
		return 0;
	switch (in->command) {
	case CMD_CAP:
		cap_task(h, CAUSE_OPERATOR, in->task, in->task_len, in->has_cap ? in->cap_cpu : h->default_cap_cpu,
			 in->has_duration ? in->duration_s : h->default_duration_s, in->command_id, NULL, now_us, out);
		n = 1;
		break;
	case CMD_UNCAP: {
		char dir[PATH_MAX];

		begin(out, ACT_REFUSED, CAUSE_OPERATOR, in->task, in->task_len);
		if (!in->task || cgpath_resolve(&h->policy, in->task, in->task_len, dir, sizeof(dir), out->reason,
						sizeof(out->reason)) != 0) {
			if (!in->task)
				snprintf(out->reason, sizeof(out->reason), "uncap names no task");
		} else if ((i = caps_find(&h->caps, dir)) < 0) {
			snprintf(out->reason, sizeof(out->reason), "no cap in force on %s", dir);
		} else {
			release(h, i, CAUSE_OPERATOR, out);
		}
		n = 1;
		break;
	}
	case CMD_PROTECTION_OFF:
		if (in->host)
			h->protection_off = true;
		decide_save_protection(h);
		n = decide_release_all(h, CAUSE_PROTECTION_OFF, out, max);
		break;
	case CMD_PROTECTION_ON:
		if (in->host)
			h->protection_off = false;
		decide_save_protection(h);
		break;
	}
	for (i = 0; i < n; i++)
		out[i].command_id = in->command_id;
	return n;
}

int decide_recover(struct host_enforcer *h, int64_t now_us, struct action *out, int max, char *err, size_t errsz)
{
	int rc, n = 0;

	rc = caps_load(&h->caps, err, errsz);
	if (rc)
		return rc;
	/* Expired while we were down: restore the previous limits now. */
	while (n < max && decide_expiry(h, now_us, &out[n]) == 1) {
		out[n].cause = CAUSE_RECOVERY;
		n++;
	}
	/* Still due: make sure the cap is in force (the crash may have come between the state
	 * file and the cgroup write), and report it resumed. */
	for (int i = 0; i < h->caps.n && n < max; i++) {
		struct cap *c = &h->caps.caps[i];

		begin(&out[n], ACT_RENEWED, CAUSE_RECOVERY, c->task, strlen(c->task));
		from_cap(&out[n], c);
		out[n].incident_id = c->incident_id[0] ? c->incident_id : NULL;
		if (!h->caps.dry_run && limits_cap(c->version, c->dir, c->cpu, c->period_us, out[n].reason,
						  sizeof(out[n].reason)) != 0)
			out[n].kind = ACT_FAILED;
		else
			snprintf(out[n].reason, sizeof(out[n].reason), "cap resumed after restart");
		n++;
	}
	return n;
}

int decide_save_protection(const struct host_enforcer *h)
{
	FILE *f;

	if (!h->protection_path[0])
		return 0;
	f = fopen(h->protection_path, "we");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", h->protection_off ? 1 : 0);
	return fclose(f) == 0 ? 0 : -errno;
}

void decide_load_protection(struct host_enforcer *h)
{
	FILE *f;
	int v = 0;

	if (!h->protection_path[0])
		return;
	f = fopen(h->protection_path, "re");
	if (!f)
		return;
	if (fscanf(f, "%d", &v) == 1)
		h->protection_off = v == 1;
	fclose(f);
}
