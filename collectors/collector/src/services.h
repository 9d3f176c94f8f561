/* services: the tasks whose labels entry names a metrics endpoint (scrape=), scraped once per
 * window so that their samples carry cpu_per_op and latency (svcsignal.h).
 *
 * When a window ends, each such task's sample waits while its endpoint is scraped (scrape.h);
 * the scrape runs during the next wait of the collector's loop, never in a window's way, and the
 * sample is published when the answer is in, or at the scrape's deadline with the two values
 * null. The scrape that ends a window is the start of the next one when windows follow each
 * other (one scrape per window); otherwise, or when there is no good scrape to start from (the
 * first window, one after a failure), the task is also scraped when the window begins. The CPU
 * time of cpu_per_op is the task's cgroup CPU time between the two scrapes, read when each
 * answer came. Every scrape that fails and every value left null is counted by its reason in
 * the window's log line, and each (task, reason) is logged once with the details. */
#ifndef COLLECTOR_SERVICES_H
#define COLLECTOR_SERVICES_H

#include "scrape.h"
#include "svcsignal.h"

#include <cpi2/sample.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct collector;
struct counted;

/* one scraped task, kept across windows while it is counted (or its sample waits) */
struct svc_task {
	char *task; /* owned */
	int root;
	char *usage_dir;		  /* its CPU time (cpu.stat / cpuacct.usage) */
	char *url, *work, *latency, *qtl; /* the labels' text, to see a change (owned) */
	struct svc_conf conf;
	bool bad; /* the settings do not parse: not scraped */
	struct scrape scrape;
	bool ending;		 /* the scrape in flight ends a window (its sample waits) */
	struct svc_point base;	 /* the last good scrape, where the next window's values start */
	struct svc_point cur;	 /* the scrape just done */
	struct cpi2_sample wait; /* the window's sample, waiting for the scrape */
	char job[256], task_id[256];
	bool seen; /* counted in this window */
};

/* counts since the last window's log line */
struct svc_counts {
	uint64_t scrapes, failed[SVC_REASONS]; /* scrapes done, failed ones by reason */
	uint64_t cpu_per_op, latency;	       /* values published */
	uint64_t cpu_per_op_null[SVC_REASONS], latency_null[SVC_REASONS];
};

struct services {
	struct svc_task **v; /* sorted by (root, task) */
	size_t n, cap;
	struct svc_counts counts;
};

/* After a window's cgroups are counted: the scraped tasks among them (t->svc set for each),
 * their settings (re)read from the labels when they changed; a task whose settings do not
 * parse, or beyond scrape_max_tasks, is not scraped (logged once); tasks no longer counted are
 * let go once nothing of theirs waits. Then the scrapes that start this window. */
void services_begin(struct collector *c);

/* Called with each sample when it is complete; a non-zero return is ignored. */
typedef int (*services_emit_fn)(void *arg, const struct cpi2_sample *s);

/* At the end of a window, for a counted task with t->svc: keep its sample s (copied) until its
 * scrape is done, and start that scrape. */
void services_end(struct collector *c, struct counted *t, const struct cpi2_sample *s,
		  services_emit_fn emit, void *arg);

/* Drive the scrapes in flight until until_us (monotonic) or until none is left, publishing each
 * waiting sample with emit as its scrape ends. Returns early on a signal (EINTR). */
void services_poll(struct collector *c, int64_t until_us, services_emit_fn emit, void *arg);

/* Whether a scrape is in flight. */
bool services_busy(const struct collector *c);

/* The counts since the last call, as text for the window's log line (then zeroed). */
void services_counts_text(struct collector *c, char *out, size_t size);

/* Close and free everything (waiting samples are dropped). */
void services_free(struct services *sv);

#endif
