/* Cap files: parsing, and noticing an enforcer's writes in a temporary cgroup tree, with
 * inotify and with the stat fallback. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/capwatch.h"
#include "check.h"

static void test_parse(void)
{
	static const struct {
		const char *text;
		int rc;
		double cap;
	} v2[] = {
	    {"max 100000\n", 0, INFINITY},
	    {"max\n", 0, INFINITY},
	    {"1000 100000\n", 0, 0.01},
	    {"50000 100000", 0, 0.5},
	    {"200000\n", 0, 2.0},
	    {"", -EINVAL, 0},
	    {"-5 100000\n", -EINVAL, 0},
	    {"0 100000", -EINVAL, 0},
	    {"1000 0", -EINVAL, 0},
	    {"1000 100000 7", -EINVAL, 0},
	    {"abc", -EINVAL, 0},
	    {"1000 x", -EINVAL, 0},
	    {"99999999999999999999999 1", -EINVAL, 0},
	};
	for (unsigned i = 0; i < sizeof(v2) / sizeof(v2[0]); i++) {
		double cap = -7;
		int rc = capfile_parse_cpu_max(v2[i].text, &cap);
		CHECK(rc == v2[i].rc, "cpu.max '%s': rc %d", v2[i].text, rc);
		CHECK(rc || cap == v2[i].cap, "cpu.max '%s': cap %f want %f", v2[i].text, cap,
		      v2[i].cap);
	}
	static const struct {
		const char *quota, *period;
		int rc;
		double cap;
	} v1[] = {
	    {"-1\n", "100000\n", 0, INFINITY}, {"10000\n", "100000\n", 0, 0.1},
	    {"10000", "garbage", -EINVAL, 0},  {"-2", "100000", -EINVAL, 0},
	    {"", "100000", -EINVAL, 0},	       {"5000", "0", -EINVAL, 0},
	};
	for (unsigned i = 0; i < sizeof(v1) / sizeof(v1[0]); i++) {
		double cap = -7;
		int rc = capfile_parse_cfs(v1[i].quota, v1[i].period, &cap);
		CHECK(rc == v1[i].rc, "cfs '%s' '%s': rc %d", v1[i].quota, v1[i].period, rc);
		CHECK(rc || cap == v1[i].cap, "cfs '%s': cap %f", v1[i].quota, cap);
	}
}

/* Random and mutated text: an error or a positive cap, never a crash (ASan in sanitize builds). */
static void test_parse_fuzz(void)
{
	static const char alphabet[] = "0123456789 max-\n\t+xe.";
	char a[32], b[32];
	unsigned seed = 99;

	for (int i = 0; i < 20000; i++) {
		int n = rand_r(&seed) % 31, m = rand_r(&seed) % 31;
		for (int k = 0; k < n; k++)
			a[k] = i % 3 ? alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)]
				     : (char)(rand_r(&seed) % 255 + 1);
		for (int k = 0; k < m; k++)
			b[k] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		a[n] = 0, b[m] = 0;
		double cap = -1;
		int rc = capfile_parse_cpu_max(a, &cap);
		CHECK(rc == -EINVAL || (rc == 0 && cap > 0), "cpu.max '%s': rc %d cap %f", a, rc,
		      cap);
		cap = -1;
		rc = capfile_parse_cfs(a, b, &cap);
		CHECK(rc == -EINVAL || (rc == 0 && cap > 0), "cfs '%s' '%s': rc %d cap %f", a, b,
		      rc, cap);
	}
}

struct seen {
	int n;
	int task[16];
	double cap[16];
};

static void record(void *ctx, int task, double cap)
{
	struct seen *s = ctx;
	if (s->n < 16) {
		s->task[s->n] = task;
		s->cap[s->n] = cap;
	}
	s->n++;
}

static void put(const char *root, const char *dir, const char *file, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", root, dir, file);
	f = fopen(path, "w");
	CHECK(f != NULL, "open %s", path);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	usleep(20000); /* file times are as coarse as the kernel tick: the stat mode needs a gap */
}

static void test_tree(int flags)
{
	char root[] = "/tmp/fleetsim-capwatch-XXXXXX", err[256] = "";
	struct capwatch *cw;
	struct seen s = {0};
	static const char *dirs[] = {"h1/jobs/a/0", "h1/jobs/b/0", "h2/jobs/a/1"};

	CHECK(mkdtemp(root) != NULL, "mkdtemp");
	CHECK(capwatch_new(&cw, root, 3, flags, err, sizeof(err)) == 0, "%s", err);
	for (int i = 0; i < 3; i++)
		CHECK(capwatch_add(cw, i, dirs[i], err, sizeof(err)) == 0, "%s", err);
	CHECK(capwatch_polled_by_stat(cw) == (flags & CAPWATCH_STAT_ONLY ? 3 : 0), "stat %d",
	      capwatch_polled_by_stat(cw));
	CHECK(capwatch_poll(cw, record, &s) == 0 && s.n == 0, "fresh tree reported %d", s.n);

	put(root, dirs[1], "cpu.max", "1000 100000\n"); /* the enforcer's best-effort cap */
	CHECK(capwatch_poll(cw, record, &s) == 1 && s.task[0] == 1 && s.cap[0] == 0.01,
	      "cap on task 1: n %d task %d cap %f", s.n, s.task[0], s.cap[0]);
	CHECK(capwatch_poll(cw, record, &s) == 0, "nothing new must report nothing");

	s.n = 0;
	put(root, dirs[2], "cpu.cfs_period_us", "100000\n"); /* cgroup v1 style */
	put(root, dirs[2], "cpu.cfs_quota_us", "10000\n");
	CHECK(capwatch_poll(cw, record, &s) == 1 && s.task[0] == 2 && s.cap[0] == 0.1,
	      "v1 cap on task 2: n %d cap %f", s.n, s.cap[0]);

	s.n = 0;
	put(root, dirs[1], "cpu.max", "max 100000\n");
	put(root, dirs[2], "cpu.cfs_quota_us", "-1\n");
	CHECK(capwatch_poll(cw, record, &s) == 2 && isinf(s.cap[0]) && isinf(s.cap[1]),
	      "both lifted: n %d", s.n);

	s.n = 0;
	put(root, dirs[0], "cpu.max", "garbage\n"); /* logged, previous cap kept */
	CHECK(capwatch_poll(cw, record, &s) == 0 && s.n == 0, "malformed file changed a cap");
	capwatch_delete(cw);

	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0, "%s", cmd);
}

int main(void)
{
	test_parse();
	test_parse_fuzz();
	test_tree(0);
	test_tree(CAPWATCH_STAT_ONLY);
	printf("test-capwatch: ok\n");
	return 0;
}
