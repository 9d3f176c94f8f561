/* tasknuma: see tasknuma.h. */
#include "tasknuma.h"

#include <cpi2/textfile.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>

int tasknuma_read_percpu(const struct cpi2_numa_topo *t, const char *dir, uint64_t *node)
{
	static char text[CPI2_NUMA_MAX_CPUS * 21 + 2];
	static uint64_t v[CPI2_NUMA_MAX_CPUS];
	static int ids[CPI2_NUMA_MAX_CPUS];
	char path[PATH_MAX];
	int n;

	if (snprintf(path, sizeof(path), "%s/cpuacct.usage_percpu", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((n = cpi2_read_text(path, text, sizeof(text))) < 0)
		return n;
	if ((n = cpi2_numa_parse_percpu(text, v, CPI2_NUMA_MAX_CPUS)) < 0)
		return n;
	for (int k = 0; k < n; k++)
		ids[k] = k; /* one number per possible CPU, CPU 0 first */
	return cpi2_numa_cpu_by_node(t, ids, v, n, node);
}

int tasknuma_perf_by_node(const struct cpi2_numa_topo *t, const int *cpus, int ncpu,
			  const struct perf_reading *readings, uint64_t *node)
{
	static uint64_t v[CPI2_NUMA_MAX_CPUS];

	if (ncpu > CPI2_NUMA_MAX_CPUS)
		return -EINVAL;
	for (int k = 0; k < ncpu; k++) {
		const struct perf_reading *r = &readings[k];

		v[k] = r->time_running ? (uint64_t)((double)r->value[0] * (double)r->time_enabled /
						    (double)r->time_running)
				       : 0;
	}
	return cpi2_numa_cpu_by_node(t, cpus, v, ncpu, node);
}

int tasknuma_read_memory(const struct cpi2_numa_topo *t, const char *const *dirs, int n,
			 uint64_t *mem)
{
	static char text[65536];
	char path[PATH_MAX];
	int rc = -ENOENT;

	for (int i = 0; i < n && rc == -ENOENT; i++) {
		if (!dirs[i][0])
			continue;
		if (snprintf(path, sizeof(path), "%s/memory.numa_stat", dirs[i]) >=
		    (int)sizeof(path))
			return -ENAMETOOLONG;
		rc = cpi2_read_text(path, text, sizeof(text));
	}
	return rc < 0 ? rc : cpi2_numa_parse_stat(text, t, mem);
}
