/* metrics: an agent's metrics as Prometheus text (exposition format 0.0.4), for its /metrics
 * (cpi2/httpd.h). One family at a time: cpi2_metrics_family writes its "# HELP" and "# TYPE"
 * lines, then cpi2_metrics_value one line per series. Names follow the exporters' conventions
 * (cpi2_<program>_..., units in the name, _total for counters); label values are the agents'
 * own enum symbols (low cardinality), escaped all the same. */
#ifndef CPI2_METRICS_H
#define CPI2_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* A text that grows as needed; failed once memory ran out (the text is then cut). */
struct cpi2_metrics {
	char *text;
	size_t len, cap;
	int failed;
};

/* Empty the text (keeps its memory). */
void cpi2_metrics_reset(struct cpi2_metrics *m);

/* Free the text. */
void cpi2_metrics_free(struct cpi2_metrics *m);

/* Append text as it is (another text's families). */
void cpi2_metrics_append(struct cpi2_metrics *m, const char *text, size_t len);

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void cpi2_metrics_family(struct cpi2_metrics *m, const char *name, const char *type,
			 const char *help);

/* One series: name{k1="v1",...} value; labels is NULL or a NULL-terminated list of names and
 * values ("kind", "APPLIED", NULL). */
void cpi2_metrics_value(struct cpi2_metrics *m, const char *name, const char *const *labels,
			double value);

/* A histogram of fixed upper bounds (ascending; the +Inf bucket is implied). */
#define CPI2_HISTOGRAM_MAX_BOUNDS 24
struct cpi2_histogram {
	const double *bounds;
	int n_bounds;
	uint64_t counts[CPI2_HISTOGRAM_MAX_BOUNDS + 1]; /* per bucket, not cumulative */
	uint64_t count;
	double sum;
};

/* Count one observation. */
void cpi2_histogram_observe(struct cpi2_histogram *h, double v);

/* The histogram's family: name_bucket{le=...} (cumulative), name_sum, name_count. */
void cpi2_metrics_histogram(struct cpi2_metrics *m, const char *name, const char *help,
			    const struct cpi2_histogram *h);

#endif
