/* conf: see conf.h. */
#include "conf.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cpi2/cgroup.h>
#include <cpi2/httpd.h>
#include <cpi2/log.h>
#include <cpi2/names.h>

#define STR(f) CPI2_CFG_STR, offsetof(struct conf, f), sizeof(((struct conf *)0)->f)
#define NUM(t, f) t, offsetof(struct conf, f), 0

static const struct cpi2_config_key keys[] = {
    {"brokers", STR(brokers), "127.0.0.1:9092", "Kafka bootstrap servers", 0},
    {"host", STR(host), "", "this host's name as incidents name it (default: the hostname)", 0},
    {"cgroup_root", STR(cgroup_root), "/sys/fs/cgroup/cpu",
     "cgroup root that task paths are relative to", 0},
    {"sim_hosts_root", STR(sim_hosts_root), "",
     "simulation: act for every host folder under this root (root of host H = DIR/H)", 0},
    {"cgroup_version", NUM(CPI2_CFG_INT, cgroup_version), "0",
     "0 = detect per cgroup, 1 = cpu.cfs_quota_us, 2 = cpu.max", 0},
    {"state_dir", STR(state_dir), "/var/lib/cpi2-enforcer",
     "caps in force and previous limits, kept across restarts", 0},
    {"max_caps", NUM(CPI2_CFG_INT, max_caps), "4", "most caps in force at once on a host", 0},
    {"period_us", NUM(CPI2_CFG_INT, period_us), "250000",
     "cap period (the paper: 25 ms in 250 ms = 0.1 CPU)", 0},
    {"default_duration_s", NUM(CPI2_CFG_INT, default_duration_s), "300",
     "cap duration when a message names none", 0},
    {"default_cap_cpu", NUM(CPI2_CFG_DOUBLE, default_cap_cpu), "0.1",
     "operator cap when the command names none", 0},
    {"protected_slices", STR(protected_slices), "system.slice,init.scope,kubelet.slice,user.slice",
     "cgroup names never capped, at any depth", 0},
    {"protected_cgroups", STR(protected_cgroups), "",
     "absolute cgroup dirs never capped, e.g. the collector's", 0},
    {"dry_run", NUM(CPI2_CFG_BOOL, dry_run), "false", "decide and publish actions, write nothing",
     0},
    {"cap_weight", NUM(CPI2_CFG_BOOL, cap_weight), "true",
     "a cap also lowers the task's CPU priority (weight: v1 cpu.shares to 2, v2 cpu.weight to 1; "
     "cpu.idle to 1 where the kernel has it), restored with the limit, so a task that wakes "
     "beside it is not delayed by its quota (--no-cap-weight: the limit alone)",
     0},
    {"cap_idle", NUM(CPI2_CFG_BOOL, cap_idle), "true",
     "with cap_weight, also set cpu.idle (the kernel then refuses other writers' weight writes, "
     "a kubelet's in-place resize among them, until the cap ends; --no-cap-idle: the weight "
     "alone)",
     0},
    {"enforce_file", STR(enforce_file), "",
     "per-namespace opt-in: incidents cap only the cgroups this file lists, one path a line "
     "(cpi2-k8s-identity --enforce-file writes it; reread when it changes); empty: every task",
     0},
    {"group_id", STR(group_id), "", "Kafka consumer group (default: cpi2-enforcer-<host>)", 0},
    {"incidents_topic", STR(incidents_topic), CPI2_TOPIC_INCIDENTS, "topic of incidents", 0},
    {"control_topic", STR(control_topic), CPI2_TOPIC_CONTROL, "topic of operator commands", 0},
    {"actions_topic", STR(actions_topic), CPI2_TOPIC_ACTIONS, "topic the decisions go to", 0},
    {"poll_ms", NUM(CPI2_CFG_INT, poll_ms), "100",
     "longest wait for a message between expiry checks", 0},
    {"limit_check_s", NUM(CPI2_CFG_INT, limit_check_s), "5",
     "every this many seconds, a cap whose limit another writer (the kubelet) changed is dropped "
     "and that limit left in force (0: only at renewal, expiry and restart)",
     0},
    {"stale_after_s", NUM(CPI2_CFG_INT, stale_after_s), "600",
     "refuse messages that reached Kafka longer ago than this, and commands issued longer ago", 0},
    {"max_detection_age_s", NUM(CPI2_CFG_INT, max_detection_age_s), "3600",
     "refuse incidents whose detected_at_us is older than this (the enforcer's clock)", 0},
    {"clock_skew_s", NUM(CPI2_CFG_INT, clock_skew_s), "60",
     "a message's timestamps may be this far ahead of our clock; further is refused", 0},
    {"min_cap_cpu", NUM(CPI2_CFG_DOUBLE, min_cap_cpu), "0.01",
     "the lowest cap (CPU-sec/sec): a request below it is raised to it (the paper's best-effort "
     "cap)",
     0},
    {"task_cgroup_depth", NUM(CPI2_CFG_INT, task_cgroup_depth), "0",
     "0: only leaf cgroups (no child cgroup) may be capped; N: only cgroups exactly N levels below "
     "the root",
     0},
    {"max_cap_s_per_task_day", NUM(CPI2_CFG_INT, max_cap_s_per_task_day), "1800",
     "capped time a task may be granted in a day, renewals included (0: no bound)", 0},
    {"cap_rate_per_s", NUM(CPI2_CFG_DOUBLE, cap_rate_per_s), "1",
     "new caps a second on a host (token bucket)", 0},
    {"cap_burst", NUM(CPI2_CFG_DOUBLE, cap_burst), "5", "new caps at once on a host", 0},
    {"renew_rate_per_s", NUM(CPI2_CFG_DOUBLE, renew_rate_per_s), "2",
     "renewals of caps in force a second on a host", 0},
    {"renew_burst", NUM(CPI2_CFG_DOUBLE, renew_burst), "10", "renewals at once on a host", 0},
    {"max_message_bytes", NUM(CPI2_CFG_INT, max_message_bytes), "65536",
     "larger messages are refused before decoding", 0},
    {"dead_letters_per_min", NUM(CPI2_CFG_INT, dead_letters_per_min), "10",
     "dead letters (and refusals of stale or replayed messages) a minute per kind of reason; the "
     "rest are counted",
     0},
    {"seen_ids_max", NUM(CPI2_CFG_INT, seen_ids_max), "8192",
     "incident and command ids remembered (state_dir/seen-ids) so a replay changes nothing", 0},
    {"keep_capabilities", STR(keep_capabilities), "",
     "capabilities kept after start, e.g. dac_override for a cgroup tree owned by another user "
     "(default: none)",
     0},
    {"clock_file", STR(clock_file), "",
     "simulation: the clock is the number of microseconds in this file", 0},
    {"log_level", STR(log_level), "info", "error, warn, info or debug", 0},
    {"log_format", STR(log_format), "text", CPI2_LOG_FORMAT_HELP, 0},
    {"metrics_address", STR(metrics_address), "", CPI2_HTTPD_ADDRESS_HELP, 0},
    {"health_timeout_s", NUM(CPI2_CFG_DOUBLE, health_timeout_s), "60",
     "/healthz fails when no poll of Kafka completed for this long", 0},
    {NULL, 0, 0, 0, NULL, NULL, 0}};

static const char usage[] =
    "usage: cpi2-enforcer [--config FILE] [--option value ...] [-X kafka.property=value ...]\n"
    "Applies the CPU caps that CPI2 incidents and operators ask for on this host, lifts them on\n"
    "time, restores the previous limits on exit and after a crash, and publishes every decision.";

int conf_parse(struct conf *c, int argc, char **argv, char *err, size_t errsz)
{
	int rc;

	memset(c, 0, sizeof(*c));
	rc = cpi2_config_parse_args(keys, c, argc, argv, usage, c->kafka_props, err, errsz);
	if (rc)
		return rc;
	if (!c->host[0] && gethostname(c->host, sizeof(c->host)) != 0) {
		snprintf(err, errsz, "gethostname: %s; set --host", strerror(errno));
		return -EINVAL;
	}
	if (!c->group_id[0])
		snprintf(c->group_id, sizeof(c->group_id), "cpi2-enforcer-%s",
			 c->sim_hosts_root[0] ? "sim" : c->host);
	if (c->cgroup_version < 0 || c->cgroup_version > 2) {
		snprintf(err, errsz, "cgroup_version must be 0, 1 or 2");
		return -EINVAL;
	}
	if (c->max_caps < 1 || c->max_caps > 256) {
		snprintf(err, errsz, "max_caps must be between 1 and 256");
		return -EINVAL;
	}
	if (c->period_us < 1000 || c->period_us > 1000000) {
		snprintf(err, errsz, "period_us must be between 1000 and 1000000");
		return -EINVAL;
	}
	if (!(c->min_cap_cpu >= 0.001) || c->min_cap_cpu > 1024) {
		snprintf(err, errsz, "min_cap_cpu must be between 0.001 (1 ms a second) and 1024");
		return -EINVAL;
	}
	if (c->task_cgroup_depth < 0 || c->task_cgroup_depth > 64) {
		snprintf(err, errsz, "task_cgroup_depth must be between 0 and 64");
		return -EINVAL;
	}
	if (!(c->cap_rate_per_s > 0) || !(c->cap_burst >= 1) || !(c->renew_rate_per_s > 0) ||
	    !(c->renew_burst >= 1)) {
		snprintf(err, errsz,
			 "cap_rate_per_s and renew_rate_per_s must be above 0, cap_burst and "
			 "renew_burst at least 1");
		return -EINVAL;
	}
	if (c->max_message_bytes < 256 || c->max_message_bytes > 16 * 1024 * 1024) {
		snprintf(err, errsz, "max_message_bytes must be between 256 and 16 MiB");
		return -EINVAL;
	}
	if (c->stale_after_s < 1 || c->max_detection_age_s < 1 || c->clock_skew_s < 0 ||
	    c->max_cap_s_per_task_day < 0 || c->dead_letters_per_min < 0 || c->limit_check_s < 0 ||
	    c->seen_ids_max < 16 || c->seen_ids_max > 1000000) {
		snprintf(
		    err, errsz,
		    "stale_after_s and max_detection_age_s must be at least 1, clock_skew_s, "
		    "max_cap_s_per_task_day, dead_letters_per_min and limit_check_s at least 0, "
		    "seen_ids_max 16..1000000");
		return -EINVAL;
	}
	if (!realpath(c->cgroup_root, c->root_real) && !c->sim_hosts_root[0]) {
		snprintf(err, errsz, "cgroup_root %s: %s", c->cgroup_root, strerror(errno));
		return -EINVAL;
	}
	if (!(c->health_timeout_s > 0) || c->health_timeout_s * 1000 <= (double)c->poll_ms) {
		snprintf(err, errsz, "health_timeout_s must be above poll_ms");
		return -EINVAL;
	}
	if (cpi2_log_set_format_name(c->log_format, err, errsz))
		return -EINVAL;
	return cpi2_log_set_level_name(c->log_level, err, errsz);
}

/* The enforcer's own cgroup directory under root, if it is there. */
static char *own_cgroup(const char *root)
{
	char line[PATH_MAX], *path = NULL;
	FILE *f = fopen("/proc/self/cgroup", "re");
	char real[PATH_MAX];

	if (!f || !realpath(root, real)) {
		if (f)
			fclose(f);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *p;

		if (!ctl || !(p = strchr(ctl + 1, ':')))
			continue;
		p[strcspn(p, "\n")] = '\0';
		/* the v2 line "0::/x" or the v1 cpu controller line "N:cpu,...:/x" */
		if ((ctl[1] == ':') || strstr(ctl, "cpu")) {
			char *cand;

			if (asprintf(&cand, "%s%s", real, strcmp(p + 1, "/") == 0 ? "" : p + 1) < 0)
				continue;
			if (access(cand, F_OK) == 0) {
				free(path);
				path = cand;
			} else {
				free(cand);
			}
		}
	}
	fclose(f);
	return path;
}

void conf_policy(struct conf *c, struct cgpath_policy *p)
{
	int n;

	snprintf(c->protected_buf, sizeof(c->protected_buf), "%s", c->protected_slices);
	if (cgpath_set_protected(p, c->protected_buf))
		cpi2_log(CPI2_LOG_WARN, "enforcer", "protected_slices: only the first %d are used",
			 CGPATH_MAX_PROTECTED);
	snprintf(c->cgroups_buf, sizeof(c->cgroups_buf), "%s", c->protected_cgroups);
	n = cgpath_split_list(c->cgroups_buf, p->also_protected, CGPATH_MAX_PROTECTED);
	if (n < 0) {
		cpi2_log(CPI2_LOG_WARN, "enforcer", "protected_cgroups: only the first %d are used",
			 CGPATH_MAX_PROTECTED);
		n = CGPATH_MAX_PROTECTED;
	}
	p->n_also = n;
	p->task_depth = (int)c->task_cgroup_depth;
	p->own_cgroup = own_cgroup(p->root);
}
