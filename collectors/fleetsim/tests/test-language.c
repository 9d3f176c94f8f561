/* The scenario language's finer controls (scenarios/README.md): interference on named victims,
 * per-task CPU levels, jitter and warm-up level, cpu_spread, square duty cycles, gaps, missing
 * samples, tasks that exit (at a time, or under their Nth cap), late and clock-skewed hosts, a
 * job-wide shift with its rollout, a task moved to another host, random bursts, a daily cycle of
 * CPU demand; each on a small inline scenario. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/fleet.h"
#include "../src/scenario.h"
#include "check.h"

#define MAX_SAMPLES 200000

struct got {
	int period;
	char host[64], task[64];
	int64_t window_start_us;
	double cpu, cpi;
};

struct recorder {
	struct got *s;
	int n, period;
};

static int record(void *ctx, const struct fleet_sample *s)
{
	struct recorder *r = ctx;

	CHECK(r->n < MAX_SAMPLES, "too many samples");
	struct got *g = &r->s[r->n++];
	g->period = r->period;
	snprintf(g->host, sizeof(g->host), "%s", s->host);
	snprintf(g->task, sizeof(g->task), "%s", s->task);
	g->window_start_us = s->window_start_us;
	g->cpu = s->cpu_usage;
	g->cpi = s->cpi;
	return 0;
}

static const int64_t START = 1305504000000000LL;

static struct scenario *parse(const char *text)
{
	struct scenario *s = NULL;
	char err[512] = "";

	CHECK(scenario_parse(text, "t.scn", &s, err, sizeof(err)) == 0, "%s", err);
	return s;
}

/* plays periods of a scenario into r (allocated); the truth into *truth when not NULL */
static void play(const struct scenario *s, uint64_t seed, int periods, struct recorder *r,
		 FILE *truth)
{
	struct fleet *f;
	char err[256];

	r->s = calloc(MAX_SAMPLES, sizeof(*r->s));
	r->n = r->period = 0;
	CHECK(r->s && fleet_new(&f, s, seed, START, err, sizeof(err)) == 0, "%s", err);
	if (truth)
		fleet_write_truth(f, truth, START + (int64_t)((s->warmup_s + s->duration_s) * 1e6));
	for (int p = 0; p < periods; p++, r->period++)
		CHECK(fleet_step(f, record, r) >= 0, "period %d", p);
	fleet_delete(f);
}

/* mean of a task's CPI (what = 0) or CPU (1) over periods [from, to); *count samples */
static double mean(const struct recorder *r, const char *host, const char *task, int what, int from,
		   int to, int *count)
{
	double sum = 0;
	int n = 0;

	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->s[i].host, host) && !strcmp(r->s[i].task, task) &&
		    r->s[i].period >= from && r->s[i].period < to) {
			sum += what ? r->s[i].cpu : r->s[i].cpi;
			n++;
		}
	if (count)
		*count = n;
	return n ? sum / n : NAN;
}

static int count_lines(FILE *f, const char *a, const char *b)
{
	char line[1024];
	int n = 0;

	rewind(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, a) && (!b || strstr(line, b));
	return n;
}

#define HEAD                                                                                       \
	"[scenario]\nname = t\nwarmup = 0\nduration = 2h\n[platform p]\n[hosts h]\nplatform = "    \
	"p\n[hosts f]\ncount = 5\nplatform = p\n"

static void test_victims(void)
{
	struct scenario *s = parse(HEAD "[job web]\nclass = latency-sensitive\ncpi = 1.0\n"
					"cpi_sd = 0.05\ncpu = 1.0\nplace = h:2, f:5\n"
					"[job bully]\ncpu = 0.5\nplace = h:1, f:5\n"
					"[event]\ntask = bully/0\nvictims = web/1\ncpu = 4\n"
					"pressure = 0.3\n");
	struct recorder r;
	FILE *truth = tmpfile();

	if (!s || !truth)
		return;
	play(s, 1, 60, &r, truth);
	double hurt = mean(&r, "h", "jobs/web/1", 0, 0, 60, NULL);
	double spared = mean(&r, "h", "jobs/web/0", 0, 0, 60, NULL);
	fprintf(stderr, "victims: named victim's CPI %.2f, its neighbour's %.2f\n", hurt, spared);
	CHECK(hurt > 1.9 && spared < 1.1, "named victim %f, other task of the host %f", hurt,
	      spared);
	CHECK(count_lines(truth, "\"type\":\"antagonism\"", NULL) == 1 &&
		  count_lines(truth, "\"type\":\"antagonism\"", "\"victim\":\"jobs/web/1\"") == 1,
	      "truth: one antagonism, on web/1");
	fclose(truth);
	free(r.s);
	scenario_delete(s);

	/* a victim on another host than the antagonist: fleet_new refuses it */
	struct fleet *f = NULL;
	char err[256] = "";
	s = parse(HEAD "[job web]\nplace = h:1, f:5\n[job bully]\nplace = h:1, f:5\n"
		       "[event]\ntask = bully/0\nvictims = web/3\ncpu = 4\n");
	CHECK(s && fleet_new(&f, s, 1, START, err, sizeof(err)) == -EINVAL &&
		  strstr(err, "victim 'web/3' is not on task 'bully/0''s host"),
	      "%s", err);
	scenario_delete(s);
}

static void test_task_levels_jitter_spread(void)
{
	struct scenario *s = parse(HEAD "[job j]\ncpu = 1.0\ncpu_jitter = 0.2\nplace = h:2, f:5\n"
					"[task j/0]\ncpu = 0.1\ncpu_jitter = 0\n"
					"[job k]\ncpu = 1.0\ncpu_jitter = 0\ncpu_spread = 0.5\n"
					"place = f:10\n");
	struct recorder r;
	int n;

	if (!s)
		return;
	play(s, 3, 30, &r, NULL);
	/* j/0: its own level, no jitter: every sample exactly 0.1 */
	for (int i = 0; i < r.n; i++)
		if (!strcmp(r.s[i].task, "jobs/j/0"))
			CHECK(fabs(r.s[i].cpu - 0.1) < 1e-12, "j/0 at %f", r.s[i].cpu);
	double m = mean(&r, "h", "jobs/j/1", 1, 0, 30, &n);
	CHECK(n == 30 && m > 0.85 && m < 1.15, "j/1 mean CPU %f over %d", m, n);
	/* k: each task steady at its own level, levels spread around 1.0 */
	double lo = 1e9, hi = 0;
	char task[32];
	for (int t = 0; t < 10; t++) {
		snprintf(task, sizeof(task), "jobs/k/%d", t);
		double first = NAN;
		for (int i = 0; i < r.n; i++)
			if (!strcmp(r.s[i].task, task)) {
				if (isnan(first))
					first = r.s[i].cpu;
				CHECK(r.s[i].cpu == first, "%s moves: %f then %f", task, first,
				      r.s[i].cpu);
			}
		lo = fmin(lo, first), hi = fmax(hi, first);
	}
	CHECK(hi - lo > 0.3, "k's levels spread from %f to %f only", lo, hi);
	free(r.s);
	scenario_delete(s);
}

static void test_warmup_cpu(void)
{
	struct scenario *s = parse("[scenario]\nname = t\nwarmup = 10m\nduration = 20m\n"
				   "[platform p]\n[hosts f]\ncount = 5\nplatform = p\n"
				   "[job j]\ncpu = 1.0\ncpu_jitter = 0\nplace = f:5\n"
				   "[task j/2]\nwarmup_cpu = 0.1\n");
	struct recorder r;

	if (!s)
		return;
	play(s, 1, 20, &r, NULL);
	double warm = mean(&r, "f-002", "jobs/j/2", 1, 0, 10, NULL);
	double after = mean(&r, "f-002", "jobs/j/2", 1, 10, 20, NULL);
	CHECK(fabs(warm - 0.1) < 1e-12 && fabs(after - 1.0) < 1e-12,
	      "j/2 at %f during the warm-up, %f after", warm, after);
	free(r.s);
	scenario_delete(s);
}

static void test_duty(void)
{
	struct scenario *s = parse(HEAD "[job j]\ncpu = 0.5\ncpu_jitter = 0\nplace = h:1, f:5\n"
					"[event]\ntask = j/0\npattern = square\nperiod = 10m\n"
					"duty = 0.2\ncpu = 3\npressure = 0\n");
	struct recorder r;
	int high = 0, low = 0;

	if (!s)
		return;
	play(s, 1, 100, &r, NULL);
	for (int i = 0; i < r.n; i++)
		if (!strcmp(r.s[i].task, "jobs/j/0") && !strcmp(r.s[i].host, "h")) {
			high += r.s[i].cpu == 3.0;
			low += r.s[i].cpu == 0.5;
			if (r.s[i].period % 10 < 2)
				CHECK(r.s[i].cpu == 3.0, "period %d at %f", r.s[i].period,
				      r.s[i].cpu);
		}
	CHECK(high == 20 && low == 80, "duty 0.2: %d periods high, %d low", high, low);
	free(r.s);
	scenario_delete(s);
}

static void test_gap_and_missing(void)
{
	struct scenario *s = parse(HEAD "[job j]\nplace = h:1, f:5\n"
					"[event]\nkind = gap\ntask = j/0\nstart = 10m\nend = 20m\n"
					"[job m]\nmissing = 0.3\nplace = f:10\n");
	struct recorder r;
	FILE *truth = tmpfile();
	int n, missing_n = 0;

	if (!s || !truth)
		return;
	play(s, 1, 100, &r, truth);
	mean(&r, "h", "jobs/j/0", 1, 0, 10, &n);
	CHECK(n == 10, "%d samples before the gap", n);
	mean(&r, "h", "jobs/j/0", 1, 10, 20, &n);
	CHECK(n == 0, "%d samples in the gap", n);
	mean(&r, "h", "jobs/j/0", 1, 20, 100, &n);
	CHECK(n == 80, "%d samples after the gap", n);
	for (int i = 0; i < r.n; i++)
		missing_n += !strncmp(r.s[i].task, "jobs/m/", 7);
	CHECK(missing_n > 600 && missing_n < 800, "missing 0.3: %d of 1000 samples published",
	      missing_n);
	CHECK(count_lines(truth, "\"type\":\"gap\"", "\"task\":\"jobs/j/0\"") == 1,
	      "no gap line in the truth");
	fclose(truth);
	free(r.s);
	scenario_delete(s);
}

static void test_exit(void)
{
	struct scenario *s = parse(HEAD "[job web]\nclass = latency-sensitive\ncpi = 1.0\n"
					"cpi_sd = 0.05\nplace = h:1, f:5\n"
					"[job bully]\nplace = h:1, f:5\n"
					"[event]\ntask = bully/0\ncpu = 4\npressure = 0.3\n"
					"[event]\nkind = exit\ntask = bully/0\nstart = 30m\n");
	struct recorder r;
	FILE *truth = tmpfile();
	int n;

	if (!s || !truth)
		return;
	play(s, 1, 60, &r, truth);
	mean(&r, "h", "jobs/bully/0", 1, 30, 60, &n);
	CHECK(n == 0, "%d samples after the exit", n);
	double before = mean(&r, "h", "jobs/web/0", 0, 0, 30, NULL);
	double after = mean(&r, "h", "jobs/web/0", 0, 30, 60, NULL);
	CHECK(before > 1.9 && after < 1.1, "victim's CPI %f before the exit, %f after", before,
	      after);
	char want[128];
	snprintf(want, sizeof(want), "\"end_us\":%lld,", (long long)(START + 1800000000LL));
	CHECK(count_lines(truth, "\"type\":\"exit\"", NULL) == 1 &&
		  count_lines(truth, "\"type\":\"antagonism\"", want) == 1,
	      "truth: an exit line and the antagonism ending at the exit (%s)", want);
	fclose(truth);
	free(r.s);
	scenario_delete(s);
}

/* paper 6.2 case 6: a task that exits under its second cap */
static void test_exit_on_cap(void)
{
	struct scenario *s = parse(HEAD "[job j]\nexit_on_cap = 2\nplace = h:1, f:5\n");
	struct recorder r = {.s = calloc(MAX_SAMPLES, sizeof(*r.s))};
	struct fleet *f;
	FILE *truth = tmpfile();
	char err[256];
	int task = -1, n;

	if (!s || !truth || !r.s)
		return;
	CHECK(fleet_new(&f, s, 1, START, err, sizeof(err)) == 0, "%s", err);
	fleet_write_truth(f, truth, START + 7200000000LL);
	for (int t = 0; t < fleet_ntasks(f); t++)
		if (!strcmp(fleet_task_dir(f, t), "h/jobs/j/0"))
			task = t;
	CHECK(task >= 0, "no task h/jobs/j/0");
	for (int p = 0; p < 20; p++, r.period++) {
		if (p == 3 || p == 10)
			fleet_set_cap(f, task, 0.1); /* first and second cap */
		if (p == 6)
			fleet_set_cap(f, task, -1); /* the first is lifted */
		CHECK(fleet_step(f, record, &r) >= 0, "period %d", p);
	}
	mean(&r, "h", "jobs/j/0", 1, 0, 11, &n);
	CHECK(n == 11, "%d samples up to the second cap's period, want 11", n);
	mean(&r, "h", "jobs/j/0", 1, 11, 20, &n);
	CHECK(n == 0, "%d samples after the second cap's period", n);
	char want[128];
	snprintf(want, sizeof(want), "\"start_us\":%lld,", (long long)(START + 11 * 60000000LL));
	CHECK(count_lines(truth, "\"type\":\"exit\"", want) == 1 &&
		  count_lines(truth, "\"type\":\"cap\"", NULL) == 2,
	      "truth: two caps and an exit at the period after the second (%s)", want);
	fleet_delete(f);
	fclose(truth);
	free(r.s);
	scenario_delete(s);
}

static void test_late_and_skewed_hosts(void)
{
	const char *body = "[job j]\ncpu_jitter = 0\nplace = h:1, f:5\n";
	char text[1024];
	struct recorder on_time, late, skewed;

	snprintf(text, sizeof(text), "%s%s", HEAD, body);
	struct scenario *a = parse(text);
	snprintf(text, sizeof(text), "%s%s", HEAD "late = 2m\n", body);
	struct scenario *b = parse(text);
	snprintf(text, sizeof(text), "%s%s", HEAD "skew = -30s\n", body);
	struct scenario *c = parse(text);
	if (!a || !b || !c)
		return;
	play(a, 1, 10, &on_time, NULL);
	play(b, 1, 10, &late, NULL);
	play(c, 1, 10, &skewed, NULL);
	/* the f hosts are on time in every variant; f's group (late, skew) is the last one */
	int na, nb;
	mean(&on_time, "f-004", "jobs/j/5", 1, 0, 10, &na);
	mean(&late, "f-004", "jobs/j/5", 1, 0, 10, &nb);
	CHECK(na == 10 && nb == 8, "late host: %d samples of 10 periods (on time %d)", nb, na);
	for (int i = 0, k = 0; i < late.n; i++) {
		if (strcmp(late.s[i].host, "f-004"))
			continue;
		/* published two periods after its window */
		int64_t lag = (int64_t)late.s[i].period * 60000000LL + START -
			      (late.s[i].window_start_us - late.s[i].window_start_us % 60000000LL);
		CHECK(lag == 120000000LL, "sample %d of f-004 published %lld us late", k++,
		      (long long)lag);
	}
	for (int i = 0; i < on_time.n; i++) {
		CHECK(!strcmp(on_time.s[i].task, skewed.s[i].task), "same samples in order");
		int64_t d = skewed.s[i].window_start_us - on_time.s[i].window_start_us;
		CHECK(d == (strncmp(on_time.s[i].host, "f-", 2) ? 0 : -30000000LL),
		      "%s's window start moved by %lld us", on_time.s[i].host, (long long)d);
	}
	free(on_time.s);
	free(late.s);
	free(skewed.s);
	scenario_delete(a);
	scenario_delete(b);
	scenario_delete(c);
}

/* a job-wide change (a release): every task's CPI rises by cpi_factor at unchanged CPU, over the
 * rollout one task after another; the truth has one shift line and no antagonism */
static void test_shift(void)
{
	struct scenario *s =
	    parse(HEAD "[job web]\nclass = latency-sensitive\ncpi = 1.0\n"
		       "cpi_sd = 0.02\ndiurnal_cv = 0\nplace = h:1, f:9\n"
		       "[event]\nkind = shift\njob = web\nstart = 30m\ncpi_factor = 1.5\n"
		       "rollout = 10m\n");
	struct recorder r;
	FILE *truth = tmpfile();

	if (!s || !truth)
		return;
	play(s, 1, 60, &r, truth);
	int before = 0, after = 0, changed_early = 0, unchanged_late = 0;
	for (int i = 0; i < r.n; i++) {
		if (r.s[i].period < 30)
			before += r.s[i].cpi > 1.2;
		else if (r.s[i].period >= 40)
			after += r.s[i].cpi > 1.2;
		if (r.s[i].period == 31)
			changed_early += r.s[i].cpi > 1.2;
		if (r.s[i].period == 38)
			unchanged_late += r.s[i].cpi < 1.2;
	}
	fprintf(stderr,
		"shift: high before %d, after %d of 200; rolled out at 31: %d, not yet at "
		"38: %d of 10\n",
		before, after, changed_early, unchanged_late);
	CHECK(before == 0 && after == 200, "high CPI before %d, after %d of 200", before, after);
	CHECK(changed_early < 10 && unchanged_late < 10 && changed_early + unchanged_late > 0,
	      "rollout: %d changed at 31, %d unchanged at 38", changed_early, unchanged_late);
	double cpu = mean(&r, "h", "jobs/web/0", 1, 45, 60, NULL);
	CHECK(fabs(cpu - 1.0) < 0.1, "CPU %f after the shift", cpu);
	CHECK(count_lines(truth, "\"type\":\"shift\"", "\"job\":\"web\"") == 1 &&
		  count_lines(truth, "\"type\":\"antagonism\"", NULL) == 0,
	      "truth: one shift, no antagonism");
	fclose(truth);
	free(r.s);
	scenario_delete(s);
}

/* a task restarted on another host: samples and load there from the move on, none on its first
 * host; its antagonism follows it */
static void test_move(void)
{
	struct scenario *s =
	    parse(HEAD "[hosts g]\nplatform = p\n"
		       "[job web]\nclass = latency-sensitive\ncpi = 1.0\ncpi_sd = 0.05\n"
		       "place = h:1, g:1, f:5\n"
		       "[job bully]\nplace = h:1, f:5\n"
		       "[event]\ntask = bully/0\ncpu = 4\npressure = 0.3\n"
		       "[event]\nkind = move\ntask = bully/0\nhost = g\nstart = 30m\n");
	struct recorder r;
	FILE *truth = tmpfile();
	int on_h, on_g_before, on_g;

	if (!s || !truth)
		return;
	play(s, 1, 60, &r, truth);
	mean(&r, "h", "jobs/bully/0", 1, 30, 60, &on_h);
	mean(&r, "g", "jobs/bully/0", 1, 0, 30, &on_g_before);
	mean(&r, "g", "jobs/bully/0", 1, 30, 60, &on_g);
	CHECK(on_h == 0 && on_g_before == 0 && on_g == 30,
	      "samples: %d on h after the move, %d on g before, %d on g after", on_h, on_g_before,
	      on_g);
	double h_before = mean(&r, "h", "jobs/web/0", 0, 0, 30, NULL);
	double h_after = mean(&r, "h", "jobs/web/0", 0, 30, 60, NULL);
	double g_before = mean(&r, "g", "jobs/web/1", 0, 0, 30, NULL);
	double g_after = mean(&r, "g", "jobs/web/1", 0, 30, 60, NULL);
	fprintf(stderr, "move: CPI on h %.2f -> %.2f, on g %.2f -> %.2f\n", h_before, h_after,
		g_before, g_after);
	CHECK(h_before > 1.9 && h_after < 1.1 && g_before < 1.1 && g_after > 1.9,
	      "CPI on h %f -> %f, on g %f -> %f", h_before, h_after, g_before, g_after);
	char at[64];
	snprintf(at, sizeof(at), "%lld", (long long)(START + 1800000000LL));
	CHECK(count_lines(truth, "\"type\":\"move\"", "\"host\":\"g\"") == 1 &&
		  count_lines(truth, "\"type\":\"antagonism\"", "\"host\":\"h\"") == 1 &&
		  count_lines(truth, "\"type\":\"antagonism\"", "\"host\":\"g\"") == 1 &&
		  count_lines(truth, "\"host\":\"g\"", at) == 2,
	      "truth: the move, an antagonism on each host, g's from the move (%s)", at);
	fclose(truth);
	free(r.s);
	scenario_delete(s);

	/* a move to the host it runs on is refused */
	struct fleet *f = NULL;
	char err[256] = "";
	s = parse(HEAD "[job web]\nplace = h:1, f:5\n"
		       "[event]\nkind = move\ntask = web/0\nhost = h\nstart = 10m\n");
	CHECK(s && fleet_new(&f, s, 1, START, err, sizeof(err)) == -EINVAL &&
		  strstr(err, "runs on that host already"),
	      "%s", err);
	scenario_delete(s);
}

/* random bursts (a job's burst_cpu, or an event's pattern bursts): on for about duty of the time,
 * in runs, the same whatever caps do to other tasks */
static void test_bursts(void)
{
	struct scenario *s = parse(HEAD "[job batch]\ncpu = 0.3\ncpu_jitter = 0\nburst_cpu = 3\n"
					"burst_period = 20m\nburst_duty = 0.25\nplace = f:5\n"
					"[job etl]\ncpu = 0.2\ncpu_jitter = 0\nplace = h:1, f:5\n"
					"[event]\ntask = etl/0\npattern = bursts\nperiod = 10m\n"
					"duty = 0.5\ncpu = 2\nend = 10h\n");
	struct recorder r;
	int on = 0, n = 0, switches = 0, eon = 0, en = 0;
	double prev[5] = {-1, -1, -1, -1, -1};

	if (!s)
		return;
	play(s, 7, 600, &r, NULL);
	for (int i = 0; i < r.n; i++) {
		const char *t = r.s[i].task;
		if (!strncmp(t, "jobs/batch/", 11)) {
			int k = atoi(t + 11);
			on += r.s[i].cpu > 1;
			n++;
			switches += prev[k] >= 0 && (prev[k] > 1) != (r.s[i].cpu > 1);
			prev[k] = r.s[i].cpu;
		} else if (!strcmp(t, "jobs/etl/0")) {
			eon += r.s[i].cpu > 1;
			en++;
		}
	}
	fprintf(stderr, "bursts: batch on %d of %d periods, %d switches; etl/0 on %d of %d\n", on,
		n, switches, eon, en);
	/* 3000 periods of 5 chains, mean on-run 5 periods: the share within 0.25 +- 0.07, about
	 * 2 switches per 20 periods */
	CHECK(fabs((double)on / n - 0.25) < 0.07, "on %d of %d", on, n);
	CHECK(switches > 150 && switches < 450, "%d switches", switches);
	CHECK(fabs((double)eon / en - 0.5) < 0.12, "etl/0 on %d of %d", eon, en);
	free(r.s);
	scenario_delete(s);
}

/* cpu_diurnal and peak: a daily cycle of CPU demand that peaks when the scenario says */
static void test_diurnal_load(void)
{
	struct scenario *s = parse(HEAD "[job web]\ncpu = 1.0\ncpu_jitter = 0\ncpu_diurnal = 0.4\n"
					"peak = 6h\nplace = f:5\n");
	struct recorder r;

	if (!s)
		return;
	play(s, 1, 24 * 60, &r, NULL);
	double at_peak = mean(&r, "f-000", "jobs/web/0", 1, 355, 365, NULL);
	double at_trough = mean(&r, "f-000", "jobs/web/0", 1, 1075, 1085, NULL);
	fprintf(stderr, "diurnal load: %.2f at the peak, %.2f at the trough\n", at_peak, at_trough);
	CHECK(fabs(at_peak - 1.4) < 0.02 && fabs(at_trough - 0.6) < 0.02, "peak %f, trough %f",
	      at_peak, at_trough);
	free(r.s);
	scenario_delete(s);
}

int main(void)
{
	test_victims();
	test_task_levels_jitter_spread();
	test_warmup_cpu();
	test_duty();
	test_gap_and_missing();
	test_exit();
	test_exit_on_cap();
	test_late_and_skewed_hosts();
	test_shift();
	test_move();
	test_bursts();
	test_diurnal_load();
	fprintf(stderr, "fleetsim language: all checks passed\n");
	return 0;
}
