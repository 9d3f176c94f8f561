#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cpi2/kafka.h>
#include <cpi2/log.h>
#include <cpi2/sample.h>
#include <cpi2/wire.h>

struct output {
	enum output_mode mode;
	struct cpi2_producer *producer; /* Kafka mode only */
	char *topic;
	volatile sig_atomic_t *stop;
	double waited_s; /* waiting for a full queue since the last warning */
	struct output_stats st;
	FILE *acked;		  /* --acked-file, or NULL */
	struct cpi2_codec *codec; /* decodes what the broker acknowledged */
	char buf[4096];
};

int output_new(struct output **out, enum output_mode mode, const char *brokers, const char *topic,
	       const char *const *props, volatile sig_atomic_t *stop, char *err, size_t errsz)
{
	struct output *o = calloc(1, sizeof(*o));
	int rc;

	*out = NULL;
	if (!o)
		return -ENOMEM;
	o->mode = mode;
	o->stop = stop;
	o->topic = strdup(topic);
	if (!o->topic) {
		free(o);
		return -ENOMEM;
	}
	if (mode == OUTPUT_KAFKA) {
		rc = cpi2_producer_new(&o->producer, brokers, props, err, errsz);
		if (rc) {
			free(o->topic);
			free(o);
			return rc < 0 ? rc : -EINVAL;
		}
	}
	*out = o;
	return 0;
}

/* A delivery report: an acknowledged sample's identity (host, task, window start) into the
 * acked file. The payload is what output_emit encoded; one that does not decode is counted. */
static void on_delivery(void *arg, const void *key, size_t keylen, const void *val, size_t vallen,
			int err)
{
	struct output *o = arg;
	const char *host, *task;
	int64_t start;
	avro_value_t *v;
	char why[256];

	(void)key, (void)keylen;
	if (err)
		return;
	if (cpi2_codec_decode(o->codec, val, vallen, &v, why, sizeof(why)) ||
	    cpi2_value_get_string(v, "host", &host, NULL) ||
	    cpi2_value_get_string(v, "task", &task, NULL) ||
	    cpi2_value_get_long(v, "window_start_us", &start, NULL)) {
		if (o->st.acked_unreadable++ == 0)
			cpi2_log(CPI2_LOG_ERR, "fleetsim", "acknowledged sample unreadable: %s",
				 why);
		return;
	}
	fprintf(o->acked, "%s\t%s\t%" PRId64 "\n", host, task, start);
	o->st.acked_written++;
}

int output_acked_file(struct output *o, const char *path, char *err, size_t errsz)
{
	int rc;

	if (!o->producer) {
		snprintf(err, errsz, "acked file %s: no Kafka output", path);
		return -EINVAL;
	}
	rc = cpi2_codec_open(&o->codec, "CpiSample", err, errsz);
	if (rc)
		return rc;
	o->acked = fopen(path, "w");
	if (!o->acked) {
		rc = -errno;
		snprintf(err, errsz, "acked file %s: %s", path, strerror(errno));
		return rc;
	}
	cpi2_producer_on_delivery(o->producer, on_delivery, o);
	return 0;
}

static void to_cpi2(const struct fleet_sample *f, struct cpi2_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->host = f->host;
	s->task = f->task;
	s->job = f->job;
	s->task_id = f->task_id;
	s->platform = f->platform;
	s->task_class = f->task_class;
	s->is_protected = f->is_protected;
	s->window_start_us = f->window_start_us;
	s->window_us = f->window_us;
	s->cycles = f->cycles;
	s->instructions = f->instructions;
	s->counter_source = CPI2_COUNTER_SOURCE_SIMULATED;
	s->time_running_ratio = 1.0;
	s->cpu_usage = f->cpu_usage;
	s->has_cpi = f->has_cpi;
	s->cpi = f->cpi;
	s->has_llc_misses = true;
	s->llc_misses = f->llc_misses;
	s->has_threads = true;
	s->threads = f->threads;
	s->has_host_cpus = true;
	s->host_cpus = f->host_cpus;
	s->has_numa_score = f->has_numa_score;
	s->numa_score = f->numa_score;
	s->has_cpu_per_op = f->has_cpu_per_op;
	s->cpu_per_op = f->cpu_per_op;
	s->has_latency = f->has_latency;
	s->latency = f->latency;
}

static void wait_a_little(void)
{
	struct timespec ts = {0, 1000000}; /* 1 ms */
	nanosleep(&ts, NULL);
}

int output_emit(void *ctx, const struct fleet_sample *f)
{
	struct output *o = ctx;
	struct cpi2_sample s;
	size_t len = 0;
	int rc;

	to_cpi2(f, &s);
	o->st.emitted++;
	if (o->mode == OUTPUT_STDOUT) {
		rc = cpi2_sample_to_json(&s, o->buf, sizeof(o->buf));
		if (rc < 0) {
			o->st.encode_errors++;
			return 0;
		}
		fputs(o->buf, stdout);
		fputc('\n', stdout);
		return 0;
	}
	rc = cpi2_sample_encode(&s, o->buf, sizeof(o->buf), &len);
	if (rc) {
		if (o->st.encode_errors++ == 0)
			cpi2_log(CPI2_LOG_ERR, "fleetsim", "encode sample of %s %s: %s", f->host,
				 f->task, strerror(-rc));
		return 0;
	}
	if (o->mode == OUTPUT_DISCARD)
		return 0;
	/* a load generator may wait for the queue (backpressure) where a collector drops */
	while ((rc = cpi2_producer_send(o->producer, o->topic, f->host, strlen(f->host), o->buf,
					len)) == -ENOBUFS) {
		o->st.queue_full_waits++;
		if (o->stop && *o->stop)
			return -EINTR;
		cpi2_producer_poll(o->producer);
		wait_a_little();
		o->waited_s += 0.001;
		if (o->waited_s >= 10) {
			cpi2_log(CPI2_LOG_WARN, "fleetsim",
				 "the producer queue has been full for 10 s: is Kafka up?");
			o->waited_s = 0;
		}
	}
	if (rc) {
		cpi2_log(CPI2_LOG_ERR, "fleetsim", "send to %s: %s", o->topic, strerror(-rc));
		return rc;
	}
	return 0;
}

void output_poll(struct output *o)
{
	if (o->producer)
		cpi2_producer_poll(o->producer);
}

void output_get_stats(const struct output *o, struct output_stats *st)
{
	*st = o->st;
	if (o->producer) {
		struct cpi2_producer_stats ps;
		cpi2_producer_get_stats(o->producer, &ps);
		st->sent = ps.sent;
		st->delivered = ps.delivered;
		st->failed = ps.failed;
		st->dropped_queue_full = ps.dropped_queue_full;
	}
}

int output_close(struct output *o, int timeout_ms, struct output_stats *st)
{
	int left = 0;

	if (!o)
		return 0;
	if (o->mode == OUTPUT_STDOUT)
		fflush(stdout);
	if (o->producer) {
		left = cpi2_producer_flush(o->producer, timeout_ms);
		if (st)
			output_get_stats(o, st);
		left = cpi2_producer_close(o->producer, 0);
	} else if (st) {
		output_get_stats(o, st);
	}
	if (o->acked && fclose(o->acked)) {
		cpi2_log(CPI2_LOG_ERR, "fleetsim", "acked file: %s", strerror(errno));
		left = left ? left : -EIO;
	}
	cpi2_codec_close(o->codec);
	free(o->topic);
	free(o);
	return left;
}
