/* latency: a bounded sample of latencies (ms) and its percentiles, for the log and the bench. */
#ifndef CPI2_ENFORCER_LATENCY_H
#define CPI2_ENFORCER_LATENCY_H

#define LATENCY_MAX 100000

struct latency {
	double ms[LATENCY_MAX];
	int n;
};

/* Record one latency (dropped once LATENCY_MAX are held). */
void latency_add(struct latency *l, double ms);

/* The p-th percentile (0..100) of what was recorded, or -1 if nothing was. */
double latency_percentile(struct latency *l, double p);

/* Log count, p50, p99 and max under a title (nothing if empty). */
void latency_report(struct latency *l, const char *title);

#endif
