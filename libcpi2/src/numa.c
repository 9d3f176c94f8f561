/* numa: topology from sysfs, per-node memory and per-CPU time of a cgroup, the NUMA score. */
#include <cpi2/numa.h>
#include <cpi2/textfile.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* a decimal number without sign, at most max; -1 when there is none or it is larger */
static long long number(const char **p, unsigned long long max)
{
	unsigned long long v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		if (v > (max - (unsigned long long)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned long long)(*s - '0');
		s++;
	}
	*p = s;
	return (long long)v;
}

/* the same for counts up to UINT64_MAX */
static int number_u64(const char **p, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

int cpi2_cpu_list_parse(const char *text, int *v, int max)
{
	const char *p = text;
	int n = 0;

	for (;;) {
		long long a = number(&p, INT_MAX), b;

		if (a < 0)
			return -EINVAL;
		b = a;
		if (*p == '-') {
			p++;
			b = number(&p, INT_MAX);
			if (b < a)
				return -EINVAL;
		}
		for (long long c = a; c <= b; c++) {
			if (n == max)
				return -EINVAL;
			v[n++] = (int)c;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		return *p ? -EINVAL : n;
	}
}

/* a line of blank-separated counts (blanks around, one line end after) into v: how many, or
 * -EINVAL (none, more than max, anything else) */
static int count_row(const char *text, uint64_t *v, int max)
{
	const char *p = text;
	int n = 0;

	while (*p == ' ')
		p++;
	while (*p && *p != '\n') {
		if (n == max || number_u64(&p, &v[n]))
			return -EINVAL;
		n++;
		if (*p != ' ' && *p != '\n' && *p)
			return -EINVAL;
		while (*p == ' ')
			p++;
	}
	if (*p == '\n')
		p++;
	return *p || n == 0 ? -EINVAL : n;
}

int cpi2_numa_parse_distance(const char *text, int *d, int max)
{
	uint64_t v[CPI2_NUMA_MAX_NODES];
	int n = count_row(text, v, max < CPI2_NUMA_MAX_NODES ? max : CPI2_NUMA_MAX_NODES);

	for (int i = 0; i < n; i++) {
		if (v[i] < 1 || v[i] > 255)
			return -EINVAL;
		d[i] = (int)v[i];
	}
	return n;
}

static int node_index(const struct cpi2_numa_topo *t, long long id)
{
	for (int i = 0; i < t->n; i++)
		if (t->id[i] == id)
			return i;
	return -1;
}

int cpi2_numa_topo_load(const char *dir, struct cpi2_numa_topo *t, char *err, size_t errsz)
{
	char path[PATH_MAX], text[16384];
	int ids[CPI2_NUMA_MAX_NODES], cpus[CPI2_NUMA_MAX_CPUS], n, rc;

	if (!dir)
		dir = "/sys/devices/system/node";
	memset(t, 0, sizeof(*t));
	for (int c = 0; c < CPI2_NUMA_MAX_CPUS; c++)
		t->cpu_node[c] = -1;
	snprintf(path, sizeof(path), "%s/online", dir);
	if ((rc = cpi2_read_text(path, text, sizeof(text))) == -ENOENT) {
		snprintf(path, sizeof(path), "%s/possible", dir);
		rc = cpi2_read_text(path, text, sizeof(text));
	}
	if (rc < 0) {
		snprintf(err, errsz, "numa: %s: %s", path, strerror(-rc));
		return rc;
	}
	if ((n = cpi2_cpu_list_parse(text, ids, CPI2_NUMA_MAX_NODES)) <= 0) {
		snprintf(err, errsz, "numa: %s: malformed node list (or more than %d nodes)", path,
			 CPI2_NUMA_MAX_NODES);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		if (i > 0 && ids[i] <= ids[i - 1]) {
			snprintf(err, errsz, "numa: %s: nodes not in ascending order", path);
			return -EINVAL;
		}
		t->id[i] = ids[i];
	}
	t->n = n;
	for (int i = 0; i < n; i++) {
		int m;

		snprintf(path, sizeof(path), "%s/node%d/distance", dir, ids[i]);
		if ((rc = cpi2_read_text(path, text, sizeof(text))) < 0) {
			snprintf(err, errsz, "numa: %s: %s", path, strerror(-rc));
			return rc;
		}
		if (cpi2_numa_parse_distance(text, t->dist[i], CPI2_NUMA_MAX_NODES) != n) {
			snprintf(err, errsz, "numa: %s: not %d distances of 1-255", path, n);
			return -EINVAL;
		}
		snprintf(path, sizeof(path), "%s/node%d/cpulist", dir, ids[i]);
		if ((rc = cpi2_read_text(path, text, sizeof(text))) < 0) {
			snprintf(err, errsz, "numa: %s: %s", path, strerror(-rc));
			return rc;
		}
		if (text[0] == '\n' || text[0] == '\0') /* a node with memory and no CPU */
			continue;
		if ((m = cpi2_cpu_list_parse(text, cpus, CPI2_NUMA_MAX_CPUS)) < 0) {
			snprintf(err, errsz, "numa: %s: malformed CPU list", path);
			return -EINVAL;
		}
		for (int k = 0; k < m; k++) {
			if (cpus[k] >= CPI2_NUMA_MAX_CPUS || t->cpu_node[cpus[k]] >= 0) {
				snprintf(err, errsz, "numa: %s: CPU %d beyond %d or in two nodes",
					 path, cpus[k], CPI2_NUMA_MAX_CPUS);
				return -EINVAL;
			}
			t->cpu_node[cpus[k]] = (int16_t)i;
		}
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (t->dist[i][j] < t->dist[i][i]) {
				snprintf(
				    err, errsz,
				    "numa: %s: node%d is nearer to node%d (%d) than to itself (%d)",
				    dir, ids[i], ids[j], t->dist[i][j], t->dist[i][i]);
				return -EINVAL;
			}
	return 0;
}

/* one line "KEY[=N] N<id>=<count>..." into per-node counts (v, by node index) */
static int stat_line(const char *line, const struct cpi2_numa_topo *t, uint64_t *v)
{
	const char *p = line;
	uint64_t total;

	while (*p && *p != ' ' && *p != '=' && *p != '\n')
		p++;
	if (p == line)
		return -EINVAL;
	if (*p == '=') {
		p++;
		if (number_u64(&p, &total)) /* the line's total: checked, not used */
			return -EINVAL;
	}
	for (int i = 0; i < t->n; i++)
		v[i] = 0;
	while (*p == ' ') {
		long long id;
		int i;

		p++;
		if (*p == '\n' || *p == '\0')
			break;
		if (*p++ != 'N' || (id = number(&p, INT_MAX)) < 0 || *p++ != '=' ||
		    (i = node_index(t, id)) < 0 || number_u64(&p, &v[i]))
			return -EINVAL;
	}
	return *p == '\n' || *p == '\0' ? 0 : -EINVAL;
}

int cpi2_numa_parse_stat(const char *text, const struct cpi2_numa_topo *t, uint64_t *mem)
{
	uint64_t v[CPI2_NUMA_MAX_NODES], sum[CPI2_NUMA_MAX_NODES] = {0};
	bool v1 = false, v2 = false;

	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		size_t klen = strcspn(line, " =\n");
		bool total = klen == 5 && strncmp(line, "total", 5) == 0 && line[5] == '=';
		bool anon_file =
		    line[klen] == ' ' && ((klen == 4 && strncmp(line, "anon", 4) == 0) ||
					  (klen == 4 && strncmp(line, "file", 4) == 0));

		if (stat_line(line, t, v))
			return -EINVAL;
		if (total && !v1) {
			v1 = true;
			for (int i = 0; i < t->n; i++)
				mem[i] = v[i];
		} else if (anon_file) {
			v2 = true;
			for (int i = 0; i < t->n; i++) {
				if (sum[i] > UINT64_MAX - v[i])
					return -EINVAL;
				sum[i] += v[i];
			}
		}
		if (!end)
			break;
		line = end + 1;
	}
	if (v1)
		return 0;
	if (!v2)
		return -ENOENT;
	for (int i = 0; i < t->n; i++)
		mem[i] = sum[i];
	return 0;
}

int cpi2_numa_parse_percpu(const char *text, uint64_t *v, int max)
{
	return count_row(text, v, max);
}

int cpi2_numa_cpu_by_node(const struct cpi2_numa_topo *t, const int *cpu, const uint64_t *v, int n,
			  uint64_t *node)
{
	for (int i = 0; i < t->n; i++)
		node[i] = 0;
	for (int k = 0; k < n; k++) {
		int i;

		if (!v[k])
			continue;
		if (cpu[k] < 0 || cpu[k] >= CPI2_NUMA_MAX_CPUS || (i = t->cpu_node[cpu[k]]) < 0)
			return -EINVAL;
		node[i] = node[i] > UINT64_MAX - v[k] ? UINT64_MAX : node[i] + v[k];
	}
	return 0;
}

int cpi2_numa_score_table(int n, const int *dist, int stride, const uint64_t *cpu,
			  const uint64_t *mem, double *score)
{
	double csum = 0, msum = 0, s = 0;

	for (int i = 0; i < n; i++) {
		csum += (double)cpu[i];
		msum += (double)mem[i];
	}
	if (csum <= 0 || msum <= 0)
		return -ENODATA;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			s += (double)cpu[i] / csum * ((double)mem[j] / msum) *
			     ((double)dist[i * stride + i] / (double)dist[i * stride + j]);
	*score = s > 1 ? 1 : s; /* rounding only: each term's weight sums to 1, each ratio <= 1 */
	return 0;
}

int cpi2_numa_score(const struct cpi2_numa_topo *t, const uint64_t *cpu, const uint64_t *mem,
		    double *score)
{
	return cpi2_numa_score_table(t->n, &t->dist[0][0], CPI2_NUMA_MAX_NODES, cpu, mem, score);
}
