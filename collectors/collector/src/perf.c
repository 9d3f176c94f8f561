/* perf: see perf.h. */
#include "perf.h"

#include <cpi2/sample.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
	const char *name;
	uint64_t config;
} software[] = {{"task-clock", PERF_COUNT_SW_TASK_CLOCK},
		{"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
		{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
		{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
		{"page-faults", PERF_COUNT_SW_PAGE_FAULTS}};

int perf_spec_parse(const char *events, struct perf_spec *spec, char *err, size_t errsz)
{
	memset(spec, 0, sizeof(*spec));
	if (!strcmp(events, "hardware")) {
		*spec =
		    (struct perf_spec){2,
				       {PERF_TYPE_HARDWARE, PERF_TYPE_HARDWARE},
				       {PERF_COUNT_HW_REF_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS},
				       {"ref-cycles", "instructions"},
				       CPI2_COUNTER_SOURCE_REF_CYCLES,
				       0};
		return 0;
	}
	for (size_t i = 0; i < sizeof(software) / sizeof(software[0]); i++) {
		if (!strcmp(events, software[i].name)) {
			*spec = (struct perf_spec){1,
						   {PERF_TYPE_SOFTWARE},
						   {software[i].config},
						   {software[i].name},
						   CPI2_COUNTER_SOURCE_SOFTWARE,
						   0};
			return 0;
		}
	}
	snprintf(err, errsz,
		 "events '%s': expected hardware, task-clock, cpu-clock, context-switches, "
		 "cpu-migrations "
		 "or page-faults",
		 events);
	return -EINVAL;
}

int perf_spec_add_llc(struct perf_spec *spec)
{
	if (spec->counter_source != CPI2_COUNTER_SOURCE_REF_CYCLES &&
	    spec->counter_source != CPI2_COUNTER_SOURCE_CYCLES)
		return -EINVAL;
	spec->llc = spec->n_events;
	spec->type[spec->llc] = PERF_TYPE_HARDWARE;
	spec->config[spec->llc] = PERF_COUNT_HW_CACHE_MISSES;
	spec->name[spec->llc] = "cache-misses";
	spec->n_events++;
	return 0;
}

static int open_event(const struct perf_spec *spec, int i, pid_t pid, int cpu, int group_fd,
		      unsigned long flags, bool enabled)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = spec->type[i];
	attr.config = spec->config[i];
	attr.disabled = i == 0 && !enabled; /* members follow their leader */
	attr.read_format =
	    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd,
			    flags | PERF_FLAG_FD_CLOEXEC);
}

/* open the spec's group on this process (any CPU) and close it again */
static int try_spec(const struct perf_spec *spec, int *failed)
{
	int fds[PERF_MAX_EVENTS], rc = 0, i;

	for (i = 0; i < spec->n_events; i++) {
		fds[i] = open_event(spec, i, 0, -1, i ? fds[0] : -1, 0, false);
		if (fds[i] < 0) {
			rc = -errno;
			*failed = i;
			break;
		}
	}
	while (--i >= 0)
		close(fds[i]);
	return rc;
}

int perf_spec_probe(struct perf_spec *spec, char *err, size_t errsz)
{
	int failed = 0, rc = try_spec(spec, &failed);

	if (rc && spec->counter_source == CPI2_COUNTER_SOURCE_REF_CYCLES && failed == 0) {
		spec->config[0] =
		    PERF_COUNT_HW_CPU_CYCLES; /* no ref-cycles on this CPU: core cycles */
		spec->name[0] = "cycles";
		spec->counter_source = CPI2_COUNTER_SOURCE_CYCLES;
		rc = try_spec(spec, &failed);
	}
	if (rc && spec->llc && failed == spec->llc) {
		spec->n_events = spec->llc; /* no LLC misses on this PMU: CPI without them */
		spec->llc = 0;
		rc = try_spec(spec, &failed);
	}
	if (rc)
		snprintf(err, errsz, "perf event %s cannot be counted here: %s%s",
			 spec->name[failed], strerror(-rc),
			 spec->type[failed] == PERF_TYPE_HARDWARE
			     ? " (no hardware performance counters: a VM without a virtual PMU?)"
			     : "");
	return rc;
}

int perf_group_open(const struct perf_spec *spec, int cgroup_fd, const int *cpus, int ncpu,
		    bool enabled, int *fds)
{
	int rc = 0;

	for (int i = 0; i < ncpu * spec->n_events; i++)
		fds[i] = -1;
	for (int c = 0; c < ncpu && !rc; c++) {
		int *g = fds + c * spec->n_events;

		for (int e = 0; e < spec->n_events; e++) {
			g[e] = open_event(spec, e, cgroup_fd, cpus[c], e ? g[0] : -1,
					  PERF_FLAG_PID_CGROUP, enabled);
			if (g[e] < 0) {
				rc = -errno;
				break;
			}
		}
	}
	if (rc)
		perf_group_close(spec, fds, ncpu);
	return rc;
}

void perf_group_enable(const struct perf_spec *spec, const int *fds, int ncpu, bool on)
{
	for (int c = 0; c < ncpu; c++)
		if (fds[c * spec->n_events] >= 0)
			ioctl(fds[c * spec->n_events],
			      on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE,
			      PERF_IOC_FLAG_GROUP);
}

int perf_group_read(const struct perf_spec *spec, const int *fds, int ncpu,
		    struct perf_reading *readings)
{
	/* nr, time_enabled, time_running, values[nr] */
	uint64_t buf[3 + PERF_MAX_EVENTS];
	size_t want = (3 + (size_t)spec->n_events) * sizeof(uint64_t);

	for (int c = 0; c < ncpu; c++) {
		ssize_t n = read(fds[c * spec->n_events], buf, want);

		if (n < 0)
			return -errno;
		if ((size_t)n != want || buf[0] != (uint64_t)spec->n_events)
			return -EIO;
		readings[c].time_enabled = buf[1];
		readings[c].time_running = buf[2];
		for (int e = 0; e < spec->n_events; e++)
			readings[c].value[e] = buf[3 + e];
	}
	return 0;
}

void perf_readings_sub(const struct perf_spec *spec, struct perf_reading *r,
		       const struct perf_reading *base, int ncpu)
{
	for (int c = 0; c < ncpu; c++) {
		r[c].time_enabled -= base[c].time_enabled;
		r[c].time_running -= base[c].time_running;
		for (int e = 0; e < spec->n_events; e++)
			r[c].value[e] -= base[c].value[e];
	}
}

void perf_group_close(const struct perf_spec *spec, int *fds, int ncpu)
{
	/* members before their leader */
	for (int i = ncpu * spec->n_events - 1; i >= 0; i--) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

void perf_counts_compute(const struct perf_spec *spec, const struct perf_reading *r, int ncpu,
			 struct perf_counts *out)
{
	double sum[PERF_MAX_EVENTS] = {0}, enabled = 0, running = 0;

	for (int c = 0; c < ncpu; c++) {
		enabled += (double)r[c].time_enabled;
		running += (double)r[c].time_running;
		if (r[c].time_running == 0)
			continue;
		double scale = (double)r[c].time_enabled / (double)r[c].time_running;

		for (int e = 0; e < spec->n_events; e++)
			sum[e] += (double)r[c].value[e] * scale;
	}
	for (int e = 0; e < PERF_MAX_EVENTS; e++)
		if (sum[e] >
		    9.2e18) /* beyond a long: nonsense from a broken counter, kept in range */
			sum[e] = 9.2e18;
	out->cycles = (int64_t)(sum[0] + 0.5);
	out->instructions = spec->n_events > 1 ? (int64_t)(sum[1] + 0.5) : 0;
	out->time_running_ratio = enabled > 0 ? running / enabled : 1.0;
	out->has_cpi = (spec->counter_source == CPI2_COUNTER_SOURCE_REF_CYCLES ||
			spec->counter_source == CPI2_COUNTER_SOURCE_CYCLES) &&
		       out->instructions > 0;
	out->cpi = out->has_cpi ? (double)out->cycles / (double)out->instructions : 0.0;
	out->has_llc_misses = spec->llc > 0 && spec->llc < spec->n_events;
	out->llc_misses = out->has_llc_misses ? (int64_t)(sum[spec->llc] + 0.5) : 0;
	out->has_llc_mpki = out->has_llc_misses && out->instructions > 0;
	out->llc_mpki =
	    out->has_llc_mpki ? 1000.0 * (double)out->llc_misses / (double)out->instructions : 0.0;
}
