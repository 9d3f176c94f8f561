#include "fleet.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cpi2/log.h>

#include "cpi_model.h"
#include "rng.h"
#include "rules.h"
#include "truth.h"

struct fleet_host {
	char name[2 * SCN_NAME_MAX];
	int platform;
	int64_t phase_us; /* offset of this host's window inside the period */
	int cpus;
	int first_task, ntasks;
	int kubernetes; /* enum scn_kubernetes */
	struct rng rng;
	int64_t skew_us;	   /* added to its window starts: its clock is off */
	int late;		   /* periods its samples are held back before they are published */
	struct fleet_sample *held; /* late: [late][ntasks] samples, a ring by period */
	int *nheld;		   /* late: samples in each slot of the ring */
	const struct numa_host_conf *numa; /* its group's NUMA nodes */
};

/* A task of a Kubernetes host: a pod of its job's Deployment, and what the collector's rules
 * and the host's labels file make of its cgroup. */
struct fleet_pod {
	char name[2 * SCN_NAME_MAX], uid[40];
	struct mapping map;
	bool published; /* the labels file names it (else the collector would skip it) */
};

struct fleet_task {
	int host, job, index;
	char path[3 * SCN_NAME_MAX]; /* cgroup path relative to the host's root */
	char dir[5 * SCN_NAME_MAX];  /* <host>/<path> */
	char task_id[16];
	struct fleet_pod *pod;		 /* on a Kubernetes host, else NULL */
	const struct cpi_model *model;	 /* the job's model on this host's platform */
	int *events, nevents;		 /* scripted events of this task (indexes) */
	double cap;			 /* CPU-sec/sec, INFINITY when uncapped */
	int64_t lame_until_us;		 /* in lame-duck mode until then (after a cap) */
	int32_t threads;		 /* this period */
	double cpu, pressure;		 /* this period */
	double self_factor;		 /* this period: CPI factor of a self-inflicted event */
	const struct scn_event *target;	 /* this period: an antagonist event naming its victims */
	double level, jitter;		 /* its own CPU level and relative jitter */
	double warmup_level;		 /* its CPU level during the warm-up; < 0: level */
	int64_t exit_us;		 /* it ends then for good (INT64_MAX: never) */
	int64_t alive_from_us;		 /* it runs on its host from then (INT64_MIN: always) */
	struct rng burst_rng;		 /* its own bursts (pattern bursts), apart from caps */
	bool bursting, burst_drawn;	 /* bursting this period; the chain's state drawn */
	int caps;			 /* caps applied to it so far */
	bool silent;			 /* this period: in a gap, nothing published */
	const struct scn_event *numa_ev; /* this period: a numa event moving it, or NULL */
};

struct fleet {
	const struct scenario *s;
	struct fleet_host *hosts;
	int nhosts;
	struct fleet_task *tasks;
	int ntasks;
	struct fleet_pod *pods; /* behind fleet_task.pod */
	int npods;
	struct cpi_model *models; /* [job * nplatforms + platform] */
	double *job_phase;	  /* [job]: the phase of its daily cycles */
	int *event_index;	  /* storage behind fleet_task.events */
	int64_t start_us, warmup_end_us, now_us;
	int64_t period; /* periods played */
	uint64_t seed;
	FILE *truth;
	int64_t truth_end_us; /* the run's end, for exit lines written on the way */
	int ncapped;
};

static int cmp_host(const void *a, const void *b)
{
	const struct fleet_task *x = a, *y = b;
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int64_t event_start_us(const struct fleet *f, const struct scn_event *e)
{
	return f->warmup_end_us + (int64_t)(e->start_s * 1e6);
}

/* Each move event, in the order of their start, ends the task where it runs then and adds it
 * again (same job, index and cgroup path) on the event's host from then on: tasks[n...]. */
static int place_moves(struct fleet *f, int n)
{
	const struct scenario *s = f->s;
	int *order = calloc((size_t)s->nevents + 1, sizeof(int)), nm = 0;

	if (!order)
		return -ENOMEM;
	for (int e = 0; e < s->nevents; e++)
		if (s->events[e].kind == SCN_EV_MOVE) {
			int k = nm++;
			while (k > 0 && s->events[order[k - 1]].start_s > s->events[e].start_s) {
				order[k] = order[k - 1];
				k--;
			}
			order[k] = e;
		}
	for (int k = 0; k < nm; k++) {
		const struct scn_event *e = &s->events[order[k]];
		int64_t at = event_start_us(f, e);
		struct fleet_task *from = NULL;
		for (int t = 0; t < n; t++)
			if (f->tasks[t].job == e->job && f->tasks[t].index == e->task_index &&
			    f->tasks[t].alive_from_us <= at && at < f->tasks[t].exit_us)
				from = &f->tasks[t];
		if (!from || from->host == e->host) {
			free(order);
			return -EEXIST; /* not running then, or already on that host */
		}
		struct fleet_task *to = &f->tasks[n++];
		*to = *from;
		to->host = e->host;
		to->alive_from_us = at;
		to->exit_us = INT64_MAX;
		from->exit_us = at;
	}
	free(order);
	return 0;
}

/* Places every job's tasks: a [hosts] target is filled round robin, continuing where the
 * previous job stopped so jobs spread over the group. */
static int place_tasks(struct fleet *f)
{
	const struct scenario *s = f->s;
	int *cursor = calloc((size_t)s->nhosts_groups, sizeof(int));
	int n = 0;

	if (!cursor)
		return -ENOMEM;
	for (int j = 0; j < s->njobs; j++) {
		const struct scn_job *job = &s->jobs[j];
		int index = 0;
		for (int k = 0; k < job->nplace; k++) {
			const struct scn_placement *pl = &job->place[k];
			int g = -1, hi = -1;
			for (int x = 0; x < s->nhosts_groups; x++)
				if (!strcmp(s->hosts[x].name, pl->target))
					g = x;
			if (g < 0 && scenario_find_host(s, pl->target, &g, &hi)) {
				free(cursor);
				return -EINVAL; /* the parser resolved it: cannot happen */
			}
			for (int c = 0; c < pl->count; c++) {
				struct fleet_task *t = &f->tasks[n++];
				int i = hi >= 0 ? hi : cursor[g]++ % s->hosts[g].count;
				t->host = s->hosts[g].first_host + i;
				t->job = j;
				t->index = index++;
				t->alive_from_us = INT64_MIN;
				t->exit_us = INT64_MAX;
			}
		}
	}
	free(cursor);
	return place_moves(f, n);
}

/* the kubelet's QoS tier of a task class: Guaranteed pods sit at the top of kubepods */
static const char *pod_qos(int task_class)
{
	return task_class == CPI2_TASK_CLASS_LATENCY_SENSITIVE ? "Guaranteed"
	       : task_class == CPI2_TASK_CLASS_BEST_EFFORT     ? "BestEffort"
							       : "Burstable";
}

/* the pod's cgroup under the kubelet's layout for a driver and a uid */
static void pod_cgroup(char *out, size_t size, int driver, int task_class, const char *uid)
{
	const char *qos = pod_qos(task_class);
	const char *tier = !strcmp(qos, "Burstable")	? "burstable"
			   : !strcmp(qos, "BestEffort") ? "besteffort"
							: NULL;
	char uid_[40];

	if (driver == SCN_K8S_CGROUPFS) {
		if (tier)
			snprintf(out, size, "kubepods/%s/pod%s", tier, uid);
		else
			snprintf(out, size, "kubepods/pod%s", uid);
		return;
	}
	snprintf(uid_, sizeof(uid_), "%s", uid);
	for (char *c = uid_; *c; c++)
		if (*c == '-')
			*c = '_';
	if (tier)
		snprintf(out, size, "kubepods.slice/kubepods-%s.slice/kubepods-%s-pod%s.slice",
			 tier, tier, uid_);
	else
		snprintf(out, size, "kubepods.slice/kubepods-pod%s.slice", uid_);
}

/* A pod of the job's Deployment, named as a ReplicaSet names them (<deployment>-<template
 * hash>-<5 characters>), with a uid of its own until the labels file says the API server's. */
static void pod_init(struct fleet *f, struct fleet_task *ft)
{
	static const char abc[] = "bcdfghjklmnpqrstvwxz2456789"; /* Kubernetes' name alphabet */
	const struct scn_job *job = &f->s->jobs[ft->job];
	struct fleet_pod *pod = ft->pod;
	char hash[11], sfx[6];
	uint64_t u[2];
	struct rng r;

	rng_seed(&r, rng_mix(f->seed ^ 0x706f64ULL, (uint64_t)ft->job));
	for (int i = 0; i < 10; i++)
		hash[i] = abc[rng_next(&r) % (sizeof(abc) - 1)];
	hash[10] = '\0';
	rng_seed(&r,
		 rng_mix(rng_mix(f->seed ^ 0x706f64ULL, (uint64_t)ft->job), (uint64_t)ft->index));
	for (int i = 0; i < 5; i++)
		sfx[i] = abc[rng_next(&r) % (sizeof(abc) - 1)];
	sfx[5] = '\0';
	snprintf(pod->name, sizeof(pod->name), "%s-%s-%s", job->name, hash, sfx);
	u[0] = rng_next(&r);
	u[1] = rng_next(&r);
	snprintf(pod->uid, sizeof(pod->uid), "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(u[0] >> 32),
		 (unsigned)(u[0] >> 16) & 0xffff, (unsigned)u[0] & 0xfff,
		 0x8000 | ((unsigned)(u[1] >> 48) & 0x3fff),
		 (unsigned long long)(u[1] & 0xffffffffffffULL));
	pod_cgroup(ft->path, sizeof(ft->path), f->hosts[ft->host].kubernetes, job->task_class,
		   pod->uid);
}

/* the task of job j with index i, or NULL */
static const struct fleet_task *find_task(const struct fleet *f, int j, int i)
{
	for (int t = 0; t < f->ntasks; t++)
		if (f->tasks[t].job == j && f->tasks[t].index == i)
			return &f->tasks[t];
	return NULL;
}

/* how many fleet tasks a task is (more than one when it moves) */
static int task_copies(const struct fleet *f, int j, int i)
{
	int n = 0;

	for (int t = 0; t < f->ntasks; t++)
		n += f->tasks[t].job == j && f->tasks[t].index == i;
	return n;
}

/* an event's named victims must share its task's host, and neither may move */
static int check_victims(const struct fleet *f, char *err, size_t errsz)
{
	const struct scenario *s = f->s;

	for (int e = 0; e < s->nevents; e++) {
		const struct scn_event *ev = &s->events[e];
		if (!ev->nvictims)
			continue;
		for (int v = -1; v < ev->nvictims; v++) {
			int j = v < 0 ? ev->job : ev->victim_job[v];
			int i = v < 0 ? ev->task_index : ev->victim_index[v];
			if (task_copies(f, j, i) > 1) {
				snprintf(err, errsz, "line %d: event: victims: task '%s' moves",
					 ev->line, v < 0 ? ev->task_ref : ev->victim_ref[v]);
				return -EINVAL;
			}
		}
		const struct fleet_task *a = find_task(f, ev->job, ev->task_index);
		for (int v = 0; v < ev->nvictims; v++) {
			const struct fleet_task *t =
			    find_task(f, ev->victim_job[v], ev->victim_index[v]);
			if (!a || !t || t->host != a->host || t == a) {
				snprintf(err, errsz,
					 "line %d: event: victim '%s' is not on task '%s''s host",
					 ev->line, ev->victim_ref[v], ev->task_ref);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* Each task's own CPU level (the job's, spread by cpu_spread, or its [task] section's), jitter,
 * warm-up level and exit time; a late host's ring of held samples. */
static int init_task_levels(struct fleet *f, char *err, size_t errsz)
{
	const struct scenario *s = f->s;

	for (int t = 0; t < f->ntasks; t++) {
		struct fleet_task *ft = &f->tasks[t];
		const struct scn_job *job = &s->jobs[ft->job];
		ft->level = job->cpu;
		ft->jitter = job->cpu_jitter;
		ft->warmup_level = -1;
		rng_seed(&ft->burst_rng, rng_mix(rng_mix(f->seed ^ 0x627273ULL, (uint64_t)ft->job),
						 (uint64_t)ft->index));
		if (job->cpu_spread > 0) {
			struct rng r;
			rng_seed(&r, rng_mix(rng_mix(f->seed ^ 0x6c766cULL, (uint64_t)ft->job),
					     (uint64_t)ft->index));
			ft->level = fmax(0, job->cpu * (1 + job->cpu_spread * rng_normal(&r)));
		}
	}
	for (int i = 0; i < s->ntask_overrides; i++) { /* every copy of a task that moves */
		const struct scn_task *o = &s->task_overrides[i];
		for (int t = 0; t < f->ntasks; t++) {
			struct fleet_task *ft = &f->tasks[t];
			if (ft->job != o->job || ft->index != o->index)
				continue;
			if (o->cpu >= 0)
				ft->level = o->cpu;
			if (o->cpu_jitter >= 0)
				ft->jitter = o->cpu_jitter;
			ft->warmup_level = o->warmup_cpu;
		}
	}
	for (int e = 0; e < s->nevents; e++) {
		const struct scn_event *ev = &s->events[e];
		int64_t at = event_start_us(f, ev);
		for (int t = 0; ev->kind == SCN_EV_EXIT && t < f->ntasks; t++) {
			struct fleet_task *ft = &f->tasks[t];
			if (ft->job == ev->job && ft->index == ev->task_index &&
			    ft->alive_from_us < at && at < ft->exit_us)
				ft->exit_us = at;
		}
	}
	for (int g = 0, h = 0; g < s->nhosts_groups; g++)
		for (int i = 0; i < s->hosts[g].count; i++, h++) {
			struct fleet_host *fh = &f->hosts[h];
			fh->skew_us = (int64_t)(s->hosts[g].skew_s * 1e6);
			fh->late = (int)ceil(s->hosts[g].late_s * 1e6 / FLEET_PERIOD_US);
			if (!fh->late || !fh->ntasks)
				continue;
			fh->held = calloc((size_t)fh->late * (size_t)fh->ntasks, sizeof(*fh->held));
			fh->nheld = calloc((size_t)fh->late, sizeof(int));
			if (!fh->held || !fh->nheld) {
				snprintf(err, errsz, "out of memory holding host %s's samples",
					 fh->name);
				return -ENOMEM;
			}
		}
	return 0;
}

/* does event e name task t among its victims? */
static bool names_victim(const struct scn_event *e, const struct fleet_task *t)
{
	for (int v = 0; v < e->nvictims; v++)
		if (e->victim_job[v] == t->job && e->victim_index[v] == t->index)
			return true;
	return false;
}

/* is e an event of task t (its own, or its job's)? */
static bool event_of(const struct scn_event *e, const struct fleet_task *t)
{
	return e->job == t->job && (e->task_index == t->index || e->task_index < 0);
}

int fleet_new(struct fleet **out, const struct scenario *s, uint64_t seed, int64_t start_us,
	      char *err, size_t errsz)
{
	struct fleet *f = calloc(1, sizeof(*f));
	int total = 0, h = 0, attached = 0, rc;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->s = s;
	f->seed = seed;
	f->start_us = start_us;
	f->now_us = start_us;
	f->warmup_end_us = start_us + (int64_t)(s->warmup_s * 1e6);
	for (int j = 0; j < s->njobs; j++)
		total += s->jobs[j].ntasks;
	for (int e = 0; e < s->nevents; e++)
		total += s->events[e].kind == SCN_EV_MOVE;
	f->nhosts = s->nhosts;
	f->ntasks = total;
	f->hosts = calloc((size_t)s->nhosts, sizeof(*f->hosts));
	f->tasks = calloc((size_t)total, sizeof(*f->tasks));
	f->models = calloc((size_t)s->njobs * (size_t)s->nplatforms, sizeof(*f->models));
	f->job_phase = calloc((size_t)s->njobs + 1, sizeof(double));
	if (!f->hosts || !f->tasks || !f->models || !f->job_phase) {
		snprintf(err, errsz, "out of memory building a fleet of %d tasks", total);
		fleet_delete(f);
		return -ENOMEM;
	}
	if ((rc = place_tasks(f))) {
		if (rc == -EEXIST)
			snprintf(err, errsz,
				 "a move event's task does not run then, or runs on that host "
				 "already");
		else
			snprintf(err, errsz, "out of memory building a fleet of %d tasks", total);
		fleet_delete(f);
		return rc == -EEXIST ? -EINVAL : rc;
	}
	for (int g = 0; g < s->nhosts_groups; g++)
		for (int i = 0; i < s->hosts[g].count; i++, h++) {
			struct fleet_host *fh = &f->hosts[h];
			scenario_host_name(s, g, i, fh->name, sizeof(fh->name));
			fh->platform = s->hosts[g].platform;
			fh->kubernetes = s->hosts[g].kubernetes;
			fh->cpus = s->hosts[g].cpus;
			fh->numa = &s->hosts[g].numa;
			rng_seed(&fh->rng, rng_mix(seed, (uint64_t)h));
			fh->phase_us =
			    (int64_t)(rng_next(&fh->rng) %
				      (uint64_t)((FLEET_PERIOD_US - FLEET_WINDOW_US) / 1000000)) *
			    1000000;
		}
	for (int j = 0; j < s->njobs; j++) {
		const struct scn_job *job = &s->jobs[j];
		struct rng r;
		rng_seed(&r, rng_mix(seed ^ 0x6a6f62ULL, (uint64_t)j));
		double phase = 2 * M_PI * rng_uniform(&r); /* jobs peak at different hours */
		if (job->peak_s >= 0)			   /* sin(day angle + phase) is 1 then */
			phase = M_PI / 2 -
				2 * M_PI *
				    fmod((double)f->warmup_end_us / 1e6 + job->peak_s, 86400.0) /
				    86400.0;
		f->job_phase[j] = phase;
		for (int p = 0; p < s->nplatforms; p++) {
			double scale = s->platforms[p].cpi_scale;
			cpi_model_init(&f->models[j * s->nplatforms + p], job->cpi * scale,
				       job->cpi_sd * scale, job->shape, job->diurnal_cv, phase);
		}
	}
	qsort(f->tasks, (size_t)total, sizeof(*f->tasks), cmp_host);
	for (int t = 0; t < total; t++)
		f->npods += f->hosts[f->tasks[t].host].kubernetes != SCN_K8S_NONE;
	if (f->npods && !(f->pods = calloc((size_t)f->npods, sizeof(*f->pods)))) {
		snprintf(err, errsz, "out of memory building %d pods", f->npods);
		fleet_delete(f);
		return -ENOMEM;
	}
	for (int t = 0, p = 0; t < total; t++) {
		struct fleet_task *ft = &f->tasks[t];
		struct fleet_host *fh = &f->hosts[ft->host];
		if (!fh->ntasks)
			fh->first_task = t;
		fh->ntasks++;
		if (fh->kubernetes != SCN_K8S_NONE) {
			ft->pod = &f->pods[p++];
			pod_init(f, ft);
		} else {
			snprintf(ft->path, sizeof(ft->path), "jobs/%s/%d", s->jobs[ft->job].name,
				 ft->index);
		}
		snprintf(ft->dir, sizeof(ft->dir), "%s/%s", fh->name, ft->path);
		snprintf(ft->task_id, sizeof(ft->task_id), "%d", ft->index);
		ft->model = &f->models[ft->job * s->nplatforms + fh->platform];
		ft->cap = INFINITY;
	}
	if (check_victims(f, err, errsz) || init_task_levels(f, err, errsz)) {
		fleet_delete(f);
		return -EINVAL;
	}
	/* attach events to their tasks, in file order (a later event wins where they overlap); a
	 * job's event (shift) to each of its tasks */
	for (int t = 0; t < total; t++)
		for (int e = 0; e < s->nevents; e++)
			attached += event_of(&s->events[e], &f->tasks[t]);
	if (!(f->event_index = calloc((size_t)attached + 1, sizeof(int)))) {
		snprintf(err, errsz, "out of memory attaching %d events", attached);
		fleet_delete(f);
		return -ENOMEM;
	}
	for (int t = 0, k = 0; t < total; t++) {
		struct fleet_task *ft = &f->tasks[t];
		ft->events = &f->event_index[k];
		for (int e = 0; e < s->nevents; e++)
			if (event_of(&s->events[e], ft)) {
				f->event_index[k++] = e;
				ft->nevents++;
			}
	}
	*out = f;
	return 0;
}

void fleet_delete(struct fleet *f)
{
	if (!f)
		return;
	for (int h = 0; f->hosts && h < f->nhosts; h++) {
		free(f->hosts[h].held);
		free(f->hosts[h].nheld);
	}
	free(f->hosts);
	free(f->tasks);
	free(f->pods);
	free(f->models);
	free(f->job_phase);
	free(f->event_index);
	free(f);
}

static struct truth_task truth_of(const struct fleet *f, const struct fleet_task *t)
{
	return (struct truth_task){
	    .host = f->hosts[t->host].name,
	    .task = t->path,
	    .job = f->s->jobs[t->job].name,
	    .task_class = scenario_class_name(f->s->jobs[t->job].task_class),
	};
}

static int64_t clip(int64_t v, int64_t end_us)
{
	return v < end_us ? v : end_us;
}

void fleet_write_truth(struct fleet *f, FILE *truth, int64_t end_us)
{
	const struct scenario *s = f->s;

	f->truth = truth;
	f->truth_end_us = end_us;
	truth_scenario(truth, s->name, f->seed, f->start_us, f->warmup_end_us, end_us);
	for (int e = 0; e < s->nevents; e++) {
		const struct scn_event *ev = &s->events[e];
		int64_t start = event_start_us(f, ev);
		if (ev->kind == SCN_EV_SHIFT && start < end_us)
			truth_shift(truth, s->jobs[ev->job].name,
				    scenario_class_name(s->jobs[ev->job].task_class), start,
				    clip(f->warmup_end_us + (int64_t)(ev->end_s * 1e6), end_us),
				    ev->cpi_factor, ev->cpu_factor, ev->rollout_s);
	}
	for (int t = 0; t < f->ntasks; t++) {
		const struct fleet_task *a = &f->tasks[t];
		const struct fleet_host *h = &f->hosts[a->host];
		struct truth_task ta = truth_of(f, a);
		if (a->alive_from_us != INT64_MIN && a->alive_from_us < end_us)
			truth_task_span(truth, "move", &ta, a->alive_from_us,
					clip(a->exit_us, end_us));
		for (int k = 0; k < a->nevents; k++) {
			const struct scn_event *e = &s->events[a->events[k]];
			int64_t start = event_start_us(f, e);
			int64_t end = clip(f->warmup_end_us + (int64_t)(e->end_s * 1e6), end_us);
			if (start >= end_us || e->kind == SCN_EV_SHIFT || e->kind == SCN_EV_MOVE)
				continue;
			if (e->kind == SCN_EV_EXIT) {
				if (a->exit_us == start) /* the copy that ran then */
					truth_task_span(truth, "exit", &ta, start, end_us);
				continue;
			}
			/* only while this copy of the task runs on its host */
			if (start < a->alive_from_us)
				start = a->alive_from_us;
			end = clip(end, a->exit_us);
			if (start >= end)
				continue;
			if (e->kind != SCN_EV_ANTAGONIST) {
				static const char *type[] = {[SCN_EV_SELF_INFLICTED] =
								 "self_inflicted",
							     [SCN_EV_GAP] = "gap",
							     [SCN_EV_NUMA] = "numa"};
				truth_task_span(truth, type[e->kind], &ta, start, end);
				continue;
			}
			double press = e->pressure >= 0 ? e->pressure : s->jobs[a->job].pressure;
			for (int v = h->first_task; v < h->first_task + h->ntasks; v++) {
				const struct fleet_task *vt = &f->tasks[v];
				double inc = s->jobs[vt->job].sensitivity * press * e->cpu;
				int64_t vs = start > vt->alive_from_us ? start : vt->alive_from_us;
				int64_t ve = clip(end, vt->exit_us);
				if (v == t || inc < s->truth_threshold ||
				    (e->nvictims && !names_victim(e, vt)) || vs >= ve)
					continue;
				struct truth_task tv = truth_of(f, vt);
				truth_antagonism(truth, &ta, &tv, vs, ve, e->cpu, inc);
			}
		}
	}
	fflush(truth);
}

/* CPU demand of a task under one event at time rel_s after the warmup, between cpu_low and cpu;
 * bursting: the task's own bursts (pattern bursts). */
static double pattern_cpu(const struct scn_event *e, double low, double rel_s, bool bursting)
{
	double tau = rel_s - e->start_s + e->phase_s, x;

	switch (e->pattern) {
	case SCN_PAT_BURSTS:
		x = bursting ? 1.0 : 0.0;
		break;
	case SCN_PAT_SQUARE:
		x = fmod(tau, e->period_s) < e->period_s * e->duty ? 1.0 : 0.0;
		break;
	case SCN_PAT_SINE:
		x = 0.5 + 0.5 * sin(2 * M_PI * tau / e->period_s);
		break;
	case SCN_PAT_RAMP:
		x = tau >= e->period_s ? 1.0 : (tau > 0 ? tau / e->period_s : 0.0);
		break;
	default:
		x = 1.0;
	}
	return low + (e->cpu - low) * x;
}

/* One period of a task's bursts: a two-state Markov chain, on for duty x period and off for
 * the rest on average (exponential durations), from its own random numbers. */
static void step_bursts(struct fleet_task *t, double period_s, double duty)
{
	double on_s = duty * period_s, off_s = (1 - duty) * period_s;
	double dt = (double)FLEET_PERIOD_US / 1e6;

	if (!t->burst_drawn) { /* the chain's stationary state */
		t->bursting = rng_uniform(&t->burst_rng) < duty;
		t->burst_drawn = true;
		return;
	}
	if (rng_uniform(&t->burst_rng) < 1 - exp(-dt / (t->bursting ? on_s : off_s)))
		t->bursting = !t->bursting;
}

/* The last active event of t with pattern bursts at rel_s, or NULL. */
static const struct scn_event *bursts_event(const struct fleet *f, const struct fleet_task *t,
					    double rel_s)
{
	const struct scn_event *b = NULL;

	for (int k = 0; k < t->nevents; k++) {
		const struct scn_event *e = &f->s->events[t->events[k]];
		if (e->pattern == SCN_PAT_BURSTS && rel_s >= e->start_s && rel_s < e->end_s)
			b = e;
	}
	return b;
}

/* Where task t takes a shift event in its rollout: seconds after the event's start. */
static double rollout_offset_s(const struct fleet *f, const struct fleet_task *t,
			       const struct scn_event *e)
{
	struct rng r;

	if (e->rollout_s <= 0)
		return 0;
	rng_seed(&r, rng_mix(rng_mix(f->seed ^ 0x726f6cULL, (uint64_t)(e - f->s->events)),
			     rng_mix((uint64_t)t->job, (uint64_t)t->index)));
	return e->rollout_s * rng_uniform(&r);
}

long fleet_step(struct fleet *f, fleet_emit emit, void *ctx)
{
	const struct scenario *s = f->s;
	double t_s = (double)f->now_us / 1e6;
	double rel_s = (double)(f->now_us - f->warmup_end_us) / 1e6;
	long n = 0;

	for (int h = 0; h < f->nhosts; h++) {
		struct fleet_host *fh = &f->hosts[h];
		const struct scn_platform *pl = &s->platforms[fh->platform];
		struct fleet_task *first = &f->tasks[fh->first_task], *end = first + fh->ntasks;
		double host_pressure = 0;

		for (struct fleet_task *t = first; t < end; t++) {
			const struct scn_job *job = &s->jobs[t->job];
			double demand = t->level, cpu, shift_cpi = 1, shift_cpu = 1;
			t->pressure = job->pressure;
			t->self_factor = 1.0;
			t->target = NULL;
			t->silent = false;
			t->numa_ev = NULL;
			if (f->now_us < t->alive_from_us || f->now_us >= t->exit_us) {
				t->cpu = t->pressure =
				    0; /* not (or no longer) here: no load, no sample */
				t->silent = true;
				continue;
			}
			if (f->now_us < f->warmup_end_us && t->warmup_level >= 0)
				demand = t->warmup_level;
			if (job->cpu_diurnal > 0)
				demand *= 1 + job->cpu_diurnal *
						  sin(2 * M_PI * fmod(t_s, 86400.0) / 86400.0 +
						      f->job_phase[t->job]);
			const struct scn_event *be = bursts_event(f, t, rel_s);
			if (be)
				step_bursts(t, be->period_s, be->duty);
			else if (job->burst_cpu > 0)
				step_bursts(t, job->burst_period_s, job->burst_duty);
			if (!be && job->burst_cpu > 0 && t->bursting)
				demand = job->burst_cpu;
			for (int k = 0; k < t->nevents; k++) {
				const struct scn_event *e = &s->events[t->events[k]];
				if (rel_s < e->start_s || rel_s >= e->end_s ||
				    e->kind == SCN_EV_MOVE)
					continue;
				if (e->kind == SCN_EV_NUMA) { /* moves it, changes no load */
					t->numa_ev = e;
					continue;
				}
				if (e->kind == SCN_EV_SHIFT) { /* the job's release reached it */
					if (rel_s >= e->start_s + rollout_offset_s(f, t, e)) {
						shift_cpi *= e->cpi_factor;
						shift_cpu *= e->cpu_factor;
					}
					continue;
				}
				if (e->kind == SCN_EV_GAP || e->kind == SCN_EV_EXIT) {
					t->silent |= e->kind == SCN_EV_GAP;
					continue;
				}
				double low = e->cpu_low >= 0 ? e->cpu_low : t->level;
				demand = pattern_cpu(e, low, rel_s, t->bursting);
				if (e->pressure >= 0)
					t->pressure = e->pressure;
				t->target = e->nvictims ? e : NULL;
				if (e->kind == SCN_EV_SELF_INFLICTED && e->cpu > low)
					t->self_factor =
					    1.0 + e->self_gain * (e->cpu - demand) / (e->cpu - low);
			}
			demand *= shift_cpu;
			t->self_factor *= shift_cpi;
			t->threads = job->threads;
			if (f->now_us < t->lame_until_us) { /* offloads work to its peers */
				demand *= 0.25;
				t->threads = job->threads / 4 > 0 ? job->threads / 4 : 1;
			}
			if (!isinf(t->cap)) /* capped tasks pile up threads (paper 6.2: 8 -> 80) */
				t->threads = job->threads * 10;
			cpu = demand * (1.0 + t->jitter * rng_normal(&fh->rng));
			if (cpu < 0)
				cpu = 0;
			if (cpu > t->cap)
				cpu = t->cap;
			t->cpu = cpu;
			if (!t->target)
				host_pressure += t->pressure * cpu;
		}
		int slot = fh->late ? (int)(f->period % fh->late) : 0;
		for (int i = 0; fh->late && i < fh->nheld[slot]; i++) { /* held `late` periods */
			int rc = emit(ctx, &fh->held[slot * fh->ntasks + i]);
			if (rc)
				return rc;
			n++;
		}
		if (fh->late)
			fh->nheld[slot] = 0;
		for (struct fleet_task *t = first; t < end; t++) {
			const struct scn_job *job = &s->jobs[t->job];
			double felt = host_pressure - (t->target ? 0 : t->pressure * t->cpu);
			for (const struct fleet_task *u = first; u < end; u++)
				if (u->target && names_victim(u->target, t))
					felt += u->pressure * u->cpu;
			double interference = job->sensitivity * felt, numa_score, numa_factor;
			bool has_numa = numa_task(fh->numa, &job->numa, (int)(t - first),
						  t->numa_ev ? &t->numa_ev->numa : NULL,
						  &numa_score, &numa_factor);
			double cpi = cpi_model_sample(t->model, &fh->rng, t_s, interference,
						      t->self_factor * numa_factor);
			if (t->pod && !t->pod->published)
				continue; /* the collector would skip it: it has no job */
			if (t->silent || (job->missing > 0 && rng_uniform(&fh->rng) < job->missing))
				continue;
			const struct mapping *m = t->pod ? &t->pod->map : NULL;
			struct fleet_sample smp = {
			    .host = fh->name,
			    .task = t->path,
			    .job = m ? m->job : job->name,
			    .task_id = m ? m->task_id : t->task_id,
			    .platform = pl->label,
			    .task_class = m ? m->task_class : job->task_class,
			    .is_protected = m ? m->is_protected : job->is_protected,
			    .window_start_us = f->now_us + fh->phase_us + fh->skew_us,
			    .window_us = FLEET_WINDOW_US,
			    .cpu_usage = t->cpu,
			    .threads = t->threads,
			    .host_cpus = fh->cpus,
			    .has_numa_score = has_numa,
			    .numa_score = numa_score,
			};
			smp.cycles = llround(t->cpu * (FLEET_WINDOW_US / 1e6) * pl->ghz * 1e9);
			smp.instructions = llround((double)smp.cycles / cpi);
			smp.has_cpi = smp.instructions > 0;
			smp.cpi = smp.has_cpi ? (double)smp.cycles / (double)smp.instructions : 0;
			smp.llc_misses = llround((double)smp.instructions * job->mpki *
						 (1.0 + interference) / 1000.0);
			/* a service's CPU per unit of work and latency follow its CPI: the same
			 * work in more cycles; no work done (no CPU) leaves them null, as a scrape
			 * would */
			smp.has_cpu_per_op = job->cpu_per_op > 0 && smp.has_cpi && t->cpu > 0;
			smp.cpu_per_op =
			    smp.has_cpu_per_op ? job->cpu_per_op * smp.cpi / job->cpi : 0;
			smp.has_latency = job->latency > 0 && smp.has_cpi && t->cpu > 0;
			smp.latency = smp.has_latency ? job->latency * smp.cpi / job->cpi : 0;
			if (fh->late) { /* held back, published `late` periods from now */
				fh->held[slot * fh->ntasks + fh->nheld[slot]++] = smp;
				continue;
			}
			int rc = emit(ctx, &smp);
			if (rc)
				return rc;
			n++;
		}
	}
	f->period++;
	f->now_us += FLEET_PERIOD_US;
	return n;
}

int64_t fleet_now_us(const struct fleet *f)
{
	return f->now_us;
}

int64_t fleet_warmup_end_us(const struct fleet *f)
{
	return f->warmup_end_us;
}

int fleet_ntasks(const struct fleet *f)
{
	return f->ntasks;
}

int fleet_nhosts(const struct fleet *f)
{
	return f->nhosts;
}

const char *fleet_task_dir(const struct fleet *f, int task)
{
	return f->tasks[task].dir;
}

void fleet_set_cap(struct fleet *f, int task, double cap)
{
	struct fleet_task *t;

	if (task < 0 || task >= f->ntasks)
		return;
	t = &f->tasks[task];
	if (isinf(cap) || cap < 0)
		cap = INFINITY;
	if (isinf(t->cap) != isinf(cap))
		f->ncapped += isinf(cap) ? -1 : 1;
	if (!isinf(t->cap) && isinf(cap))
		t->lame_until_us = f->now_us + (int64_t)(f->s->jobs[t->job].lame_duck_s * 1e6);
	bool exits = isinf(t->cap) && !isinf(cap) && ++t->caps == f->s->jobs[t->job].exit_on_cap &&
		     t->exit_us > f->now_us + FLEET_PERIOD_US;
	if (exits) /* its owner gives up under this cap: gone from the next period on */
		t->exit_us = f->now_us + FLEET_PERIOD_US;
	t->cap = cap;
	if (f->truth) {
		struct truth_task tt = truth_of(f, t);
		truth_cap(f->truth, &tt, f->now_us, cap);
		if (exits) {
			truth_task_span(f->truth, "exit", &tt, t->exit_us, f->truth_end_us);
			fflush(f->truth);
		}
	}
}

int fleet_ncapped(const struct fleet *f)
{
	return f->ncapped;
}

void fleet_write_pods(const struct fleet *f, FILE *out)
{
	for (int t = 0; t < f->ntasks; t++) {
		const struct fleet_task *ft = &f->tasks[t];
		const struct scn_job *job = &f->s->jobs[ft->job];

		if (!ft->pod)
			continue;
		/* names are of the scenario's safe alphabet: nothing to escape */
		fprintf(
		    out,
		    "{\"node\":\"%s\",\"namespace\":\"%s\",\"pod\":\"%s\",\"deployment\":\"%s\","
		    "\"qos\":\"%s\",\"protected\":%s,\"cgroup\":\"%s\"}\n",
		    f->hosts[ft->host].name, job->k8s_namespace, ft->pod->name, job->name,
		    pod_qos(job->task_class), job->is_protected ? "true" : "false", ft->path);
	}
}

/* the labels entry whose TASK_ID is the pod's name, or NULL */
static const struct label *label_of(const struct rules *r, const char *pod)
{
	for (size_t i = 0; i < r->n_labels; i++)
		if (!strcmp(r->labels[i].task_id, pod))
			return &r->labels[i];
	return NULL;
}

/* one Kubernetes host: its labels file through the collector's rules */
static int map_host(struct fleet *f, int h, const char *labels_dir, int *published, char *err,
		    size_t errsz)
{
	const struct fleet_host *fh = &f->hosts[h];
	const char *shape = fh->kubernetes == SCN_K8S_CGROUPFS ? "kubepods/" : "kubepods.slice/";
	struct rules r = {0};
	char path[4096], why[512];
	int rc = rules_parse(&r, cpi2_default_rules, "default rules", err, errsz);

	snprintf(path, sizeof(path), "%s/%s", labels_dir ? labels_dir : "", fh->name);
	if (!rc && labels_dir && (rc = rules_labels_refresh(&r, path, why, sizeof(why)))) {
		if (rc != -ENOENT) {
			snprintf(err, errsz, "labels of host %s: %s", fh->name, why);
			goto out;
		}
		cpi2_log(CPI2_LOG_WARN, "fleetsim", "host %s: no labels file %s: %s", fh->name,
			 path, strerror(-rc));
		rc = 0;
	}
	for (int t = fh->first_task; !rc && t < fh->first_task + fh->ntasks; t++) {
		struct fleet_task *ft = &f->tasks[t];
		const struct label *l = label_of(&r, ft->pod->name);

		if (l) { /* the kubelet made the cgroup of the API server's uid */
			if (strncmp(l->task, shape, strlen(shape)) || strstr(l->task, "..") ||
			    strlen(l->task) >= sizeof(ft->path)) {
				snprintf(
				    err, errsz,
				    "%s: pod %s's cgroup '%s' is not a pod cgroup of this host's "
				    "driver (%s...)",
				    path, ft->pod->name, l->task, shape);
				rc = -EINVAL;
				break;
			}
			snprintf(ft->path, sizeof(ft->path), "%s", l->task);
			snprintf(ft->dir, sizeof(ft->dir), "%s/%s", fh->name, ft->path);
		}
		int kind = rules_map(&r, ft->path, fh->name, &ft->pod->map);

		ft->pod->published = kind == MAP_TASK;
		*published += ft->pod->published;
		if (kind != MAP_TASK)
			cpi2_log(
			    CPI2_LOG_WARN, "fleetsim",
			    "host %s: pod %s/%s (cgroup %s) has no entry in %s: not published, "
			    "as the collector would not",
			    fh->name, f->s->jobs[ft->job].k8s_namespace, ft->pod->name, ft->path,
			    labels_dir ? path : "(no labels folder)");
	}
out:
	rules_free(&r);
	return rc;
}

int fleet_map_pods(struct fleet *f, const char *labels_dir, char *err, size_t errsz)
{
	int published = 0, rc = 0;

	for (int h = 0; h < f->nhosts && !rc; h++)
		if (f->hosts[h].kubernetes != SCN_K8S_NONE && f->hosts[h].ntasks)
			rc = map_host(f, h, labels_dir, &published, err, errsz);
	return rc ? rc : published;
}

int fleet_npods(const struct fleet *f)
{
	return f->npods;
}
