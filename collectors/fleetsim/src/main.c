/* cpi2-fleetsim: plays a scenario of simulated hosts and publishes their CPI samples exactly as
 * cpi2-collector would (Avro CpiSample on cpi2.samples, key = host), faster than real time,
 * writes the ground truth, and obeys caps written into a simulated cgroup tree. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cpi2/clock.h>
#include <cpi2/kafka.h>
#include <cpi2/log.h>
#include <cpi2/names.h>
#include <cpi2/signals.h>

#include "capwatch.h"
#include "fleet.h"
#include "output.h"
#include "scenario.h"

#define MAX_PROPS 64
/* One process publishes for a whole fleet, thousands of hosts' samples a second. Batches of
 * 50 ms (libcpi2's producer default, meant for one host's collector, is 5) cut Kafka's and the
 * consumer's cost per sample. -X linger.ms=N overrides it. */
#define DEFAULT_PROP "linger.ms=50"

/* Every option of the program. */
struct conf {
	const char *scenario;	  /* name in scenario_dir or a path */
	const char *scenario_dir; /* where names are looked up */
	double speed;		  /* simulated seconds per wall second; 0 = as fast as possible */
	double warmup_speed;	  /* the same during the warmup */
	double warmup_s;	  /* < 0: the scenario's */
	double duration_s;	  /* after the warmup; < 0: the scenario's; INFINITY: forever */
	int64_t start_us;	  /* simulated start; 0: now - warmup, on a minute */
	uint64_t seed;
	int seed_given;
	const char *brokers;
	const char *topic;
	/* DEFAULT_PROP, then the client file's, then -X key=value (later ones win), NULL-terminated
	 */
	const char *props[1 + MAX_PROPS + 1];
	int nprops;
	const char *xprops[MAX_PROPS]; /* -X, in order */
	int nx;
	const char *client_file; /* --kafka-client-file */
	const char *cgroup_root; /* NULL: no cap loop */
	const char *truth;	 /* ground truth file; NULL: fleetsim-<scenario>.truth.jsonl */
	enum output_mode mode;
	double progress_s; /* wall seconds between progress lines */
	double flush_s;	   /* at the end, wait this long at most for Kafka to take the rest */
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: cpi2-fleetsim [OPTIONS] --scenario NAME|FILE\n"
	    "Simulates a fleet of hosts and publishes one CpiSample per task per minute of\n"
	    "simulated time to Kafka, as cpi2-collector would (counter_source SIMULATED).\n"
	    "\n"
	    "  -s, --scenario NAME|FILE  scenario file, or NAME of one in --scenario-dir:\n"
	    "                            case1 case2 case3 case4 steady fleet300\n"
	    "      --scenario-dir DIR    default " FLEETSIM_SCENARIO_DIR "\n"
	    "      --speed N|max         simulated seconds per wall second (default 1)\n"
	    "      --warmup DURATION     normal behaviour before the scripted events, played\n"
	    "                            at --warmup-speed (default: the scenario's, e.g. 6h)\n"
	    "      --warmup-speed N|max  default max\n"
	    "      --duration DURATION|inf  simulated time after the warmup (default: scenario's)\n"
	    "      --start EPOCH_S|now   simulated start (default: now - warmup, so the events\n"
	    "                            begin about now)\n"
	    "      --seed N              random seed (default: the scenario's); same seed, same\n"
	    "                            samples\n"
	    "  -b, --brokers LIST        Kafka bootstrap servers (default 127.0.0.1:9092)\n"
	    "  -t, --topic NAME          default cpi2.samples\n"
	    "  -X key=value              librdkafka property, passed through (repeatable;\n"
	    "                            default here: " DEFAULT_PROP "); no secrets\n"
	    "      --kafka-client-file PATH  librdkafka properties of the Kafka principal (SASL,\n"
	    "                            TLS, password), under the -X ones; mode 0600\n"
	    "      --cgroup-root DIR     create <DIR>/<host>/<task> folders with cpu.max and\n"
	    "                            cpu.cfs_quota_us; caps written there clamp the task\n"
	    "      --truth FILE|none     ground truth, JSON lines (default\n"
	    "                            fleetsim-<scenario>.truth.jsonl)\n"
	    "      --stdout              print samples as JSON lines to stdout, no Kafka\n"
	    "      --dry-run             encode samples (Avro) and drop them, no Kafka\n"
	    "      --progress SECONDS    wall seconds between progress lines (default 5)\n"
	    "      --flush-timeout SECONDS  at the end, wait at most this long for Kafka to take\n"
	    "                            what is still queued (default 10; exit 1 if some is "
	    "left)\n"
	    "  -h, --help                this text\n"
	    "Durations: 90s, 10m, 2h, 1h30m, 1d. Scenario format: scenarios/README.md.\n");
}

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

static int parse_args(int argc, char **argv, struct conf *c)
{
	enum {
		O_DIR = 256,
		O_SPEED,
		O_WARMUP,
		O_WSPEED,
		O_DURATION,
		O_START,
		O_SEED,
		O_CGROUP,
		O_TRUTH,
		O_STDOUT,
		O_DRY,
		O_PROGRESS,
		O_FLUSH,
		O_CLIENT
	};
	static const struct option opts[] = {{"scenario", required_argument, 0, 's'},
					     {"scenario-dir", required_argument, 0, O_DIR},
					     {"speed", required_argument, 0, O_SPEED},
					     {"warmup", required_argument, 0, O_WARMUP},
					     {"warmup-speed", required_argument, 0, O_WSPEED},
					     {"duration", required_argument, 0, O_DURATION},
					     {"start", required_argument, 0, O_START},
					     {"seed", required_argument, 0, O_SEED},
					     {"brokers", required_argument, 0, 'b'},
					     {"topic", required_argument, 0, 't'},
					     {"cgroup-root", required_argument, 0, O_CGROUP},
					     {"truth", required_argument, 0, O_TRUTH},
					     {"stdout", no_argument, 0, O_STDOUT},
					     {"dry-run", no_argument, 0, O_DRY},
					     {"progress", required_argument, 0, O_PROGRESS},
					     {"flush-timeout", required_argument, 0, O_FLUSH},
					     {"kafka-client-file", required_argument, 0, O_CLIENT},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	int o;
	char *end;

	while ((o = getopt_long(argc, argv, "s:b:t:X:h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			c->scenario = optarg;
			break;
		case O_DIR:
			c->scenario_dir = optarg;
			break;
		case O_SPEED:
			if (parse_speed(optarg, &c->speed))
				goto bad;
			break;
		case O_WSPEED:
			if (parse_speed(optarg, &c->warmup_speed))
				goto bad;
			break;
		case O_WARMUP:
			if (scenario_duration(optarg, &c->warmup_s))
				goto bad;
			break;
		case O_DURATION:
			if (!strcmp(optarg, "inf"))
				c->duration_s = INFINITY;
			else if (scenario_duration(optarg, &c->duration_s))
				goto bad;
			break;
		case O_START:
			if (!strcmp(optarg, "now")) {
				c->start_us = -1;
				break;
			}
			c->start_us = (int64_t)(strtod(optarg, &end) * 1e6);
			if (end == optarg || *end || c->start_us <= 0)
				goto bad;
			break;
		case O_SEED:
			errno = 0;
			c->seed = strtoull(optarg, &end, 10);
			if (end == optarg || *end || errno)
				goto bad;
			c->seed_given = 1;
			break;
		case 'b':
			c->brokers = optarg;
			break;
		case 't':
			c->topic = optarg;
			break;
		case 'X':
			if (!strchr(optarg, '=') || c->nx >= MAX_PROPS) {
				fprintf(stderr, "cpi2-fleetsim: -X needs key=value (at most %d)\n",
					MAX_PROPS);
				return -EINVAL;
			}
			if (cpi2_kafka_prop_is_secret(optarg)) {
				fprintf(
				    stderr,
				    "cpi2-fleetsim: -X %.*s=...: a secret is not taken on the "
				    "command line, "
				    "where every local user reads it (ps, /proc): put it in the "
				    "--kafka-client-file (mode 0600)\n",
				    (int)strcspn(optarg, "="), optarg);
				return -EINVAL;
			}
			c->xprops[c->nx++] = optarg;
			break;
		case O_CLIENT:
			c->client_file = optarg;
			break;
		case O_CGROUP:
			c->cgroup_root = optarg;
			break;
		case O_TRUTH:
			c->truth = optarg;
			break;
		case O_STDOUT:
			c->mode = OUTPUT_STDOUT;
			break;
		case O_DRY:
			if (c->mode != OUTPUT_STDOUT)
				c->mode = OUTPUT_DISCARD;
			break;
		case O_PROGRESS:
			c->progress_s = strtod(optarg, &end);
			if (end == optarg || *end || !(c->progress_s > 0))
				goto bad;
			break;
		case O_FLUSH:
			c->flush_s = strtod(optarg, &end);
			if (end == optarg || *end || !(c->flush_s >= 0 && c->flush_s <= 86400))
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
		continue;
	bad:
		fprintf(stderr,
			"cpi2-fleetsim: '%s' is not a valid value for this option (see "
			"--help)\n",
			optarg);
		return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "cpi2-fleetsim: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!c->scenario) {
		fprintf(stderr, "cpi2-fleetsim: --scenario is required (see --help)\n");
		return -EINVAL;
	}
	if (c->client_file) {
		char err[512];

		if (cpi2_kafka_client_file(c->client_file, c->props, 1 + MAX_PROPS - c->nx,
					   &c->nprops, err, sizeof(err))) {
			fprintf(stderr, "cpi2-fleetsim: %s\n", err);
			return -EINVAL;
		}
	}
	for (int i = 0; i < c->nx; i++)
		c->props[c->nprops++] = c->xprops[i];
	c->props[c->nprops] = NULL;
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

	if (!strchr(p, '/') && stat(p, &st)) {
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
	struct conf c = {
	    .scenario_dir = FLEETSIM_SCENARIO_DIR,
	    .speed = 1,
	    .warmup_speed = 0,
	    .warmup_s = -1,
	    .duration_s = -1,
	    .brokers = "127.0.0.1:9092",
	    .topic = CPI2_TOPIC_SAMPLES,
	    .mode = OUTPUT_KAFKA,
	    .progress_s = 5,
	    .flush_s = 10,
	    .props = {DEFAULT_PROP},
	    .nprops = 1,
	};
	struct scenario *s = NULL;
	struct fleet *f = NULL;
	struct capwatch *cw = NULL;
	struct output *out = NULL;
	FILE *truth = NULL;
	char err[1024] = "", truth_path[512], when[32], speed[32], wspeed[32];
	double wall0 = (cpi2_clock_us(CLOCK_MONOTONIC) / 1e6);
	uint64_t samples = 0;
	int rc = 1;

	if (parse_args(argc, argv, &c))
		return 2;
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
		output_get_stats(out, &st);
		int left =
		    output_close(out, (int)(c.flush_s * 1000)); /* the wait is part of the run */
		double secs = (cpi2_clock_us(CLOCK_MONOTONIC) / 1e6) - wall0;
		cpi2_log(CPI2_LOG_INFO, "fleetsim",
			 "%s: %" PRIu64 " samples in %.1f s (%.0f samples/s), %" PRIu64
			 " encode errors, %" PRIu64 " queue-full waits; kafka: %" PRIu64
			 " failed before the flush, %d left unsent after it",
			 cpi2_signal_stop ? "stopped" : "done", samples, secs,
			 secs > 0 ? (double)samples / secs : 0.0, st.encode_errors,
			 st.queue_full_waits, st.failed, left);
		if (left > 0 || st.failed > 0 || st.encode_errors > 0)
			rc = 1;
	}
	if (truth)
		fclose(truth);
	capwatch_delete(cw);
	fleet_delete(f);
	scenario_delete(s);
	return rc;
}
