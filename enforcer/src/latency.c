/* latency: see latency.h. */
#include "latency.h"

#include <stdlib.h>

#include <cpi2/log.h>

void latency_add(struct latency *l, double ms)
{
	if (l->n < LATENCY_MAX)
		l->ms[l->n++] = ms;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double latency_percentile(struct latency *l, double p)
{
	int i;

	if (l->n == 0)
		return -1;
	qsort(l->ms, (size_t)l->n, sizeof(double), cmp);
	i = (int)(p / 100.0 * (l->n - 1) + 0.5);
	return l->ms[i];
}

void latency_report(struct latency *l, const char *title)
{
	if (l->n == 0)
		return;
	cpi2_log(CPI2_LOG_INFO, "enforcer", "%s: n=%d p50=%.2f ms p99=%.2f ms max=%.2f ms", title,
		 l->n, latency_percentile(l, 50), latency_percentile(l, 99),
		 latency_percentile(l, 100));
}
