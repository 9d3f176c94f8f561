/* conf: see conf.h. */
#include "conf.h"

#include <cpi2/httpd.h>
#include <cpi2/log.h>
#include <cpi2/names.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#define STR(f)                                                                                     \
	CPI2_CFG_STR, offsetof(struct collector_conf, f), sizeof(((struct collector_conf *)0)->f)
#define NUM(t, f) t, offsetof(struct collector_conf, f), 0

const struct cpi2_config_key collector_conf_keys[] = {
    {"host", STR(host), "", "host name in samples and Kafka keys (empty: this machine's)", 0},
    {"brokers", STR(brokers), "127.0.0.1:9092", "Kafka bootstrap servers", 0},
    {"topic", STR(topic), CPI2_TOPIC_SAMPLES, "Kafka topic of the samples", 0},
    {"roots", STR(roots), "auto",
     "comma-separated cgroup roots (auto: the cgroup v2 mount, else the v1 cpu mount)", 0},
    {"max_depth", NUM(CPI2_CFG_INT, max_depth), "6", "cgroup levels walked below a root", 0},
    {"max_cgroups", NUM(CPI2_CFG_INT, max_cgroups), "20000",
     "at most this many cgroups are discovered", 0},
    {"rules_file", STR(rules_file), "",
     "mapping rules (PATTERN job=.. task_id=.. class=.. | ignore), before the defaults", 0},
    {"default_rules", NUM(CPI2_CFG_BOOL, default_rules), "true",
     "built-in rules for systemd slices and Kubernetes pods", 0},
    {"labels_file", STR(labels_file), "",
     "lines 'TASK JOB TASK_ID CLASS [protected]', reread when changed", 0},
    {"events", STR(events), "hardware",
     "hardware (ref-cycles or cycles + instructions), or a software event such as task-clock (no "
     "CPI)",
     0},
    {"llc_misses", NUM(CPI2_CFG_BOOL, llc_misses), "true",
     "with hardware events, count last-level cache misses too (llc_misses, llc_mpki) where the "
     "PMU has them",
     0},
    {"psi", NUM(CPI2_CFG_BOOL, psi), "true",
     "CPU and memory pressure (cpu_pressure, memory_pressure) from each task's cgroup v2 "
     "cpu.pressure and memory.pressure",
     0},
    {"resctrl", STR(resctrl), "/sys/fs/resctrl",
     "resctrl mount: LLC occupancy and memory bandwidth from the monitoring group "
     "mon_groups/NAME of each task, NAME its path with '/' as ':' (empty: off)",
     0},
    {"scrape", NUM(CPI2_CFG_BOOL, scrape), "true",
     "scrape the metrics endpoint a labels entry names (scrape=URL work=.. latency=..) once per "
     "window: cpu_per_op and latency",
     0},
    {"scrape_timeout_s", NUM(CPI2_CFG_DOUBLE, scrape_timeout_s), "0",
     "deadline of a scrape in seconds (0: 0.5, at most half the window)", 0},
    {"scrape_max_bytes", NUM(CPI2_CFG_INT, scrape_max_bytes), "4194304",
     "largest metrics answer read (a larger one gives null values)", 0},
    {"scrape_max_tasks", NUM(CPI2_CFG_INT, scrape_max_tasks), "256",
     "tasks scraped at most (the others' values are null)", 0},
    {"window_s", NUM(CPI2_CFG_DOUBLE, window_s), "10", "sampling duration in seconds", 0},
    {"period_s", NUM(CPI2_CFG_DOUBLE, period_s), "60",
     "one window starts every period (aligned to the clock)", 0},
    {"windows", NUM(CPI2_CFG_INT, windows), "0", "stop after this many windows (0: until SIGTERM)",
     0},
    {"platform", STR(platform), "",
     "CPU platform (empty: vendor/family/model/name from /proc/cpuinfo)", 0},
    {"cpus", STR(cpus), "", "CPUs to count on, as 0-3,8 (empty: every online CPU)", 0},
    {"max_fds", NUM(CPI2_CFG_INT, max_fds), "0",
     "perf descriptors per window (0: the raised RLIMIT_NOFILE less a reserve); cgroups rotate "
     "beyond it",
     0},
    {"queue_max_kbytes", NUM(CPI2_CFG_INT, queue_max_kbytes), "65536",
     "memory bound of samples waiting for Kafka", 0},
    {"flush_timeout_ms", NUM(CPI2_CFG_INT, flush_timeout_ms), "10000",
     "at shutdown, wait this long for Kafka", 0},
    {"once", NUM(CPI2_CFG_BOOL, once), "false",
     "one window now, samples as JSON lines on stdout, no Kafka", 0},
    {"dry_run", NUM(CPI2_CFG_BOOL, dry_run), "false", "sample and log, but publish nothing", 0},
    {"stdout", NUM(CPI2_CFG_BOOL, to_stdout), "false",
     "samples as JSON lines on stdout instead of Kafka", 0},
    {"log_level", STR(log_level), "info", "error, warn, info or debug", 0},
    {"log_format", STR(log_format), "text", CPI2_LOG_FORMAT_HELP, 0},
    {"metrics_address", STR(metrics_address), "", CPI2_HTTPD_ADDRESS_HELP, 0},
    {"health_timeout_s", NUM(CPI2_CFG_DOUBLE, health_timeout_s), "0",
     "/healthz fails when no window completed for this long (0: 3 periods and 30 s)", 0},
    {"mountinfo", STR(mountinfo), "/proc/self/mountinfo", "where the cgroup mounts are read from",
     0},
    {NULL, 0, 0, 0, NULL, NULL, 0},
};

const char collector_usage[] =
    "Usage: cpi2-collector [--config FILE] [options] [-X kafka.property=value ...]\n"
    "\n"
    "Counts cycles and instructions of every cgroup (task) of this host with perf_event_open for\n"
    "a window (10 s) once a period (60 s), with each task's CPU and memory pressure (cgroup v2\n"
    "PSI) and, where resctrl monitoring is mounted, its LLC occupancy and memory bandwidth, and\n"
    "where its labels entry names a Prometheus endpoint, its CPU per unit of work and latency,\n"
    "and publishes one Avro CpiSample per task to Kafka. A signal it cannot read is null, never 0.";

int collector_conf_check(const struct collector_conf *c, char *err, size_t errsz)
{
	if (!(c->window_s > 0) || !(c->period_s >= c->window_s) || c->period_s > 86400) {
		snprintf(err, errsz,
			 "window_s (%g) must be > 0 and at most period_s (%g), at most one day",
			 c->window_s, c->period_s);
		return -EINVAL;
	}
	if (c->max_depth < 1 || c->max_depth > 64 || c->max_cgroups < 1 || c->windows < 0) {
		snprintf(err, errsz, "max_depth must be 1..64, max_cgroups >= 1, windows >= 0");
		return -EINVAL;
	}
	if (c->max_fds < 0 || c->queue_max_kbytes < 1 || c->flush_timeout_ms < 0) {
		snprintf(err, errsz, "max_fds >= 0, queue_max_kbytes >= 1, flush_timeout_ms >= 0");
		return -EINVAL;
	}
	if (c->scrape_timeout_s < 0 || c->scrape_timeout_s > c->window_s / 2 ||
	    c->scrape_max_bytes < 1024 || c->scrape_max_bytes > (1L << 30) ||
	    c->scrape_max_tasks < 0 || c->scrape_max_tasks > 4096) {
		snprintf(
		    err, errsz,
		    "scrape_timeout_s must be 0..window_s/2 (%g), scrape_max_bytes 1024..2^30, "
		    "scrape_max_tasks 0..4096",
		    c->window_s / 2);
		return -EINVAL;
	}
	if (cpi2_log_set_level_name(c->log_level, err, errsz) ||
	    cpi2_log_set_format_name(c->log_format, err, errsz))
		return -EINVAL;
	if (c->health_timeout_s < 0) {
		snprintf(err, errsz, "health_timeout_s must be >= 0 (0: 3 periods and 30 s)");
		return -EINVAL;
	}
	if (!c->once && !c->dry_run && !c->to_stdout && !c->brokers[0]) {
		snprintf(err, errsz, "brokers is empty (use --dry-run to publish nothing)");
		return -EINVAL;
	}
	return 0;
}
