/* cpi2-fleetsim: plays a scenario of simulated hosts and publishes their CPI samples exactly as
 * cpi2-collector would (Avro CpiSample on cpi2.samples, key = host), faster than real time,
 * writes the ground truth, and obeys caps written into a simulated cgroup tree. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cpi2/clock.h>
#include <cpi2/config.h>
#include <cpi2/kafka.h>
#include <cpi2/log.h>
#include <cpi2/names.h>
#include <cpi2/signals.h>

#include "capwatch.h"
#include "fleet.h"
#include "output.h"
#include "scenario.h"

/* One process publishes for a whole fleet, thousands of hosts' samples a second. Batches of
 * 50 ms (libcpi2's producer default, meant for one host's collector, is 5) cut Kafka's and the
 * consumer's cost per sample. -X linger.ms=N overrides it. */
#define DEFAULT_PROP "linger.ms=50"

#define USAGE                                                                                      \
	"Usage: cpi2-fleetsim [OPTIONS] --scenario NAME|FILE\n"                                    \
	"Simulates a fleet of hosts and publishes one CpiSample per task per minute of\n"          \
	"simulated time to Kafka, as cpi2-collector would (counter_source SIMULATED).\n"           \
	"-X key=value: librdkafka properties (default here: " DEFAULT_PROP ").\n"                  \
	"Durations: 90s, 10m, 2h, 1h30m, 1d. Scenario format: scenarios/README.md."

/* The options as cpi2_config reads them: text where a value may be a word (max, inf, now). */
struct options {
	char scenario[PATH_MAX], scenario_dir[PATH_MAX], cgroup_root[PATH_MAX], truth[PATH_MAX];
	char labels_dir[PATH_MAX], acked_file[PATH_MAX];
	char speed[32], warmup[32], warmup_speed[32], duration[32], start[32], seed[32];
	char brokers[1024], topic[256];
	bool to_stdout, dry_run, list_pods;
	double progress_s, flush_s;
};

#define STR(f) CPI2_CFG_STR, offsetof(struct options, f), sizeof(((struct options *)0)->f)
#define NUM(t, f) t, offsetof(struct options, f), 0

static const struct cpi2_config_key keys[] = {
    {"scenario", STR(scenario), "",
     "scenario file, or NAME of one in --scenario-dir: case1 case2 case3 case4 steady fleet300 "
     "(required)",
     's'},
    {"scenario_dir", STR(scenario_dir), FLEETSIM_SCENARIO_DIR, "where NAMEs are looked up", 0},
    {"speed", STR(speed), "1", "simulated seconds per wall second, or max", 0},
    {"warmup", STR(warmup), "",
     "DURATION of normal behaviour before the scripted events, played at --warmup-speed "
     "(unset: the scenario's, e.g. 6h)",
     0},
    {"warmup_speed", STR(warmup_speed), "max", "--speed during the warmup", 0},
    {"duration", STR(duration), "",
     "simulated time after the warmup, DURATION or inf (unset: the scenario's)", 0},
    {"start", STR(start), "now",
     "simulated start, EPOCH_S or now (now - warmup, so the events begin about now)", 0},
    {"seed", STR(seed), "", "random seed (unset: the scenario's); same seed, same samples", 0},
    {"brokers", STR(brokers), "127.0.0.1:9092", "Kafka bootstrap servers", 'b'},
    {"topic", STR(topic), CPI2_TOPIC_SAMPLES, "Kafka topic of the samples", 't'},
    {"cgroup_root", STR(cgroup_root), "",
     "create <DIR>/<host>/<task> folders with cpu.max and cpu.cfs_quota_us; caps written there "
     "clamp the task",
     0},
    {"labels_dir", STR(labels_dir), "",
     "Kubernetes hosts: the labels file of host H is DIR/H (as cpi2-k8s-identity writes it for "
     "node H); pods are mapped through it as the collector maps them, and a pod it does not "
     "name is not published",
     0},
    {"list_pods", NUM(CPI2_CFG_BOOL, list_pods), "false",
     "print the pods of the Kubernetes hosts as JSON lines (node, namespace, pod, deployment, "
     "qos, protected, cgroup) and exit",
     0},
    {"truth", STR(truth), "",
     "ground truth FILE (JSON lines) or none (unset: fleetsim-<scenario>.truth.jsonl)", 0},
    {"acked_file", STR(acked_file), "",
     "write the identity of every sample Kafka acknowledged to FILE, one "
     "host<TAB>task<TAB>window_start_us line each (to check each reaches ClickHouse once)",
     0},
    {"stdout", NUM(CPI2_CFG_BOOL, to_stdout), "false",
     "print samples as JSON lines to stdout, no Kafka", 0},
    {"dry_run", NUM(CPI2_CFG_BOOL, dry_run), "false",
     "encode samples (Avro) and drop them, no Kafka", 0},
    {"progress", NUM(CPI2_CFG_DOUBLE, progress_s), "5", "wall seconds between progress lines", 0},
    {"flush_timeout", NUM(CPI2_CFG_DOUBLE, flush_s), "10",
     "at the end, wait at most this many seconds for Kafka to take what is still queued (exit 1 "
     "if some is left)",
     0},
    {NULL, 0, 0, 0, NULL, NULL, 0}};

/* Every option of the program, as the run uses them. */
struct conf {
	const char *scenario;	  /* name in scenario_dir or a path */
	const char *scenario_dir; /* where names are looked up */
	double speed;		  /* simulated seconds per wall second; 0 = as fast as possible */
	double warmup_speed;	  /* the same during the warmup */
	double warmup_s;	  /* < 0: the scenario's */
	double duration_s;	  /* after the warmup; < 0: the scenario's; INFINITY: forever */
	int64_t start_us;	  /* simulated start; <= 0: now - warmup, on a minute */
	uint64_t seed;
	int seed_given;
	const char *brokers;
	const char *topic;
	/* DEFAULT_PROP, then the client file's, then -X key=value (later ones win), NULL-terminated
	 */
	const char *props[1 + CPI2_CONFIG_MAX_PROPS];
	const char *cgroup_root; /* NULL: no cap loop */
	const char *labels_dir;	 /* Kubernetes hosts' labels files; NULL: none */
	bool list_pods;		 /* print the pods and exit */
	const char *truth;	 /* ground truth file; NULL: fleetsim-<scenario>.truth.jsonl */
	const char *acked_file;	 /* acknowledged samples' identities; NULL: none */
	enum output_mode mode;
	double progress_s; /* wall seconds between progress lines */
	double flush_s;	   /* at the end, wait this long at most for Kafka to take the rest */
};

static int parse_speed(const char *v, double *out)
{
	char *end;

	if (!strcmp(v, "max")) {
		*out = 0;
		return 0;
	}
	*out = strtod(v, &end);
	return (end == v || *end || !isfinite(*out) || *out <= 0) ? -EINVAL : 0;
}

static int bad_value(const char *option, const char *value)
{
	fprintf(stderr, "cpi2-fleetsim: --%s: '%s' is not a valid value (see --help)\n", option,
		value);
	return -EINVAL;
}

/* The command line (through cpi2_config: --config FILE, -X, --kafka-client-file too) into c,
 * whose strings point into o. Returns 0, 1 after --help, or -EINVAL with a message. */
static int parse_args(int argc, char **argv, struct options *o, struct conf *c)
{
	char err[1024], *end;
	int rc;

	rc = cpi2_config_parse_args(keys, o, argc, argv, USAGE, c->props + 1, err, sizeof(err));
	if (rc == 1)
		return 1;
	if (rc) {
		fprintf(stderr, "cpi2-fleetsim: %s\n", err);
		return -EINVAL;
	}
	c->props[0] = DEFAULT_PROP;
	if (!o->scenario[0]) {
		fprintf(stderr, "cpi2-fleetsim: --scenario is required (see --help)\n");
		return -EINVAL;
	}
	c->scenario = o->scenario;
	c->scenario_dir = o->scenario_dir;
	c->brokers = o->brokers;
	c->topic = o->topic;
	c->cgroup_root = o->cgroup_root[0] ? o->cgroup_root : NULL;
	c->truth = o->truth[0] ? o->truth : NULL;
	c->acked_file = o->acked_file[0] ? o->acked_file : NULL;
	c->labels_dir = o->labels_dir[0] ? o->labels_dir : NULL;
	c->list_pods = o->list_pods;
	c->mode = o->to_stdout ? OUTPUT_STDOUT : o->dry_run ? OUTPUT_DISCARD : OUTPUT_KAFKA;
	if (c->acked_file && c->mode != OUTPUT_KAFKA)
		return bad_value("acked-file", "only with Kafka output");
	if (parse_speed(o->speed, &c->speed))
		return bad_value("speed", o->speed);
	if (parse_speed(o->warmup_speed, &c->warmup_speed))
		return bad_value("warmup-speed", o->warmup_speed);
	c->warmup_s = -1;
	if (o->warmup[0] && scenario_duration(o->warmup, &c->warmup_s))
		return bad_value("warmup", o->warmup);
	c->duration_s = -1;
	if (!strcmp(o->duration, "inf"))
		c->duration_s = INFINITY;
	else if (o->duration[0] && scenario_duration(o->duration, &c->duration_s))
		return bad_value("duration", o->duration);
	c->start_us = -1;
	if (strcmp(o->start, "now")) {
		c->start_us = (int64_t)(strtod(o->start, &end) * 1e6);
		if (end == o->start || *end || c->start_us <= 0)
			return bad_value("start", o->start);
	}
	if (o->seed[0]) {
		errno = 0;
		c->seed = strtoull(o->seed, &end, 10);
		if (end == o->seed || *end || errno || o->seed[0] == '-')
			return bad_value("seed", o->seed);
		c->seed_given = 1;
	}
	c->progress_s = o->progress_s;
	if (!(c->progress_s > 0))
		return bad_value("progress", "not above 0");
	c->flush_s = o->flush_s;
	if (!(c->flush_s >= 0 && c->flush_s <= 86400))
		return bad_value("flush-timeout", "not within 0-86400");
	return 0;
}

static void format_time(int64_t us, char *buf, size_t n)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void on_cap(void *ctx, int task, double cap)
{
	struct fleet *f = ctx;
	cpi2_log(CPI2_LOG_INFO, "fleetsim", "%s: %s", fleet_task_dir(f, task),
		 isinf(cap) ? "cap lifted" : "capped");
	fleet_set_cap(f, task, cap);
}

/* Sleeps until wall time `until`, serving Kafka meanwhile; returns early on a signal. */
/* The simulated clock, for enforcers acting on the simulated hosts (their --clock-file):
 * <cgroup-root>/clock holds the current simulated time in microseconds, replaced atomically
 * once per simulated period. */
static void write_clock(const char *root, int64_t now_us)
{
	char path[4096], tmp[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/clock", root);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%" PRId64 "\n", now_us);
	if (fclose(f) == 0)
		rename(tmp, path);
}

static void pace(struct output *out, double until)
{
	for (;;) {
		double left = until - (cpi2_clock_us(CLOCK_MONOTONIC) / 1e6);
		if (left <= 0 || cpi2_signal_stop)
			return;
		if (left > 0.05)
			left = 0.05;
		struct timespec ts = {0, (long)(left * 1e9)};
		nanosleep(&ts, NULL);
		output_poll(out);
	}
}

static const char *speed_text(double speed, char *buf, size_t n)
{
	if (speed <= 0)
		return "max speed";
	snprintf(buf, n, "speed %g", speed);
	return buf;
}

static int load_scenario(const struct conf *c, struct scenario **s)
{
	char path[4096], err[1024] = "";
	struct stat st;
	const char *p = c->scenario;
	int rc;

	if (!strchr(p, '/') && (stat(p, &st) || !S_ISREG(st.st_mode))) { /* a name */
		snprintf(path, sizeof(path), "%s/%s%s", c->scenario_dir, p,
			 strstr(p, ".scn") ? "" : ".scn");
		p = path;
	}
	rc = scenario_load(p, s, err, sizeof(err));
	if (rc)
		cpi2_log(CPI2_LOG_ERR, "fleetsim", "scenario %s", err);
	return rc;
}

int main(int argc, char **argv)
{
	static struct options o;
	struct conf c = {0};
	struct scenario *s = NULL;
	struct fleet *f = NULL;
	struct capwatch *cw = NULL;
	struct output *out = NULL;
	FILE *truth = NULL;
	char err[1024] = "", truth_path[512], when[32], speed[32], wspeed[32];
	double wall0 = (cpi2_clock_us(CLOCK_MONOTONIC) / 1e6);
	uint64_t samples = 0;
	int rc = 1;

	rc = parse_args(argc, argv, &o, &c);
	if (rc)
		return rc == 1 ? 0 : 2;
	rc = 1;
	if (load_scenario(&c, &s))
		return 2;
	if (c.warmup_s >= 0)
		s->warmup_s = c.warmup_s;
	if (c.duration_s >= 0)
		s->duration_s = c.duration_s;
	if (!c.seed_given)
		c.seed = s->seed;
	if (c.start_us <= 0) { /* now - warmup, on a minute boundary like a collector's clock */
		int64_t now = (int64_t)time(NULL) * 1000000;
		c.start_us = now - (int64_t)(s->warmup_s * 1e6);
		c.start_us -= c.start_us % FLEET_PERIOD_US;
	}
	if (fleet_new(&f, s, c.seed, c.start_us, err, sizeof(err))) {
		cpi2_log(CPI2_LOG_ERR, "fleetsim", "%s", err);
		goto out;
	}
	if (c.list_pods) {
		fleet_write_pods(f, stdout);
		rc = fflush(stdout) ? 1 : 0;
		goto out;
	}
	if (fleet_npods(f)) {
		int n = fleet_map_pods(f, c.labels_dir, err, sizeof(err));

		if (n < 0) {
			cpi2_log(CPI2_LOG_ERR, "fleetsim", "%s", err);
			rc = 2;
			goto out;
		}
		cpi2_log(CPI2_LOG_INFO, "fleetsim",
			 "%d of %d Kubernetes pods named by their host's labels file: published", n,
			 fleet_npods(f));
	}
	int64_t end_us = isinf(s->duration_s)
			     ? INT64_MAX
			     : fleet_warmup_end_us(f) + (int64_t)(s->duration_s * 1e6);
	if (!c.truth) {
		snprintf(truth_path, sizeof(truth_path), "fleetsim-%s.truth.jsonl", s->name);
		c.truth = truth_path;
	}
	if (strcmp(c.truth, "none")) {
		truth = fopen(c.truth, "w");
		if (!truth) {
			cpi2_log(CPI2_LOG_ERR, "fleetsim", "ground truth %s: %s", c.truth,
				 strerror(errno));
			goto out;
		}
		fleet_write_truth(f, truth, end_us);
	}
	if (c.cgroup_root) {
		if (capwatch_new(&cw, c.cgroup_root, fleet_ntasks(f), 0, err, sizeof(err))) {
			cpi2_log(CPI2_LOG_ERR, "fleetsim", "%s", err);
			goto out;
		}
		for (int t = 0; t < fleet_ntasks(f); t++)
			if (capwatch_add(cw, t, fleet_task_dir(f, t), err, sizeof(err))) {
				cpi2_log(CPI2_LOG_ERR, "fleetsim", "%s", err);
				goto out;
			}
	}
	if (output_new(&out, c.mode, c.brokers, c.topic, c.props, &cpi2_signal_stop, err,
		       sizeof(err))) {
		cpi2_log(CPI2_LOG_ERR, "fleetsim", "kafka %s: %s", c.brokers, err);
		goto out;
	}
	if (c.acked_file && output_acked_file(out, c.acked_file, err, sizeof(err))) {
		cpi2_log(CPI2_LOG_ERR, "fleetsim", "%s", err);
		goto out;
	}
	if (cw)
		capwatch_write_clock(cw, fleet_now_us(f));
	/* SIGINT and SIGTERM stop the run (the producer is flushed); SIGHUP, which would end a
	 * long run without its flush, is ignored with a log line */
	cpi2_signal_install();
	format_time(c.start_us, when, sizeof(when));
	cpi2_log(CPI2_LOG_INFO, "fleetsim",
		 "scenario %s (seed %" PRIu64 "): %d hosts, %d tasks, %d events; start %s, "
		 "warmup %.0f s at %s, then %.0f s at %s; output %s%s%s%s; truth %s; "
		 "cgroup root %s; samples are SIMULATED",
		 s->name, c.seed, fleet_nhosts(f), fleet_ntasks(f), s->nevents, when, s->warmup_s,
		 speed_text(c.warmup_speed, wspeed, sizeof(wspeed)), s->duration_s,
		 speed_text(c.speed, speed, sizeof(speed)),
		 c.mode == OUTPUT_KAFKA	   ? "kafka "
		 : c.mode == OUTPUT_STDOUT ? "stdout"
					   : "dry-run",
		 c.mode == OUTPUT_KAFKA ? c.brokers : "", c.mode == OUTPUT_KAFKA ? " " : "",
		 c.mode == OUTPUT_KAFKA ? c.topic : "", truth ? c.truth : "none",
		 c.cgroup_root ? c.cgroup_root : "none (no caps)");

	wall0 = (cpi2_clock_us(CLOCK_MONOTONIC) /
		 1e6); /* rates count the simulation, not the setup of the tree */
	double last_log = wall0, phase_wall = wall0;
	int64_t phase_sim = c.start_us;
	uint64_t last_samples = 0;
	int clock_warned = 0;
	int in_warmup = fleet_now_us(f) < fleet_warmup_end_us(f);

	while (!cpi2_signal_stop && fleet_now_us(f) < end_us) {
		int64_t now_us = fleet_now_us(f);
		if (in_warmup && now_us >= fleet_warmup_end_us(f)) {
			in_warmup = 0; /* the pace changes: measure from here */
			phase_wall = (cpi2_clock_us(CLOCK_MONOTONIC) / 1e6);
			phase_sim = now_us;
			cpi2_log(CPI2_LOG_INFO, "fleetsim", "warmup done: scripted part starts");
		}
		double speed = in_warmup ? c.warmup_speed : c.speed;
		if (speed > 0) /* the period starts when its simulated time has come */
			pace(out, phase_wall + (double)(now_us - phase_sim) / 1e6 / speed);
		if (cpi2_signal_stop)
			break;
		cpi2_signal_hangups("fleetsim", "SIGINT or SIGTERM stop the run");
		if (cw) {
			capwatch_poll(cw, on_cap, f);
			write_clock(c.cgroup_root, now_us);
		}
		long n = fleet_step(f, output_emit, out);
		if (n == -EINTR)
			break; /* stopped while waiting for the Kafka queue */
		if (n < 0) {
			cpi2_log(CPI2_LOG_ERR, "fleetsim", "output failed: %s", strerror((int)-n));
			goto out;
		}
		samples += (uint64_t)n;
		int crc = cw ? capwatch_write_clock(cw, fleet_now_us(f)) : 0;
		if (crc && !clock_warned++)
			cpi2_log(CPI2_LOG_WARN, "fleetsim", "write %s/clock: %s", c.cgroup_root,
				 strerror(-crc));
		output_poll(out);
		double w = (cpi2_clock_us(CLOCK_MONOTONIC) / 1e6);
		if (w - last_log >= c.progress_s) {
			struct output_stats st;
			output_get_stats(out, &st);
			format_time(fleet_now_us(f), when, sizeof(when));
			cpi2_log(CPI2_LOG_INFO, "fleetsim",
				 "sim %s%s: %" PRIu64 " samples, %.0f samples/s, %d capped; kafka "
				 "delivered %" PRIu64 " failed %" PRIu64
				 ", queue-full waits %" PRIu64,
				 when, in_warmup ? " (warmup)" : "", samples,
				 (double)(samples - last_samples) / (w - last_log),
				 fleet_ncapped(f), st.delivered, st.failed, st.queue_full_waits);
			last_log = w, last_samples = samples;
		}
	}
	rc = 0;
out:
	if (out) {
		struct output_stats st;
		int left = output_close(out, (int)(c.flush_s * 1000),
					&st); /* the wait is part of the run */
		double secs = (cpi2_clock_us(CLOCK_MONOTONIC) / 1e6) - wall0;
		cpi2_log(CPI2_LOG_INFO, "fleetsim",
			 "%s: %" PRIu64 " samples in %.1f s (%.0f samples/s), %" PRIu64
			 " encode errors, %" PRIu64 " queue-full waits; kafka: %" PRIu64
			 " acknowledged, %" PRIu64 " failed, %d left unsent after the flush",
			 cpi2_signal_stop ? "stopped" : "done", samples, secs,
			 secs > 0 ? (double)samples / secs : 0.0, st.encode_errors,
			 st.queue_full_waits, st.delivered, st.failed, left);
		if (left != 0 || st.failed > 0 || st.encode_errors > 0 || st.acked_unreadable > 0)
			rc = 1;
	}
	if (truth)
		fclose(truth);
	capwatch_delete(cw);
	fleet_delete(f);
	scenario_delete(s);
	return rc;
}
