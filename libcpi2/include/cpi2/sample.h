/* sample: the CpiSample record's fast path, for the collector and the fleet simulator.
 * cpi2_sample_encode writes the Avro single-object encoding of the current CpiSample schema
 * directly (no allocation); tests prove it byte-identical to the generic codec and to the
 * golden vectors, and fail if the schema's fields change without this encoder. */
#ifndef CPI2_SAMPLE_H
#define CPI2_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Symbol indexes of the TaskClass and CounterSource enums of schemas/avro. */
enum {
	CPI2_TC_LATENCY_SENSITIVE = 0,
	CPI2_TC_BATCH = 1,
	CPI2_TC_BEST_EFFORT = 2,
	CPI2_TC_UNKNOWN = 3
};
enum { CPI2_CS_REF_CYCLES = 0, CPI2_CS_CYCLES = 1, CPI2_CS_SOFTWARE = 2, CPI2_CS_SIMULATED = 3 };

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
};

/* The field names, in the order cpi2_sample_encode writes them (NULL-terminated). */
extern const char *const cpi2_sample_fields[];

/* Encode s as C3 01 + fingerprint + payload into buf. Returns 0, -ENOSPC if bufsz is too
 * small, or -EINVAL for an enum index out of range or a NULL string. */
int cpi2_sample_encode(const struct cpi2_sample *s, void *buf, size_t bufsz, size_t *len);

/* One JSON object (no newline) with the schema's field names; null for absent optionals.
 * Returns the length, or -ENOSPC. */
int cpi2_sample_to_json(const struct cpi2_sample *s, char *buf, size_t bufsz);

#endif
