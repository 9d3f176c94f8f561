/* numa_model: NUMA in the simulated fleet (issue 22). A host group may have NUMA nodes
 * (`numa_nodes`, with `numa_distance` between two nodes, 10 within one); each task has a home
 * node (its place among its host's tasks, round robin) where its threads run and its memory
 * lies, so its NUMA score (seed 004, libcpi2's cpi2_numa_score_table) is 1. A `kind = numa`
 * event moves a task's threads (`cpu_node`) and/or a share of its memory (`mem_node`,
 * `mem_share`) for its span: the score falls when they part, and the task's CPI rises by its
 * job's `numa_penalty` x (1 - score). Hosts without `numa_nodes` publish no score (null). */
#ifndef FLEETSIM_NUMA_MODEL_H
#define FLEETSIM_NUMA_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#define NUMA_MODEL_MAX_NODES 64

/* [hosts]: nodes 0 = not declared (no score published) */
struct numa_host_conf {
	int nodes;
	int distance; /* between two nodes; 0: 21 */
};

/* [job]: relative CPI rise at score 0 (the rise is penalty x (1 - score)) */
struct numa_job_conf {
	double penalty;
};

/* [event] kind = numa: node + 1 where given (0: the task's home node) */
struct numa_event_conf {
	int cpu_node1, mem_node1;
	double mem_share; /* share of the memory on mem_node; 0: all of it */
};

/* Keys of each section: 1 when k is not a NUMA key, 0 when taken, -EINVAL with the reason in
 * why (the caller adds file and line). */
int numa_key_hosts(struct numa_host_conf *h, const char *k, const char *v, char *why, size_t whysz);
int numa_key_job(struct numa_job_conf *j, const char *k, const char *v, char *why, size_t whysz);
int numa_key_event(struct numa_event_conf *e, const char *k, const char *v, char *why,
		   size_t whysz);

/* Whether an event of kind numa moves anything: 0, or -EINVAL with the reason. */
int numa_event_check(const struct numa_event_conf *e, char *why, size_t whysz);

/* A task's score and CPI factor this period: home = its home node (any int, taken modulo the
 * host's nodes, as are an event's nodes), ev = its active numa event or NULL. False (no score,
 * factor 1) on a host without declared nodes. */
bool numa_task(const struct numa_host_conf *h, const struct numa_job_conf *j, int home,
	       const struct numa_event_conf *ev, double *score, double *cpi_factor);

#endif
