/* cpi2-ibench: contentious kernels after iBench (Delimitrou and Kozyrakis, IISWC 2013) that
 * press on one shared resource each at a chosen intensity, and a probe that measures how much
 * that slows a sensitive workload. Everything it did is reported on exit, SIGTERM and SIGINT
 * included. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cpi2/log.h>
#include <cpi2/textfile.h>

#include "conf.h"
#include "icode.h"
#include "kernels.h"
#include "machine.h"
#include "plan.h"
#include "probe.h"
#include "report.h"

#define MODULE "ibench"

/* What every run reports besides its own figures. */
struct run_facts {
	const struct conf *conf;
	struct ibench_caches caches;
	char cache_dir[PATH_MAX];
	uint64_t mem_available;
	double setup_s, setup_cpu_s, run_s, run_cpu_s;
	const char *stopped_by;
};

/* One thread: a kernel's worker or the probe. */
struct thread {
	pthread_t id;
	struct ibench_run *run;
	struct ibench_worker worker;
	struct ibench_probe *probe;
	void *map;
	size_t map_bytes;
};

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static void *thread_main(void *arg)
{
	struct thread *t = arg;

	if (t->probe)
		ibench_probe_loop(t->probe, t->run);
	else
		ibench_worker_loop(&t->worker, t->run);
	return NULL;
}

/* The CPUs cpu .. cpu + n - 1 are all ones this process may run on. */
static int check_cpus(long cpu, long n, char *err, size_t errsz)
{
	cpu_set_t allowed;

	if (cpu < 0)
		return 0;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		snprintf(err, errsz, "sched_getaffinity: %s", strerror(errno));
		return -errno;
	}
	for (long c = cpu; c < cpu + n; c++)
		if (!CPU_ISSET((int)c, &allowed)) {
			snprintf(err, errsz,
				 "cpu %ld is not one this process may run on (%d allowed)", c,
				 CPU_COUNT(&allowed));
			return -EINVAL;
		}
	return 0;
}

/* Start n threads (pinned to cpu + i when cpu >= 0), wait for the deadline, a signal or all of
 * them to finish, stop and join them. Fills the run's time, CPU time and why it stopped. */
static int run_threads(struct thread *t, long n, long cpu, struct ibench_run *run,
		       sigset_t *signals, struct run_facts *f)
{
	double cpu0 = cpu_seconds();
	int64_t t0 = cpi2_clock_ns(CLOCK_MONOTONIC);
	long started = 0;
	int rc = 0;

	f->stopped_by = "duration";
	for (; started < n; started++) {
		pthread_attr_t attr;
		cpu_set_t set;

		pthread_attr_init(&attr);
		if (cpu >= 0) {
			CPU_ZERO(&set);
			CPU_SET((int)(cpu + started), &set);
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		t[started].run = run;
		rc = -pthread_create(&t[started].id, &attr, thread_main, &t[started]);
		pthread_attr_destroy(&attr);
		if (rc) {
			cpi2_log(CPI2_LOG_ERR, MODULE, "start thread %ld: %s", started,
				 strerror(-rc));
			f->stopped_by = "error";
			break;
		}
	}
	while (!rc && atomic_load(&run->finished) < n) {
		int64_t left = run->deadline_ns - cpi2_clock_ns(CLOCK_MONOTONIC);
		struct timespec wait = {0, 50000000};
		int sig;

		if (left <= 0)
			break;
		if (left < 50000000)
			wait.tv_nsec = (long)left;
		sig = sigtimedwait(signals, NULL, &wait);
		if (sig == SIGTERM || sig == SIGINT) {
			f->stopped_by = sig == SIGTERM ? "SIGTERM" : "SIGINT";
			cpi2_log(CPI2_LOG_INFO, MODULE, "%s: stopping", f->stopped_by);
			break;
		}
	}
	ibench_run_stop(run);
	for (long i = 0; i < started; i++)
		pthread_join(t[i].id, NULL);
	f->run_s = (double)(cpi2_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	f->run_cpu_s = cpu_seconds() - cpu0;
	return rc;
}

static void report_common(struct ibench_report *r, const struct run_facts *f)
{
	static const char *const levels[] = {"l1d", "l1i", "l2",
					     "llc"}; /* IBENCH_CACHE_* bit order */
	char defaulted[32] = "";

	for (unsigned i = 0; i < 4; i++)
		if (f->caches.defaulted & (1u << i))
			snprintf(defaulted + strlen(defaulted),
				 sizeof(defaulted) - strlen(defaulted), "%s%s",
				 defaulted[0] ? " " : "", levels[i]);
	ibench_report_int(r, "cpu", f->conf->cpu);
	ibench_report_u64(r, "cache_l1d_bytes", f->caches.l1d);
	ibench_report_u64(r, "cache_l1i_bytes", f->caches.l1i);
	ibench_report_u64(r, "cache_l2_bytes", f->caches.l2);
	ibench_report_u64(r, "cache_llc_bytes", f->caches.llc);
	ibench_report_int(r, "cache_llc_level", f->caches.llc_level);
	ibench_report_str(r, "cache_dir", f->cache_dir);
	ibench_report_str(r, "cache_defaulted", defaulted);
	ibench_report_u64(r, "mem_available_bytes", f->mem_available);
	ibench_report_num(r, "requested_duration_s", f->conf->duration_s);
	ibench_report_num(r, "duration_s", f->run_s);
	ibench_report_num(r, "cpu_s", f->run_cpu_s);
	ibench_report_num(r, "cpu_per_s", f->run_s > 0 ? f->run_cpu_s / f->run_s : 0);
	ibench_report_num(r, "setup_s", f->setup_s);
	ibench_report_num(r, "setup_cpu_s", f->setup_cpu_s);
	ibench_report_str(r, "stopped_by", f->stopped_by);
}

/* Give thread i of n its share [lo, hi) of lines. */
static void share(size_t lines, long i, long n, size_t *lo, size_t *hi)
{
	*lo = lines * (size_t)i / (size_t)n;
	*hi = lines * (size_t)(i + 1) / (size_t)n;
}

static int run_kernel(const struct conf *c, struct run_facts *f, sigset_t *signals)
{
	struct ibench_plan plan;
	struct ibench_run run;
	struct ibench_report r;
	struct thread *t;
	char err[512];
	uint64_t ops = 0, bytes = 0, resident = 0, lines;
	uint64_t *shared = NULL;
	double cpu0 = cpu_seconds();
	int64_t t0 = cpi2_clock_ns(CLOCK_MONOTONIC);
	int rc = 0;

	if (ibench_plan_make(c->kernel_id, c->intensity, c->period_ms * 1000, c->threads,
			     &f->caches, f->mem_available, c->memcap_fraction, &plan, err,
			     sizeof(err))) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "%s", err);
		return 2;
	}
	t = calloc((size_t)c->threads, sizeof(*t));
	if (!t) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "out of memory");
		return 1;
	}
	lines = plan.footprint / IBENCH_LINE;
	if (!plan.per_thread && plan.alloc_bytes) {
		/* memcap's pages are faulted in by the kernel itself, as it goes, a small page at a
		 * time */
		shared = ibench_map(plan.alloc_bytes, c->kernel_id == IBENCH_MEMCAP
							  ? 0
							  : IBENCH_MAP_TOUCH | IBENCH_MAP_HUGE);
		if (!shared) {
			cpi2_log(CPI2_LOG_ERR, MODULE, "map %llu bytes: %s",
				 (unsigned long long)plan.alloc_bytes, strerror(errno));
			rc = 1;
			goto out;
		}
	}
	for (long i = 0; i < c->threads; i++) {
		struct ibench_worker *w = &t[i].worker;
		size_t lo, hi;

		ibench_worker_init(w, &plan, (int)i);
		if (plan.per_thread && plan.footprint) {
			t[i].map_bytes = plan.footprint;
			t[i].map = ibench_map(plan.footprint, IBENCH_MAP_TOUCH | IBENCH_MAP_HUGE);
			if (!t[i].map) {
				cpi2_log(CPI2_LOG_ERR, MODULE, "map %llu bytes: %s",
					 (unsigned long long)plan.footprint, strerror(errno));
				rc = 1;
				goto out;
			}
			w->buf = t[i].map;
			w->lines = lines;
		} else if (c->kernel_id == IBENCH_LLC) {
			/* every thread over all of it: they may lose each other's increments, never
			 * read */
			w->buf = shared, w->lines = lines;
		} else if (c->kernel_id == IBENCH_MEMBW && shared) {
			share(lines / 2, i, c->threads, &lo, &hi);
			w->buf = shared + lo * IBENCH_LINE_WORDS;
			w->dst = shared + (lines / 2 + lo) * IBENCH_LINE_WORDS;
			w->lines = hi - lo;
		} else if (c->kernel_id == IBENCH_MEMCAP && shared) {
			share(lines, i, c->threads, &lo, &hi);
			w->buf = shared + lo * IBENCH_LINE_WORDS;
			w->lines = hi - lo;
		}
	}
	f->setup_s = (double)(cpi2_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	f->setup_cpu_s = cpu_seconds() - cpu0;
	cpi2_log(CPI2_LOG_INFO, MODULE,
		 "running %s at intensity %ld: %ld of every %ld us, footprint %llu bytes%s, %ld "
		 "thread(s), cpu %ld",
		 c->kernel, c->intensity, plan.work_us, plan.period_us,
		 (unsigned long long)plan.footprint, plan.per_thread ? " per thread" : "",
		 c->threads, c->cpu);
	rc = ibench_run_init(&run, (int64_t)(c->duration_s * 1e9));
	if (rc) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "run: %s", strerror(-rc));
		rc = 1;
		goto out;
	}
	rc = run_threads(t, c->threads, c->cpu, &run, signals, f) ? 1 : 0;
	ibench_run_destroy(&run);
	for (long i = 0; i < c->threads; i++) {
		ops += t[i].worker.ops;
		bytes += t[i].worker.bytes;
		resident += t[i].worker.visited * IBENCH_LINE;
	}

	ibench_report_begin(&r, stdout, !strcmp(c->report, "json"));
	ibench_report_str(&r, "kernel", c->kernel);
	ibench_report_int(&r, "intensity", c->intensity);
	ibench_report_int(&r, "threads", c->threads);
	ibench_report_num(&r, "duty_fraction", (double)c->intensity / 100);
	ibench_report_num(&r, "period_ms", (double)plan.period_us / 1000);
	ibench_report_num(&r, "work_ms_per_period", (double)plan.work_us / 1000);
	ibench_report_u64(&r, "footprint_bytes", plan.footprint);
	ibench_report_str(&r, "footprint_scope", plan.per_thread ? "per-thread" : "shared");
	ibench_report_u64(&r, "alloc_bytes", plan.alloc_bytes);
	if (c->kernel_id == IBENCH_L1I) {
		ibench_report_u64(&r, "functions", t[0].worker.l1i_funcs);
		ibench_report_u64(&r, "function_bytes", ibench_icode_stride());
	}
	if (c->kernel_id == IBENCH_MEMCAP)
		ibench_report_u64(&r, "resident_bytes", resident);
	ibench_report_u64(&r, "ops", ops);
	ibench_report_str(&r, "op", ibench_op_unit(c->kernel_id));
	ibench_report_u64(&r, "bytes_touched", bytes);
	report_common(&r, f);
	ibench_report_end(&r);
out:
	for (long i = 0; i < c->threads; i++)
		ibench_unmap(t[i].map, t[i].map_bytes);
	ibench_unmap(shared, plan.alloc_bytes);
	free(t);
	return rc;
}

static int run_probe(const struct conf *c, struct run_facts *f, sigset_t *signals)
{
	struct ibench_probe p;
	struct ibench_run run;
	struct ibench_report r;
	struct thread t = {.probe = &p};
	char err[512];
	double cpu0 = cpu_seconds(), sum = 0;
	int64_t t0 = cpi2_clock_ns(CLOCK_MONOTONIC);
	int rc;

	if (ibench_probe_plan(&p, c->probe_kind, (uint64_t)c->unit_ops, (uint64_t)c->units,
			      &f->caches, f->mem_available, err, sizeof(err))) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "%s", err);
		return 2;
	}
	rc = ibench_probe_setup(&p);
	if (rc) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "probe %s: %llu bytes: %s", c->kind,
			 (unsigned long long)p.footprint, strerror(-rc));
		ibench_probe_free(&p);
		return 1;
	}
	f->setup_s = (double)(cpi2_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	f->setup_cpu_s = cpu_seconds() - cpu0;
	cpi2_log(CPI2_LOG_INFO, MODULE,
		 "running probe %s: %llu ops per unit over %llu bytes, cpu %ld", c->kind,
		 (unsigned long long)p.unit_ops, (unsigned long long)p.footprint, c->cpu);
	rc = ibench_run_init(&run, (int64_t)(c->duration_s * 1e9));
	if (rc) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "run: %s", strerror(-rc));
		ibench_probe_free(&p);
		return 1;
	}
	rc = run_threads(&t, 1, c->cpu, &run, signals, f) ? 1 : 0;
	ibench_run_destroy(&run);
	if (c->units && p.units == (uint64_t)c->units)
		f->stopped_by = "units";
	for (uint64_t i = 0; i < p.units; i++)
		sum += (double)p.unit_ns[i];

	ibench_report_begin(&r, stdout, !strcmp(c->report, "json"));
	ibench_report_str(&r, "kernel", "probe");
	ibench_report_str(&r, "kind", c->kind);
	ibench_report_u64(&r, "footprint_bytes", p.footprint);
	ibench_report_u64(&r, "unit_ops", p.unit_ops);
	ibench_report_str(&r, "unit",
			  p.kind == IBENCH_PROBE_CPU ? "dependent integer multiply-adds"
						     : "dependent loads, random cycle");
	ibench_report_u64(&r, "units", p.units);
	ibench_report_num(&r, "mean_ns", p.units ? sum / (double)p.units : 0);
	ibench_report_u64(&r, "p50_ns", ibench_probe_percentile(&p, 50));
	ibench_report_u64(&r, "p99_ns", ibench_probe_percentile(&p, 99));
	ibench_report_u64(&r, "min_ns", p.units ? p.unit_ns[0] : 0);
	ibench_report_u64(&r, "max_ns", p.units ? p.unit_ns[p.units - 1] : 0);
	report_common(&r, f);
	ibench_report_end(&r);
	ibench_probe_free(&p);
	return rc;
}

int main(int argc, char **argv)
{
	struct conf conf;
	struct run_facts f = {.conf = &conf};
	char err[1024], text[8192];
	sigset_t signals;
	int rc;

	/* blocked in every thread from the start: main waits for them with sigtimedwait, so a
	 * signal during setup still ends in a report */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);

	rc = conf_parse(&conf, argc, argv, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc < 0) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "%s", err);
		return 2;
	}
	if (check_cpus(conf.cpu, conf.kernel_id >= 0 ? conf.threads : 1, err, sizeof(err))) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "%s", err);
		return 2;
	}
	if (conf.cache_dir[0])
		snprintf(f.cache_dir, sizeof(f.cache_dir), "%s", conf.cache_dir);
	else
		snprintf(f.cache_dir, sizeof(f.cache_dir), "/sys/devices/system/cpu/cpu%ld/cache",
			 conf.cpu >= 0 ? conf.cpu : 0);
	if (ibench_caches_read(f.cache_dir, &f.caches, err, sizeof(err)))
		cpi2_log(CPI2_LOG_WARN, MODULE, "cache sizes: %s", err);
	/* a file longer than text (-EFBIG) still has MemAvailable near its top */
	rc = cpi2_read_text(conf.meminfo, text, sizeof(text));
	if (rc < 0 && rc != -EFBIG)
		cpi2_log(CPI2_LOG_WARN, MODULE, "read %s: %s; sizes are not checked against memory",
			 conf.meminfo, strerror(-rc));
	else if (ibench_parse_meminfo(text, &f.mem_available) != 0)
		cpi2_log(CPI2_LOG_WARN, MODULE,
			 "%s: no MemAvailable line; sizes are not checked against memory",
			 conf.meminfo);
	return conf.kernel_id >= 0 ? run_kernel(&conf, &f, &signals)
				   : run_probe(&conf, &f, &signals);
}
