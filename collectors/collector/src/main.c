/* cpi2-collector: counts every task (cgroup) of this host for a window once a period and
 * publishes one CpiSample per task to Kafka (paper section 3.1). See collectors/README.md. */
#include "collector.h"
#include "conf.h"

#include <cpi2/clock.h>
#include <cpi2/httpd.h>
#include <cpi2/kafka.h>
#include <cpi2/log.h>
#include <cpi2/metrics.h>
#include <cpi2/signals.h>
#include <cpi2/sample.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* where samples go and what happened to them */
struct output {
	struct cpi2_producer *producer; /* NULL: --once or --dry-run */
	const struct collector_conf *conf;
	const char *host;
	uint64_t encode_errors, send_errors;
	struct cpi2_httpd *httpd; /* /metrics and /healthz, or NULL */
	struct totals {		  /* since the start, for /metrics */
		uint64_t windows, samples, scrapes, failed[SVC_REASONS], values[2], nulls[2];
	} totals;
	struct cpi2_metrics text;
};

static int emit(void *arg, const struct cpi2_sample *s)
{
	struct output *o = arg;
	char buf[4096];
	size_t len;
	int rc;

	if (o->conf->once || o->conf->to_stdout) {
		rc = cpi2_sample_to_json(s, buf, sizeof(buf));
		if (rc < 0) {
			o->encode_errors++;
			return rc;
		}
		puts(buf);
		fflush(stdout); /* a reader sees each window as it ends */
		return 0;
	}
	rc = cpi2_sample_encode(s, buf, sizeof(buf),
				&len); /* also in --dry-run: same cost, same checks */
	if (rc) {
		o->encode_errors++;
		cpi2_log(CPI2_LOG_WARN, "collector", "encode sample of %s: %s", s->task,
			 strerror(-rc));
		return rc;
	}
	if (!o->producer)
		return 0;
	rc = cpi2_producer_send(o->producer, o->conf->topic, o->host, strlen(o->host), buf, len);
	if (rc && rc != -ENOBUFS) /* a full queue is counted by the producer */
		o->send_errors++;
	return rc;
}

/* Sleep until the monotonic time deadline_us, serving Kafka delivery reports and the scrapes
 * in flight (publishing the samples that waited for them); false when a signal asked to stop. */
static bool wait_until(struct collector *c, int64_t deadline_us, struct output *o)
{
	for (;;) {
		int64_t left = deadline_us - cpi2_clock_us(CLOCK_MONOTONIC);

		if (cpi2_signal_stop)
			return false;
		cpi2_signal_hangups(
		    "collector", "the configuration is read at start only (restart to change it)");
		if (left <= 0)
			return true;
		if (o->producer) {
			cpi2_producer_poll(o->producer);
			if (left > 200000)
				left = 200000; /* delivery reports are served at least 5 times a
						  second */
		}
		if (services_busy(c)) {
			services_poll(c, cpi2_clock_us(CLOCK_MONOTONIC) + left, emit, o);
			continue;
		}
		struct timespec ts = {left / 1000000, (left % 1000000) * 1000};

		nanosleep(&ts, NULL); /* a signal cuts it short */
	}
}

/* Wait for the scrapes in flight (each ends by its deadline) and publish what waited for them. */
static void drain(struct collector *c, struct output *o)
{
	while (services_busy(c)) {
		services_poll(c, cpi2_clock_us(CLOCK_MONOTONIC) + 1000000, emit, o);
		if (o->producer)
			cpi2_producer_poll(o->producer);
	}
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* A window's counts into the metrics /metrics serves (before log_window empties the scrapes'). */
static void publish_metrics(struct collector *c, struct output *o)
{
	static const char *const names[] = {"discovered", "ignored",	"unmapped",
					    "parents",	  "unlabelled", "counted",
					    "deferred",	  "vanished",	"failed"};
	const struct window_stats *w = &c->stats;
	const size_t v[] = {w->discovered, w->ignored,	w->unmapped, w->parents, w->unlabelled,
			    w->counted,	   w->deferred, w->vanished, w->failed};
	const struct svc_counts *k = &c->services.counts;
	struct totals *t = &o->totals;
	struct cpi2_metrics *m = &o->text;
	struct cpi2_producer_stats ks = {0};
	char reason[32];

	t->windows++;
	t->samples += w->samples;
	t->scrapes += k->scrapes;
	t->values[0] += k->cpu_per_op;
	t->values[1] += k->latency;
	for (int r = 0; r < SVC_REASONS; r++) {
		t->failed[r] += k->failed[r];
		t->nulls[0] += k->cpu_per_op_null[r];
		t->nulls[1] += k->latency_null[r];
	}
	if (!o->httpd)
		return;
	cpi2_httpd_alive(o->httpd);
	cpi2_metrics_reset(m);
	cpi2_metrics_family(m, "cpi2_collector_windows_total", "counter",
			    "Windows counted and published");
	cpi2_metrics_value(m, "cpi2_collector_windows_total", NULL, (double)t->windows);
	cpi2_metrics_family(m, "cpi2_collector_window_cgroups", "gauge",
			    "Cgroups of the last window by what became of them");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cpi2_metrics_value(m, "cpi2_collector_window_cgroups",
				   (const char *const[]){"state", names[i], NULL}, (double)v[i]);
	cpi2_metrics_family(m, "cpi2_collector_samples_total", "counter", "Samples made");
	cpi2_metrics_value(m, "cpi2_collector_samples_total", NULL, (double)t->samples);
	cpi2_metrics_family(m, "cpi2_collector_sample_errors_total", "counter",
			    "Samples not published, by the step that failed");
	cpi2_metrics_value(m, "cpi2_collector_sample_errors_total",
			   (const char *const[]){"step", "encode", NULL}, (double)o->encode_errors);
	cpi2_metrics_value(m, "cpi2_collector_sample_errors_total",
			   (const char *const[]){"step", "send", NULL}, (double)o->send_errors);
	if (o->producer)
		cpi2_producer_get_stats(o->producer, &ks);
	cpi2_metrics_family(m, "cpi2_collector_kafka_messages_total", "counter",
			    "Samples given to Kafka, by outcome (sent: queued; failed: delivery "
			    "failed; dropped: the queue was full)");
	cpi2_metrics_value(m, "cpi2_collector_kafka_messages_total",
			   (const char *const[]){"outcome", "sent", NULL}, (double)ks.sent);
	cpi2_metrics_value(m, "cpi2_collector_kafka_messages_total",
			   (const char *const[]){"outcome", "delivered", NULL},
			   (double)ks.delivered);
	cpi2_metrics_value(m, "cpi2_collector_kafka_messages_total",
			   (const char *const[]){"outcome", "failed", NULL}, (double)ks.failed);
	cpi2_metrics_value(m, "cpi2_collector_kafka_messages_total",
			   (const char *const[]){"outcome", "dropped", NULL},
			   (double)ks.dropped_queue_full);
	cpi2_metrics_family(m, "cpi2_collector_scrapes_total", "counter",
			    "Scrapes of the tasks' metrics endpoints");
	cpi2_metrics_value(m, "cpi2_collector_scrapes_total", NULL, (double)t->scrapes);
	cpi2_metrics_family(m, "cpi2_collector_scrape_errors_total", "counter",
			    "Scrapes that failed, by reason");
	for (int r = 1; r < SVC_REASONS; r++) {
		snprintf(reason, sizeof(reason), "%s", svc_reason_name(r));
		for (char *ch = reason; *ch; ch++)
			*ch = *ch == ' ' ? '_' : *ch;
		cpi2_metrics_value(m, "cpi2_collector_scrape_errors_total",
				   (const char *const[]){"reason", reason, NULL},
				   (double)t->failed[r]);
	}
	cpi2_metrics_family(m, "cpi2_collector_service_values_total", "counter",
			    "cpu_per_op and latency of scraped tasks, published or null");
	for (int i = 0; i < 2; i++) {
		const char *sig = i ? "latency" : "cpu_per_op";

		cpi2_metrics_value(m, "cpi2_collector_service_values_total",
				   (const char *const[]){"signal", sig, "result", "value", NULL},
				   (double)t->values[i]);
		cpi2_metrics_value(m, "cpi2_collector_service_values_total",
				   (const char *const[]){"signal", sig, "result", "null", NULL},
				   (double)t->nulls[i]);
	}
	cpi2_metrics_family(m, "cpi2_collector_last_window_timestamp_seconds", "gauge",
			    "When the last window started (Unix time)");
	cpi2_metrics_value(m, "cpi2_collector_last_window_timestamp_seconds", NULL,
			   (double)c->start_us / 1e6);
	if (!m->failed)
		cpi2_httpd_publish(o->httpd, m->text, m->len);
}

static void log_window(struct collector *c, struct output *o, struct cpi2_producer_stats *last,
		       double cpu_s, double wall_s)
{
	const struct window_stats *w = &c->stats;
	struct cpi2_producer_stats now = {0};
	char scrapes[512] = "";

	if (o->producer)
		cpi2_producer_get_stats(o->producer, &now);
	if (c->services.n || c->services.counts.scrapes)
		services_counts_text(c, scrapes, sizeof(scrapes));
	cpi2_log(
	    CPI2_LOG_INFO, "collector",
	    "window: %zu cgroups (%zu ignored, %zu unmapped, %zu unmapped parents not published, "
	    "%zu without the labels entry they need, not published), %zu counted, %zu deferred by "
	    "the fd budget, %zu vanished, %zu failed; %zu samples; "
	    "kafka: "
	    "%llu sent, %llu delivered, %llu failed, %llu dropped (queue full) since the last "
	    "window; "
	    "own cpu %.1f ms in %.1f s = %.4f%% of one CPU%s",
	    w->discovered, w->ignored, w->unmapped, w->parents, w->unlabelled, w->counted,
	    w->deferred, w->vanished, w->failed, w->samples,
	    (unsigned long long)(now.sent - last->sent),
	    (unsigned long long)(now.delivered - last->delivered),
	    (unsigned long long)(now.failed - last->failed),
	    (unsigned long long)(now.dropped_queue_full - last->dropped_queue_full), cpu_s * 1e3,
	    wall_s, wall_s > 0 ? 100.0 * cpu_s / wall_s : 0.0, scrapes);
	*last = now;
}

static int open_producer(const struct collector_conf *conf, const char **props, struct output *o)
{
	const char *all[CPI2_CONFIG_MAX_PROPS + 2];
	char queue[64], err[512];
	int n = 0, rc;

	snprintf(queue, sizeof(queue), "queue.buffering.max.kbytes=%ld", conf->queue_max_kbytes);
	all[n++] = queue;
	for (int i = 0; props[i]; i++)
		all[n++] = props[i]; /* -X overrides the defaults */
	all[n] = NULL;
	rc = cpi2_producer_new(&o->producer, conf->brokers, all, err, sizeof(err));
	if (rc)
		cpi2_log(CPI2_LOG_ERR, "collector", "kafka producer for %s: %s", conf->brokers,
			 err);
	return rc;
}

static int run(struct collector *c, struct output *o)
{
	const struct collector_conf *conf = c->conf;
	int64_t period_us = (int64_t)(conf->period_s * 1e6),
		window_us = (int64_t)(conf->window_s * 1e6);
	struct cpi2_producer_stats last = {0};
	double cpu0 = cpu_seconds();
	int64_t wall0 = cpi2_clock_us(CLOCK_MONOTONIC);
	/* a window as long as the period: each begins where the one before ended, at the next
	 * multiple of the period, and ends on the one after (the publishing of the last window
	 * comes out of this one's start, not a skipped period) */
	bool back_to_back = !conf->once && window_us >= period_us;
	int64_t next = 0; /* the wall-clock start of the next back-to-back window, 0: none yet */
	long done = 0;

	while (!cpi2_signal_stop && (!conf->windows || done < conf->windows)) {
		/* windows start on multiples of the period of the wall clock, so hosts align */
		int64_t now = cpi2_clock_us(CLOCK_REALTIME),
			start = conf->once ? now : (now / period_us + 1) * period_us, end_mono;

		if (back_to_back && next && now >= next && now < next + period_us)
			start = next; /* late by the last window's publishing: begin at once */
		if (!wait_until(c, cpi2_clock_us(CLOCK_MONOTONIC) + (start - now), o))
			break;
		if (collector_window_begin(c)) {
			cpi2_log(CPI2_LOG_ERR, "collector", "window: out of memory");
			return 1;
		}
		end_mono = cpi2_clock_us(CLOCK_MONOTONIC) + window_us;
		if (back_to_back) {
			end_mono -= cpi2_clock_us(CLOCK_REALTIME) - start; /* end on the boundary */
			next = start + period_us;
		}
		if (!wait_until(c, end_mono, o)) {
			collector_window_abort(c);
			cpi2_log(CPI2_LOG_INFO, "collector",
				 "stopped in the middle of a window: it is not published");
			break;
		}
		collector_window_end(c, emit, o);
		if (conf->once)
			drain(c, o); /* its scraped samples, before the window's line */
		if (o->producer)
			cpi2_producer_poll(o->producer);
		double cpu1 = cpu_seconds();
		int64_t wall1 = cpi2_clock_us(CLOCK_MONOTONIC);

		publish_metrics(c, o);
		log_window(c, o, &last, cpu1 - cpu0, (double)(wall1 - wall0) / 1e6);
		cpu0 = cpu1;
		wall0 = wall1;
		done++;
		if (conf->once)
			break;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct collector_conf conf;
	static struct collector c;
	const char *props[CPI2_CONFIG_MAX_PROPS];
	struct output out = {.conf = &conf};
	char err[1024];
	int rc;

	rc = cpi2_config_parse_args(collector_conf_keys, &conf, argc, argv, collector_usage, props,
				    err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc || collector_conf_check(&conf, err, sizeof(err))) {
		fprintf(stderr, "cpi2-collector: %s\n", err);
		return 2;
	}
	rc = collector_init(&c, &conf, err, sizeof(err));
	if (rc) {
		if (!strcmp(conf.events, "hardware") && strstr(err, "perf event"))
			cpi2_log(
			    CPI2_LOG_ERR, "collector",
			    "%s. Refusing to publish made-up CPI. --events task-clock counts a "
			    "software event "
			    "instead (samples then say counter_source SOFTWARE and carry no CPI)",
			    err);
		else
			cpi2_log(CPI2_LOG_ERR, "collector", "%s", err);
		collector_free(&c);
		return 2;
	}
	if (c.spec.counter_source == CPI2_COUNTER_SOURCE_SOFTWARE)
		cpi2_log(CPI2_LOG_WARN, "collector",
			 "counting the software event %s, not cycles and instructions: samples say "
			 "counter_source "
			 "SOFTWARE, their cycles field holds %s counts and they carry no CPI",
			 c.spec.name[0], c.spec.name[0]);
	cpi2_log(CPI2_LOG_INFO, "collector",
		 "host %s, platform %s, %d CPUs, events %s%s%s, %d root(s) (first %s, cgroup v%d), "
		 "window %g s "
		 "every %g s, fd budget %ld (%ld cgroups per window), %s",
		 c.host, c.platform, c.ncpu, c.spec.name[0], c.spec.n_events > 1 ? "+" : "",
		 c.spec.n_events > 1 ? c.spec.name[1] : "", c.n_roots, c.roots[0].path,
		 c.roots[0].version, conf.window_s, conf.period_s, c.fd_budget,
		 c.fd_budget / (c.ncpu * c.spec.n_events),
		 conf.once	  ? "--once: JSON to stdout"
		 : conf.to_stdout ? "JSON to stdout"
		 : conf.dry_run	  ? "--dry-run: nothing published"
				  : conf.topic);
	/* SIGTERM and SIGINT stop after the window; SIGHUP is ignored with a log line rather
	 * than killing the collector mid-window */
	cpi2_signal_install();
	out.host = c.host;
	if (!conf.once && !conf.dry_run && !conf.to_stdout && open_producer(&conf, props, &out)) {
		collector_free(&c);
		return 2;
	}
	if (conf.metrics_address[0] &&
	    cpi2_httpd_start(&out.httpd, conf.metrics_address, "collector",
			     conf.health_timeout_s > 0 ? conf.health_timeout_s
						       : 3 * conf.period_s + 30,
			     err, sizeof(err))) {
		cpi2_log(CPI2_LOG_ERR, "collector", "%s", err);
		cpi2_producer_close(out.producer, 0);
		collector_free(&c);
		return 2;
	}
	rc = run(&c, &out);
	drain(&c, &out); /* the samples of the last window still waiting for their scrapes */
	if (out.producer) {
		struct cpi2_producer_stats s;
		int left;

		left = cpi2_producer_flush(out.producer, (int)conf.flush_timeout_ms);
		cpi2_producer_get_stats(out.producer, &s);
		cpi2_producer_close(out.producer, 0); /* logs what is left, if anything */
		cpi2_log(CPI2_LOG_INFO, "collector",
			 "kafka totals: %llu sent, %llu delivered, %llu failed, %llu dropped "
			 "(queue full), %d left "
			 "undelivered at exit",
			 (unsigned long long)s.sent, (unsigned long long)s.delivered,
			 (unsigned long long)s.failed, (unsigned long long)s.dropped_queue_full,
			 left);
		if (left > 0 && !rc)
			rc = 3;
	}
	if (out.encode_errors || out.send_errors)
		cpi2_log(
		    CPI2_LOG_WARN, "collector", "%llu samples could not be encoded, %llu not sent",
		    (unsigned long long)out.encode_errors, (unsigned long long)out.send_errors);
	cpi2_httpd_stop(out.httpd);
	cpi2_metrics_free(&out.text);
	collector_free(&c);
	cpi2_log(CPI2_LOG_INFO, "collector", "stopped");
	return rc;
}
