/* Ground truth of a run, as JSON lines: one object per line, "type" first. Types:
 *   scenario        the run: scenario, seed, start_us, warmup_end_us, end_us (sim time)
 *   antagonism      antagonist (host, task, job, class) raises victim's CPI from start_us to
 *                   end_us; peak_cpu of the antagonist, predicted_cpi_increase (relative)
 *   self_inflicted  a task's CPI swings with its own CPU usage: no antagonist exists
 *   gap             a task runs but publishes no sample from start_us to end_us
 *   exit            a task ends at start_us (end_us: the run's end): no samples, no load after
 *   cap / uncap     the simulator saw a cap file change (at_us = sim time, cap in CPU-sec/sec) */
#ifndef FLEETSIM_TRUTH_H
#define FLEETSIM_TRUTH_H

#include <stdint.h>
#include <stdio.h>

struct truth_task {
	const char *host, *task, *job, *task_class;
};

void truth_scenario(FILE *f, const char *scenario, uint64_t seed, int64_t start_us,
		    int64_t warmup_end_us, int64_t end_us);
void truth_antagonism(FILE *f, const struct truth_task *antagonist, const struct truth_task *victim,
		      int64_t start_us, int64_t end_us, double peak_cpu, double predicted_increase);
/* a span of one task's life: type is self_inflicted, gap or exit */
void truth_task_span(FILE *f, const char *type, const struct truth_task *t, int64_t start_us,
		     int64_t end_us);
/* cap < 0 or infinite: the cap was lifted. */
/* a job-wide change (a release, a new mix of requests): no antagonist, every task of the job */
void truth_shift(FILE *f, const char *job, const char *job_class, int64_t start_us, int64_t end_us,
		 double cpi_factor, double cpu_factor, double rollout_s);
void truth_cap(FILE *f, const struct truth_task *t, int64_t at_us, double cap);

#endif
