/* cpi2-lab-victim: the lab's latency-sensitive task. Requests arrive at a set rate (one every
 * 1/rate seconds from the start, open loop: a request that arrives while another is served
 * waits, so queueing shows as latency); each does a fixed amount of work, a dependent
 * multiply-add chain (CPU) and a pointer chase through a buffer sized from this machine's
 * caches (cache-sensitive); its latency from arrival to completion is recorded. At the end
 * (duration, SIGTERM or SIGINT) it reports the latency percentiles. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cpi2/clock.h>
#include <cpi2/log.h>
#include <cpi2/signals.h>
#include <cpi2/stats.h>

#include "common.h"
#include "conf.h"
#include "machine.h"
#include "probe.h"
#include "report.h"

#define MODULE "victim"
#define MAX_KEPT (1u << 26) /* latencies kept in memory for the percentiles */

/* the latencies and service times of the requests so far, in ns */
struct record {
	uint64_t *latency, *service;
	size_t n, cap;
	uint64_t dropped; /* beyond MAX_KEPT or out of memory: in the file only */
};

static int record_add(struct record *r, uint64_t latency, uint64_t service)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 4096;
		uint64_t *l, *s;

		if (cap > MAX_KEPT || !(l = realloc(r->latency, cap * sizeof(*l)))) {
			r->dropped++;
			return -ENOMEM;
		}
		r->latency = l;
		if (!(s = realloc(r->service, cap * sizeof(*s)))) {
			r->dropped++;
			return -ENOMEM;
		}
		r->service = s;
		r->cap = cap;
	}
	r->latency[r->n] = latency;
	r->service[r->n++] = service;
	return 0;
}

/* sleep until the monotonic time t (ns); false when a stop signal came first */
static bool sleep_until(int64_t t)
{
	struct timespec ts = {t / 1000000000, t % 1000000000};

	while (!cpi2_signal_stop) {
		int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (rc == 0)
			return !cpi2_signal_stop;
		if (rc != EINTR)
			return false;
	}
	return false;
}

static void report(const struct victim_conf *conf, const struct ibench_probe *cache,
		   struct record *rec, uint64_t late, double run_s, double cpu_s,
		   const char *stopped_by)
{
	struct ibench_report r;
	size_t n = rec->n;

	ibench_report_begin(&r, stdout, !strcmp(conf->report, "json"));
	ibench_report_str(&r, "program", "cpi2-lab-victim");
	ibench_report_num(&r, "rate_hz", conf->rate);
	ibench_report_u64(&r, "requests", (uint64_t)n + rec->dropped);
	ibench_report_num(&r, "achieved_rate_hz", run_s > 0 ? (double)n / run_s : 0);
	ibench_report_u64(&r, "late_requests", late);
	ibench_report_int(&r, "cpu_ops", conf->cpu_ops);
	ibench_report_int(&r, "cache_loads", conf->cache_loads);
	ibench_report_u64(&r, "cache_bytes", cache->footprint);
	/* percentiles sort the arrays: service first, latency last */
	ibench_report_num(&r, "service_p50_us", cpi2_percentile_u64(rec->service, n, 50) / 1e3);
	ibench_report_num(&r, "service_p99_us", cpi2_percentile_u64(rec->service, n, 99) / 1e3);
	ibench_report_num(&r, "p50_us", cpi2_percentile_u64(rec->latency, n, 50) / 1e3);
	ibench_report_num(&r, "p90_us", cpi2_percentile_u64(rec->latency, n, 90) / 1e3);
	ibench_report_num(&r, "p99_us", cpi2_percentile_u64(rec->latency, n, 99) / 1e3);
	ibench_report_num(&r, "max_us", n ? rec->latency[n - 1] / 1e3 : 0);
	ibench_report_u64(&r, "not_kept", rec->dropped);
	ibench_report_num(&r, "run_s", run_s);
	ibench_report_num(&r, "cpu_s", cpu_s);
	ibench_report_str(&r, "out", conf->out);
	ibench_report_str(&r, "stopped_by", stopped_by);
	ibench_report_end(&r);
}

int main(int argc, char **argv)
{
	static struct victim_conf conf;
	struct ibench_caches caches;
	struct ibench_probe cpu, cache;
	struct record rec = {0};
	char err[1024], cache_dir[PATH_MAX];
	FILE *out = NULL;
	uint64_t late = 0;
	int rc;

	rc = victim_conf_parse(&conf, argc, argv, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "%s", err);
		return 2;
	}
	if (lab_pin(MODULE, conf.cpu))
		return 2;
	if (conf.cache_dir[0])
		snprintf(cache_dir, sizeof(cache_dir), "%s", conf.cache_dir);
	else
		snprintf(cache_dir, sizeof(cache_dir), "/sys/devices/system/cpu/cpu%ld/cache",
			 conf.cpu >= 0 ? conf.cpu : 0);
	if (ibench_caches_read(cache_dir, &caches, err, sizeof(err)) ||
	    ibench_probe_plan(&cpu, IBENCH_PROBE_CPU, (uint64_t)conf.cpu_ops, 0, &caches, 0, err,
			      sizeof(err)) ||
	    ibench_probe_plan(&cache, IBENCH_PROBE_CACHE, (uint64_t)conf.cache_loads, 0, &caches, 0,
			      err, sizeof(err))) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "%s", err);
		return 2;
	}
	if (ibench_probe_setup(&cpu) || ibench_probe_setup(&cache)) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "out of memory for the work buffers");
		return 1;
	}
	/* a probe's unit_ops 0 means its default: no work of that kind is no unit at all */
	bool do_cpu = conf.cpu_ops > 0, do_cache = conf.cache_loads > 0;

	if (conf.out[0]) {
		if (!(out = fopen(conf.out, "we"))) {
			cpi2_log(CPI2_LOG_ERR, MODULE, "open %s: %s", conf.out, strerror(errno));
			return 2;
		}
		fputs("arrival_us,latency_us,service_us\n", out);
	}
	if ((rc = cpi2_signal_install())) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "signal handlers: %s", strerror(-rc));
		return 1;
	}
	double cpu0 = lab_cpu_seconds(), interval_ns = 1e9 / conf.rate;
	int64_t t0 = cpi2_clock_ns(CLOCK_MONOTONIC), end_ns = t0 + (int64_t)(conf.duration_s * 1e9);
	const char *stopped_by = "duration";

	for (uint64_t k = 0;; k++) {
		int64_t arrival = t0 + (int64_t)((double)k * interval_ns), start, done;

		if (conf.duration_s > 0 && arrival >= end_ns)
			break;
		if (cpi2_signal_stop ||
		    (cpi2_clock_ns(CLOCK_MONOTONIC) < arrival && !sleep_until(arrival))) {
			stopped_by = "signal";
			break;
		}
		start = cpi2_clock_ns(CLOCK_MONOTONIC);
		if (start - arrival > (int64_t)interval_ns)
			late++; /* it waited longer than the gap between arrivals */
		if (do_cpu)
			ibench_probe_unit(&cpu);
		if (do_cache)
			ibench_probe_unit(&cache);
		done = cpi2_clock_ns(CLOCK_MONOTONIC);
		record_add(&rec, (uint64_t)(done - arrival), (uint64_t)(done - start));
		if (out)
			fprintf(out, "%lld,%lld,%lld\n", (long long)((arrival - t0) / 1000),
				(long long)((done - arrival) / 1000),
				(long long)((done - start) / 1000));
	}
	double run_s = (double)(cpi2_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;

	if (out && fclose(out)) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "write %s: %s", conf.out, strerror(errno));
		rc = 1;
	}
	/* the chains' results, so the compiler keeps the work */
	cpi2_log(CPI2_LOG_DEBUG, MODULE, "chains ended at %llx %p", (unsigned long long)cpu.x,
		 (void *)cache.cursor);
	report(&conf, &cache, &rec, late, run_s, lab_cpu_seconds() - cpu0, stopped_by);
	ibench_probe_free(&cpu);
	ibench_probe_free(&cache);
	free(rec.latency);
	free(rec.service);
	return rc;
}
