/* numa_model: see numa_model.h. */
#include "numa_model.h"

#include <cpi2/numa.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *why, size_t whysz, const char *what, const char *k, const char *v, int hi)
{
	snprintf(why, whysz, "%s: '%s' is not %s%d", k, v, what, hi);
	return -EINVAL;
}

static int number(const char *k, const char *v, double lo, double hi, double *out, char *why,
		  size_t whysz)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !(d >= lo && d <= hi)) {
		snprintf(why, whysz, "%s: '%s' is not a number in [%g, %g]", k, v, lo, hi);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

int numa_key_hosts(struct numa_host_conf *h, const char *k, const char *v, char *why, size_t whysz)
{
	double d;

	if (!strcmp(k, "numa_nodes")) {
		if (number(k, v, 1, NUMA_MODEL_MAX_NODES, &d, why, whysz) || d != (int)d)
			return bad(why, whysz, "1-", k, v, NUMA_MODEL_MAX_NODES);
		h->nodes = (int)d;
		return 0;
	}
	if (!strcmp(k, "numa_distance")) {
		if (number(k, v, 11, 255, &d, why, whysz) || d != (int)d)
			return bad(why, whysz, "11-", k, v, 255);
		h->distance = (int)d;
		return 0;
	}
	return 1;
}

int numa_key_job(struct numa_job_conf *j, const char *k, const char *v, char *why, size_t whysz)
{
	if (!strcmp(k, "numa_penalty"))
		return number(k, v, 0, 100, &j->penalty, why, whysz);
	return 1;
}

int numa_key_event(struct numa_event_conf *e, const char *k, const char *v, char *why, size_t whysz)
{
	double d;

	if (!strcmp(k, "cpu_node") || !strcmp(k, "mem_node")) {
		if (number(k, v, 0, NUMA_MODEL_MAX_NODES - 1, &d, why, whysz) || d != (int)d)
			return bad(why, whysz, "0-", k, v, NUMA_MODEL_MAX_NODES - 1);
		*(k[0] == 'c' ? &e->cpu_node1 : &e->mem_node1) = (int)d + 1;
		return 0;
	}
	if (!strcmp(k, "mem_share"))
		return number(k, v, 0.01, 1, &e->mem_share, why, whysz);
	return 1;
}

int numa_event_check(const struct numa_event_conf *e, char *why, size_t whysz)
{
	if (!e->cpu_node1 && !e->mem_node1)
		snprintf(why, whysz, "event: kind = numa needs cpu_node or mem_node");
	else if (e->mem_share > 0 && !e->mem_node1)
		snprintf(why, whysz, "event: mem_share needs mem_node");
	else
		return 0;
	return -EINVAL;
}

bool numa_task(const struct numa_host_conf *h, const struct numa_job_conf *j, int home,
	       const struct numa_event_conf *ev, double *score, double *cpi_factor)
{
	int n = h->nodes, dist[NUMA_MODEL_MAX_NODES * NUMA_MODEL_MAX_NODES];
	uint64_t cpu[NUMA_MODEL_MAX_NODES] = {0}, mem[NUMA_MODEL_MAX_NODES] = {0};
	const uint64_t whole = 1000000; /* shares in millionths */

	*cpi_factor = 1.0;
	if (n < 1)
		return false;
	home = ((home % n) + n) % n;
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++)
			dist[a * n + b] = a == b ? 10 : h->distance ? h->distance : 21;
	int cn = ev && ev->cpu_node1 ? (ev->cpu_node1 - 1) % n : home;
	int mn = ev && ev->mem_node1 ? (ev->mem_node1 - 1) % n : home;
	uint64_t moved = ev && ev->mem_node1
			     ? (uint64_t)((ev->mem_share > 0 ? ev->mem_share : 1.0) * (double)whole)
			     : whole;
	cpu[cn] = whole;
	mem[mn] += moved;
	mem[home] += whole - moved;
	if (cpi2_numa_score_table(n, dist, n, cpu, mem, score))
		return false;
	*cpi_factor = 1.0 + j->penalty * (1.0 - *score);
	return true;
}
