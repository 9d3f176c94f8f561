/* conf: the enforcer's options (one table: defaults, config file, command line, --help). */
#ifndef CPI2_ENFORCER_CONF_H
#define CPI2_ENFORCER_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <cpi2/config.h>

#include "cgpath.h"

struct conf {
	char brokers[512];             /* Kafka bootstrap servers */
	char host[256];                /* this host's name as in incidents (default: gethostname) */
	char cgroup_root[PATH_MAX];    /* task paths in messages are relative to this root */
	char sim_hosts_root[PATH_MAX]; /* simulation: serve every host folder under this root */
	long cgroup_version;           /* 0 auto, 1 or 2 */
	char state_dir[PATH_MAX];      /* caps in force, previous limits, expiry; kill switch */
	long max_caps;                 /* caps at once per host */
	long period_us;                /* cap period */
	long default_duration_s;       /* cap duration when the message names none */
	double default_cap_cpu;        /* operator cap without a value */
	char protected_slices[1024];   /* comma list of cgroup names never capped */
	char protected_cgroups[2048];  /* comma list of absolute cgroup dirs never capped (collector) */
	bool dry_run;                  /* decide and report, write nothing */
	char group_id[256];            /* Kafka consumer group (default: cpi2-enforcer-<host>) */
	char incidents_topic[128], control_topic[128], actions_topic[128];
	long poll_ms;                  /* longest wait for a message before checking expiries */
	long stale_after_s;            /* incidents older than this in Kafka are refused as stale */
	char clock_file[PATH_MAX];     /* simulation: read "now" (microseconds) from this file */
	char log_level[16];
	const char *kafka_props[CPI2_CONFIG_MAX_PROPS]; /* -X key=value */
	char protected_buf[1024], cgroups_buf[2048];    /* split copies of the lists */
};

/* Parse the command line (and --config FILE). Returns 0, 1 after --help, or -EINVAL with a
 * reason in err. */
int conf_parse(struct conf *c, int argc, char **argv, char *err, size_t errsz);

/* Fill a host's path policy from the options (protected names and cgroups, own cgroup). */
void conf_policy(struct conf *c, struct cgpath_policy *p);

#endif
