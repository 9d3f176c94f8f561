/* conf: the enforcer's options (one table: defaults, config file, command line, --help). */
#ifndef CPI2_ENFORCER_CONF_H
#define CPI2_ENFORCER_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <cpi2/config.h>

#include "cgpath.h"

struct conf {
	char brokers[512];	       /* Kafka bootstrap servers */
	char host[256];		       /* this host's name as in incidents (default: gethostname) */
	char cgroup_root[PATH_MAX];    /* task paths in messages are relative to this root */
	char sim_hosts_root[PATH_MAX]; /* simulation: serve every host folder under this root */
	long cgroup_version;	       /* 0 auto, 1 or 2 */
	char state_dir[PATH_MAX];      /* caps in force, previous limits, expiry; kill switch */
	long max_caps;		       /* caps at once per host */
	long period_us;		       /* cap period */
	long default_duration_s;       /* cap duration when the message names none */
	double default_cap_cpu;	       /* operator cap without a value */
	char protected_slices[1024];   /* comma list of cgroup names never capped */
	char protected_cgroups[2048]; /* comma list of absolute cgroup dirs never capped (collector)
				       */
	bool dry_run;		      /* decide and report, write nothing */
	bool cap_weight;	      /* a cap also lowers the task's CPU weight (caps.h) */
	bool cap_idle;		      /* ... and sets cpu.idle */
	char enforce_file[PATH_MAX];  /* the cgroups incidents may cap (optin.h); "": every one */
	char group_id[256];	      /* Kafka consumer group (default: cpi2-enforcer-<host>) */
	char incidents_topic[128], control_topic[128], actions_topic[128];
	long poll_ms;	    /* longest wait for a message before checking expiries */
	long limit_check_s; /* how often the caps in force are compared with the cgroups' limits */
	long stale_after_s; /* messages older than this in Kafka (or commands issued longer ago) are
			       stale */
	long max_detection_age_s; /* incidents detected longer ago than this are stale */
	long clock_skew_s;	  /* how far ahead of our clock a message's timestamps may be */
	double min_cap_cpu;	  /* the floor: a lower cap request is raised to it */
	long task_cgroup_depth;	  /* 0: only leaf cgroups are tasks; N: those exactly N levels below
				     the root */
	long max_cap_s_per_task_day; /* capped time a task may be granted per day (0: no bound) */
	double cap_rate_per_s, cap_burst;     /* new caps per second per host, and at once */
	double renew_rate_per_s, renew_burst; /* renewals of caps in force, the same way */
	long max_message_bytes;		      /* larger messages are refused before decoding */
	long dead_letters_per_min; /* dead letters and refusals of one kind of reason a minute */
	long seen_ids_max;	   /* incident and command ids remembered against replays */
	char
	    keep_capabilities[256]; /* comma list of capabilities kept after start (default none) */
	char clock_file[PATH_MAX];  /* simulation: read "now" (microseconds) from this file */
	char log_level[16];
	char log_format[16];	   /* text or json */
	char metrics_address[256]; /* /metrics and /healthz on HOST:PORT ("" = off) */
	double health_timeout_s;   /* /healthz fails without a poll this long */
	const char *kafka_props[CPI2_CONFIG_MAX_PROPS]; /* -X key=value */
	char protected_buf[1024], cgroups_buf[2048];	/* split copies of the lists */
	char root_real[PATH_MAX]; /* the cgroup root with its symlinks resolved (at start) */
};

/* Parse the command line (and --config FILE). Returns 0, 1 after --help, or -EINVAL with a
 * reason in err. */
int conf_parse(struct conf *c, int argc, char **argv, char *err, size_t errsz);

/* Fill a host's path policy from the options (protected names and cgroups, own cgroup). */
void conf_policy(struct conf *c, struct cgpath_policy *p);

#endif
