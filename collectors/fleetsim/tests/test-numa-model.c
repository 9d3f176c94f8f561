/* The fleet's NUMA model (issue 22): a task's score is 1 at home, 10/21 with all its memory on
 * the other node, 0.5 + 0.5 x 10/21 with half of it, 1 again when its threads follow its
 * memory; its CPI rises by the job's numa_penalty x (1 - score) while its memory is away; hosts
 * without numa_nodes publish no score; malformed NUMA keys name their line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/fleet.h"
#include "../src/numa_model.h"
#include "../src/scenario.h"
#include "check.h"

#define PERIODS 240

static const char *text =
    "[scenario]\nname = numa\nduration = 4h\nwarmup = 0\n"
    "[platform p]\nlabel = p\n"
    "[hosts two]\nplatform = p\nnuma_nodes = 2\n"
    "[hosts flat]\nplatform = p\n"
    "[job db]\nclass = latency-sensitive\ncpi = 1.0\ncpi_sd = 0.02\nshape = 0\ndiurnal_cv = 0\n"
    "numa_penalty = 0.4\nplace = two:1, flat:4\n"
    "[event]\nkind = numa\ntask = db/0\nstart = 1h\nend = 2h\nmem_node = 1\n"
    "[event]\nkind = numa\ntask = db/0\nstart = 2h\nend = 3h\nmem_node = 1\nmem_share = 0.5\n"
    "[event]\nkind = numa\ntask = db/0\nstart = 3h\nend = 4h\nmem_node = 1\ncpu_node = 1\n";

struct rec {
	int n;
	double score[PERIODS], cpi[PERIODS];
	bool flat_has_score;
};

static int record(void *ctx, const struct fleet_sample *s)
{
	struct rec *r = ctx;

	if (!strcmp(s->host, "flat")) {
		r->flat_has_score |= s->has_numa_score;
		return 0;
	}
	CHECK(s->has_numa_score, "host two publishes a score");
	if (r->n < PERIODS) {
		r->score[r->n] = s->numa_score;
		r->cpi[r->n++] = s->cpi;
	}
	return 0;
}

static double mean(const double *v, int a, int b)
{
	double s = 0;

	for (int i = a; i < b; i++)
		s += v[i];
	return s / (b - a);
}

static void malformed(const char *extra, const char *what)
{
	char buf[2048], err[512] = "";
	struct scenario *s = NULL;

	snprintf(buf, sizeof(buf), "%s%s", text, extra);
	CHECK(scenario_parse(buf, "bad.scn", &s, err, sizeof(err)) == -EINVAL && !s, "%s", extra);
	CHECK(strstr(err, "bad.scn:") && strstr(err, what), "'%s': %s", extra, err);
}

int main(void)
{
	struct scenario *s = NULL;
	struct fleet *f = NULL;
	struct rec r = {0};
	char err[512] = "";
	double score, factor;

	CHECK(scenario_parse(text, "numa.scn", &s, err, sizeof(err)) == 0, "%s", err);
	CHECK(fleet_new(&f, s, 7, 4102444800000000LL, err, sizeof(err)) == 0, "%s", err);
	for (int p = 0; p < PERIODS; p++)
		CHECK(fleet_step(f, record, &r) >= 0);
	CHECK(r.n == PERIODS && !r.flat_has_score);
	const double remote = 10.0 / 21.0;
	for (int p = 0; p < PERIODS; p++) {
		double want = p < 60 ? 1.0 : p < 120 ? remote : p < 180 ? 0.5 + 0.5 * remote : 1.0;
		CHECK(fabs(r.score[p] - want) < 1e-9, "period %d: score %f, want %f", p, r.score[p],
		      want);
	}
	/* CPI: x (1 + 0.4 x (1 - score)) while memory is away, back when threads follow it */
	double home = mean(r.cpi, 0, 60), away = mean(r.cpi, 60, 120), half = mean(r.cpi, 120, 180),
	       together = mean(r.cpi, 180, 240);
	CHECK(fabs(away / home - (1 + 0.4 * (1 - remote))) < 0.03, "away/home %f", away / home);
	CHECK(fabs(half / home - (1 + 0.4 * 0.5 * (1 - remote))) < 0.03, "half/home %f",
	      half / home);
	CHECK(fabs(together / home - 1) < 0.03, "together/home %f", together / home);
	fleet_delete(f);
	scenario_delete(s);

	/* the model alone: distance, nodes taken modulo, a host without nodes */
	struct numa_host_conf four = {.nodes = 4, .distance = 30}, none = {0};
	struct numa_job_conf job = {.penalty = 1.0};
	struct numa_event_conf ev = {.mem_node1 = 3, .mem_share = 0.25};
	CHECK(numa_task(&four, &job, 0, &ev, &score, &factor));
	CHECK(fabs(score - (0.75 + 0.25 / 3)) < 1e-9 && fabs(factor - (2 - score)) < 1e-12);
	CHECK(numa_task(&four, &job, 5, NULL, &score, &factor) && score == 1.0 && factor == 1.0);
	CHECK(!numa_task(&none, &job, 0, &ev, &score, &factor) && factor == 1.0);

	malformed("[hosts x]\nplatform = p\nnuma_nodes = 0\n", "numa_nodes");
	malformed("[hosts x]\nplatform = p\nnuma_nodes = 2.5\n", "numa_nodes");
	malformed("[hosts x]\nplatform = p\nnuma_distance = 10\n", "numa_distance");
	malformed("[event]\nkind = numa\ntask = db/0\n", "needs cpu_node or mem_node");
	malformed("[event]\nkind = numa\ntask = db/0\ncpu_node = 1\nmem_share = 0.5\n",
		  "mem_share needs mem_node");
	malformed("[event]\nkind = numa\ntask = db/0\nmem_node = 64\n", "mem_node");
	malformed("[job y]\nnuma_penalty = -1\nplace = flat:5\n", "numa_penalty");
	printf("test-numa-model: ok\n");
	return 0;
}
