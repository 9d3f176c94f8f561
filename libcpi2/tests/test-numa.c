/* numa: topologies from fixture sysfs trees (the seed's 4-node example, gaps in node numbers,
 * hostile files), memory.numa_stat of v1 and v2, cpuacct.usage_percpu, and the score against
 * hand-computed cases. */
#include <cpi2/numa.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	CHECK((f = fopen(path, "w")) != NULL);
	fputs(text, f);
	fclose(f);
}

static void clean(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

/* a fresh tree: nodes from `online`, node k with cpulist cpus[k] and distance dist[k] */
static int tree(const char *online, int n, const char *const *cpus, const char *const *dist,
		struct cpi2_numa_topo *t, char *err, size_t errsz)
{
	char rel[64];

	clean();
	CHECK(mkdir(root, 0755) == 0);
	put("online", online);
	for (int k = 0; k < n; k++) {
		int id = k;

		if (!strcmp(online, "0,2\n"))
			id = k * 2;
		snprintf(rel, sizeof(rel), "node%d/cpulist", id);
		put(rel, cpus[k]);
		snprintf(rel, sizeof(rel), "node%d/distance", id);
		put(rel, dist[k]);
	}
	return cpi2_numa_topo_load(root, t, err, errsz);
}

static double score_of(const struct cpi2_numa_topo *t, const uint64_t *c, const uint64_t *m)
{
	double s = -1;

	CHECK(cpi2_numa_score(t, c, m, &s) == 0);
	return s;
}

int main(void)
{
	static struct cpi2_numa_topo t;
	char err[512];
	uint64_t cpu[CPI2_NUMA_MAX_NODES] = {0}, mem[CPI2_NUMA_MAX_NODES] = {0}, v[8];
	int list[16];
	double s;

	snprintf(root, sizeof(root), "/tmp/cpi2-numa-test-%d", (int)getpid());

	/* lists */
	CHECK(cpi2_cpu_list_parse("0-3,8,10-11\n", list, 16) == 7 && list[4] == 8 && list[6] == 11);
	CHECK(cpi2_cpu_list_parse("3-1", list, 16) == -EINVAL);
	CHECK(cpi2_cpu_list_parse("0-99", list, 16) == -EINVAL);
	CHECK(cpi2_cpu_list_parse("99999999999", list, 16) == -EINVAL);
	CHECK(cpi2_cpu_list_parse("", list, 16) == -EINVAL);
	CHECK(cpi2_numa_parse_distance("10 21\n", list, 16) == 2 && list[1] == 21);
	CHECK(cpi2_numa_parse_distance("10 0\n", list, 16) == -EINVAL);
	CHECK(cpi2_numa_parse_distance("10 256\n", list, 16) == -EINVAL);
	CHECK(cpi2_numa_parse_distance("10,20\n", list, 16) == -EINVAL);
	CHECK(cpi2_numa_parse_distance("\n", list, 16) == -EINVAL);
	CHECK(cpi2_numa_parse_distance("10 20\nx", list, 16) == -EINVAL);

	/* the seed's example: 4 nodes; from node 0, node 2 at 15 (10/15: 0.66), node 3 at 30
	 * (10/30: 0.33); the task runs on node 0 */
	{
		const char *cpus[] = {"0-1\n", "2-3\n", "4-5\n", "6-7\n"};
		const char *dist[] = {"10 12 15 30\n", "12 10 30 15\n", "15 30 10 12\n",
				      "30 15 12 10\n"};

		CHECK(tree("0-3\n", 4, cpus, dist, &t, err, sizeof(err)) == 0, "%s", err);
		CHECK(t.n == 4 && t.cpu_node[5] == 2 && t.cpu_node[8] == -1);
		cpu[0] = 1000;
		mem[0] = 1;
		CHECK(fabs(score_of(&t, cpu, mem) - 1.0) < 1e-12);
		mem[0] = 0, mem[2] = 5;
		s = score_of(&t, cpu, mem);
		CHECK(fabs(s - 10.0 / 15) < 1e-12 && (int)(s * 100) == 66, "%f", s);
		mem[2] = 0, mem[3] = 7;
		s = score_of(&t, cpu, mem);
		CHECK(fabs(s - 10.0 / 30) < 1e-12 && (int)(s * 100) == 33, "%f", s);
		/* by hand: CPU half on node 0, half on node 1; memory all on node 3:
		 * 0.5 x 10/30 + 0.5 x 10/15 = 0.5 */
		cpu[1] = 1000;
		CHECK(fabs(score_of(&t, cpu, mem) - 0.5) < 1e-12);
		/* memory a quarter on each node, CPU on node 0 only:
		 * 0.25 x (1 + 10/12 + 10/15 + 10/30) = 0.708333 */
		cpu[1] = 0, mem[0] = mem[1] = mem[2] = mem[3] = 3;
		CHECK(fabs(score_of(&t, cpu, mem) -
			   0.25 * (1 + 10.0 / 12 + 10.0 / 15 + 10.0 / 30)) < 1e-12);
		/* nothing to weigh: no score */
		memset(cpu, 0, sizeof(cpu));
		CHECK(cpi2_numa_score(&t, cpu, mem, &s) == -ENODATA);
		cpu[0] = 1, memset(mem, 0, sizeof(mem));
		CHECK(cpi2_numa_score(&t, cpu, mem, &s) == -ENODATA);

		/* per-CPU time to nodes */
		int ids[] = {0, 1, 4, 7};
		uint64_t ns[] = {100, 50, 30, 20};

		CHECK(cpi2_numa_cpu_by_node(&t, ids, ns, 4, cpu) == 0);
		CHECK(cpu[0] == 150 && cpu[1] == 0 && cpu[2] == 30 && cpu[3] == 20);
		ids[3] = 9; /* a CPU of no node with time on it */
		CHECK(cpi2_numa_cpu_by_node(&t, ids, ns, 4, cpu) == -EINVAL);
		ns[3] = 0; /* none: left out */
		CHECK(cpi2_numa_cpu_by_node(&t, ids, ns, 4, cpu) == 0);

		/* memory.numa_stat, v1 (pages) and v2 (bytes, anon + file) */
		CHECK(cpi2_numa_parse_stat("total=10 N0=4 N1=0 N2=6 N3=0\nfile=3 N0=3 N1=0 N2=0 "
					   "N3=0\nhierarchical_total=99 N0=99 N1=0 N2=0 N3=0\n",
					   &t, mem) == 0);
		CHECK(mem[0] == 4 && mem[2] == 6 && mem[3] == 0);
		CHECK(cpi2_numa_parse_stat("anon N0=4096 N1=8192 N2=0 N3=0\nfile N0=4096 N1=0 N2=0 "
					   "N3=1\nkernel_stack N0=999 N1=0 N2=0 N3=0\n",
					   &t, mem) == 0);
		CHECK(mem[0] == 8192 && mem[1] == 8192 && mem[2] == 0 && mem[3] == 1);
		CHECK(cpi2_numa_parse_stat("slab N0=1\n", &t, mem) == -ENOENT);
		CHECK(cpi2_numa_parse_stat("total=1 N4=1\n", &t, mem) == -EINVAL); /* no node 4 */
		CHECK(cpi2_numa_parse_stat("total=x N0=1\n", &t, mem) == -EINVAL);
		CHECK(cpi2_numa_parse_stat("total=1 N0=-1\n", &t, mem) == -EINVAL);
		CHECK(cpi2_numa_parse_stat("total=1 N0=99999999999999999999\n", &t, mem) ==
		      -EINVAL);
		CHECK(cpi2_numa_parse_stat("anon N0=18446744073709551615\nfile N0=1\n", &t, mem) ==
		      -EINVAL); /* the sum overflows */
		CHECK(cpi2_numa_parse_stat("anon X0=1\n", &t, mem) == -EINVAL);
		CHECK(cpi2_numa_parse_stat("anon N0=1 junk\n", &t, mem) == -EINVAL);
		CHECK(cpi2_numa_parse_stat("=1 N0=1\n", &t, mem) == -EINVAL);

		/* random bytes: no crash, no out-of-range write */
		srand(7);
		for (int r = 0; r < 20000; r++) {
			char junk[48];
			const char *alpha = "N=0123456789 \nanotlfie";

			for (size_t k = 0; k < sizeof(junk) - 1; k++)
				junk[k] = alpha[rand() % 22];
			junk[sizeof(junk) - 1] = '\0';
			(void)cpi2_numa_parse_stat(junk, &t, mem);
			(void)cpi2_numa_parse_percpu(junk, v, 8);
			(void)cpi2_cpu_list_parse(junk, list, 16);
			(void)cpi2_numa_parse_distance(junk, list, 16);
		}
	}

	/* cpuacct.usage_percpu */
	CHECK(cpi2_numa_parse_percpu("13884421356385 15391728873357 \n", v, 8) == 2 &&
	      v[1] == 15391728873357ULL);
	CHECK(cpi2_numa_parse_percpu("1 2 x\n", v, 8) == -EINVAL);
	CHECK(cpi2_numa_parse_percpu("1 2 3", v, 2) == -EINVAL);
	CHECK(cpi2_numa_parse_percpu("1 -2\n", v, 8) == -EINVAL);

	/* by hand on 2 nodes at 10/20: CPU all on node 0, memory 3/4 local, 1/4 remote:
	 * 0.75 + 0.25 x 0.5 = 0.875; nodes numbered 0 and 2 */
	{
		const char *cpus[] = {"0\n", "1\n"};
		const char *dist[] = {"10 20\n", "20 10\n"};

		CHECK(tree("0,2\n", 2, cpus, dist, &t, err, sizeof(err)) == 0, "%s", err);
		CHECK(t.id[1] == 2 && t.cpu_node[1] == 1);
		CHECK(cpi2_numa_parse_stat("total=4 N0=3 N2=1\n", &t, mem) == 0);
		cpu[0] = 5, cpu[1] = 0;
		CHECK(fabs(score_of(&t, cpu, mem) - 0.875) < 1e-12);
		CHECK(cpi2_numa_parse_stat("total=4 N1=3\n", &t, mem) == -EINVAL); /* no node 1 */
	}

	/* hostile trees */
	{
		const char *cpus[] = {"0\n", "1\n"}, *two[] = {"0\n", "0\n"},
			   *bad[] = {"0\n", "x\n"};
		const char *dist[] = {"10 20\n", "20 10\n"}, *shortd[] = {"10\n", "20 10\n"};
		const char *nearer[] = {"10 5\n", "20 10\n"};

		CHECK(tree("0-1\n", 2, cpus, shortd, &t, err, sizeof(err)) == -EINVAL);
		CHECK(strstr(err, "node0/distance"), "%s", err);
		CHECK(tree("0-1\n", 2, two, dist, &t, err, sizeof(err)) ==
		      -EINVAL); /* CPU 0 twice */
		CHECK(tree("0-1\n", 2, bad, dist, &t, err, sizeof(err)) == -EINVAL);
		CHECK(tree("0-1\n", 2, cpus, nearer, &t, err, sizeof(err)) == -EINVAL);
		CHECK(strstr(err, "nearer"), "%s", err);
		CHECK(tree("1,0\n", 2, cpus, dist, &t, err, sizeof(err)) == -EINVAL);
		CHECK(tree("0-2\n", 2, cpus, dist, &t, err, sizeof(err)) ==
		      -EINVAL); /* rows of 2 */
		CHECK(tree("zero\n", 2, cpus, dist, &t, err, sizeof(err)) == -EINVAL);
		CHECK(cpi2_numa_topo_load("/nonexistent/cpi2", &t, err, sizeof(err)) == -ENOENT);
	}
	clean();

	/* this machine's own tree loads (its score is the collector's test) */
	if (cpi2_numa_topo_load(NULL, &t, err, sizeof(err)) == 0)
		printf("test-numa: this machine: %d node(s)\n", t.n);
	else
		printf("test-numa: this machine's tree does not load: %s\n", err);
	printf("test-numa: ok\n");
	return 0;
}
