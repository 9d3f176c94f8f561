/* sample: the CpiSample record's fast path, for the collector and the fleet simulator.
 * cpi2_sample_encode writes the Avro single-object encoding of the current CpiSample schema
 * directly (no allocation); tests prove it byte-identical to the generic codec and to the
 * golden vectors, and fail if the schema's fields change without this encoder. */
#ifndef CPI2_SAMPLE_H
#define CPI2_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cpi2/names.h>

/* task_class and counter_source hold symbol indexes of TaskClass and CounterSource:
 * CPI2_TASK_CLASS_* and CPI2_COUNTER_SOURCE_* of cpi2/names.h. */

struct cpi2_sample {
	const char *host, *task, *job, *task_id, *platform;
	int task_class;
	bool is_protected;
	int64_t window_start_us, window_us, cycles, instructions;
	int counter_source;
	double time_running_ratio, cpu_usage;
	bool has_cpi;
	double cpi;
	bool has_llc_misses;
	int64_t llc_misses;
	bool has_numa_score;
	double numa_score;
	bool has_threads;
	int32_t threads;
	/* the signals without a PMU (and LLC MPKI with one); each absent one is null */
	bool has_cpu_pressure;
	double cpu_pressure; /* share of the window, 0-1 */
	bool has_memory_pressure;
	double memory_pressure; /* "some", share of the window */
	bool has_memory_pressure_full;
	double memory_pressure_full; /* "full", share of the window */
	bool has_llc_occupancy_bytes;
	int64_t llc_occupancy_bytes;
	bool has_memory_bandwidth;
	double memory_bandwidth_bytes_per_s;
	bool has_llc_mpki;
	double llc_mpki;
	bool has_host_cpus;
	int32_t host_cpus; /* CPUs online on the host: its utilisation's denominator */
	/* the service's own signals, from its metrics endpoint (null where none is configured) */
	bool has_cpu_per_op;
	double cpu_per_op; /* CPU seconds per unit of work */
	bool has_latency;
	double latency; /* in the unit of the service's latency metric */
};

/* Encode s as C3 01 + fingerprint + payload into buf. Returns 0, -ENOSPC if bufsz is too
 * small, or -EINVAL for an enum index out of range or a NULL string. */
int cpi2_sample_encode(const struct cpi2_sample *s, void *buf, size_t bufsz, size_t *len);

/* One JSON object (no newline) with the schema's field names; null for absent optionals.
 * Returns the length, or -ENOSPC. */
int cpi2_sample_to_json(const struct cpi2_sample *s, char *buf, size_t bufsz);

#endif
