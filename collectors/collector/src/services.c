/* services: see services.h. */
#include "services.h"
#include "collector.h"

#include <cpi2/cgroup.h>
#include <cpi2/clock.h>
#include <cpi2/log.h>

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a report of (kind, task) once; the details may change without a new line */
static void report(struct collector *c, int level, const char *kind, const char *task,
		   const char *fmt, const char *a, const char *b)
{
	char key[PATH_MAX + 64];

	snprintf(key, sizeof(key), "/svc-%s:%s", kind, task);
	if (once_set_add(&c->reported, key))
		cpi2_log(level, "collector", fmt, a, b);
}

static int64_t timeout_us(const struct collector *c)
{
	double s = c->conf->scrape_timeout_s;

	if (s <= 0) /* automatic: half a second, at most half the window */
		s = c->conf->window_s / 2 < 0.5 ? c->conf->window_s / 2 : 0.5;
	return (int64_t)(s * 1e6);
}

static int by_key(const struct svc_task *a, int root, const char *task)
{
	return a->root != root ? (a->root < root ? -1 : 1) : strcmp(a->task, task);
}

/* the index of (root, task), or where it goes (*found false) */
static size_t find(const struct services *sv, int root, const char *task, bool *found)
{
	size_t lo = 0, hi = sv->n;

	*found = false;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int cmp = by_key(sv->v[mid], root, task);

		if (!cmp) {
			*found = true;
			return mid;
		}
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void task_free(struct svc_task *t)
{
	free(t->task);
	free(t->usage_dir);
	free(t->url);
	free(t->work);
	free(t->latency);
	free(t->qtl);
	svc_conf_free(&t->conf);
	scrape_free(&t->scrape);
	svc_point_free(&t->base);
	svc_point_free(&t->cur);
	free(t);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* (re)configure t from the labels' settings; false when they do not parse (logged once) */
static bool configure(struct collector *c, struct svc_task *t, const struct label_scrape *l)
{
	char err[512];

	if (t->url && same(t->url, l->url) && same(t->work, l->work) &&
	    same(t->latency, l->latency) && same(t->qtl, l->quantile))
		return !t->bad;
	free(t->url);
	free(t->work);
	free(t->latency);
	free(t->qtl);
	svc_conf_free(&t->conf);
	svc_point_clear(&t->base);
	t->url = dup_or_null(l->url);
	t->work = dup_or_null(l->work);
	t->latency = dup_or_null(l->latency);
	t->qtl = dup_or_null(l->quantile);
	t->bad = svc_conf_parse(&t->conf, l->url, l->work, l->latency, l->quantile, err,
				sizeof(err)) != 0;
	if (t->bad)
		report(c, CPI2_LOG_WARN, "conf", t->task,
		       "metrics endpoint of %s: %s (not scraped: cpu_per_op and latency null)",
		       t->task, err);
	return !t->bad;
}

static struct svc_task *task_new(struct collector *c, struct counted *t)
{
	struct svc_task *s = calloc(1, sizeof(*s));
	char dir[PATH_MAX];

	if (!s)
		return NULL;
	snprintf(dir, sizeof(dir), "%s/%s", c->roots[t->root].usage_base, t->task);
	s->task = strdup(t->task);
	s->usage_dir = strdup(dir);
	s->root = t->root;
	s->scrape.fd = -1;
	svc_conf_free(&s->conf); /* empty, quantile -1 */
	if (!s->task || !s->usage_dir) {
		task_free(s);
		return NULL;
	}
	return s;
}

static bool waiting(const struct svc_task *t)
{
	return t->scrape.state != SCRAPE_IDLE && t->scrape.state != SCRAPE_DONE;
}

static void start(struct collector *c, struct svc_task *t, bool ending)
{
	t->ending = ending;
	scrape_start(&t->scrape, &t->conf, (size_t)c->conf->scrape_max_bytes,
		     cpi2_clock_us(CLOCK_MONOTONIC) + timeout_us(c));
}

void services_begin(struct collector *c)
{
	struct services *sv = &c->services;
	size_t scraped = 0, kept = 0;

	for (size_t i = 0; i < sv->n; i++)
		sv->v[i]->seen = false;
	for (size_t i = 0; i < c->n_counted; i++) {
		struct counted *t = &c->counted[i];
		struct svc_task *s;
		size_t at;
		bool found;

		t->svc = NULL;
		if (!t->map.scrape || !c->conf->scrape)
			continue;
		if (scraped == (size_t)c->conf->scrape_max_tasks) {
			report(
			    c, CPI2_LOG_WARN, "max", t->task,
			    "metrics endpoint of %s: more than scrape_max_tasks tasks to scrape: "
			    "not scraped%s",
			    t->task, "");
			continue;
		}
		at = find(sv, t->root, t->task, &found);
		if (!found) {
			if (sv->n == sv->cap) {
				size_t cap = sv->cap ? sv->cap * 2 : 16;
				struct svc_task **v = realloc(sv->v, cap * sizeof(*v));

				if (!v)
					continue;
				sv->v = v;
				sv->cap = cap;
			}
			if (!(s = task_new(c, t)))
				continue;
			memmove(sv->v + at + 1, sv->v + at, (sv->n - at) * sizeof(*sv->v));
			sv->v[at] = s;
			sv->n++;
		}
		s = sv->v[at];
		s->seen = true;
		if (!configure(c, s, t->map.scrape))
			continue;
		scraped++;
		t->svc = s;
	}
	/* let go of the tasks no longer counted, once nothing of theirs is in flight */
	for (size_t i = 0; i < sv->n; i++) {
		if (!sv->v[i]->seen && !waiting(sv->v[i]))
			task_free(sv->v[i]);
		else
			sv->v[kept++] = sv->v[i];
	}
	sv->n = kept;
	for (size_t i = 0; i < c->n_counted; i++) {
		struct svc_task *s = c->counted[i].svc;

		if (s && !waiting(s) && (!c->continuous || !s->base.ok))
			start(c, s, false);
	}
}

static void done(struct collector *c, struct svc_task *t, services_emit_fn emit, void *arg);

void services_end(struct collector *c, struct counted *t, const struct cpi2_sample *s,
		  services_emit_fn emit, void *arg)
{
	struct svc_task *v = t->svc;

	/* a scrape still in flight (only when a window is shorter than two deadlines) ends now,
	 * and a sample still waiting for it goes out with its values null */
	scrape_abort(&v->scrape, SVC_TIMEOUT, "a window ended before its scrape did");
	if (v->scrape.state == SCRAPE_DONE)
		done(c, v, emit, arg);
	v->wait = *s;
	snprintf(v->job, sizeof(v->job), "%s", s->job);
	snprintf(v->task_id, sizeof(v->task_id), "%s", s->task_id);
	v->wait.task = v->task;
	v->wait.job = v->job;
	v->wait.task_id = v->task_id;
	start(c, v, true);
}

static void count_value(bool has, int reason, uint64_t *ok, uint64_t *null)
{
	if (has)
		(*ok)++;
	else if (reason != SVC_OK)
		null[reason]++;
}

/* a scrape is over: take its answer in; an ending one publishes its sample */
static void done(struct collector *c, struct svc_task *t, services_emit_fn emit, void *arg)
{
	struct services *sv = &c->services;
	struct scrape *s = &t->scrape;
	char detail[256] = "";
	struct svc_values val;

	sv->counts.scrapes++;
	svc_point_clear(&t->cur);
	if (s->reason == SVC_OK) {
		svc_point_parse(&t->conf, s->body, s->body_len, &t->cur, detail, sizeof(detail));
		t->cur.has_cpu = cpi2_cgroup_cpu_usage_ns(t->usage_dir, &t->cur.cpu_ns) == 0;
	} else {
		t->cur.reason = s->reason;
		snprintf(detail, sizeof(detail), "%s", s->detail);
	}
	if (!t->cur.ok) {
		char what[512];

		sv->counts.failed[t->cur.reason]++;
		snprintf(what, sizeof(what), "%s (%s)", svc_reason_name(t->cur.reason), detail);
		report(c, CPI2_LOG_WARN, svc_reason_name(t->cur.reason), t->task,
		       "scrape of %s failed: %s; its cpu_per_op and latency are null (said once "
		       "per task and reason)",
		       t->task, what);
	}
	if (t->ending) {
		svc_compute(&t->conf, &t->base, &t->cur, &val);
		t->wait.has_cpu_per_op = val.has_cpu_per_op;
		t->wait.cpu_per_op = val.cpu_per_op;
		t->wait.has_latency = val.has_latency;
		t->wait.latency = val.latency;
		count_value(val.has_cpu_per_op, val.cpu_per_op_reason, &sv->counts.cpu_per_op,
			    sv->counts.cpu_per_op_null);
		count_value(val.has_latency, val.latency_reason, &sv->counts.latency,
			    sv->counts.latency_null);
		for (int k = 0; k < 2 && t->cur.ok; k++) {
			int r = k ? val.latency_reason : val.cpu_per_op_reason;

			if (r == SVC_OK || r == SVC_NO_BASELINE)
				continue;
			char kind[64];

			snprintf(kind, sizeof(kind), "%s-%s", k ? "latency" : "cpu_per_op",
				 svc_reason_name(r));
			report(c, r == SVC_NO_WORK ? CPI2_LOG_INFO : CPI2_LOG_WARN, kind, t->task,
			       k ? "latency of %s null: %s (said once per task and reason)"
				 : "cpu_per_op of %s null: %s (said once per task and reason)",
			       t->task, svc_reason_name(r));
		}
		emit(arg, &t->wait);
		t->ending = false;
	}
	/* the next window starts where this scrape left off; an answer that selected nothing (a
	 * service restarting behind its exporter) leaves the start where it was, so that a
	 * counter that comes back lower is seen as the restart it is */
	if (t->cur.ok && t->cur.n) {
		struct svc_point tmp = t->base;

		t->base = t->cur;
		t->cur = tmp;
	} else if (!t->cur.ok) {
		svc_point_clear(&t->base);
	}
	scrape_reset(s);
}

bool services_busy(const struct collector *c)
{
	for (size_t i = 0; i < c->services.n; i++)
		if (c->services.v[i]->scrape.state != SCRAPE_IDLE)
			return true;
	return false;
}

void services_poll(struct collector *c, int64_t until_us, services_emit_fn emit, void *arg)
{
	struct services *sv = &c->services;
	struct pollfd *fds = NULL;
	size_t *which = NULL;

	if (sv->n) {
		fds = malloc(sv->n * sizeof(*fds));
		which = malloc(sv->n * sizeof(*which));
	}
	for (;;) {
		int64_t now = cpi2_clock_us(CLOCK_MONOTONIC), next = until_us;
		nfds_t n = 0;

		for (size_t i = 0; i < sv->n; i++) {
			struct svc_task *t = sv->v[i];

			scrape_step(&t->scrape, 0, now); /* its deadline */
			if (t->scrape.state == SCRAPE_DONE) {
				done(c, t, emit, arg);
				continue;
			}
			if (!waiting(t) || !fds)
				continue;
			fds[n] = (struct pollfd){t->scrape.fd, scrape_events(&t->scrape), 0};
			which[n++] = i;
			if (t->scrape.deadline_us < next)
				next = t->scrape.deadline_us;
		}
		if (!n || now >= until_us)
			break;
		int ms = (int)((next - now + 999) / 1000), rc;

		rc = poll(fds, n, ms < 0 ? 0 : ms);
		if (rc < 0 && errno == EINTR)
			break; /* a signal: the caller looks */
		now = cpi2_clock_us(CLOCK_MONOTONIC);
		for (nfds_t k = 0; k < n; k++)
			scrape_step(&sv->v[which[k]]->scrape, rc > 0 ? fds[k].revents : 0, now);
	}
	free(fds);
	free(which);
}

static void put(char *out, size_t size, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*o >= size)
		return;
	va_start(ap, fmt);
	k = vsnprintf(out + *o, size - *o, fmt, ap);
	va_end(ap);
	*o += k > 0 ? (size_t)k : 0;
}

/* " (reason n, reason n)" for the non-zero counts */
static void reasons(char *out, size_t size, size_t *o, const uint64_t *v)
{
	bool any = false;

	for (int r = 1; r < SVC_REASONS; r++) {
		if (!v[r])
			continue;
		put(out, size, o, "%s%s %llu", any ? ", " : " (", svc_reason_name(r),
		    (unsigned long long)v[r]);
		any = true;
	}
	if (any)
		put(out, size, o, ")");
}

static uint64_t total(const uint64_t *v)
{
	uint64_t n = 0;

	for (int r = 0; r < SVC_REASONS; r++)
		n += v[r];
	return n;
}

void services_counts_text(struct collector *c, char *out, size_t size)
{
	struct svc_counts *k = &c->services.counts;
	size_t o = 0;

	out[0] = '\0';
	put(out, size, &o, "; scrapes: %llu, %llu failed", (unsigned long long)k->scrapes,
	    (unsigned long long)total(k->failed));
	reasons(out, size, &o, k->failed);
	put(out, size, &o, "; cpu_per_op %llu, %llu null", (unsigned long long)k->cpu_per_op,
	    (unsigned long long)total(k->cpu_per_op_null));
	reasons(out, size, &o, k->cpu_per_op_null);
	put(out, size, &o, "; latency %llu, %llu null", (unsigned long long)k->latency,
	    (unsigned long long)total(k->latency_null));
	reasons(out, size, &o, k->latency_null);
	memset(k, 0, sizeof(*k));
}

void services_free(struct services *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		task_free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}
