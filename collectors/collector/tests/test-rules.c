/* rules: path-to-job mapping with the default systemd and Kubernetes rules, user rules, the
 * labels file (precedence, reload, errors) and rule syntax errors naming file:line. */
#include "rules.h"

#include <cpi2/sample.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static struct rules r;

/* map and check "job task_id class protected" in one string ("ignore", "unmapped",
 * "needs-label") */
static const char *map(const char *task)
{
	static char out[1024];
	struct mapping m;
	int k = rules_map(&r, task, "h1", &m);

	if (k == MAP_IGNORE)
		return "ignore";
	if (k == MAP_UNMAPPED)
		return "unmapped";
	if (k == MAP_NEEDS_LABEL)
		return "needs-label";
	snprintf(out, sizeof(out), "%s %s %d%s", m.job, m.task_id, m.task_class,
		 m.is_protected ? " protected" : "");
	return out;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

int main(void)
{
	char err[512], caps[9][256], dir[64], labels[128];

	/* the matcher */
	CHECK(rules_match("a/*/c", "a/b/c", caps, 9) == 1 && !strcmp(caps[0], "b"));
	CHECK(rules_match("a/*/c", "a/b/c/d", caps, 9) == -1);
	CHECK(rules_match("a/*/c", "a/b", caps, 9) == -1);
	CHECK(rules_match("x-*-pod*.slice", "x-burstable-pod12_3.slice", caps, 9) == 2 &&
	      !strcmp(caps[0], "burstable") && !strcmp(caps[1], "12_3"));
	CHECK(rules_match("a/**", "a/b/c", caps, 9) == 1 && !strcmp(caps[0], "b/c"));
	CHECK(rules_match("a/**", "a", caps, 9) == -1);
	CHECK(rules_match("*", "", caps, 9) == 1 && !strcmp(caps[0], ""));
	CHECK(rules_match("", "", caps, 9) == 0);
	CHECK(rules_match("a*b*c", "abc", caps, 9) == 2);
	CHECK(rules_match("a*b*c", "ab", caps, 9) == -1);
	/* a pathological name against many wildcards ends quickly (bounded backtracking) */
	char longname[256];
	memset(longname, 'a', 200);
	longname[200] = '\0';
	CHECK(rules_match("*a*a*a*a*a*a*a*a*b", longname, caps, 9) == -1);

	/* defaults */
	CHECK(rules_parse(&r, cpi2_default_rules, "default rules", err, sizeof(err)) == 0);
	CHECK(!strcmp(map("system.slice"), "ignore"));
	CHECK(!strcmp(map("system.slice/nginx.service"), "nginx h1 0"));
	CHECK(!strcmp(map("system.slice/nginx.service/worker"), "ignore"));
	CHECK(!strcmp(map("system.slice/dev-hugepages.mount"), "ignore"));
	/* Kubernetes pods, both drivers: never a job of their own, only the labels file maps
	 * them */
	CHECK(!strcmp(map("kubepods.slice"), "ignore"));
	CHECK(!strcmp(map("kubepods.slice/kubepods-burstable.slice"), "ignore"));
	CHECK(!strcmp(
	    map("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b_3c.slice"),
	    "needs-label"));
	CHECK(
	    !strcmp(map("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod99.slice"),
		    "needs-label"));
	CHECK(!strcmp(map("kubepods.slice/kubepods-pod77.slice"), "needs-label"));
	CHECK(
	    !strcmp(map("kubepods.slice/kubepods-pod77.slice/cri-containerd-abc.scope"), "ignore"));
	CHECK(!strcmp(map("kubepods"), "ignore"));
	CHECK(!strcmp(map("kubepods/burstable"), "ignore"));
	CHECK(!strcmp(map("kubepods/burstable/pod5"), "needs-label"));
	CHECK(!strcmp(map("kubepods/besteffort/pod7"), "needs-label"));
	CHECK(!strcmp(map("kubepods/pod6"), "needs-label"));
	CHECK(!strcmp(map("kubepods/besteffort/pod7/0123abc"), "ignore"));
	CHECK(!strcmp(map("kubepods/pod6/0123abc"), "ignore"));
	CHECK(!strcmp(map("user.slice/user-1000.slice"), "user-sessions 1000@h1 2"));
	CHECK(!strcmp(map("machine.slice/machine-vm1.scope"), "machine-vm1 h1 1"));
	CHECK(!strcmp(map("docker/abcdef"), "unmapped"));
	CHECK(!strcmp(map("kubepods.slice/kubepods-weird.slice/kubepods-weird-pod1.slice"),
		      "needs-label"));
	rules_free(&r);

	/* user rules come first; templates; protected */
	CHECK(rules_parse(&r,
			  "# jobs/<job>/<index>\n"
			  "\n"
			  "jobs/*/*   job=$1 task_id=$2 class=batch\n"
			  "svc/*      job=svc-$1 class=latency_sensitive protected   # task_id "
			  "defaults to $host\n"
			  "all/**     job=$0 task_id=$1 class=unknown\n",
			  "rules.conf", err, sizeof(err)) == 0);
	CHECK(rules_parse(&r, cpi2_default_rules, "default rules", err, sizeof(err)) == 0);
	CHECK(!strcmp(map("jobs/websearch/17"), "websearch 17 1"));
	CHECK(!strcmp(map("svc/db"), "svc-db h1 0 protected"));
	CHECK(!strcmp(map("all/x/y"), "all/x/y x/y 3"));
	CHECK(!strcmp(map("system.slice/sshd.service"), "sshd h1 0"));

	/* the labels file wins over every rule, and is reread when it changes */
	strcpy(dir, "/tmp/cpi2-rules-XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(labels, sizeof(labels), "%s/labels", dir);
	write_file(
	    labels,
	    "# task job task_id class\n/jobs/websearch/17 search 4 latency_sensitive protected\n"
	    "docker/abc  web 1 burstable\n"
	    "kubepods/burstable/pod5 shop/deployment/web web-7d9f8-x2x4q batch\n"
	    "kubepods.slice/kubepods-pod77.slice shop/statefulset/db db-0 latency_sensitive "
	    "protected\n");
	CHECK(rules_labels_refresh(&r, labels, err, sizeof(err)) == 0 && r.n_labels == 4);
	CHECK(!strcmp(map("jobs/websearch/17"), "search 4 0 protected"));
	CHECK(!strcmp(map("docker/abc"), "web 1 1"));
	/* a pod with an entry is its workload's task; one without still needs one */
	CHECK(!strcmp(map("kubepods/burstable/pod5"), "shop/deployment/web web-7d9f8-x2x4q 1"));
	CHECK(!strcmp(map("kubepods.slice/kubepods-pod77.slice"),
		      "shop/statefulset/db db-0 0 protected"));
	CHECK(!strcmp(map("kubepods/burstable/pod6"), "needs-label"));
	CHECK(rules_labels_refresh(&r, labels, err, sizeof(err)) == 0 &&
	      r.n_labels == 4); /* unchanged */
	write_file(labels, "docker/abc web 1 batch\nbad line\n");
	struct timespec t[2] = {{0, UTIME_OMIT}, {12345, 0}};
	CHECK(utimensat(AT_FDCWD, labels, t, 0) == 0);
	CHECK(rules_labels_refresh(&r, labels, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "labels:2:") != NULL);
	CHECK(r.n_labels == 4); /* the old labels stay */
	write_file(labels, "docker/abc web 1 nonsense\n");
	t[1].tv_sec = 23456;
	CHECK(utimensat(AT_FDCWD, labels, t, 0) == 0);
	CHECK(rules_labels_refresh(&r, labels, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "unknown class 'nonsense'"));
	write_file(labels, "docker/abc web 1 best_effort\n");
	t[1].tv_sec = 34567;
	CHECK(utimensat(AT_FDCWD, labels, t, 0) == 0);
	CHECK(rules_labels_refresh(&r, labels, err, sizeof(err)) == 0 && r.n_labels == 1);
	CHECK(!strcmp(map("docker/abc"), "web 1 2"));
	CHECK(!strcmp(map("jobs/websearch/17"), "websearch 17 1"));
	CHECK(!strcmp(map("kubepods/burstable/pod5"), "needs-label")); /* its entry is gone */
	/* a task's metrics endpoint: options after CLASS; quotes keep blanks and '#' in a token */
	write_file(labels,
		   "kubepods/pod1 shop/deployment/redis redis-0 guaranteed protected "
		   "scrape=http://10.1.2.3:9121/metrics work=redis_commands_processed_total "
		   "latency=redis_latency_percentiles_usec{cmd=\"get\"}  # the cache\n"
		   "kubepods/pod2 shop/deployment/web web-0 burstable "
		   "scrape=http://10.1.2.4:9113/metrics "
		   "work=http_requests_total{code=~\"2..\",path=\"/a \\\"b\\\" #c\"} "
		   "latency=http_request_duration_seconds latency_quantile=0.99\n"
		   "kubepods/pod3 shop/deployment/db db-0 burstable\n");
	t[1].tv_sec = 45678;
	CHECK(utimensat(AT_FDCWD, labels, t, 0) == 0);
	CHECK(rules_labels_refresh(&r, labels, err, sizeof(err)) == 0 && r.n_labels == 3, "%s",
	      err);
	struct mapping m;
	CHECK(rules_map(&r, "kubepods/pod1", "h1", &m) == MAP_TASK && m.is_protected && m.scrape);
	CHECK(!strcmp(m.scrape->url, "http://10.1.2.3:9121/metrics") &&
	      !strcmp(m.scrape->work, "redis_commands_processed_total") &&
	      !strcmp(m.scrape->latency, "redis_latency_percentiles_usec{cmd=\"get\"}") &&
	      !m.scrape->quantile);
	CHECK(rules_map(&r, "kubepods/pod2", "h1", &m) == MAP_TASK && !m.is_protected && m.scrape);
	CHECK(
	    !strcmp(m.scrape->work, "http_requests_total{code=~\"2..\",path=\"/a \\\"b\\\" #c\"}"),
	    "%s", m.scrape->work);
	CHECK(!strcmp(m.scrape->quantile, "0.99"));
	CHECK(rules_map(&r, "kubepods/pod3", "h1", &m) == MAP_TASK && !m.scrape);
	static const struct {
		const char *line, *why;
	} bad_options[] = {
	    {"a j 1 batch scrape=http://1.2.3.4/\n", "needs work= or latency="},
	    {"a j 1 batch work=x\n", "need scrape="},
	    {"a j 1 batch scrape=http://1.2.3.4/ latency_quantile=0.5 work=x\n",
	     "latency_quantile= needs latency="},
	    {"a j 1 batch scrape=http://1.2.3.4/ work=x work=y\n", "twice"},
	    {"a j 1 batch scrape=http://1.2.3.4/ work=\n", "expected protected"},
	    {"a j 1 batch fast\n", "expected protected"},
	    {"a j 1 batch scrape=x work=\"y\n", "quote left open"},
	    {"a j 1 batch protected scrape=1 work=2 latency=3 latency_quantile=4 x\n", "expected "
										       "'TASK"},
	};
	for (size_t i = 0; i < sizeof(bad_options) / sizeof(bad_options[0]); i++) {
		write_file(labels, bad_options[i].line);
		t[1].tv_sec = 50000 + (long)i;
		CHECK(utimensat(AT_FDCWD, labels, t, 0) == 0);
		CHECK(rules_labels_refresh(&r, labels, err, sizeof(err)) == -EINVAL &&
			  strstr(err, "labels:1:") && strstr(err, bad_options[i].why),
		      "%s: %s", bad_options[i].line, err);
		CHECK(r.n_labels == 3);
	}
	unlink(labels);
	CHECK(rules_labels_refresh(&r, labels, err, sizeof(err)) == -ENOENT && strstr(err, labels));
	rules_free(&r);

	/* rule syntax errors name origin:line */
	const struct {
		const char *text, *want;
	} bad[] = {
	    {"a/* job=x\n", "rules.conf:1: rule for 'a/*' needs job= and class="},
	    {"\n\na/* job=x class=sometimes\n", "rules.conf:3: unknown class 'sometimes'"},
	    {"a ignore job=x\n", "rules.conf:1: rule for 'a': ignore takes nothing else"},
	    {"a needs-label class=batch\n",
	     "rules.conf:1: rule for 'a': needs-label takes nothing"},
	    {"a ignore needs-label\n",
	     "rules.conf:1: rule for 'a': ignore or needs-label, not both"},
	    {"a color=red\n", "rules.conf:1: 'color=red'"},
	    {"/abs job=x class=batch\n", "rules.conf:1: pattern '/abs'"},
	    {"a//b job=x class=batch\n", "rules.conf:1: pattern 'a//b'"},
	    {"*-*-*-*-*-*-*-*-*-* job=x class=batch\n", "more than 9 wildcards"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(rules_parse(&r, bad[i].text, "rules.conf", err, sizeof(err)) == -EINVAL);
		if (!strstr(err, bad[i].want)) {
			fprintf(stderr, "got '%s', want '%s'\n", err, bad[i].want);
			CHECK(0);
		}
		rules_free(&r);
	}
	CHECK(rules_load(&r, "/nonexistent/rules", err, sizeof(err)) == -ENOENT &&
	      strstr(err, "/nonexistent/rules"));
	/* a class template that yields nonsense leaves the cgroup unmapped, never a bad enum */
	CHECK(rules_parse(&r, "q/* job=x class=$1\n", "r", err, sizeof(err)) == 0);
	CHECK(!strcmp(map("q/batch"), "x h1 1") && !strcmp(map("q/other"), "unmapped"));
	rules_free(&r);
	/* random rule and label texts, and random paths through whatever parsed: never a crash */
	static char junk[512], task[128];
	const char alphabet[] = "ab*/$1209 =\n#jobtask_idclassignoreprotectedbatch\t";
	srand(5);
	for (int i = 0; i < 50000; i++) {
		int n = rand() % 200, k;

		for (k = 0; k < n; k++)
			junk[k] = i % 7 ? alphabet[rand() % (int)(sizeof(alphabet) - 1)]
					: (char)(1 + rand() % 255);
		junk[n] = '\0';
		k = rules_parse(&r, junk, "fuzz", err, sizeof(err));
		CHECK(k == 0 || k == -EINVAL);
		for (int t = 0; t < 4; t++) {
			int m = rand() % 40;

			for (int j = 0; j < m; j++)
				task[j] = "ab/*$1"[rand() % 6];
			task[m] = '\0';
			(void)map(task);
		}
		if (i % 50 == 0) {
			write_file(labels, junk);
			t[1].tv_sec = 40000 + i;
			CHECK(utimensat(AT_FDCWD, labels, t, 0) == 0);
			k = rules_labels_refresh(&r, labels, err, sizeof(err));
			CHECK(k == 0 || k == -EINVAL);
			(void)map("a/b");
		}
		rules_free(&r);
	}
	unlink(labels);
	rmdir(dir);
	printf("test-rules: ok\n");
	return 0;
}
