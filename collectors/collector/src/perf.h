/* perf: per-cgroup counting with perf_event_open(PERF_FLAG_PID_CGROUP), one event group
 * (cycles + instructions, or one software event) per cgroup per online CPU, and the arithmetic
 * that turns the groups' counts into a sample (multiplexing scale, CPI). */
#ifndef COLLECTOR_PERF_H
#define COLLECTOR_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define PERF_MAX_EVENTS 3

/* What is counted: events[0] goes into the sample's cycles, events[1] (if any) instructions,
 * events[llc] (if llc > 0) last-level cache misses. */
struct perf_spec {
	int n_events;
	uint32_t type[PERF_MAX_EVENTS];
	uint64_t config[PERF_MAX_EVENTS];
	const char *name[PERF_MAX_EVENTS];
	int counter_source; /* CPI2_COUNTER_SOURCE_* */
	int llc;	    /* index of the LLC misses event, or 0 when not counted */
};

/* One group's read-out on one CPU (PERF_FORMAT_GROUP with both times). */
struct perf_reading {
	uint64_t time_enabled, time_running;
	uint64_t value[PERF_MAX_EVENTS];
};

/* A cgroup's counts over a window, summed over CPUs, scaled for multiplexing. */
struct perf_counts {
	int64_t cycles, instructions;
	double time_running_ratio; /* sum running / sum enabled; 1 when never enabled */
	bool has_cpi;
	double cpi;
	bool has_llc_misses, has_llc_mpki;
	int64_t llc_misses;
	double llc_mpki; /* llc_misses per 1000 instructions */
};

/* Events by name: "hardware" (ref-cycles or cycles, with instructions), or one software
 * event: task-clock, cpu-clock, context-switches, cpu-migrations, page-faults. Returns 0 or
 * -EINVAL with the names it knows. */
int perf_spec_parse(const char *events, struct perf_spec *spec, char *err, size_t errsz);

/* With "hardware": count last-level cache misses too (the generic cache-misses event) as the
 * group's third event. Returns 0, or -EINVAL for a software spec. */
int perf_spec_add_llc(struct perf_spec *spec);

/* Check the events can be opened here (on this process, every CPU). For "hardware" picks
 * ref-cycles when the CPU has it, else cycles; LLC misses the PMU
 * cannot count are left out (spec->llc becomes 0) and only that is not an error. Returns 0 or
 * -errno with a reason that says what is missing. */
int perf_spec_probe(struct perf_spec *spec, char *err, size_t errsz);

/* Open one group for the cgroup directory fd on each of the ncpu CPUs, counting at once when
 * enabled, else disabled; fds gets ncpu * n_events descriptors (leader first). Returns 0 or
 * -errno (all closed again). */
int perf_group_open(const struct perf_spec *spec, int cgroup_fd, const int *cpus, int ncpu,
		    bool enabled, int *fds);

/* Enable (on) or disable every group whose leader is in fds. */
void perf_group_enable(const struct perf_spec *spec, const int *fds, int ncpu, bool on);

/* Read each CPU's group into readings[ncpu]. Returns 0 or -errno. */
int perf_group_read(const struct perf_spec *spec, const int *fds, int ncpu,
		    struct perf_reading *readings);

/* What was counted since base: r[c] -= base[c], times and values, for each of the ncpu CPUs
 * (the counters only grow while the descriptors live). */
void perf_readings_sub(const struct perf_spec *spec, struct perf_reading *r,
		       const struct perf_reading *base, int ncpu);

/* Close the descriptors (the ones that are >= 0) and set them to -1. */
void perf_group_close(const struct perf_spec *spec, int *fds, int ncpu);

/* Sum and scale per-CPU readings: each CPU's values times enabled/running (a CPU where the
 * group never ran contributes nothing); CPI = cycles / instructions when the source has CPI and
 * instructions > 0; LLC misses and their rate per thousand
 * instructions where counted (the rate needs instructions > 0). */
void perf_counts_compute(const struct perf_spec *spec, const struct perf_reading *r, int ncpu,
			 struct perf_counts *out);

#endif
