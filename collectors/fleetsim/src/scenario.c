/* Scenario file parser: INI-like, "[section arg]" headers and "key = value" lines. */
#include "scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCN_FILE_MAX (4 << 20)
#define SCN_LINE_MAX 4096
#define SCN_TASKS_MAX 1000000
#define SCN_MIN_TASKS_PER_PLATFORM 5 /* paper Table 2: a spec needs >= 5 tasks */

enum section { SEC_NONE, SEC_SCENARIO, SEC_PLATFORM, SEC_HOSTS, SEC_JOB, SEC_EVENT, SEC_TASK };

struct parser {
	struct scenario *s;
	const char *file;
	int line;
	enum section sec;
	char *err;
	size_t errsz;
};

static int fail(struct parser *p, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errsz, "%s:%d: %s", p->file, line, msg);
	return -EINVAL;
}

const char *scenario_class_name(int task_class)
{
	switch (task_class) {
	case CPI2_TASK_CLASS_LATENCY_SENSITIVE:
		return "latency-sensitive";
	case CPI2_TASK_CLASS_BATCH:
		return "batch";
	case CPI2_TASK_CLASS_BEST_EFFORT:
		return "best-effort";
	default:
		return "unknown";
	}
}

/* Names go into JSON, cgroup paths and Kafka keys: keep them to a safe alphabet. */
static bool valid_name(const char *v, bool allow_template)
{
	if (!*v || strlen(v) >= SCN_NAME_MAX || !strcmp(v, ".") || !strcmp(v, ".."))
		return false;
	for (const char *c = v; *c; c++) {
		if (isalnum((unsigned char)*c) || *c == '-' || *c == '_' || *c == '.')
			continue;
		if (allow_template && !strncmp(c, "{i}", 3)) {
			c += 2;
			continue;
		}
		return false;
	}
	return true;
}

static bool valid_label(const char *v)
{
	if (strlen(v) >= SCN_LABEL_MAX)
		return false;
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == '"' || *c == '\\' ||
		    (unsigned char)*c >= 0x7f)
			return false;
	return true;
}

static int parse_double(struct parser *p, const char *key, const char *v, double lo, double hi,
			double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(d))
		return fail(p, p->line, "%s: '%s' is not a number", key, v);
	if (d < lo || d > hi)
		return fail(p, p->line, "%s: %g is out of range [%g, %g]", key, d, lo, hi);
	*out = d;
	return 0;
}

static int parse_int(struct parser *p, const char *key, const char *v, long lo, long hi, int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (end == v || *end || errno)
		return fail(p, p->line, "%s: '%s' is not an integer", key, v);
	if (n < lo || n > hi)
		return fail(p, p->line, "%s: %ld is out of range [%ld, %ld]", key, n, lo, hi);
	*out = (int)n;
	return 0;
}

/* "90", "90s", "10m", "2h", "1d", or several: "1h30m" -> seconds. */
static int parse_duration(struct parser *p, const char *key, const char *v, double *out)
{
	const char *c = v;
	double total = 0;

	do {
		char *end;
		double d, mult = 1;

		errno = 0;
		d = strtod(c, &end);
		if (end == c || errno || !isfinite(d) || d < 0 || !isdigit((unsigned char)*c))
			goto bad;
		if (*end == 's')
			end++;
		else if (*end == 'm')
			mult = 60, end++;
		else if (*end == 'h')
			mult = 3600, end++;
		else if (*end == 'd')
			mult = 86400, end++;
		else if (*end || c != v) /* a bare number only alone */
			goto bad;
		total += d * mult;
		c = end;
	} while (*c);
	if (total > 3650.0 * 86400)
		goto bad;
	*out = total;
	return 0;
bad:
	return fail(p, p->line, "%s: '%s' is not a duration (like 90s, 10m, 2h, 1h30m, 1d)", key,
		    v);
}

int scenario_duration(const char *text, double *seconds)
{
	char err[256];
	struct parser p = {.file = "", .err = err, .errsz = sizeof(err)};
	return parse_duration(&p, "duration", text, seconds);
}

static int parse_bool(struct parser *p, const char *key, const char *v, bool *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
		*out = false;
	else
		return fail(p, p->line, "%s: '%s' is not true or false", key, v);
	return 0;
}

static int copy_name(struct parser *p, const char *key, const char *v, char *dst, bool tmpl)
{
	if (!valid_name(v, tmpl))
		return fail(p, p->line,
			    "%s: '%s' is not a name (letters, digits, '-', '_', '.'; < %d)", key, v,
			    SCN_NAME_MAX);
	snprintf(dst, SCN_NAME_MAX, "%s", v);
	return 0;
}

static void *grow(void *arr, int n, size_t elem)
{
	/* grows by one element, zeroed; returns NULL on failure (arr stays valid) */
	char *a = realloc(arr, (size_t)(n + 1) * elem);
	if (a)
		memset(a + (size_t)n * elem, 0, elem);
	return a;
}

static int key_scenario(struct parser *p, const char *k, const char *v)
{
	struct scenario *s = p->s;
	double d;
	int rc;

	if (!strcmp(k, "name"))
		return copy_name(p, k, v, s->name, false);
	if (!strcmp(k, "description")) {
		if (!valid_label(v))
			return fail(p, p->line,
				    "description: no quotes, backslashes or control "
				    "characters, < %d characters",
				    SCN_LABEL_MAX);
		snprintf(s->description, sizeof(s->description), "%s", v);
		return 0;
	}
	if (!strcmp(k, "duration"))
		return parse_duration(p, k, v, &s->duration_s);
	if (!strcmp(k, "warmup"))
		return parse_duration(p, k, v, &s->warmup_s);
	if (!strcmp(k, "truth_threshold"))
		return parse_double(p, k, v, 0.0, 100.0, &s->truth_threshold);
	if (!strcmp(k, "seed")) {
		rc = parse_double(p, k, v, 0, 9007199254740992.0, &d);
		if (!rc)
			s->seed = (uint64_t)d;
		return rc;
	}
	return fail(p, p->line, "unknown key '%s' in [scenario]", k);
}

static int key_platform(struct parser *p, const char *k, const char *v)
{
	struct scn_platform *pl = &p->s->platforms[p->s->nplatforms - 1];

	if (!strcmp(k, "label")) {
		if (!*v || !valid_label(v))
			return fail(p, p->line,
				    "label: non-empty, no quotes, backslashes or control "
				    "characters, < %d characters",
				    SCN_LABEL_MAX);
		snprintf(pl->label, sizeof(pl->label), "%s", v);
		return 0;
	}
	if (!strcmp(k, "ghz"))
		return parse_double(p, k, v, 0.1, 10.0, &pl->ghz);
	if (!strcmp(k, "cpi_scale"))
		return parse_double(p, k, v, 0.01, 100.0, &pl->cpi_scale);
	return fail(p, p->line, "unknown key '%s' in [platform]", k);
}

static int key_hosts(struct parser *p, const char *k, const char *v)
{
	struct scn_hosts *h = &p->s->hosts[p->s->nhosts_groups - 1];
	char why[256];
	int rc;

	if (!strcmp(k, "count"))
		return parse_int(p, k, v, 1, 100000, &h->count);
	if (!strcmp(k, "cpus"))
		return parse_int(p, k, v, 1, 65536, &h->cpus);
	if (!strcmp(k, "skew")) { /* a duration, "-" before it for a clock behind */
		int rc = parse_duration(p, k, v + (*v == '-'), &h->skew_s);
		if (*v == '-')
			h->skew_s = -h->skew_s;
		return rc;
	}
	if (!strcmp(k, "late"))
		return parse_duration(p, k, v, &h->late_s);
	if (!strcmp(k, "platform"))
		return copy_name(p, k, v, h->platform_name, false);
	if (!strcmp(k, "kubernetes")) {
		if (!strcmp(v, "cgroupfs"))
			h->kubernetes = SCN_K8S_CGROUPFS;
		else if (!strcmp(v, "systemd"))
			h->kubernetes = SCN_K8S_SYSTEMD;
		else
			return fail(p, p->line, "kubernetes: '%s' is not cgroupfs or systemd", v);
		return 0;
	}
	if ((rc = numa_key_hosts(&h->numa, k, v, why, sizeof(why))) <= 0)
		return rc ? fail(p, p->line, "%s", why) : 0;
	return fail(p, p->line, "unknown key '%s' in [hosts]", k);
}

static int parse_class(struct parser *p, const char *v, int *out)
{
	if (!strcmp(v, "latency-sensitive"))
		*out = CPI2_TASK_CLASS_LATENCY_SENSITIVE;
	else if (!strcmp(v, "batch"))
		*out = CPI2_TASK_CLASS_BATCH;
	else if (!strcmp(v, "best-effort"))
		*out = CPI2_TASK_CLASS_BEST_EFFORT;
	else if (!strcmp(v, "unknown"))
		*out = CPI2_TASK_CLASS_UNKNOWN;
	else
		return fail(p, p->line,
			    "class: '%s' is not latency-sensitive, batch, best-effort "
			    "or unknown",
			    v);
	return 0;
}

/* "target:count, target:count" */
static int parse_place(struct parser *p, struct scn_job *j, const char *v)
{
	char buf[SCN_LINE_MAX], *save = NULL, *item;

	snprintf(buf, sizeof(buf), "%s", v);
	if (j->nplace)
		return fail(p, p->line, "place: given twice for job '%s'", j->name);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		struct scn_placement *pl, *arr;
		char *colon, *end;
		long n;

		while (isspace((unsigned char)*item))
			item++;
		end = item + strlen(item);
		while (end > item && isspace((unsigned char)end[-1]))
			*--end = 0;
		colon = strchr(item, ':');
		if (!colon)
			return fail(p, p->line, "place: '%s' is not TARGET:COUNT", item);
		*colon = 0;
		if (!valid_name(item, false))
			return fail(p, p->line, "place: '%s' is not a host or [hosts] name", item);
		errno = 0;
		n = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || *end || errno || n < 1 || n > SCN_TASKS_MAX)
			return fail(p, p->line, "place: count '%s' is not an integer in [1, %d]",
				    colon + 1, SCN_TASKS_MAX);
		arr = grow(j->place, j->nplace, sizeof(*j->place));
		if (!arr)
			return fail(p, p->line, "out of memory");
		j->place = arr;
		pl = &j->place[j->nplace++];
		snprintf(pl->target, sizeof(pl->target), "%s", item);
		pl->count = (int)n;
		pl->line = p->line;
		if (j->ntasks > SCN_TASKS_MAX - pl->count)
			return fail(p, p->line, "place: more than %d tasks", SCN_TASKS_MAX);
		j->ntasks += pl->count;
	}
	if (!j->nplace)
		return fail(p, p->line, "place: empty");
	return 0;
}

static int key_job(struct parser *p, const char *k, const char *v)
{
	struct scn_job *j = &p->s->jobs[p->s->njobs - 1];
	char why[256];
	int rc;

	if (!strcmp(k, "class"))
		return parse_class(p, v, &j->task_class);
	if (!strcmp(k, "protected"))
		return parse_bool(p, k, v, &j->is_protected);
	if (!strcmp(k, "cpi"))
		return parse_double(p, k, v, 0.05, 100.0, &j->cpi);
	if (!strcmp(k, "cpi_sd"))
		return parse_double(p, k, v, 0.0, 50.0, &j->cpi_sd);
	if (!strcmp(k, "shape"))
		return parse_double(p, k, v, 0.0, 0.4, &j->shape);
	if (!strcmp(k, "diurnal_cv"))
		return parse_double(p, k, v, 0.0, 0.5, &j->diurnal_cv);
	if (!strcmp(k, "cpu"))
		return parse_double(p, k, v, 0.0, 1024.0, &j->cpu);
	if (!strcmp(k, "cpu_jitter"))
		return parse_double(p, k, v, 0.0, 1.0, &j->cpu_jitter);
	if (!strcmp(k, "cpu_spread"))
		return parse_double(p, k, v, 0.0, 1.0, &j->cpu_spread);
	if (!strcmp(k, "missing"))
		return parse_double(p, k, v, 0.0, 1.0, &j->missing);
	if (!strcmp(k, "sensitivity"))
		return parse_double(p, k, v, 0.0, 100.0, &j->sensitivity);
	if (!strcmp(k, "pressure"))
		return parse_double(p, k, v, 0.0, 100.0, &j->pressure);
	if (!strcmp(k, "threads"))
		return parse_int(p, k, v, 0, 1000000, &j->threads);
	if (!strcmp(k, "mpki"))
		return parse_double(p, k, v, 0.0, 1000.0, &j->mpki);
	if (!strcmp(k, "cpu_per_op"))
		return parse_double(p, k, v, 0.0, 1000.0, &j->cpu_per_op);
	if (!strcmp(k, "latency"))
		return parse_double(p, k, v, 0.0, 1e9, &j->latency);
	if (!strcmp(k, "lame_duck"))
		return parse_duration(p, k, v, &j->lame_duck_s);
	if (!strcmp(k, "exit_on_cap"))
		return parse_int(p, k, v, 0, 1000, &j->exit_on_cap);
	if (!strcmp(k, "burst_cpu"))
		return parse_double(p, k, v, 0.0, 1024.0, &j->burst_cpu);
	if (!strcmp(k, "burst_period"))
		return parse_duration(p, k, v, &j->burst_period_s);
	if (!strcmp(k, "burst_duty"))
		return parse_double(p, k, v, 0.01, 0.99, &j->burst_duty);
	if (!strcmp(k, "cpu_diurnal"))
		return parse_double(p, k, v, 0.0, 1.0, &j->cpu_diurnal);
	if (!strcmp(k, "peak"))
		return parse_duration(p, k, v, &j->peak_s);
	if (!strcmp(k, "count"))
		return parse_int(p, k, v, 1, 10000, &j->count);
	if (!strcmp(k, "place"))
		return parse_place(p, j, v);
	if (!strcmp(k, "namespace")) { /* a DNS label, as Kubernetes has it */
		bool ok = *v && strlen(v) < SCN_NAME_MAX && v[0] != '-' && v[strlen(v) - 1] != '-';

		for (const char *c = v; *c && ok; c++)
			ok = islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '-';
		if (!ok)
			return fail(p, p->line,
				    "namespace: '%s' is not a DNS label (a-z, 0-9, '-'; < %d)", v,
				    SCN_NAME_MAX);
		snprintf(j->k8s_namespace, sizeof(j->k8s_namespace), "%s", v);
		return 0;
	}
	if ((rc = numa_key_job(&j->numa, k, v, why, sizeof(why))) <= 0)
		return rc ? fail(p, p->line, "%s", why) : 0;
	return fail(p, p->line, "unknown key '%s' in [job]", k);
}

static int parse_pattern(struct parser *p, const char *v, int *out)
{
	static const char *names[] = {"steady", "square", "sine", "ramp", "bursts"};
	for (int i = 0; i < 5; i++)
		if (!strcmp(v, names[i])) {
			*out = i;
			return 0;
		}
	return fail(p, p->line, "pattern: '%s' is not steady, square, sine, ramp or bursts", v);
}

static char *trim(char *a);

/* "job/index" into ref (as written) and *index; the job is resolved after parsing */
static int parse_task_ref(struct parser *p, const char *k, const char *v, char *ref, size_t refsz,
			  int *index)
{
	const char *slash = strchr(v, '/');
	char job[SCN_NAME_MAX];
	char *end;
	long idx;

	if (!slash || (size_t)(slash - v) >= sizeof(job) || strlen(v) >= refsz)
		return fail(p, p->line, "%s: '%s' is not JOB/INDEX", k, v);
	memcpy(job, v, (size_t)(slash - v));
	job[slash - v] = 0;
	errno = 0;
	idx = strtol(slash + 1, &end, 10);
	if (!valid_name(job, false) || end == slash + 1 || *end || errno || idx < 0 ||
	    idx >= SCN_TASKS_MAX)
		return fail(p, p->line, "%s: '%s' is not JOB/INDEX", k, v);
	snprintf(ref, refsz, "%s", v);
	*index = (int)idx;
	return 0;
}

static int key_event(struct parser *p, const char *k, const char *v)
{
	struct scn_event *e = &p->s->events[p->s->nevents - 1];
	char why[256];
	int rc;

	if (!strcmp(k, "kind")) {
		if (!strcmp(v, "antagonist"))
			e->kind = SCN_EV_ANTAGONIST;
		else if (!strcmp(v, "self-inflicted"))
			e->kind = SCN_EV_SELF_INFLICTED;
		else if (!strcmp(v, "gap"))
			e->kind = SCN_EV_GAP;
		else if (!strcmp(v, "exit"))
			e->kind = SCN_EV_EXIT;
		else if (!strcmp(v, "numa"))
			e->kind = SCN_EV_NUMA;
		else if (!strcmp(v, "shift"))
			e->kind = SCN_EV_SHIFT;
		else if (!strcmp(v, "move"))
			e->kind = SCN_EV_MOVE;
		else
			return fail(
			    p, p->line,
			    "kind: '%s' is not antagonist, self-inflicted, gap, exit, numa, "
			    "shift or move",
			    v);
		return 0;
	}
	if (!strcmp(k, "task"))
		return parse_task_ref(p, k, v, e->task_ref, sizeof(e->task_ref), &e->task_index);
	if (!strcmp(k, "job")) {
		if (!valid_name(v, false))
			return fail(p, p->line, "job: '%s' is not a job name", v);
		snprintf(e->job_ref, sizeof(e->job_ref), "%s", v);
		return 0;
	}
	if (!strcmp(k, "host")) {
		if (!valid_name(v, false) || strlen(v) >= sizeof(e->host_ref))
			return fail(p, p->line, "host: '%s' is not a host name", v);
		snprintf(e->host_ref, sizeof(e->host_ref), "%s", v);
		return 0;
	}
	if (!strcmp(k, "cpi_factor"))
		return parse_double(p, k, v, 0.1, 20.0, &e->cpi_factor);
	if (!strcmp(k, "cpu_factor"))
		return parse_double(p, k, v, 0.0, 20.0, &e->cpu_factor);
	if (!strcmp(k, "rollout"))
		return parse_duration(p, k, v, &e->rollout_s);
	if (!strcmp(k, "victims")) {
		char buf[SCN_LINE_MAX], *item, *save = NULL;

		if (e->nvictims)
			return fail(p, p->line, "victims: given twice");
		snprintf(buf, sizeof(buf), "%s", v);
		for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
			int n = e->nvictims;

			if (n == SCN_EVENT_VICTIMS_MAX)
				return fail(p, p->line, "victims: more than %d",
					    SCN_EVENT_VICTIMS_MAX);
			if (parse_task_ref(p, k, trim(item), e->victim_ref[n],
					   sizeof(e->victim_ref[n]), &e->victim_index[n]))
				return -EINVAL;
			e->nvictims++;
		}
		if (!e->nvictims)
			return fail(p, p->line, "victims: empty");
		return 0;
	}
	if (!strcmp(k, "start"))
		return parse_duration(p, k, v, &e->start_s);
	if (!strcmp(k, "end"))
		return parse_duration(p, k, v, &e->end_s);
	if (!strcmp(k, "cpu"))
		return parse_double(p, k, v, 0.0, 1024.0, &e->cpu);
	if (!strcmp(k, "cpu_low"))
		return parse_double(p, k, v, 0.0, 1024.0, &e->cpu_low);
	if (!strcmp(k, "pattern"))
		return parse_pattern(p, v, &e->pattern);
	if (!strcmp(k, "period"))
		return parse_duration(p, k, v, &e->period_s);
	if (!strcmp(k, "phase"))
		return parse_duration(p, k, v, &e->phase_s);
	if (!strcmp(k, "duty"))
		return parse_double(p, k, v, 0.01, 0.99, &e->duty);
	if (!strcmp(k, "pressure"))
		return parse_double(p, k, v, 0.0, 100.0, &e->pressure);
	if (!strcmp(k, "self_gain"))
		return parse_double(p, k, v, 0.0, 100.0, &e->self_gain);
	if ((rc = numa_key_event(&e->numa, k, v, why, sizeof(why))) <= 0)
		return rc ? fail(p, p->line, "%s", why) : 0;
	return fail(p, p->line, "unknown key '%s' in [event]", k);
}

static int key_task(struct parser *p, const char *k, const char *v)
{
	struct scn_task *t = &p->s->task_overrides[p->s->ntask_overrides - 1];

	if (!strcmp(k, "cpu"))
		return parse_double(p, k, v, 0.0, 1024.0, &t->cpu);
	if (!strcmp(k, "cpu_jitter"))
		return parse_double(p, k, v, 0.0, 1.0, &t->cpu_jitter);
	if (!strcmp(k, "warmup_cpu"))
		return parse_double(p, k, v, 0.0, 1024.0, &t->warmup_cpu);
	return fail(p, p->line, "unknown key '%s' in [task]", k);
}

static int begin_section(struct parser *p, char *name, char *arg)
{
	struct scenario *s = p->s;
	void *arr;

	if (!strcmp(name, "scenario")) {
		if (*arg)
			return fail(p, p->line, "[scenario] takes no argument");
		p->sec = SEC_SCENARIO;
		return 0;
	}
	if (!strcmp(name, "platform")) {
		if (!(arr = grow(s->platforms, s->nplatforms, sizeof(*s->platforms))))
			return fail(p, p->line, "out of memory");
		s->platforms = arr;
		struct scn_platform *pl = &s->platforms[s->nplatforms++];
		pl->ghz = 2.5;
		pl->cpi_scale = 1.0;
		pl->line = p->line;
		p->sec = SEC_PLATFORM;
		if (copy_name(p, "[platform]", arg, pl->name, false))
			return -EINVAL;
		snprintf(pl->label, sizeof(pl->label), "simulated/%s", pl->name);
		return 0;
	}
	if (!strcmp(name, "hosts")) {
		if (!(arr = grow(s->hosts, s->nhosts_groups, sizeof(*s->hosts))))
			return fail(p, p->line, "out of memory");
		s->hosts = arr;
		struct scn_hosts *h = &s->hosts[s->nhosts_groups++];
		h->count = 1;
		h->cpus = 64;
		h->line = p->line;
		p->sec = SEC_HOSTS;
		return copy_name(p, "[hosts]", arg, h->name, false);
	}
	if (!strcmp(name, "job")) {
		if (!(arr = grow(s->jobs, s->njobs, sizeof(*s->jobs))))
			return fail(p, p->line, "out of memory");
		s->jobs = arr;
		struct scn_job *j = &s->jobs[s->njobs++];
		j->task_class = CPI2_TASK_CLASS_BATCH;
		j->cpi = 1.0;
		j->cpi_sd = 0.1;
		j->shape = 0.1;
		j->diurnal_cv = 0.04;
		j->cpu = 1.0;
		j->cpu_jitter = 0.05;
		j->sensitivity = 1.0;
		j->threads = 8;
		j->mpki = 1.0;
		j->burst_period_s = 600;
		j->burst_duty = 0.3;
		j->peak_s = -1;
		j->count = 1;
		snprintf(j->k8s_namespace, sizeof(j->k8s_namespace), "default");
		j->line = p->line;
		p->sec = SEC_JOB;
		return copy_name(p, "[job]", arg, j->name, true);
	}
	if (!strcmp(name, "event")) {
		if (*arg)
			return fail(p, p->line, "[event] takes no argument");
		if (!(arr = grow(s->events, s->nevents, sizeof(*s->events))))
			return fail(p, p->line, "out of memory");
		s->events = arr;
		struct scn_event *e = &s->events[s->nevents++];
		e->end_s = -1;
		e->cpu = -1;
		e->cpu_low = -1;
		e->pressure = -1;
		e->period_s = 600;
		e->self_gain = 1.0;
		e->duty = 0.5;
		e->cpi_factor = 1.0;
		e->cpu_factor = 1.0;
		e->host = -1;
		e->line = p->line;
		p->sec = SEC_EVENT;
		return 0;
	}
	if (!strcmp(name, "task")) {
		if (!(arr =
			  grow(s->task_overrides, s->ntask_overrides, sizeof(*s->task_overrides))))
			return fail(p, p->line, "out of memory");
		s->task_overrides = arr;
		struct scn_task *t = &s->task_overrides[s->ntask_overrides++];
		t->cpu = t->cpu_jitter = t->warmup_cpu = -1;
		t->line = p->line;
		p->sec = SEC_TASK;
		return parse_task_ref(p, "[task]", arg, t->ref, sizeof(t->ref), &t->index);
	}
	return fail(p, p->line,
		    "unknown section [%s] (scenario, platform, hosts, job, event, task)", name);
}

static char *trim(char *a)
{
	char *end;

	while (isspace((unsigned char)*a))
		a++;
	end = a + strlen(a);
	while (end > a && isspace((unsigned char)end[-1]))
		*--end = 0;
	return a;
}

static int parse_line(struct parser *p, char *line)
{
	char *t = trim(line), *eq;

	if (!*t || *t == '#' || *t == ';')
		return 0;
	if (*t == '[') {
		char *close = strchr(t, ']'), *name, *arg;

		if (!close || *trim(close + 1))
			return fail(p, p->line, "section header must be [NAME] or [NAME ARG]");
		*close = 0;
		name = trim(t + 1);
		arg = name;
		while (*arg && !isspace((unsigned char)*arg))
			arg++;
		if (*arg)
			*arg++ = 0;
		return begin_section(p, name, trim(arg));
	}
	eq = strchr(t, '=');
	if (!eq)
		return fail(p, p->line, "expected 'key = value' or '[section]', got '%.40s'", t);
	*eq = 0;
	char *k = trim(t), *v = trim(eq + 1);
	if (!*k)
		return fail(p, p->line, "missing key before '='");
	switch (p->sec) {
	case SEC_SCENARIO:
		return key_scenario(p, k, v);
	case SEC_PLATFORM:
		return key_platform(p, k, v);
	case SEC_HOSTS:
		return key_hosts(p, k, v);
	case SEC_JOB:
		return key_job(p, k, v);
	case SEC_EVENT:
		return key_event(p, k, v);
	case SEC_TASK:
		return key_task(p, k, v);
	default:
		return fail(p, p->line, "'%s' outside any section", k);
	}
}

void scenario_host_name(const struct scenario *s, int g, int index, char *buf, size_t bufsz)
{
	if (s->hosts[g].count == 1)
		snprintf(buf, bufsz, "%s", s->hosts[g].name);
	else
		snprintf(buf, bufsz, "%s-%03d", s->hosts[g].name, index);
}

int scenario_find_host(const struct scenario *s, const char *host, int *group, int *index)
{
	char name[2 * SCN_NAME_MAX];

	for (int g = 0; g < s->nhosts_groups; g++) {
		size_t n = strlen(s->hosts[g].name);
		if (s->hosts[g].count == 1) {
			if (!strcmp(host, s->hosts[g].name)) {
				*group = g, *index = 0;
				return 0;
			}
			continue;
		}
		if (strncmp(host, s->hosts[g].name, n) || host[n] != '-')
			continue;
		for (int i = 0; i < s->hosts[g].count; i++) {
			scenario_host_name(s, g, i, name, sizeof(name));
			if (!strcmp(name, host)) {
				*group = g, *index = i;
				return 0;
			}
		}
	}
	return -1;
}

static int find_job(const struct scenario *s, const char *name)
{
	for (int i = 0; i < s->njobs; i++)
		if (!strcmp(s->jobs[i].name, name))
			return i;
	return -1;
}

/* Replaces every template job (count > 1) by count numbered copies. */
static int expand_templates(struct parser *p)
{
	struct scenario *s = p->s;
	int total = 0, k = 0;
	struct scn_job *out;

	for (int i = 0; i < s->njobs; i++) {
		if (s->jobs[i].count > 1 && !strstr(s->jobs[i].name, "{i}"))
			return fail(p, s->jobs[i].line,
				    "job '%s': count > 1 needs '{i}' in the name", s->jobs[i].name);
		if (s->jobs[i].count == 1 && strstr(s->jobs[i].name, "{i}"))
			return fail(p, s->jobs[i].line, "job '%s': '{i}' needs count > 1",
				    s->jobs[i].name);
		total += s->jobs[i].count;
		if (total > 100000)
			return fail(p, s->jobs[i].line, "more than 100000 jobs");
	}
	if (total == s->njobs)
		return 0;
	out = calloc((size_t)total, sizeof(*out));
	if (!out)
		return fail(p, 0, "out of memory");
	for (int i = 0; i < s->njobs; i++) {
		struct scn_job *j = &s->jobs[i];
		int width = j->count > 100 ? (j->count > 1000 ? 4 : 3) : 2;
		for (int c = 0; c < j->count; c++, k++) {
			char num[16], name[3 * SCN_NAME_MAX];
			const char *at = strstr(j->name, "{i}");
			out[k] = *j;
			out[k].count = 1;
			snprintf(num, sizeof(num), "%0*d", width, c);
			if (at)
				snprintf(name, sizeof(name), "%.*s%s%s", (int)(at - j->name),
					 j->name, num, at + 3);
			else
				snprintf(name, sizeof(name), "%s", j->name);
			if (strlen(name) >= SCN_NAME_MAX) {
				free(out);
				return fail(p, j->line, "job name '%s' too long", name);
			}
			memcpy(out[k].name, name, strlen(name) + 1);
			out[k].place = malloc((size_t)(j->nplace + 1) * sizeof(*j->place));
			if (!out[k].place) {
				while (k-- > 0)
					free(out[k].place);
				free(out);
				return fail(p, 0, "out of memory");
			}
			if (j->nplace)
				memcpy(out[k].place, j->place,
				       (size_t)j->nplace * sizeof(*j->place));
		}
	}
	for (int i = 0; i < s->njobs; i++)
		free(s->jobs[i].place);
	free(s->jobs);
	s->jobs = out;
	s->njobs = total;
	return 0;
}

/* Checks references between sections, numbers hosts, and the per-platform task minimum. */
static int resolve(struct parser *p)
{
	struct scenario *s = p->s;
	char why[256];
	int rc, g, idx;

	if (!s->name[0])
		return fail(p, 1, "missing [scenario] name");
	if (!s->nplatforms)
		return fail(p, 1, "no [platform] section");
	if (!s->nhosts_groups)
		return fail(p, 1, "no [hosts] section");
	for (int i = 0; i < s->nplatforms; i++)
		for (int k = 0; k < i; k++)
			if (!strcmp(s->platforms[i].name, s->platforms[k].name))
				return fail(p, s->platforms[i].line, "platform '%s' defined twice",
					    s->platforms[i].name);
	s->nhosts = 0;
	for (int i = 0; i < s->nhosts_groups; i++) {
		struct scn_hosts *h = &s->hosts[i];
		h->platform = -1;
		for (int k = 0; k < s->nplatforms; k++)
			if (!strcmp(h->platform_name, s->platforms[k].name))
				h->platform = k;
		if (h->platform < 0)
			return fail(p, h->line, "hosts '%s': platform '%s' is not defined", h->name,
				    h->platform_name[0] ? h->platform_name : "(missing)");
		for (int k = 0; k < i; k++)
			if (!strcmp(h->name, s->hosts[k].name))
				return fail(p, h->line, "hosts '%s' defined twice", h->name);
		h->first_host = s->nhosts;
		if (s->nhosts > 1000000 - h->count)
			return fail(p, h->line, "more than 1000000 hosts");
		s->nhosts += h->count;
	}
	if ((rc = expand_templates(p)))
		return rc;
	if (!s->njobs)
		return fail(p, 1, "no [job] section");
	int *per_platform = calloc((size_t)s->nplatforms, sizeof(int));
	if (!per_platform)
		return fail(p, 0, "out of memory");
	for (int i = 0; i < s->njobs; i++) {
		struct scn_job *j = &s->jobs[i];
		if (!j->nplace) {
			free(per_platform);
			return fail(p, j->line, "job '%s': missing place", j->name);
		}
		if (find_job(s, j->name) != i) {
			free(per_platform);
			return fail(p, j->line, "job '%s' defined twice", j->name);
		}
		if (j->peak_s >= 86400) {
			free(per_platform);
			return fail(p, j->line, "job '%s': peak must be under 1d", j->name);
		}
		if (j->burst_cpu > 0 && j->burst_period_s <= 0) {
			free(per_platform);
			return fail(p, j->line, "job '%s': burst_period must be > 0", j->name);
		}
		memset(per_platform, 0, (size_t)s->nplatforms * sizeof(int));
		for (int k = 0; k < j->nplace; k++) {
			struct scn_placement *pl = &j->place[k];
			g = -1;
			for (int x = 0; x < s->nhosts_groups; x++)
				if (!strcmp(s->hosts[x].name, pl->target))
					g = x;
			if (g < 0 && scenario_find_host(s, pl->target, &g, &idx)) {
				free(per_platform);
				return fail(p, pl->line, "job '%s': place: no host or [hosts] '%s'",
					    j->name, pl->target);
			}
			per_platform[s->hosts[g].platform] += pl->count;
		}
		for (int k = 0; k < s->nplatforms; k++)
			if (per_platform[k] && per_platform[k] < SCN_MIN_TASKS_PER_PLATFORM) {
				int n = per_platform[k];
				free(per_platform);
				return fail(
				    p, j->line,
				    "job '%s' has %d task(s) on platform '%s': a spec needs "
				    ">= %d per platform",
				    j->name, n, s->platforms[k].name, SCN_MIN_TASKS_PER_PLATFORM);
			}
	}
	free(per_platform);
	for (int i = 0; i < s->nevents; i++) {
		struct scn_event *e = &s->events[i];
		char job[SCN_NAME_MAX];
		const char *slash = strchr(e->task_ref, '/');
		if (e->kind == SCN_EV_SHIFT) {
			if (!e->job_ref[0] || e->task_ref[0])
				return fail(p, e->line,
					    "event: kind = shift needs job = NAME (its tasks all "
					    "change), not task");
			e->job = find_job(s, e->job_ref);
			e->task_index = -1;
			if (e->job < 0)
				return fail(p, e->line, "event: no job '%s'", e->job_ref);
		} else {
			if (e->job_ref[0])
				return fail(p, e->line, "event: job is for kind = shift");
			if (!e->task_ref[0])
				return fail(p, e->line, "event: missing task = JOB/INDEX");
			snprintf(job, sizeof(job), "%.*s", (int)(slash - e->task_ref), e->task_ref);
			e->job = find_job(s, job);
			if (e->job < 0)
				return fail(p, e->line, "event: task '%s': no job '%s'",
					    e->task_ref, job);
			if (e->task_index >= s->jobs[e->job].ntasks)
				return fail(p, e->line, "event: task '%s': job '%s' has %d tasks",
					    e->task_ref, job, s->jobs[e->job].ntasks);
		}
		if (e->kind == SCN_EV_MOVE) {
			if (!e->host_ref[0] || scenario_find_host(s, e->host_ref, &g, &idx))
				return fail(p, e->line,
					    "event: kind = move needs host = a host's "
					    "name ('%s' is none)",
					    e->host_ref);
			e->host = s->hosts[g].first_host + idx;
		} else if (e->host_ref[0]) {
			return fail(p, e->line, "event: host is for kind = move");
		}
		if (e->end_s < 0)
			e->end_s = s->duration_s;
		if (e->end_s <= e->start_s)
			return fail(p, e->line, "event: end must be after start");
		if (e->cpu < 0 &&
		    (e->kind == SCN_EV_ANTAGONIST || e->kind == SCN_EV_SELF_INFLICTED))
			return fail(p, e->line,
				    "event: missing cpu (CPU-sec/sec at the pattern's peak)");
		if (e->pattern != SCN_PAT_STEADY && e->period_s <= 0)
			return fail(p, e->line, "event: period must be > 0");
		if (e->kind == SCN_EV_SELF_INFLICTED && e->cpu_low < 0)
			return fail(p, e->line, "event: self-inflicted needs cpu_low");
		if (e->nvictims && e->kind != SCN_EV_ANTAGONIST)
			return fail(p, e->line, "event: victims is for kind = antagonist");
		if (e->pattern == SCN_PAT_BURSTS && e->kind != SCN_EV_ANTAGONIST &&
		    e->kind != SCN_EV_SELF_INFLICTED)
			return fail(p, e->line,
				    "event: pattern bursts is for kind = antagonist or "
				    "self-inflicted");
		if (e->kind == SCN_EV_NUMA && numa_event_check(&e->numa, why, sizeof(why)))
			return fail(p, e->line, "%s", why);
		for (int v = 0; v < e->nvictims; v++) {
			const char *vs = strchr(e->victim_ref[v], '/');
			snprintf(job, sizeof(job), "%.*s", (int)(vs - e->victim_ref[v]),
				 e->victim_ref[v]);
			e->victim_job[v] = find_job(s, job);
			if (e->victim_job[v] < 0)
				return fail(p, e->line, "event: victim '%s': no job '%s'",
					    e->victim_ref[v], job);
			if (e->victim_index[v] >= s->jobs[e->victim_job[v]].ntasks)
				return fail(p, e->line, "event: victim '%s': job '%s' has %d tasks",
					    e->victim_ref[v], job,
					    s->jobs[e->victim_job[v]].ntasks);
		}
	}
	for (int i = 0; i < s->ntask_overrides; i++) {
		struct scn_task *t = &s->task_overrides[i];
		char job[SCN_NAME_MAX];
		const char *slash = strchr(t->ref, '/');
		snprintf(job, sizeof(job), "%.*s", (int)(slash - t->ref), t->ref);
		t->job = find_job(s, job);
		if (t->job < 0)
			return fail(p, t->line, "task '%s': no job '%s'", t->ref, job);
		if (t->index >= s->jobs[t->job].ntasks)
			return fail(p, t->line, "task '%s': job '%s' has %d tasks", t->ref, job,
				    s->jobs[t->job].ntasks);
	}
	return 0;
}

int scenario_parse(const char *text, const char *filename, struct scenario **out, char *err,
		   size_t errsz)
{
	struct parser p = {.file = filename ? filename : "(scenario)", .err = err, .errsz = errsz};
	char line[SCN_LINE_MAX];
	const char *c = text;
	int rc = 0;

	*out = NULL;
	p.s = calloc(1, sizeof(*p.s));
	if (!p.s)
		return fail(&p, 0, "out of memory");
	p.s->duration_s = 7200;
	p.s->warmup_s = 6 * 3600;
	p.s->truth_threshold = 0.1;
	p.s->seed = 1;
	while (*c && !rc) {
		const char *nl = strchr(c, '\n');
		size_t n = nl ? (size_t)(nl - c) : strlen(c);
		p.line++;
		if (n >= sizeof(line)) {
			rc = fail(&p, p.line, "line longer than %d characters", SCN_LINE_MAX - 1);
			break;
		}
		memcpy(line, c, n);
		line[n] = 0;
		if (memchr(line, 0, n) || strlen(line) != n) {
			rc = fail(&p, p.line, "NUL byte in line");
			break;
		}
		rc = parse_line(&p, line);
		c = nl ? nl + 1 : c + n;
	}
	if (!rc)
		rc = resolve(&p);
	if (rc) {
		scenario_delete(p.s);
		return rc;
	}
	*out = p.s;
	return 0;
}

int scenario_load(const char *path, struct scenario **out, char *err, size_t errsz)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;
	int rc;

	*out = NULL;
	if (!f) {
		rc = -errno;
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return rc;
	}
	buf = malloc(SCN_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		snprintf(err, errsz, "%s: out of memory", path);
		return -ENOMEM;
	}
	n = fread(buf, 1, SCN_FILE_MAX + 1, f);
	if (ferror(f) || n > SCN_FILE_MAX) {
		snprintf(err, errsz, "%s: %s", path,
			 ferror(f) ? "read error" : "larger than 4 MiB");
		fclose(f);
		free(buf);
		return -EINVAL;
	}
	fclose(f);
	buf[n] = 0;
	if (strlen(buf) != n) {
		/* report the line of the first NUL byte */
		int line = 1;
		for (size_t i = 0; i < strlen(buf); i++)
			line += buf[i] == '\n';
		snprintf(err, errsz, "%s:%d: NUL byte in line", path, line);
		free(buf);
		return -EINVAL;
	}
	rc = scenario_parse(buf, path, out, err, errsz);
	free(buf);
	return rc;
}

void scenario_delete(struct scenario *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->njobs; i++)
		free(s->jobs[i].place);
	free(s->jobs);
	free(s->platforms);
	free(s->hosts);
	free(s->events);
	free(s->task_overrides);
	free(s);
}
