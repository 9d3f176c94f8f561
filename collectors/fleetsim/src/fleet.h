/* The simulated fleet: hosts, tasks placed on them, and one sampling period at a time of CPI
 * samples, as each host's collector would publish them. */
#ifndef FLEETSIM_FLEET_H
#define FLEETSIM_FLEET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "scenario.h"

#define FLEET_PERIOD_US (60 * 1000000LL) /* one sample per task per minute (paper 3.1) */
#define FLEET_WINDOW_US (10 * 1000000LL) /* counted over 10 s */

/* One sample; field names and meanings as in libcpi2's struct cpi2_sample. */
struct fleet_sample {
	const char *host, *task, *job, *task_id, *platform;
	int task_class; /* enum cpi2_task_class */
	bool is_protected;
	int64_t window_start_us, window_us, cycles, instructions;
	double cpu_usage;
	bool has_cpi;
	double cpi;
	int64_t llc_misses;
	int32_t threads;
	int32_t host_cpus;
	bool has_numa_score; /* on hosts with numa_nodes (numa_model.h) */
	double numa_score;
	bool has_cpu_per_op, has_latency; /* jobs with a metrics endpoint (cpu_per_op, latency) */
	double cpu_per_op, latency;
};

/* Receives each sample; a non-zero return stops the period and is returned by fleet_step. */
typedef int (*fleet_emit)(void *ctx, const struct fleet_sample *s);

struct fleet;

/* Builds the fleet of a scenario (which must outlive it). Simulated time starts at start_us;
 * scripted events are relative to start_us + the scenario's warmup. 0 or -errno. */
int fleet_new(struct fleet **out, const struct scenario *s, uint64_t seed, int64_t start_us,
	      char *err, size_t errsz);
void fleet_delete(struct fleet *f);

/* Writes the ground truth known in advance (scenario line, antagonisms, self-inflicted) and
 * keeps f to append cap lines. end_us is the end of the simulation. */
void fleet_write_truth(struct fleet *f, FILE *truth, int64_t end_us);

/* Produces every task's sample for the current period, then moves to the next period.
 * Returns the number of samples, or the emitter's non-zero result. */
long fleet_step(struct fleet *f, fleet_emit emit, void *ctx);

/* Start of the current period, microseconds since the epoch (simulated). */
int64_t fleet_now_us(const struct fleet *f);
int64_t fleet_warmup_end_us(const struct fleet *f);
int fleet_ntasks(const struct fleet *f);
int fleet_nhosts(const struct fleet *f);
/* "<host>/<task cgroup path>": the task's folder under a cgroup root. */
const char *fleet_task_dir(const struct fleet *f, int task);
/* Caps a task's CPU usage (CPU-sec/sec; INFINITY lifts the cap) from the next period on. */
void fleet_set_cap(struct fleet *f, int task, double cap);
/* Number of tasks under a cap now. */
int fleet_ncapped(const struct fleet *f);

/* Kubernetes hosts ([hosts] kubernetes = cgroupfs|systemd): each task is a pod of its job's
 * Deployment in the job's namespace, with the kubelet's cgroup for the driver and the job's
 * class as QoS class. Number of such pods. */
int fleet_npods(const struct fleet *f);
/* Writes one JSON line per pod: node, namespace, pod, deployment, qos, protected, cgroup. */
void fleet_write_pods(const struct fleet *f, FILE *out);
/* Maps the pods as the collector of each Kubernetes host H would, with the labels file
 * labels_dir/H (as cpi2-k8s-identity writes it for node H; NULL: none) and the collector's
 * built-in rules: a pod the file names (by TASK_ID = pod name) gets that entry's cgroup, job,
 * task id, class and protection; one it does not name is logged and never published. Call
 * before fleet_task_dir is used. Returns the number of pods published, or -errno with a
 * reason (a malformed file, an entry whose cgroup is not of the host's driver). */
int fleet_map_pods(struct fleet *f, const char *labels_dir, char *err, size_t errsz);

#endif
