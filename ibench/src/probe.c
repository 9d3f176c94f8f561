/* probe: see probe.h. */
#include "probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

#include <cpi2/stats.h>

static const char *const kinds[IBENCH_PROBE_KINDS] = {"cache", "cpu", "mem"};
static const uint64_t default_ops[IBENCH_PROBE_KINDS] = {8192, 65536, 2048};

int ibench_probe_kind_from_name(const char *name)
{
	return ibench_name_index(kinds, IBENCH_PROBE_KINDS, name);
}

const char *ibench_probe_kind_name(int kind)
{
	return kind >= 0 && kind < IBENCH_PROBE_KINDS ? kinds[kind] : "?";
}

int ibench_probe_plan(struct ibench_probe *p, int kind, uint64_t unit_ops, uint64_t max_units,
		      const struct ibench_caches *caches, uint64_t mem_available, char *err,
		      size_t errsz)
{
	memset(p, 0, sizeof(*p));
	if (kind < 0 || kind >= IBENCH_PROBE_KINDS) {
		snprintf(err, errsz, "unknown probe kind (cache, cpu or mem)");
		return -EINVAL;
	}
	p->kind = kind;
	p->unit_ops = unit_ops ? unit_ops : default_ops[kind];
	p->max_units = max_units;
	if (kind == IBENCH_PROBE_CACHE) {
		p->footprint = caches->l2 * IBENCH_PROBE_CACHE_L2_MULTIPLE;
		if (p->footprint > caches->llc / 2)
			p->footprint = caches->llc / 2;
	} else if (kind == IBENCH_PROBE_MEM) {
		p->footprint = caches->llc * IBENCH_PROBE_MEM_LLC_MULTIPLE;
	}
	p->footprint = p->footprint / IBENCH_LINE * IBENCH_LINE;
	if (kind != IBENCH_PROBE_CPU && p->footprint < 2 * IBENCH_LINE)
		p->footprint = 2 * IBENCH_LINE;
	if (p->footprint / IBENCH_LINE > UINT32_MAX) {
		snprintf(err, errsz, "probe %s: %llu lines are more than a chase can hold",
			 kinds[kind], (unsigned long long)(p->footprint / IBENCH_LINE));
		return -EINVAL;
	}
	if (mem_available &&
	    (double)p->footprint > (double)mem_available * IBENCH_MEM_MAX_FRACTION) {
		snprintf(err, errsz,
			 "probe %s would allocate %llu MiB, more than %.0f%% of the %llu MiB "
			 "available; refused",
			 kinds[kind], (unsigned long long)(p->footprint >> 20),
			 IBENCH_MEM_MAX_FRACTION * 100, (unsigned long long)(mem_available >> 20));
		return -EINVAL;
	}
	return 0;
}

int ibench_probe_setup(struct ibench_probe *p)
{
	size_t n = p->footprint / IBENCH_LINE, words = IBENCH_LINE / sizeof(void *);
	uint32_t *perm;
	uint64_t s = 0x853C49E6748FEA9Bull;

	p->cap = 4096;
	p->unit_ns = malloc(p->cap * sizeof(*p->unit_ns));
	if (!p->unit_ns)
		return -ENOMEM;
	if (p->kind == IBENCH_PROBE_CPU) {
		p->x = 1;
		return 0;
	}
	p->buf = ibench_map(p->footprint, IBENCH_MAP_HUGE);
	perm = malloc(n * sizeof(*perm));
	if (!p->buf || !perm) {
		free(perm);
		return -ENOMEM;
	}
	/* Sattolo's shuffle: a single cycle through all n lines, in random order */
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j;
		uint32_t t;

		s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
		j = (size_t)(((s * 0x2545F4914F6CDD1Dull) >> 32) * i >> 32);
		t = perm[i], perm[i] = perm[j], perm[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		p->buf[i * words] = &p->buf[(size_t)perm[i] * words];
	free(perm);
	p->cursor = p->buf;
	for (size_t i = 0; i < n; i++)
		p->cursor = *p->cursor;
	return 0;
}

void ibench_probe_unit(struct ibench_probe *p)
{
	if (p->kind == IBENCH_PROBE_CPU) {
		uint64_t x = p->x;

		for (uint64_t i = 0; i < p->unit_ops; i++)
			x = x * 0x9E3779B97F4A7C15ull + i;
		p->x = x;
	} else {
		void **c = p->cursor;

		for (uint64_t i = 0; i < p->unit_ops; i++)
			c = *c;
		p->cursor = c;
	}
}

void ibench_probe_loop(struct ibench_probe *p, struct ibench_run *run)
{
	int64_t now = cpi2_clock_ns(CLOCK_MONOTONIC);

	while (!atomic_load_explicit(&run->stop, memory_order_relaxed) && now < run->deadline_ns &&
	       (!p->max_units || p->units < p->max_units) && p->units < IBENCH_PROBE_MAX_UNITS) {
		int64_t t0 = now;

		ibench_probe_unit(p);
		now = cpi2_clock_ns(CLOCK_MONOTONIC);
		if (p->units == p->cap) {
			uint64_t *more = realloc(p->unit_ns, 2 * p->cap * sizeof(*more));

			if (!more)
				break; /* the units so far are reported */
			p->unit_ns = more;
			p->cap *= 2;
		}
		p->unit_ns[p->units++] = (uint64_t)(now - t0);
	}
	atomic_fetch_add(&run->finished, 1);
}

uint64_t ibench_probe_percentile(struct ibench_probe *p, double q)
{
	return cpi2_percentile_u64(p->unit_ns, p->units, q);
}

void ibench_probe_free(struct ibench_probe *p)
{
	ibench_unmap(p->buf, p->footprint);
	free(p->unit_ns);
	p->buf = NULL;
	p->unit_ns = NULL;
}
