/* svcsignal: a service's own signals from its Prometheus endpoint (CpiSample v4). A task's
 * labels entry names the endpoint, a work counter and a latency histogram or summary
 * (svc_conf); each scrape of the endpoint is a point (svc_point: the selected series' values
 * and the task's CPU time when the answer came); two points give the window's values:
 *
 *   cpu_per_op = CPU seconds between the points / increase of the work counter between them
 *   latency    = increase of FAMILY_sum / increase of FAMILY_count (the mean), or with a
 *                quantile Q: a histogram's from the increases of its buckets (as PromQL's
 *                histogram_quantile), a summary's FAMILY{quantile="Q"} at the second point
 *
 * summed over every series the selector picks (a series must be in both points to count).
 * Whatever cannot be computed is null with a reason (enum svc_reason), never 0. */
#ifndef COLLECTOR_SVCSIGNAL_H
#define COLLECTOR_SVCSIGNAL_H

#include <cpi2/promtext.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Why a scrape or a value gave nothing. */
enum svc_reason {
	SVC_OK,
	SVC_CONNECT,	 /* no connection, or it failed while sending or reading */
	SVC_TIMEOUT,	 /* no whole answer before the deadline */
	SVC_HTTP,	 /* not a 200 answer in plain text, or an answer cut short */
	SVC_TOO_LARGE,	 /* more bytes, or more selected series, than allowed */
	SVC_GARBAGE,	 /* not the Prometheus text format, or a series given twice */
	SVC_MISSING,	 /* the selected series are not in the answer (or are of another type) */
	SVC_AMBIGUOUS,	 /* a summary's quantile selector picks more than one series */
	SVC_RESET,	 /* a counter (or the task's CPU time) went back: a restart */
	SVC_NO_WORK,	 /* the work counter did not move, or no request completed */
	SVC_NO_BASELINE, /* no good scrape before this one to compare with */
	SVC_NO_CPU,	 /* the task's CPU time could not be read */
	SVC_REASONS
};

/* The reason's name in logs ("timeout", "reset", ...). */
const char *svc_reason_name(int reason);

/* one task's endpoint and what to read from it */
struct svc_conf {
	struct sockaddr_storage addr; /* the endpoint: an IP address and a port */
	socklen_t addrlen;
	char host[64];	/* the Host header: ADDRESS:PORT as in the URL */
	char path[512]; /* the request target, from '/' */
	bool has_work, has_latency;
	struct cpi2_prom_selector work, latency;
	double quantile; /* < 0: the mean */
};

/* Parse a task's settings (url required; work, latency and quantile may be NULL). The URL is
 * http://ADDRESS[:PORT][/PATH] with ADDRESS an IPv4 address or a bracketed IPv6 one (never a
 * name: nothing is looked up); PORT 80 and PATH /metrics by default. quantile is a number in
 * [0, 1]. Returns 0 or -EINVAL with a reason (c is then empty). */
int svc_conf_parse(struct svc_conf *c, const char *url, const char *work, const char *latency,
		   const char *quantile, char *err, size_t errsz);

void svc_conf_free(struct svc_conf *c);

/* one selected series' value in a point */
enum svc_role { SVC_WORK, SVC_SUM, SVC_COUNT, SVC_BUCKET, SVC_QUANTILE };

struct svc_entry {
	uint64_t key; /* the series' labels (without le) */
	double le;    /* a bucket's upper bound */
	double value;
	uint8_t role;
};

#define SVC_MAX_ENTRIES 4096 /* selected series of one scrape; more is SVC_TOO_LARGE */

/* one scrape */
struct svc_point {
	bool ok;
	int reason; /* when !ok */
	bool has_cpu;
	uint64_t cpu_ns; /* the task's CPU time when the answer came */
	struct svc_entry *v;
	size_t n, cap;
};

/* Take the selected series of an exposition (text, changed in place) into p, sorted; p->ok
 * false with the reason (and detail) when it is not the text format, selects a series twice
 * or too many. */
void svc_point_parse(const struct svc_conf *c, char *text, size_t len, struct svc_point *p,
		     char *detail, size_t dsz);

/* Empty p (keeping its memory) / free it. */
void svc_point_clear(struct svc_point *p);
void svc_point_free(struct svc_point *p);

/* the window's values; each has_* false with its reason */
struct svc_values {
	bool has_cpu_per_op, has_latency;
	double cpu_per_op, latency;
	int cpu_per_op_reason, latency_reason;
};

/* The values from the points a (NULL: none) and b. */
void svc_compute(const struct svc_conf *c, const struct svc_point *a, const struct svc_point *b,
		 struct svc_values *out);

#endif
