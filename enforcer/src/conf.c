/* conf: see conf.h. */
#include "conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cpi2/cgroup.h>
#include <cpi2/log.h>

#define STR(f) CPI2_CFG_STR, offsetof(struct conf, f), sizeof(((struct conf *)0)->f)
#define NUM(t, f) t, offsetof(struct conf, f), 0

static const struct cpi2_config_key keys[] = {
	{"brokers", STR(brokers), "127.0.0.1:9092", "Kafka bootstrap servers"},
	{"host", STR(host), "", "this host's name as incidents name it (default: the hostname)"},
	{"cgroup_root", STR(cgroup_root), "/sys/fs/cgroup/cpu", "cgroup root that task paths are relative to"},
	{"sim_hosts_root", STR(sim_hosts_root), "", "simulation: act for every host folder under this root (root of host H = DIR/H)"},
	{"cgroup_version", NUM(CPI2_CFG_INT, cgroup_version), "0", "0 = detect per cgroup, 1 = cpu.cfs_quota_us, 2 = cpu.max"},
	{"state_dir", STR(state_dir), "/var/lib/cpi2-enforcer", "caps in force and previous limits, kept across restarts"},
	{"max_caps", NUM(CPI2_CFG_INT, max_caps), "4", "most caps in force at once on a host"},
	{"period_us", NUM(CPI2_CFG_INT, period_us), "250000", "cap period (the paper: 25 ms in 250 ms = 0.1 CPU)"},
	{"default_duration_s", NUM(CPI2_CFG_INT, default_duration_s), "300", "cap duration when a message names none"},
	{"default_cap_cpu", NUM(CPI2_CFG_DOUBLE, default_cap_cpu), "0.1", "operator cap when the command names none"},
	{"protected_slices", STR(protected_slices), "system.slice,init.scope,kubelet.slice,user.slice",
	 "cgroup names never capped, at any depth"},
	{"protected_cgroups", STR(protected_cgroups), "", "absolute cgroup dirs never capped, e.g. the collector's"},
	{"dry_run", NUM(CPI2_CFG_BOOL, dry_run), "false", "decide and publish actions, write nothing"},
	{"group_id", STR(group_id), "", "Kafka consumer group (default: cpi2-enforcer-<host>)"},
	{"incidents_topic", STR(incidents_topic), "cpi2.incidents", "topic of incidents"},
	{"control_topic", STR(control_topic), "cpi2.control", "topic of operator commands"},
	{"actions_topic", STR(actions_topic), "cpi2.actions", "topic the decisions go to"},
	{"poll_ms", NUM(CPI2_CFG_INT, poll_ms), "100", "longest wait for a message between expiry checks"},
	{"stale_after_s", NUM(CPI2_CFG_INT, stale_after_s), "600", "refuse incidents older than this in Kafka"},
	{"clock_file", STR(clock_file), "", "simulation: the clock is the number of microseconds in this file"},
	{"log_level", STR(log_level), "info", "error, warn, info or debug"},
	{NULL, 0, 0, 0, NULL, NULL}};

static const char usage[] =
	"usage: cpi2-enforcer [--config FILE] [--option value ...] [-X kafka.property=value ...]\n"
	"Applies the CPU caps that CPI2 incidents and operators ask for on this host, lifts them on\n"
	"time, restores the previous limits on exit and after a crash, and publishes every decision.";

int conf_parse(struct conf *c, int argc, char **argv, char *err, size_t errsz)
{
	int rc, level;

	memset(c, 0, sizeof(*c));
	rc = cpi2_config_parse_args(keys, c, argc, argv, usage, c->kafka_props, err, errsz);
	if (rc)
		return rc;
	if (!c->host[0] && gethostname(c->host, sizeof(c->host)) != 0) {
		snprintf(err, errsz, "gethostname: %s; set --host", strerror(errno));
		return -EINVAL;
	}
	if (!c->group_id[0])
		snprintf(c->group_id, sizeof(c->group_id), "cpi2-enforcer-%s", c->sim_hosts_root[0] ? "sim" : c->host);
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
	level = cpi2_log_parse_level(c->log_level);
	if (level < 0) {
		snprintf(err, errsz, "log_level must be error, warn, info or debug");
		return -EINVAL;
	}
	cpi2_log_set_level(level);
	return 0;
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
		if ((ctl[1] == ':' ) || strstr(ctl, "cpu")) {
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
	char *save = NULL, *tok;

	snprintf(c->protected_buf, sizeof(c->protected_buf), "%s", c->protected_slices);
	cgpath_set_protected(p, c->protected_buf);
	snprintf(c->cgroups_buf, sizeof(c->cgroups_buf), "%s", c->protected_cgroups);
	p->n_also = 0;
	for (tok = strtok_r(c->cgroups_buf, ",", &save); tok && p->n_also < CGPATH_MAX_PROTECTED;
	     tok = strtok_r(NULL, ",", &save))
		p->also_protected[p->n_also++] = tok;
	p->own_cgroup = own_cgroup(p->root);
}
