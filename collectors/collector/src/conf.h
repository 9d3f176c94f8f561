/* conf: every setting of cpi2-collector, one field each (the key table in conf.c gives the
 * defaults, the config file keys, the command-line options and --help). */
#ifndef COLLECTOR_CONF_H
#define COLLECTOR_CONF_H

#include <cpi2/config.h>

#include <stdbool.h>

struct collector_conf {
	char host[256];		 /* host name in samples and the Kafka key ("" = gethostname) */
	char brokers[1024];	 /* Kafka bootstrap servers */
	char topic[256];	 /* where samples go */
	char roots[4096];	 /* comma-separated cgroup roots; "auto" = v2 mount, else v1 cpu */
	long max_depth;		 /* levels below a root that are walked */
	long max_cgroups;	 /* discovery stops there (memory bound) */
	char rules_file[4096];	 /* extra mapping rules, before the defaults */
	bool default_rules;	 /* use the built-in systemd / Kubernetes rules */
	char labels_file[4096];	 /* exact task -> job labels written by a scheduler */
	char events[64];	 /* hardware, or a software event (test only: no CPI) */
	bool llc_misses;	 /* with hardware events: LLC misses too, where the PMU has them */
	bool psi;		 /* CPU and memory pressure from each task's cgroup v2 directory */
	char resctrl[4096];	 /* resctrl mount for LLC occupancy / memory bandwidth ("" = off) */
	bool scrape;		 /* scrape the metrics endpoints the labels file names */
	double scrape_timeout_s; /* a scrape's deadline (0 = half a second, at most window/2) */
	long scrape_max_bytes;	 /* an answer's body at most */
	long scrape_max_tasks;	 /* tasks scraped at most (each holds a socket during its scrape) */
	double window_s;	 /* sampling duration */
	double period_s;	 /* one window starts every period */
	long windows;		 /* stop after this many windows (0 = run until SIGTERM) */
	char platform[256];	 /* CPU platform ("" = from /proc/cpuinfo) */
	char cpus[256];		 /* CPU list to count on ("" = every online CPU) */
	long max_fds;		 /* event descriptor budget (0 = from RLIMIT_NOFILE) */
	long queue_max_kbytes;	 /* memory bound of the Kafka queue while the broker is away */
	long flush_timeout_ms;	 /* at shutdown, how long to wait for the queue to drain */
	bool once;		 /* one window now, samples as JSON lines on stdout, no Kafka */
	bool dry_run;		 /* no Kafka: sample and log only */
	bool to_stdout;		 /* samples as JSON lines on stdout instead of Kafka */
	char log_level[16];	 /* error, warn, info, debug */
	char log_format[16];	 /* text or json */
	char metrics_address[256]; /* /metrics and /healthz on HOST:PORT ("" = off) */
	double
	    health_timeout_s; /* /healthz fails without a window this long (0 = 3 periods + 30 s) */
	char mountinfo[4096]; /* where the cgroup mounts are read from */
};

extern const struct cpi2_config_key collector_conf_keys[];

extern const char collector_usage[];

/* Check values against each other (after parsing). Returns 0 or -EINVAL with a reason. */
int collector_conf_check(const struct collector_conf *c, char *err, size_t errsz);

#endif
