/* Scenario files: platforms, host groups, jobs and their placement, scripted events.
 * The format is documented in scenarios/README.md. Parsing never aborts: every error names
 * the file and line. */
#ifndef FLEETSIM_SCENARIO_H
#define FLEETSIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cpi2/names.h>

#include "numa_model.h"

#define SCN_NAME_MAX 64
#define SCN_LABEL_MAX 160
#define SCN_EVENT_VICTIMS_MAX 16

/* gap: the task runs but publishes nothing; exit: the task ends for good (no more samples, no
 * more load on its host); shift: a whole job's CPI (and CPU) changes, as with a new release or a
 * new mix of requests; move: the task is restarted on another host */
enum scn_event_kind {
	SCN_EV_ANTAGONIST,
	SCN_EV_SELF_INFLICTED,
	SCN_EV_GAP,
	SCN_EV_EXIT,
	SCN_EV_NUMA,
	SCN_EV_SHIFT,
	SCN_EV_MOVE
};
/* a host group's tasks: the simulator's jobs/<job>/<index> folders, or Kubernetes pods with the
 * kubelet's cgroups under either cgroup driver */
enum scn_kubernetes { SCN_K8S_NONE, SCN_K8S_CGROUPFS, SCN_K8S_SYSTEMD };
/* bursts: on and off at random (a two-state Markov chain of the task's own), on for duty x
 * period and off for the rest on average */
enum scn_pattern { SCN_PAT_STEADY, SCN_PAT_SQUARE, SCN_PAT_SINE, SCN_PAT_RAMP, SCN_PAT_BURSTS };

struct scn_platform {
	char name[SCN_NAME_MAX];
	char label[SCN_LABEL_MAX]; /* what samples carry as platform (vendor/family/model/name) */
	double ghz;		   /* reference clock: cycles per second of CPU time / 1e9 */
	double cpi_scale;	   /* every job's CPI on this platform is multiplied by this */
	int line;
};

struct scn_hosts {
	char name[SCN_NAME_MAX]; /* count 1: the host's name; else hosts are NAME-000, NAME-001, ...
				  */
	char platform_name[SCN_NAME_MAX];
	int platform; /* index into platforms, resolved */
	int count;
	int cpus;	/* CPUs of each host: samples' host_cpus */
	int kubernetes; /* enum scn_kubernetes */
	int first_host; /* index of the group's first host in the fleet, resolved */
	double skew_s;	/* the hosts' clock: window starts are off by this much (signed) */
	double late_s;	/* the hosts' samples are published this much later (whole periods) */
	struct numa_host_conf numa; /* NUMA nodes (numa_model.h) */
	int line;
};

struct scn_placement {
	char target[SCN_NAME_MAX]; /* a [hosts] name (round robin over it) or one host's name */
	int count;
	int line;
};

struct scn_job {
	char name[SCN_NAME_MAX];
	char k8s_namespace[SCN_NAME_MAX]; /* on Kubernetes hosts: a Deployment of this namespace */
	int task_class;			  /* enum cpi2_task_class */
	bool is_protected;
	double cpi, cpi_sd, shape, diurnal_cv;
	double cpu, cpu_jitter; /* mean CPU-sec/sec per task and its relative noise */
	double cpu_spread;	/* relative spread of each task's own level around cpu */
	double missing;		/* probability that a sample is not published */
	double sensitivity;	/* relative CPI rise per unit of neighbours' pressure x CPU */
	double pressure;	/* interference this job's tasks cause per CPU-sec/sec they use */
	int threads;
	double mpki; /* LLC misses per 1000 instructions without interference */
	/* a service's own signals without interference (0: the job has no metrics endpoint, its
	 * samples carry none): CPU seconds per unit of work, and its latency; both rise as its CPI
	 * does (the same work takes that many more cycles) */
	double cpu_per_op, latency;
	double
	    lame_duck_s; /* after a cap is lifted: this long at 1/4 CPU and threads (paper 6.2) */
	/* > 0: a task exits a period after its cap number exit_on_cap (paper 6.2 case 6) */
	int exit_on_cap;
	/* > 0: its tasks burst to this CPU at random (pattern bursts), burst_period and burst_duty
	 */
	double burst_cpu, burst_period_s, burst_duty;
	double cpu_diurnal; /* relative amplitude of a daily cycle of its tasks' CPU demand */
	double peak_s;	    /* its daily cycles peak this long after the warmup; < 0: at random */
	int count; /* > 1: a template expanded into count jobs, "{i}" in the name numbers them */
	struct numa_job_conf numa; /* CPI rise when its memory is remote (numa_model.h) */
	struct scn_placement *place;
	int nplace;
	int ntasks; /* sum of the placement counts */
	int line;
};

struct scn_event {
	int kind;			 /* enum scn_event_kind */
	char task_ref[2 * SCN_NAME_MAX]; /* "job/index" as written */
	char job_ref[SCN_NAME_MAX];	 /* shift: the job, as written */
	int job, task_index;		 /* resolved; task_index -1 for a job's event (shift) */
	double start_s, end_s;		 /* relative to the end of the warmup */
	double cpu, cpu_low; /* high and low CPU demand of the pattern; cpu_low < 0: job's */
	int pattern;
	double period_s, phase_s;
	double duty;	  /* square: the share of the period at cpu */
	double pressure;  /* < 0: the job's own */
	double self_gain; /* self-inflicted: relative CPI rise at cpu_low */
	/* antagonist: its interference reaches only these tasks of its host ("job/index"); none:
	 * every task of the host */
	char victim_ref[SCN_EVENT_VICTIMS_MAX][2 * SCN_NAME_MAX];
	int victim_job[SCN_EVENT_VICTIMS_MAX], victim_index[SCN_EVENT_VICTIMS_MAX]; /* resolved */
	int nvictims;
	struct numa_event_conf numa; /* kind numa: where threads and memory move */
	/* shift: the job's CPI and CPU demand are multiplied by these; its tasks take the change
	 * one after another over rollout_s, in an order drawn from the seed */
	double cpi_factor, cpu_factor, rollout_s;
	char host_ref[2 * SCN_NAME_MAX]; /* move: the host the task runs on from start */
	int host;			 /* resolved: its index in the fleet */
	int line;
};

/* [task JOB/INDEX]: one task's own CPU level, jitter, and level during the warm-up; < 0: the
 * job's */
struct scn_task {
	char ref[2 * SCN_NAME_MAX];
	int job, index; /* resolved */
	double cpu, cpu_jitter, warmup_cpu;
	int line;
};

struct scenario {
	char name[SCN_NAME_MAX];
	char description[SCN_LABEL_MAX];
	double duration_s, warmup_s;
	double truth_threshold; /* predicted relative CPI rise from which a neighbour counts as
				   victim */
	uint64_t seed;
	struct scn_platform *platforms;
	int nplatforms;
	struct scn_hosts *hosts;
	int nhosts_groups;
	int nhosts; /* hosts in the whole fleet */
	struct scn_job *jobs;
	int njobs;
	struct scn_event *events;
	int nevents;
	struct scn_task *task_overrides;
	int ntask_overrides;
};

/* Parses scenario text (NUL-terminated). On error returns -EINVAL and writes
 * "FILE:LINE: what" into err; *out is NULL. On success *out is owned by the caller. */
int scenario_parse(const char *text, const char *filename, struct scenario **out, char *err,
		   size_t errsz);
/* Reads and parses a file (at most 4 MiB). Returns 0, -errno or -EINVAL with err set. */
int scenario_load(const char *path, struct scenario **out, char *err, size_t errsz);
/* Finds a host's group and index in the group by the host's full name; -1 when absent. */
int scenario_find_host(const struct scenario *s, const char *host, int *group, int *index);
/* Writes host number `index` of group g's name into buf. */
void scenario_host_name(const struct scenario *s, int g, int index, char *buf, size_t bufsz);
/* Frees a scenario (NULL is fine). */
void scenario_delete(struct scenario *s);
/* Parses a duration as in scenario files ("90s", "10m", "2h", "1h30m", "1d", bare seconds).
 * 0 or -EINVAL. */
int scenario_duration(const char *text, double *seconds);
/* Name of a task class as used in files and ground truth. */
const char *scenario_class_name(int task_class);

#endif
