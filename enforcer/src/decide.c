/* decide: see decide.h. */
#include "decide.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "statefile.h"
#include "text.h"

static void begin(struct action *a, enum cpi2_action_kind kind, enum cpi2_action_cause cause,
		  const char *task, size_t len)
{
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->cause = cause;
	/* Keep what can be shown of a hostile name: stop at a NUL, blank control chars. */
	text_printable(a->task, sizeof(a->task), task, len);
}

static void from_cap(struct action *a, const struct cap *c)
{
	a->has_cap = true;
	a->cap_cpu = c->cpu;
	a->period_us = c->period_us;
	a->expires_at_us = c->expires_us;
	snprintf(a->previous_limit, sizeof(a->previous_limit), "%s", c->previous);
}

/* Append to the action's reason ("; " between parts). */
static void note(struct action *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct action *a, const char *fmt, ...)
{
	size_t l = strlen(a->reason);
	va_list ap;

	if (l && l + 2 < sizeof(a->reason)) {
		memcpy(a->reason + l, "; ", 3);
		l += 2;
	}
	va_start(ap, fmt);
	vsnprintf(a->reason + l, sizeof(a->reason) - l, fmt, ap);
	va_end(ap);
}

void decide_bucket_init(struct bucket *b, double rate, double burst)
{
	b->rate = rate;
	b->burst = burst < 1 ? 1 : burst;
	b->tokens = b->burst;
	b->last_us = 0;
}

/* Take a token (true) or refuse (false). A bucket with no rate is no limit. */
static bool bucket_take(struct bucket *b, int64_t now_us)
{
	if (!(b->rate > 0))
		return true;
	if (b->last_us == 0 || now_us < b->last_us)
		b->last_us = now_us;
	b->tokens += (double)(now_us - b->last_us) * b->rate / 1e6;
	if (b->tokens > b->burst)
		b->tokens = b->burst;
	b->last_us = now_us;
	if (b->tokens < 1)
		return false;
	b->tokens -= 1;
	return true;
}

static void bucket_refund(struct bucket *b)
{
	if (b->rate > 0 && b->tokens + 1 <= b->burst)
		b->tokens += 1;
}

int decide_check_fresh(const struct freshness *f, int64_t kafka_ms, int64_t wall_us,
		       const char *own_name, int64_t own_us, int64_t own_now_us, char *reason,
		       size_t reasonsz)
{
	int64_t skew_us = (int64_t)f->skew_s * 1000000;

	if (kafka_ms <= 0) {
		snprintf(reason, reasonsz, "stale check: the message has no Kafka timestamp");
		return -ESTALE;
	}
	if (kafka_ms * 1000 > wall_us + skew_us) {
		snprintf(reason, reasonsz,
			 "stale check: Kafka timestamp %lld s in the future (clock_skew_s %ld)",
			 (long long)((kafka_ms * 1000 - wall_us) / 1000000), f->skew_s);
		return -ESTALE;
	}
	if (wall_us - kafka_ms * 1000 > (int64_t)f->stale_after_s * 1000000) {
		snprintf(reason, reasonsz, "stale: it reached Kafka %lld s ago (stale_after_s %ld)",
			 (long long)((wall_us - kafka_ms * 1000) / 1000000), f->stale_after_s);
		return -ESTALE;
	}
	if (own_us <= 0) {
		snprintf(reason, reasonsz, "stale check: the message has no %s", own_name);
		return -ESTALE;
	}
	if (own_us > own_now_us + skew_us) {
		snprintf(reason, reasonsz,
			 "stale check: %s %lld s in the future (clock_skew_s %ld)", own_name,
			 (long long)((own_us - own_now_us) / 1000000), f->skew_s);
		return -ESTALE;
	}
	if (own_now_us - own_us > (int64_t)f->max_age_s * 1000000) {
		snprintf(reason, reasonsz, "stale: %s is %lld s old (max %ld s)", own_name,
			 (long long)((own_now_us - own_us) / 1000000), f->max_age_s);
		return -ESTALE;
	}
	return 0;
}

/* Cap task (from a message) for duration_s: the common path of incidents and operator caps. */
static void cap_task(struct host_enforcer *h, enum cpi2_action_cause cause, const char *task,
		     size_t len, double cpu, int duration_s, const char *id, const char *victim,
		     int64_t now_us, struct action *out)
{
	struct cgpath_target t;
	enum caps_outcome outcome;
	struct cap_request r;
	struct bucket *bucket;
	struct cap *c;
	int64_t dur_us, charge = 0, old_expiry = 0;
	char floor_note[160] = "", budget_note[160] = "";
	int version, rc, i;

	begin(out, CPI2_ACTION_KIND_REFUSED, cause, task, len);
	if (!task || len == 0) {
		snprintf(out->reason, sizeof(out->reason), "the message names no task to cap");
		return;
	}
	if (!(cpu > 0) || cpu > 1024) {
		snprintf(out->reason, sizeof(out->reason), "cap of %g CPU-sec/sec is out of range",
			 cpu);
		return;
	}
	if (duration_s <= 0 || duration_s > 86400) {
		snprintf(out->reason, sizeof(out->reason),
			 "cap duration of %d s is out of range (1..86400)", duration_s);
		return;
	}
	if (cpu < h->min_cap_cpu) {
		snprintf(floor_note, sizeof(floor_note),
			 "requested %g CPU is below min_cap_cpu: capped at the floor %g", cpu,
			 h->min_cap_cpu);
		cpu = h->min_cap_cpu;
	}
	rc = cgpath_open(&h->policy, task, len, &t, out->reason, sizeof(out->reason));
	if (rc)
		return;
	if (cause == CPI2_ACTION_CAUSE_INCIDENT && !optin_allows(h->optin, t.dir + t.rel_at)) {
		/* per-namespace opt-in: measured and detected, not capped here */
		snprintf(out->reason, sizeof(out->reason),
			 "not opted in: %s is not among the %d cgroups of enforce_file %s%s",
			 t.dir + t.rel_at, h->optin->n, h->optin->path,
			 h->optin->read ? "" : " (not read yet)");
		goto out;
	}
	if (cause == CPI2_ACTION_CAUSE_INCIDENT && cgpath_populated(t.fd) == 0) {
		/* the detection is seconds behind: the antagonist it named may have ended since,
		 * and a cap on its empty cgroup would only hold back whatever starts there next */
		snprintf(out->reason, sizeof(out->reason),
			 "%s holds no process: the task has ended, nothing to cap", t.dir);
		goto out;
	}
	version = h->version != LIMITS_AUTO ? h->version : limits_detect(t.fd);
	if (version < 0) {
		out->kind = CPI2_ACTION_KIND_FAILED;
		snprintf(out->reason, sizeof(out->reason),
			 "%s has neither cpu.max nor cpu.cfs_quota_us", t.dir);
		goto out;
	}
	/* Renewal or new cap: each has its rate limit. */
	i = caps_find(&h->caps, t.dir);
	if (i >= 0 && h->caps.caps[i].ino && h->caps.caps[i].ino != t.ino)
		i = -1; /* replaced: caps_apply forgets the old entry */
	if (i >= 0)
		old_expiry = h->caps.caps[i].expires_us;
	dur_us = (int64_t)duration_s * 1000000;
	if (h->max_cap_us_per_day > 0) {
		/* the capped time a task may be granted in a day: a renewal counts its extension */
		int64_t left =
		    caps_budget_left(&h->caps, t.dev, t.ino, now_us, h->max_cap_us_per_day);
		int64_t want = i >= 0 ? now_us + dur_us - old_expiry : dur_us;

		if (want > 0 && left < 1000000) {
			snprintf(out->reason, sizeof(out->reason),
				 "%s was granted %lld s of caps in the last day "
				 "(max_cap_s_per_task_day %lld)",
				 t.dir, (long long)((h->max_cap_us_per_day - left) / 1000000),
				 (long long)(h->max_cap_us_per_day / 1000000));
			goto out;
		}
		if (want > left) {
			dur_us -= want - left;
			want = left;
			snprintf(budget_note, sizeof(budget_note),
				 "duration shortened to %lld s by max_cap_s_per_task_day %lld",
				 (long long)(dur_us / 1000000),
				 (long long)(h->max_cap_us_per_day / 1000000));
		}
		charge = want > 0 ? want : 0;
	}
	bucket = i >= 0 ? &h->renewals : &h->new_caps;
	if (!bucket_take(bucket, h->rate_clock_us ? *h->rate_clock_us : now_us)) {
		snprintf(out->reason, sizeof(out->reason),
			 "rate limit: at most %g %s a second on this host (%s), %g at once",
			 bucket->rate, i >= 0 ? "renewals" : "new caps",
			 i >= 0 ? "renew_rate_per_s" : "cap_rate_per_s", bucket->burst);
		goto out;
	}
	if (charge && !h->caps.dry_run)
		caps_budget_charge(&h->caps, t.dev, t.ino, now_us, charge); /* saved with the cap */
	r = (struct cap_request){.task = task,
				 .task_len = len,
				 .target = &t,
				 .version = version,
				 .cpu = cpu,
				 .period_us = h->period_us,
				 .expires_us = now_us + dur_us,
				 .duration_us = dur_us,
				 .incident_id = id,
				 .victim_task = victim};
	out->reason[0] = '\0';
	rc = caps_apply(&h->caps, &r, &outcome, &c, out->reason, sizeof(out->reason));
	if (rc || outcome == CAPS_AT_OR_BELOW || outcome == CAPS_DRY_RUN ||
	    outcome == CAPS_CHANGED) {
		bucket_refund(bucket);
		if (charge && !h->caps.dry_run)
			caps_budget_charge(&h->caps, t.dev, t.ino, now_us, -charge);
	}
	if (rc == -EBUSY)
		goto out; /* REFUSED: too many caps, reason set */
	if (rc) {
		out->kind = CPI2_ACTION_KIND_FAILED;
		goto out;
	}
	from_cap(out, c);
	switch (outcome) {
	case CAPS_APPLIED:
		out->kind = CPI2_ACTION_KIND_APPLIED;
		break;
	case CAPS_RENEWED:
		out->kind = CPI2_ACTION_KIND_RENEWED;
		break;
	case CAPS_DRY_RUN:
		out->kind = CPI2_ACTION_KIND_DRY_RUN;
		out->previous_limit[0] = '\0';
		snprintf(out->reason, sizeof(out->reason), "dry run: would cap %s", t.dir);
		break;
	case CAPS_AT_OR_BELOW:
		out->kind = CPI2_ACTION_KIND_REFUSED;
		out->expires_at_us = 0;
		snprintf(out->reason, sizeof(out->reason),
			 "the limit in force on %s (%s) is already at or below the cap of %g CPU: "
			 "nothing written",
			 t.dir, c->previous, cpu);
		break;
	case CAPS_CHANGED:
		/* the renewal found another writer's limit (reason set): the cap is dropped, that
		 * limit left in force; a later incident caps over it, and restores it */
		out->kind = CPI2_ACTION_KIND_RELEASED;
		out->previous_limit[0] = '\0'; /* nothing written back */
		break;
	}
	if (floor_note[0])
		note(out, "%s", floor_note);
	if (budget_note[0] && out->kind != CPI2_ACTION_KIND_REFUSED)
		note(out, "%s", budget_note);
out:
	close(t.fd);
}

int decide_incident(struct host_enforcer *h, const struct incident_in *in, int64_t now_us,
		    struct action *out)
{
	if (!in->throttle)
		return 0;
	if (h->protection_off || (h->cluster_protection_off && *h->cluster_protection_off)) {
		begin(out, CPI2_ACTION_KIND_REFUSED, CPI2_ACTION_CAUSE_PROTECTION_OFF,
		      in->antagonist_task, in->antagonist_len);
		snprintf(out->reason, sizeof(out->reason), "protection is off for %s",
			 h->protection_off ? "this host" : "the cluster");
	} else if (!in->has_cap) {
		begin(out, CPI2_ACTION_KIND_REFUSED, CPI2_ACTION_CAUSE_INCIDENT,
		      in->antagonist_task, in->antagonist_len);
		snprintf(out->reason, sizeof(out->reason), "THROTTLE incident without cap_cpu");
	} else {
		cap_task(h, CPI2_ACTION_CAUSE_INCIDENT, in->antagonist_task, in->antagonist_len,
			 in->cap_cpu, in->has_duration ? in->cap_duration_s : h->default_duration_s,
			 in->incident_id, in->victim_task, now_us, out);
	}
	out->incident_id = in->incident_id;
	out->victim_task = in->victim_task;
	out->victim_job = in->victim_job;
	return 1;
}

static int release(struct host_enforcer *h, int i, enum cpi2_action_cause cause, struct action *out)
{
	struct cap c;
	int rc;

	c = h->caps.caps[i];
	begin(out, CPI2_ACTION_KIND_RELEASED, cause, c.task, strlen(c.task));
	from_cap(out, &c);
	rc = caps_release(&h->caps, i, NULL, out->reason, sizeof(out->reason));
	if (rc == 1)
		out->previous_limit[0] = '\0'; /* another writer's limit left in force */
	if (rc < 0) {
		out->kind = CPI2_ACTION_KIND_FAILED;
		/* Do not retry forever on a broken cgroup: the entry is kept in the state file
		 * (releasing, when it could say so) and retried in 10 s or at a restart. */
		caps_retry_later(&h->caps, i, 10 * 1000000);
	}
	return 1;
}

int decide_expiry(struct host_enforcer *h, int64_t now_us, struct action *out)
{
	int i = caps_next_expired(&h->caps, now_us);

	if (i < 0)
		return 0;
	return release(h, i, CPI2_ACTION_CAUSE_EXPIRY, out);
}

int decide_check_limits(struct host_enforcer *h, struct action *out, int max)
{
	int n = 0;

	for (int i = 0; i < h->caps.n && n < max;) {
		struct cap c;

		begin(&out[n], CPI2_ACTION_KIND_RELEASED, CPI2_ACTION_CAUSE_EXPIRY, "", 0);
		if (caps_check(&h->caps, i, &c, out[n].reason, sizeof(out[n].reason)) != 1) {
			i++;
			continue;
		}
		text_printable(out[n].task, sizeof(out[n].task), c.task, strlen(c.task));
		from_cap(&out[n], &c);
		out[n].previous_limit[0] = '\0';
		n++; /* entry i is another cap now */
	}
	return n;
}

int decide_release_all(struct host_enforcer *h, enum cpi2_action_cause cause, struct action *out,
		       int max)
{
	int n = 0, failed = 0;

	while (h->caps.n > failed && n < max) {
		release(h, failed, cause, &out[n]);
		if (out[n].kind == CPI2_ACTION_KIND_FAILED)
			failed++;
		n++;
	}
	return n;
}

int decide_command(struct host_enforcer *h, const struct command_in *in, int64_t now_us,
		   struct action *out, int max)
{
	int n = 0, i;

	if (max < 1)
		return 0;
	switch (in->command) {
	case CPI2_COMMAND_KIND_CAP:
		if (!in->host) {
			/* one task on every host at once: a task is capped on one machine */
			begin(out, CPI2_ACTION_KIND_REFUSED, CPI2_ACTION_CAUSE_OPERATOR, in->task,
			      in->task_len);
			snprintf(out->reason, sizeof(out->reason),
				 "a CAP names no host: a cap is for one host's task (cpi2ctl cap "
				 "--host)");
			n = 1;
			break;
		}
		cap_task(h, CPI2_ACTION_CAUSE_OPERATOR, in->task, in->task_len,
			 in->has_cap ? in->cap_cpu : h->default_cap_cpu,
			 in->has_duration ? in->duration_s : h->default_duration_s, in->command_id,
			 NULL, now_us, out);
		n = 1;
		break;
	case CPI2_COMMAND_KIND_UNCAP: {
		struct cgpath_target t;

		begin(out, CPI2_ACTION_KIND_REFUSED, CPI2_ACTION_CAUSE_OPERATOR, in->task,
		      in->task_len);
		if (!in->task) {
			snprintf(out->reason, sizeof(out->reason), "uncap names no task");
		} else if (cgpath_open(&h->policy, in->task, in->task_len, &t, out->reason,
				       sizeof(out->reason)) == 0) {
			close(t.fd);
			if ((i = caps_find(&h->caps, t.dir)) < 0)
				snprintf(out->reason, sizeof(out->reason), "no cap in force on %s",
					 t.dir);
			else
				release(h, i, CPI2_ACTION_CAUSE_OPERATOR, out);
		}
		n = 1;
		break;
	}
	case CPI2_COMMAND_KIND_PROTECTION_OFF:
		if (in->host)
			h->protection_off = true;
		decide_save_protection(h);
		n = decide_release_all(h, CPI2_ACTION_CAUSE_PROTECTION_OFF, out, max);
		break;
	case CPI2_COMMAND_KIND_PROTECTION_ON:
		if (in->host)
			h->protection_off = false;
		decide_save_protection(h);
		break;
	}
	for (i = 0; i < n; i++)
		out[i].command_id = in->command_id;
	return n;
}

int decide_recover(struct host_enforcer *h, int64_t now_us, struct action *out, int max, char *err,
		   size_t errsz)
{
	int rc, n = 0;

	h->caps.policy = &h->policy;
	rc = caps_load(&h->caps, err, errsz);
	if (rc < 0)
		return rc;
	/* Expired while we were down: restore the previous limits now. */
	while (n < max && decide_expiry(h, now_us, &out[n]) == 1) {
		out[n].cause = CPI2_ACTION_CAUSE_RECOVERY;
		n++;
	}
	/* The kill switch is off (saved before the caps were lifted, or set while we were down):
	 * none is resumed; every one is lifted. */
	if (h->protection_off || (h->cluster_protection_off && *h->cluster_protection_off)) {
		int k = decide_release_all(h, CPI2_ACTION_CAUSE_PROTECTION_OFF, out + n, max - n);

		for (int j = n; j < n + k; j++)
			note(&out[j], "protection is off for %s: not resumed after the restart",
			     h->protection_off ? "this host" : "the cluster");
		return n + k;
	}
	/* Still due: make sure the cap is in force (the crash may have come between the state
	 * file and the cgroup write), and report it resumed. */
	for (int i = 0; i < h->caps.n && n < max;) {
		struct cap c = h->caps.caps[i];

		if (c.releasing) { /* its release failed above: tried again, never resumed */
			i++;
			continue;
		}
		begin(&out[n], CPI2_ACTION_KIND_RENEWED, CPI2_ACTION_CAUSE_RECOVERY, c.task,
		      strlen(c.task));
		from_cap(&out[n], &c);
		rc = caps_resume(&h->caps, i, out[n].reason, sizeof(out[n].reason));
		if (rc == 1) {
			/* another writer's limit: left in force, the cap forgotten */
			out[n].kind = CPI2_ACTION_KIND_RELEASED;
			out[n++].previous_limit[0] = '\0';
			continue;
		}
		if (rc == -ENOENT || rc == -ESTALE) {
			out[n++].kind =
			    CPI2_ACTION_KIND_RELEASED; /* forgotten: entry i is another cap now */
			continue;
		}
		if (rc)
			out[n].kind = CPI2_ACTION_KIND_FAILED;
		else
			snprintf(out[n].reason, sizeof(out[n].reason), "cap resumed after restart");
		/* valid until the capset changes: the caller publishes the actions first */
		out[n].incident_id =
		    h->caps.caps[i].incident_id[0] ? h->caps.caps[i].incident_id : NULL;
		n++;
		i++;
	}
	return n;
}

int decide_save_protection(const struct host_enforcer *h)
{
	char err[256];

	if (!h->protection_path[0])
		return 0;
	return statefile_save_switch(h->protection_path, h->protection_off, err, sizeof(err));
}

void decide_load_protection(struct host_enforcer *h)
{
	if (h->protection_path[0])
		h->protection_off = statefile_load_switch(h->protection_path);
}
