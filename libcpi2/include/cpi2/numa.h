/* numa: a machine's NUMA topology from /sys/devices/system/node (nodes, their CPUs, the
 * distance table), a cgroup's memory per node (memory.numa_stat) and per-CPU CPU time
 * (cpuacct.usage_percpu), and the NUMA score of seed 004:
 *
 *     Score = sum over nodes i, j of C[i] x M[j] x D(i,i) / D(i,j)
 *
 * C: the task's share of CPU time per node, M: its share of memory per node, D: the distance
 * table. 1 when every access is local, lower the farther memory is from where the task runs.
 * Every file is hostile: the parsers are strict and return -EINVAL on anything malformed. */
#ifndef CPI2_NUMA_H
#define CPI2_NUMA_H

#include <stddef.h>
#include <stdint.h>

#define CPI2_NUMA_MAX_NODES 64
#define CPI2_NUMA_MAX_CPUS 1024

/* A machine's nodes. Nodes are held by index (0..n-1) in ascending node number; id[] maps an
 * index to the kernel's node number (nodes may be numbered with gaps). */
struct cpi2_numa_topo {
	int n;
	int id[CPI2_NUMA_MAX_NODES];
	int dist[CPI2_NUMA_MAX_NODES][CPI2_NUMA_MAX_NODES]; /* by index: dist[i][j] = D(i,j) */
	int16_t cpu_node[CPI2_NUMA_MAX_CPUS];		    /* node index of each CPU, -1: none */
};

/* Parse a kernel CPU or node list ("0-3,8,10-11", one optional line end) into v (at most max
 * numbers, in the order written). Returns how many, or -EINVAL (malformed, a range backwards,
 * more than max). */
int cpi2_cpu_list_parse(const char *text, int *v, int max);

/* Parse a node's distance file ("10 21 21 10"): at most max numbers, each 1-255. Returns how
 * many, or -EINVAL. */
int cpi2_numa_parse_distance(const char *text, int *d, int max);

/* Load the topology under dir (NULL: /sys/devices/system/node): the nodes of `online` (else
 * `possible`), each node's cpulist and distance. Checks: at most CPI2_NUMA_MAX_NODES nodes and
 * CPI2_NUMA_MAX_CPUS CPUs, each distance row as long as the node list, D(i,i) <= D(i,j) for
 * every j, no CPU in two nodes. Returns 0 or -errno with the reason in err. */
int cpi2_numa_topo_load(const char *dir, struct cpi2_numa_topo *t, char *err, size_t errsz);

/* Parse a cgroup's memory.numa_stat into mem[] (one entry per node index of t): the v1 file's
 * "total=N N0=.. N1=.." line (pages), else the v2 file's "anon" and "file" lines added
 * (bytes). Every line must be "KEY[=N] N<node>=<count>..." with nodes of t. Returns 0,
 * -ENOENT when neither kind of line is present, or -EINVAL. */
int cpi2_numa_parse_stat(const char *text, const struct cpi2_numa_topo *t, uint64_t *mem);

/* Parse cpuacct.usage_percpu ("N N N ...", nanoseconds per CPU number, blanks and one line end
 * after). Returns how many numbers (1 to max), or -EINVAL. */
int cpi2_numa_parse_percpu(const char *text, uint64_t *v, int max);

/* Add per-CPU amounts (CPU number cpu[k], amount v[k], k < n) into per-node sums (node index
 * of t). A CPU with an amount but no node is -EINVAL (the score would leave it out). */
int cpi2_numa_cpu_by_node(const struct cpi2_numa_topo *t, const int *cpu, const uint64_t *v, int n,
			  uint64_t *node);

/* The score from per-node CPU and memory amounts (any units: each is normalised by its sum).
 * Returns 0 with *score in [0, 1], or -ENODATA when either sum is 0 (nothing to weigh: no
 * score, never a made-up one). */
int cpi2_numa_score(const struct cpi2_numa_topo *t, const uint64_t *cpu, const uint64_t *mem,
		    double *score);

/* The same score over an explicit distance table: n nodes, D(i,j) = dist[i * stride + j]
 * (each > 0), cpu[] and mem[] per node. cpi2_numa_score is this over a topology's table. */
int cpi2_numa_score_table(int n, const int *dist, int stride, const uint64_t *cpu,
			  const uint64_t *mem, double *score);

#endif
