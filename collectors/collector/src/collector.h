/* collector: one host's sampling windows. A window discovers the cgroups under the roots, maps
 * them to jobs, opens one perf event group per cgroup per CPU (within the descriptor budget,
 * rotating cgroups across windows beyond it), counts for the window and turns the counts and
 * the cgroups' CPU usage into CpiSamples. */
#ifndef COLLECTOR_COLLECTOR_H
#define COLLECTOR_COLLECTOR_H

#include "conf.h"
#include "discover.h"
#include "groups.h"
#include "perf.h"
#include "resources.h"
#include "rules.h"
#include "services.h"
#include "tasknuma.h"

#include <cpi2/sample.h>

#include <stdint.h>
#include <time.h>

#define COLLECTOR_MAX_CPUS 1024

/* one cgroup counted in the current window */
struct counted {
	const char *task; /* in the discovery list */
	int root;
	struct mapping map;
	int *fds;		   /* ncpu * n_events, owned by the collector's groups */
	struct perf_reading *base; /* the counts at the window's start (the groups') */
	bool has_base;
	uint64_t usage0_ns;
	bool has_usage;
	const struct res_files *res; /* its pressure and resctrl files (the groups') */
	struct res_reading res0;     /* their values at the window's start */
	bool has_numa_cpu0;	     /* cpuacct.usage_percpu by node at the start (v1) */
	uint64_t numa_cpu0[CPI2_NUMA_MAX_NODES];
	struct svc_task *svc; /* its metrics endpoint (the services'), or NULL */
};

/* what the last window saw; parents: unmapped cgroups holding others, not published;
 * unlabelled: tasks only a labels entry maps (Kubernetes pods) without one, not published */
struct window_stats {
	size_t discovered, ignored, unmapped, parents, unlabelled, counted, deferred, failed,
	    vanished, samples;
};

/* a set of strings (unmapped cgroups and other things reported once), bounded: cgroups come
 * and go, so once it holds ONCE_SET_MAX it is emptied and starts again (a cgroup still there
 * is then reported once more) */
#define ONCE_SET_MAX 4096
struct once_set {
	char **v;
	size_t n, cap;
};

struct collector {
	const struct collector_conf *conf;
	struct perf_spec spec;
	int cpus[COLLECTOR_MAX_CPUS];
	int ncpu;
	struct cg_root *roots;
	int n_roots;
	struct rules rules;
	char host[256], platform[256];
	bool resctrl;	      /* resctrl monitoring is mounted at conf->resctrl */
	struct groups groups; /* perf groups held open across windows */
	bool continuous;      /* windows follow each other within a second: groups always count */
	long fd_budget;	      /* event descriptors a window may hold */
	size_t rotate;	      /* first task of the next window when over budget */
	struct cg_list found; /* this window's discovery */
	struct counted *counted; /* this window's counted cgroups */
	size_t n_counted, cap_counted;
	int64_t start_us; /* wall clock at the window's start */
	struct timespec start_mono;
	bool open; /* a window is being counted */
	struct window_stats stats;
	struct once_set reported;
	struct cpi2_numa_topo *numa; /* the machine's nodes, NULL when they cannot be read */
	struct services services;    /* the tasks scraped for cpu_per_op and latency */
};

/* Prepare from conf: CPUs, platform, host, roots, rules, events (probed), descriptor budget.
 * Returns 0 or -errno with a reason (the caller decides it is fatal). */
int collector_init(struct collector *c, const struct collector_conf *conf, char *err, size_t errsz);

/* Start a window: discover, map, open the groups of new cgroups and close those of cgroups no
 * longer counted, enable them (unless continuous: then they count all along), read the counts,
 * CPU usage and the other signals the window's values are taken from. */
int collector_window_begin(struct collector *c);

/* Called with every sample of a window; a non-zero return is counted and ignored. */
typedef int (*collector_emit_fn)(void *arg, const struct cpi2_sample *s);

/* End the window: read (and disable, unless continuous), emit one sample per counted cgroup;
 * the sample of a task with a metrics endpoint is emitted by services_poll once its scrape is
 * done (services.h). The groups stay open: the next window reuses those of the cgroups it
 * counts again. */
int collector_window_end(struct collector *c, collector_emit_fn emit, void *arg);

/* Close every perf descriptor without emitting anything (shutdown in the middle); the next
 * window opens its groups afresh. */
void collector_window_abort(struct collector *c);

/* True the first time s is seen (then remembered; when ONCE_SET_MAX are held, the set is
 * emptied first). */
bool once_set_add(struct once_set *set, const char *s);

/* Free everything. */
void collector_free(struct collector *c);

#endif
