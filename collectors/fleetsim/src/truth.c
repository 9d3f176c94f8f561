/* Names in a scenario are restricted to [A-Za-z0-9._-] by the parser: no JSON escaping needed. */
#include "truth.h"

#include <inttypes.h>
#include <math.h>

void truth_scenario(FILE *f, const char *scenario, uint64_t seed, int64_t start_us,
		    int64_t warmup_end_us, int64_t end_us)
{
	fprintf(f,
		"{\"type\":\"scenario\",\"scenario\":\"%s\",\"seed\":%" PRIu64
		",\"start_us\":%" PRId64 ",\"warmup_end_us\":%" PRId64 ",\"end_us\":%" PRId64 "}\n",
		scenario, seed, start_us, warmup_end_us, end_us);
}

void truth_antagonism(FILE *f, const struct truth_task *a, const struct truth_task *v,
		      int64_t start_us, int64_t end_us, double peak_cpu, double predicted_increase)
{
	fprintf(f,
		"{\"type\":\"antagonism\",\"host\":\"%s\",\"antagonist\":\"%s\",\"antagonist_job\":"
		"\"%s\",\"antagonist_class\":\"%s\",\"victim\":\"%s\",\"victim_job\":\"%s\","
		"\"victim_class\":\"%s\",\"start_us\":%" PRId64 ",\"end_us\":%" PRId64
		",\"peak_cpu\":%.3f,\"predicted_cpi_increase\":%.4f}\n",
		a->host, a->task, a->job, a->task_class, v->task, v->job, v->task_class, start_us,
		end_us, peak_cpu, predicted_increase);
}

void truth_task_span(FILE *f, const char *type, const struct truth_task *t, int64_t start_us,
		     int64_t end_us)
{
	fprintf(f,
		"{\"type\":\"%s\",\"host\":\"%s\",\"task\":\"%s\",\"job\":\"%s\","
		"\"class\":\"%s\",\"start_us\":%" PRId64 ",\"end_us\":%" PRId64 "}\n",
		type, t->host, t->task, t->job, t->task_class, start_us, end_us);
}

void truth_shift(FILE *f, const char *job, const char *job_class, int64_t start_us, int64_t end_us,
		 double cpi_factor, double cpu_factor, double rollout_s)
{
	fprintf(f,
		"{\"type\":\"shift\",\"job\":\"%s\",\"class\":\"%s\",\"start_us\":%" PRId64
		",\"end_us\":%" PRId64
		",\"cpi_factor\":%.4f,\"cpu_factor\":%.4f,\"rollout_s\":%.0f}\n",
		job, job_class, start_us, end_us, cpi_factor, cpu_factor, rollout_s);
}

void truth_cap(FILE *f, const struct truth_task *t, int64_t at_us, double cap)
{
	if (cap < 0 || isinf(cap))
		fprintf(f,
			"{\"type\":\"uncap\",\"host\":\"%s\",\"task\":\"%s\",\"job\":\"%s\",\"at_"
			"us\":%" PRId64 "}\n",
			t->host, t->task, t->job, at_us);
	else
		fprintf(f,
			"{\"type\":\"cap\",\"host\":\"%s\",\"task\":\"%s\",\"job\":\"%s\",\"at_"
			"us\":%" PRId64 ",\"cap\":%.4f}\n",
			t->host, t->task, t->job, at_us, cap);
	fflush(f);
}
